/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The verbs CQs behind lfverbs CQs, and the queues they serve (lfv_vcq.c);
 * the builders every translation of a work completion shares (the fast one
 * in lfv_vcq.c, the endpoint types' in lfv_msg_comp.c).
 */
#ifndef LFV_VCQ_H
#define LFV_VCQ_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "lfv_queue.h"

/*
 * The one translation of a successful work completion into a CQ entry,
 * for the general and the fast path: what op asked for (its context,
 * flags, buffer) and what wc reports (the bytes received, immediate
 * data). hdr: bytes a receive lands behind (a UD GRH), not the message's.
 */
static inline __attribute__((always_inline)) void
lfv_vcq_comp(bool is_tx, uint32_t hdr, const struct lfv_op *op,
	     const struct ibv_wc *wc, struct lfv_cq_comp *comp)
{
	*comp = (struct lfv_cq_comp){
		.context = op->context,
		.flags = op->flags & ~LFV_OP_FLAGS_INTERNAL,
		.src = FI_ADDR_NOTAVAIL,
	};
	if (is_tx) {
		comp->len = op->len;
		return;
	}
	comp->len = wc->byte_len > hdr ? wc->byte_len - hdr : 0;
	comp->buf = op->buf;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* A remote write with data consumed this receive: report the
		 * write, with its length (byte_len: fi_cq(3) of 2.x); the
		 * buffer holds nothing. */
		comp->flags = FI_RMA | FI_REMOTE_WRITE;
		comp->buf = NULL;
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		comp->flags |= FI_REMOTE_CQ_DATA;
		comp->data = be32toh(wc->imm_data);
	}
}

/* Whether a completion goes to the CQ, for both paths: what the poster
 * asked (LFV_OP_REPORT); a shared receive learns only now which endpoint
 * it landed on, and so whether that one's receive queue (rx; NULL: it has
 * closed) wants it (FI_SELECTIVE_COMPLETION). */
static inline bool lfv_vcq_wanted(const struct lfv_queue *rx, bool is_tx,
				  uint64_t flags)
{
	if (flags & LFV_OP_REPORT)
		return true;
	return !is_tx && (flags & LFV_OP_SHARED) && rx && !rx->selective;
}

/* The retirement of the request at head (queues that complete in order).
 * Release: pairs with the acquire in lfv_queue_next; the slot, read, is
 * free for posters now. */
static inline void lfv_vcq_retire_head(struct lfv_queue *q, uint64_t head)
{
	lfv_store_release64(&q->head, head + 1);
}

/* Hands comp to the sink's reader, or to the CQ's ring (poll lock held). */
void lfv_vcq_emit(struct lfv_vcq *vcq, struct lfv_vcq_sink *sink,
		  const struct lfv_cq_comp *comp);

int lfv_vcq_get(struct lfv_domain *domain, struct lfv_cq *cq, int size,
		struct lfv_vcq **vcq);
void lfv_vcq_put(struct lfv_vcq *vcq, int size);
void lfv_vcq_progress(struct lfv_vcq *vcq);
/* An endpoint's two verbs CQs (either NULL, or both the same one). */
void lfv_vcq_progress_pair(struct lfv_vcq *tx, struct lfv_vcq *rx);
void lfv_domain_progress(void *domain);
/* The progress thread's work on one vcq: take the channel's events,
 * re-arm, move completions into the ring. */
void lfv_vcq_auto_event(struct lfv_vcq *vcq);
/* The libfabric error (positive FI_E*) of a failed work completion. */
int lfv_wc_errno(enum ibv_wc_status status);
/* Polls q's CQ until q has no requests left or the deadline (ns) passes;
 * true when it emptied. */
bool lfv_vcq_wait_empty(struct lfv_queue *q, int64_t deadline);
/* Sets or clears q->cancelling (and resets cancel_first) under its poll
 * lock. */
void lfv_vcq_set_cancelling(struct lfv_queue *q, bool on);
/* Queues (struct lfv_queue). */
int lfv_queue_init(struct lfv_queue *q, void *owner, bool is_tx,
		   uint32_t size, bool locked);
void lfv_queue_fini(struct lfv_queue *q);
/* Room to hold FI_MORE requests until the chain is posted. */
int lfv_queue_enable_more(struct lfv_queue *q, uint32_t iov_max);

#endif /* LFV_VCQ_H */
