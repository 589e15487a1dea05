/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fi_cq_open for a domain (src/lfv_cq_open.c). Included by lfv_cq.h. */
#ifndef LFV_CQ_OPEN_H
#define LFV_CQ_OPEN_H

#include <rdma/fi_domain.h>

struct lfv_cq_params;

int lfv_cq_open(const struct fi_cq_attr *attr, void *context,
		const struct lfv_cq_params *params, struct fid_cq **cq_fid);

#endif /* LFV_CQ_OPEN_H */
