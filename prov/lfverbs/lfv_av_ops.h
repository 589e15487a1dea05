/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_av_open and the application's AV calls (fi_ops_av, lfv_av_ops.c). Only
 * the domain names this: endpoints use the table through lfv_av.h.
 */
#ifndef LFV_AV_OPS_H
#define LFV_AV_OPS_H

#include <rdma/fi_domain.h>

int lfv_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);

#endif /* LFV_AV_OPS_H */
