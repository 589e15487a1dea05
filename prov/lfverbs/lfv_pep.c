/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Passive MSG endpoints and the connection requests they take (rdma_cm
 * listeners; lfv_cm.c has the channels).
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_cm.h"
#include "lfv_device.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_pep.h"
#include "lfv_stubs.h"
#include "lfv_wire.h"

#define LFV_DEFAULT_BACKLOG 128

/* ---- connection requests ---------------------------------------------------- */

static int lfv_connreq_close(struct fid *fid)
{
	(void)fid;
	return -FI_ENOSYS; /* ended by fi_endpoint + fi_accept or fi_reject */
}

static struct fi_ops lfv_connreq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_connreq_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* Events on a request nobody took yet (the peer gave up): nothing to do;
 * fi_endpoint or fi_reject will find out. */
static bool lfv_connreq_handle(struct lfv_cm_ctx *ctx,
			       struct rdma_cm_event *event)
{
	(void)ctx; (void)event;
	return false;
}

static struct fi_info *lfv_connreq_info(const struct lfv_pep *pep,
					struct lfv_connreq *req)
{
	struct sockaddr *peer = rdma_get_peer_addr(req->id);
	struct sockaddr *local = rdma_get_local_addr(req->id);
	struct fi_info *info = fi_dupinfo(pep->info);

	if (!info)
		return NULL;
	free(info->src_addr);
	free(info->dest_addr);
	info->src_addr = NULL;
	info->dest_addr = NULL;
	info->src_addrlen = lfv_sockaddr_len(local);
	info->dest_addrlen = lfv_sockaddr_len(peer);
	info->src_addr = malloc(info->src_addrlen);
	info->dest_addr = malloc(info->dest_addrlen);
	if (!info->src_addr || !info->dest_addr) {
		fi_freeinfo(info);
		return NULL;
	}
	memcpy(info->src_addr, local, info->src_addrlen);
	memcpy(info->dest_addr, peer, info->dest_addrlen);
	if (info->domain_attr && req->id->verbs) {
		free(info->domain_attr->name);
		info->domain_attr->name =
			strdup(ibv_get_device_name(req->id->verbs->device));
	}
	info->handle = &req->fid;
	return info;
}

static bool lfv_pep_connreq(struct lfv_pep *pep, struct rdma_cm_event *event)
{
	struct lfv_connreq *req;
	struct fi_info *info = NULL;
	const uint8_t *data;
	size_t len;

	if (lfv_cm_data_unpack(pep->fabric, &event->param.conn, &data, &len)) {
		/* The thread destroys the new id once the event is acked. */
		rdma_reject(event->id, NULL, 0);
		event->id->context = NULL;
		return true;
	}
	req = calloc(1, sizeof(*req));
	if (req) {
		req->fid.fclass = FI_CLASS_CONNREQ;
		req->fid.ops = &lfv_connreq_fi_ops;
		req->cm.handle = lfv_connreq_handle;
		req->id = event->id;
		req->fabric = pep->fabric;
		info = lfv_connreq_info(pep, req);
	}
	if (!info) {
		/* The thread destroys the new id once the event is acked. */
		rdma_reject(event->id, NULL, 0);
		event->id->context = NULL;
		free(req);
		LFV_WARN(FI_LOG_EP_CTRL, "rejected a connection: no memory\n");
		return true;
	}
	event->id->context = &req->cm;
	lfv_cm_push(pep->eq, FI_CONNREQ, &pep->pep_fid.fid, info, data, len);
	return false;
}

static bool lfv_pep_cm_handle(struct lfv_cm_ctx *ctx, struct rdma_cm_event *event)
{
	struct lfv_pep *pep = lfv_container_of(ctx, struct lfv_pep, cm);

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return lfv_pep_connreq(pep, event);
	if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		lfv_cm_push_err(pep->eq, &pep->pep_fid.fid, FI_ENODEV,
				event->status, NULL, 0);
	return false;
}

/* ---- passive endpoints ------------------------------------------------------- */

static struct lfv_pep *lfv_pep_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_pep, pep_fid.fid);
}

/* An active endpoint takes over a passive endpoint's (unused) id and with
 * it the address the passive endpoint was given. */
int lfv_pep_give_id(struct lfv_pep *pep, struct lfv_ep *ep)
{
	struct lfv_fabric *fabric = pep->fabric;
	int ret = 0;

	pthread_mutex_lock(&fabric->cm_lock);
	if (pep->listening || !pep->id) {
		ret = -FI_EINVAL;
		goto unlock;
	}
	ep->id = pep->id;
	ep->id->context = &ep->cm;
	pep->id = NULL;
unlock:
	pthread_mutex_unlock(&fabric->cm_lock);
	return ret;
}

static int lfv_pep_close(struct fid *fid)
{
	struct lfv_pep *pep = lfv_pep_of(fid);

	if (pep->id) {
		pthread_mutex_lock(&pep->fabric->cm_lock);
		pep->id->context = NULL;
		pthread_mutex_unlock(&pep->fabric->cm_lock);
		rdma_destroy_id(pep->id);
	}
	if (pep->eq)
		lfv_ref_put(&pep->eq->ref);
	lfv_ref_put(&pep->fabric->ref);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static int lfv_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_pep *pep = lfv_pep_of(fid);

	struct lfv_eq *eq;
	int ret;

	if (!bfid || bfid->fclass != FI_CLASS_EQ || pep->eq || !pep->id)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	eq = lfv_eq_from_fid(lfv_container_of(bfid, struct fid_eq, fid));
	ret = lfv_cm_bind_eq(pep->fabric, eq, pep->id,
			     lfv_control_progress(pep->info));
	if (ret)
		return ret;
	pep->eq = eq;
	lfv_ref_get(&pep->eq->ref);
	return 0;
}

static int lfv_pep_control(struct fid *fid, int command, void *arg)
{
	struct lfv_pep *pep = lfv_pep_of(fid);

	if (command != FI_BACKLOG)
		return -FI_ENOSYS;
	if (!arg || *(int *)arg <= 0)
		return -FI_EINVAL;
	pep->backlog = *(int *)arg;
	if (pep->listening)
		return lfv_verbs_ret(rdma_listen(pep->id, pep->backlog));
	return 0;
}

static int lfv_pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct lfv_pep *pep = lfv_pep_of(fid);
	union lfv_sockaddr sa;
	int ret;

	if (!pep->id || lfv_id_bound(pep->id))
		return -FI_EOPBADSTATE;
	ret = lfv_set_sockaddr(&sa, addr, addrlen);
	if (ret)
		return ret;
	return lfv_verbs_ret(rdma_bind_addr(pep->id, &sa.sa));
}

static int lfv_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_pep *pep = lfv_pep_of(fid);
	union lfv_sockaddr preset;
	bool valid = pep->info->src_addr &&
		     !lfv_set_sockaddr(&preset, pep->info->src_addr,
				       pep->info->src_addrlen);

	return lfv_id_name(pep->id, &preset, valid, addr, addrlen);
}

static int lfv_pep_listen(struct fid_pep *pep_fid)
{
	struct lfv_pep *pep = lfv_pep_of(&pep_fid->fid);
	union lfv_sockaddr any = { .sin = { .sin_family = AF_INET } };
	int ret;

	if (!pep->eq)
		return -FI_ENOEQ;
	if (!pep->id || pep->listening)
		return -FI_EOPBADSTATE;
	if (!lfv_id_bound(pep->id)) {
		ret = lfv_verbs_ret(rdma_bind_addr(pep->id, &any.sa));
		if (ret)
			return ret;
	}
	ret = lfv_verbs_ret(rdma_listen(pep->id, pep->backlog));
	if (!ret)
		pep->listening = true;
	return ret;
}

static int lfv_pep_reject(struct fid_pep *pep_fid, fid_t handle,
			  const void *param, size_t paramlen)
{
	struct lfv_pep *pep = lfv_pep_of(&pep_fid->fid);
	struct lfv_connreq *req;
	struct lfv_cm_data d;
	int ret;

	if (!handle || handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	ret = lfv_cm_data_pack(&d, param, paramlen);
	if (ret)
		return ret;
	req = lfv_container_of(handle, struct lfv_connreq, fid);
	ret = lfv_verbs_ret(rdma_reject(req->id, d.buf, d.len));
	pthread_mutex_lock(&pep->fabric->cm_lock);
	req->id->context = NULL;
	pthread_mutex_unlock(&pep->fabric->cm_lock);
	rdma_destroy_id(req->id);
	free(req);
	return ret;
}

static int lfv_pep_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	return lfv_opt_size(LFV_CM_DATA_SIZE, optval, optlen);
}

static struct fi_ops lfv_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_pep_close,
	.bind = lfv_pep_bind,
	.control = lfv_pep_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_ep lfv_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_no_cancel,
	.getopt = lfv_pep_getopt,
	.setopt = lfv_no_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_no_size_left,
	.tx_size_left = lfv_no_size_left,
};

static struct fi_ops_cm lfv_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfv_pep_setname,
	.getname = lfv_pep_getname,
	.getpeer = lfv_no_getpeer,
	.connect = lfv_no_connect,
	.listen = lfv_pep_listen,
	.accept = lfv_no_accept,
	.reject = lfv_pep_reject,
	.shutdown = lfv_no_shutdown,
	.join = lfv_no_join,
};

int lfv_passive_ep(struct fid_fabric *fabric_fid, struct fi_info *info,
		   struct fid_pep **pep_fid, void *context)
{
	struct lfv_fabric *fabric;
	struct lfv_pep *pep;
	union lfv_sockaddr sa;
	int ret;

	if (!fabric_fid || !info || !pep_fid)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	fabric = lfv_container_of(fabric_fid, struct lfv_fabric, fabric_fid);
	ret = lfv_cm_start(fabric);
	if (ret)
		return ret;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		ret = -FI_ENOMEM;
		goto free_pep;
	}
	pep->fabric = fabric;
	pep->backlog = LFV_DEFAULT_BACKLOG;
	pep->cm.handle = lfv_pep_cm_handle;
	ret = lfv_verbs_ret(rdma_create_id(fabric->cm_channel, &pep->id,
					   &pep->cm, RDMA_PS_TCP));
	if (ret)
		goto free_info;
	if (info->src_addr &&
	    !lfv_set_sockaddr(&sa, info->src_addr, info->src_addrlen)) {
		ret = lfv_verbs_ret(rdma_bind_addr(pep->id, &sa.sa));
		if (ret)
			goto destroy_id;
	}
	lfv_fid_init(&pep->pep_fid.fid, FI_CLASS_PEP, context, &lfv_pep_fi_ops);
	pep->pep_fid.ops = &lfv_pep_ops;
	pep->pep_fid.cm = &lfv_pep_cm_ops;
	lfv_ref_get(&fabric->ref);
	*pep_fid = &pep->pep_fid;
	return 0;

destroy_id:
	rdma_destroy_id(pep->id);
free_info:
	fi_freeinfo(pep->info);
free_pep:
	free(pep);
	return ret;
}
