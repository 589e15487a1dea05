/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma and fi_atomic on MSG endpoints, and FI_RMA_EVENT notes at their
 * targets (lfv_msg_rma.c).
 */
#ifndef LFV_MSG_RMA_H
#define LFV_MSG_RMA_H

#include <stddef.h>

#include <infiniband/verbs.h>

#include "lfv_cq.h"
#include "lfv_rma.h"

struct lfv_ep;

/* Posts a decoded fi_rma / fi_atomic on a MSG endpoint's RC QP. */
ssize_t lfv_msg_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q);
/* FI_RMA_EVENT at a MSG endpoint: a remote write with immediate
 * data landed on a buffered endpoint; fills comp (at most one) and
 * returns how many completions to report. */
size_t lfv_msg_rma_arrived(struct lfv_ep *ep, const struct ibv_wc *wc,
			   struct lfv_cq_comp *comp);

#endif /* LFV_MSG_RMA_H */
