/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Names and queue pairs of DGRAM endpoints (lfv_dgram.c).
 */
#ifndef LFV_DGRAM_H
#define LFV_DGRAM_H

#include "lfv_ep.h"

extern struct fi_ops_cm lfv_dgram_cm_ops;
/* A DGRAM endpoint's QP name (its QP exists: enabled). */
void lfv_dgram_name(const struct lfv_ep *ep, struct lfv_ud_name *name);
int lfv_ep_create_ud_qp(struct lfv_ep *ep);

#endif /* LFV_DGRAM_H */
