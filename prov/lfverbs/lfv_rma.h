/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma and fi_atomic calls decoded for the endpoint type that posts them
 * (lfv_rma.c, lfv_amo.c; lfv_ep_type.rma_post).
 */
#ifndef LFV_RMA_H
#define LFV_RMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "lfv_ep_base.h"

ssize_t lfv_rma_submit(struct fid_ep *ep_fid, struct lfv_rma_req *q);
uint64_t lfv_rma_op_flags(struct fid_ep *ep_fid);
/* The same without FI_INJECT, for reads and atomics (lfv_rma.c). */
uint64_t lfv_rma_in_op_flags(struct fid_ep *ep_fid);
bool lfv_wr_is_atomic(const struct ibv_send_wr *wr);

extern struct fi_ops_rma lfv_rma_ops;
#endif /* LFV_RMA_H */
