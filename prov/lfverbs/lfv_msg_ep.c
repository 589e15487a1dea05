/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MSG and DGRAM endpoint objects: open, bind, enable, close, options, and
 * the two types' tables (struct lfv_ep_kind), one of which fi_endpoint
 * picks. The data path is in lfv_msg.c, completions in lfv_msg_comp.c,
 * connection management in lfv_msg_cm.c, DGRAM's own ways in lfv_dgram.c;
 * see lfv_ep.h.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lfv_amo.h"
#include "lfv_brx.h"
#include "lfv_cm.h"
#include "lfv_dgram.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_log.h"
#include "lfv_msg.h"
#include "lfv_msg_cm.h"
#include "lfv_msg_comp.h"
#include "lfv_msg_ep.h"
#include "lfv_msg_rma.h"
#include "lfv_param.h"
#include "lfv_queue.h"
#include "lfv_rma.h"
#include "lfv_sep.h"
#include "lfv_msg_srq.h"
#include "lfv_stubs.h"
#include "lfv_stx.h"
#include "lfv_svc.h"
#include "lfv_ud_cancel.h"
#include "lfv_vcq.h"

/* ---- binding ---------------------------------------------------------------- */

/* What binding an EQ, an SRQ or an STX refuses: a second one (bound),
 * flags, an object of another domain. */
static int lfv_ep_bind_one(const void *bound, uint64_t flags,
			   bool same_domain)
{
	if (bound)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	return same_domain ? 0 : -FI_EINVAL;
}

static int lfv_ep_bind_eq(struct lfv_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct lfv_eq *eq;
	int ret = lfv_ep_bind_one(ep->eq, flags, true);

	if (ret)
		return ret;
	eq = lfv_eq_from_fid(lfv_container_of(bfid, struct fid_eq, fid));
	/* Its connection events are read through this EQ now. */
	ret = lfv_cm_bind_eq(ep->base.domain->fabric, eq, ep->id,
			     lfv_control_progress(ep->base.info));
	if (ret)
		return ret;
	ep->eq = eq;
	lfv_ref_get(&ep->eq->ref);
	return 0;
}

static int lfv_ep_bind_srq(struct lfv_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct lfv_msg_srq *srq = lfv_container_of(bfid, struct lfv_msg_srq,
					       ep_fid.fid);
	int ret = lfv_ep_bind_one(ep->srq, flags,
				  srq->domain == ep->base.domain);

	if (ret)
		return ret;
	ep->srq = srq;
	return lfv_msg_srq_attach(ep->srq, ep);
}

static int lfv_ep_bind_stx(struct lfv_ep *ep, struct fid *bfid, uint64_t flags)
{
	struct lfv_stx *stx = lfv_container_of(bfid, struct lfv_stx,
					       stx_fid.fid);
	int ret = lfv_ep_bind_one(ep->stx, flags,
				  stx->domain == ep->base.domain);

	if (ret)
		return ret;
	ep->stx = stx;
	lfv_ref_get(&ep->stx->ref);
	/* Its attributes become this endpoint's transmit defaults. */
	ep->base.tx_op_flags = ep->stx->attr.op_flags;
	return 0;
}

/* What fi_ep_bind refuses on any endpoint of lfv_ep.c. */
static int lfv_ep_bind_check(const struct lfv_ep *ep, const struct fid *bfid)
{
	if (!bfid)
		return -FI_EINVAL;
	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	return 0;
}

/* MSG endpoints bind an EQ, a shared receive and a shared transmit
 * context beyond the base's CQs and counters. */
static int lfv_msg_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	int ret = lfv_ep_bind_check(ep, bfid);

	if (ret)
		return ret;
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		return lfv_ep_bind_eq(ep, bfid, flags);
	case FI_CLASS_SRX_CTX:
		return lfv_ep_bind_srq(ep, bfid, flags);
	case FI_CLASS_STX_CTX:
		return lfv_ep_bind_stx(ep, bfid, flags);
	default:
		return lfv_ep_base_bind(&ep->base, bfid, flags);
	}
}

/* DGRAM endpoints: a shared transmit context, and the base's CQs,
 * counters and AV. */
static int lfv_dgram_ep_bind(struct fid *fid, struct fid *bfid,
			     uint64_t flags)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	int ret = lfv_ep_bind_check(ep, bfid);

	if (ret)
		return ret;
	if (bfid->fclass == FI_CLASS_STX_CTX)
		return lfv_ep_bind_stx(ep, bfid, flags);
	return lfv_ep_base_bind(&ep->base, bfid, flags);
}

/* ---- enable --------------------------------------------------------------- */

/* Receive completions that may land on the receive CQ: a shared queue's
 * may all come through this endpoint's QP. */
static int lfv_ep_rx_reserve(const struct lfv_ep *ep)
{
	return (int)(ep->srq ? ep->srq->q.size : ep->rx.size);
}

static int lfv_ep_attach_queues(struct lfv_ep *ep)
{
	int ret;

	ret = lfv_vcq_get(ep->base.domain, ep->base.tx_cq, (int)ep->tx.size, &ep->tx.vcq);
	if (ret)
		return ret;
	ret = lfv_vcq_get(ep->base.domain, ep->base.rx_cq, lfv_ep_rx_reserve(ep),
			  &ep->rx.vcq);
	if (ret) {
		lfv_vcq_put(ep->tx.vcq, (int)ep->tx.size);
		ep->tx.vcq = NULL;
	}
	return ret;
}

static void lfv_ep_detach_queues(struct lfv_ep *ep)
{
	if (ep->rx.vcq)
		lfv_vcq_put(ep->rx.vcq, lfv_ep_rx_reserve(ep));
	if (ep->tx.vcq)
		lfv_vcq_put(ep->tx.vcq, (int)ep->tx.size);
	ep->rx.vcq = ep->tx.vcq = NULL;
}

/* Which queues of an MSG endpoint lfv_vcq_translate_fast may serve:
 * counters, buffered or shared receives need the general translation (and
 * DGRAM's GRH and sources, so its queues never are). The bindings are
 * final once enabled. */
static void lfv_msg_ep_mark_fast(struct lfv_ep *ep)
{
	bool direct = !ep->brx;

	ep->tx.fast = direct && !ep->tx.cntr &&
		      !ep->base.cntr[LFV_CNTR_READ] &&
		      !ep->base.cntr[LFV_CNTR_WRITE] && ep->tx.vcq->cq;
	ep->rx.fast = direct && !ep->srq && !ep->rx.cntr && ep->rx.vcq->cq;
	ep->rx_direct = direct && !ep->srq;
}

/* What the verbs CQ layer reads per completion, kept on the queues it
 * polls: the bindings are final once enabled. */
static void lfv_ep_bindings_to_queues(struct lfv_ep *ep)
{
	ep->tx.cntr = ep->base.cntr[LFV_CNTR_SEND];
	ep->rx.cntr = ep->base.cntr[LFV_CNTR_RECV];
	ep->tx.selective = ep->base.tx_selective;
	ep->rx.selective = ep->base.rx_selective;
}

/* What fi_enable does on either type once the type's own bindings are
 * there: the queues on their verbs CQs and the QP (create_qp: the type's). */
static int lfv_ep_enable_qp(struct lfv_ep *ep,
			    int (*create_qp)(struct lfv_ep *ep))
{
	int ret;

	if (!ep->base.tx_cq && !ep->base.cntr[LFV_CNTR_SEND] &&
	    (ep->base.info->caps & FI_SEND))
		LFV_INFO(FI_LOG_EP_CTRL, "no CQ or counter for sends\n");
	lfv_ep_bindings_to_queues(ep);
	ret = lfv_ep_attach_queues(ep);
	if (ret)
		return ret;
	ret = create_qp(ep);
	if (ret)
		lfv_ep_detach_queues(ep);
	return ret;
}

/* An MSG endpoint: sends wait for the connection (lfv_msg_cm.c). */
static int lfv_msg_ep_enable(struct lfv_ep *ep)
{
	int ret;

	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (!ep->eq)
		return -FI_ENOEQ;
	ret = lfv_ep_enable_qp(ep, lfv_ep_create_rc_qp);
	if (ret)
		return ret;
	if (ep->brx) {
		/* The QP (INIT already) takes the bounce buffers now; the
		 * close path cleans up after a failure. */
		ret = lfv_brx_enable(ep);
		if (ret)
			return ret;
	}
	lfv_msg_ep_mark_fast(ep);
	ep->state = LFV_EP_ENABLED;
	return 0;
}

/* A DGRAM endpoint: named at its service (not a scalable endpoint's
 * context: the scalable endpoint is), and sending from now on. */
static int lfv_dgram_ep_enable(struct lfv_ep *ep)
{
	struct lfv_ud_name name;
	int ret;

	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (!ep->base.av)
		return -FI_ENOAV;
	ret = lfv_ep_enable_qp(ep, lfv_ep_create_ud_qp);
	if (ret)
		return ret;
	if (!ep->sep) {
		/* Before any receive: the close path cleans up the QP. */
		lfv_dgram_name(ep, &name);
		ret = lfv_svc_listen(ep->base.info, &name, &ep->svc);
		if (ret)
			return ret;
	}
	ep->state = LFV_EP_ENABLED;
	/* Release: as in lfv_cm.c */
	lfv_store_release32(&ep->tx_ready, 1);
	return 0;
}

/* ---- control ---------------------------------------------------------------- */

static int lfv_ep_control(struct fid *fid, int command, void *arg)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (command == FI_ENABLE)
		return ep->kind->enable(ep);
	return lfv_ep_base_control(&ep->base, command, arg);
}

static int lfv_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (optname == FI_OPT_MIN_MULTI_RECV)
		return lfv_opt_size(ep->min_multi_recv, optval, optlen);
	return -FI_ENOPROTOOPT;
}

/* MSG endpoints also tell how much data a connection request carries. */
static int lfv_msg_ep_getopt(fid_t fid, int level, int optname, void *optval,
			     size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return lfv_ep_getopt(fid, level, optname, optval, optlen);
	if (!optval || !optlen)
		return -FI_EINVAL;
	return lfv_opt_size(LFV_CM_DATA_SIZE, optval, optlen);
}

static int lfv_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval)
		return -FI_EINVAL;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (optlen != sizeof(size_t))
			return -FI_EINVAL;
		ep->min_multi_recv = *(const size_t *)optval;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

/* Verbs cannot take back one receive the hardware holds: the buffered
 * path (lfv_brx.c) keeps receives where they can be cancelled; an RC QP
 * cannot without ending its connection. */
static ssize_t lfv_msg_ep_cancel(fid_t fid, void *context)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (ep->brx)
		return lfv_brx_cancel(ep, context);
	return -FI_ENOSYS;
}

/* A UD QP can flush its receives and start again (lfv_ud_cancel.c). */
static ssize_t lfv_dgram_ep_cancel(fid_t fid, void *context)
{
	return lfv_ud_cancel(lfv_ep_real(fid), context);
}

static ssize_t lfv_queue_left(const struct lfv_queue *q)
{
	/* Acquire: pairs with the poller's release of head. */
	return (ssize_t)(q->size - (q->tail - lfv_load_acquire64(&q->head)));
}

static ssize_t lfv_ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);

	if (ep->state == LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (ep->brx)
		return lfv_brx_size_left(ep);
	return lfv_queue_left(&ep->rx);
}

static ssize_t lfv_ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);

	if (ep->state == LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	return lfv_queue_left(&ep->tx);
}

/* ---- close ----------------------------------------------------------------- */

/* Releases what fi_endpoint and the binds took (not the QP or the id). */
static void lfv_ep_free(struct lfv_ep *ep)
{
	lfv_ep_detach_queues(ep);
	if (ep->grh_mr)
		ibv_dereg_mr(ep->grh_mr);
	if (ep->amo_mr)
		ibv_dereg_mr(ep->amo_mr);
	free(ep->grh);
	free(ep->ud_sge);
	free(ep->ud_nsge);
	if (ep->eq)
		lfv_ref_put(&ep->eq->ref);
	if (ep->srq)
		lfv_msg_srq_detach(ep->srq, ep);
	if (ep->stx)
		lfv_ref_put(&ep->stx->ref);
	lfv_brx_free(ep);
	lfv_queue_fini(&ep->tx);
	lfv_queue_fini(&ep->rx);
	lfv_ep_base_fini(&ep->base);
	free(ep);
}

/*
 * Outstanding requests: the QP goes to the error state, which flushes every
 * request (signaled or not) to the CQs; we take those completions back
 * (dropping them) before the op arrays go away.
 */
static void lfv_ep_flush(struct lfv_ep *ep)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	struct lfv_queue *tx = &ep->tx;
	struct lfv_op *first;

	if (!ep->qp)
		return;
	if (tx->more_first) {
		/* FI_MORE requests never posted: nothing will flush them. */
		first = (struct lfv_op *)(uintptr_t)tx->more_first->wr_id;
		tx->tail = lfv_load_relaxed64(&tx->head) +
			   (((uint64_t)(first - tx->ops) -
			     lfv_load_relaxed64(&tx->head)) & tx->mask);
		tx->more_first = tx->more_last = NULL;
	}
	ibv_modify_qp(ep->qp, &attr, IBV_QP_STATE);
	lfv_ep_drain_queue(&ep->tx);
	lfv_ep_drain_queue(&ep->rx);
}

static int lfv_ep_close(struct fid *fid)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (lfv_ref_read(&ep->base.ref) > 1)
		return -FI_EBUSY;
	if (ep->kind->closing)
		ep->kind->closing(ep);
	lfv_svc_close(ep->svc);	/* nobody learns the QP any more */
	lfv_ep_flush(ep);
	if (ep->id) {
		if (ep->qp)
			rdma_destroy_qp(ep->id);
		rdma_destroy_id(ep->id);
	} else if (ep->qp) {
		ibv_destroy_qp(ep->qp);
	}
	/* A flush that outlasted the drain's deadline completes by the
	 * QP's destroy at the latest: taken now, while the ops it names
	 * exist, not by the next reader of a CQ we share. */
	lfv_vcq_progress_pair(ep->tx.vcq, ep->rx.vcq);
	if (ep->sep)
		lfv_sep_ctx_closed(ep);
	lfv_ep_free(ep);
	return 0;
}

static struct fi_ops lfv_msg_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_ep_close,
	.bind = lfv_msg_ep_bind,
	.control = lfv_ep_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops lfv_dgram_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_ep_close,
	.bind = lfv_dgram_ep_bind,
	.control = lfv_ep_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_ep lfv_msg_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_msg_ep_cancel,
	.getopt = lfv_msg_ep_getopt,
	.setopt = lfv_ep_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_ep_rx_size_left,
	.tx_size_left = lfv_ep_tx_size_left,
};

static struct fi_ops_ep lfv_dgram_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_dgram_ep_cancel,
	.getopt = lfv_ep_getopt,
	.setopt = lfv_ep_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_ep_rx_size_left,
	.tx_size_left = lfv_ep_tx_size_left,
};

static const struct lfv_ep_type lfv_msg_type = {
	.fi = &lfv_msg_ep_fi_ops,
	.ep = &lfv_msg_ep_ops,
	.cm = &lfv_cm_ops,
	.msg = &lfv_msg_ops,
	.rma = &lfv_rma_ops,
	.tagged = &lfv_no_tagged_ops,
	.atomic = &lfv_atomic_ops,
	.binds = LFV_EP_BINDS_CQ | LFV_EP_BINDS_CNTR | LFV_EP_ALIASES,
	.rma_post = lfv_msg_rma_post,
};

static const struct lfv_ep_type lfv_dgram_type = {
	.fi = &lfv_dgram_ep_fi_ops,
	.ep = &lfv_dgram_ep_ops,
	.cm = &lfv_dgram_cm_ops,
	.msg = &lfv_dgram_msg_ops,
	.rma = &lfv_no_rma_ops,
	.tagged = &lfv_no_tagged_ops,
	.atomic = &lfv_no_atomic_ops,
	.binds = LFV_EP_BINDS_CQ | LFV_EP_BINDS_CNTR | LFV_EP_BINDS_AV |
		 LFV_EP_ALIASES,
};

/* MSG: connected RC QPs (rdma_cm), RMA and atomics. */
static const struct lfv_ep_kind lfv_msg_kind = {
	.type = &lfv_msg_type,
	.translate = lfv_msg_translate,
	.open = lfv_cm_ep_open,
	.enable = lfv_msg_ep_enable,
	.closing = lfv_cm_detach,	/* no more events for this ep */
};

/* DGRAM: UD QPs, addressed through the AV; messages only. */
static const struct lfv_ep_kind lfv_dgram_kind = {
	.type = &lfv_dgram_type,
	.rx_hdr_sges = 1,
	.enable = lfv_dgram_ep_enable,
	.translate = lfv_dgram_translate,
	.tx_dest = lfv_dgram_tx_dest,
	.rx_hdr = lfv_dgram_rx_hdr,
	.marker_ah = lfv_dgram_marker_ah,
};

/* ---- open ------------------------------------------------------------------ */

/* The one place that asks which type: fi_endpoint's info decides. */
static const struct lfv_ep_kind *lfv_ep_kind_of(const struct fi_info *info)
{
	switch (info->ep_attr->type) {
	case FI_EP_MSG:
		return &lfv_msg_kind;
	case FI_EP_DGRAM:
		return &lfv_dgram_kind;
	default:
		return NULL;
	}
}

static int lfv_ep_check_info(const struct lfv_domain *domain,
			     const struct fi_info *info,
			     const struct lfv_ep_kind *kind)
{
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, domain->dev->name))
		return -FI_EINVAL;
	if (info->tx_attr->iov_limit > (size_t)domain->dev->attr.max_sge ||
	    info->rx_attr->iov_limit + kind->rx_hdr_sges >
	    (size_t)domain->dev->attr.max_sge ||
	    info->tx_attr->size > (size_t)domain->dev->attr.max_qp_wr ||
	    info->rx_attr->size > (size_t)domain->dev->attr.max_qp_wr ||
	    info->tx_attr->inject_size > domain->dev->max_inline)
		return -FI_EINVAL;
	return 0;
}

static int lfv_ep_init_queues(struct lfv_ep *ep)
{
	struct fi_info *info = ep->base.info;
	size_t tx = lfv_ep_pick_size(info->tx_attr->size, lfv_params.tx_size,
			     (size_t)ep->base.domain->dev->attr.max_qp_wr);
	size_t rx = lfv_ep_pick_size(info->rx_attr->size, lfv_params.rx_size,
			     (size_t)ep->base.domain->dev->attr.max_qp_wr);
	int ret;

	info->tx_attr->size = tx;
	info->rx_attr->size = rx;
	if (!info->tx_attr->iov_limit)
		info->tx_attr->iov_limit = 1;
	if (!info->rx_attr->iov_limit)
		info->rx_attr->iov_limit = 1;
	ret = lfv_queue_init(&ep->tx, ep, true, (uint32_t)tx,
			     ep->base.domain->locked);
	if (ret)
		return ret;
	ret = lfv_queue_init(&ep->rx, ep, false, (uint32_t)rx,
			     ep->base.domain->locked);
	if (ret) {
		lfv_queue_fini(&ep->tx);
		return ret;
	}
	ret = lfv_queue_enable_more(&ep->tx,
				    (uint32_t)info->tx_attr->iov_limit);
	if (ret) {
		lfv_queue_fini(&ep->rx);
		lfv_queue_fini(&ep->tx);
		return ret;
	}
	ep->tx.translate = ep->rx.translate = ep->kind->translate;
	return 0;
}

int lfv_ep_open(struct lfv_domain *domain, const struct fi_info *info,
		void *context, struct lfv_ep **out)
{
	const struct lfv_ep_kind *kind;
	struct lfv_ep *ep;
	int ret;

	if (!info->ep_attr || !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	kind = lfv_ep_kind_of(info);
	if (!kind)
		return -FI_EINVAL;
	ret = lfv_ep_check_info(domain, info, kind);
	if (ret)
		return ret;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->kind = kind;
	ret = lfv_ep_base_init(&ep->base, domain, info, kind->type, context);
	if (ret)
		goto free_ep;
	ep->inject_size = info->tx_attr->inject_size;
	atomic_init(&ep->tx_ready, 0);
	ret = lfv_ep_init_queues(ep);
	if (ret)
		goto fini_base;
	ep->min_multi_recv = LFV_MIN_MULTI_RECV;
	if (lfv_brx_wanted(info)) {
		ret = lfv_brx_init(ep);
		if (ret)
			goto fini_queues;
	}
	if (kind->open) {
		ret = kind->open(ep, info);
		if (ret)
			goto free_brx;
	}
	*out = ep;
	return 0;

free_brx:
	lfv_brx_free(ep);
fini_queues:
	lfv_queue_fini(&ep->rx);
	lfv_queue_fini(&ep->tx);
fini_base:
	lfv_ep_base_fini(&ep->base);
free_ep:
	free(ep);
	return ret;
}

/* fi_endpoint of a MSG or DGRAM endpoint (lfv_domain.c dispatches). */
int lfv_msg_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep_fid, void *context)
{
	struct lfv_ep *ep;
	int ret;

	ret = lfv_ep_open(domain, info, context, &ep);
	if (ret)
		return ret;
	*ep_fid = &ep->base.ep_fid;
	return 0;
}
