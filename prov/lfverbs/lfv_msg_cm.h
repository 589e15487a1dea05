/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Connection management of MSG endpoints (lfv_msg_cm.c): their rdma_cm ids,
 * RC queue pairs and fi_ops_cm.
 */
#ifndef LFV_MSG_CM_H
#define LFV_MSG_CM_H

#include "lfv_ep.h"

extern struct fi_ops_cm lfv_cm_ops;
int lfv_ep_create_rc_qp(struct lfv_ep *ep);
/* An MSG endpoint's rdma_cm id (created, or taken from info->handle);
 * lfv_cm_detach stops event delivery to an endpoint that is closing. */
int lfv_cm_ep_open(struct lfv_ep *ep, const struct fi_info *info);
void lfv_cm_detach(struct lfv_ep *ep);

#endif /* LFV_MSG_CM_H */
