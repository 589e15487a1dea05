/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_cancel of a receive on a DGRAM endpoint. Verbs has no call that takes
 * one receive back from a queue pair, but a UD QP may pass through the
 * error state and come back with the same QP number (so its address does
 * not change). Cancelling therefore:
 *
 *  1. holds both post locks, so nothing is posted meanwhile;
 *  2. marks both queues cancelling: the pollers then complete flushed
 *     sends as sent and take flushed receives off the queue unreported
 *     (lfv_vcq.c), remembering where the flushed ones start;
 *  3. moves the QP to the error state and polls until both queues are
 *     empty (bounded);
 *  4. takes the QP back through RESET to RTS;
 *  5. posts the flushed receives again in their order, all but the one
 *     cancelled, which completes with FI_ECANCELED in the error queue.
 *
 * A receive that completed before the flush keeps its completion and the
 * call returns 0 with nothing cancelled, as fi_endpoint(3) says. Datagrams
 * arriving during the few microseconds the QP is not ready are dropped,
 * which an unreliable endpoint allows.
 *
 * Preconditions: the endpoint is enabled; no FI_MORE chain is waiting
 * (-FI_EAGAIN until it is posted).
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_queue.h"
#include "lfv_sge.h"
#include "lfv_ud.h"
#include "lfv_vcq.h"
#include "lfv_wait.h"

/* How long the flush may take before cancel gives up on the QP. */
#define LFV_CANCEL_TIMEOUT_NS (2 * 1000 * 1000 * 1000LL)

/* A flushed receive, copied out of its slot before slots are reused. */
struct lfv_ud_saved {
	struct lfv_op op;
	struct ibv_sge sge[LFV_MAX_SGE + 1];
	int nsge;
};

/* The oldest outstanding receive with this context: its position. */
static bool lfv_ud_find(struct lfv_queue *q, void *context, uint64_t *pos)
{
	/* Acquire: pairs with the poller's release of head. */
	uint64_t i = lfv_load_acquire64(&q->head);

	for (; i != q->tail; i++) {
		if (q->ops[i & q->mask].context == context) {
			*pos = i;
			return true;
		}
	}
	return false;
}

static int lfv_ud_flush_qp(struct lfv_ep *ep)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int64_t deadline = lfv_now_ns() + LFV_CANCEL_TIMEOUT_NS;
	int ret;

	ret = lfv_verbs_ret(ibv_modify_qp(ep->qp, &attr, IBV_QP_STATE));
	if (ret)
		return ret;
	if (!lfv_vcq_wait_empty(&ep->rx, deadline) ||
	    !lfv_vcq_wait_empty(&ep->tx, deadline)) {
		LFV_WARN(FI_LOG_EP_DATA, "cancel: the flush never ended\n");
		return -FI_ETIMEDOUT;
	}
	attr.qp_state = IBV_QPS_RESET;
	ret = lfv_verbs_ret(ibv_modify_qp(ep->qp, &attr, IBV_QP_STATE));
	if (ret)
		return ret;
	return lfv_ud_qp_ready(ep->qp, ep->base.domain->dev->port_num);
}

/* Copies the receives in [first, end) out of their slots. */
static struct lfv_ud_saved *lfv_ud_save(struct lfv_ep *ep, uint64_t first,
					uint64_t end)
{
	struct lfv_queue *q = &ep->rx;
	struct lfv_ud_saved *saved;
	uint64_t i;
	size_t slot;

	saved = calloc((size_t)(end - first) + 1, sizeof(*saved));
	if (!saved)
		return NULL;
	for (i = first; i < end; i++) {
		slot = (size_t)(i & q->mask);
		saved[i - first].op = q->ops[slot];
		saved[i - first].nsge = ep->ud_nsge[slot];
		memcpy(saved[i - first].sge,
		       &ep->ud_sge[slot * ep->ud_sge_stride],
		       (size_t)ep->ud_nsge[slot] * sizeof(struct ibv_sge));
	}
	return saved;
}

static void lfv_ud_report_cancel(struct lfv_ep *ep, const struct lfv_op *op)
{
	struct fi_cq_err_entry err = {
		.op_context = op->context,
		.flags = op->flags & ~LFV_OP_FLAGS_INTERNAL,
		.buf = op->buf,
		.err = FI_ECANCELED,
		.prov_errno = -FI_ECANCELED,
	};

	if (ep->rx.vcq->cq && lfv_cq_write_err(ep->rx.vcq->cq, &err))
		LFV_WARN(FI_LOG_CQ, "lost an error completion: no memory\n");
}

/* Posts a saved receive again into the next slot (the queue is empty, so
 * there is room); its GRH slot follows the new op slot. */
static int lfv_ud_repost(struct lfv_ep *ep, const struct lfv_ud_saved *s)
{
	struct lfv_queue *q = &ep->rx;
	struct lfv_op *op = &q->ops[q->tail & q->mask];
	size_t slot = (size_t)(op - q->ops);
	struct ibv_sge *sge = &ep->ud_sge[slot * ep->ud_sge_stride];
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)op, .sg_list = sge,
				  .num_sge = s->nsge }, *bad;
	int ret;

	*op = s->op;
	memcpy(sge, s->sge, (size_t)s->nsge * sizeof(*sge));
	sge[0].addr = (uintptr_t)(ep->grh + slot * LFV_GRH_SIZE);
	ep->ud_nsge[slot] = (uint8_t)s->nsge;
	ret = ibv_post_recv(ep->qp, &wr, &bad);
	if (ret)
		return lfv_post_ret(ret);
	q->tail++;
	return 0;
}

/* Step 5: everything flushed but the cancelled one goes back; one that
 * cannot is reported cancelled rather than lost. Without memory for the
 * copies (the slots are about to be reused), all of them are. */
static void lfv_ud_restore(struct lfv_ep *ep, uint64_t first, uint64_t end,
			   uint64_t cancelled, bool qp_ok)
{
	struct lfv_ud_saved *saved = lfv_ud_save(ep, first, end);
	struct lfv_queue *q = &ep->rx;
	uint64_t i;

	if (!saved) {
		LFV_WARN(FI_LOG_EP_DATA, "cancel: no memory, %lu receives "
			 "cancelled\n", (unsigned long)(end - first));
		for (i = first; i < end; i++)
			lfv_ud_report_cancel(ep, &q->ops[i & q->mask]);
		return;
	}
	for (i = 0; i < end - first; i++) {
		if (first + i == cancelled || !qp_ok ||
		    lfv_ud_repost(ep, &saved[i]))
			lfv_ud_report_cancel(ep, &saved[i].op);
	}
	free(saved);
}

ssize_t lfv_ud_cancel(struct lfv_ep *ep, void *context)
{
	struct lfv_queue *rx = &ep->rx, *tx = &ep->tx;
	uint64_t pos, first, end;
	ssize_t ret;
	int flushed;

	if (!ep->qp || !context)
		return -FI_ENOENT; /* nothing posted, or nothing to name it */
	lfv_spin_lock(&rx->lock);
	lfv_spin_lock(&tx->lock);
	if (tx->more_first) {
		ret = -FI_EAGAIN; /* post the FI_MORE chain first */
		goto unlock;
	}
	if (!lfv_ud_find(rx, context, &pos)) {
		ret = -FI_ENOENT;
		goto unlock;
	}
	lfv_vcq_set_cancelling(rx, true);
	lfv_vcq_set_cancelling(tx, true);
	flushed = lfv_ud_flush_qp(ep);
	/* The flushed receives are [cancel_first, head): the acquire pairs
	 * with the release of head by the last poll, which wrote
	 * cancel_first before it. After a failed flush, receives past head
	 * are still the device's and stay out of this. */
	end = lfv_load_acquire64(&rx->head);
	first = rx->cancel_first;
	lfv_vcq_set_cancelling(tx, false);
	lfv_vcq_set_cancelling(rx, false);
	ret = flushed;
	if (first != UINT64_MAX && first <= pos && pos < end)
		lfv_ud_restore(ep, first, end, pos, !flushed);
	else if (first != UINT64_MAX)
		lfv_ud_restore(ep, first, end, UINT64_MAX, !flushed);
	/* else: it completed before the flush, with its own completion */
unlock:
	lfv_spin_unlock(&tx->lock);
	lfv_spin_unlock(&rx->lock);
	return ret;
}
