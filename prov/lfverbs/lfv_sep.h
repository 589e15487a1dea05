/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scalable DGRAM endpoints (lfv_sep.c).
 */
#ifndef LFV_SEP_H
#define LFV_SEP_H

#include "lfv_ep.h"

struct lfv_sep;
int lfv_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		    struct fid_ep **sep, void *context);
void lfv_sep_ctx_closed(struct lfv_ep *ep);

#endif /* LFV_SEP_H */
