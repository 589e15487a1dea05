/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The endpoint base (lfv_ep_base.h): set-up, binding, operation flags and
 * aliases, once for every endpoint type.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_ep_base.h"
#include "lfv_prov.h"
#include "lfv_stubs.h"

int lfv_ep_base_init(struct lfv_ep_base *base, struct lfv_domain *domain,
		     const struct fi_info *info, const struct lfv_ep_type *type,
		     void *context)
{
	base->info = fi_dupinfo(info);
	if (!base->info)
		return -FI_ENOMEM;
	base->type = type;
	base->domain = domain;
	lfv_fid_init(&base->ep_fid.fid, FI_CLASS_EP, context, type->fi);
	base->ep_fid.ops = type->ep;
	base->ep_fid.cm = type->cm;
	base->ep_fid.msg = type->msg;
	base->ep_fid.rma = type->rma;
	base->ep_fid.tagged = type->tagged;
	base->ep_fid.atomic = type->atomic;
	base->ep_fid.collective = &lfv_no_collective_ops;
	if (info->tx_attr)
		base->tx_op_flags = info->tx_attr->op_flags;
	if (info->rx_attr)
		base->rx_op_flags = info->rx_attr->op_flags;
	atomic_init(&base->ref, 1);
	lfv_ref_get(&domain->ref);
	return 0;
}

void lfv_ep_base_fini(struct lfv_ep_base *base)
{
	size_t i;

	if (base->tx_cq)
		lfv_ref_put(&base->tx_cq->ref);
	if (base->rx_cq)
		lfv_ref_put(&base->rx_cq->ref);
	for (i = 0; i < LFV_CNTR_KINDS; i++)
		if (base->cntr[i])
			lfv_ref_put(&base->cntr[i]->ref);
	if (base->av)
		lfv_av_release(base->av);
	lfv_ref_put(&base->domain->ref);
	fi_freeinfo(base->info);
	memset(base, 0, sizeof(*base));
}

/* ---- binding ---------------------------------------------------------------- */

static int lfv_ep_base_bind_cq(struct lfv_ep_base *base, struct lfv_cq *cq,
			       uint64_t flags)
{
	bool selective = flags & FI_SELECTIVE_COMPLETION;

	if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (cq->owner && !(base->type->binds & LFV_EP_BINDS_PEER_CQ))
		return -FI_EINVAL; /* this type cannot forward its completions */
	if (((flags & FI_TRANSMIT) && base->tx_cq) ||
	    ((flags & FI_RECV) && base->rx_cq))
		return -FI_EINVAL; /* one CQ per direction */
	if (flags & FI_TRANSMIT) {
		base->tx_cq = cq;
		base->tx_selective = selective;
		lfv_ref_get(&cq->ref);
	}
	if (flags & FI_RECV) {
		base->rx_cq = cq;
		base->rx_selective = selective;
		lfv_ref_get(&cq->ref);
	}
	return 0;
}

/* fi_ep_bind's flag of each counter kind (enum lfv_cntr_kind). */
static const uint64_t lfv_cntr_flags[LFV_CNTR_KINDS] = {
	FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE,
};

static int lfv_ep_base_bind_cntr(struct lfv_ep_base *base,
				 struct lfv_cntr *cntr, uint64_t flags)
{
	uint64_t known = 0;
	size_t i;

	for (i = 0; i < LFV_CNTR_KINDS; i++)
		known |= lfv_cntr_flags[i];
	if (!flags || (flags & ~known))
		return -FI_EBADFLAGS;
	for (i = 0; i < LFV_CNTR_KINDS; i++)
		if ((flags & lfv_cntr_flags[i]) && base->cntr[i])
			return -FI_EINVAL;
	for (i = 0; i < LFV_CNTR_KINDS; i++) {
		if (!(flags & lfv_cntr_flags[i]))
			continue;
		base->cntr[i] = cntr;
		lfv_ref_get(&cntr->ref);
	}
	/* Reading the counter must poll this domain's hardware CQs. */
	lfv_cntr_set_progress(cntr, base->domain->progress);
	return 0;
}

static int lfv_ep_base_bind_av(struct lfv_ep_base *base, struct fid *bfid,
			       uint64_t flags)
{
	struct lfv_av *av = lfv_av_from_fid(bfid);

	if (!av || base->av)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	base->av = av;
	lfv_av_hold(av);
	return 0;
}

int lfv_ep_base_bind(struct lfv_ep_base *base, struct fid *bfid,
		     uint64_t flags)
{
	uint32_t binds = base->type->binds;

	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		if (!(binds & LFV_EP_BINDS_CQ))
			return -FI_EINVAL;
		return lfv_ep_base_bind_cq(base, lfv_cq_from_fid(
			lfv_container_of(bfid, struct fid_cq, fid)), flags);
	case FI_CLASS_CNTR:
		if (!(binds & LFV_EP_BINDS_CNTR))
			return -FI_EINVAL;
		return lfv_ep_base_bind_cntr(base, lfv_cntr_from_fid(
			lfv_container_of(bfid, struct fid_cntr, fid)), flags);
	case FI_CLASS_AV:
		if (!(binds & LFV_EP_BINDS_AV))
			return -FI_EINVAL;
		return lfv_ep_base_bind_av(base, bfid, flags);
	default:
		return -FI_EINVAL;
	}
}

/* ---- operation flags and aliases ------------------------------------------- */

/* FI_GETOPSFLAG / FI_SETOPSFLAG on a pair of default flags. */
static int lfv_opsflag(int command, uint64_t *flags, uint64_t *tx,
		       uint64_t *rx)
{
	if (!flags)
		return -FI_EINVAL;
	/* fi_endpoint(3): exactly one of the two directions. */
	if (!(*flags & FI_TRANSMIT) == !(*flags & FI_RECV))
		return -FI_EINVAL;
	if (command == FI_GETOPSFLAG)
		*flags = (*flags & FI_RECV) ? *rx : *tx;
	else if (*flags & FI_RECV)
		*rx = *flags & ~(uint64_t)FI_RECV;
	else
		*tx = *flags & ~(uint64_t)FI_TRANSMIT;
	return 0;
}

static int lfv_alias_close(struct fid *fid)
{
	struct lfv_alias *a = lfv_container_of(fid, struct lfv_alias,
					       ep_fid.fid);

	lfv_ref_put(&a->base->ref);
	free(a);
	return 0;
}

static int lfv_alias_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_EINVAL; /* bindings belong to the endpoint */
}

static int lfv_alias_control(struct fid *fid, int command, void *arg)
{
	struct lfv_alias *a = lfv_container_of(fid, struct lfv_alias,
					       ep_fid.fid);

	if (command == FI_GETOPSFLAG || command == FI_SETOPSFLAG)
		return lfv_opsflag(command, arg, &a->tx_op_flags,
				   &a->rx_op_flags);
	return -FI_ENOSYS;
}

struct fi_ops lfv_alias_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_alias_close,
	.bind = lfv_alias_bind,
	.control = lfv_alias_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* fi_ep_alias: the same endpoint, other default flags for the direction(s)
 * named in flags; the endpoint stays open while aliases exist. */
static int lfv_ep_base_alias(struct lfv_ep_base *base, struct fi_alias *req)
{
	uint64_t dirs = FI_TRANSMIT | FI_RECV, ops;
	struct lfv_alias *a;

	if (!req || !req->fid)
		return -FI_EINVAL;
	if (!(req->flags & dirs))
		return -FI_EINVAL;
	ops = req->flags & ~dirs;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	a->base = base;
	a->tx_op_flags = (req->flags & FI_TRANSMIT) ? ops : base->tx_op_flags;
	a->rx_op_flags = (req->flags & FI_RECV) ? ops : base->rx_op_flags;
	a->ep_fid = base->ep_fid;
	a->ep_fid.fid.ops = &lfv_alias_fi_ops;
	lfv_ref_get(&base->ref);
	*req->fid = &a->ep_fid.fid;
	return 0;
}

int lfv_ep_base_control(struct lfv_ep_base *base, int command, void *arg)
{
	switch (command) {
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		return lfv_opsflag(command, arg, &base->tx_op_flags,
				   &base->rx_op_flags);
	case FI_ALIAS:
		if (!(base->type->binds & LFV_EP_ALIASES))
			return -FI_ENOSYS;
		return lfv_ep_base_alias(base, arg);
	default:
		return -FI_ENOSYS;
	}
}

/* ---- names ----------------------------------------------------------------- */

int lfv_copy_name(const void *name, size_t len, void *addr, size_t *addrlen)
{
	size_t room;

	if (!addrlen || (*addrlen && !addr))
		return -FI_EINVAL;
	room = *addrlen;
	*addrlen = len;
	if (room < len)
		return -FI_ETOOSMALL;
	memcpy(addr, name, len);
	return 0;
}

int lfv_opt_size(size_t value, void *optval, size_t *optlen)
{
	if (*optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = value;
	*optlen = sizeof(size_t);
	return 0;
}
