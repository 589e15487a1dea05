/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared receive contexts (fi_srx_context) on an ibverbs SRQ: MSG
 * endpoints bound to one share its receives. Receives may complete on any
 * of their QPs, on different CQs, in any order, so ops are not a ring here:
 * free slots are a stack under the srx's lock, and a completion finds its
 * endpoint (for counters) by QP number among those bound.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_param.h"
#include "lfv_queue.h"
#include "lfv_sge.h"
#include "lfv_srx.h"
#include "lfv_stubs.h"

#define LFV_SRX_MAX_EPS 4096

static struct lfv_srx *lfv_srx_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_srx, ep_fid.fid);
}

/* ---- slots ------------------------------------------------------------------ */

static struct lfv_op *lfv_srx_take(struct lfv_srx *srx)
{
	struct lfv_op *op = NULL;

	lfv_spin_lock(&srx->lock);
	if (srx->nfree)
		op = &srx->q.ops[srx->free[--srx->nfree]];
	lfv_spin_unlock(&srx->lock);
	return op;
}

void lfv_srx_retire(struct lfv_srx *srx, const struct lfv_op *op)
{
	lfv_spin_lock(&srx->lock);
	srx->free[srx->nfree++] = (uint32_t)(op - srx->q.ops);
	lfv_spin_unlock(&srx->lock);
}

struct lfv_ep *lfv_srx_find_ep(struct lfv_srx *srx, uint32_t qp_num)
{
	struct lfv_ep *ep = NULL;
	uint32_t i;

	lfv_spin_lock(&srx->lock);
	for (i = 0; i < srx->neps; i++) {
		if (srx->eps[i]->qp && srx->eps[i]->qp->qp_num == qp_num) {
			ep = srx->eps[i];
			break;
		}
	}
	lfv_spin_unlock(&srx->lock);
	return ep;
}

/* ---- binding endpoints ------------------------------------------------------ */

int lfv_srx_attach(struct lfv_srx *srx, struct lfv_ep *ep)
{
	struct lfv_ep **grown;
	int ret = 0;

	lfv_spin_lock(&srx->lock);
	if (srx->neps == srx->maxeps) {
		if (srx->maxeps >= LFV_SRX_MAX_EPS) {
			ret = -FI_ENOSPC;
			goto unlock;
		}
		grown = realloc(srx->eps, (srx->maxeps ? srx->maxeps * 2 : 8) *
				sizeof(*grown));
		if (!grown) {
			ret = -FI_ENOMEM;
			goto unlock;
		}
		srx->eps = grown;
		srx->maxeps = srx->maxeps ? srx->maxeps * 2 : 8;
	}
	srx->eps[srx->neps++] = ep;
	lfv_ref_get(&srx->ref);
unlock:
	lfv_spin_unlock(&srx->lock);
	return ret;
}

void lfv_srx_detach(struct lfv_srx *srx, struct lfv_ep *ep)
{
	uint32_t i;

	lfv_spin_lock(&srx->lock);
	for (i = 0; i < srx->neps; i++) {
		if (srx->eps[i] == ep) {
			srx->eps[i] = srx->eps[--srx->neps];
			lfv_ref_put(&srx->ref);
			break;
		}
	}
	lfv_spin_unlock(&srx->lock);
}

/* ---- posting ------------------------------------------------------------------ */

ssize_t lfv_srx_post(struct lfv_srx *srx, const struct iovec *iov,
			    void **desc, size_t count, void *context,
			    uint64_t flags)
{
	struct ibv_sge sge[LFV_MAX_SGE];
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct lfv_op *op;
	size_t len;
	int nsge, ret;

	if (count > srx->iov_limit || count > LFV_MAX_SGE)
		return -FI_EINVAL;
	nsge = lfv_fill_recv_sge(sge, iov, desc, count, &len);
	if (nsge < 0)
		return nsge;
	op = lfv_srx_take(srx);
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
	ret = ibv_post_srq_recv(srx->srq, &wr, &bad);
	if (ret) {
		lfv_srx_retire(srx, op);
		return ret == ENOMEM ? -FI_EAGAIN : -(ssize_t)ret;
	}
	return 0;
}

static ssize_t lfv_srx_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_srx *srx = lfv_srx_of(&ep->fid);

	(void)src_addr;
	return lfv_srx_post(srx, &iov, &desc, 1, context, srx->op_flags);
}

static ssize_t lfv_srx_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	struct lfv_srx *srx = lfv_srx_of(&ep->fid);

	(void)src_addr;
	if (count && !iov)
		return -FI_EINVAL;
	return lfv_srx_post(srx, iov, desc, count, context, srx->op_flags);
}

static ssize_t lfv_srx_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	if (!msg || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_MORE))
		return -FI_EBADFLAGS;
	return lfv_srx_post(lfv_srx_of(&ep->fid), msg->msg_iov, msg->desc,
			    msg->iov_count, msg->context, flags);
}

static struct fi_ops_msg lfv_srx_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lfv_srx_recv,
	.recvv = lfv_srx_recvv,
	.recvmsg = lfv_srx_recvmsg,
	/* Receive only: sends go through the endpoints bound to it. */
	LFV_NO_MSG_SEND_SLOTS,
};

/* ---- the object ------------------------------------------------------------------ */

static int lfv_srx_close(struct fid *fid)
{
	struct lfv_srx *srx = lfv_srx_of(fid);
	int ret;

	if (lfv_ref_read(&srx->ref) > 1)
		return -FI_EBUSY;
	ret = lfv_verbs_ret(ibv_destroy_srq(srx->srq));
	if (ret)
		return ret;
	lfv_ref_put(&srx->domain->ref);
	lfv_spin_fini(&srx->lock);
	free(srx->eps);
	free(srx->free);
	free(srx->q.ops);
	free(srx);
	return 0;
}

static int lfv_srx_control(struct fid *fid, int command, void *arg)
{
	struct lfv_srx *srx = lfv_srx_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		*flags = srx->op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		srx->op_flags = *flags & ~(uint64_t)FI_RECV;
		return 0;
	case FI_ENABLE:
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static struct fi_ops lfv_srx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_srx_close,
	.bind = lfv_no_bind,
	.control = lfv_srx_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static ssize_t lfv_srx_rx_size_left(struct fid_ep *ep)
{
	struct lfv_srx *srx = lfv_srx_of(&ep->fid);
	ssize_t n;

	lfv_spin_lock(&srx->lock);
	n = (ssize_t)srx->nfree;
	lfv_spin_unlock(&srx->lock);
	return n;
}

static struct fi_ops_ep lfv_srx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_no_cancel,
	.getopt = lfv_no_getopt,
	.setopt = lfv_no_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_srx_rx_size_left,
	.tx_size_left = lfv_no_size_left,
};

static int lfv_srx_init_slots(struct lfv_srx *srx, uint32_t size)
{
	uint32_t i;

	srx->q.ops = calloc(size, sizeof(*srx->q.ops));
	srx->free = calloc(size, sizeof(*srx->free));
	if (!srx->q.ops || !srx->free)
		return -FI_ENOMEM;
	for (i = 0; i < size; i++) {
		srx->q.ops[i].q = &srx->q;
		srx->free[i] = size - 1 - i;
	}
	srx->nfree = size;
	srx->q.size = size;
	srx->q.owner = srx;
	srx->q.shared = true;
	return 0;
}

int lfv_srx_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context)
{
	struct ibv_srq_init_attr init = { 0 };
	struct lfv_srx *srx;
	size_t size, iov;
	int ret;

	size = attr && attr->size ? attr->size : lfv_params.rx_size;
	iov = attr && attr->iov_limit ? attr->iov_limit : 1;
	if (size > (size_t)domain->dev->attr.max_srq_wr ||
	    iov > (size_t)domain->dev->attr.max_srq_sge || iov > LFV_MAX_SGE)
		return -FI_EINVAL;
	srx = calloc(1, sizeof(*srx));
	if (!srx)
		return -FI_ENOMEM;
	srx->domain = domain;
	srx->iov_limit = iov;
	srx->op_flags = attr ? attr->op_flags : 0;
	ret = lfv_spin_init(&srx->lock, true);
	if (ret)
		goto free_srx;
	ret = lfv_srx_init_slots(srx, (uint32_t)size);
	if (ret)
		goto free_slots;
	init.attr.max_wr = (uint32_t)size;
	init.attr.max_sge = (uint32_t)iov;
	srx->srq = ibv_create_srq(domain->pd, &init);
	if (!srx->srq) {
		ret = lfv_verbs_errno();
		goto free_slots;
	}
	atomic_init(&srx->ref, 1);
	lfv_rx_only_fid_init(&srx->ep_fid, FI_CLASS_SRX_CTX, context,
			     &(struct lfv_rx_only_ops){
				     .fi = &lfv_srx_fi_ops,
				     .ep = &lfv_srx_ep_ops,
				     .msg = &lfv_srx_msg_ops,
				     .tagged = &lfv_no_tagged_ops });
	lfv_ref_get(&domain->ref);
	*rx_ep = &srx->ep_fid;
	return 0;

free_slots:
	free(srx->q.ops);
	free(srx->free);
	lfv_spin_fini(&srx->lock);
free_srx:
	free(srx);
	return ret;
}
