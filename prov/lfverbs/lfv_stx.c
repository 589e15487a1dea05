/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared transmit contexts (fi_stx_context). A verbs send queue belongs to
 * one queue pair, so an lfverbs transmit context is shared logically:
 * endpoints bound to it keep their own send queues, take its attributes
 * (op_flags) as defaults, and report to their own CQs and counters, which
 * is what fi_endpoint(3) lets applications observe. fi_lfverbs(7) says so.
 */
#include <stdlib.h>

#include "lfv_stubs.h"
#include "lfv_stx.h"

static struct lfv_stx *lfv_stx_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_stx, stx_fid.fid);
}

static int lfv_stx_close(struct fid *fid)
{
	struct lfv_stx *stx = lfv_stx_of(fid);

	if (lfv_ref_read(&stx->ref) > 1)
		return -FI_EBUSY;
	lfv_ref_put(&stx->domain->ref);
	free(stx);
	return 0;
}

static struct fi_ops lfv_stx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_stx_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

int lfv_stx_context(struct fid_domain *domain_fid, struct fi_tx_attr *attr,
		    struct fid_stx **stx_fid, void *context)
{
	struct lfv_domain *domain;
	struct lfv_stx *stx;

	if (!domain_fid || !stx_fid)
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	if (attr && (attr->size > (size_t)domain->dev->attr.max_qp_wr ||
		     attr->iov_limit > (size_t)domain->dev->attr.max_sge ||
		     attr->inject_size > domain->dev->max_inline))
		return -FI_EINVAL;
	stx = calloc(1, sizeof(*stx));
	if (!stx)
		return -FI_ENOMEM;
	stx->domain = domain;
	if (attr)
		stx->attr = *attr;
	atomic_init(&stx->ref, 1);
	lfv_fid_init(&stx->stx_fid.fid, FI_CLASS_STX_CTX,
		     context, &lfv_stx_fi_ops);
	/* A shared transmit context has no calls of its own. */
	stx->stx_fid.ops = &lfv_no_ep_ops;
	lfv_ref_get(&domain->ref);
	*stx_fid = &stx->stx_fid;
	return 0;
}
