/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared receive contexts of MSG endpoints, on an SRQ (lfv_msg_srq.c).
 */
#ifndef LFV_MSG_SRQ_H
#define LFV_MSG_SRQ_H

#include <rdma/fi_endpoint.h>

#include "lfv_queue.h"

/* A shared receive context on an SRQ (lfv_msg_srq.c). */
struct lfv_msg_srq {
	struct fid_ep ep_fid;		/* FI_CLASS_SRX_CTX */
	struct lfv_domain *domain;
	struct ibv_srq *srq;
	struct lfv_queue q;		/* ops only: not a ring */
	struct lfv_spin lock;		/* free, eps */
	uint32_t *free;			/* stack of free op slots */
	uint32_t nfree;
	struct lfv_ep **eps;		/* bound endpoints */
	uint32_t neps, maxeps;
	size_t iov_limit;
	uint64_t op_flags;
	lfv_atomic32_t ref;		/* 1 + bound endpoints */
};

/* fi_srx_context on a MSG domain (lfv_domain.c dispatches). */
int lfv_msg_srq_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context);


int lfv_msg_srq_attach(struct lfv_msg_srq *srq, struct lfv_ep *ep);
void lfv_msg_srq_detach(struct lfv_msg_srq *srq, struct lfv_ep *ep);
struct lfv_ep *lfv_msg_srq_find_ep(struct lfv_msg_srq *srq, uint32_t qp_num);
void lfv_msg_srq_retire(struct lfv_msg_srq *srq, const struct lfv_op *op);
ssize_t lfv_msg_srq_post(struct lfv_msg_srq *srq, const struct iovec *iov,
		     void **desc, size_t count, void *context, uint64_t flags);

#endif /* LFV_MSG_SRQ_H */
