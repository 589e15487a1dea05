/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_rma and fi_atomic on MSG endpoints (lfv_msg_kind's rma_post): posted
 * on the endpoint's RC QP, with write with immediate data for remote CQ
 * data.
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
#include "lfv_msg_rma.h"
#include "lfv_rma.h"
#include "lfv_sge.h"

/* A note: the region's event index and what happened. */
#define LFV_NOTE_READ (1U << 31)	/* else a write */
#define LFV_NOTE_DATA_NEXT (1U << 30)	/* the next immediate is CQ data */
#define LFV_NOTE_RESERVED (~(LFV_NOTE_READ | LFV_NOTE_DATA_NEXT | \
			     LFV_KEY_INDEX_MAX))

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

/* A remote write with remote CQ data: its completion (the write's
 * length, as lfv_vcq_comp). */
static void lfv_msg_rma_data(const struct ibv_wc *wc, struct lfv_cq_comp *comp)
{
	*comp = (struct lfv_cq_comp){
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.len = wc->byte_len,
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
