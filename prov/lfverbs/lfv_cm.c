/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Connection management for MSG endpoints over rdma_cm, and the names of
 * DGRAM endpoints.
 *
 * No thread: an id moves to the event channel of the EQ it is bound to,
 * and reading that EQ takes each rdma_cm event, dispatches it under
 * fabric->cm_lock to the object its id's context points at (passive
 * endpoint, pending connection request, or endpoint), and acks it
 * (FI_PROGRESS_MANUAL control progress, as fi_getinfo says). An object
 * that goes away first clears its id's context under cm_lock, then
 * destroys the id without the lock held (rdma_destroy_id waits for the ack
 * of events already taken).
 *
 * Connection data travels as the verbs provider sends it: one byte of
 * length, then the data, so the two providers interoperate.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wire.h"

#define LFV_CM_TIMEOUT_MS 2000
#define LFV_DEFAULT_BACKLOG 128

/* ---- event sources: one channel per EQ -------------------------------------- */

struct lfv_cm_source {
	struct lfv_fabric *fabric;
	struct rdma_event_channel *channel;
	pthread_mutex_t lock;		/* one reader at a time, in order */
	struct lfv_list node;		/* in fabric->cm_auto_sources */
	bool auto_on;			/* read by the thread too */
};

static bool lfv_cm_dispatch(struct lfv_fabric *fabric,
			    struct rdma_cm_event *event)
{
	struct lfv_cm_ctx *ctx;
	bool destroy = false;

	pthread_mutex_lock(&fabric->cm_lock);
	ctx = event->id->context;
	if (ctx)
		destroy = ctx->handle(ctx, event);
	pthread_mutex_unlock(&fabric->cm_lock);
	return destroy;
}

/* The EQ's progress hook: takes every pending event (the channel is
 * non-blocking), turns it into EQ entries, and acks it. */
static void lfv_cm_source_progress(void *arg)
{
	struct lfv_cm_source *src = arg;
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	bool destroy;

	pthread_mutex_lock(&src->lock);
	while (!rdma_get_cm_event(src->channel, &event)) {
		id = event->id;
		destroy = lfv_cm_dispatch(src->fabric, event);
		rdma_ack_cm_event(event);
		if (destroy)
			rdma_destroy_id(id);
	}
	pthread_mutex_unlock(&src->lock);
}

static void lfv_cm_source_fini(void *arg)
{
	struct lfv_cm_source *src = arg;
	struct lfv_fabric *fabric = src->fabric;

	if (src->auto_on) {
		/* The thread walks the list under this lock only. */
		pthread_mutex_lock(&fabric->cm_auto_lock);
		lfv_poller_del(&fabric->cm_poller, src->channel->fd);
		lfv_list_remove(&src->node);
		pthread_mutex_unlock(&fabric->cm_auto_lock);
	}
	rdma_destroy_event_channel(src->channel);
	pthread_mutex_destroy(&src->lock);
	free(src);
}

static int lfv_cm_source_new(struct lfv_fabric *fabric,
			     struct lfv_cm_source **out)
{
	struct lfv_cm_source *src;
	int ret;

	src = calloc(1, sizeof(*src));
	if (!src)
		return -FI_ENOMEM;
	src->fabric = fabric;
	ret = -pthread_mutex_init(&src->lock, NULL);
	if (ret)
		goto free_src;
	src->channel = rdma_create_event_channel();
	if (!src->channel) {
		ret = lfv_verbs_errno();
		goto destroy_lock;
	}
	ret = lfv_fd_set_nonblock(src->channel->fd);
	if (ret)
		goto destroy_channel;
	*out = src;
	return 0;

destroy_channel:
	rdma_destroy_event_channel(src->channel);
destroy_lock:
	pthread_mutex_destroy(&src->lock);
free_src:
	free(src);
	return ret;
}

/* ---- FI_PROGRESS_AUTO control progress -------------------------------------- */

/* The poller's run: every source under the thread. */
static void lfv_cm_auto_run(void *arg)
{
	struct lfv_fabric *fabric = arg;
	struct lfv_list *item;

	pthread_mutex_lock(&fabric->cm_auto_lock);
	lfv_list_foreach(item, &fabric->cm_auto_sources)
		lfv_cm_source_progress(lfv_container_of(item,
						struct lfv_cm_source, node));
	pthread_mutex_unlock(&fabric->cm_auto_lock);
}

/* Puts a source under the thread (once). */
static int lfv_cm_auto_add(struct lfv_cm_source *src)
{
	struct lfv_fabric *fabric = src->fabric;
	int ret;

	pthread_mutex_lock(&fabric->cm_auto_lock);
	if (src->auto_on) {
		ret = 0;
		goto unlock;
	}
	ret = lfv_poller_start(&fabric->cm_poller, lfv_cm_auto_run, fabric);
	if (ret)
		goto unlock;
	ret = lfv_poller_add(&fabric->cm_poller, src->channel->fd);
	if (ret)
		goto unlock;
	lfv_list_insert_tail(&fabric->cm_auto_sources, &src->node);
	src->auto_on = true;
unlock:
	pthread_mutex_unlock(&fabric->cm_auto_lock);
	return ret;
}

/*
 * Moves an id's events to eq: the EQ gets an event channel (its source)
 * the first time, read whenever the application reads the EQ, as
 * FI_PROGRESS_MANUAL control progress has it. No thread is involved.
 */
int lfv_cm_bind_eq(struct lfv_fabric *fabric, struct lfv_eq *eq,
		   struct rdma_cm_id *id, enum fi_progress progress)
{
	struct lfv_cm_source *src;
	struct lfv_eq_source hook;
	int ret = 0;

	pthread_mutex_lock(&fabric->cm_lock);
	src = lfv_eq_source_arg(eq);
	if (!src) {
		ret = lfv_cm_source_new(fabric, &src);
		if (ret)
			goto unlock;
		hook = (struct lfv_eq_source){
			.progress = { .fn = lfv_cm_source_progress,
				      .arg = src },
			.fini = lfv_cm_source_fini,
			.fd = src->channel->fd,
		};
		ret = lfv_eq_attach_source(eq, &hook);
		if (ret) {
			lfv_cm_source_fini(src);
			goto unlock;
		}
	}
unlock:
	pthread_mutex_unlock(&fabric->cm_lock);
	if (ret)
		return ret;
	if (progress == FI_PROGRESS_AUTO) {
		ret = lfv_cm_auto_add(src);
		if (ret)
			return ret;
	}
	if (id->channel == src->channel)
		return 0;
	return lfv_verbs_ret(rdma_migrate_id(id, src->channel));
}

/* The channel ids start on (until bound to an EQ); nobody reads it. */
int lfv_cm_start(struct lfv_fabric *fabric)
{
	int ret = 0;

	pthread_mutex_lock(&fabric->cm_lock);
	if (!fabric->cm_channel) {
		fabric->cm_channel = rdma_create_event_channel();
		if (!fabric->cm_channel)
			ret = lfv_verbs_errno();
	}
	pthread_mutex_unlock(&fabric->cm_lock);
	return ret;
}

/* At fabric close: every id (and EQ) has gone by then. */
void lfv_cm_stop(struct lfv_fabric *fabric)
{
	lfv_poller_stop(&fabric->cm_poller);
	if (fabric->cm_channel)
		rdma_destroy_event_channel(fabric->cm_channel);
	fabric->cm_channel = NULL;
}

/* ---- connection data ------------------------------------------------------- */

struct lfv_cm_data {
	uint8_t buf[LFV_CM_PRIV_MAX];
	uint8_t len;
};

static int lfv_cm_data_pack(struct lfv_cm_data *d, const void *param,
			    size_t len)
{
	if (len > LFV_CM_DATA_SIZE || (len && !param))
		return -FI_EINVAL;
	d->buf[0] = (uint8_t)len;
	if (len)
		memcpy(d->buf + 1, param, len);
	d->len = (uint8_t)(len + 1);
	return 0;
}

/* The application's part of an event's private data, or -FI_EMSGSIZE
 * (counted as a drop: the data is not passed on). */
static int lfv_cm_data_unpack(struct lfv_fabric *fabric,
			      const struct rdma_conn_param *conn,
			      const uint8_t **data, size_t *len)
{
	int ret = lfv_cm_data_parse(conn->private_data,
				    conn->private_data_len, data, len);

	if (ret)
		lfv_drop(&fabric->drops, FI_LFVERBS_DROP_CM_DATA,
			 "connection data whose length byte overruns it");
	return ret;
}

static void lfv_cm_conn_param(const struct lfv_domain *domain,
			      const struct lfv_cm_data *d,
			      struct rdma_conn_param *param)
{
	const struct ibv_device_attr *attr = &domain->dev->attr;

	memset(param, 0, sizeof(*param));
	param->private_data = d->buf;
	param->private_data_len = d->len;
	param->responder_resources = (uint8_t)attr->max_qp_rd_atom;
	param->initiator_depth = (uint8_t)attr->max_qp_init_rd_atom;
	param->flow_control = 1;
	/* 7 is "retry for ever" on soft-RoCE (rxe): a send whose peer is gone
	 * (its ack lost to the peer's fi_shutdown) would never complete.
	 * 6 retries end it with FI_ETIMEDOUT, as for RDM's connections. */
	param->retry_count = 6;
	param->rnr_retry_count = 7;	/* retry forever: never drop a send */
}

/* ---- events to EQ entries ----------------------------------------------- */

static void lfv_cm_push(struct lfv_eq *eq, uint32_t event, struct fid *fid,
			struct fi_info *info, const uint8_t *data, size_t len)
{
	struct {
		struct fi_eq_cm_entry entry;
		uint8_t data[LFV_CM_PRIV_MAX];
	} ev = { .entry = { .fid = fid, .info = info } };

	if (len)
		memcpy(ev.data, data, len);
	if (!eq || lfv_eq_push(eq, event, &ev, sizeof(ev.entry) + len)) {
		LFV_WARN(FI_LOG_EP_CTRL, "lost a connection event %u\n", event);
		fi_freeinfo(info);
	}
}

static void lfv_cm_push_err(struct lfv_eq *eq, struct fid *fid, int err,
			    int prov_errno, const uint8_t *data, size_t len)
{
	struct fi_eq_err_entry entry = {
		.fid = fid,
		.err = err,
		.prov_errno = prov_errno,
		.err_data = (void *)data,
		.err_data_size = len,
	};

	if (!eq || lfv_eq_push_err(eq, &entry))
		LFV_WARN(FI_LOG_EP_CTRL, "lost a connection error %d\n", err);
}

static int lfv_cm_event_err(const struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
		return FI_ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_ADDR_ERROR:
		return event->status == -ETIMEDOUT ? FI_ETIMEDOUT :
						     FI_EHOSTUNREACH;
	default:
		return FI_ECONNABORTED;
	}
}

/* ---- endpoint events -------------------------------------------------------- */

static struct lfv_ep *lfv_ep_of_cm(struct lfv_cm_ctx *ctx)
{
	return lfv_container_of(ctx, struct lfv_ep, cm);
}

static void lfv_ep_cm_fail(struct lfv_ep *ep, struct rdma_cm_event *event)
{
	const uint8_t *data = NULL;
	size_t len = 0;

	if (event->event == RDMA_CM_EVENT_REJECTED &&
	    lfv_cm_data_unpack(ep->base.domain->fabric, &event->param.conn, &data,
			       &len)) {
		data = NULL;	/* refused all the same, without the data */
		len = 0;
	}
	ep->state = LFV_EP_ERROR;
	lfv_cm_push_err(ep->eq, &ep->base.ep_fid.fid, lfv_cm_event_err(event),
			event->status, data, len);
}

/* Connected, but the peer's accept data is malformed: a peer that is not
 * lfverbs' kind; the connection is ended rather than half trusted. */
static void lfv_ep_cm_abort(struct lfv_ep *ep, struct rdma_cm_event *event)
{
	ep->state = LFV_EP_ERROR;
	rdma_disconnect(ep->id);
	lfv_cm_push_err(ep->eq, &ep->base.ep_fid.fid, FI_ECONNABORTED,
			event->status, NULL, 0);
}

static bool lfv_ep_cm_handle(struct lfv_cm_ctx *ctx, struct rdma_cm_event *event)
{
	struct lfv_ep *ep = lfv_ep_of_cm(ctx);
	const uint8_t *data;
	size_t len;

	switch (event->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (lfv_cm_data_unpack(ep->base.domain->fabric, &event->param.conn,
				       &data, &len)) {
			lfv_ep_cm_abort(ep, event);
			break;
		}
		ep->state = LFV_EP_CONNECTED;
		/* Release: pairs with the relaxed load in lfv_tx_post, which
		 * needs only the flag (the QP was set up before). */
		lfv_store_release32(&ep->tx_ready, 1);
		lfv_cm_push(ep->eq, FI_CONNECTED, &ep->base.ep_fid.fid, NULL, data,
			    len);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (ep->shutdown_reported)
			break;
		ep->shutdown_reported = true;
		ep->state = LFV_EP_SHUTDOWN;
		lfv_cm_push(ep->eq, FI_SHUTDOWN, &ep->base.ep_fid.fid, NULL, NULL, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		lfv_ep_cm_fail(ep, event);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ep->state = LFV_EP_ERROR;
		lfv_cm_push_err(ep->eq, &ep->base.ep_fid.fid, FI_ENODEV,
				event->status, NULL, 0);
		break;
	default:
		break; /* TIMEWAIT_EXIT, ADDR_CHANGE: nothing to report */
	}
	return false;
}

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

/* ---- names ---------------------------------------------------------------- */

static bool lfv_id_bound(const struct rdma_cm_id *id)
{
	const struct sockaddr *sa = rdma_get_local_addr((struct rdma_cm_id *)id);

	return sa->sa_family == AF_INET || sa->sa_family == AF_INET6;
}

/* The address an id is (or will be) bound to. */
static int lfv_id_name(struct rdma_cm_id *id, const union lfv_sockaddr *preset,
		       bool preset_valid, void *addr, size_t *addrlen)
{
	struct sockaddr *sa;

	if (id && lfv_id_bound(id)) {
		sa = rdma_get_local_addr(id);
		return lfv_copy_name(sa, lfv_sockaddr_len(sa), addr, addrlen);
	}
	if (!preset_valid)
		return -FI_EADDRNOTAVAIL;
	return lfv_copy_name(&preset->sa, lfv_sockaddr_len(&preset->sa), addr,
			     addrlen);
}

static int lfv_set_sockaddr(union lfv_sockaddr *dst, const void *addr,
			    size_t addrlen)
{
	const struct sockaddr *sa = addr;

	if (!addr || addrlen < sizeof(sa->sa_family))
		return -FI_EINVAL;
	if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    addrlen < lfv_sockaddr_len(sa) || addrlen > sizeof(*dst))
		return -FI_EINVAL;
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, addr, lfv_sockaddr_len(sa));
	return 0;
}

/* ---- MSG endpoint CM calls ----------------------------------------------- */

static int lfv_pep_give_id(struct lfv_pep *pep, struct lfv_ep *ep);

static int lfv_ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	int ret;

	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (ep->id && lfv_id_bound(ep->id))
		return -FI_EOPBADSTATE; /* a connection request's id */
	ret = lfv_set_sockaddr(&ep->src, addr, addrlen);
	if (!ret)
		ep->src_set = true;
	return ret;
}

static int lfv_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	const struct fi_info *info = ep->base.info;
	union lfv_sockaddr preset;
	bool valid = ep->src_set;

	preset = ep->src;
	if (!valid && info->src_addr &&
	    !lfv_set_sockaddr(&preset, info->src_addr, info->src_addrlen))
		valid = true;
	return lfv_id_name(ep->id, &preset, valid, addr, addrlen);
}

static int lfv_ep_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct sockaddr *sa;

	if (ep->state != LFV_EP_CONNECTED && ep->state != LFV_EP_ACCEPTING &&
	    ep->state != LFV_EP_CONNECTING)
		return -FI_ENOTCONN;
	sa = rdma_get_peer_addr(ep->id);
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -FI_ENOTCONN;
	return lfv_copy_name(sa, lfv_sockaddr_len(sa), addr, addrlen);
}

/* Binds an active endpoint's id to its source address (fi_enable). */
static int lfv_ep_bind_src(struct lfv_ep *ep)
{
	union lfv_sockaddr src;

	if (lfv_id_bound(ep->id))
		return 0;
	if (ep->src_set) {
		src = ep->src;
	} else if (ep->base.info->src_addr &&
		   !lfv_set_sockaddr(&src, ep->base.info->src_addr,
				     ep->base.info->src_addrlen)) {
		if (src.sa.sa_family == AF_INET)
			src.sin.sin_port = 0;
		else
			src.sin6.sin6_port = 0;
	} else if (ep->base.domain->dev->naddrs) {
		src = ep->base.domain->dev->addrs[0].addr;
		src.sin.sin_port = 0; /* same offset in sin6 */
	} else {
		return -FI_EADDRNOTAVAIL;
	}
	return lfv_verbs_ret(rdma_bind_addr(ep->id, &src.sa));
}

int lfv_ep_create_rc_qp(struct lfv_ep *ep)
{
	struct ibv_qp_init_attr attr;
	int ret;

	ret = lfv_ep_bind_src(ep);
	if (ret)
		return ret;
	if (ep->id->verbs != ep->base.domain->ctx) {
		LFV_WARN(FI_LOG_EP_CTRL, "address is not on domain %s\n",
			 ep->base.domain->dev->name);
		return -FI_EINVAL;
	}
	if (ep->base.domain->dev->attr.atomic_cap != IBV_ATOMIC_NONE) {
		/* Where results of fi_atomic (no fetch) land. */
		ep->amo_mr = ibv_reg_mr(ep->base.domain->pd, &ep->amo_sink,
					sizeof(ep->amo_sink),
					IBV_ACCESS_LOCAL_WRITE);
		if (!ep->amo_mr)
			return lfv_verbs_errno();
	}
	lfv_ep_qp_caps(ep, &attr);
	ret = lfv_verbs_ret(rdma_create_qp(ep->id, ep->base.domain->pd, &attr));
	if (ret)
		return ret; /* amo_mr goes with the endpoint */
	ep->qp = ep->id->qp;
	return 0;
}

/*
 * Address and route resolution run synchronously (the id switches to
 * rdma_cm's synchronous mode for them), as in the verbs provider: the
 * connection request then reaches the peer without this side reading its
 * EQ. A failure is reported through the EQ like the later steps are.
 */
static int lfv_ep_resolve(struct lfv_ep *ep, struct sockaddr *addr,
			  struct rdma_event_channel *channel)
{
	int ret;

	ret = lfv_verbs_ret(rdma_migrate_id(ep->id, NULL));
	if (ret)
		return ret;
	ret = rdma_resolve_addr(ep->id, NULL, addr, LFV_CM_TIMEOUT_MS);
	if (!ret)
		ret = rdma_resolve_route(ep->id, LFV_CM_TIMEOUT_MS);
	ret = ret ? errno : 0;
	/* Back to the EQ's channel for the connection's events. */
	if (rdma_migrate_id(ep->id, channel) && !ret)
		ret = errno ? errno : EIO;
	return ret > 0 ? ret : 0;	/* positive: the resolution error */
}

static int lfv_ep_connect(struct fid_ep *ep_fid, const void *addr,
			  const void *param, size_t paramlen)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_fabric *fabric = ep->base.domain->fabric;
	struct rdma_event_channel *channel = ep->id->channel;
	struct rdma_conn_param conn;
	struct lfv_cm_data d;
	uint8_t tos;
	int ret;

	if (!addr)
		return -FI_EINVAL;
	ret = lfv_cm_data_pack(&d, param, paramlen);
	if (ret)
		return ret;
	if (ep->state == LFV_EP_IDLE) {
		ret = fi_enable(ep_fid);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&fabric->cm_lock);
	if (ep->state != LFV_EP_ENABLED) {
		pthread_mutex_unlock(&fabric->cm_lock);
		return -FI_EOPBADSTATE;
	}
	ep->state = LFV_EP_CONNECTING;
	pthread_mutex_unlock(&fabric->cm_lock);

	tos = lfv_tos(ep->base.info->tx_attr->tclass);
	if (tos) {
		/* Before the route is resolved: it carries the class. */
		ret = lfv_verbs_ret(rdma_set_option(ep->id, RDMA_OPTION_ID,
						    RDMA_OPTION_ID_TOS, &tos,
						    sizeof(tos)));
		if (ret)
			goto failed;
	}
	ret = lfv_ep_resolve(ep, (struct sockaddr *)addr, channel);
	if (ret < 0)
		goto failed;
	pthread_mutex_lock(&fabric->cm_lock);
	if (ret > 0) {
		/* Unreachable or timed out: an EQ error, as events are. */
		ep->state = LFV_EP_ERROR;
		lfv_cm_push_err(ep->eq, &ep->base.ep_fid.fid,
				ret == ETIMEDOUT ? FI_ETIMEDOUT :
						   FI_EHOSTUNREACH, -ret, NULL, 0);
		pthread_mutex_unlock(&fabric->cm_lock);
		return 0;
	}
	lfv_cm_conn_param(ep->base.domain, &d, &conn);
	ret = lfv_verbs_ret(rdma_connect(ep->id, &conn));
	pthread_mutex_unlock(&fabric->cm_lock);
	if (ret)
		goto failed;
	return 0;

failed:
	pthread_mutex_lock(&fabric->cm_lock);
	ep->state = LFV_EP_ENABLED;
	pthread_mutex_unlock(&fabric->cm_lock);
	return ret;
}

static int lfv_ep_accept(struct fid_ep *ep_fid, const void *param,
			 size_t paramlen)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct rdma_conn_param conn;
	struct lfv_cm_data d;
	int ret;

	ret = lfv_cm_data_pack(&d, param, paramlen);
	if (ret)
		return ret;
	if (!ep->passive)
		return -FI_EINVAL; /* not opened on a connection request */
	if (ep->state == LFV_EP_IDLE) {
		ret = fi_enable(ep_fid);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&ep->base.domain->fabric->cm_lock);
	if (ep->state != LFV_EP_ENABLED) {
		ret = -FI_EOPBADSTATE;
		goto unlock;
	}
	lfv_cm_conn_param(ep->base.domain, &d, &conn);
	ret = lfv_verbs_ret(rdma_accept(ep->id, &conn));
	if (!ret)
		ep->state = LFV_EP_ACCEPTING;
unlock:
	pthread_mutex_unlock(&ep->base.domain->fabric->cm_lock);
	return ret;
}

static int lfv_ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->base.domain->fabric->cm_lock);
	if (ep->state == LFV_EP_CONNECTED || ep->state == LFV_EP_CONNECTING ||
	    ep->state == LFV_EP_ACCEPTING)
		ret = lfv_verbs_ret(rdma_disconnect(ep->id));
	else if (ep->state != LFV_EP_SHUTDOWN)
		ret = -FI_ENOTCONN;
	pthread_mutex_unlock(&ep->base.domain->fabric->cm_lock);
	return ret;
}

struct fi_ops_cm lfv_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfv_ep_setname,
	.getname = lfv_ep_getname,
	.getpeer = lfv_ep_getpeer,
	.connect = lfv_ep_connect,
	.listen = lfv_no_listen,
	.accept = lfv_ep_accept,
	.reject = lfv_no_reject,
	.shutdown = lfv_ep_shutdown,
	.join = lfv_no_join,
};

/* An MSG endpoint's id: the one of a connection request or passive
 * endpoint it was opened on (info->handle), or a new one. */
int lfv_cm_ep_open(struct lfv_ep *ep, const struct fi_info *info)
{
	struct lfv_fabric *fabric = ep->base.domain->fabric;
	struct lfv_connreq *req;
	int ret;

	ep->cm.handle = lfv_ep_cm_handle;
	ep->base.info->handle = NULL;
	if (info->handle && info->handle->fclass == FI_CLASS_CONNREQ) {
		req = lfv_container_of(info->handle, struct lfv_connreq, fid);
		if (req->id->verbs != ep->base.domain->ctx)
			return -FI_EINVAL;
		pthread_mutex_lock(&fabric->cm_lock);
		ep->id = req->id;
		ep->id->context = &ep->cm;
		pthread_mutex_unlock(&fabric->cm_lock);
		ep->passive = true;
		free(req);
		return 0;
	}
	if (info->handle && info->handle->fclass != FI_CLASS_PEP)
		return -FI_EINVAL;
	ret = lfv_cm_start(fabric);
	if (ret)
		return ret;
	if (info->handle) {
		ret = lfv_pep_give_id(lfv_container_of(info->handle,
						       struct lfv_pep,
						       pep_fid.fid), ep);
		return ret;
	}
	return lfv_verbs_ret(rdma_create_id(fabric->cm_channel, &ep->id,
					    &ep->cm, RDMA_PS_TCP));
}

void lfv_cm_detach(struct lfv_ep *ep)
{
	struct lfv_fabric *fabric = ep->base.domain->fabric;

	if (!ep->id)
		return;
	pthread_mutex_lock(&fabric->cm_lock);
	ep->id->context = NULL;
	pthread_mutex_unlock(&fabric->cm_lock);
}

/* ---- passive endpoints ------------------------------------------------------- */

static struct lfv_pep *lfv_pep_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_pep, pep_fid.fid);
}

/* An active endpoint takes over a passive endpoint's (unused) id and with
 * it the address the passive endpoint was given. */
static int lfv_pep_give_id(struct lfv_pep *pep, struct lfv_ep *ep)
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
	if (*optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = LFV_CM_DATA_SIZE;
	*optlen = sizeof(size_t);
	return 0;
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
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &lfv_pep_fi_ops;
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

/* ---- DGRAM endpoint names -------------------------------------------------- */

void lfv_dgram_name(const struct lfv_ep *ep, struct lfv_ud_name *name)
{
	memset(name, 0, sizeof(*name));
	memcpy(name->gid, ep->base.domain->dev->gid.raw, sizeof(name->gid));
	name->qpn = ep->qp->qp_num;
	name->qkey = LFV_UD_QKEY;
	name->lid = ep->base.domain->dev->port_attr.lid;
}

static int lfv_dgram_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	struct lfv_ud_name name;

	if (!ep->qp)
		return -FI_EOPBADSTATE; /* the QP number comes with fi_enable */
	lfv_dgram_name(ep, &name);
	return lfv_copy_name(&name, sizeof(name), addr, addrlen);
}

static int lfv_dgram_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS; /* a UD address is the QP's number */
}

struct fi_ops_cm lfv_dgram_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfv_dgram_setname,
	.getname = lfv_dgram_getname,
	.getpeer = lfv_no_getpeer,
	.connect = lfv_no_connect,
	.listen = lfv_no_listen,
	.accept = lfv_no_accept,
	.reject = lfv_no_reject,
	.shutdown = lfv_no_shutdown,
	.join = lfv_no_join,
};

/* ---- UD queue pairs ----------------------------------------------------------- */

int lfv_ud_qp_ready(struct ibv_qp *qp, uint8_t port_num)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = port_num,
		.qkey = LFV_UD_QKEY,
	};
	int ret;

	ret = lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY));
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	ret = lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					   IBV_QP_SQ_PSN));
}

int lfv_ep_create_ud_qp(struct lfv_ep *ep)
{
	size_t grh_len = (size_t)(ep->rx.mask + 1) * LFV_GRH_SIZE;
	struct ibv_qp_init_attr attr;
	int ret;

	ep->grh = calloc(1, grh_len);
	if (!ep->grh)
		return -FI_ENOMEM;
	ep->ud_sge_stride = (uint32_t)ep->base.info->rx_attr->iov_limit + 1;
	ep->ud_sge = calloc((size_t)(ep->rx.mask + 1) * ep->ud_sge_stride,
			    sizeof(*ep->ud_sge));
	ep->ud_nsge = calloc((size_t)ep->rx.mask + 1, 1);
	if (!ep->ud_sge || !ep->ud_nsge) {
		ret = -FI_ENOMEM;
		goto free_grh;
	}
	ep->grh_mr = ibv_reg_mr(ep->base.domain->pd, ep->grh, grh_len,
				IBV_ACCESS_LOCAL_WRITE);
	if (!ep->grh_mr) {
		ret = lfv_verbs_errno();
		goto free_grh;
	}
	lfv_ep_qp_caps(ep, &attr);
	ep->qp = ibv_create_qp(ep->base.domain->pd, &attr);
	if (!ep->qp) {
		ret = lfv_verbs_errno();
		goto dereg;
	}
	ret = lfv_ud_qp_ready(ep->qp, ep->base.domain->dev->port_num);
	if (ret)
		goto destroy_qp;
	return 0;

destroy_qp:
	ibv_destroy_qp(ep->qp);
	ep->qp = NULL;
dereg:
	ibv_dereg_mr(ep->grh_mr);
	ep->grh_mr = NULL;
free_grh:
	free(ep->ud_nsge);
	free(ep->ud_sge);
	free(ep->grh);
	ep->ud_nsge = NULL;
	ep->ud_sge = NULL;
	ep->grh = NULL;
	return ret;
}
