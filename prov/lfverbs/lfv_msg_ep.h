/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Opening MSG and DGRAM endpoints (lfv_msg_ep.c).
 */
#ifndef LFV_MSG_EP_H
#define LFV_MSG_EP_H

#include "lfv_ep.h"

/* fi_endpoint of a MSG or DGRAM endpoint (lfv_domain.c dispatches). */
int lfv_msg_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context);
/* An endpoint object (not yet a context or bound): what fi_endpoint and
 * fi_tx_context / fi_rx_context build on. */
int lfv_ep_open(struct lfv_domain *domain, const struct fi_info *info,
		void *context, struct lfv_ep **ep);

#endif /* LFV_MSG_EP_H */
