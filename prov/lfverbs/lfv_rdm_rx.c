/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM, the receive side, as a peer of the matching SRX
 * (src/lfv_peer_srx.c): a message that finds its receive is copied from
 * the bounce buffer straight into it (eager) or read into it (rendezvous);
 * one that does not is copied out (the bounce buffer goes back to the SRQ
 * at once) and queued with the SRX until a receive starts it.
 *
 * Locking (lfv_lock_order.h): arrivals run in the completion handler
 * (rx vcq->lock held); they take ep->lock only around the endpoint's
 * tables and accounting, and call the SRX (get_*, queue_*, free_entry)
 * and write the CQ with it released: an owner's SRX calls back into
 * lfv_rdm_start with its own lock held.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_domain.h"
#include "lfv_drop.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_lock_order.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_peer_srx.h"
#include "lfv_queue.h"
#include "lfv_rdm_conn.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_rma.h"
#include "lfv_rdm_rx.h"
#include "lfv_rdm_tx.h"
#include "lfv_valgrind.h"
#include "lfv_wire.h"

/* ---- receiving ------------------------------------------------------------ */

static size_t lfv_rdm_scatter(const struct fi_peer_rx_entry *e,
			      const uint8_t *src, size_t len)
{
	size_t i, n, done = 0;

	if (e->count == 1) {	/* fi_recv, fi_trecv */
		n = e->iov[0].iov_len < len ? e->iov[0].iov_len : len;
		if (n)
			memcpy(e->iov[0].iov_base, src, n);
		return n;
	}
	for (i = 0; i < e->count && done < len; i++) {
		n = e->iov[i].iov_len < len - done ? e->iov[i].iov_len :
						     len - done;
		if (n)
			memcpy(e->iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
}

/* FI_SOURCE_ERR: a message from a peer the AV does not know (fi_cq(3)):
 * an error completion, FI_EADDRNOTAVAIL, with the peer's name (what
 * fi_av_insert takes) as err_data. The data is in the buffer. */
static void lfv_rdm_report_unknown(struct lfv_rdm_ep *ep,
				   struct fi_cq_err_entry *ee,
				   const struct lfv_rdm_conn *c)
{
	ee->err = FI_EADDRNOTAVAIL;
	ee->prov_errno = -FI_EADDRNOTAVAIL;
	ee->olen = 0;
	ee->err_data = (void *)&c->name;
	ee->err_data_size = sizeof(c->name);
	if (lfv_cq_write_err(ep->base.rx_cq, ee))
		LFV_WARN(FI_LOG_CQ, "lost an error completion\n");
}

/* A receive's error completion (err, or FI_ETRUNC when got < len), or
 * FI_SOURCE_ERR's; out of the success path, which builds no error entry. */
static __attribute__((noinline)) void
lfv_rdm_report_err(struct lfv_rdm_ep *ep, struct fi_peer_rx_entry *e,
		   const struct lfv_rdm_unexp *m, uint64_t flags, size_t got,
		   int err)
{
	struct fi_cq_err_entry ee = {
		.op_context = e->context, .flags = flags, .len = got,
		.buf = e->count ? e->iov[0].iov_base : NULL,
		.data = m->cq_data, .tag = m->tag,
		.olen = m->len - got, .err = err ? -err : FI_ETRUNC,
		.prov_errno = err ? err : -FI_ETRUNC,
	};

	if (!err && got == m->len) {
		lfv_rdm_report_unknown(ep, &ee, m->conn);
		return;
	}
	if (lfv_cq_write_err(ep->base.rx_cq, &ee))
		LFV_WARN(FI_LOG_CQ, "lost an error completion\n");
}

/* Reports a receive: got bytes of a len-byte message (fewer: FI_ETRUNC),
 * or the error err. */
static void lfv_rdm_report(struct lfv_rdm_ep *ep, struct fi_peer_rx_entry *e,
			   const struct lfv_rdm_unexp *m, size_t got, int err)
{
	bool tagged = m->op == LFV_RDM_EAGER_TAG || m->op == LFV_RDM_RTS_TAG;
	uint64_t flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) |
			 ((m->flags & LFV_RDM_HDR_DATA) ? FI_REMOTE_CQ_DATA : 0) |
			 (e->flags & FI_MULTI_RECV);
	struct lfv_cq_comp comp;
	bool failed = err || got < m->len;

	lfv_cntr_count(ep->base.cntr[LFV_CNTR_RECV], !failed);
	if (!ep->base.rx_cq)
		return;
	if (failed || (m->src == FI_ADDR_NOTAVAIL && m->conn &&
		       (ep->base.info->caps & FI_SOURCE_ERR))) {
		lfv_rdm_report_err(ep, e, m, flags, got, err);
		return;
	}
	if (ep->base.rx_selective && !(e->flags & (FI_COMPLETION | FI_MULTI_RECV)))
		return;
	comp = (struct lfv_cq_comp){
		.context = e->context, .flags = flags, .len = got,
		.buf = e->count ? e->iov[0].iov_base : NULL,
		.data = m->cq_data, .tag = m->tag, .src = m->src,
	};
	if (lfv_cq_write_to_reader(ep->base.rx_cq, &comp))
		LFV_WARN(FI_LOG_CQ, "lost a completion\n");
}

/* Copies an eager message into the receive entry e and reports it. */
static void lfv_rdm_deliver(struct lfv_rdm_ep *ep, struct fi_peer_rx_entry *e,
			    const struct lfv_rdm_unexp *m, const uint8_t *data)
{
	lfv_rdm_report(ep, e, m, lfv_rdm_scatter(e, data, m->len), 0);
}

/* ---- rendezvous, the receiving side ---------------------------------------- */


/* Tells the sender its payload was read (or not): the rendezvous send
 * completes there. r becomes the FIN request. */
static void lfv_rdm_send_fin(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     bool ok)
{
	r->kind = LFV_RDM_K_FIN;
	r->read->fin = (struct lfv_rdm_hdr){
		.op = LFV_RDM_FIN, .flags = ok ? 0 : LFV_RDM_HDR_ERR,
		.tag = r->read->cookie,
	};
	lfv_spin_lock(&ep->lock);
	lfv_rdm_post_or_queue(ep, r);
	lfv_spin_unlock(&ep->lock);
}

/* An RTS we cannot take: a FIN flagged ERR with the reason, so that the
 * send fails now rather than at its timeout (which covers the case where
 * even this cannot be posted). */
static void lfv_rdm_refuse_rts(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			       const struct lfv_rdm_rts *rts, int err)
{
	struct lfv_rdm_hdr fin = {
		.op = LFV_RDM_FIN, .flags = LFV_RDM_HDR_ERR,
		.reserved = (uint16_t)-err, .tag = rts->cookie,
	};

	if (!c)
		return;
	lfv_spin_lock(&ep->lock);
	lfv_rdm_send_ctl(ep, c, &fin);
	lfv_spin_unlock(&ep->lock);
}

static struct lfv_rdm_rreq *lfv_rdm_rreq_new(struct lfv_rdm_ep *ep,
					     const struct lfv_rdm_unexp *m)
{
	struct lfv_rdm_rreq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	lfv_list_init(&q->req.node);
	q->req.op.q = &ep->wq;
	q->req.kind = LFV_RDM_K_READ;
	q->req.read = &q->rd;
	q->req.conn = m->conn;
	q->rd.cookie = m->rts.cookie;
	q->rd.tag = m->tag;
	q->rd.cq_data = m->cq_data;
	q->rd.len = m->len;
	q->rd.src = m->src;
	q->rd.op = m->op;
	q->rd.flags = m->flags;
	q->rd.raddr = m->rts.addr;
	q->rd.rkey = m->rts.rkey;
	lfv_spin_lock(&ep->lock);
	lfv_list_insert_tail(&ep->reading, &q->rd.held);
	q->req.conn->rreqs++;
	lfv_spin_unlock(&ep->lock);
	return q;
}

void lfv_rdm_rreq_free(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_spin_lock(&ep->lock);
	lfv_rdm_rreq_free_locked(ep, r);
	lfv_spin_unlock(&ep->lock);
}

static void lfv_rdm_read_unreg(struct lfv_rdm_ep *ep, struct lfv_rdm_read *rd)
{
	lfv_rdm_regs_put(ep, rd->regs);
}
/* The local SGEs of the read: the receive's iovs up to the message's
 * length, with the application's keys or ours. */
static int lfv_rdm_read_sges(struct lfv_rdm_ep *ep, struct lfv_rdm_read *rd,
			     const struct fi_peer_rx_entry *e)
{
	return lfv_rdm_segs(ep, e->iov, e->desc, e->count, rd->len, rd->seg,
			    &rd->nseg, rd->regs, &rd->got);
}
/* Whether a receive asks its sender to write (lfv_rdm_proto.h): so set,
 * into one buffer, with room for the CTS inline. */
static bool lfv_rdm_wants_write(const struct lfv_rdm_ep *ep,
				const struct fi_peer_rx_entry *e, size_t len)
{
	return lfv_params.rdm_rndv_write && e->count && e->iov &&
	       (e->count == 1 || e->iov[0].iov_len >= len) &&
	       ep->max_inline >= sizeof(((struct lfv_rdm_read *)0)->ctsmsg);
}

/* The one buffer of a receive by write, which the sender writes to: under
 * the application's key if its region allows remote writes, else under
 * ours, made for this message alone (never cached: the key stops working
 * when the receive ends). */
static int lfv_rdm_write_target(struct lfv_rdm_ep *ep, struct lfv_rdm_read *rd,
				const struct fi_peer_rx_entry *e)
{
	size_t n = e->iov[0].iov_len < rd->len ? e->iov[0].iov_len : rd->len;
	struct lfv_mr *mr = e->desc ? e->desc[0] : NULL;
	struct ibv_mr *imr;
	int ret;

	rd->nseg = 0;
	rd->got = 0;
	if (!n)
		return 0;
	if (mr && (mr->access & FI_REMOTE_WRITE)) {
		imr = mr->ibv_mr;
	} else {
		ret = lfv_reg_get(ep->base.domain, e->iov[0].iov_base, n,
				  LFV_REG_REMOTE_WRITE, &rd->regs[0]);
		if (ret)
			return ret;
		imr = rd->regs[0].mr;
	}
	rd->seg[0] = (struct lfv_rdm_seg){
		.addr = (uintptr_t)e->iov[0].iov_base, .len = n,
		.lkey = imr->lkey,
	};
	rd->wkey = imr->rkey;
	rd->nseg = 1;
	rd->got = n;
	return 0;
}

/* The request becomes the CTS that asks the sender to write (ep->lock). */
static void lfv_rdm_cts_fill(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct lfv_rdm_read *rd = r->read;

	lfv_spin_assert_held(&ep->lock);
	r->kind = LFV_RDM_K_CTS;
	rd->by_write = true;
	rd->rcookie = ++ep->rcookie_next;
	ep->cts_out++;
	rd->ctsmsg.hdr = (struct lfv_rdm_hdr){
		.op = LFV_RDM_CTS, .len = sizeof(rd->ctsmsg.cts),
		.tag = rd->cookie,
	};
	rd->ctsmsg.cts = (struct lfv_rdm_cts){
		.len = rd->got, .addr = rd->seg[0].addr,
		.rcookie = rd->rcookie, .rkey = rd->wkey,
	};
}

/* A rendezvous request met its receive: read the payload into it, or ask
 * the sender to write it there. */
static void lfv_rdm_read_start(struct lfv_rdm_ep *ep,
			       struct fi_peer_rx_entry *e,
			       const struct lfv_rdm_unexp *m)
{
	struct lfv_rdm_rreq *q = lfv_rdm_rreq_new(ep, m);
	bool by_write = q && lfv_rdm_wants_write(ep, e, m->len);
	int ret;

	if (!q) {
		/* The receive reports the failure; the sender hears of it
		 * from the FIN that needs no memory. */
		lfv_rdm_report(ep, e, m, 0, -FI_ENOMEM);
		ep->peer_srx->owner_ops->free_entry(e);
		lfv_rdm_refuse_rts(ep, m->conn, &m->rts, -FI_ENOMEM);
		return;
	}
	q->rd.entry = e;
	if (by_write)
		ret = lfv_rdm_write_target(ep, &q->rd, e);
	else
		ret = lfv_rdm_read_sges(ep, &q->rd, e);
	if (ret || !q->rd.nseg) {
		/* Nothing to read into (or no registration): report now. */
		lfv_rdm_report(ep, e, m, 0, ret);
		ep->peer_srx->owner_ops->free_entry(e);
		q->rd.entry = NULL;
		lfv_rdm_read_unreg(ep, &q->rd);
		lfv_rdm_send_fin(ep, &q->req, !ret);
		return;
	}
	lfv_spin_lock(&ep->lock);
	if (by_write)
		lfv_rdm_cts_fill(ep, &q->req);
	lfv_rdm_post_or_queue(ep, &q->req);
	lfv_spin_unlock(&ep->lock);
}

/* The read finished: report the receive, then answer the sender. */
static void lfv_rdm_read_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			      bool ok)
{
	struct lfv_rdm_read *rd = r->read;
	struct lfv_rdm_unexp m = {
		.src = rd->src, .conn = r->conn, .op = rd->op,
		.flags = rd->flags, .tag = rd->tag, .cq_data = rd->cq_data,
		.len = rd->len,
	};
	size_t left = ok ? rd->got : 0, n;
	int i;

	for (i = 0; i < rd->nseg && left; i++, left -= n) {
		n = rd->seg[i].len < left ? rd->seg[i].len : left;
		lfv_mem_written((const void *)(uintptr_t)rd->seg[i].addr, n);
	}

	lfv_rdm_report(ep, rd->entry, &m, ok ? rd->got : 0,
		       ok ? 0 : -FI_EIO);
	ep->peer_srx->owner_ops->free_entry(rd->entry);
	rd->entry = NULL;
	lfv_rdm_read_unreg(ep, rd);
	if (rd->by_write)	/* the sender finished on its own WDONE */
		lfv_rdm_rreq_free(ep, r);
	else
		lfv_rdm_send_fin(ep, r, ok);
}


/* Closing: a rendezvous receive request (a read or its FIN) goes, with
 * its registrations; the receive it served is the SRX's to discard. */
void lfv_rdm_rreq_drop(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_rdm_read_unreg(ep, r->read);
	lfv_rdm_rreq_free(ep, r);
}

/* Reports the rendezvous reads whose connection failed before they had
 * anything in flight (lfv_rdm_req_abort), outside ep->lock. */
void lfv_rdm_aborted_drain(struct lfv_rdm_ep *ep)
{
	struct lfv_list todo, *item;

	lfv_list_init(&todo);
	lfv_spin_lock(&ep->lock);
	while ((item = lfv_list_pop_head(&ep->aborted)))
		lfv_list_insert_tail(&todo, item);
	lfv_spin_unlock(&ep->lock);
	while ((item = lfv_list_pop_head(&todo)))
		lfv_rdm_read_done(ep, lfv_container_of(item,
				  struct lfv_rdm_req, node), false);
}

/* A rendezvous receive has everything it waited for: reported, the sender
 * told (lfv_rdm_read_done); when closing, just given back. */
static void lfv_rdm_rreq_finish(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct lfv_rdm_read *rd = r->read;

	if (!ep->tx_live) { /* closing: nobody to tell */
		lfv_rdm_read_unreg(ep, rd);
		lfv_rdm_rreq_free(ep, r);
		return;
	}
	lfv_rdm_read_done(ep, r, !rd->failed);
}

/* One chunk of a read completed, or the zero-byte write behind the last
 * (lfv_rdm_post_read), which completes after all of them; the last
 * completion finishes the receive. */
void lfv_rdm_read_chunk_done(struct lfv_rdm_ep *ep,
				    struct lfv_rdm_req *r, bool ok)
{
	struct lfv_rdm_read *rd = r->read;
	bool last;

	lfv_spin_lock(&ep->lock);
	if (!(rd->vouched && rd->inflight == 1))
		r->conn->reads--;	/* a read's, not the write's */
	rd->inflight--;
	if (!ok) {
		rd->failed = true;
		rd->off = rd->got;	/* post nothing more */
		lfv_list_remove(&r->node);	/* if it waited */
	}
	last = !rd->inflight && rd->off == rd->got;
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, r->conn, ok);
	if (last)
		lfv_rdm_rreq_finish(ep, r);
}

/* ---- rendezvous by write, the receiving side -------------------------------- */

/* The CTS completed. The receive waits for WDONE, unless that came first
 * (it finishes it now) or the CTS failed (the receive fails: the
 * connection does too). */
void lfv_rdm_cts_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, bool ok)
{
	struct lfv_rdm_read *rd = r->read;
	bool last;

	lfv_spin_lock(&ep->lock);
	rd->inflight--;
	if (!ok && !rd->done_seen)
		rd->failed = true;
	last = rd->done_seen || rd->failed;
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, r->conn, ok);
	if (last)
		lfv_rdm_rreq_finish(ep, r);
}

/* The receive by write (of any connection) whose CTS named rcookie, or
 * NULL. Caller holds ep->lock. A walk: receives by write in progress are
 * few, as reads are (lfv_rdm_holds walks them too). */
static struct lfv_rdm_rreq *lfv_rdm_by_rcookie(const struct lfv_rdm_ep *ep,
					       uint64_t rcookie)
{
	const struct lfv_list *item;
	struct lfv_rdm_rreq *q;

	lfv_list_foreach(item, &ep->reading) {
		q = lfv_container_of(item, struct lfv_rdm_rreq, rd.held);
		if (q->rd.by_write && q->rd.rcookie == rcookie)
			return q;
	}
	return NULL;
}

/* WDONE: the sender wrote what our CTS asked for. Believed only from the
 * connection the CTS went to, for a receive that waits for it, once;
 * otherwise dropped and counted. One that says other bytes were written
 * than the CTS offered fails the receive (FI_EIO): its buffer is not what
 * the sender meant it to be. */
static void lfv_rdm_on_wdone(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     const struct lfv_rdm_hdr *h)
{
	struct lfv_rdm_rreq *q;
	bool last, short_write;

	lfv_spin_lock(&ep->lock);
	q = lfv_rdm_by_rcookie(ep, h->tag);
	if (!q || !c || q->req.conn != c || q->rd.done_seen ||
	    q->rd.failed) {
		lfv_spin_unlock(&ep->lock);
		lfv_drop(&ep->base.domain->fabric->drops,
			 FI_LFVERBS_DROP_FORGED,
			 "an RDM WDONE naming no receive that waits for it, "
			 "from a peer its CTS did not go to, or a second one");
		return;
	}
	short_write = h->cq_data != q->rd.got;
	q->rd.done_seen = true;
	q->rd.failed = short_write;
	last = !q->rd.inflight;
	lfv_spin_unlock(&ep->lock);
	if (short_write)
		lfv_drop(&ep->base.domain->fabric->drops,
			 FI_LFVERBS_DROP_MALFORMED,
			 "an RDM WDONE for other bytes than its CTS offered");
	if (last)
		lfv_rdm_rreq_finish(ep, &q->req);
}

/* Closing, quiesced: the first receive by write still waiting for WDONE
 * (on no queue: lfv_rdm_drop_all gives it back), or NULL. */
struct lfv_rdm_rreq *lfv_rdm_first_awaiting(struct lfv_rdm_ep *ep)
{
	struct lfv_rdm_rreq *q;

	lfv_spin_lock(&ep->lock);
	q = lfv_rdm_awaiting_after(ep, NULL);
	lfv_spin_unlock(&ep->lock);
	return q;
}

static bool lfv_rdm_is_rts(uint8_t op)
{
	return op == LFV_RDM_RTS_MSG || op == LFV_RDM_RTS_TAG;
}

/* A message whose payload came whole with it, matched at once: the
 * usual arrival, which the dispatch tests first. */
static bool lfv_rdm_is_eager(uint8_t op)
{
	return op == LFV_RDM_EAGER_MSG || op == LFV_RDM_EAGER_TAG;
}

static bool lfv_rdm_is_tagged(uint8_t op)
{
	return op == LFV_RDM_EAGER_TAG || op == LFV_RDM_RTS_TAG;
}

/* Asks the SRX for the receive that takes message m: 0 with it in *e, or
 * -FI_ENOENT with an entry to fill (and queue, or free). A sender the AV
 * does not know is FI_ADDR_UNSPEC to the SRX (fi_peer(3)): an AV insert
 * names it later (lfv_rdm_av_inserted). */
static inline int lfv_rdm_get_entry(struct lfv_rdm_ep *ep,
				    const struct lfv_rdm_unexp *m,
				    struct fi_peer_rx_entry **e)
{
	struct lfv_peer_match match = {
		.addr = m->src == FI_ADDR_NOTAVAIL ? FI_ADDR_UNSPEC : m->src,
		.msg_size = m->len, .tag = m->tag,
	};

	/* Not imported: the SRX is lfverbs' own, and so is our export. */
	if (!ep->imported)
		return lfv_peer_srx_export_get(ep->peer_srx,
					       lfv_rdm_is_tagged(m->op),
					       &match, e);
	if (lfv_rdm_is_tagged(m->op))
		return lfv_peer_get_tag(ep->peer_srx, &match, e);
	return lfv_peer_get_msg(ep->peer_srx, &match, e);
}

/* A message found its receive: copy it, or start reading it. */
static void lfv_rdm_matched(struct lfv_rdm_ep *ep, struct fi_peer_rx_entry *e,
			    const struct lfv_rdm_unexp *m, const uint8_t *data)
{
	if (lfv_rdm_is_rts(m->op)) {
		lfv_rdm_read_start(ep, e, m);
		return;
	}
	lfv_rdm_deliver(ep, e, m, data);
	ep->peer_srx->owner_ops->free_entry(e);
}

/* ---- what a receiver holds: limits, and the answer to ASK ------------------ */

/* Unexpected messages an endpoint may hold (FI_LFVERBS_RDM_UNEXP_MAX and
 * _BYTES), and one peer up to half of that (then one more message): a
 * flood from one peer neither exhausts memory nor crowds out the others.
 * Caller holds ep->lock. */
static bool lfv_rdm_unexp_room(const struct lfv_rdm_ep *ep,
			       const struct lfv_rdm_conn *c, size_t cost)
{
	size_t n = lfv_params.rdm_unexp_max, bytes = lfv_params.rdm_unexp_bytes;

	if (ep->unexp_n + 1 > n || ep->unexp_bytes + cost > bytes)
		return false;
	return !c || (c->unexp_n <= n / 2 && c->unexp_bytes <= bytes / 2);
}

/* Counts a queued copy in (delta 1) or out (-1). Caller holds ep->lock. */
static void lfv_rdm_unexp_count(struct lfv_rdm_ep *ep, struct lfv_rdm_unexp *m,
				int delta)
{
	if (delta > 0) {
		ep->unexp_n++;
		ep->unexp_bytes += m->cost;
		if (m->conn) {
			m->conn->unexp_n++;
			m->conn->unexp_bytes += m->cost;
		}
		if (lfv_rdm_is_rts(m->op))
			lfv_list_insert_tail(&ep->held_rts, &m->held);
		return;
	}
	ep->unexp_n--;
	ep->unexp_bytes -= m->cost;
	if (m->conn) {
		m->conn->unexp_n--;
		m->conn->unexp_bytes -= m->cost;
	}
	if (lfv_rdm_is_rts(m->op))
		lfv_list_remove(&m->held);
}

/* Whether the RTS cookie from c is one we hold: queued for a receive, or
 * being read. Caller holds ep->lock. */
static bool lfv_rdm_holds(const struct lfv_rdm_ep *ep,
			  const struct lfv_rdm_conn *c, uint64_t cookie)
{
	const struct lfv_list *item;
	const struct lfv_rdm_unexp *m;
	const struct lfv_rdm_rreq *q;

	lfv_list_foreach(item, &ep->held_rts) {
		m = lfv_container_of(item, struct lfv_rdm_unexp, held);
		if (m->conn == c && m->rts.cookie == cookie)
			return true;
	}
	lfv_list_foreach(item, &ep->reading) {
		q = lfv_container_of(item, struct lfv_rdm_rreq, rd.held);
		if (q->req.conn == c && q->rd.cookie == cookie)
			return true;
	}
	return false;
}

/* ASK: the sender of an RTS wants to know whether we still hold it. */
static void lfv_rdm_on_ask(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			   const struct lfv_rdm_hdr *h)
{
	struct lfv_rdm_hdr ans = { .op = LFV_RDM_HELD, .tag = h->tag };

	if (!c)
		return;
	lfv_spin_lock(&ep->lock);
	if (!lfv_rdm_holds(ep, c, h->tag))
		ans.flags = LFV_RDM_HDR_ERR;
	lfv_rdm_send_ctl(ep, c, &ans);	/* none: the sender asks again */
	lfv_spin_unlock(&ep->lock);
}

/* The messages that are not data: handled here; false for the others. */
static bool lfv_rdm_on_proto(struct lfv_rdm_ep *ep, uint32_t qpn,
			     const struct lfv_rdm_hdr *h, const uint8_t *data)
{
	struct lfv_rdm_conn *c;

	if (h->op == LFV_RDM_RTU) {
		lfv_spin_lock(&ep->lock);
		lfv_rdm_on_rtu(ep, qpn);
		lfv_spin_unlock(&ep->lock);
		return true;
	}
	if (h->op != LFV_RDM_FIN && h->op != LFV_RDM_HELD &&
	    h->op != LFV_RDM_ASK && h->op != LFV_RDM_CTS &&
	    h->op != LFV_RDM_WDONE)
		return false;
	lfv_spin_lock(&ep->lock);
	c = lfv_rdm_conn_by_qpn(ep, qpn);
	lfv_spin_unlock(&ep->lock);
	if (h->op == LFV_RDM_ASK)
		lfv_rdm_on_ask(ep, c, h);
	else if (h->op == LFV_RDM_CTS)
		lfv_rdm_on_cts(ep, c, h, data);
	else if (h->op == LFV_RDM_WDONE)
		lfv_rdm_on_wdone(ep, c, h);
	else
		lfv_rdm_on_fin(ep, c, h);
	return true;
}

/* Whether a queued copy came from a peer the AV did not know (yet). */
static bool lfv_rdm_unexp_unknown(const struct lfv_rdm_unexp *m)
{
	return m->src == FI_ADDR_NOTAVAIL && m->conn;
}

/* A copy of message m to hold unexpected, with room for keep bytes of its
 * data (left to the caller), counted against the limits; NULL, with
 * -FI_ENOSPC past the limits or -FI_ENOMEM, when there is none. */
static struct lfv_rdm_unexp *lfv_rdm_unexp_new(struct lfv_rdm_ep *ep,
					       const struct lfv_rdm_unexp *m,
					       size_t keep, int *err)
{
	struct lfv_rdm_unexp *copy;
	bool room;

	lfv_spin_lock(&ep->lock);
	room = lfv_rdm_unexp_room(ep, m->conn, sizeof(*copy) + keep);
	lfv_spin_unlock(&ep->lock);
	copy = room ? malloc(sizeof(*copy) + keep) : NULL;
	if (!copy) {
		*err = room ? -FI_ENOMEM : -FI_ENOSPC;
		return NULL;
	}
	*copy = *m;
	copy->cost = sizeof(*copy) + keep;
	lfv_spin_lock(&ep->lock);
	lfv_rdm_unexp_count(ep, copy, 1);
	lfv_spin_unlock(&ep->lock);
	if (lfv_rdm_unexp_unknown(copy))
		lfv_fetch_add64(&ep->unexp_unknown, 1);
	return copy;
}

/* Hands a copy to the SRX as an unexpected message, in the entry e that
 * get_msg/get_tag gave with -FI_ENOENT. */
static void lfv_rdm_unexp_queue(struct lfv_rdm_ep *ep,
				struct fi_peer_rx_entry *e,
				struct lfv_rdm_unexp *copy)
{
	struct fid_peer_srx *srx = ep->peer_srx;

	e->peer_context = copy;
	lfv_peer_entry_set_size(e, copy->len);
	/* From 1.19 the entry carries the CQ data for the owner's peeks
	 * (lfv_rdm_peek_data answers ours in every layout). */
	if (copy->flags & LFV_RDM_HDR_DATA) {
		lfv_peer_entry_set_cq_data(e, copy->cq_data);
		if (LFV_PEER_ENTRY_HAS_CQ_DATA)
			e->flags |= FI_REMOTE_CQ_DATA;
	}
	e->srx = srx;
	if (lfv_rdm_is_tagged(copy->op))
		srx->owner_ops->queue_tag(e);
	else
		srx->owner_ops->queue_msg(e);
}

/* The drop of a message past the unexpected limits (or without memory
 * for its copy). */
static void lfv_rdm_unexp_dropped(struct lfv_rdm_ep *ep)
{
	lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_LIMIT,
		 "an RDM message past FI_LFVERBS_RDM_UNEXP_MAX or _BYTES, "
		 "or without memory for its copy");
}

/* Queues a copy of a message no receive matched (the SRX entry e is
 * ours to fill); within the limits, else dropped or refused. */
static void lfv_rdm_queue_unexp(struct lfv_rdm_ep *ep,
				struct fi_peer_rx_entry *e,
				const struct lfv_rdm_unexp *m,
				const uint8_t *data)
{
	bool rts = lfv_rdm_is_rts(m->op);
	size_t keep = rts ? 0 : m->len;
	struct lfv_rdm_unexp *copy;
	int err;

	copy = lfv_rdm_unexp_new(ep, m, keep, &err);
	if (!copy) {
		ep->peer_srx->owner_ops->free_entry(e);
		lfv_rdm_unexp_dropped(ep);
		if (rts)
			lfv_rdm_refuse_rts(ep, m->conn, &m->rts, err);
		return;
	}
	memcpy(copy->data, data, keep);
	lfv_rdm_unexp_queue(ep, e, copy);
}

/* An RTS that must not be read, refused at once: longer than
 * max_msg_size (TOO_LONG), or a buffer that wraps past the end of the
 * address space (MALFORMED: no registration holds it, and the read's
 * length would be computed from a wrapped end). A buffer outside the
 * sender's registrations shows only when its device refuses the read
 * (lfv_rdm_completion). */
static bool lfv_rdm_rts_refused(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
				const struct lfv_rdm_rts *rts)
{
	struct lfv_drops *drops = &ep->base.domain->fabric->drops;

	if (rts->len > ep->base.info->ep_attr->max_msg_size) {
		lfv_drop(drops, FI_LFVERBS_DROP_TOO_LONG,
			 "an RDM rendezvous longer than max_msg_size");
		lfv_rdm_refuse_rts(ep, c, rts, -FI_EMSGSIZE);
		return true;
	}
	if (rts->len && rts->addr + rts->len < rts->addr) {
		lfv_drop(drops, FI_LFVERBS_DROP_MALFORMED,
			 "an RDM rendezvous whose buffer wraps past the end "
			 "of the address space");
		lfv_rdm_refuse_rts(ep, c, rts, -FI_EINVAL);
		return true;
	}
	return false;
}

static void lfv_rdm_on_sar(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			   struct lfv_rdm_unexp *m, uint64_t off,
			   const uint8_t *data, size_t h_len);

/* A message landed in a bounce buffer: match it or queue a copy (of the
 * data, or of the RTS). */
void lfv_rdm_arrived(struct lfv_rdm_ep *ep, const struct ibv_wc *wc,
		     const uint8_t *buf)
{
	const uint8_t *data = buf + sizeof(struct lfv_rdm_hdr);
	struct fi_peer_rx_entry *e;
	struct lfv_rdm_unexp m;
	struct lfv_rdm_conn *c;
	struct lfv_rdm_hdr h;
	int ret;

	if (lfv_rdm_msg_parse(buf, wc->byte_len, &h)) {
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_MALFORMED,
			 "an RDM message whose header does not fit it");
		return;
	}
	if (!lfv_rdm_is_eager(h.op) &&
	    lfv_rdm_on_proto(ep, wc->qp_num, &h, data))
		return;
	lfv_spin_lock(&ep->lock);
	c = lfv_rdm_conn_by_qpn(ep, wc->qp_num);
	/* A peer with an address that no fi_av_remove since the last look
	 * can have touched needs no lookup (the usual arrival). */
	if (c && (c->addr == FI_ADDR_NOTAVAIL ||
		  c->av_seen != lfv_av_removals(ep->base.av) + 1))
		lfv_rdm_conn_lookup_addr(ep, c);
	m = (struct lfv_rdm_unexp){
		.ep = ep, .src = c ? c->addr : FI_ADDR_NOTAVAIL, .conn = c,
		.op = h.op, .flags = h.flags, .tag = h.tag,
		.cq_data = h.cq_data, .len = h.len,
	};
	lfv_spin_unlock(&ep->lock);
	/* An eager message, the usual arrival, goes straight to matching. */
	if (!lfv_rdm_is_eager(h.op)) {
		if (h.op == LFV_RDM_WDATA) {
			lfv_rdm_on_wdata(ep, &h, m.src);
			return;
		}
		if (h.op == LFV_RDM_EVENT) {
			lfv_rdm_on_event(ep, &h, data, m.src);
			return;
		}
		if (h.op == LFV_RDM_SAR_MSG || h.op == LFV_RDM_SAR_TAG ||
		    h.op == LFV_RDM_SEG) {
			lfv_rdm_on_sar(ep, c, &m, h.tag, data, h.len);
			return;
		}
		if (!c)
			return; /* an RTS: nobody to read from */
		memcpy(&m.rts, data, sizeof(m.rts));
		if (lfv_rdm_rts_refused(ep, c, &m.rts))
			return;
		m.len = m.rts.len;
	}
	ret = lfv_rdm_get_entry(ep, &m, &e);
	if (!ret) {
		lfv_rdm_matched(ep, e, &m, data);
		return;
	}
	if (ret == -FI_ENOENT) {
		lfv_rdm_queue_unexp(ep, e, &m, data);
		return;
	}
	LFV_WARN(FI_LOG_EP_DATA, "RDM: no receive side: %s\n",
		 fi_strerror(-ret));
	if (lfv_rdm_is_rts(h.op))
		lfv_rdm_refuse_rts(ep, c, &m.rts, ret);
}

/* A queued copy leaves the SRX: no longer counted against the limits. */
static void lfv_rdm_unexp_free(struct lfv_rdm_unexp *m)
{
	struct lfv_rdm_ep *ep = m->ep;

	lfv_spin_lock(&ep->lock);
	lfv_rdm_unexp_count(ep, m, -1);
	lfv_spin_unlock(&ep->lock);
	if (lfv_rdm_unexp_unknown(m))
		lfv_fetch_sub64(&ep->unexp_unknown, 1);
	free(m);
}

/* foreach_unspec_addr's get_addr: the fi_addr_t the AV now has for the
 * sender of a message we queued unknown (FI_ADDR_UNSPEC: still unknown,
 * or not our entry: an owner's SRX walks its other peers' too). Runs
 * under the SRX's lock, which excludes ep->lock: the connection's name
 * never changes, and the AV has its own lock. */
static fi_addr_t lfv_rdm_unexp_source(struct fi_peer_rx_entry *e)
{
	struct lfv_rdm_unexp *m;
	union ibv_gid gid;
	fi_addr_t addr;

	if (!e->srx || e->srx->peer_ops != &lfv_rdm_srx_peer_ops)
		return FI_ADDR_UNSPEC;
	m = e->peer_context;
	if (!m || !lfv_rdm_unexp_unknown(m))
		return FI_ADDR_UNSPEC;
	memcpy(gid.raw, m->conn->name.gid, sizeof(gid.raw));
	addr = lfv_av_reverse(m->ep->base.av, &gid, m->conn->name.qpn);
	if (addr == FI_ADDR_NOTAVAIL)
		return FI_ADDR_UNSPEC;
	m->src = addr;	/* its completion's source, too */
	lfv_fetch_sub64(&m->ep->unexp_unknown, 1);
	return addr;
}

void lfv_rdm_av_inserted(struct lfv_av *av)
{
	struct lfv_domain *domain = av->domain;
	struct lfv_rdm_ep *ep;
	struct lfv_list *item;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->rdm_eps) {
		ep = lfv_container_of(item, struct lfv_rdm_ep, dnode);
		if (ep->base.av != av || !ep->peer_srx ||
		    !lfv_load_relaxed64(&ep->unexp_unknown))
			continue;
		lfv_peer_owner_foreach_unspec(ep->peer_srx,
					      lfv_rdm_unexp_source);
	}
	pthread_mutex_unlock(&domain->vcq_lock);
}

static int lfv_rdm_start(struct fi_peer_rx_entry *e)
{
	struct lfv_rdm_unexp *m = e->peer_context;

	lfv_rdm_matched(m->ep, e, m, m->data);
	lfv_rdm_unexp_free(m);
	return 0;
}

/* The application discarded a queued message (or its endpoint closed). A
 * rendezvous sender still waits for its FIN: it gets one (nothing was
 * read). */
static int lfv_rdm_discard(struct fi_peer_rx_entry *e)
{
	struct lfv_rdm_unexp *m = e->peer_context;
	struct lfv_rdm_rreq *q;

	/* Closing (quiesced): the connections are going, nobody to tell. */
	if (lfv_rdm_is_rts(m->op) && m->ep->enabled) {
		q = lfv_rdm_rreq_new(m->ep, m);
		if (q)
			lfv_rdm_send_fin(m->ep, &q->req, true);
		else	/* the FIN that needs no memory, if there is room */
			lfv_rdm_refuse_rts(m->ep, m->conn, &m->rts, 0);
	}
	lfv_rdm_unexp_free(m);
	return 0;
}

/* A peek's CQ data (the SRX asks: 1.17 entries have no field for it). */
bool lfv_rdm_peek_data(const struct fi_peer_rx_entry *e,
			      uint64_t *data)
{
	const struct lfv_rdm_unexp *m = e->peer_context;

	if (!m || !(m->flags & LFV_RDM_HDR_DATA))
		return false;
	*data = m->cq_data;
	return true;
}

struct fi_ops_srx_peer lfv_rdm_srx_peer_ops = {
	.size = sizeof(struct fi_ops_srx_peer),
	.start_msg = lfv_rdm_start,
	.start_tag = lfv_rdm_start,
	.discard_msg = lfv_rdm_discard,
	.discard_tag = lfv_rdm_discard,
};

/* Posts the waiting chain of receive buffers. Caller holds the rx
 * vcq->lock (the completion handler), or the endpoint is not yet
 * published (enable). */
void lfv_rdm_flush_rx(struct lfv_rdm_ep *ep)
{
	struct ibv_recv_wr *bad, *wr;

	if (!ep->nrepost)
		return;
	ep->repost_wr[ep->nrepost - 1].next = NULL;
	ep->nrepost = 0;
	for (wr = ep->repost_wr; LFV_TSAN && wr; wr = wr->next)
		lfv_tsan_posted(wr->wr_id);
	if (ibv_post_srq_recv(ep->srq, ep->repost_wr, &bad))
		LFV_WARN(FI_LOG_EP_DATA, "RDM: receive buffers were lost\n");
}

/*
 * A receive buffer goes back to the SRQ in a chain of repost_batch: one
 * ibv_post_srq_recv, and one device lock, per chain instead of per
 * buffer. At most repost_batch - 1 of the nrx buffers wait out of the
 * SRQ (repost_batch is 1 for small SRQs). Caller holds the rx vcq->lock,
 * as lfv_rdm_flush_rx.
 */
void lfv_rdm_post_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	uint32_t i = ep->nrepost;

	ep->repost_sge[i] = (struct ibv_sge){
		.addr = (uintptr_t)r->buf,
		.length = (uint32_t)ep->buf_size,
		.lkey = ep->mr->lkey,
	};
	ep->repost_wr[i] = (struct ibv_recv_wr){
		.wr_id = (uintptr_t)&r->op,
		.sg_list = &ep->repost_sge[i],
		.num_sge = 1,
		.next = &ep->repost_wr[i + 1],
	};
	if (++ep->nrepost == ep->repost_batch)
		lfv_rdm_flush_rx(ep);
}

void lfv_rdm_post_ctrl_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf,
			       .length = sizeof(struct lfv_rdm_ctrl_buf),
			       .lkey = ep->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)&r->op, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	lfv_tsan_posted(wr.wr_id);
	if (ibv_post_recv(ep->ctl_qp, &wr, &bad))
		LFV_WARN(FI_LOG_EP_CTRL, "RDM: a control buffer was lost\n");
}

/* ---- segmented eager (SAR), the receiving side ----------------------------- */

/* Copies len bytes to offset off of the receive's buffer; what fits. */
static size_t lfv_rdm_scatter_at(const struct fi_peer_rx_entry *e, size_t off,
				 const uint8_t *src, size_t len)
{
	size_t i, n, done = 0;

	for (i = 0; i < e->count && done < len; i++) {
		if (off >= e->iov[i].iov_len) {
			off -= e->iov[i].iov_len;
			continue;
		}
		n = e->iov[i].iov_len - off < len - done ?
		    e->iov[i].iov_len - off : len - done;
		memcpy((uint8_t *)e->iov[i].iov_base + off, src + done, n);
		done += n;
		off = 0;
	}
	return done;
}

/* Gives a SAR receive's memory back; no report (ep->lock not held). */
static void lfv_rdm_sar_free(struct lfv_rdm_ep *ep, struct lfv_rdm_sar_rx *sar)
{
	if (sar->e)
		ep->peer_srx->owner_ops->free_entry(sar->e);
	if (sar->e || sar->drop)
		free(sar->m);
	else
		lfv_rdm_unexp_free(sar->m);
	free(sar);
}

/* A SAR message that will not be whole: the receive that took it
 * completes in error, a copy is dropped (ep->lock not held). */
static void lfv_rdm_sar_fail(struct lfv_rdm_ep *ep, struct lfv_rdm_sar_rx *sar,
			     int err)
{
	if (sar->e)
		lfv_rdm_report(ep, sar->e, sar->m, sar->put, err);
	lfv_rdm_sar_free(ep, sar);
}

/* Its last segment is in: the receive that took it is reported; a copy
 * meets a receive posted since its first segment, or is queued. */
static void lfv_rdm_sar_done(struct lfv_rdm_ep *ep, struct lfv_rdm_sar_rx *sar)
{
	struct lfv_rdm_unexp *m = sar->m;
	struct fi_peer_rx_entry *e;
	int ret;

	if (sar->e) {
		lfv_rdm_report(ep, sar->e, m, sar->put, 0);
		lfv_rdm_sar_free(ep, sar);
		return;
	}
	if (sar->drop) {
		lfv_rdm_sar_free(ep, sar);
		return;
	}
	free(sar);
	ret = lfv_rdm_get_entry(ep, m, &e);
	if (!ret) {
		lfv_rdm_matched(ep, e, m, m->data);
		lfv_rdm_unexp_free(m);
	} else if (ret == -FI_ENOENT) {
		lfv_rdm_unexp_queue(ep, e, m);
	} else {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: no receive side: %s\n",
			 fi_strerror(-ret));
		lfv_rdm_unexp_free(m);
	}
}

/* Places a segment's n bytes (at sar->got); true when it was the last. */
static bool lfv_rdm_sar_take(struct lfv_rdm_sar_rx *sar, const uint8_t *data,
			     size_t n)
{
	if (sar->e)
		sar->put += lfv_rdm_scatter_at(sar->e, sar->got, data, n);
	else if (!sar->drop)
		memcpy(sar->m->data + sar->got, data, n);
	sar->got += n;
	return sar->got == sar->m->len;
}

/* A first segment: the message is matched now (its receive takes every
 * segment), or gathered in a copy matched when whole. NULL when it must
 * be dropped (counted); the caller places the segment. */
static struct lfv_rdm_sar_rx *lfv_rdm_sar_begin(struct lfv_rdm_ep *ep,
						const struct lfv_rdm_unexp *hdr)
{
	struct lfv_rdm_sar_rx *sar = calloc(1, sizeof(*sar));
	struct fi_peer_rx_entry *e;
	int ret, err;

	if (!sar) {
		lfv_rdm_unexp_dropped(ep);
		return NULL;
	}
	ret = lfv_rdm_get_entry(ep, hdr, &e);
	if (!ret) {
		sar->e = e;
	} else if (ret == -FI_ENOENT) {
		/* Matched again when whole: the entry is not held while the
		 * segments come (the owner may be another provider's). */
		ep->peer_srx->owner_ops->free_entry(e);
		sar->m = lfv_rdm_unexp_new(ep, hdr, hdr->len, &err);
		if (!sar->m)
			lfv_rdm_unexp_dropped(ep);
	} else {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: no receive side: %s\n",
			 fi_strerror(-ret));
	}
	if (!sar->m) {
		/* A header to count the segments by. */
		sar->m = malloc(sizeof(*sar->m));
		if (!sar->m) {
			if (sar->e)
				lfv_rdm_report(ep, sar->e, hdr, 0, -FI_ENOMEM);
			lfv_rdm_sar_free(ep, sar);
			lfv_rdm_unexp_dropped(ep);
			return NULL;
		}
		*sar->m = *hdr;
		sar->drop = !sar->e;
	}
	return sar;
}

/* A segment that breaks the order of segments, dropped, and with it the
 * message under way on that connection, if any (ep->lock not held). */
static void lfv_rdm_sar_malformed(struct lfv_rdm_ep *ep,
				  struct lfv_rdm_sar_rx *sar, const char *why)
{
	lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_MALFORMED,
		 why);
	if (sar)
		lfv_rdm_sar_fail(ep, sar, -FI_EIO);
}

/* The connection's SAR message, taken off it while the handler works on
 * it (the connection may go down meanwhile, on another thread). */
static struct lfv_rdm_sar_rx *lfv_rdm_sar_detach(struct lfv_rdm_ep *ep,
						 struct lfv_rdm_conn *c)
{
	struct lfv_rdm_sar_rx *sar;

	lfv_spin_lock(&ep->lock);
	sar = c->sar_rx;
	c->sar_rx = NULL;
	lfv_spin_unlock(&ep->lock);
	return sar;
}

/* Puts an unfinished SAR message back on its connection, or fails it
 * when the connection went down meanwhile (no segment will come). */
static void lfv_rdm_sar_attach(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			       struct lfv_rdm_sar_rx *sar)
{
	bool down;

	lfv_spin_lock(&ep->lock);
	down = lfv_rdm_conn_is_down(c);
	if (!down)
		c->sar_rx = sar;
	lfv_spin_unlock(&ep->lock);
	if (down)
		lfv_rdm_sar_fail(ep, sar, -FI_EIO);
}

/* A SAR_MSG, SAR_TAG or SEG from connection c (m: its header, op and
 * length as sent; data: what follows the header, h_len bytes). */
static void lfv_rdm_on_sar(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			   struct lfv_rdm_unexp *m, uint64_t off,
			   const uint8_t *data, size_t h_len)
{
	struct lfv_rdm_sar_rx *sar;
	struct lfv_rdm_sar first;
	size_t n = h_len;

	if (!c) {
		lfv_rdm_sar_malformed(ep, NULL, "an RDM message segment from "
				      "no connection");
		return;
	}
	sar = lfv_rdm_sar_detach(ep, c);
	if (m->op == LFV_RDM_SEG) {
		if (!sar || off != sar->got || n > sar->m->len - sar->got) {
			lfv_rdm_sar_malformed(ep, sar, "an RDM message segment "
					      "that is not the next one of a "
					      "message");
			return;
		}
	} else {
		if (sar)	/* the last one never finished */
			lfv_rdm_sar_malformed(ep, sar, "an RDM segmented "
					      "message cut short");
		memcpy(&first, data, sizeof(first));
		data += sizeof(first);
		n -= sizeof(first);
		/* More than this segment, within max_msg_size. */
		if (first.total <= n ||
		    first.total > ep->base.info->ep_attr->max_msg_size) {
			lfv_rdm_sar_malformed(ep, NULL, "an RDM segmented "
					      "message whose total is not past "
					      "its first segment, or past "
					      "max_msg_size");
			return;
		}
		m->op = m->op == LFV_RDM_SAR_TAG ? LFV_RDM_EAGER_TAG :
						   LFV_RDM_EAGER_MSG;
		m->len = first.total;
		sar = lfv_rdm_sar_begin(ep, m);
		if (!sar)
			return;
	}
	if (lfv_rdm_sar_take(sar, data, n))
		lfv_rdm_sar_done(ep, sar);
	else
		lfv_rdm_sar_attach(ep, c, sar);
}

void lfv_rdm_sar_drain(struct lfv_rdm_ep *ep, bool report)
{
	struct lfv_list todo, *item;
	struct lfv_rdm_sar_rx *sar;

	lfv_list_init(&todo);
	lfv_spin_lock(&ep->lock);
	while ((item = lfv_list_pop_head(&ep->sar_aborted)))
		lfv_list_insert_tail(&todo, item);
	lfv_spin_unlock(&ep->lock);
	while ((item = lfv_list_pop_head(&todo))) {
		sar = lfv_container_of(item, struct lfv_rdm_sar_rx, node);
		if (report)
			lfv_rdm_sar_fail(ep, sar, -FI_EIO);
		else
			lfv_rdm_sar_free(ep, sar);
	}
}

void lfv_rdm_sar_close(struct lfv_rdm_ep *ep)
{
	struct lfv_list *item;

	lfv_spin_lock(&ep->lock);
	lfv_list_foreach(item, &ep->conns)
		lfv_rdm_sar_abandon(ep, lfv_container_of(item,
					struct lfv_rdm_conn, node));
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sar_drain(ep, false);
}
