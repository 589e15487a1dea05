/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM: fi_rma and fi_atomic. lfv_rma.c and lfv_amo.c decode the
 * calls (for MSG endpoints too); here they become work requests on the
 * connection to the peer, made on demand like a send's and posted in call
 * order with the sends to that peer.
 *
 * RDM needs no FI_MR_LOCAL, so local memory comes three ways: the
 * application's registrations when every segment has one; else, up to
 * the eager size, the transmit request's own registered buffer (a write's
 * data is copied in at the call, a read's or an atomic's result copied out
 * at its completion); else registrations of ours, from the domain's cache
 * (lfv_reg_get).
 *
 * Remote CQ data (64 bits) goes in a WDATA message right behind the write
 * on the same QP (lfv_rdm_proto.h); the request completes when both have. An
 * RMA to an FI_RMA_EVENT key sends an EVENT message there instead, which
 * carries the CQ data too (lfv_rdm_proto.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_lock_order.h"
#include "lfv_log.h"
#include "lfv_mr.h"
#include "lfv_queue.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_rma.h"
#include "lfv_rdm_tx.h"
#include "lfv_rma.h"
#include "lfv_vcq.h"

/* Where the local data of the request lives. */
enum lfv_rdm_rma_mem { LFV_RMA_APP, LFV_RMA_BOUNCE, LFV_RMA_OURS };

static bool lfv_rdm_rma_all_desc(const struct lfv_tx_req *r)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		if (r->iov[i].iov_len && (!r->desc || !r->desc[i]))
			return false;
	return true;
}

static int lfv_rdm_rma_check(const struct lfv_rdm_ep *ep,
			     const struct lfv_rma_req *q, size_t len)
{
	size_t i;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (q->r.count > ep->base.info->tx_attr->iov_limit ||
	    (q->r.count && !q->r.iov))
		return -FI_EINVAL;
	for (i = 0; i < q->r.count; i++)
		if (q->r.iov[i].iov_len && !q->r.iov[i].iov_base)
			return -FI_EINVAL;
	if (lfv_wr_is_atomic(&q->wr) &&
	    ep->base.domain->dev->attr.atomic_cap == IBV_ATOMIC_NONE)
		return -FI_EOPNOTSUPP;
	if ((q->r.flags & FI_INJECT) && len > ep->base.info->tx_attr->inject_size)
		return -FI_EINVAL;
	/* An EVENT message goes inline (struct lfv_rdm_rma). */
	if (q->key > UINT32_MAX &&
	    ep->max_inline < sizeof(((struct lfv_rdm_rma *)0)->note))
		return -FI_EOPNOTSUPP;
	if (len > ep->base.info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	return 0;
}

static void lfv_rdm_rma_unreg(struct lfv_rdm_ep *ep, struct lfv_rdm_rma *rma)
{
	lfv_rdm_regs_put(ep, rma->regs);
}
/* The segments of the application's memory: its keys, or registrations
 * of ours (a system call: not under ep->lock). */
static int lfv_rdm_rma_segs(struct lfv_rdm_ep *ep, struct lfv_rdm_rma *rma,
			    const struct lfv_tx_req *r)
{
	size_t got;

	return lfv_rdm_segs(ep, r->iov, r->desc, r->count, SIZE_MAX,
			    rma->seg, &rma->nseg, rma->regs, &got);
}

/* The request's own buffer, behind the header that remote CQ data
 * uses: a write's data goes in now; a read's lands there. */
static void lfv_rdm_rma_bounce(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			       const struct lfv_tx_req *t, size_t len,
			       bool into_app)
{
	struct lfv_rdm_rma *rma = &r->rma;
	uint8_t *data = r->buf + LFV_RDM_HDR_SIZE;
	size_t i;

	rma->nout = 0;
	for (i = 0; i < t->count; i++) {
		if (!t->iov[i].iov_len)
			continue;
		if (into_app)
			rma->out[rma->nout++] = t->iov[i];
		else
			memcpy(data, t->iov[i].iov_base, t->iov[i].iov_len);
		data += t->iov[i].iov_len;
	}
	rma->seg[0] = (struct lfv_rdm_seg){
		.addr = (uintptr_t)(r->buf + LFV_RDM_HDR_SIZE),
		.len = len, .lkey = ep->mr->lkey,
	};
	rma->nseg = len ? 1 : 0;
}

static void lfv_rdm_rma_sink(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	r->rma.seg[0] = (struct lfv_rdm_seg){
		.addr = (uintptr_t)(r->buf + LFV_RDM_HDR_SIZE),
		.len = sizeof(uint64_t), .lkey = ep->mr->lkey,
	};
	r->rma.nseg = 1;
}

static size_t lfv_min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Whether a work request follows the data: a message (notify) or a
 * zero-byte write (vouch). */
static bool lfv_rdm_rma_followed(const struct lfv_rdm_rma *rma)
{
	return rma->notify || rma->vouch;
}

/* The message that follows the request's last work request: remote CQ
 * data (WDATA, in the request's buffer), or the note in the request (an
 * RMA event's EVENT, a rendezvous's WDONE), sent inline. */
static void lfv_rdm_rma_note_wr(struct lfv_rdm_req *r, struct ibv_send_wr *wr,
				struct ibv_sge *sge)
{
	struct lfv_rdm_rma *rma = &r->rma;

	*sge = (struct ibv_sge){
		.addr = (uintptr_t)(rma->note_len ? (void *)&rma->note : r->buf),
		.length = rma->note_len ? rma->note_len : LFV_RDM_HDR_SIZE,
	};
	*wr = (struct ibv_send_wr){
		.wr_id = (uintptr_t)&r->op, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	};
}

/*
 * Posts the request's chunks (of at most the port's max_msg_sz: reads
 * and writes have verbs' limit, atomics are one) while the connection has
 * room, and behind the last one the WDATA or EVENT message, or for a read
 * or an atomic without one a zero-byte write; 0 once all are posted,
 * -FI_EAGAIN while some wait. Caller holds ep->lock.
 *
 * Why the write: a read's or an atomic's success is believed only once a
 * later work request on the QP has succeeded too. Soft-RoCE (Linux 6.1's
 * rxe_comp.c, COMPST_ERROR with the status never set) completes the
 * request at the head of its send queue with success on the path that then
 * puts the QP in error, a read's data partly written (issue 17, and
 * lfv_rdm_post_read for rendezvous): the write behind it is then flushed,
 * and the request completes in error.
 */
int lfv_rdm_rma_post_wr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			struct lfv_rdm_req *r)
{
	struct lfv_rdm_rma *rma = &r->rma;
	struct ibv_sge sge[LFV_RDM_MAX_IOV], hsge;
	struct ibv_send_wr wr, note, *bad;
	bool atomic = lfv_wr_is_atomic(&rma->wr), last;
	uint32_t behind = lfv_rdm_rma_followed(rma);
	size_t n;
	int ret;

	lfv_spin_assert_held(&ep->lock);
	if (rma->notify)
		lfv_rdm_rma_note_wr(r, &note, &hsge);
	else if (rma->vouch)
		note = lfv_rdm_vouch_wr((uintptr_t)&r->op);
	do {
		n = atomic ? rma->len : lfv_min_size(rma->len - rma->off,
						      ep->max_rdma);
		last = rma->off + n == rma->len;
		if (c->posted + 1 + (last && behind) > LFV_RDM_SQ_DEPTH)
			return -FI_EAGAIN;
		wr = rma->wr;
		wr.wr_id = (uintptr_t)&r->op;
		wr.sg_list = sge;
		wr.num_sge = lfv_rdm_slice(rma->seg, rma->nseg,
					   atomic ? 0 : rma->off,
					   atomic ? sizeof(uint64_t) : n, sge);
		if (!atomic)
			wr.wr.rdma.remote_addr += rma->off;
		if (rma->off) /* only the first chunk waits for a fence */
			wr.send_flags &= ~(unsigned int)IBV_SEND_FENCE;
		wr.send_flags |= IBV_SEND_SIGNALED;
		wr.next = last && behind ? &note : NULL;
		lfv_tsan_posted(wr.wr_id);
		ret = ibv_post_send(c->qp, &wr, &bad);
		if (ret)
			return lfv_post_ret(ret);
		c->posted += 1 + (last && behind);
		rma->posted += 1 + (last && behind);
		rma->off += n;
	} while (!last);
	return 0;
}

/* The connection failed before all of the request was posted. Caller
 * holds ep->lock. True: nothing is in flight, the caller reports it now; false:
 * the completions of what was posted (flushed in error) finish it. */
bool lfv_rdm_rma_abort(struct lfv_rdm_req *r, int err)
{
	struct lfv_rdm_rma *rma = &r->rma;

	if (!rma->err)
		rma->err = err;
	if (!rma->posted)
		return true;
	/* Completions still to come: those of what was posted and has not
	 * completed yet (wrs - cqes have). */
	rma->cqes = rma->posted - (rma->wrs - rma->cqes);
	return !rma->cqes;
}

/* Gives back what the request holds of its own (ep->lock held or not). */
void lfv_rdm_rma_release(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_rdm_rma_unreg(ep, &r->rma);
	r->rma.nout = 0;
}

static void lfv_rdm_rma_copy_out(struct lfv_rdm_req *r)
{
	const uint8_t *data = r->buf + LFV_RDM_HDR_SIZE;
	size_t i;

	for (i = 0; i < r->rma.nout; i++) {
		memcpy(r->rma.out[i].iov_base, data, r->rma.out[i].iov_len);
		data += r->rma.out[i].iov_len;
	}
}

/* Counts one of the request's completions: whether it was the last; the
 * request's error so far in *err. */
static bool lfv_rdm_rma_counted(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
				const struct ibv_wc *wc, int *err)
{
	bool ok = wc->status == IBV_WC_SUCCESS, done;

	lfv_spin_lock(&ep->lock);
	if (!ok && !r->rma.err)
		r->rma.err = lfv_rdm_wc_err(r->conn, wc);
	done = !--r->rma.cqes;
	/* Under the lock: lfv_rdm_rma_abort writes it under it. */
	*err = r->rma.err;
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, r->conn, ok);
	return done;
}

/* One of a rendezvous push's completions (its writes', its WDONE's): the
 * last is the send's rendezvous event. */
void lfv_rdm_push_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct ibv_wc *wc)
{
	int err;

	if (lfv_rdm_rma_counted(ep, r, wc, &err))
		lfv_rdm_rndv_event(ep, r, err);
}

/* One of the request's completions (the operation's, the WDATA's). */
void lfv_rdm_rma_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			    const struct ibv_wc *wc)
{
	int err;

	if (!lfv_rdm_rma_counted(ep, r, wc, &err))
		return;
	if (!err)
		lfv_rdm_rma_copy_out(r);
	lfv_rdm_rma_release(ep, r);
	lfv_rdm_tx_done(ep, r, err, err ? (int)wc->status : 0);
	lfv_spin_lock(&ep->lock);
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
}

/* Work requests of the operation: one per max_msg_sz bytes (one for an
 * atomic or an empty write). */
static size_t lfv_rdm_rma_chunks(const struct lfv_rdm_ep *ep,
				 const struct lfv_rdm_rma *rma)
{
	if (!rma->len)
		return 1;
	return (rma->len + ep->max_rdma - 1) / ep->max_rdma;
}

/* The work requests of rma (its len, notify and vouch set), all still to
 * post and complete. */
static void lfv_rdm_rma_count(const struct lfv_rdm_ep *ep,
			      struct lfv_rdm_rma *rma)
{
	rma->wrs = (uint32_t)lfv_rdm_rma_chunks(ep, rma) +
		   lfv_rdm_rma_followed(rma);
	rma->cqes = rma->wrs;
	rma->posted = 0;
}

/* A rendezvous send that a CTS asked to write (lfv_rdm_proto.h): n bytes
 * of its payload (the address its RTS gave, src_lkey) to the receiver's
 * buffer, WDONE {rcookie, n} behind them; the writes and WDONE complete
 * as an RMA's, the last finishing the send (lfv_rdm_push_completion).
 * ep->lock held; r is not posted until its kind is K_PUSH. */
void lfv_rdm_push_fill(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
		       const struct lfv_rdm_cts *cts)
{
	const struct lfv_rdm_rts *rts = (const struct lfv_rdm_rts *)
		(r->buf + LFV_RDM_HDR_SIZE);
	struct lfv_rdm_rma *rma = &r->rma;

	lfv_spin_assert_held(&ep->lock);
	memset(rma, 0, sizeof(*rma));
	rma->wr = (struct ibv_send_wr){
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = cts->addr, .rkey = cts->rkey },
	};
	rma->seg[0] = (struct lfv_rdm_seg){
		.addr = rts->addr, .len = cts->len, .lkey = r->src_lkey,
	};
	rma->nseg = cts->len ? 1 : 0;
	rma->len = cts->len;
	rma->notify = true;
	rma->note.hdr = (struct lfv_rdm_hdr){
		.op = LFV_RDM_WDONE, .tag = cts->rcookie, .cq_data = cts->len,
	};
	rma->note_len = sizeof(rma->note.hdr);
	lfv_rdm_rma_count(ep, rma);
}

/* The EVENT message that follows an RMA to an FI_RMA_EVENT key. */
static void lfv_rdm_rma_event_note(struct lfv_rdm_rma *rma,
				   const struct lfv_rma_req *q, size_t len)
{
	bool atomic = lfv_wr_is_atomic(&q->wr);
	bool data = q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

	rma->note.hdr = (struct lfv_rdm_hdr){
		.op = LFV_RDM_EVENT,
		.flags = (data ? LFV_RDM_HDR_DATA : 0) |
			 ((q->r.comp_flags & FI_READ) ? LFV_RDM_HDR_READ : 0),
		.len = sizeof(rma->note.ev),
		.tag = atomic ? sizeof(uint64_t) : len,
		.cq_data = data ? q->r.data : 0,
	};
	rma->note.ev = (struct lfv_rdm_event){
		.key = q->key,
		.addr = atomic ? q->wr.wr.atomic.remote_addr :
				 q->wr.wr.rdma.remote_addr,
	};
	rma->note_len = sizeof(rma->note);
}

/* Fills the request for q: the work request, the local memory, the WDATA
 * header. */
static void lfv_rdm_rma_fill(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct lfv_rma_req *q,
			     const struct lfv_rdm_rma *mem,
			     enum lfv_rdm_rma_mem how, size_t len)
{
	struct lfv_rdm_rma *rma = &r->rma;
	bool into_app = q->wr.opcode != IBV_WR_RDMA_WRITE &&
			q->wr.opcode != IBV_WR_RDMA_WRITE_WITH_IMM;
	bool report = lfv_rdm_tx_wanted(ep, q->r.no_report, q->r.flags);
	bool event = q->key > UINT32_MAX;	/* FI_RMA_EVENT key */

	*rma = *mem;
	if (how == LFV_RMA_BOUNCE)
		lfv_rdm_rma_bounce(ep, r, &q->r, len, into_app);
	else if (lfv_wr_is_atomic(&q->wr) && !rma->nseg)
		lfv_rdm_rma_sink(ep, r);	/* a result nobody wants */
	rma->wr = q->wr;
	rma->wr.send_flags = (q->r.flags & FI_FENCE) ? IBV_SEND_FENCE : 0;
	rma->note_len = 0;	/* lfv_rdm_rma_event_note sets it */
	rma->notify = q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
		      event;
	rma->vouch = into_app && !rma->notify;
	if (event)
		lfv_rdm_rma_event_note(rma, q, len);
	else if (rma->notify)
		*(struct lfv_rdm_hdr *)r->buf = (struct lfv_rdm_hdr){
			.op = LFV_RDM_WDATA, .flags = LFV_RDM_HDR_DATA,
			.tag = len, .cq_data = q->r.data,
		};
	if (q->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		rma->wr.opcode = IBV_WR_RDMA_WRITE;
	rma->len = lfv_wr_is_atomic(&q->wr) ? 0 : len;
	rma->off = 0;
	lfv_rdm_rma_count(ep, rma);
	rma->read = q->r.comp_flags & FI_READ;
	rma->err = 0;
	r->context = q->r.context;
	r->cflags = report ? q->r.comp_flags : 0;
	r->paylen = len;
	r->rndv = false;
}

ssize_t lfv_rdm_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	size_t len = lfv_rdm_iov_len(q->r.iov, q->r.count);
	struct lfv_rdm_rma mem = { .nseg = 0 };
	enum lfv_rdm_rma_mem how = LFV_RMA_APP;
	struct lfv_rdm_req *r;
	int ret;

	ret = lfv_rdm_rma_check(ep, q, len);
	if (ret)
		return ret;
	/* Injected data is copied at the call, registered or not. */
	if ((q->r.flags & FI_INJECT) || !lfv_rdm_rma_all_desc(&q->r))
		how = len <= ep->eager ? LFV_RMA_BOUNCE : LFV_RMA_OURS;
	if (how != LFV_RMA_BOUNCE) {
		ret = lfv_rdm_rma_segs(ep, &mem, &q->r);
		if (ret)
			return ret;
	}
	lfv_spin_lock(&ep->lock);
	r = lfv_rdm_take_tx(ep, q->r.dest, &ret);
	if (r) {
		r->kind = LFV_RDM_K_RMA;
		lfv_rdm_rma_fill(ep, r, q, &mem, how, len);
		lfv_rdm_post_or_queue(ep, r);
	}
	lfv_spin_unlock(&ep->lock);
	if (!r)
		lfv_rdm_rma_unreg(ep, &mem);
	return ret;
}

/* A peer's remote CQ data: its write is in place (it came first on the
 * same QP). A completion whether or not the CQ is selective. */
static void lfv_rdm_report_wdata(struct lfv_rdm_ep *ep,
				 const struct lfv_rdm_hdr *h, fi_addr_t src)
{
	struct lfv_cq_comp comp = {
		.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
		.len = h->tag, .data = h->cq_data, .src = src,
	};

	if (ep->base.rx_cq && lfv_cq_write_to_reader(ep->base.rx_cq, &comp))
		LFV_WARN(FI_LOG_CQ, "lost a completion\n");
}

void lfv_rdm_on_wdata(struct lfv_rdm_ep *ep, const struct lfv_rdm_hdr *h,
		      fi_addr_t src)
{
	lfv_cntr_count(ep->base.cntr[LFV_CNTR_RWRITE], true);
	lfv_rdm_report_wdata(ep, h, src);
}

/* A peer's RMA to one of our FI_RMA_EVENT regions is done: counted in the
 * region's and the endpoint's counters once the region is found and the
 * access fits it; otherwise dropped (and counted by lfv_mr_event). Its
 * remote CQ data is reported either way: the write did land. */
void lfv_rdm_on_event(struct lfv_rdm_ep *ep, const struct lfv_rdm_hdr *h,
		      const uint8_t *payload, fi_addr_t src)
{
	bool read = h->flags & LFV_RDM_HDR_READ;
	bool data = h->flags & LFV_RDM_HDR_DATA;
	uint32_t index = UINT32_MAX;	/* names no region */
	struct lfv_rdm_event ev;

	memcpy(&ev, payload, sizeof(ev));
	if (lfv_key_is_event(ev.key) &&
	    !(h->flags & ~(LFV_RDM_HDR_READ | LFV_RDM_HDR_DATA)) &&
	    !(read && data))
		index = lfv_key_index(ev.key);
	if (!lfv_mr_event(ep->base.domain, index, (uint32_t)ev.key, ev.addr,
			  h->tag, read ? FI_REMOTE_READ : FI_REMOTE_WRITE))
		lfv_cntr_count(read ? ep->base.cntr[LFV_CNTR_RREAD] : ep->base.cntr[LFV_CNTR_RWRITE], true);
	if (data && !read)
		lfv_rdm_report_wdata(ep, h, src);
}
