/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Posting on MSG and DGRAM endpoints (lfv_msg.c), and their RMA on RC
 * (lfv_rma.c).
 */
#ifndef LFV_MSG_H
#define LFV_MSG_H

#include <stdbool.h>

#include "lfv_ep.h"
#include "lfv_rma.h"

#define LFV_MAX_SGE 32


/* Fills sge from an iov (registered memory unless inject), leaving out
 * empty segments: the number of SGEs, or -FI_EINVAL; total bytes in len. */
int lfv_fill_sge(struct ibv_sge *sge, const struct iovec *iov, void **desc,
		 size_t count, bool inject, size_t *len);
/* The same for a receive, where a segment with no base address has no
 * memory for bytes to land in: it is left out like an empty one (and so
 * needs no descriptor). A zero-byte message still completes into such a
 * receive; a longer one completes in error. */
int lfv_fill_recv_sge(struct ibv_sge *sge, const struct iovec *iov,
		      void **desc, size_t count, size_t *len);
/* Takes a send-queue op and posts wr, whose opcode, sge and remote fields
 * are set; -FI_EAGAIN when the queue is full. */
ssize_t lfv_tx_post(struct lfv_ep *ep, struct ibv_send_wr *wr,
		    const struct lfv_tx_req *r, size_t len);
/* The same for wr and a provider's note (LFV_OP_SILENT) right before or
 * after it on the QP: both are posted, or neither. */
ssize_t lfv_tx_post_noted(struct lfv_ep *ep, struct ibv_send_wr *wr,
			  const struct lfv_tx_req *r, size_t len,
			  struct ibv_send_wr *note, bool note_first);
/* Posts it on a MSG endpoint's RC QP (lfv_msg_type's rma_post). */
ssize_t lfv_msg_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q);

/* FI_RMA_EVENT on MSG endpoints (lfv_rma.c): a remote write with immediate
 * data landed on a buffered endpoint; fills comp (at most one) and
 * returns how many completions to report. */
size_t lfv_msg_rma_arrived(struct lfv_ep *ep, const struct ibv_wc *wc,
			   struct lfv_cq_comp *comp);


extern struct fi_ops_msg lfv_msg_tx_ops;
extern struct fi_ops_msg lfv_msg_rx_ops;
extern struct fi_ops_msg lfv_msg_ops;

#endif /* LFV_MSG_H */
