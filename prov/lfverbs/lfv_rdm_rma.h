/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma and fi_atomic on RDM endpoints (lfv_rdm_rma.c).
 */
#ifndef LFV_RDM_RMA_H
#define LFV_RDM_RMA_H

#include "lfv_rdm_ep.h"
#include "lfv_rma.h"

/* lfv_rdm_type's rma_post: an fi_rma / fi_atomic on an RDM endpoint. */
ssize_t lfv_rdm_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q);
int lfv_rdm_rma_post_wr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			struct lfv_rdm_req *r);
void lfv_rdm_rma_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			    const struct ibv_wc *wc);
void lfv_rdm_push_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct ibv_wc *wc);
void lfv_rdm_rma_release(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
bool lfv_rdm_rma_abort(struct lfv_rdm_req *r, int err);
void lfv_rdm_push_fill(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
		       const struct lfv_rdm_cts *cts);
void lfv_rdm_on_wdata(struct lfv_rdm_ep *ep, const struct lfv_rdm_hdr *h,
		      fi_addr_t src);
void lfv_rdm_on_event(struct lfv_rdm_ep *ep, const struct lfv_rdm_hdr *h,
		      const uint8_t *payload, fi_addr_t src);

#endif /* LFV_RDM_RMA_H */
