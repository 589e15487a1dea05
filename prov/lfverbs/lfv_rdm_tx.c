/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM, the transmit side: transmit requests (eager sends and RTSs
 * as lfv_rdm_send.c fills them, rendezvous reads and FINs of the receive
 * side, RMA), posted on a connection or queued behind one being made; the
 * rendezvous sender's source buffer, FIN, probes; and the completions of
 * all of it. The protocol is in lfv_rdm_proto.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_mr.h"
#include "lfv_param.h"
#include "lfv_queue.h"
#include "lfv_rdm_conn.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_rma.h"
#include "lfv_rdm_rx.h"
#include "lfv_rdm_tx.h"
#include "lfv_vcq.h"

/* ---- completions -------------------------------------------------------- */

/* The counter of a transmit request: FI_SEND, or FI_READ / FI_WRITE. */
static struct lfv_cntr *lfv_rdm_tx_cntr(const struct lfv_rdm_ep *ep,
					const struct lfv_rdm_req *r)
{
	if (r->kind != LFV_RDM_K_RMA)
		return ep->base.cntr[LFV_CNTR_SEND];
	return r->rma.read ? ep->base.cntr[LFV_CNTR_READ] : ep->base.cntr[LFV_CNTR_WRITE];
}

/* A successful request's completion, if one is wanted (not counted). */
static inline void lfv_rdm_tx_report(struct lfv_rdm_ep *ep,
				     const struct lfv_rdm_req *r)
{
	struct lfv_cq_comp comp;

	if (!r->cflags || !ep->base.tx_cq)
		return;
	comp = (struct lfv_cq_comp){
		.context = r->context,
		.flags = r->cflags,
		.src = FI_ADDR_NOTAVAIL,
	};
	/* The handler may run inside a read of tx_cq (its progress hook). */
	if (lfv_cq_write_to_reader(ep->base.tx_cq, &comp))
		LFV_WARN(FI_LOG_CQ, "lost a completion\n");
}

/* Out of line: the error entry is large and failures are rare. */
static void __attribute__((noinline))
lfv_rdm_tx_report_err(struct lfv_rdm_ep *ep, const struct lfv_rdm_req *r,
		      int err, int prov_errno)
{
	struct fi_cq_err_entry e = {
		.op_context = r->context,
		.flags = r->cflags,
		.err = -err,
		.prov_errno = prov_errno,
	};

	if (ep->base.tx_cq && lfv_cq_write_err(ep->base.tx_cq, &e))
		LFV_WARN(FI_LOG_CQ, "lost an error completion\n");
}

void lfv_rdm_tx_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, int err,
		     int prov_errno)
{
	lfv_cntr_count(lfv_rdm_tx_cntr(ep, r), !err);
	if (err)
		lfv_rdm_tx_report_err(ep, r, err, prov_errno);
	else
		lfv_rdm_tx_report(ep, r);
}

/* ---- posting ---------------------------------------------------------------- */

/* The SGEs of the bytes [off, off + n) of the segments. */
int lfv_rdm_slice(const struct lfv_rdm_seg *seg, int nseg, size_t off,
		  size_t n, struct ibv_sge *sge)
{
	size_t base = 0, from, take;
	int i, k = 0;

	for (i = 0; i < nseg && n; i++) {
		if (off >= base + seg[i].len) {
			base += seg[i].len;
			continue;
		}
		from = off - base;
		take = seg[i].len - from < n ? seg[i].len - from : n;
		sge[k++] = (struct ibv_sge){
			.addr = seg[i].addr + from,
			.length = (uint32_t)take, .lkey = seg[i].lkey,
		};
		off += take;
		n -= take;
		base += seg[i].len;
	}
	return k;
}

/* The segments of the first want bytes of iov (LFV_RDM_MAX_IOV at most):
 * the application's keys, or registrations of ours in regs (all given
 * back on failure); the bytes they cover in *got. Local access only: no
 * peer reaches them. */
int lfv_rdm_segs(struct lfv_rdm_ep *ep, const struct iovec *iov, void **desc,
		 size_t count, size_t want, struct lfv_rdm_seg *seg,
		 int *nseg, struct lfv_reg *regs, size_t *got)
{
	size_t i, n;
	uint32_t lkey;
	int ret;

	*nseg = 0;
	*got = 0;
	for (i = 0; i < count && i < LFV_RDM_MAX_IOV && *got < want; i++) {
		n = iov[i].iov_len < want - *got ? iov[i].iov_len :
						   want - *got;
		if (!n)
			continue;
		if (desc && desc[i]) {
			lkey = ((struct lfv_mr *)desc[i])->ibv_mr->lkey;
		} else {
			ret = lfv_reg_get(ep->base.domain, iov[i].iov_base, n,
					  LFV_REG_LOCAL, &regs[i]);
			if (ret) {
				lfv_rdm_regs_put(ep, regs);
				return ret;
			}
			lkey = regs[i].mr->lkey;
		}
		seg[(*nseg)++] = (struct lfv_rdm_seg){
			.addr = (uintptr_t)iov[i].iov_base, .len = n,
			.lkey = lkey,
		};
		*got += n;
	}
	return 0;
}

void lfv_rdm_regs_put(struct lfv_rdm_ep *ep, struct lfv_reg *regs)
{
	int i;

	for (i = 0; i < LFV_RDM_MAX_IOV; i++)
		lfv_reg_put(ep->base.domain, &regs[i]);
}

/* Posts the read's chunks while the connection has room and fewer than
 * FI_LFVERBS_RDM_READS reads in flight (of every rendezvous receive from
 * that peer: the responses of all share its link); 0 once all are posted,
 * -FI_EAGAIN while some wait (ep->lock): a chunk's completion posts the
 * next (lfv_rdm_sq_done). The limit keeps the peer's responses to a
 * burst its network can take: on the two-node bed, 8 MiB reads all at once
 * overflowed the sender's qdisc, and each lost packet cost a retry
 * timeout (tests/bench/README.md, across the wire).
 *
 * Behind the last chunk goes a zero-byte RDMA write (no address or key),
 * counted in rd->inflight like a chunk, its completion the read's last
 * (RC completes in order): the receive is reported only when it has
 * succeeded (lfv_rdm_read_chunk_done). A read's success is believed only
 * once a later request on its QP has succeeded too: soft-RoCE (Linux 6.1's
 * rxe_comp.c, COMPST_ERROR with the status never set) completes the read
 * at the head of its send queue with success on the path that then puts
 * the QP in error, its data partly written (issue 17), and the write is
 * then flushed. Not the FIN: its acknowledgement needs the sender's QP
 * after the sender has had what it waits for, and a sender may close as
 * soon as its send completes. */
static int lfv_rdm_post_read(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     struct lfv_rdm_req *r)
{
	struct lfv_rdm_read *rd = r->read;
	struct ibv_sge sge[LFV_RDM_MAX_IOV];
	struct ibv_send_wr vouch = lfv_rdm_vouch_wr((uintptr_t)&r->op);
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&r->op, .sg_list = sge,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	bool last;
	size_t n;
	int ret;

	while (rd->off < rd->got) {
		n = rd->got - rd->off < ep->max_rdma ? rd->got - rd->off :
						       ep->max_rdma;
		last = rd->off + n == rd->got;
		if (c->posted + 1 + last > LFV_RDM_SQ_DEPTH ||
		    (lfv_params.rdm_reads && c->reads >= lfv_params.rdm_reads))
			return -FI_EAGAIN;
		wr.num_sge = lfv_rdm_slice(rd->seg, rd->nseg, rd->off, n, sge);
		wr.wr.rdma.remote_addr = rd->raddr + rd->off;
		wr.wr.rdma.rkey = rd->rkey;
		wr.next = last ? &vouch : NULL;
		lfv_tsan_posted(wr.wr_id);
		ret = ibv_post_send(c->qp, &wr, &bad);
		if (ret)
			return lfv_post_ret(ret);
		c->posted += 1 + last;
		c->reads++;
		rd->inflight += 1 + last;
		rd->vouched = last;
		rd->off += n;
	}
	return 0;
}

/* A message of the receive side, inline from its request (which has no
 * registered buffer or prepared work request): a FIN, a CTS. */
static int lfv_rdm_post_inline(struct lfv_rdm_conn *c, struct lfv_rdm_req *r,
			       const void *msg, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = len };
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&r->op, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	}, *bad;
	int ret;

	lfv_tsan_posted(wr.wr_id);
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return lfv_post_ret(ret);
	c->posted++;
	return 0;
}

static int lfv_rdm_post_fin(struct lfv_rdm_conn *c, struct lfv_rdm_req *r)
{
	return lfv_rdm_post_inline(c, r, &r->read->fin, sizeof(r->read->fin));
}

/* Counted in inflight while posted: lfv_rdm_cts_done. */
static int lfv_rdm_post_cts(struct lfv_rdm_conn *c, struct lfv_rdm_req *r)
{
	int ret = lfv_rdm_post_inline(c, r, &r->read->ctsmsg,
				      sizeof(r->read->ctsmsg));

	if (!ret)
		r->read->inflight++;
	return ret;
}

static int lfv_rdm_post(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			struct lfv_rdm_req *r)
{
	switch (r->kind) {
	case LFV_RDM_K_READ:
		return lfv_rdm_post_read(ep, c, r);
	case LFV_RDM_K_RMA:
	case LFV_RDM_K_PUSH:
		return lfv_rdm_rma_post_wr(ep, c, r);
	case LFV_RDM_K_FIN:
		return lfv_rdm_post_fin(c, r);
	case LFV_RDM_K_CTS:
		return lfv_rdm_post_cts(c, r);
	default:
		return lfv_rdm_post_tx(ep, c, r);
	}
}

void lfv_rdm_flush_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_req *r;

	while (!lfv_list_empty(&c->pending) && c->posted < LFV_RDM_SQ_DEPTH) {
		r = lfv_container_of(lfv_list_first(&c->pending),
				     struct lfv_rdm_req, node);
		if (lfv_rdm_post(ep, c, r))
			return; /* the next completion tries again */
		lfv_list_remove(&r->node);
	}
}

/* A rendezvous send that will not finish: its source given back, and no
 * longer counted as waiting for a FIN. */
void lfv_rdm_rndv_drop(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_rdm_src_free(ep, &r->own_reg, r->own_copy);
	r->own_copy = NULL;
	r->rndv = false;
	ep->rndv_out--;
	r->conn->rndv_out--;
}

/* A request that will never be posted: its connection failed (ep->lock
 * held). Rendezvous reads with nothing in flight are reported later,
 * outside the lock (lfv_rdm_aborted_drain): the report frees an SRX
 * entry, and the SRX calls into the endpoint with its own lock held. */
void lfv_rdm_req_abort(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, int err)
{
	switch (r->kind) {
	case LFV_RDM_K_READ:
	case LFV_RDM_K_CTS:
		r->read->failed = true;
		r->read->off = r->read->got;	/* post nothing more */
		if (!r->read->inflight)
			lfv_rdm_abort_later(ep, &ep->aborted, &r->node);
		return; /* else its last chunk's completion finishes it */
	case LFV_RDM_K_FIN:
		lfv_rdm_rreq_free_locked(ep, r);
		return;
	case LFV_RDM_K_SEG:	/* the last segment reports the send */
		lfv_list_insert_head(&ep->tx_free, &r->node);
		return;
	case LFV_RDM_K_RMA:
		if (!lfv_rdm_rma_abort(r, err))
			return; /* its posted part's completions finish it */
		err = r->rma.err;
		lfv_rdm_rma_release(ep, r);
		break;
	case LFV_RDM_K_PUSH:	/* a rendezvous send's writes */
		if (!lfv_rdm_rma_abort(r, err))
			return; /* its posted part's completions finish it */
		err = r->rma.err;
		r->rndv_wait = 0;
		lfv_rdm_rndv_drop(ep, r);
		break;
	default:
		if (r->rndv) {
			r->rndv_wait = 0;
			lfv_rdm_rndv_drop(ep, r);
		}
		break;
	}
	lfv_rdm_tx_done(ep, r, err, 0);
	lfv_list_insert_head(&ep->tx_free, &r->node);
}

void lfv_rdm_fail_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			  int err)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(&c->pending)))
		lfv_rdm_req_abort(ep, lfv_container_of(item,
					struct lfv_rdm_req, node), err);
}

/* A free transmit request, its conn set to the connection to dest (made
 * if need be); NULL and *err when there is none. ep->lock held: dropped
 * and taken again to poll the send completions that free requests (the
 * completion handler takes it). */
struct lfv_rdm_req *lfv_rdm_take_tx(struct lfv_rdm_ep *ep, fi_addr_t dest,
				    int *err)
{
	struct lfv_rdm_conn *c;
	/* Read before the lookup: a removal after it makes the remembered
	 * connection stale for the fast path. */
	uint64_t seen = lfv_av_removals(ep->base.av) + 1;

	lfv_rdm_timers(ep);
	if (lfv_list_empty(&ep->tx_free)) {
		lfv_spin_unlock(&ep->lock);
		lfv_vcq_progress(ep->tx_vcq);
		lfv_spin_lock(&ep->lock);
		if (lfv_list_empty(&ep->tx_free)) {
			*err = -FI_EAGAIN;
			return NULL;
		}
	}
	c = lfv_rdm_conn_get(ep, dest, err);
	if (!c)
		return NULL;
	lfv_rdm_remember_conn(ep, c, dest, seen);
	return lfv_rdm_tx_pop(ep, c);
}

/* Posts r on its connection, or queues it behind what waits (ep->lock). */
void lfv_rdm_post_or_queue(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct lfv_rdm_conn *c = r->conn;

	if (c->state == LFV_RDM_FAILED) {
		lfv_rdm_req_abort(ep, r, -FI_ECONNRESET);
		return;
	}
	if (c->state == LFV_RDM_CONNECTED && lfv_list_empty(&c->pending) &&
	    c->posted < LFV_RDM_SQ_DEPTH && !lfv_rdm_post(ep, c, r))
		return;
	lfv_list_insert_tail(&c->pending, &r->node);
}

/* A completion on a connection's send queue: its room comes back. */
void lfv_rdm_sq_done(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			    bool ok)
{
	lfv_spin_lock(&ep->lock);
	c->posted--;
	c->sq_done++;
	if (!ok && c->state == LFV_RDM_CONNECTED)
		lfv_rdm_conn_fail(ep, c, -FI_ECONNRESET);
	else if (c->state == LFV_RDM_CONNECTED)
		lfv_rdm_flush_pending(ep, c);
	lfv_spin_unlock(&ep->lock);
}

/* ---- rendezvous, the sending side ------------------------------------------- */

/* The bytes of the iovs, one after the other, at dst. */
void lfv_rdm_gather_at(uint8_t *dst, const struct iovec *iov, size_t count,
		       size_t off, size_t len)
{
	size_t i, n;

	for (i = 0; i < count && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - off < len ? iov[i].iov_len - off : len;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

void lfv_rdm_gather(uint8_t *dst, const struct iovec *iov, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}


int lfv_rdm_rndv_src(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		     size_t len, struct lfv_rdm_src *src)
{
	void *base = s->count == 1 ? s->iov[0].iov_base : NULL;
	int ret;

	memset(src, 0, sizeof(*src));
	if (!len)
		return 0;	/* nothing to read: the receiver answers at once */
	if (s->count == 1 && s->desc && s->desc[0] &&
	    (((struct lfv_mr *)s->desc[0])->access & FI_REMOTE_READ)) {
		src->addr = (uintptr_t)base;
		src->rkey = ((struct lfv_mr *)s->desc[0])->ibv_mr->rkey;
		src->lkey = ((struct lfv_mr *)s->desc[0])->ibv_mr->lkey;
		return 0;
	}
	if (s->count != 1) {
		src->own_copy = malloc(len);
		if (!src->own_copy)
			return -FI_ENOMEM;
		lfv_rdm_gather(src->own_copy, s->iov, s->count);
		base = src->own_copy;
	}
	ret = lfv_reg_get(ep->base.domain, base, len, LFV_REG_REMOTE_READ,
			  &src->own_reg);
	if (ret) {
		free(src->own_copy);
		return ret;
	}
	src->addr = (uintptr_t)base;
	src->rkey = src->own_reg.mr->rkey;
	src->lkey = src->own_reg.mr->lkey;
	return 0;
}

void lfv_rdm_src_free(struct lfv_rdm_ep *ep, struct lfv_reg *reg, void *copy)
{
	lfv_reg_put(ep->base.domain, reg);
	free(copy);
}

static void lfv_rdm_rndv_finish(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_rdm_tx_done(ep, r, r->rndv_err, 0);
	lfv_rdm_src_free(ep, &r->own_reg, r->own_copy);
	r->own_copy = NULL;
	lfv_spin_lock(&ep->lock);
	r->rndv = false;
	ep->rndv_out--;
	r->conn->rndv_out--;
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
}

/* One of the two events a rendezvous send waits for (its RTS sent, its
 * FIN come), the first error kept; true when it was the last (ep->lock). */
static bool lfv_rdm_rndv_seen(struct lfv_rdm_req *r, int err)
{
	if (err && !r->rndv_err)
		r->rndv_err = err;
	return !--r->rndv_wait;
}

/* One of the two events a rendezvous send waits for (its RTS sent; its
 * FIN come, or the writes its CTS asked for done). */
void lfv_rdm_rndv_event(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			       int err)
{
	bool done;

	lfv_spin_lock(&ep->lock);
	done = lfv_rdm_rndv_seen(r, err);
	lfv_spin_unlock(&ep->lock);
	if (done)
		lfv_rdm_rndv_finish(ep, r);
}

/* What a FIN flagged ERR (or a HELD that says no) fails the send with: the
 * receiver's reason where it is one a receiver gives, else FI_EIO. */
static int lfv_rdm_fin_err(const struct lfv_rdm_hdr *h)
{
	if (!(h->flags & LFV_RDM_HDR_ERR))
		return 0;
	if (h->op == LFV_RDM_FIN && (h->reserved == FI_ENOSPC ||
				     h->reserved == FI_ENOMEM ||
				     h->reserved == FI_EMSGSIZE))
		return -(int)h->reserved;
	return -FI_EIO;
}

/* A HELD that says yes: the receiver keeps the RTS (waiting for a
 * receive, or reading); the wait starts again (ep->lock). False for one
 * nobody asked for. */
static bool lfv_rdm_on_held(struct lfv_rdm_req *r,
			    const struct lfv_rdm_hdr *h)
{
	if (!r->asked)
		return false;
	r->asked = false;
	r->rndv_rounds = 0;
	if (h->flags & LFV_RDM_HDR_ERR)
		LFV_WARN(FI_LOG_EP_DATA, "RDM: the receiver of a rendezvous "
			 "send does not hold it: the send fails\n");
	return true;
}

/* FIN (or HELD): the cookie names one of our transmit requests and its
 * use. Only the peer the RTS went to may send it, and a FIN only once: a
 * FIN from another connection (a guessed cookie) or a second one would
 * finish the request early or twice, releasing its buffer while the peer
 * still reads it. c: the connection it came on (NULL: none). */
void lfv_rdm_on_fin(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		    const struct lfv_rdm_hdr *h)
{
	uint64_t idx = h->tag & UINT32_MAX;
	int err = lfv_rdm_fin_err(h);
	struct lfv_rdm_req *r;
	bool done;

	if (idx >= ep->ntx)
		goto malformed;
	r = &ep->reqs[idx];
	lfv_spin_lock(&ep->lock);
	if (!r->rndv || !r->rndv_wait || r->gen != (uint32_t)(h->tag >> 32) ||
	    (h->op == LFV_RDM_HELD && r->fin_seen)) {
		lfv_spin_unlock(&ep->lock);
		/* Stale: not a rendezvous we wait for. A HELD may cross the
		 * FIN (it answers an ASK sent before the FIN came): no fault
		 * of the peer's. A FIN of a use that is over (a replay, or
		 * one after the send failed) names no request, like one
		 * past ntx. */
		if (h->op == LFV_RDM_FIN)
			goto malformed;
		return;
	}
	if (r->conn != c || r->fin_seen ||
	    (h->op == LFV_RDM_HELD && !lfv_rdm_on_held(r, h))) {
		lfv_spin_unlock(&ep->lock);
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_FORGED,
			 "an RDM FIN or HELD from a peer the request did not "
			 "go to, a second FIN, or a HELD nobody asked for");
		return;
	}
	if (h->op == LFV_RDM_HELD && !err) {
		lfv_spin_unlock(&ep->lock);
		return;
	}
	r->fin_seen = true;
	done = lfv_rdm_rndv_seen(r, err);
	lfv_spin_unlock(&ep->lock);
	if (done)
		lfv_rdm_rndv_finish(ep, r);
	return;

malformed:
	lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_MALFORMED,
		 "an RDM FIN naming no request, or a use of one that is over");
}

/* A rendezvous send's writes go out (ep->lock held; its RTS completed). */
static void lfv_rdm_push_start(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	r->kind = LFV_RDM_K_PUSH;
	lfv_rdm_post_or_queue(ep, r);
}

/* CTS: the receiver of a rendezvous send wants it written (lfv_rdm_proto.h).
 * Believed as a FIN is (lfv_rdm_on_fin): from the connection the RTS went
 * to, for a send that waits for its FIN, once; and for no more bytes than
 * the send has. c: the connection it came on (NULL: none). */
void lfv_rdm_on_cts(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		    const struct lfv_rdm_hdr *h, const uint8_t *payload)
{
	uint64_t idx = h->tag & UINT32_MAX;
	struct lfv_rdm_cts cts;
	struct lfv_rdm_req *r;

	memcpy(&cts, payload, sizeof(cts));
	if (idx >= ep->ntx)
		goto forged;
	r = &ep->reqs[idx];
	lfv_spin_lock(&ep->lock);
	if (!r->rndv || !r->rndv_wait || r->gen != (uint32_t)(h->tag >> 32) ||
	    r->conn != c || r->fin_seen || cts.len > r->paylen) {
		lfv_spin_unlock(&ep->lock);
		goto forged;
	}
	r->fin_seen = true;	/* no FIN, HELD or CTS more */
	r->push = true;
	lfv_rdm_push_fill(ep, r, &cts);
	if (r->rts_done)
		lfv_rdm_push_start(ep, r);
	lfv_spin_unlock(&ep->lock);
	return;

forged:
	lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_FORGED,
		 "an RDM CTS naming no rendezvous send that waits, from a peer "
		 "it did not go to, a second one, or for more than its length");
}

/* One probe round (about a second) of a rendezvous send that waits for its
 * FIN, its RTS gone (ep->lock). After FI_LFVERBS_RDM_RNDV_TIMEOUT rounds
 * it asks the receiver whether it still holds the RTS (HELD answers); as
 * many rounds more without an answer, it fails. */
void lfv_rdm_rndv_round(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct lfv_rdm_hdr ask = { .op = LFV_RDM_ASK };

	if (r->push)	/* it writes: nothing more to ask */
		return;
	if (!lfv_params.rdm_rndv_timeout ||
	    ++r->rndv_rounds < lfv_params.rdm_rndv_timeout)
		return;
	if (r->asked) {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: a rendezvous send had no FIN "
			 "and no answer to its question: it fails\n");
		lfv_rdm_req_abort(ep, r, -FI_ETIMEDOUT);
		return;
	}
	ask.tag = lfv_rdm_cookie(ep, r);
	if (!lfv_rdm_send_ctl(ep, r->conn, &ask)) {
		r->asked = true;
		r->rndv_rounds = 0;
	}
}

/* The connection c failed: its rendezvous sends whose RTS left wait for a
 * FIN that will not come (ep->lock held). */
void lfv_rdm_fail_rndv(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c, int err)
{
	struct lfv_rdm_req *r;
	size_t i;

	for (i = 0; i < ep->ntx; i++) {
		r = &ep->reqs[i];
		/* Not one that writes: its work requests are flushed, or
		 * queued (lfv_rdm_fail_pending), and those finish it. */
		if (r->rndv && r->conn == c && r->rts_done && r->rndv_wait &&
		    r->kind != LFV_RDM_K_PUSH)
			lfv_rdm_req_abort(ep, r, err);
	}
}

/* ---- the completion handler ------------------------------------------------ */

/* An RTS's completion, or a failed send's. */
static void __attribute__((noinline))
lfv_rdm_tx_completion_slow(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			   const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c = r->conn;
	bool ok = wc->status == IBV_WC_SUCCESS;
	int err = 0;

	if (!ok) {
		lfv_spin_lock(&ep->lock);
		err = lfv_rdm_wc_err(c, wc);
		lfv_spin_unlock(&ep->lock);
	}
	if (r->rndv) {
		/* The RTS left (or not: then no FIN will come). Before the
		 * room goes back: a failing connection then finds it done. */
		lfv_spin_lock(&ep->lock);
		r->rts_done = true;
		if (!ok) {
			r->rndv_wait = 1;
		} else if (r->push && c->state == LFV_RDM_FAILED) {
			r->rndv_wait = 1;	/* its writes cannot go */
			err = -FI_ECONNRESET;
		} else if (r->push) {	/* its CTS came first */
			lfv_rdm_push_start(ep, r);
		}
		lfv_spin_unlock(&ep->lock);
		lfv_rdm_rndv_event(ep, r, err);
		lfv_rdm_sq_done(ep, c, ok);
		return;
	}
	lfv_rdm_tx_done(ep, r, err,
			ok ? 0 : (int)wc->status);
	lfv_spin_lock(&ep->lock);
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, c, ok);
}

/* A SAR segment but the last: nothing to report or count (the last one
 * completes the send, in error too: the QP flushes it behind a failed
 * one); its request and its room back. */
void lfv_rdm_seg_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			    const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c = r->conn;

	lfv_spin_lock(&ep->lock);
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, c, wc->status == IBV_WC_SUCCESS);
}

/* A successful eager send's bookkeeping (ep->lock): its request and its
 * room on the send queue back, what waited for the room posted. */
static inline void lfv_rdm_tx_put(struct lfv_rdm_ep *ep,
				  struct lfv_rdm_req *r,
				  struct lfv_rdm_conn *c)
{
	lfv_list_insert_head(&ep->tx_free, &r->node);
	c->posted--;
	c->sq_done++;
	if (c->state == LFV_RDM_CONNECTED && !lfv_list_empty(&c->pending))
		lfv_rdm_flush_pending(ep, c);
}

/* Out of line: the common case then saves fewer registers. */
static void __attribute__((noinline))
lfv_rdm_tx_put_locked(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
		      struct lfv_rdm_conn *c)
{
	lfv_spin_lock(&ep->lock);
	lfv_rdm_tx_put(ep, r, c);
	lfv_spin_unlock(&ep->lock);
}

void lfv_rdm_tx_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			   const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c = r->conn;

	if (!LFV_RDM_LIKELY(wc->status == IBV_WC_SUCCESS && !r->rndv)) {
		lfv_rdm_tx_completion_slow(ep, r, wc);
		return;
	}
	lfv_cntr_count(ep->base.cntr[LFV_CNTR_SEND], true);
	lfv_rdm_tx_report(ep, r);
	if (ep->lock.on)
		lfv_rdm_tx_put_locked(ep, r, c);
	else
		lfv_rdm_tx_put(ep, r, c);
}
