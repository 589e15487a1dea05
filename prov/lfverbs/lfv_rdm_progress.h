/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM endpoints' completions and progress (lfv_rdm_progress.c): what
 * lfv_rdm.c installs when it enables an endpoint and turns off when it
 * closes one.
 */
#ifndef LFV_RDM_PROGRESS_H
#define LFV_RDM_PROGRESS_H

#include "lfv_rdm_ep.h"

/* The handler of the endpoint's work queue (ep->wq): every completion of
 * its requests. Caller holds the vcq->lock of the CQ it came from. */
void lfv_rdm_completion(struct lfv_queue *q, struct lfv_op *op,
			const struct ibv_wc *wc);
/* Turns the completion handlers on or off (rx_live, tx_live). */
void lfv_rdm_set_live(struct lfv_rdm_ep *ep, bool live);
/* CQ reads of cq (NULL: none bound) drive the endpoints on vcq. */
void lfv_rdm_hook_cq(struct lfv_cq *cq, struct lfv_vcq *vcq);
/* The domain's progress hook (arg: the domain): see the .c. */
void lfv_rdm_domain_progress(void *domain);

#endif /* LFV_RDM_PROGRESS_H */
