/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The completions of MSG and DGRAM endpoints' queues beyond lfv_vcq.c's
 * fast translation, and the flush of a closing endpoint's queues
 * (lfv_msg_comp.c).
 */
#ifndef LFV_MSG_COMP_H
#define LFV_MSG_COMP_H

#include <stdint.h>

#include "lfv_queue.h"

/* The sender of a receive, from what arrived in front of it. */
typedef fi_addr_t lfv_source_fn(const struct lfv_queue *q,
				const struct lfv_op *op,
				const struct ibv_wc *wc);

/* Every completion the fast path leaves, for an endpoint type whose
 * receives land behind hdr bytes and name their sender through source
 * (NULL: connected, FI_ADDR_NOTAVAIL). Poll lock held. */
void lfv_ep_translate(struct lfv_vcq *vcq, const struct ibv_wc *wc,
		      struct lfv_vcq_sink *sink, uint32_t hdr,
		      lfv_source_fn *source);
/* A MSG queue's translate (and an MSG SRQ's). */
lfv_translate_fn lfv_msg_translate;
/* Waits (bounded) until a queue being closed has no requests left. */
void lfv_ep_drain_queue(struct lfv_queue *q);

#endif /* LFV_MSG_COMP_H */
