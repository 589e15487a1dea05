/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The completions of MSG and DGRAM endpoints' queues that lfv_vcq.c's
 * fast translation leaves (the queues' translate): errors, counters,
 * shared (lfv_msg_srq.c) and buffered (lfv_brx.c) receives, UD receives
 * and their sources, sends with unsignaled ones before them, and the
 * flush of a closing endpoint's queues. What differs between MSG and DGRAM
 * comes in as data (lfv_msg_translate here, lfv_dgram_translate in
 * lfv_dgram.c).
 */
#include "lfv_brx.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_log.h"
#include "lfv_msg_comp.h"
#include "lfv_msg_srq.h"
#include "lfv_queue.h"
#include "lfv_vcq.h"

/* How long closing an endpoint waits for the flush of its requests. */
#define LFV_DRAIN_TIMEOUT_NS (2 * 1000 * 1000 * 1000LL)

/* flags: the completion's (FI_SEND, FI_READ, FI_REMOTE_WRITE, ...). */
static void lfv_ep_count(const struct lfv_ep *ep, bool is_tx, uint64_t flags,
			 bool ok)
{
	struct lfv_cntr *cntr;

	if (!ep || (flags & LFV_OP_SILENT))
		return; /* a shared receive whose endpoint has closed, or a
			 * note of the provider's */
	cntr = is_tx ? ep->tx.cntr : ep->rx.cntr;
	if (flags & FI_READ)
		cntr = ep->base.cntr[LFV_CNTR_READ];
	else if (flags & FI_WRITE)
		cntr = ep->base.cntr[LFV_CNTR_WRITE];
	else if (flags & FI_REMOTE_WRITE)
		cntr = ep->base.cntr[LFV_CNTR_RWRITE];
	lfv_cntr_count(cntr, ok);
}

static void lfv_ep_comp_error(struct lfv_vcq *vcq, const struct lfv_op *op,
			      const struct ibv_wc *wc)
{
	struct fi_cq_err_entry err = {
		.op_context = op->context,
		.flags = op->flags & ~LFV_OP_FLAGS_INTERNAL,
		.buf = op->buf,
		.err = lfv_wc_errno(wc->status),
		.prov_errno = (int)wc->status,
	};

	if (!vcq->cq)
		return;
	if (lfv_cq_write_err(vcq->cq, &err))
		LFV_WARN(FI_LOG_CQ, "lost an error completion: no memory\n");
}

/* Retires the send requests up to op: a signaled completion stands for
 * the unsignaled ones posted before it (send queues complete in order). */
static void lfv_ep_retire_tx(struct lfv_queue *q, const struct lfv_op *op)
{
	/* Relaxed: head is written only under the poll lock we hold. */
	uint64_t head = lfv_load_relaxed64(&q->head);
	uint64_t last = head + (((uint64_t)(op - q->ops) - head) & q->mask);
	uint64_t i;

	for (i = head; i < last; i++)
		lfv_ep_count(q->owner, true, q->ops[i & q->mask].flags, true);
	lfv_vcq_retire_head(q, last);
}

static void lfv_ep_buffered(struct lfv_vcq *vcq, struct lfv_ep *ep,
			    const struct lfv_op *op, const struct ibv_wc *wc,
			    struct lfv_vcq_sink *sink)
{
	struct lfv_cq_comp comp[2];
	size_t n, i;

	n = lfv_brx_arrived(ep, op, wc, comp);
	for (i = 0; i < n && vcq->cq; i++)
		lfv_vcq_emit(vcq, sink, &comp[i]);
}

/*
 * A request flushed by fi_cancel's trip through the error state (UD only,
 * lfv_ud_cancel.c). A send was handed to the device or not; on an
 * unreliable endpoint both look like a datagram the network lost, so it
 * completes as sent. A receive leaves the queue unreported, to be posted
 * again.
 */
static void lfv_ep_cancel_flushed(struct lfv_vcq *vcq, struct lfv_queue *q,
				  const struct ibv_wc *wc,
				  struct lfv_vcq_sink *sink)
{
	struct ibv_wc sent;
	/* Relaxed: head is written only under the poll lock we hold. */
	uint64_t head = lfv_load_relaxed64(&q->head);

	if (q->is_tx) {
		sent = *wc;
		sent.status = IBV_WC_SUCCESS;
		sent.opcode = IBV_WC_SEND;
		q->translate(vcq, &sent, sink);
		return;
	}
	if (q->cancel_first == UINT64_MAX)
		q->cancel_first = head;
	/* The canceller holds the post lock: nobody reuses the slot. */
	lfv_vcq_retire_head(q, head);
}

/* A receive into a bounce buffer: the message goes to the software
 * queue (lfv_brx.c), not straight to the CQ. */
static void lfv_ep_bounced(struct lfv_vcq *vcq, struct lfv_queue *q,
			   struct lfv_ep *ep, const struct lfv_op *op,
			   const struct ibv_wc *wc, struct lfv_vcq_sink *sink)
{
	/* Relaxed: head is written only under the poll lock we hold. */
	lfv_vcq_retire_head(q, lfv_load_relaxed64(&q->head));
	if (q->closing)
		return;
	if (wc->status == IBV_WC_SUCCESS)
		lfv_ep_buffered(vcq, ep, op, wc, sink);
	else	/* the QP failed: waiting receives end too */
		lfv_brx_flush(ep);
}

void lfv_ep_translate(struct lfv_vcq *vcq, const struct ibv_wc *wc,
		      struct lfv_vcq_sink *sink, uint32_t hdr,
		      lfv_source_fn *source)
{
	struct lfv_op *slot = (struct lfv_op *)(uintptr_t)wc->wr_id;
	struct lfv_queue *q = slot->q;
	/* A copy: once retired, the slot may be reused by a poster. */
	struct lfv_op op = *slot;
	struct lfv_ep *ep = q->shared ? lfv_msg_srq_find_ep(q->owner, wc->qp_num) :
					q->owner;
	bool ok = wc->status == IBV_WC_SUCCESS;
	struct lfv_cq_comp comp;

	if (!ok && q->cancelling && wc->status == IBV_WC_WR_FLUSH_ERR) {
		lfv_ep_cancel_flushed(vcq, q, wc, sink);
		return;
	}
	if (!q->is_tx && ep && ep->brx && !q->shared) {
		lfv_ep_bounced(vcq, q, ep, &op, wc, sink);
		return;
	}
	lfv_vcq_comp(q->is_tx, hdr, &op, wc, &comp);
	if (q->is_tx) {
		lfv_ep_retire_tx(q, slot);
		if (op.flags & LFV_OP_SILENT)
			return;	/* the provider's own: a note, a marker */
	} else {
		if (source && ok && vcq->cq &&
		    (vcq->cq->store_src || sink->src))
			comp.src = source(q, slot, wc);
		if (q->shared)
			lfv_msg_srq_retire(q->owner, slot);
		else	/* In order: head is this op. Relaxed: head is
			 * written only under the poll lock we hold. */
			lfv_vcq_retire_head(q, lfv_load_relaxed64(&q->head));
	}
	lfv_ep_count(ep, q->is_tx, ok ? comp.flags : op.flags, ok);
	if (q->closing)
		return; /* flushed while its endpoint closes: nobody wants it */
	if (!ok) {
		lfv_ep_comp_error(vcq, &op, wc);
		return;
	}
	if (lfv_vcq_wanted(ep ? &ep->rx : NULL, q->is_tx, op.flags) && vcq->cq)
		lfv_vcq_emit(vcq, sink, &comp);
}

void lfv_msg_translate(struct lfv_vcq *vcq, const struct ibv_wc *wc,
		       struct lfv_vcq_sink *sink)
{
	lfv_ep_translate(vcq, wc, sink, 0, NULL);
}

/*
 * Sends posted unsignaled after the last signaled one leave no completion
 * when they succeed, and the error state flushes only what the QP still
 * holds: their slots would wait for a completion that never comes. One
 * signaled request posted now (QP in the error state: flushed at once, and
 * after every earlier one, a send queue completing in order) retires them.
 * Returns the AH a UD marker needed, to destroy once the queue is drained.
 */
static struct ibv_ah *lfv_ep_post_marker(struct lfv_queue *q)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct lfv_ep *ep = q->owner;
	struct ibv_ah *ah = NULL;
	struct lfv_op *op;

	if (!q->is_tx || !ep || !ep->qp || !q->unsignaled)
		return NULL;
	if (ep->kind->marker_ah) {	/* unconnected: an address */
		ah = ep->kind->marker_ah(ep, &wr);
		if (!ah)
			return NULL;
	}
	lfv_spin_lock(&q->lock);
	op = lfv_queue_next(q);
	if (op) {	/* full: a signaled request is among them */
		*op = (struct lfv_op){ .flags = LFV_OP_SILENT, .q = q };
		wr.wr_id = (uintptr_t)op;
		if (!ibv_post_send(ep->qp, &wr, &bad)) {
			q->tail++;
			q->unsignaled = 0;
		}
	}
	lfv_spin_unlock(&q->lock);
	return ah;
}

void lfv_ep_drain_queue(struct lfv_queue *q)
{
	int64_t deadline = lfv_now_ns() + LFV_DRAIN_TIMEOUT_NS;
	struct ibv_ah *marker_ah;

	if (!q->vcq)
		return;
	lfv_spin_lock(&q->vcq->lock);
	q->closing = true;
	q->fast = false;
	lfv_spin_unlock(&q->vcq->lock);
	marker_ah = lfv_ep_post_marker(q);
	if (!lfv_vcq_wait_empty(q, deadline))
		LFV_WARN(FI_LOG_EP_CTRL, "%lu requests never completed\n",
			 (unsigned long)(q->tail - lfv_load_acquire64(&q->head)));
	if (marker_ah)
		ibv_destroy_ah(marker_ah);
}
