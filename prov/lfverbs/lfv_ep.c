/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Endpoint objects: open, bind, enable, close, options. The data path is in
 * lfv_msg.c and connection management in lfv_cm.c; see lfv_ep.h.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lfv_av.h"
#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_stubs.h"
#include "lfv_svc.h"

/* ---- binding ---------------------------------------------------------------- */

int lfv_bind_cq_pair(struct lfv_cq *cq, uint64_t flags, struct lfv_cq **tx,
		     bool *tx_selective, struct lfv_cq **rx, bool *rx_selective)
{
	if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (cq->owner)
		return -FI_EINVAL; /* a peer CQ cannot hold our completions */
	if (((flags & FI_TRANSMIT) && *tx) || ((flags & FI_RECV) && *rx))
		return -FI_EINVAL; /* one CQ per direction */
	if (flags & FI_TRANSMIT) {
		*tx = cq;
		*tx_selective = flags & FI_SELECTIVE_COMPLETION;
		lfv_ref_get(&cq->ref);
	}
	if (flags & FI_RECV) {
		*rx = cq;
		*rx_selective = flags & FI_SELECTIVE_COMPLETION;
		lfv_ref_get(&cq->ref);
	}
	return 0;
}

static int lfv_ep_bind_cq(struct lfv_ep *ep, struct lfv_cq *cq, uint64_t flags)
{
	return lfv_bind_cq_pair(cq, flags, &ep->tx_cq, &ep->tx.selective,
				&ep->rx_cq, &ep->rx.selective);
}

/* The counter kinds an endpoint binds, in the order of struct
 * lfv_cntr_slots. */
static const uint64_t lfv_cntr_flags[LFV_CNTR_KINDS] = {
	FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE,
};

/* Binds cntr for the kinds in flags; a kind whose slot is NULL is not
 * supported (-FI_EBADFLAGS), one already bound is -FI_EINVAL. Shared by
 * MSG/DGRAM and RDM endpoints. */
int lfv_bind_cntr_slots(struct lfv_cntr *cntr, uint64_t flags,
			struct lfv_cntr **slot[LFV_CNTR_KINDS],
			struct lfv_domain *domain)
{
	uint64_t known = 0;
	size_t i;

	for (i = 0; i < LFV_CNTR_KINDS; i++)
		if (slot[i])
			known |= lfv_cntr_flags[i];
	if (!flags || (flags & ~known))
		return -FI_EBADFLAGS;
	for (i = 0; i < LFV_CNTR_KINDS; i++)
		if ((flags & lfv_cntr_flags[i]) && *slot[i])
			return -FI_EINVAL;
	for (i = 0; i < LFV_CNTR_KINDS; i++) {
		if (!(flags & lfv_cntr_flags[i]))
			continue;
		*slot[i] = cntr;
		lfv_ref_get(&cntr->ref);
	}
	/* Reading the counter must poll this domain's hardware CQs. */
	lfv_cntr_set_progress(cntr, (struct lfv_progress_hook){
		.fn = lfv_domain_progress, .arg = domain });
	return 0;
}

/* Drops the counters bound to the slots. */
void lfv_put_cntr_slots(struct lfv_cntr **slot[LFV_CNTR_KINDS])
{
	size_t i;

	for (i = 0; i < LFV_CNTR_KINDS; i++) {
		if (!slot[i] || !*slot[i])
			continue;
		lfv_ref_put(&(*slot[i])->ref);
		*slot[i] = NULL;
	}
}

static void lfv_ep_cntr_slots(struct lfv_ep *ep,
			      struct lfv_cntr **slot[LFV_CNTR_KINDS])
{
	slot[0] = &ep->tx.cntr;
	slot[1] = &ep->rx.cntr;
	slot[2] = &ep->cntr_read;
	slot[3] = &ep->cntr_write;
	slot[4] = &ep->cntr_rread;
	slot[5] = &ep->cntr_rwrite;
}

static int lfv_ep_bind_cntr(struct lfv_ep *ep, struct lfv_cntr *cntr,
			    uint64_t flags)
{
	struct lfv_cntr **slot[LFV_CNTR_KINDS];

	lfv_ep_cntr_slots(ep, slot);
	return lfv_bind_cntr_slots(cntr, flags, slot, ep->domain);
}

static int lfv_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	struct lfv_av *av;
	struct lfv_eq *eq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		return lfv_ep_bind_cq(ep, lfv_cq_from_fid(
			lfv_container_of(bfid, struct fid_cq, fid)), flags);
	case FI_CLASS_CNTR:
		return lfv_ep_bind_cntr(ep, lfv_cntr_from_fid(
			lfv_container_of(bfid, struct fid_cntr, fid)), flags);
	case FI_CLASS_EQ:
		if (ep->type != FI_EP_MSG || ep->eq)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		eq = lfv_eq_from_fid(lfv_container_of(bfid, struct fid_eq, fid));
		/* Its connection events are read through this EQ now. */
		ret = lfv_cm_bind_eq(ep->domain->fabric, eq, ep->id,
				     lfv_control_progress(ep->info));
		if (ret)
			return ret;
		ep->eq = eq;
		lfv_ref_get(&ep->eq->ref);
		return 0;
	case FI_CLASS_SRX_CTX:
		if (ep->type != FI_EP_MSG || ep->srx)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		ep->srx = lfv_container_of(bfid, struct lfv_srx, ep_fid.fid);
		if (ep->srx->domain != ep->domain) {
			ep->srx = NULL;
			return -FI_EINVAL;
		}
		return lfv_srx_attach(ep->srx, ep);
	case FI_CLASS_STX_CTX:
		if (ep->stx)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		ep->stx = lfv_container_of(bfid, struct lfv_stx, stx_fid.fid);
		if (ep->stx->domain != ep->domain) {
			ep->stx = NULL;
			return -FI_EINVAL;
		}
		lfv_ref_get(&ep->stx->ref);
		/* Its attributes become this endpoint's transmit defaults. */
		ep->tx.op_flags = ep->stx->attr.op_flags;
		return 0;
	case FI_CLASS_AV:
		av = lfv_av_from_fid(bfid);
		if (!av || ep->type != FI_EP_DGRAM || ep->av)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		ep->av = av;
		lfv_av_hold(av);
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* ---- enable --------------------------------------------------------------- */

/* Receive completions that may land on the receive CQ: a shared queue's
 * may all come through this endpoint's QP. */
static int lfv_ep_rx_reserve(const struct lfv_ep *ep)
{
	return (int)(ep->srx ? ep->srx->q.size : ep->rx.size);
}

static int lfv_ep_attach_queues(struct lfv_ep *ep)
{
	int ret;

	ret = lfv_vcq_get(ep->domain, ep->tx_cq, (int)ep->tx.size, &ep->tx.vcq);
	if (ret)
		return ret;
	ret = lfv_vcq_get(ep->domain, ep->rx_cq, lfv_ep_rx_reserve(ep),
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

void lfv_ep_qp_caps(const struct lfv_ep *ep, struct ibv_qp_init_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_context = (void *)ep;
	attr->send_cq = ep->tx.vcq->ibv_cq;
	attr->recv_cq = ep->rx.vcq->ibv_cq;
	attr->cap.max_send_wr = ep->tx.size;
	attr->cap.max_recv_wr = ep->rx.size;
	attr->cap.max_send_sge = (uint32_t)ep->info->tx_attr->iov_limit;
	attr->cap.max_recv_sge = (uint32_t)ep->info->rx_attr->iov_limit +
				 (ep->type == FI_EP_DGRAM ? 1 : 0);
	attr->cap.max_inline_data = (uint32_t)ep->inject_size;
	if (ep->srx) {
		attr->srq = ep->srx->srq;
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	attr->sq_sig_all = 0;
	attr->qp_type = ep->type == FI_EP_MSG ? IBV_QPT_RC : IBV_QPT_UD;
}

/* Which queues lfv_vcq_translate_fast may serve: counters, buffered or
 * shared receives and UD sources all need the general translation. The
 * bindings are final once enabled. */
static void lfv_ep_mark_fast(struct lfv_ep *ep)
{
	bool rc = ep->type == FI_EP_MSG && !ep->brx;

	ep->tx.fast = rc && !ep->tx.cntr && !ep->cntr_read &&
		      !ep->cntr_write && ep->tx.vcq->cq;
	ep->rx.fast = rc && !ep->srx && !ep->rx.cntr && ep->rx.vcq->cq;
	ep->rx_direct = rc && !ep->srx;
}

static int lfv_ep_enable(struct lfv_ep *ep)
{
	struct lfv_ud_name name;
	int ret;

	if (ep->state != LFV_EP_IDLE)
		return -FI_EOPBADSTATE;
	if (ep->type == FI_EP_MSG && !ep->eq)
		return -FI_ENOEQ;
	if (ep->type == FI_EP_DGRAM && !ep->av)
		return -FI_ENOAV;
	if (!ep->tx_cq && !ep->tx.cntr && (ep->info->caps & FI_SEND))
		LFV_INFO(FI_LOG_EP_CTRL, "no CQ or counter for sends\n");
	ret = lfv_ep_attach_queues(ep);
	if (ret)
		return ret;
	ret = ep->type == FI_EP_MSG ? lfv_ep_create_rc_qp(ep) :
				      lfv_ep_create_ud_qp(ep);
	if (ret) {
		lfv_ep_detach_queues(ep);
		return ret;
	}
	if (ep->type == FI_EP_DGRAM && !ep->sep) {
		/* Before any receive: the close path cleans up the QP. */
		lfv_dgram_name(ep, &name);
		ret = lfv_svc_listen(ep->info, &name, &ep->svc);
		if (ret)
			return ret;
	}
	if (ep->brx) {
		/* The QP (INIT already) takes the bounce buffers now; the
		 * close path cleans up after a failure. */
		ret = lfv_brx_enable(ep);
		if (ret)
			return ret;
	}
	lfv_ep_mark_fast(ep);
	ep->state = LFV_EP_ENABLED;
	if (ep->type == FI_EP_DGRAM) /* Release: as in lfv_cm.c */
		lfv_store_release32(&ep->tx_ready, 1);
	return 0;
}

/* ---- control ---------------------------------------------------------------- */

/* FI_GETOPSFLAG / FI_SETOPSFLAG on a pair of default flags. */
static int lfv_opsflag(int command, uint64_t *flags, uint64_t *tx,
		       uint64_t *rx)
{
	if (!flags)
		return -FI_EINVAL;
	/* fi_endpoint(3): exactly one of the two directions. */
	if (!(*flags & FI_TRANSMIT) == !(*flags & FI_RECV))
		return -FI_EINVAL;
	if (command == FI_GETOPSFLAG)
		*flags = (*flags & FI_RECV) ? *rx : *tx;
	else if (*flags & FI_RECV)
		*rx = *flags & ~(uint64_t)FI_RECV;
	else
		*tx = *flags & ~(uint64_t)FI_TRANSMIT;
	return 0;
}

static int lfv_alias_close(struct fid *fid)
{
	struct lfv_alias *a = lfv_container_of(fid, struct lfv_alias,
					       ep_fid.fid);

	lfv_ref_put(&a->ep->ref);
	free(a);
	return 0;
}

static int lfv_alias_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_EINVAL; /* bindings belong to the endpoint */
}

static int lfv_alias_control(struct fid *fid, int command, void *arg)
{
	struct lfv_alias *a = lfv_container_of(fid, struct lfv_alias,
					       ep_fid.fid);

	if (command == FI_GETOPSFLAG || command == FI_SETOPSFLAG)
		return lfv_opsflag(command, arg, &a->tx_op_flags,
				   &a->rx_op_flags);
	return -FI_ENOSYS;
}

struct fi_ops lfv_alias_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_alias_close,
	.bind = lfv_alias_bind,
	.control = lfv_alias_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* fi_ep_alias: the same endpoint, other default flags for the direction(s)
 * named in flags; the endpoint stays open while aliases exist. */
static int lfv_ep_alias(struct lfv_ep *ep, struct fi_alias *req)
{
	uint64_t dirs = FI_TRANSMIT | FI_RECV, ops;
	struct lfv_alias *a;

	if (!req || !req->fid)
		return -FI_EINVAL;
	if (!(req->flags & dirs))
		return -FI_EINVAL;
	ops = req->flags & ~dirs;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	a->ep = ep;
	a->tx_op_flags = (req->flags & FI_TRANSMIT) ? ops : ep->tx.op_flags;
	a->rx_op_flags = (req->flags & FI_RECV) ? ops : ep->rx.op_flags;
	a->ep_fid = ep->ep_fid;
	a->ep_fid.fid.ops = &lfv_alias_fi_ops;
	lfv_ref_get(&ep->ref);
	*req->fid = &a->ep_fid.fid;
	return 0;
}

static int lfv_ep_control(struct fid *fid, int command, void *arg)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	switch (command) {
	case FI_ENABLE:
		return lfv_ep_enable(ep);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		return lfv_opsflag(command, arg, &ep->tx.op_flags,
				   &ep->rx.op_flags);
	case FI_ALIAS:
		return lfv_ep_alias(ep, arg);
	default:
		return -FI_ENOSYS;
	}
}

static int lfv_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	switch (optname) {
	case FI_OPT_CM_DATA_SIZE:
		if (ep->type != FI_EP_MSG)
			return -FI_ENOPROTOOPT;
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = LFV_CM_DATA_SIZE;
		*optlen = sizeof(size_t);
		return 0;
	case FI_OPT_MIN_MULTI_RECV:
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = ep->min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
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

static ssize_t lfv_ep_cancel(fid_t fid, void *context)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	/* Verbs cannot take back one receive the hardware holds: the
	 * buffered path (lfv_brx.c) keeps receives where they can be
	 * cancelled, and a UD QP can flush them all and start again. An RC
	 * QP cannot without ending its connection. */
	if (ep->brx)
		return lfv_brx_cancel(ep, context);
	if (ep->type == FI_EP_DGRAM)
		return lfv_ud_cancel(ep, context);
	return -FI_ENOSYS;
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

static void lfv_ep_put_cntrs(struct lfv_ep *ep)
{
	struct lfv_cntr **slot[LFV_CNTR_KINDS];

	lfv_ep_cntr_slots(ep, slot);
	lfv_put_cntr_slots(slot);
}

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
	if (ep->tx_cq)
		lfv_ref_put(&ep->tx_cq->ref);
	if (ep->rx_cq)
		lfv_ref_put(&ep->rx_cq->ref);
	lfv_ep_put_cntrs(ep);
	if (ep->eq)
		lfv_ref_put(&ep->eq->ref);
	if (ep->av)
		lfv_av_release(ep->av);
	if (ep->srx)
		lfv_srx_detach(ep->srx, ep);
	if (ep->stx)
		lfv_ref_put(&ep->stx->ref);
	lfv_brx_free(ep);
	lfv_queue_fini(&ep->tx);
	lfv_queue_fini(&ep->rx);
	lfv_ref_put(&ep->domain->ref);
	fi_freeinfo(ep->info);
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
	lfv_vcq_drain_queue(&ep->tx);
	lfv_vcq_drain_queue(&ep->rx);
}

static int lfv_ep_close(struct fid *fid)
{
	struct lfv_ep *ep = lfv_ep_real(fid);

	if (lfv_ref_read(&ep->ref) > 1)
		return -FI_EBUSY;
	if (ep->type == FI_EP_MSG)
		lfv_cm_detach(ep);	/* no more events for this ep */
	lfv_svc_close(ep->svc);	/* nobody learns the QP any more */
	lfv_ep_flush(ep);
	if (ep->id) {
		if (ep->qp)
			rdma_destroy_qp(ep->id);
		rdma_destroy_id(ep->id);
	} else if (ep->qp) {
		ibv_destroy_qp(ep->qp);
	}
	if (ep->sep)
		lfv_sep_ctx_closed(ep);
	lfv_ep_free(ep);
	return 0;
}

static struct fi_ops lfv_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_ep_close,
	.bind = lfv_ep_bind,
	.control = lfv_ep_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_ep lfv_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_ep_cancel,
	.getopt = lfv_ep_getopt,
	.setopt = lfv_ep_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_ep_rx_size_left,
	.tx_size_left = lfv_ep_tx_size_left,
};

/* ---- open ------------------------------------------------------------------ */

static size_t lfv_pick(size_t asked, size_t dflt, size_t max)
{
	size_t v = asked ? asked : dflt;

	return v < max ? v : max;
}

static int lfv_ep_check_info(const struct lfv_domain *domain,
			     const struct fi_info *info)
{
	if (!info->ep_attr || !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_MSG &&
	    info->ep_attr->type != FI_EP_DGRAM)
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, domain->dev->name))
		return -FI_EINVAL;
	if (info->tx_attr->iov_limit > (size_t)domain->dev->attr.max_sge ||
	    info->rx_attr->iov_limit + (info->ep_attr->type == FI_EP_DGRAM) >
	    (size_t)domain->dev->attr.max_sge ||
	    info->tx_attr->size > (size_t)domain->dev->attr.max_qp_wr ||
	    info->rx_attr->size > (size_t)domain->dev->attr.max_qp_wr ||
	    info->tx_attr->inject_size > domain->dev->max_inline)
		return -FI_EINVAL;
	return 0;
}

static int lfv_ep_init_queues(struct lfv_ep *ep)
{
	struct fi_info *info = ep->info;
	size_t tx = lfv_pick(info->tx_attr->size, lfv_params.tx_size,
			     (size_t)ep->domain->dev->attr.max_qp_wr);
	size_t rx = lfv_pick(info->rx_attr->size, lfv_params.rx_size,
			     (size_t)ep->domain->dev->attr.max_qp_wr);
	int ret;

	info->tx_attr->size = tx;
	info->rx_attr->size = rx;
	if (!info->tx_attr->iov_limit)
		info->tx_attr->iov_limit = 1;
	if (!info->rx_attr->iov_limit)
		info->rx_attr->iov_limit = 1;
	ret = lfv_queue_init(&ep->tx, ep, true, (uint32_t)tx,
			     ep->domain->locked);
	if (ret)
		return ret;
	ret = lfv_queue_init(&ep->rx, ep, false, (uint32_t)rx,
			     ep->domain->locked);
	if (ret) {
		lfv_queue_fini(&ep->tx);
		return ret;
	}
	ret = lfv_queue_enable_more(&ep->tx,
				    (uint32_t)info->tx_attr->iov_limit);
	if (ret) {
		lfv_queue_fini(&ep->rx);
		lfv_queue_fini(&ep->tx);
	}
	ep->tx.op_flags = info->tx_attr->op_flags;
	ep->rx.op_flags = info->rx_attr->op_flags;
	return ret;
}

static void lfv_ep_init_fids(struct lfv_ep *ep, void *context)
{
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &lfv_ep_fi_ops;
	ep->ep_fid.ops = &lfv_ep_ops;
	ep->ep_fid.cm = ep->type == FI_EP_MSG ? &lfv_cm_ops : &lfv_dgram_cm_ops;
	ep->ep_fid.msg = &lfv_msg_ops;
	ep->ep_fid.rma = ep->type == FI_EP_MSG ? &lfv_rma_ops : &lfv_no_rma_ops;
	ep->ep_fid.tagged = &lfv_no_tagged_ops;
	ep->ep_fid.atomic = ep->type == FI_EP_MSG ? &lfv_atomic_ops :
						    &lfv_no_atomic_ops;
	ep->ep_fid.collective = &lfv_no_collective_ops;
}

int lfv_ep_open(struct lfv_domain *domain, const struct fi_info *info,
		void *context, struct lfv_ep **out)
{
	struct lfv_ep *ep;
	int ret;

	ret = lfv_ep_check_info(domain, info);
	if (ret)
		return ret;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto free_ep;
	}
	ep->domain = domain;
	ep->type = info->ep_attr->type;
	ep->inject_size = info->tx_attr->inject_size;
	atomic_init(&ep->ref, 1);
	atomic_init(&ep->tx_ready, 0);
	ret = lfv_ep_init_queues(ep);
	if (ret)
		goto free_info;
	lfv_ep_init_fids(ep, context);
	ep->min_multi_recv = LFV_MIN_MULTI_RECV;
	if (lfv_brx_wanted(info)) {
		ret = lfv_brx_init(ep);
		if (ret)
			goto fini_queues;
	}
	if (ep->type == FI_EP_MSG) {
		ret = lfv_cm_ep_open(ep, info);
		if (ret)
			goto free_brx;
	}
	lfv_ref_get(&domain->ref);
	*out = ep;
	return 0;

free_brx:
	lfv_brx_free(ep);
fini_queues:
	lfv_queue_fini(&ep->rx);
	lfv_queue_fini(&ep->tx);
free_info:
	fi_freeinfo(ep->info);
free_ep:
	free(ep);
	return ret;
}

/* One context each way; more make a scalable endpoint (lfv_sep.c). */
static bool lfv_ep_one_context(const struct fi_ep_attr *attr)
{
	return (attr->tx_ctx_cnt <= 1 || attr->tx_ctx_cnt == FI_SHARED_CONTEXT) &&
	       (attr->rx_ctx_cnt <= 1 || attr->rx_ctx_cnt == FI_SHARED_CONTEXT);
}

int lfv_endpoint(struct fid_domain *domain_fid, struct fi_info *info,
		 struct fid_ep **ep_fid, void *context)
{
	struct lfv_ep *ep;
	int ret;

	if (!domain_fid || !info || !ep_fid)
		return -FI_EINVAL;
	if (info->ep_attr && !lfv_ep_one_context(info->ep_attr))
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type == FI_EP_RDM)
		return lfv_rdm_endpoint(lfv_container_of(domain_fid,
				struct lfv_domain, domain_fid), info, ep_fid,
				context);
	ret = lfv_ep_open(lfv_container_of(domain_fid, struct lfv_domain,
					   domain_fid), info, context, &ep);
	if (ret)
		return ret;
	*ep_fid = &ep->ep_fid;
	return 0;
}

int lfv_endpoint2(struct fid_domain *domain, struct fi_info *info,
		  struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return lfv_endpoint(domain, info, ep, context);
}
