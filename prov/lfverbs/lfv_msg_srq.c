/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared receive contexts (fi_srx_context) on an ibverbs SRQ: MSG
 * endpoints bound to one share its receives. Receives may complete on any
 * of their QPs, on different CQs, in any order, so ops are not a ring here:
 * free slots are a stack under the SRQ context's lock, and a completion finds its
 * endpoint (for counters) by QP number among those bound.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_param.h"
#include "lfv_queue.h"
#include "lfv_sge.h"
#include "lfv_msg_srq.h"
#include "lfv_stubs.h"

#define LFV_SRX_MAX_EPS 4096

static struct lfv_msg_srq *lfv_msg_srq_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_msg_srq, ep_fid.fid);
}

/* ---- slots ------------------------------------------------------------------ */

static struct lfv_op *lfv_msg_srq_take(struct lfv_msg_srq *srq)
{
	struct lfv_op *op = NULL;

	lfv_spin_lock(&srq->lock);
	if (srq->nfree)
		op = &srq->q.ops[srq->free[--srq->nfree]];
	lfv_spin_unlock(&srq->lock);
	return op;
}

void lfv_msg_srq_retire(struct lfv_msg_srq *srq, const struct lfv_op *op)
{
	lfv_spin_lock(&srq->lock);
	srq->free[srq->nfree++] = (uint32_t)(op - srq->q.ops);
	lfv_spin_unlock(&srq->lock);
}

struct lfv_ep *lfv_msg_srq_find_ep(struct lfv_msg_srq *srq, uint32_t qp_num)
{
	struct lfv_ep *ep = NULL;
	uint32_t i;

	lfv_spin_lock(&srq->lock);
	for (i = 0; i < srq->neps; i++) {
		if (srq->eps[i]->qp && srq->eps[i]->qp->qp_num == qp_num) {
			ep = srq->eps[i];
			break;
		}
	}
	lfv_spin_unlock(&srq->lock);
	return ep;
}

/* ---- binding endpoints ------------------------------------------------------ */

int lfv_msg_srq_attach(struct lfv_msg_srq *srq, struct lfv_ep *ep)
{
	struct lfv_ep **grown;
	int ret = 0;

	lfv_spin_lock(&srq->lock);
	if (srq->neps == srq->maxeps) {
		if (srq->maxeps >= LFV_SRX_MAX_EPS) {
			ret = -FI_ENOSPC;
			goto unlock;
		}
		grown = realloc(srq->eps, (srq->maxeps ? srq->maxeps * 2 : 8) *
				sizeof(*grown));
		if (!grown) {
			ret = -FI_ENOMEM;
			goto unlock;
		}
		srq->eps = grown;
		srq->maxeps = srq->maxeps ? srq->maxeps * 2 : 8;
	}
	srq->eps[srq->neps++] = ep;
	/* Its receives complete through the QPs of the endpoints bound to
	 * it (MSG): translated as theirs. */
	srq->q.translate = ep->kind->translate;
	lfv_ref_get(&srq->ref);
unlock:
	lfv_spin_unlock(&srq->lock);
	return ret;
}

void lfv_msg_srq_detach(struct lfv_msg_srq *srq, struct lfv_ep *ep)
{
	uint32_t i;

	lfv_spin_lock(&srq->lock);
	for (i = 0; i < srq->neps; i++) {
		if (srq->eps[i] == ep) {
			srq->eps[i] = srq->eps[--srq->neps];
			lfv_ref_put(&srq->ref);
			break;
		}
	}
	lfv_spin_unlock(&srq->lock);
}

/* ---- posting ------------------------------------------------------------------ */

ssize_t lfv_msg_srq_post(struct lfv_msg_srq *srq, const struct iovec *iov,
			    void **desc, size_t count, void *context,
			    uint64_t flags)
{
	struct ibv_sge sge[LFV_MAX_SGE];
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct lfv_op *op;
	size_t len;
	int nsge, ret;

	if (count > srq->iov_limit || count > LFV_MAX_SGE)
		return -FI_EINVAL;
	nsge = lfv_fill_recv_sge(sge, iov, desc, count, &len);
	if (nsge < 0)
		return nsge;
	op = lfv_msg_srq_take(srq);
	if (!op)
		return -FI_EAGAIN;
	op->context = context;
	op->flags = FI_RECV | FI_MSG |
		    ((flags & FI_COMPLETION) ? LFV_OP_REPORT : LFV_OP_SHARED);
	op->buf = count ? iov[0].iov_base : NULL;
	op->len = len;
	wr.wr_id = (uintptr_t)op;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	ret = ibv_post_srq_recv(srq->srq, &wr, &bad);
	if (ret) {
		lfv_msg_srq_retire(srq, op);
		return ret == ENOMEM ? -FI_EAGAIN : -(ssize_t)ret;
	}
	return 0;
}

static ssize_t lfv_msg_srq_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_msg_srq *srq = lfv_msg_srq_of(&ep->fid);

	(void)src_addr;
	return lfv_msg_srq_post(srq, &iov, &desc, 1, context, srq->op_flags);
}

static ssize_t lfv_msg_srq_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	struct lfv_msg_srq *srq = lfv_msg_srq_of(&ep->fid);

	(void)src_addr;
	if (count && !iov)
		return -FI_EINVAL;
	return lfv_msg_srq_post(srq, iov, desc, count, context, srq->op_flags);
}

static ssize_t lfv_msg_srq_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	if (!msg || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_MORE))
		return -FI_EBADFLAGS;
	return lfv_msg_srq_post(lfv_msg_srq_of(&ep->fid), msg->msg_iov, msg->desc,
			    msg->iov_count, msg->context, flags);
}

/* Receive only: sends go through the endpoints bound to it. */
static struct fi_ops_msg lfv_msg_srq_msg_ops =
	LFV_RX_ONLY_OPS(fi_ops_msg, lfv_msg_srq_recv, lfv_msg_srq_recvv,
			lfv_msg_srq_recvmsg, LFV_NO_MSG_SEND_SLOTS);

/* ---- the object ------------------------------------------------------------------ */

static int lfv_msg_srq_close(struct fid *fid)
{
	struct lfv_msg_srq *srq = lfv_msg_srq_of(fid);
	int ret;

	if (lfv_ref_read(&srq->ref) > 1)
		return -FI_EBUSY;
	ret = lfv_verbs_ret(ibv_destroy_srq(srq->srq));
	if (ret)
		return ret;
	lfv_ref_put(&srq->domain->ref);
	lfv_spin_fini(&srq->lock);
	free(srq->eps);
	free(srq->free);
	free(srq->q.ops);
	free(srq);
	return 0;
}

static int lfv_msg_srq_control(struct fid *fid, int command, void *arg)
{
	struct lfv_msg_srq *srq = lfv_msg_srq_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		*flags = srq->op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		srq->op_flags = *flags & ~(uint64_t)FI_RECV;
		return 0;
	case FI_ENABLE:
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops lfv_msg_srq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_msg_srq_close,
	.bind = lfv_no_bind,
	.control = lfv_msg_srq_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static ssize_t lfv_msg_srq_rx_size_left(struct fid_ep *ep)
{
	struct lfv_msg_srq *srq = lfv_msg_srq_of(&ep->fid);
	ssize_t n;

	lfv_spin_lock(&srq->lock);
	n = (ssize_t)srq->nfree;
	lfv_spin_unlock(&srq->lock);
	return n;
}

static struct fi_ops_ep lfv_msg_srq_ep_ops =
	LFV_NO_EP_OPS(lfv_msg_srq_rx_size_left);

static const struct lfv_rx_only_ops lfv_msg_srq_ops = {
	.fi = &lfv_msg_srq_fi_ops,
	.ep = &lfv_msg_srq_ep_ops,
	.msg = &lfv_msg_srq_msg_ops,
	.tagged = &lfv_no_tagged_ops,
};

static int lfv_msg_srq_init_slots(struct lfv_msg_srq *srq, uint32_t size)
{
	uint32_t i;

	srq->q.ops = calloc(size, sizeof(*srq->q.ops));
	srq->free = calloc(size, sizeof(*srq->free));
	if (!srq->q.ops || !srq->free)
		return -FI_ENOMEM;
	for (i = 0; i < size; i++) {
		srq->q.ops[i].q = &srq->q;
		srq->free[i] = size - 1 - i;
	}
	srq->nfree = size;
	srq->q.size = size;
	srq->q.owner = srq;
	srq->q.shared = true;
	return 0;
}

int lfv_msg_srq_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	struct ibv_srq_init_attr init = { 0 };
	struct lfv_msg_srq *srq;
	size_t size, iov;
	int ret;

	size = attr && attr->size ? attr->size : lfv_params.rx_size;
	iov = attr && attr->iov_limit ? attr->iov_limit : 1;
	if (size > (size_t)domain->dev->attr.max_srq_wr ||
	    iov > (size_t)domain->dev->attr.max_srq_sge || iov > LFV_MAX_SGE)
		return -FI_EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -FI_ENOMEM;
	srq->domain = domain;
	srq->iov_limit = iov;
	srq->op_flags = attr ? attr->op_flags : 0;
	ret = lfv_spin_init(&srq->lock, true);
	if (ret)
		goto free_srq;
	ret = lfv_msg_srq_init_slots(srq, (uint32_t)size);
	if (ret)
		goto free_slots;
	init.attr.max_wr = (uint32_t)size;
	init.attr.max_sge = (uint32_t)iov;
	srq->srq = ibv_create_srq(domain->pd, &init);
	if (!srq->srq) {
		ret = lfv_verbs_errno();
		goto free_slots;
	}
	atomic_init(&srq->ref, 1);
	lfv_rx_only_fid_init(&srq->ep_fid, FI_CLASS_SRX_CTX, context,
			     &lfv_msg_srq_ops);
	lfv_ref_get(&domain->ref);
	*rx_ep = &srq->ep_fid;
	return 0;

free_slots:
	free(srq->q.ops);
	free(srq->free);
	lfv_spin_fini(&srq->lock);
free_srq:
	free(srq);
	return ret;
}
