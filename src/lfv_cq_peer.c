/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ's two peer roles (fi_peer(3)): a peer CQ (FI_PEER) holds no
 * entries (lfv_cq.c's writers forward them to its owner's CQ) and reads
 * only to drive progress; every other CQ is an owner and exports a
 * fid_peer_cq whose owner_ops write into it.
 */
#include <rdma/fi_errno.h>

#include "lfv_cq.h"
#include "lfv_cq_peer.h"
#include "lfv_stubs.h"

/* ---- the peer role: a peer CQ's reads ------------------------------------- */

static ssize_t lfv_cq_peer_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	/* fi_peer(3): the owner calls fi_cq_read(peer, NULL, 0) to drive the
	 * peer's progress; the entries themselves are in the owner's CQ. */
	if (buf || count)
		return -FI_ENOSYS;
	lfv_progress_run(&lfv_cq_from_fid(cq_fid)->progress);
	return 0;
}

LFV_STUB(static ssize_t, lfv_cq_peer_readfrom, -FI_ENOSYS,
	 struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr)
LFV_STUB(static ssize_t, lfv_cq_peer_readerr, -FI_ENOSYS,
	 struct fid_cq *cq_fid, struct fi_cq_err_entry *buf, uint64_t flags)
LFV_STUB(static ssize_t, lfv_cq_peer_sread, -FI_ENOSYS, struct fid_cq *cq_fid,
	 void *buf, size_t count, const void *cond, int timeout)
LFV_STUB(static ssize_t, lfv_cq_peer_sreadfrom, -FI_ENOSYS,
	 struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr,
	 const void *cond, int timeout)
LFV_STUB(static int, lfv_cq_peer_signal, -FI_ENOSYS, struct fid_cq *cq_fid)

/* ---- the owner role: the exported fid_peer_cq ------------------------------- */

static struct lfv_cq *lfv_cq_from_peer(struct fid_peer_cq *peer_cq)
{
	return lfv_container_of(peer_cq, struct lfv_cq, peer_cq);
}

static ssize_t lfv_cq_owner_write(struct fid_peer_cq *peer_cq, void *context,
				  uint64_t flags, size_t len, void *buf,
				  uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct lfv_cq_comp comp = {
		.context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .src = src,
	};

	return lfv_cq_write(lfv_cq_from_peer(peer_cq), &comp);
}

static ssize_t lfv_cq_owner_writeerr(struct fid_peer_cq *peer_cq,
				     const struct fi_cq_err_entry *err)
{
	if (!err)
		return -FI_EINVAL;
	return lfv_cq_write_err(lfv_cq_from_peer(peer_cq), err);
}

static struct fi_ops_cq_owner lfv_cq_owner_ops = {
	.size = sizeof(struct fi_ops_cq_owner),
	.write = lfv_cq_owner_write,
	.writeerr = lfv_cq_owner_writeerr,
};

int lfv_cq_export(struct lfv_cq *cq, struct fi_fid_export *exp)
{
	if (!exp || !exp->fid || !lfv_peer_allowed())
		return -FI_EINVAL;
	return lfv_part_export(&cq->peer_cq.fid, cq->owner != NULL, exp->flags,
			       exp->context, exp->fid);
}

struct fi_ops_cq lfv_cq_peer_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfv_cq_peer_read,
	.readfrom = lfv_cq_peer_readfrom,
	.readerr = lfv_cq_peer_readerr,
	.sread = lfv_cq_peer_sread,
	.sreadfrom = lfv_cq_peer_sreadfrom,
	.signal = lfv_cq_peer_signal,
	.strerror = lfv_cq_strerror,
};

int lfv_cq_peer_owner(void *context, struct fid_peer_cq **owner)
{
	struct fi_peer_cq_context *peer = context;

	if (!peer || peer->size < sizeof(*peer) || !peer->cq ||
	    !peer->cq->owner_ops || !peer->cq->owner_ops->write ||
	    !peer->cq->owner_ops->writeerr)
		return -FI_EINVAL;
	*owner = peer->cq;
	return 0;
}

void lfv_cq_init_export(struct lfv_cq *cq)
{
	cq->peer_cq.fid.fclass = FI_CLASS_PEER_CQ;
	/* The exported fid belongs to the CQ: closing it is a no-op. */
	cq->peer_cq.fid.ops = &lfv_part_fi_ops;
	cq->peer_cq.owner_ops = &lfv_cq_owner_ops;
}
