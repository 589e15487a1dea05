/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_atomic, decoded for the endpoint type that posts it (lfv_amo.c).
 */
#ifndef LFV_AMO_H
#define LFV_AMO_H

#include <stdint.h>

#include <rdma/fi_atomic.h>

extern struct fi_ops_atomic lfv_atomic_ops;
int lfv_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);

#endif /* LFV_AMO_H */
