/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM endpoints: the object (bind, enable, close, open) and the
 * owner SRX imported with FI_PEER. The completion dispatch and the CQs'
 * progress hook are lfv_rdm_progress.c, the send calls lfv_rdm_send.c, the
 * transmit side lfv_rdm_tx.c, the receive side lfv_rdm_rx.c, the call
 * tables lfv_rdm_ops.c, connections lfv_rdm_conn.c and
 * lfv_rdm_conn_table.c; the protocol is in lfv_rdm_proto.h and the
 * objects in lfv_rdm_ep.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lfv_amo.h"
#include "lfv_av.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_lock_order.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_peer_srx.h"
#include "lfv_queue.h"
#include "lfv_rdm.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_ops.h"
#include "lfv_rdm_progress.h"
#include "lfv_rdm_rma.h"
#include "lfv_rdm_rx.h"
#include "lfv_rdm_shm.h"
#include "lfv_rdm_tx.h"
#include "lfv_rma.h"
#include "lfv_stubs.h"
#include "lfv_svc.h"
#include "lfv_ud.h"
#include "lfv_vcq.h"
#include "lfv_wait.h"

#define LFV_RDM_DRAIN_NS (2 * 1000 * 1000 * 1000LL)

_Static_assert(sizeof(struct lfv_rdm_hdr) == LFV_RDM_HDR_SIZE,
	       "LFV_RDM_HDR_SIZE is the wire header");

/* ---- fi_ops_ep and fi_ops_cm ------------------------------------------------ */

static ssize_t lfv_rdm_cancel(fid_t fid, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (!ep->enabled || !ep->srx)
		return -FI_ENOENT;
	return fi_cancel(&ep->srx->fid, context);
}

/*
 * FI_OPT_MIN_MULTI_RECV is the matching SRX's: the one bound, or our own
 * once enable opened it; before that the endpoint keeps the value for it
 * (2.x's fabtests set it between fi_endpoint and fi_enable). An owner's
 * SRX (FI_PEER) is the owner's to set.
 */
static int lfv_rdm_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV ||
	    ep->imported)
		return -FI_ENOPROTOOPT;
	if (ep->srx)
		return fi_getopt(&ep->srx->fid, level, optname, optval, optlen);
	if (!optval || !optlen)
		return -FI_EINVAL;
	return lfv_opt_size(ep->min_multi_recv, optval, optlen);
}

static int lfv_rdm_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MIN_MULTI_RECV ||
	    ep->imported)
		return -FI_ENOPROTOOPT;
	if (ep->srx)
		return fi_setopt(&ep->srx->fid, level, optname, optval, optlen);
	if (!optval || optlen != sizeof(size_t))
		return -FI_EINVAL;
	memcpy(&ep->min_multi_recv, optval, sizeof(size_t));
	return 0;
}

static ssize_t lfv_rdm_tx_size_left(struct fid_ep *ep_fid)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct lfv_list *item;
	ssize_t n = 0;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	lfv_spin_lock(&ep->lock);
	lfv_list_foreach(item, &ep->tx_free)
		n++;
	lfv_spin_unlock(&ep->lock);
	return n;
}

static struct fi_ops_ep lfv_rdm_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_rdm_cancel,
	.getopt = lfv_rdm_getopt,
	.setopt = lfv_rdm_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_no_size_left,
	.tx_size_left = lfv_rdm_tx_size_left,
};

static int lfv_rdm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE; /* the name is the control QP's */
	return lfv_copy_name(&ep->name, sizeof(ep->name), addr, addrlen);
}

static struct fi_ops_cm lfv_rdm_cm_ops =
	LFV_NO_CONN_CM_OPS(lfv_no_setname, lfv_rdm_getname);

/* An owner's SRX imported with FI_PEER (fi_peer(3)): receives are posted
 * with the owner; lfverbs' endpoints bound to it are its peer. */
struct lfv_rdm_isrx {
	struct fid_ep ep_fid;		/* FI_CLASS_SRX_CTX */
	struct fid_peer_srx *peer;	/* the owner's */
	lfv_atomic32_t ref;		/* 1 + endpoints bound */
};

static int lfv_rdm_isrx_close(struct fid *fid)
{
	struct lfv_rdm_isrx *x = lfv_container_of(fid, struct lfv_rdm_isrx,
						  ep_fid.fid);

	if (lfv_ref_read(&x->ref) > 1)
		return -FI_EBUSY;
	free(x);
	return 0;
}

static struct fi_ops lfv_rdm_isrx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_rdm_isrx_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* Receives go to the owner: every receive and send call is a stub. */
static const struct lfv_rx_only_ops lfv_rdm_isrx_ops = {
	.fi = &lfv_rdm_isrx_fi_ops,
	.ep = &lfv_no_ep_ops,
	.msg = &lfv_no_msg_ops,
	.tagged = &lfv_no_tagged_ops,
};

/* The endpoint and an SRX of ours need their locks only when the
 * domain's calls are not serialised by the application, or a progress
 * thread makes them too. */
/* The largest payload sent as segmented eager: FI_LFVERBS_RDM_SAR, cut
 * so that one message takes at most half the transmit requests (a send
 * takes all of its segments' at once); 0 (none) at or below the eager
 * size. */
static size_t lfv_rdm_sar_limit(const struct lfv_rdm_ep *ep)
{
	size_t segs = ep->ntx / 2, max;

	if (lfv_params.rdm_sar <= ep->eager || segs < 2 ||
	    ep->eager <= sizeof(struct lfv_rdm_sar))
		return 0;
	max = ep->eager - sizeof(struct lfv_rdm_sar) + (segs - 1) * ep->eager;
	return lfv_params.rdm_sar < max ? lfv_params.rdm_sar : max;
}

static bool lfv_rdm_needs_locks(const struct lfv_domain *domain)
{
	return domain->locked || domain->progress_auto;
}

int lfv_rdm_srx_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
			struct fid_ep **rx_ep, void *context)
{
	struct fi_peer_srx_context *pctx = context;
	int ret;
	struct fi_rx_attr own = { .iov_limit = LFV_RDM_MAX_IOV };
	struct lfv_rdm_isrx *x;

	if (attr && (attr->op_flags & FI_PEER)) {
		if (!pctx || !pctx->srx || !pctx->srx->owner_ops ||
		    !lfv_peer_allowed())
			return -FI_EINVAL;
		x = calloc(1, sizeof(*x));
		if (!x)
			return -FI_ENOMEM;
		x->peer = pctx->srx;
		x->peer->peer_ops = &lfv_rdm_srx_peer_ops;
		atomic_init(&x->ref, 1);
		lfv_rx_only_fid_init(&x->ep_fid, FI_CLASS_SRX_CTX, context,
				     &lfv_rdm_isrx_ops);
		*rx_ep = &x->ep_fid;
		return 0;
	}
	if (attr) {
		own.iov_limit = attr->iov_limit ? attr->iov_limit :
						  LFV_RDM_MAX_IOV;
		own.op_flags = attr->op_flags;
	}
	ret = lfv_peer_srx_open(&own, domain->info->caps & LFV_PEER_SRX_CAPS,
				context, rx_ep);
	if (!ret)
		lfv_peer_srx_set_locking(*rx_ep, lfv_rdm_needs_locks(domain));
	return ret;
}

static bool lfv_rdm_is_isrx(const struct fid *fid)
{
	return fid->ops == &lfv_rdm_isrx_fi_ops;
}

/* ---- bind ---------------------------------------------------------------------- */

/* RDM endpoints bind an SRX (ours, or an owner's imported with FI_PEER)
 * beyond the base's CQs, counters and AV. */
static int lfv_rdm_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);
	struct lfv_av *av;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_SRX_CTX:
		if (flags)
			return -FI_EBADFLAGS;
		if (ep->srx || ep->imported)
			return -FI_EINVAL;
		if (lfv_rdm_is_isrx(bfid)) {
			ep->imported = lfv_container_of(bfid,
					struct lfv_rdm_isrx, ep_fid.fid);
			lfv_ref_get(&ep->imported->ref);
			return 0;
		}
		/* Only a matching SRX of lfverbs (lfv_peer_srx). */
		if (!lfv_peer_srx_is(bfid))
			return -FI_EINVAL;
		ep->srx = lfv_container_of(bfid, struct fid_ep, fid);
		return 0;
	case FI_CLASS_AV:
		/* Not an AV of scalable endpoints' names. */
		av = lfv_av_from_fid(bfid);
		if (av && av->rx_ctx_bits)
			return -FI_EINVAL;
		return lfv_ep_base_bind(&ep->base, bfid, flags);
	default:
		return lfv_ep_base_bind(&ep->base, bfid, flags);
	}
}

/* ---- enable ------------------------------------------------------------------- */

static int lfv_rdm_ctl_qp_create(struct lfv_rdm_ep *ep)
{
	struct ibv_qp_init_attr init = {
		.qp_context = ep,
		.send_cq = ep->tx_vcq->ibv_cq,
		.recv_cq = ep->rx_vcq->ibv_cq,
		.cap = {
			.max_send_wr = LFV_RDM_CTRL_SLOTS,
			.max_recv_wr = LFV_RDM_CTRL_SLOTS,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	int ret;

	ep->ctl_qp = ibv_create_qp(ep->base.domain->pd, &init);
	if (!ep->ctl_qp)
		return lfv_verbs_errno();
	ret = lfv_ud_qp_ready(ep->ctl_qp, ep->base.domain->dev->port_num);
	if (ret) {
		ibv_destroy_qp(ep->ctl_qp);
		ep->ctl_qp = NULL;
	}
	return ret;
}

/* One registered block: tx buffers, rx buffers, control buffers. */
static int lfv_rdm_alloc_bufs(struct lfv_rdm_ep *ep)
{
	size_t nctl = 2 * LFV_RDM_CTRL_SLOTS, i;
	size_t ctl_off = (ep->ntx + ep->nrx) * ep->buf_size;
	struct lfv_rdm_req *r;

	ep->mem_len = ctl_off + nctl * sizeof(struct lfv_rdm_ctrl_buf);
	if (posix_memalign((void **)&ep->mem, 4096, ep->mem_len))
		return -FI_ENOMEM;
	ep->reqs = calloc(ep->ntx + ep->nrx + nctl, sizeof(*ep->reqs));
	if (!ep->reqs) {
		free(ep->mem);
		ep->mem = NULL;
		return -FI_ENOMEM;
	}
	ep->mr = ibv_reg_mr(ep->base.domain->pd, ep->mem, ep->mem_len,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!ep->mr) {
		free(ep->reqs);
		free(ep->mem);
		ep->reqs = NULL;
		ep->mem = NULL;
		return lfv_verbs_errno();
	}
	ep->ping.op.q = &ep->wq;
	ep->ping.kind = LFV_RDM_K_PING;
	ep->rtu.op.q = &ep->wq;
	ep->rtu.kind = LFV_RDM_K_RTU;
	for (i = 0; i < ep->ntx + ep->nrx + nctl; i++) {
		r = &ep->reqs[i];
		r->op.q = &ep->wq;
		if (i < ep->ntx + ep->nrx) {
			r->buf = ep->mem + i * ep->buf_size;
			r->kind = i < ep->ntx ? LFV_RDM_K_TX : LFV_RDM_K_RX;
		} else {
			r->buf = ep->mem + ctl_off + (i - ep->ntx - ep->nrx) *
				 sizeof(struct lfv_rdm_ctrl_buf);
			r->kind = i < ep->ntx + ep->nrx + LFV_RDM_CTRL_SLOTS ?
				  LFV_RDM_K_CTRL_RX : LFV_RDM_K_CTRL_TX;
		}
		if (r->kind == LFV_RDM_K_TX)
			lfv_list_insert_tail(&ep->tx_free, &r->node);
		else if (r->kind == LFV_RDM_K_CTRL_TX)
			lfv_list_insert_tail(&ep->ctl_free, &r->node);
	}
	return 0;
}

static void lfv_rdm_free_bufs(struct lfv_rdm_ep *ep)
{
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	free(ep->reqs);
	free(ep->mem);
	ep->mr = NULL;
	ep->reqs = NULL;
	ep->mem = NULL;
}

static int lfv_rdm_srq_create(struct lfv_rdm_ep *ep)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = (uint32_t)ep->nrx, .max_sge = 1 },
	};
	size_t i;

	ep->srq = ibv_create_srq(ep->base.domain->pd, &attr);
	if (!ep->srq)
		return lfv_verbs_errno();
	/* Chains of up to 1/16 of the buffers: the few held back never
	 * starve the SRQ. */
	ep->repost_batch = (uint32_t)(ep->nrx / 16);
	if (ep->repost_batch > LFV_RDM_REPOST_MAX)
		ep->repost_batch = LFV_RDM_REPOST_MAX;
	if (!ep->repost_batch)
		ep->repost_batch = 1;
	ep->nrepost = 0;
	for (i = 0; i < ep->nrx; i++)
		lfv_rdm_post_rx(ep, &ep->reqs[ep->ntx + i]);
	lfv_rdm_flush_rx(ep);
	return 0;
}

/* Where the endpoint's messages match: an imported owner's SRX, the one
 * the application bound, or one of its own; and our handle on it as its
 * peer. */
static int lfv_rdm_srx_open(struct lfv_rdm_ep *ep)
{
	struct fi_rx_attr attr = {
		.iov_limit = ep->base.info->rx_attr->iov_limit,
		.op_flags = ep->base.rx_op_flags & LFV_PEER_SRX_OP_FLAGS,
	};
	int ret;

	if (ep->imported) {
		ep->peer_srx = ep->imported->peer;
		return 0;
	}
	if (!ep->srx) {
		ret = lfv_peer_srx_open(&attr,
					ep->base.info->caps & LFV_PEER_SRX_CAPS,
					ep, &ep->srx);
		if (ret)
			return ret;
		ep->own_srx = true;
		lfv_peer_srx_set_locking(ep->srx,
					 lfv_rdm_needs_locks(ep->base.domain));
		/* What the application set before enable (cannot fail: the
		 * value was checked then). */
		fi_setopt(&ep->srx->fid, FI_OPT_ENDPOINT,
			  FI_OPT_MIN_MULTI_RECV, &ep->min_multi_recv,
			  sizeof(ep->min_multi_recv));
	}
	/* Which receives complete is said in the entries' flags, which a
	 * peer of the SRX (shm) goes by. */
	if (ep->base.rx_selective)
		lfv_peer_srx_set_selective(ep->srx, true);
	ret = lfv_peer_srx_export(ep->srx, &ep->peer_srx);
	if (ret)
		goto close_srx;
	ep->peer_srx->peer_ops = &lfv_rdm_srx_peer_ops;
	lfv_peer_srx_set_data_fn(ep->peer_srx, lfv_rdm_peek_data);
	if (ep->base.rx_cq) {
		ret = lfv_peer_srx_bind_cq(ep->srx, &ep->base.rx_cq->peer_cq);
		if (ret)
			goto close_export;
	}
	return 0;

close_export:
	fi_close(&ep->peer_srx->ep_fid.fid);
	ep->peer_srx = NULL;
close_srx:
	if (ep->own_srx) {
		fi_close(&ep->srx->fid);
		ep->srx = NULL;
		ep->own_srx = false;
	}
	return ret;
}

static void lfv_rdm_srx_close(struct lfv_rdm_ep *ep)
{
	if (ep->peer_srx && !ep->imported)
		fi_close(&ep->peer_srx->ep_fid.fid);
	if (ep->srx && ep->own_srx)
		fi_close(&ep->srx->fid);
	ep->peer_srx = NULL;
	if (ep->own_srx)
		ep->srx = NULL;
}

static void lfv_rdm_set_name(struct lfv_rdm_ep *ep)
{
	memset(&ep->name, 0, sizeof(ep->name));
	memcpy(ep->name.gid, ep->base.domain->dev->gid.raw, sizeof(ep->name.gid));
	ep->name.qpn = ep->ctl_qp->qp_num;
	ep->name.qkey = LFV_UD_QKEY;
	ep->name.lid = ep->base.domain->dev->port_attr.lid;
}

static uint64_t lfv_rdm_new_incarnation(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
	       ((uint64_t)getpid() << 16) ^ (uint64_t)lrand48();
}

/* What completions of our QPs the CQs still hold, taken while what they
 * name (requests, buffers, connections) exists. Called after the QPs are
 * destroyed, as no completion of a QP comes after that: a device may flush
 * a QP's posted receives well after it went to error, as late as its
 * destroy (soft-RoCE flushes in a task, which destroy waits for), and the
 * control QP's receives are counted nowhere else. Left in a CQ that
 * another endpoint reads, they named our freed buffers. */
static void lfv_rdm_take_leftovers(struct lfv_rdm_ep *ep)
{
	lfv_vcq_progress_pair(ep->tx_vcq, ep->rx_vcq);
}

static int lfv_rdm_enable(struct lfv_rdm_ep *ep)
{
	size_t i;
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->base.av)
		return -FI_ENOAV;
	ep->tx_reserve = (int)(ep->ntx + LFV_RDM_CTRL_SLOTS);
	ep->rx_reserve = (int)(ep->nrx + LFV_RDM_CTRL_SLOTS);
	ret = lfv_vcq_get(ep->base.domain, ep->base.tx_cq, ep->tx_reserve, &ep->tx_vcq);
	if (ret)
		return ret;
	ret = lfv_vcq_get(ep->base.domain, ep->base.rx_cq, ep->rx_reserve, &ep->rx_vcq);
	if (ret)
		goto put_tx;
	ret = lfv_rdm_alloc_bufs(ep);
	if (ret)
		goto put_rx;
	ret = lfv_rdm_srx_open(ep);
	if (ret)
		goto free_bufs;
	ret = lfv_rdm_ctl_qp_create(ep);
	if (ret)
		goto close_srx;
	ret = lfv_rdm_srq_create(ep);
	if (ret)
		goto destroy_ctl;
	for (i = 0; i < LFV_RDM_CTRL_SLOTS; i++)
		lfv_rdm_post_ctrl_rx(ep, &ep->reqs[ep->ntx + ep->nrx + i]);
	lfv_rdm_set_name(ep);
	lfv_rdm_shm_ep_open(ep);
	/* Last: a peer that learns the QP may send to it at once. */
	ret = lfv_svc_listen(ep->base.info, &ep->name, &ep->svc);
	if (ret)
		goto close_shm;
	ep->incarnation = lfv_rdm_new_incarnation();
	pthread_mutex_lock(&ep->base.domain->vcq_lock);
	lfv_list_insert_tail(&ep->base.domain->rdm_eps, &ep->dnode);
	pthread_mutex_unlock(&ep->base.domain->vcq_lock);
	lfv_rdm_hook_cq(ep->base.tx_cq, ep->tx_vcq);
	lfv_rdm_hook_cq(ep->base.rx_cq, ep->rx_vcq);
	lfv_rdm_set_live(ep, true);
	ep->enabled = true;
	return 0;

close_shm:
	lfv_rdm_shm_ep_close(ep);
	ibv_destroy_srq(ep->srq);
	ep->srq = NULL;
destroy_ctl:
	ibv_destroy_qp(ep->ctl_qp);
	ep->ctl_qp = NULL;
	lfv_rdm_take_leftovers(ep);
close_srx:
	lfv_rdm_srx_close(ep);
free_bufs:
	lfv_rdm_free_bufs(ep);
put_rx:
	lfv_vcq_put(ep->rx_vcq, ep->rx_reserve);
	ep->rx_vcq = NULL;
put_tx:
	lfv_vcq_put(ep->tx_vcq, ep->tx_reserve);
	ep->tx_vcq = NULL;
	return ret;
}

static int lfv_rdm_control(struct fid *fid, int command, void *arg)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (command == FI_ENABLE)
		return lfv_rdm_enable(ep);
	return lfv_ep_base_control(&ep->base, command, arg);
}

/* ---- close -------------------------------------------------------------------- */

/* Every QP to the error state, then polls until no send is left in flight
 * (bounded), so no completion names a request after they are freed. */
static void lfv_rdm_quiesce(struct lfv_rdm_ep *ep)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int64_t deadline = lfv_now_ns() + LFV_RDM_DRAIN_NS;
	struct lfv_list *item;
	struct lfv_rdm_conn *c;
	size_t busy;

	ibv_modify_qp(ep->ctl_qp, &attr, IBV_QP_STATE);
	/* Under the lock: a CQ shared with another endpoint may be read on
	 * another thread, whose completions of ours (a REQ) add to conns. */
	lfv_spin_lock(&ep->lock);
	lfv_list_foreach(item, &ep->conns) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (c->qp)
			ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
	}
	lfv_spin_unlock(&ep->lock);
	ep->enabled = false;
	lfv_rdm_set_live(ep, false); /* what still comes is dropped */
	do {
		lfv_vcq_progress_pair(ep->tx_vcq, ep->rx_vcq);
		busy = 0;
		lfv_spin_lock(&ep->lock);
		lfv_list_foreach(item, &ep->conns)
			busy += lfv_container_of(item, struct lfv_rdm_conn,
						 node)->posted;
		lfv_list_foreach(item, &ep->ctl_free)
			busy--;
		busy += LFV_RDM_CTRL_SLOTS;
		lfv_spin_unlock(&ep->lock);
	} while (busy && lfv_now_ns() < deadline);
	if (busy)
		LFV_WARN(FI_LOG_EP_CTRL, "RDM close: %zu sends never "
			 "completed\n", busy);
}

/* Closing, quiesced: what requests still hold (registrations, copies,
 * rendezvous reads), given back without a completion. */
void lfv_rdm_drop_all(struct lfv_rdm_ep *ep)
{
	struct lfv_list *item, *conn;
	struct lfv_rdm_rreq *q;
	struct lfv_rdm_req *r;
	size_t i;

	lfv_list_foreach(conn, &ep->conns) {
		while ((item = lfv_list_pop_head(&lfv_container_of(conn,
				struct lfv_rdm_conn, node)->pending))) {
			r = lfv_container_of(item, struct lfv_rdm_req, node);
			if (r->kind == LFV_RDM_K_READ ||
			    r->kind == LFV_RDM_K_FIN ||
			    r->kind == LFV_RDM_K_CTS)
				lfv_rdm_rreq_drop(ep, r);
		}
	}
	while ((item = lfv_list_pop_head(&ep->aborted)))
		lfv_rdm_rreq_drop(ep, lfv_container_of(item,
				  struct lfv_rdm_req, node));
	/* Receives by write waiting for WDONE are on no queue. */
	while ((q = lfv_rdm_first_awaiting(ep)))
		lfv_rdm_rreq_drop(ep, &q->req);
	for (i = 0; i < ep->ntx; i++) {
		r = &ep->reqs[i];
		if (r->kind == LFV_RDM_K_RMA)
			lfv_rdm_rma_release(ep, r);
		if (r->rndv)
			lfv_rdm_rndv_drop(ep, r);
	}
}

/* Closing, quiesced: every QP destroyed, then what they left taken. A
 * connection keeps its place (qp NULL: lookups by QP number pass it by)
 * until lfv_rdm_conns_free. */
static void lfv_rdm_qps_destroy(struct lfv_rdm_ep *ep)
{
	struct lfv_list *item;
	struct lfv_rdm_conn *c;
	struct ibv_qp *qp;

	lfv_list_foreach(item, &ep->conns) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		/* Under the lock: another thread reading a CQ we share may
		 * be looking our connections up by QP number. */
		lfv_spin_lock(&ep->lock);
		qp = c->qp;
		c->qp = NULL;
		lfv_spin_unlock(&ep->lock);
		if (qp)
			ibv_destroy_qp(qp);
	}
	ibv_destroy_qp(ep->ctl_qp);
	lfv_rdm_take_leftovers(ep);
}

static int lfv_rdm_close(struct fid *fid)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (ep->ctl_qp) {
		lfv_svc_close(ep->svc);
		pthread_mutex_lock(&ep->base.domain->vcq_lock);
		lfv_list_remove(&ep->dnode);
		pthread_mutex_unlock(&ep->base.domain->vcq_lock);
		lfv_rdm_quiesce(ep);
		/* Before our SRX: shm holds an export of it. */
		lfv_rdm_shm_ep_close(ep);
		/* Before the connections: closing the SRX (or our export of
		 * it) discards what we queued there, which names them. */
		lfv_rdm_sar_close(ep);
		lfv_rdm_srx_close(ep);
		lfv_rdm_drop_all(ep);
		lfv_rdm_qps_destroy(ep);
		lfv_rdm_conns_free(ep);
		ibv_destroy_srq(ep->srq);
		lfv_rdm_free_bufs(ep);
		lfv_vcq_put(ep->rx_vcq, ep->rx_reserve);
		lfv_vcq_put(ep->tx_vcq, ep->tx_reserve);
	}
	if (ep->imported)
		lfv_ref_put(&ep->imported->ref);
	lfv_spin_fini(&ep->lock);
	lfv_ep_base_fini(&ep->base);
	free(ep);
	return 0;
}

static struct fi_ops lfv_rdm_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_rdm_close,
	.bind = lfv_rdm_bind,
	.control = lfv_rdm_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static const struct lfv_ep_type lfv_rdm_type = {
	.fi = &lfv_rdm_fi_ops,
	.ep = &lfv_rdm_ep_ops,
	.cm = &lfv_rdm_cm_ops,
	.msg = &lfv_rdm_msg_ops,
	.rma = &lfv_rma_ops,
	.tagged = &lfv_rdm_tagged_ops,
	.atomic = &lfv_atomic_ops,
	.binds = LFV_EP_BINDS_CQ | LFV_EP_BINDS_PEER_CQ | LFV_EP_BINDS_CNTR |
		 LFV_EP_BINDS_AV,
	.rma_post = lfv_rdm_rma_post,
};

/* ---- open ---------------------------------------------------------------------- */

int lfv_rdm_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep_fid, void *context)
{
	const struct lfv_device *dev = domain->dev;
	struct lfv_rdm_ep *ep;
	int ret;

	/* The domain was opened for RDM (its addresses are the UD names of
	 * control QPs). */
	if (!domain->info->ep_attr || domain->info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	if (!info->tx_attr || !info->rx_attr ||
	    info->tx_attr->iov_limit > LFV_RDM_MAX_IOV ||
	    info->rx_attr->iov_limit > LFV_PEER_SRX_MAX_IOV_LIMIT ||
	    info->tx_attr->inject_size > lfv_params.rdm_eager)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ret = lfv_ep_base_init(&ep->base, domain, info, &lfv_rdm_type,
			       context);
	if (ret)
		goto free_ep;
	ret = lfv_spin_init(&ep->lock, lfv_rdm_needs_locks(domain));
	if (ret)
		goto fini_base;
	ep->eager = lfv_params.rdm_eager;
	ep->min_multi_recv = LFV_PEER_SRX_DEFAULT_MIN_MULTI_RECV;
	ep->buf_size = LFV_RDM_HDR_SIZE + ep->eager;
	ep->ntx = lfv_ep_pick_size(info->tx_attr->size, lfv_params.tx_size,
			       (size_t)dev->attr.max_qp_wr);
	ep->nrx = lfv_ep_pick_size(lfv_params.rdm_rx_bufs, 256,
			       (size_t)dev->attr.max_srq_wr);
	ep->max_inline = dev->max_inline;
	ep->max_rdma = dev->port_attr.max_msg_sz;
	if (lfv_params.rdm_read_max && lfv_params.rdm_read_max < ep->max_rdma)
		ep->max_rdma = lfv_params.rdm_read_max;
	ep->sar_max = lfv_rdm_sar_limit(ep);
	if (!ep->base.info->tx_attr->iov_limit)
		ep->base.info->tx_attr->iov_limit = 1;
	if (!ep->base.info->rx_attr->iov_limit)
		ep->base.info->rx_attr->iov_limit = 1;
	if (!ep->base.info->tx_attr->inject_size)
		ep->base.info->tx_attr->inject_size = ep->eager;
	ep->wq.handler = lfv_rdm_completion;
	ep->live_left = LFV_RDM_LIVE_CALLS;
	lfv_list_init(&ep->tx_free);
	lfv_list_init(&ep->ctl_free);
	lfv_list_init(&ep->conns);
	lfv_list_init(&ep->aborted);
	lfv_list_init(&ep->sar_aborted);
	lfv_list_init(&ep->held_rts);
	lfv_list_init(&ep->reading);
	*ep_fid = &ep->base.ep_fid;
	return 0;

fini_base:
	lfv_ep_base_fini(&ep->base);
free_ep:
	free(ep);
	return ret;
}
