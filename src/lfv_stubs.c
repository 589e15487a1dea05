/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <rdma/fi_collective.h>

#include <rdma/fi_cm.h>

#include "lfv_stubs.h"

LFV_STUB(int, lfv_no_bind, -FI_ENOSYS, struct fid *fid, struct fid *bfid,
	 uint64_t flags)
LFV_STUB(int, lfv_no_control, -FI_ENOSYS, struct fid *fid, int command,
	 void *arg)
LFV_STUB(int, lfv_no_ops_open, -FI_ENOSYS, struct fid *fid, const char *name,
	 uint64_t flags, void **ops, void *context)
LFV_STUB(int, lfv_no_tostr, -FI_ENOSYS, const struct fid *fid, char *buf,
	 size_t len)
LFV_STUB(int, lfv_no_ops_set, -FI_ENOSYS, struct fid *fid, const char *name,
	 uint64_t flags, void *ops, void *context)
LFV_STUB(int, lfv_no_query_collective, -FI_ENOSYS, struct fid_domain *domain,
	 enum fi_collective_op coll, struct fi_collective_attr *attr,
	 uint64_t flags)
LFV_STUB(int, lfv_no_av_set, -FI_ENOSYS, struct fid_av *av,
	 struct fi_av_set_attr *attr, struct fid_av_set **av_set,
	 void *context)

/* struct fi_ops_ep */
LFV_STUB(ssize_t, lfv_no_cancel, -FI_ENOSYS, fid_t fid, void *context)
LFV_STUB(int, lfv_no_getopt, -FI_ENOPROTOOPT, fid_t fid, int level,
	 int optname, void *optval, size_t *optlen)
LFV_STUB(int, lfv_no_setopt, -FI_ENOPROTOOPT, fid_t fid, int level,
	 int optname, const void *optval, size_t optlen)
LFV_STUB(int, lfv_no_tx_ctx, -FI_ENOSYS, struct fid_ep *sep, int index,
	 struct fi_tx_attr *attr, struct fid_ep **tx_ep, void *context)
LFV_STUB(int, lfv_no_rx_ctx, -FI_ENOSYS, struct fid_ep *sep, int index,
	 struct fi_rx_attr *attr, struct fid_ep **rx_ep, void *context)
LFV_STUB(ssize_t, lfv_no_size_left, -FI_ENOSYS, struct fid_ep *ep)

/* struct fi_ops_cm */
LFV_STUB(int, lfv_no_setname, -FI_ENOSYS, fid_t fid, void *addr,
	 size_t addrlen)
LFV_STUB(int, lfv_no_getname, -FI_ENOSYS, fid_t fid, void *addr,
	 size_t *addrlen)
LFV_STUB(int, lfv_no_getpeer, -FI_ENOSYS, struct fid_ep *ep, void *addr,
	 size_t *addrlen)
LFV_STUB(int, lfv_no_connect, -FI_ENOSYS, struct fid_ep *ep, const void *addr,
	 const void *param, size_t paramlen)
LFV_STUB(int, lfv_no_listen, -FI_ENOSYS, struct fid_pep *pep)
LFV_STUB(int, lfv_no_accept, -FI_ENOSYS, struct fid_ep *ep, const void *param,
	 size_t paramlen)
LFV_STUB(int, lfv_no_reject, -FI_ENOSYS, struct fid_pep *pep, fid_t handle,
	 const void *param, size_t paramlen)
LFV_STUB(int, lfv_no_shutdown, -FI_ENOSYS, struct fid_ep *ep, uint64_t flags)
LFV_STUB(int, lfv_no_join, -FI_ENOSYS, struct fid_ep *ep, const void *addr,
	 uint64_t flags, struct fid_mc **mc, void *context)

/* For objects with no name and no connection (shared contexts). */
struct fi_ops_cm lfv_no_cm_ops =
	LFV_NO_CONN_CM_OPS(lfv_no_setname, lfv_no_getname);

/* A fid that is part of another object (a peer CQ or counter handed out
 * by fi_export_fid): closing it does nothing, the object closes it. */
static int lfv_part_close(struct fid *fid)
{
	(void)fid;
	return 0;
}

struct fi_ops lfv_part_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_part_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

int lfv_part_export(struct fid *part, bool owned, uint64_t flags,
		    void *context, struct fid **out)
{
	if (flags)
		return -FI_EBADFLAGS;
	if (owned)
		return -FI_EINVAL;	/* a peer object holds nothing to share */
	part->context = context;
	*out = part;
	return 0;
}
