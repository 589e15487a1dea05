/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma on RC queue pairs: RDMA read and write, and remote CQ data. The
 * calls are decoded here for MSG and RDM endpoints alike (one table); each
 * transport posts: MSG endpoints on their QP, with write with immediate
 * data for remote CQ data (it consumes a receive posted at the target,
 * whose completion carries FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
 * RDM endpoints on their connection to the peer (lfv_rdm_rma.c). Keys are
 * rkeys and addresses virtual (FI_MR_PROV_KEY, FI_MR_VIRT_ADDR).
 *
 * FI_RMA_EVENT on MSG endpoints: a key with LFV_KEY_EVENT (lfv_prov.h)
 * names a region whose accesses the target counts. Every operation on
 * such a key is announced by a write with immediate data on the same QP,
 * whose immediate is a note (below): a write becomes one itself; a read
 * or an atomic is followed by a zero-byte one (the responder executes
 * requests in order, so the access is done when the note lands); a write
 * with remote CQ data is preceded by a zero-byte one that says the next
 * immediate is the data. The target's MSG endpoints receive into provider
 * buffers (FI_RMA_EVENT makes them buffered, lfv_brx.c), so notes never
 * take an application's receive; lfv_msg_rma_arrived reads them.
 */
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_mr.h"
#include "lfv_msg.h"
#include "lfv_rma.h"

#define LFV_RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA |      \
		       FI_FENCE | FI_MORE | FI_INJECT_COMPLETE |             \
		       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)

/* A note: the region's event index and what happened. */
#define LFV_NOTE_READ (1U << 31)	/* else a write */
#define LFV_NOTE_DATA_NEXT (1U << 30)	/* the next immediate is CQ data */
#define LFV_NOTE_RESERVED (~(LFV_NOTE_READ | LFV_NOTE_DATA_NEXT | \
			     LFV_KEY_INDEX_MAX))

bool lfv_wr_is_atomic(const struct ibv_send_wr *wr)
{
	return wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	       wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP;
}

/* Posts q's request with its note (FI_RMA_EVENT key): see the top. */
static ssize_t lfv_msg_rma_noted(struct lfv_ep *ep, struct lfv_rma_req *q,
				 size_t len)
{
	uint32_t note = lfv_key_index(q->key);
	/* Zero bytes at the operation's own address and key (an atomic's
	 * sit elsewhere in the work request's union). */
	struct ibv_send_wr nwr = {
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.wr.rdma.remote_addr = lfv_wr_is_atomic(&q->wr) ?
				       q->wr.wr.atomic.remote_addr :
				       q->wr.wr.rdma.remote_addr,
		.wr.rdma.rkey = (uint32_t)q->key,
	};

	if (q->wr.opcode == IBV_WR_RDMA_WRITE) {
		q->wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		q->wr.imm_data = htobe32(note);
		return lfv_tx_post(ep, &q->wr, &q->r, len);
	}
	if (q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
		nwr.imm_data = htobe32(note | LFV_NOTE_DATA_NEXT);
		return lfv_tx_post_noted(ep, &q->wr, &q->r, len, &nwr, true);
	}
	/* A read, an atomic fetch or compare read; a base atomic writes. */
	if (q->r.comp_flags & FI_READ)
		note |= LFV_NOTE_READ;
	nwr.imm_data = htobe32(note);
	return lfv_tx_post_noted(ep, &q->wr, &q->r, len, &nwr, false);
}

/* MSG endpoints: the endpoint's QP, registered local memory (FI_MR_LOCAL)
 * unless the data goes inline. */
ssize_t lfv_msg_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct ibv_sge sge[LFV_MAX_SGE];
	bool inject = q->r.flags & FI_INJECT;
	size_t len;
	int nsge;

	if (ep->type != FI_EP_MSG)
		return -FI_ENOSYS;
	/* The immediate data would take a receive the application was not
	 * told to post (FI_RX_CQ_DATA, lfv_getinfo.c); an FI_RMA_EVENT
	 * target's receives are the provider's. */
	if (q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM &&
	    !(ep->base.info->mode & FI_RX_CQ_DATA) && !lfv_key_is_event(q->key))
		return -FI_EOPNOTSUPP;
	if (q->r.count > ep->base.info->tx_attr->iov_limit ||
	    q->r.count > LFV_MAX_SGE)
		return -FI_EINVAL;
	if (lfv_wr_is_atomic(&q->wr)) {
		if (ep->base.domain->dev->attr.atomic_cap == IBV_ATOMIC_NONE)
			return -FI_EOPNOTSUPP;
		if (!ep->qp || !ep->amo_mr)
			return -FI_EOPBADSTATE; /* not enabled */
	}
	nsge = lfv_fill_sge(sge, q->r.iov, q->r.desc, q->r.count, inject,
			    &len);
	if (nsge < 0)
		return nsge;
	if (inject && len > ep->inject_size)
		return -FI_EINVAL;
	if (lfv_wr_is_atomic(&q->wr) && !nsge) {
		/* A result nobody asked for. */
		sge[0] = (struct ibv_sge){ .addr = (uintptr_t)&ep->amo_sink,
					   .length = sizeof(uint64_t),
					   .lkey = ep->amo_mr->lkey };
		nsge = 1;
		len = sizeof(uint64_t);
	}
	if (q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		q->wr.imm_data = htobe32((uint32_t)q->r.data);
	q->wr.sg_list = sge;
	q->wr.num_sge = nsge;
	/* The only cost of FI_RMA_EVENT to other keys: this test. */
	if (q->key > UINT32_MAX)
		return lfv_msg_rma_noted(ep, q, len);
	return lfv_tx_post(ep, &q->wr, &q->r, len);
}

/* A remote write with remote CQ data: its completion. */
static void lfv_msg_rma_data(const struct ibv_wc *wc, struct lfv_cq_comp *comp)
{
	*comp = (struct lfv_cq_comp){
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.data = be32toh(wc->imm_data),
		.src = FI_ADDR_NOTAVAIL,
	};
}

/* Counts an announced access in the region's counter and, when the
 * announcement names a region of this domain, in the endpoint's. */
static void lfv_msg_rma_count(struct lfv_ep *ep, uint32_t index,
			      uint64_t len, uint64_t flags)
{
	if (lfv_mr_event(ep->base.domain, index, -1, UINT64_MAX, len, flags))
		return;
	lfv_cntr_count((flags & FI_REMOTE_READ) ? ep->base.cntr[LFV_CNTR_RREAD] :
		       ep->base.cntr[LFV_CNTR_RWRITE], true);
}

size_t lfv_msg_rma_arrived(struct lfv_ep *ep, const struct ibv_wc *wc,
			   struct lfv_cq_comp *comp)
{
	uint32_t note = be32toh(wc->imm_data);

	if (!ep->base.domain->rma_event || ep->ev_data_next) {
		/* Remote CQ data (behind its note on an event endpoint). */
		if (ep->ev_data_next)
			lfv_msg_rma_count(ep, ep->ev_data_index, wc->byte_len,
					  FI_REMOTE_WRITE);
		else
			lfv_cntr_count(ep->base.cntr[LFV_CNTR_RWRITE], true);
		ep->ev_data_next = false;
		lfv_msg_rma_data(wc, comp);
		return 1;
	}
	if (note & LFV_NOTE_RESERVED) {
		/* Not a note of ours: dropped (and counted) as one naming
		 * no region. */
		lfv_mr_event(ep->base.domain, UINT32_MAX, -1, UINT64_MAX, 0, 0);
		return 0;
	}
	if (note & LFV_NOTE_DATA_NEXT) {
		ep->ev_data_next = true;
		ep->ev_data_index = note & LFV_KEY_INDEX_MAX;
		return 0;
	}
	lfv_msg_rma_count(ep, note & LFV_KEY_INDEX_MAX,
			  (note & LFV_NOTE_READ) ? 0 : wc->byte_len,
			  (note & LFV_NOTE_READ) ? FI_REMOTE_READ :
						   FI_REMOTE_WRITE);
	return 0;
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

static ssize_t lfv_rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, uint64_t addr,
			    uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .dest = src_addr,
		.context = context, .flags = lfv_rma_in_op_flags(ep_fid),
		.comp_flags = FI_RMA | FI_READ,
	};

	return lfv_rma_post(ep_fid, &r, true, addr, key);
}

static ssize_t lfv_rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = src_addr,
		.context = context, .flags = lfv_rma_in_op_flags(ep_fid),
		.comp_flags = FI_RMA | FI_READ,
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_rma_post(ep_fid, &r, true, addr, key);
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
	return lfv_rma_post(ep_fid, &r, true, msg->rma_iov[0].addr,
			    msg->rma_iov[0].key);
}

static ssize_t lfv_rma_write(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest_addr,
		.context = context, .flags = lfv_rma_op_flags(ep_fid),
		.comp_flags = FI_RMA | FI_WRITE,
	};

	return lfv_rma_post(ep_fid, &r, false, addr, key);
}

static ssize_t lfv_rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key, void *context)
{
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = dest_addr,
		.context = context, .flags = lfv_rma_op_flags(ep_fid),
		.comp_flags = FI_RMA | FI_WRITE,
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_rma_post(ep_fid, &r, false, addr, key);
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
	return lfv_rma_post(ep_fid, &r, false,
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
	struct lfv_tx_req r = {
		.iov = &iov, .count = 1, .data = data, .dest = dest_addr,
		.flags = FI_INJECT | FI_REMOTE_CQ_DATA,
		.comp_flags = FI_RMA | FI_WRITE, .no_report = true,
	};

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
