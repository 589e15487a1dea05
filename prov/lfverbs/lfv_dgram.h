/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What DGRAM endpoints do their own way: names, queue pairs, and the
 * hooks of their struct lfv_ep_kind (lfv_dgram.c).
 */
#ifndef LFV_DGRAM_H
#define LFV_DGRAM_H

#include "lfv_ep.h"

extern struct fi_ops_cm lfv_dgram_cm_ops;
/* A DGRAM endpoint's QP name (its QP exists: enabled). */
void lfv_dgram_name(const struct lfv_ep *ep, struct lfv_ud_name *name);
int lfv_ep_create_ud_qp(struct lfv_ep *ep);
/* struct lfv_ep_kind's hooks (see lfv_ep.h). */
int lfv_dgram_tx_dest(struct lfv_ep *ep, fi_addr_t dest, size_t len,
		      struct ibv_send_wr *wr);
void lfv_dgram_rx_hdr(struct lfv_ep *ep, const struct lfv_op *op,
		      struct ibv_recv_wr *wr);
struct ibv_ah *lfv_dgram_marker_ah(struct lfv_ep *ep, struct ibv_send_wr *wr);
lfv_translate_fn lfv_dgram_translate;

#endif /* LFV_DGRAM_H */
