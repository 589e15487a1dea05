/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Posting on MSG and DGRAM endpoints (lfv_msg.c), and their RMA on RC
 * (lfv_msg_rma.c).
 */
#ifndef LFV_MSG_H
#define LFV_MSG_H

#include <stdbool.h>

#include "lfv_ep.h"
#include "lfv_rma.h"



/* Takes a send-queue op and posts wr, whose opcode, sge and remote fields
 * are set; -FI_EAGAIN when the queue is full. */
ssize_t lfv_tx_post(struct lfv_ep *ep, struct ibv_send_wr *wr,
		    const struct lfv_tx_req *r, size_t len);
/* The same for wr and a provider's note (LFV_OP_SILENT) right before or
 * after it on the QP: both are posted, or neither. */
ssize_t lfv_tx_post_noted(struct lfv_ep *ep, struct ibv_send_wr *wr,
			  const struct lfv_tx_req *r, size_t len,
			  struct ibv_send_wr *note, bool note_first);



/* MSG's and DGRAM's fi_ops_msg, and a scalable endpoint's transmit and
 * receive contexts' (DGRAM). */
extern struct fi_ops_msg lfv_msg_ops, lfv_dgram_msg_ops;
extern struct fi_ops_msg lfv_dgram_tx_ops, lfv_dgram_rx_ops;

#endif /* LFV_MSG_H */
