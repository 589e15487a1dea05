/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma on RC queue pairs: RDMA read and write, and write with immediate
 * data for remote CQ data (it consumes a receive posted at the target,
 * whose completion carries FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA).
 * Keys are rkeys and addresses virtual (FI_MR_PROV_KEY, FI_MR_VIRT_ADDR).
 */
#include "lfv_ep.h"

#define LFV_RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA |      \
		       FI_FENCE | FI_MORE | FI_INJECT_COMPLETE |             \
		       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

static ssize_t lfv_rma_post(struct lfv_ep *ep, const struct lfv_tx_req *r,
			    bool read, uint64_t addr, uint64_t key)
{
	struct ibv_sge sge[LFV_MAX_SGE];
	struct ibv_send_wr wr = { 0 };
	bool inject = r->flags & FI_INJECT;
	size_t len;
	int nsge;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	if (r->count > ep->info->tx_attr->iov_limit || r->count > LFV_MAX_SGE)
		return -FI_EINVAL;
	if (read && (inject || (r->flags & FI_REMOTE_CQ_DATA)))
		return -FI_EINVAL;
	nsge = lfv_fill_sge(sge, r->iov, r->desc, r->count, inject, &len);
	if (nsge < 0)
		return nsge;
	if (inject && len > ep->inject_size)
		return -FI_EINVAL;
	if (key > UINT32_MAX)
		return -FI_EINVAL;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = (uint32_t)key;
	if (read) {
		wr.opcode = IBV_WR_RDMA_READ;
	} else if (r->flags & FI_REMOTE_CQ_DATA) {
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32((uint32_t)r->data);
	} else {
		wr.opcode = IBV_WR_RDMA_WRITE;
	}
	return lfv_tx_post(ep, &wr, r, len);
}

static ssize_t lfv_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .dest = src_addr,
		.context = context, .flags = lfv_op_flags(ep_fid, true),
		.comp_flags = FI_RMA | FI_READ,
	};

	return lfv_rma_post(ep, &r, true, addr, key);
}

static ssize_t lfv_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = src_addr,
		.context = context, .flags = lfv_op_flags(ep_fid, true),
		.comp_flags = FI_RMA | FI_READ,
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_rma_post(ep, &r, true, addr, key);
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

static ssize_t lfv_rma_readmsg(struct fid_ep *ep_fid,
			       const struct fi_msg_rma *msg, uint64_t flags)
{
	struct lfv_tx_req r;
	int ret = lfv_rma_msg_check(msg, flags);

	if (ret)
		return ret;
	r = (struct lfv_tx_req){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .dest = msg->addr,
		.context = msg->context, .flags = flags,
		.comp_flags = FI_RMA | FI_READ,
	};
	return lfv_rma_post(lfv_ep_of(ep_fid), &r, true, msg->rma_iov[0].addr,
			    msg->rma_iov[0].key);
}

static ssize_t lfv_rma_write(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest_addr,
		.context = context, .flags = lfv_op_flags(ep_fid, true),
		.comp_flags = FI_RMA | FI_WRITE,
	};

	return lfv_rma_post(ep, &r, false, addr, key);
}

static ssize_t lfv_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = dest_addr,
		.context = context, .flags = lfv_op_flags(ep_fid, true),
		.comp_flags = FI_RMA | FI_WRITE,
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_rma_post(ep, &r, false, addr, key);
}

static ssize_t lfv_rma_writemsg(struct fid_ep *ep_fid,
				const struct fi_msg_rma *msg, uint64_t flags)
{
	struct lfv_tx_req r;
	int ret = lfv_rma_msg_check(msg, flags);

	if (ret)
		return ret;
	r = (struct lfv_tx_req){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .data = msg->data, .dest = msg->addr,
		.context = msg->context, .flags = flags,
		.comp_flags = FI_RMA | FI_WRITE,
	};
	return lfv_rma_post(lfv_ep_of(ep_fid), &r, false,
			    msg->rma_iov[0].addr, msg->rma_iov[0].key);
}

static ssize_t lfv_rma_inject(struct fid_ep *ep_fid, const void *buf,
			      size_t len, fi_addr_t dest_addr, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .count = 1, .dest = dest_addr,
		.flags = FI_INJECT, .comp_flags = FI_RMA | FI_WRITE,
		.no_report = true,
	};

	return lfv_rma_post(lfv_ep_of(ep_fid), &r, false, addr, key);
}

static ssize_t lfv_rma_writedata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest_addr, uint64_t addr,
				 uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .data = data,
		.dest = dest_addr, .context = context,
		.flags = lfv_op_flags(ep_fid, true) | FI_REMOTE_CQ_DATA,
		.comp_flags = FI_RMA | FI_WRITE,
	};

	return lfv_rma_post(ep, &r, false, addr, key);
}

static ssize_t lfv_rma_injectdata(struct fid_ep *ep_fid, const void *buf,
				  size_t len, uint64_t data,
				  fi_addr_t dest_addr, uint64_t addr,
				  uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .count = 1, .data = data, .dest = dest_addr,
		.flags = FI_INJECT | FI_REMOTE_CQ_DATA,
		.comp_flags = FI_RMA | FI_WRITE, .no_report = true,
	};

	return lfv_rma_post(lfv_ep_of(ep_fid), &r, false, addr, key);
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
