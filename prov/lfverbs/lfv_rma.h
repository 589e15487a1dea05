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

/* What one transmit call asks for. */
struct lfv_tx_req {
	const struct iovec *iov;
	void **desc;
	size_t count;
	uint64_t data;
	fi_addr_t dest;
	void *context;
	uint64_t flags;			/* operation flags (FI_INJECT, ...) */
	uint64_t comp_flags;		/* FI_SEND | FI_MSG, FI_RMA | ... */
	bool no_report;			/* never a CQ entry (atomic inject) */
};

/* One fi_rma or fi_atomic operation, decoded (lfv_rma.c, lfv_amo.c) for
 * the transport that posts it: wr has the opcode and the remote side
 * (address, key, atomic operands); the local memory is r's iovs, the
 * result of an atomic (none: nobody wants it). The transport sets the
 * SGEs, and the immediate data of a write with remote CQ data. */
struct lfv_rma_req {
	struct lfv_tx_req r;
	struct ibv_send_wr wr;
	uint64_t key;			/* as given: checked to fit */
};

ssize_t lfv_rma_submit(struct fid_ep *ep_fid, struct lfv_rma_req *q);
uint64_t lfv_rma_op_flags(struct fid_ep *ep_fid);
/* The same without FI_INJECT, for reads and atomics (lfv_rma.c). */
uint64_t lfv_rma_in_op_flags(struct fid_ep *ep_fid);
bool lfv_wr_is_atomic(const struct ibv_send_wr *wr);

extern struct fi_ops_rma lfv_rma_ops;
#endif /* LFV_RMA_H */
