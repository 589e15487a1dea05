/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scalable DGRAM endpoints (fi_scalable_ep, fi_tx_context, fi_rx_context).
 *
 * Every context is a DGRAM endpoint of its own (lfv_ep.c) with its own UD
 * QP: a transmit context's receive half and a receive context's transmit
 * half are one-entry queues that no call reaches (their fi_msg halves are
 * -FI_ENOSYS). Contexts share the scalable endpoint's AV, bound either
 * before they are created or before they are enabled. The endpoint's name
 * (struct lfv_sep_name) lists every context's QP number, so it exists once
 * every context has been created and enabled.
 *
 * MSG scalable endpoints are not offered: an RC connection is one QP pair,
 * and the receive side of a connection cannot be addressed per context.
 *
 * Locking: sep->lock guards the context slots and the AV pointer; data
 * calls go straight to the contexts and never take it.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_lock.h"
#include "lfv_log.h"
#include "lfv_msg.h"
#include "lfv_msg_ep.h"
#include "lfv_sep.h"
#include "lfv_stubs.h"
#include "lfv_ud.h"

struct lfv_sep {
	struct lfv_ep_base base;	/* FI_CLASS_SEP; its AV (lock) */
	struct lfv_mutex lock;		/* base.av and everything below */
	bool enabled;
	uint32_t ntx, nrx;
	struct lfv_ep *tx[LFV_SEP_MAX_CTX];
	struct lfv_ep *rx[LFV_SEP_MAX_CTX];
};

static struct lfv_sep *lfv_sep_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_sep, base.ep_fid.fid);
}

static uint32_t lfv_sep_open_contexts(const struct lfv_sep *sep)
{
	uint32_t i, n = 0;

	for (i = 0; i < sep->ntx; i++)
		n += sep->tx[i] != NULL;
	for (i = 0; i < sep->nrx; i++)
		n += sep->rx[i] != NULL;
	return n;
}

/* ---- contexts ------------------------------------------------------------- */

void lfv_sep_ctx_closed(struct lfv_ep *ep)
{
	struct lfv_sep *sep = ep->sep;
	struct lfv_ep **slot = ep->base.ep_fid.fid.fclass == FI_CLASS_TX_CTX ?
			       &sep->tx[ep->sep_index] :
			       &sep->rx[ep->sep_index];

	lfv_mutex_lock(&sep->lock);
	*slot = NULL;
	lfv_mutex_unlock(&sep->lock);
}

/* What a context may ask of one side of the scalable endpoint (asked,
 * then the endpoint's): no capability, queue size or iov limit beyond. */
static int lfv_sep_check_side(uint64_t caps, size_t size, size_t iov_limit,
			      uint64_t base_caps, size_t base_size,
			      size_t base_iov_limit)
{
	if (caps & ~base_caps)
		return -FI_EINVAL;
	if (size > base_size && base_size)
		return -FI_EINVAL;
	if (iov_limit > base_iov_limit)
		return -FI_EINVAL;
	return 0;
}

static int lfv_sep_check_tx_attr(const struct fi_tx_attr *base,
				 const struct fi_tx_attr *attr)
{
	if (attr->inject_size > base->inject_size)
		return -FI_EINVAL;
	return lfv_sep_check_side(attr->caps, attr->size, attr->iov_limit,
				  base->caps, base->size, base->iov_limit);
}

static int lfv_sep_check_rx_attr(const struct fi_rx_attr *base,
				 const struct fi_rx_attr *attr)
{
	return lfv_sep_check_side(attr->caps, attr->size, attr->iov_limit,
				  base->caps, base->size, base->iov_limit);
}

/* The fi_info a context endpoint is opened with: the scalable endpoint's,
 * one context, the asked attributes on its side and the smallest queue
 * on the other. */
static int lfv_sep_ctx_info(const struct lfv_sep *sep, bool tx,
			    const struct fi_tx_attr *tx_attr,
			    const struct fi_rx_attr *rx_attr,
			    struct fi_info **out)
{
	struct fi_info *info = fi_dupinfo(sep->base.info);

	if (!info)
		return -FI_ENOMEM;
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;
	if (tx) {
		if (tx_attr)
			*info->tx_attr = *tx_attr;
		info->rx_attr->size = 1;
		info->rx_attr->iov_limit = 1;
		info->caps &= ~(uint64_t)FI_RECV;
	} else {
		if (rx_attr)
			*info->rx_attr = *rx_attr;
		info->tx_attr->size = 1;
		info->tx_attr->iov_limit = 1;
		info->tx_attr->inject_size = 0;
		info->caps &= ~(uint64_t)FI_SEND;
	}
	*out = info;
	return 0;
}

static int lfv_sep_ctx_open(struct lfv_sep *sep, bool tx, int index,
			    const struct fi_tx_attr *tx_attr,
			    const struct fi_rx_attr *rx_attr,
			    void *context, struct lfv_ep **out)
{
	struct lfv_ep **slot;
	struct fi_info *info;
	struct lfv_ep *ep;
	int ret;

	if (index < 0 || (uint32_t)index >= (tx ? sep->ntx : sep->nrx))
		return -FI_EINVAL;
	ret = lfv_sep_ctx_info(sep, tx, tx_attr, rx_attr, &info);
	if (ret)
		return ret;
	lfv_mutex_lock(&sep->lock);
	slot = tx ? &sep->tx[index] : &sep->rx[index];
	if (*slot) {
		ret = -FI_EBUSY; /* one fid_ep per context */
		goto unlock;
	}
	ret = lfv_ep_open(sep->base.domain, info, context, &ep);
	if (ret)
		goto unlock;
	ep->sep = sep;
	ep->sep_index = (uint32_t)index;
	ep->base.ep_fid.fid.fclass = tx ? FI_CLASS_TX_CTX : FI_CLASS_RX_CTX;
	ep->base.ep_fid.msg = tx ? &lfv_dgram_tx_ops : &lfv_dgram_rx_ops;
	if (sep->base.av) {
		ep->base.av = sep->base.av;
		lfv_av_hold(sep->base.av);
	}
	*slot = ep;
	*out = ep;
unlock:
	lfv_mutex_unlock(&sep->lock);
	fi_freeinfo(info);
	return ret;
}

/* fi_tx_context (tx) or fi_rx_context: attributes the scalable
 * endpoint's allow (tx_attr or rx_attr, as tx says), or its own; the
 * attributes the context got go back in them. */
static int lfv_sep_ctx(struct fid_ep *sep_fid, bool tx, int index,
		       struct fi_tx_attr *tx_attr, struct fi_rx_attr *rx_attr,
		       struct fid_ep **ctx_ep, void *context)
{
	struct lfv_sep *sep = lfv_sep_of(&sep_fid->fid);
	struct lfv_ep *ep;
	int ret = 0;

	if (!ctx_ep)
		return -FI_EINVAL;
	if (tx_attr)
		ret = lfv_sep_check_tx_attr(sep->base.info->tx_attr, tx_attr);
	else if (rx_attr)
		ret = lfv_sep_check_rx_attr(sep->base.info->rx_attr, rx_attr);
	if (ret)
		return ret;
	ret = lfv_sep_ctx_open(sep, tx, index, tx_attr, rx_attr, context, &ep);
	if (ret)
		return ret;
	if (tx_attr)
		*tx_attr = *ep->base.info->tx_attr; /* what the context got */
	if (rx_attr)
		*rx_attr = *ep->base.info->rx_attr;
	*ctx_ep = &ep->base.ep_fid;
	return 0;
}

static int lfv_sep_tx_ctx(struct fid_ep *sep_fid, int index,
			  struct fi_tx_attr *attr, struct fid_ep **tx_ep,
			  void *context)
{
	return lfv_sep_ctx(sep_fid, true, index, attr, NULL, tx_ep, context);
}

static int lfv_sep_rx_ctx(struct fid_ep *sep_fid, int index,
			  struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			  void *context)
{
	return lfv_sep_ctx(sep_fid, false, index, NULL, attr, rx_ep, context);
}

/* ---- the scalable endpoint itself ----------------------------------------- */

/* Contexts opened before the AV was bound get it now (they cannot have
 * been enabled without one). */
static void lfv_sep_give_av(struct lfv_sep *sep, struct lfv_ep **ctx,
			    uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (ctx[i] && !ctx[i]->base.av) {
			ctx[i]->base.av = sep->base.av;
			lfv_av_hold(sep->base.av);
		}
	}
}

static int lfv_sep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_sep *sep = lfv_sep_of(fid);
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	lfv_mutex_lock(&sep->lock);
	ret = lfv_ep_base_bind(&sep->base, bfid, flags);
	if (!ret) {
		lfv_sep_give_av(sep, sep->tx, sep->ntx);
		lfv_sep_give_av(sep, sep->rx, sep->nrx);
	}
	lfv_mutex_unlock(&sep->lock);
	return ret;
}

/* fi_enable: enables every open context not enabled yet (each needs its
 * CQs or counters bound first), so either order of enabling works. */
static int lfv_sep_enable(struct lfv_sep *sep)
{
	struct lfv_ep *ctx[2 * LFV_SEP_MAX_CTX];
	uint32_t i, n = 0;
	int ret = 0;

	lfv_mutex_lock(&sep->lock);
	if (!sep->base.av) {
		lfv_mutex_unlock(&sep->lock);
		return -FI_ENOAV;
	}
	for (i = 0; i < sep->ntx; i++)
		if (sep->tx[i] && sep->tx[i]->state == LFV_EP_IDLE)
			ctx[n++] = sep->tx[i];
	for (i = 0; i < sep->nrx; i++)
		if (sep->rx[i] && sep->rx[i]->state == LFV_EP_IDLE)
			ctx[n++] = sep->rx[i];
	for (i = 0; i < n && !ret; i++)
		ret = fi_enable(&ctx[i]->base.ep_fid);
	if (!ret)
		sep->enabled = true;
	lfv_mutex_unlock(&sep->lock);
	return ret;
}

static int lfv_sep_control(struct fid *fid, int command, void *arg)
{
	(void)arg;
	if (command == FI_ENABLE)
		return lfv_sep_enable(lfv_sep_of(fid));
	return -FI_ENOSYS;
}

static int lfv_sep_close(struct fid *fid)
{
	struct lfv_sep *sep = lfv_sep_of(fid);
	uint32_t open;

	lfv_mutex_lock(&sep->lock);
	open = lfv_sep_open_contexts(sep);
	lfv_mutex_unlock(&sep->lock);
	if (open)
		return -FI_EBUSY; /* fi_endpoint(3): contexts first */
	lfv_mutex_destroy(&sep->lock);
	lfv_ep_base_fini(&sep->base);
	free(sep);
	return 0;
}

/* A context's QP number, or 0 while it is not open and enabled. */
static uint32_t lfv_sep_qpn(const struct lfv_ep *ep)
{
	return ep && ep->qp ? ep->qp->qp_num : 0;
}

static int lfv_sep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_sep *sep = lfv_sep_of(fid);
	struct lfv_sep_name name = {
		.base.qkey = LFV_UD_QKEY,
		.magic = LFV_SEP_MAGIC,
	};
	int ret = 0;
	uint32_t i;

	lfv_mutex_lock(&sep->lock);
	name.nrx = (uint16_t)sep->nrx;
	name.ntx = (uint16_t)sep->ntx;
	for (i = 0; i < sep->nrx; i++)
		if (!(name.rx_qpn[i] = lfv_sep_qpn(sep->rx[i])))
			ret = -FI_EOPBADSTATE;
	for (i = 0; i < sep->ntx; i++)
		if (!(name.tx_qpn[i] = lfv_sep_qpn(sep->tx[i])))
			ret = -FI_EOPBADSTATE;
	lfv_mutex_unlock(&sep->lock);
	if (ret)
		return ret; /* every context must exist and be enabled */
	memcpy(name.base.gid, sep->base.domain->dev->gid.raw, sizeof(name.base.gid));
	name.base.qpn = name.rx_qpn[0];
	name.base.lid = sep->base.domain->dev->port_attr.lid;
	return lfv_copy_name(&name, sizeof(name), addr, addrlen);
}

static int lfv_sep_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS; /* UD addresses are QP numbers */
}

static struct fi_ops lfv_sep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_sep_close,
	.bind = lfv_sep_bind,
	.control = lfv_sep_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_ep lfv_sep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_no_cancel,
	.getopt = lfv_no_getopt,
	.setopt = lfv_no_setopt,
	.tx_ctx = lfv_sep_tx_ctx,
	.rx_ctx = lfv_sep_rx_ctx,
	.rx_size_left = lfv_no_size_left,
	.tx_size_left = lfv_no_size_left,
};

static struct fi_ops_cm lfv_sep_cm_ops =
	LFV_NO_CONN_CM_OPS(lfv_sep_setname, lfv_sep_getname);

/* A scalable endpoint binds its AV only (fi_scalable_ep_bind). */
static const struct lfv_ep_type lfv_sep_type = {
	.fi = &lfv_sep_fi_ops,
	.ep = &lfv_sep_ops,
	.cm = &lfv_sep_cm_ops,
	.msg = &lfv_no_msg_ops,
	.rma = &lfv_no_rma_ops,
	.tagged = &lfv_no_tagged_ops,
	.atomic = &lfv_no_atomic_ops,
	.binds = LFV_EP_BINDS_AV,
};

/* Context counts: 0 means one; FI_SHARED_CONTEXT has no meaning here. */
static int lfv_sep_count(size_t asked, size_t max, uint32_t *n)
{
	if (asked > max)
		return -FI_EINVAL;
	*n = asked ? (uint32_t)asked : 1;
	return 0;
}

int lfv_scalable_ep(struct fid_domain *domain_fid, struct fi_info *info,
		    struct fid_ep **sep_fid, void *context)
{
	struct lfv_domain *domain;
	struct lfv_sep *sep;
	uint32_t ntx, nrx;
	int ret;

	if (!domain_fid || !info || !sep_fid || !info->ep_attr ||
	    !info->tx_attr || !info->rx_attr)
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	if (info->ep_attr->type != FI_EP_DGRAM) {
		LFV_INFO(FI_LOG_EP_CTRL, "scalable endpoints are DGRAM only\n");
		return -FI_ENOSYS;
	}
	ret = lfv_sep_count(info->ep_attr->tx_ctx_cnt, LFV_SEP_MAX_CTX, &ntx);
	if (!ret)
		ret = lfv_sep_count(info->ep_attr->rx_ctx_cnt, LFV_SEP_MAX_CTX,
				    &nrx);
	if (ret)
		return ret;
	sep = calloc(1, sizeof(*sep));
	if (!sep)
		return -FI_ENOMEM;
	ret = lfv_ep_base_init(&sep->base, domain, info, &lfv_sep_type,
			       context);
	if (ret)
		goto free_sep;
	sep->base.ep_fid.fid.fclass = FI_CLASS_SEP;
	ret = lfv_mutex_init(&sep->lock);
	if (ret)
		goto fini_base;
	sep->ntx = ntx;
	sep->nrx = nrx;
	*sep_fid = &sep->base.ep_fid;
	return 0;

fini_base:
	lfv_ep_base_fini(&sep->base);
free_sep:
	free(sep);
	return ret;
}
