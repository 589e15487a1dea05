/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Connection management of MSG endpoints over rdma_cm (lfv_cm.c has the
 * channels): their ids, events, RC queue pairs and fi_ops_cm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lfv_cm.h"
#include "lfv_device.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_msg_cm.h"
#include "lfv_pep.h"
#include "lfv_stubs.h"

/* How long address and route resolution may take. */
#define LFV_CM_TIMEOUT_MS 2000

/*
 * How long a connected RC QP stays up, answering its peer, before
 * fi_shutdown or fi_close puts it in the error state. soft-RoCE posts a
 * receive's completion before it sends the ack of that message, and a QP
 * in the error state drops what it has not sent: an application that shuts
 * down or closes right after its last receive completes (fabtests' fi_msg,
 * fi_msg_epoll, fi_msg_pingpong do) could lose that ack, and the peer's
 * send, delivered, was retried until it failed with FI_ETIMEDOUT. The
 * responder sends the ack in the same run that posted the completion; the
 * grace covers that run being preempted (a guest's virtual CPU, a busy
 * host).
 */
#define LFV_ACK_GRACE_US 20000

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

/*
 * Gives a QP that may owe its peer acks (connected, and not yet put in the
 * error state by fi_shutdown) LFV_ACK_GRACE_US to send them, before the
 * caller puts it in the error state. Reads the state under cm_lock; sleeps
 * without it.
 */
static void lfv_ep_ack_grace(struct lfv_ep *ep)
{
	struct lfv_fabric *fabric = ep->base.domain->fabric;
	struct timespec ts = { 0, LFV_ACK_GRACE_US * 1000L };
	bool owes;

	pthread_mutex_lock(&fabric->cm_lock);
	owes = (ep->state == LFV_EP_CONNECTED ||
		ep->state == LFV_EP_ACCEPTING) && !ep->shut_down;
	pthread_mutex_unlock(&fabric->cm_lock);
	while (owes && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- MSG endpoint CM calls ----------------------------------------------- */

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
	lfv_ep_qp_caps(ep, IBV_QPT_RC, &attr);
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
	struct lfv_fabric *fabric = ep->base.domain->fabric;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	lfv_ep_ack_grace(ep);	/* before rdma_disconnect's error state */
	pthread_mutex_lock(&fabric->cm_lock);
	if (ep->state == LFV_EP_CONNECTED || ep->state == LFV_EP_CONNECTING ||
	    ep->state == LFV_EP_ACCEPTING) {
		ret = lfv_verbs_ret(rdma_disconnect(ep->id));
		ep->shut_down = !ret;
	} else if (ep->state != LFV_EP_SHUTDOWN) {
		ret = -FI_ENOTCONN;
	}
	pthread_mutex_unlock(&fabric->cm_lock);
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
	lfv_ep_ack_grace(ep);	/* before the close's error state */
}
