/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The verbs CQs behind lfverbs CQs, and the queues they serve (lfv_vcq.c).
 */
#ifndef LFV_VCQ_H
#define LFV_VCQ_H

#include <stdbool.h>
#include <stdint.h>

#include "lfv_queue.h"

int lfv_vcq_get(struct lfv_domain *domain, struct lfv_cq *cq, int size,
		struct lfv_vcq **vcq);
void lfv_vcq_put(struct lfv_vcq *vcq, int size);
void lfv_vcq_progress(struct lfv_vcq *vcq);
void lfv_domain_progress(void *domain);
/* The progress thread's work on one vcq: take the channel's events,
 * re-arm, move completions into the ring. */
void lfv_vcq_auto_event(struct lfv_vcq *vcq);
/* The libfabric error (positive FI_E*) of a failed work completion. */
int lfv_wc_errno(enum ibv_wc_status status);
/* Waits (bounded) until a queue being closed has no requests left. */
void lfv_vcq_drain_queue(struct lfv_queue *q);
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
