/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma on RC queue pairs: RDMA read and write, and remote CQ data. The
 * calls are decoded here for MSG and RDM endpoints alike (one table); each
 * transport posts: MSG endpoints on their QP, with write with immediate
 * data for remote CQ data (it consumes a receive posted at the target,
 * whose completion carries FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
 * RDM endpoints on their connection to the peer (lfv_rdm_rma.c). Keys are
 * rkeys and addresses virtual (FI_MR_PROV_KEY, FI_MR_VIRT_ADDR).
 */
#include "lfv_ep_base.h"
#include "lfv_mr.h"
#include "lfv_rma.h"

#define LFV_RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA |      \
		       FI_FENCE | FI_MORE | FI_INJECT_COMPLETE |             \
		       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

bool lfv_wr_is_atomic(const struct ibv_send_wr *wr)
{
	return wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	       wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/* Checks what every transport needs, then hands q to the endpoint's. */
ssize_t lfv_rma_submit(struct fid_ep *ep_fid, struct lfv_rma_req *q)
{
	bool read = q->wr.opcode == IBV_WR_RDMA_READ;

	if (read && (q->r.flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	/* rkeys are 32 bits; an FI_RMA_EVENT key has its bit and index
	 * above (lfv_prov.h). */
	if (q->key > UINT32_MAX && !lfv_key_is_event(q->key))
		return -FI_EINVAL;
	/* The endpoint type's transport posts it (MSG: lfv_msg_rma_post,
	 * RDM: lfv_rdm_rma_post). */
	return lfv_ep_base_of(&ep_fid->fid)->type->rma_post(ep_fid, q);
}

/* The default transmit flags of the endpoint (or alias) called. */
uint64_t lfv_rma_op_flags(struct fid_ep *ep_fid)
{
	return lfv_ep_op_flags(ep_fid, true);
}

/* The default flags of a call with no outbound buffer to give back: a read,
 * or an atomic (its operand goes in the work request at the call). A
 * default FI_INJECT asks nothing more of it, and must not make a read
 * fail or an atomic go without its completion (lfv_amo_post). */
uint64_t lfv_rma_in_op_flags(struct fid_ep *ep_fid)
{
	return lfv_rma_op_flags(ep_fid) & ~(uint64_t)FI_INJECT;
}

/* An RDMA read or write of r's iovs at (addr, key). */
static ssize_t lfv_rma_post(struct fid_ep *ep_fid, const struct lfv_tx_req *r,
			    bool read, uint64_t addr, uint64_t key)
{
	struct lfv_rma_req q = { .r = *r, .key = key };

	q.wr.wr.rdma.remote_addr = addr;
	q.wr.wr.rdma.rkey = (uint32_t)key;
	if (read)
		q.wr.opcode = IBV_WR_RDMA_READ;
	else if (r->flags & FI_REMOTE_CQ_DATA)
		q.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	else
		q.wr.opcode = IBV_WR_RDMA_WRITE;
	return lfv_rma_submit(ep_fid, &q);
}

/* fi_readv and fi_writev: the two differ in their default op flags (a read
 * sends no buffer, so no FI_INJECT) and completion flags only. */
static ssize_t lfv_rma_postv(struct fid_ep *ep_fid, bool read,
			     const struct iovec *iov, void **desc,
			     size_t count, fi_addr_t peer, uint64_t addr,
			     uint64_t key, void *context)
{
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = peer,
		.context = context,
		.flags = read ? lfv_rma_in_op_flags(ep_fid) :
				lfv_rma_op_flags(ep_fid),
		.comp_flags = FI_RMA | (read ? FI_READ : FI_WRITE),
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_rma_post(ep_fid, &r, read, addr, key);
}

static ssize_t lfv_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	return lfv_rma_postv(ep_fid, true, iov, desc, count, src_addr, addr,
			     key, context);
}

/* One buffer: an iov of one. */
static ssize_t lfv_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return lfv_rma_readv(ep_fid, &iov, &desc, 1, src_addr, addr, key,
			     context);
}

/* One remote segment: verbs has one remote address per work request. */
static int lfv_rma_msg_check(const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg || (msg->iov_count && !msg->msg_iov) ||
	    msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_RMA_FLAGS)
		return -FI_EBADFLAGS;
	return 0;
}

/* fi_readmsg and fi_writemsg: a read carries no CQ data. */
static ssize_t lfv_rma_postmsg(struct fid_ep *ep_fid, bool read,
			       const struct fi_msg_rma *msg, uint64_t flags)
{
	struct lfv_tx_req r;
	int ret = lfv_rma_msg_check(msg, flags);

	if (ret)
		return ret;
	r = (struct lfv_tx_req){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .data = read ? 0 : msg->data,
		.dest = msg->addr, .context = msg->context, .flags = flags,
		.comp_flags = FI_RMA | (read ? FI_READ : FI_WRITE),
	};
	return lfv_rma_post(ep_fid, &r, read, msg->rma_iov[0].addr,
			    msg->rma_iov[0].key);
}

static ssize_t lfv_rma_readmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_rma *msg, uint64_t flags)
{
	return lfv_rma_postmsg(ep_fid, true, msg, flags);
}

static ssize_t lfv_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	return lfv_rma_postv(ep_fid, false, iov, desc, count, dest_addr, addr,
			     key, context);
}

static ssize_t lfv_rma_write(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rma_writev(ep_fid, &iov, &desc, 1, dest_addr, addr, key,
			      context);
}

static ssize_t lfv_rma_writemsg(struct fid_ep *ep_fid,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	return lfv_rma_postmsg(ep_fid, false, msg, flags);
}

static ssize_t lfv_rma_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest_addr, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = lfv_inject_req(&iov, dest_addr, 0, 0,
					     FI_RMA | FI_WRITE);

	return lfv_rma_post(ep_fid, &r, false, addr, key);
}

static ssize_t lfv_rma_writedata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .data = data,
		.dest = dest_addr, .context = context,
		.flags = lfv_rma_op_flags(ep_fid) | FI_REMOTE_CQ_DATA,
		.comp_flags = FI_RMA | FI_WRITE,
	};

	return lfv_rma_post(ep_fid, &r, false, addr, key);
}

static ssize_t lfv_rma_injectdata(struct fid_ep *ep_fid, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr, uint64_t addr,
				  uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = lfv_inject_req(&iov, dest_addr, data,
					     FI_REMOTE_CQ_DATA,
					     FI_RMA | FI_WRITE);

	return lfv_rma_post(ep_fid, &r, false, addr, key);
}

struct fi_ops_rma lfv_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lfv_rma_read,
	.readv = lfv_rma_readv,
	.readmsg = lfv_rma_readmsg,
	.write = lfv_rma_write,
	.writev = lfv_rma_writev,
	.writemsg = lfv_rma_writemsg,
	.inject = lfv_rma_inject,
	.writedata = lfv_rma_writedata,
	.injectdata = lfv_rma_injectdata,
};
