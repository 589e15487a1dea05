/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM endpoints: objects, the eager data path and the receive side
 * as a peer of the matching SRX (src/lfv_peer_srx.c). Connections are in
 * lfv_rdm_conn.c; the protocol in lfv_rdm.h; the objects in lfv_rdm_ep.h.
 *
 * In build (issue 5): eager messages (payload up to FI_LFVERBS_RDM_EAGER,
 * which is also max_msg_size for now), untagged and tagged. A message that
 * finds its receive is copied from the bounce buffer straight into it; one
 * that does not is copied out (the bounce buffer goes back to the SRQ at
 * once) and queued with the SRX until a receive starts it.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_tagged.h>

#include "lfv_av.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_peer_srx.h"
#include "lfv_rdm_ep.h"
#include "lfv_stubs.h"
#include "lfv_wait.h"

#define LFV_RDM_TX_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |        \
			  FI_DELIVERY_COMPLETE | FI_MORE)
#define LFV_RDM_DRAIN_NS (2 * 1000 * 1000 * 1000LL)

_Static_assert(sizeof(struct lfv_rdm_hdr) == LFV_RDM_HDR_SIZE,
	       "LFV_RDM_HDR_SIZE is the wire header");

static struct lfv_rdm_ep *lfv_rdm_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_rdm_ep, ep_fid.fid);
}

/* ---- completions -------------------------------------------------------- */

static void lfv_rdm_count(struct lfv_cntr *cntr, bool ok)
{
	if (!cntr)
		return;
	if (ok)
		lfv_cntr_inc(cntr);
	else
		lfv_cntr_inc_err(cntr);
}

static void lfv_rdm_tx_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			    int err, int prov_errno)
{
	struct fi_cq_err_entry e = {
		.op_context = r->context,
		.flags = r->cflags,
		.err = -err,
		.prov_errno = prov_errno,
	};
	struct lfv_cq_comp comp = {
		.context = r->context,
		.flags = r->cflags,
		.src = FI_ADDR_NOTAVAIL,
	};

	lfv_rdm_count(ep->tx_cntr, !err);
	if (!ep->tx_cq)
		return;
	if (err) {
		if (lfv_cq_write_err(ep->tx_cq, &e))
			LFV_WARN(FI_LOG_CQ, "lost an error completion\n");
	} else if (r->cflags && lfv_cq_write(ep->tx_cq, &comp)) {
		LFV_WARN(FI_LOG_CQ, "lost a completion\n");
	}
}

/* ---- posting ---------------------------------------------------------------- */

/* Posts one send on a connected QP (ep->lock held). */
/* The local SGEs of the read chunk [off, off + n). */
static int lfv_rdm_chunk_sges(const struct lfv_rdm_read *rd, size_t off,
			      size_t n, struct ibv_sge *sge)
{
	size_t base = 0, from, take;
	int i, k = 0;

	for (i = 0; i < rd->nseg && n; i++) {
		if (off >= base + rd->seg[i].len) {
			base += rd->seg[i].len;
			continue;
		}
		from = off - base;
		take = rd->seg[i].len - from < n ? rd->seg[i].len - from : n;
		sge[k++] = (struct ibv_sge){
			.addr = rd->seg[i].addr + from,
			.length = (uint32_t)take, .lkey = rd->seg[i].lkey,
		};
		off += take;
		n -= take;
		base += rd->seg[i].len;
	}
	return k;
}

/* Posts the read's chunks while the connection has room; 0 once all are
 * posted, -FI_EAGAIN while some wait (ep->lock). */
static int lfv_rdm_post_read(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     struct lfv_rdm_req *r)
{
	struct lfv_rdm_read *rd = r->read;
	struct ibv_sge sge[LFV_RDM_MAX_IOV];
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&r->op, .sg_list = sge,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	size_t n;
	int ret;

	while (rd->off < rd->got) {
		if (c->posted >= LFV_RDM_SQ_DEPTH)
			return -FI_EAGAIN;
		n = rd->got - rd->off < ep->max_rdma ? rd->got - rd->off :
						       ep->max_rdma;
		wr.num_sge = lfv_rdm_chunk_sges(rd, rd->off, n, sge);
		wr.wr.rdma.remote_addr = rd->raddr + rd->off;
		wr.wr.rdma.rkey = rd->rkey;
		ret = ibv_post_send(c->qp, &wr, &bad);
		if (ret)
			return lfv_post_ret(ret);
		c->posted++;
		rd->inflight++;
		rd->off += n;
	}
	return 0;
}

static int lfv_rdm_post(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			struct lfv_rdm_req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf, .length = r->len,
			       .lkey = ep->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&r->op, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	if (r->kind == LFV_RDM_K_READ)
		return lfv_rdm_post_read(ep, c, r);
	if (r->kind == LFV_RDM_K_FIN) {
		/* Inline: the header needs no registration. */
		sge = (struct ibv_sge){ .addr = (uintptr_t)&r->read->fin,
					.length = sizeof(r->read->fin) };
		wr.send_flags |= IBV_SEND_INLINE;
	} else if (r->len <= ep->max_inline) {
		wr.send_flags |= IBV_SEND_INLINE;
	}
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return lfv_post_ret(ret);
	c->posted++;
	return 0;
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

void lfv_rdm_fail_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			  int err)
{
	struct lfv_list *item;
	struct lfv_rdm_req *r;

	while ((item = lfv_list_pop_head(&c->pending))) {
		r = lfv_container_of(item, struct lfv_rdm_req, node);
		lfv_rdm_tx_done(ep, r, err, 0);
		lfv_list_insert_head(&ep->tx_free, &r->node);
	}
}

static size_t lfv_rdm_iov_len(const struct iovec *iov, size_t count)
{
	size_t i, len = 0;

	for (i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

static void lfv_rdm_gather(uint8_t *dst, const struct iovec *iov,
			   size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (!iov[i].iov_len)
			continue;
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

struct lfv_rdm_send {
	const struct iovec *iov;
	void **desc;			/* may be NULL */
	size_t count;
	fi_addr_t dest;
	uint64_t tag, data;
	uint64_t flags;			/* operation flags */
	void *context;
	bool tagged;
	bool inject;			/* fi_inject*: never a completion */
};

static int lfv_rdm_check_send(const struct lfv_rdm_ep *ep,
			      const struct lfv_rdm_send *s, size_t len)
{
	size_t i;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (s->count > ep->info->tx_attr->iov_limit || (s->count && !s->iov))
		return -FI_EINVAL;
	for (i = 0; i < s->count; i++)
		if (s->iov[i].iov_len && !s->iov[i].iov_base)
			return -FI_EINVAL;
	if (len > ep->info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	if ((s->inject || (s->flags & FI_INJECT)) &&
	    len > ep->info->tx_attr->inject_size)
		return -FI_EMSGSIZE;
	return 0;
}

static void lfv_rdm_fill(struct lfv_rdm_req *r, const struct lfv_rdm_send *s,
			 size_t len, bool report)
{
	struct lfv_rdm_hdr *h = (struct lfv_rdm_hdr *)r->buf;

	*h = (struct lfv_rdm_hdr){
		.op = s->tagged ? LFV_RDM_EAGER_TAG : LFV_RDM_EAGER_MSG,
		.flags = (s->flags & FI_REMOTE_CQ_DATA) ? LFV_RDM_HDR_DATA : 0,
		.len = (uint32_t)len,
		.tag = s->tag,
		.cq_data = s->data,
	};
	lfv_rdm_gather(r->buf + sizeof(*h), s->iov, s->count);
	r->len = (uint32_t)(sizeof(*h) + len);
	r->paylen = len;
	r->context = s->context;
	r->cflags = report ? (FI_SEND | (s->tagged ? FI_TAGGED : FI_MSG)) : 0;
	r->rndv = false;
}

/* Where the receiver reads a rendezvous payload from: the application's
 * registration when it gave one (RDM domains register for remote read),
 * else one of ours, over a gathered copy when there are several iovs. */
struct lfv_rdm_src {
	uint64_t addr;
	uint32_t rkey;
	struct ibv_mr *own_mr;
	void *own_copy;
};

static int lfv_rdm_rndv_src(struct lfv_rdm_ep *ep,
			    const struct lfv_rdm_send *s, size_t len,
			    struct lfv_rdm_src *src)
{
	void *base = s->count == 1 ? s->iov[0].iov_base : NULL;

	memset(src, 0, sizeof(*src));
	if (s->count == 1 && s->desc && s->desc[0]) {
		src->addr = (uintptr_t)base;
		src->rkey = ((struct lfv_mr *)s->desc[0])->ibv_mr->rkey;
		return 0;
	}
	if (s->count != 1) {
		src->own_copy = malloc(len);
		if (!src->own_copy)
			return -FI_ENOMEM;
		lfv_rdm_gather(src->own_copy, s->iov, s->count);
		base = src->own_copy;
	}
	src->own_mr = ibv_reg_mr(ep->domain->pd, base, len,
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ);
	if (!src->own_mr) {
		free(src->own_copy);
		return lfv_verbs_errno();
	}
	src->addr = (uintptr_t)base;
	src->rkey = src->own_mr->rkey;
	return 0;
}

static void lfv_rdm_src_free(struct ibv_mr *mr, void *copy)
{
	if (mr)
		ibv_dereg_mr(mr);
	free(copy);
}

/* A rendezvous request: RTS {length, address, key, cookie}. */
static void lfv_rdm_fill_rts(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct lfv_rdm_send *s, size_t len,
			     const struct lfv_rdm_src *src, bool report)
{
	struct lfv_rdm_hdr *h = (struct lfv_rdm_hdr *)r->buf;
	struct lfv_rdm_rts *rts = (struct lfv_rdm_rts *)(h + 1);

	*h = (struct lfv_rdm_hdr){
		.op = s->tagged ? LFV_RDM_RTS_TAG : LFV_RDM_RTS_MSG,
		.flags = (s->flags & FI_REMOTE_CQ_DATA) ? LFV_RDM_HDR_DATA : 0,
		.len = sizeof(*rts),
		.tag = s->tag,
		.cq_data = s->data,
	};
	*rts = (struct lfv_rdm_rts){
		.len = len, .addr = src->addr, .rkey = src->rkey,
		.cookie = (uint64_t)(r - ep->reqs),
	};
	r->len = (uint32_t)(sizeof(*h) + sizeof(*rts));
	r->paylen = len;
	r->context = s->context;
	r->cflags = report ? (FI_SEND | (s->tagged ? FI_TAGGED : FI_MSG)) : 0;
	r->rndv = true;
	r->rndv_wait = 2;		/* the RTS sent, the FIN received */
	r->rndv_err = 0;
	r->own_mr = src->own_mr;
	r->own_copy = src->own_copy;
}

static ssize_t lfv_rdm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s)
{
	size_t len = lfv_rdm_iov_len(s->iov, s->count);
	bool report = !s->inject &&
		      (!ep->tx_selective || (s->flags & FI_COMPLETION));
	struct lfv_rdm_conn *c;
	struct lfv_rdm_req *r;
	int ret;

	struct lfv_rdm_src src = { 0 };

	ret = lfv_rdm_check_send(ep, s, len);
	if (ret)
		return ret;
	if (len > ep->eager) {
		/* Registration is a system call: not under ep->lock. */
		ret = lfv_rdm_rndv_src(ep, s, len, &src);
		if (ret)
			return ret;
	}
	lfv_spin_lock(&ep->lock);
	lfv_rdm_timers(ep);
	if (lfv_list_empty(&ep->tx_free)) {
		/* Send completions give buffers back: poll once (never with
		 * ep->lock held: the handler takes it). */
		lfv_spin_unlock(&ep->lock);
		lfv_vcq_progress(ep->tx_vcq);
		lfv_spin_lock(&ep->lock);
		if (lfv_list_empty(&ep->tx_free)) {
			ret = -FI_EAGAIN;
			goto unlock;
		}
	}
	c = lfv_rdm_conn_get(ep, s->dest, &ret);
	if (!c)
		goto unlock;
	r = lfv_container_of(lfv_list_pop_head(&ep->tx_free),
			     struct lfv_rdm_req, node);
	if (len > ep->eager)
		lfv_rdm_fill_rts(ep, r, s, len, &src, report);
	else
		lfv_rdm_fill(r, s, len, report);
	src = (struct lfv_rdm_src){ 0 };	/* the request owns it now */
	r->conn = c;
	/* In call order: behind anything still waiting for the QP. */
	if (c->state == LFV_RDM_CONNECTED && lfv_list_empty(&c->pending) &&
	    c->posted < LFV_RDM_SQ_DEPTH && !lfv_rdm_post(ep, c, r))
		goto unlock;
	lfv_list_insert_tail(&c->pending, &r->node);
unlock:
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_src_free(src.own_mr, src.own_copy);	/* on failure only */
	return ret;
}

/* ---- receiving ------------------------------------------------------------ */

static size_t lfv_rdm_scatter(const struct fi_peer_rx_entry *e,
			      const uint8_t *src, size_t len)
{
	size_t i, n, done = 0;

	for (i = 0; i < e->count && done < len; i++) {
		n = e->iov[i].iov_len < len - done ? e->iov[i].iov_len :
						     len - done;
		if (n)
			memcpy(e->iov[i].iov_base, src + done, n);
		done += n;
	}
	return done;
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
	struct lfv_cq_comp comp = {
		.context = e->context, .flags = flags, .len = got,
		.buf = e->count ? e->iov[0].iov_base : NULL,
		.data = m->cq_data, .tag = m->tag, .src = m->src,
	};
	struct fi_cq_err_entry ee = {
		.op_context = e->context, .flags = flags, .len = got,
		.buf = comp.buf, .data = m->cq_data, .tag = m->tag,
		.olen = m->len - got, .err = err ? -err : FI_ETRUNC,
		.prov_errno = err ? err : -FI_ETRUNC,
	};

	if (got < m->len && !err)
		err = -FI_ETRUNC;
	lfv_rdm_count(ep->rx_cntr, !err);
	if (!ep->rx_cq)
		return;
	if (err) {
		if (lfv_cq_write_err(ep->rx_cq, &ee))
			LFV_WARN(FI_LOG_CQ, "lost an error completion\n");
		return;
	}
	if ((!ep->rx_selective || (e->flags & (FI_COMPLETION | FI_MULTI_RECV))) &&
	    lfv_cq_write(ep->rx_cq, &comp))
		LFV_WARN(FI_LOG_CQ, "lost a completion\n");
}

/* Copies an eager message into the receive entry e and reports it. */
static void lfv_rdm_deliver(struct lfv_rdm_ep *ep, struct fi_peer_rx_entry *e,
			    const struct lfv_rdm_unexp *m, const uint8_t *data)
{
	lfv_rdm_report(ep, e, m, lfv_rdm_scatter(e, data, m->len), 0);
}

/* ---- rendezvous, the receiving side ---------------------------------------- */

/* Posts r on its connection, or queues it behind what waits (ep->lock). */
static void lfv_rdm_post_or_queue(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct lfv_rdm_conn *c = r->conn;

	if (c->state == LFV_RDM_CONNECTED && lfv_list_empty(&c->pending) &&
	    c->posted < LFV_RDM_SQ_DEPTH && !lfv_rdm_post(ep, c, r))
		return;
	lfv_list_insert_tail(&c->pending, &r->node);
}

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
	return q;
}

static void lfv_rdm_read_unreg(struct lfv_rdm_read *rd)
{
	int i;

	for (i = 0; i < LFV_RDM_MAX_IOV; i++)
		if (rd->mrs[i])
			ibv_dereg_mr(rd->mrs[i]);
}

/* The local SGEs of the read: the receive's iovs up to the message's
 * length, with the application's keys or ours. */
static int lfv_rdm_read_sges(struct lfv_rdm_ep *ep, struct lfv_rdm_read *rd,
			     const struct fi_peer_rx_entry *e)
{
	size_t i, n, want = rd->len;
	struct ibv_mr *mr;

	rd->nseg = 0;
	rd->got = 0;
	for (i = 0; i < e->count && i < LFV_RDM_MAX_IOV && rd->got < want;
	     i++) {
		n = e->iov[i].iov_len < want - rd->got ? e->iov[i].iov_len :
							 want - rd->got;
		if (!n)
			continue;
		if (e->desc && e->desc[i]) {
			mr = ((struct lfv_mr *)e->desc[i])->ibv_mr;
		} else {
			mr = ibv_reg_mr(ep->domain->pd, e->iov[i].iov_base, n,
					IBV_ACCESS_LOCAL_WRITE);
			if (!mr)
				return lfv_verbs_errno();
			rd->mrs[i] = mr;
		}
		rd->seg[rd->nseg].addr = (uintptr_t)e->iov[i].iov_base;
		rd->seg[rd->nseg].len = n;
		rd->seg[rd->nseg].lkey = mr->lkey;
		rd->nseg++;
		rd->got += n;
	}
	return 0;
}

/* A rendezvous request met its receive: read the payload into it. */
static void lfv_rdm_read_start(struct lfv_rdm_ep *ep,
			       struct fi_peer_rx_entry *e,
			       const struct lfv_rdm_unexp *m)
{
	struct lfv_rdm_rreq *q = lfv_rdm_rreq_new(ep, m);
	int ret;

	if (!q) {
		/* Nothing to tell the sender with: it waits; the receive
		 * reports the failure. */
		lfv_rdm_report(ep, e, m, 0, -FI_ENOMEM);
		ep->peer_srx->owner_ops->free_entry(e);
		return;
	}
	q->rd.entry = e;
	ret = lfv_rdm_read_sges(ep, &q->rd, e);
	if (ret || !q->rd.nseg) {
		/* Nothing to read into (or no registration): report now. */
		lfv_rdm_report(ep, e, m, 0, ret);
		ep->peer_srx->owner_ops->free_entry(e);
		q->rd.entry = NULL;
		lfv_rdm_read_unreg(&q->rd);
		lfv_rdm_send_fin(ep, &q->req, !ret);
		return;
	}
	lfv_spin_lock(&ep->lock);
	lfv_rdm_post_or_queue(ep, &q->req);
	lfv_spin_unlock(&ep->lock);
}

/* The read finished: report the receive, then answer the sender. */
static void lfv_rdm_read_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			      bool ok)
{
	struct lfv_rdm_read *rd = r->read;
	struct lfv_rdm_unexp m = {
		.src = rd->src, .op = rd->op, .flags = rd->flags,
		.tag = rd->tag, .cq_data = rd->cq_data, .len = rd->len,
	};

	lfv_rdm_report(ep, rd->entry, &m, ok ? rd->got : 0,
		       ok ? 0 : -FI_EIO);
	ep->peer_srx->owner_ops->free_entry(rd->entry);
	rd->entry = NULL;
	lfv_rdm_read_unreg(rd);
	lfv_rdm_send_fin(ep, r, ok);
}

/* A completion on a connection's send queue: its room comes back. */
static void lfv_rdm_sq_done(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			    bool ok)
{
	lfv_spin_lock(&ep->lock);
	c->posted--;
	if (!ok && c->state == LFV_RDM_CONNECTED)
		lfv_rdm_conn_fail(ep, c, -FI_ECONNRESET);
	else if (c->state == LFV_RDM_CONNECTED)
		lfv_rdm_flush_pending(ep, c);
	lfv_spin_unlock(&ep->lock);
}

/* One chunk of a read completed; the last one finishes the receive. */
static void lfv_rdm_read_chunk_done(struct lfv_rdm_ep *ep,
				    struct lfv_rdm_req *r, bool ok)
{
	struct lfv_rdm_read *rd = r->read;
	bool last;

	lfv_spin_lock(&ep->lock);
	rd->inflight--;
	if (!ok) {
		rd->failed = true;
		rd->off = rd->got;	/* post nothing more */
		lfv_list_remove(&r->node);	/* if it waited */
	}
	last = !rd->inflight && rd->off == rd->got;
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, r->conn, ok);
	if (!last)
		return;
	if (!ep->enabled) { /* closing: nobody to tell */
		lfv_rdm_read_unreg(rd);
		free(lfv_container_of(r, struct lfv_rdm_rreq, req));
		return;
	}
	lfv_rdm_read_done(ep, r, !rd->failed);
}

/* ---- rendezvous, the sending side ------------------------------------------- */

static void lfv_rdm_rndv_finish(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	lfv_rdm_tx_done(ep, r, r->rndv_err, 0);
	lfv_rdm_src_free(r->own_mr, r->own_copy);
	r->own_mr = NULL;
	r->own_copy = NULL;
	lfv_spin_lock(&ep->lock);
	r->rndv = false;
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
}

/* One of the two events a rendezvous send waits for. */
static void lfv_rdm_rndv_event(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			       int err)
{
	bool done;

	lfv_spin_lock(&ep->lock);
	if (err && !r->rndv_err)
		r->rndv_err = err;
	done = !--r->rndv_wait;
	lfv_spin_unlock(&ep->lock);
	if (done)
		lfv_rdm_rndv_finish(ep, r);
}

/* FIN: the cookie names one of our transmit requests. */
static void lfv_rdm_on_fin(struct lfv_rdm_ep *ep, const struct lfv_rdm_hdr *h)
{
	struct lfv_rdm_req *r;

	if (h->tag >= ep->ntx)
		return;
	r = &ep->reqs[h->tag];
	if (!r->rndv || !r->rndv_wait)
		return; /* stale: not a rendezvous we wait for */
	lfv_rdm_rndv_event(ep, r,
			   (h->flags & LFV_RDM_HDR_ERR) ? -FI_EIO : 0);
}

/* The header of a message checked against what arrived; the payload (an
 * eager message's data, an RTS) follows it. */
static bool lfv_rdm_hdr_ok(const struct lfv_rdm_hdr *h, uint32_t byte_len)
{
	if (byte_len < sizeof(*h) || h->len != byte_len - sizeof(*h))
		return false;
	switch (h->op) {
	case LFV_RDM_EAGER_MSG:
	case LFV_RDM_EAGER_TAG:
		return true;
	case LFV_RDM_RTS_MSG:
	case LFV_RDM_RTS_TAG:
		return h->len == sizeof(struct lfv_rdm_rts);
	case LFV_RDM_FIN:
		return !h->len;
	default:
		return false;
	}
}

static bool lfv_rdm_is_rts(uint8_t op)
{
	return op == LFV_RDM_RTS_MSG || op == LFV_RDM_RTS_TAG;
}

static bool lfv_rdm_is_tagged(uint8_t op)
{
	return op == LFV_RDM_EAGER_TAG || op == LFV_RDM_RTS_TAG;
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

/* A message landed in a bounce buffer: match it or queue a copy (of the
 * data, or of the RTS). */
static void lfv_rdm_arrived(struct lfv_rdm_ep *ep, const struct ibv_wc *wc,
			    const uint8_t *buf)
{
	const struct lfv_rdm_hdr *h = (const struct lfv_rdm_hdr *)buf;
	const uint8_t *data = buf + sizeof(*h);
	struct fid_peer_srx *srx = ep->peer_srx;
	struct fi_peer_rx_entry *e;
	struct lfv_rdm_unexp m, *copy;
	struct lfv_rdm_conn *c;
	size_t keep;
	int ret;

	if (!lfv_rdm_hdr_ok(h, wc->byte_len)) {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: malformed message dropped\n");
		return;
	}
	if (h->op == LFV_RDM_FIN) {
		lfv_rdm_on_fin(ep, h);
		return;
	}
	lfv_spin_lock(&ep->lock);
	c = lfv_rdm_conn_by_qpn(ep, wc->qp_num);
	if (c)
		lfv_rdm_conn_lookup_addr(ep, c);
	m = (struct lfv_rdm_unexp){
		.ep = ep, .src = c ? c->addr : FI_ADDR_NOTAVAIL, .conn = c,
		.op = h->op, .flags = h->flags, .tag = h->tag,
		.cq_data = h->cq_data, .len = h->len,
	};
	lfv_spin_unlock(&ep->lock);
	if (lfv_rdm_is_rts(h->op)) {
		if (!c)
			return; /* nobody to read from */
		memcpy(&m.rts, data, sizeof(m.rts));
		m.len = m.rts.len;
	}
	if (lfv_rdm_is_tagged(h->op))
		ret = srx->owner_ops->get_tag(srx, m.src, m.tag, &e);
	else
		ret = srx->owner_ops->get_msg(srx, m.src, m.len, &e);
	if (!ret) {
		lfv_rdm_matched(ep, e, &m, data);
		return;
	}
	if (ret != -FI_ENOENT) {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: no receive side: %s\n",
			 fi_strerror(-ret));
		return;
	}
	keep = lfv_rdm_is_rts(h->op) ? 0 : m.len;
	copy = malloc(sizeof(*copy) + keep);
	if (!copy) {
		LFV_WARN(FI_LOG_EP_DATA, "RDM: message dropped: no memory\n");
		srx->owner_ops->free_entry(e);
		return;
	}
	*copy = m;
	memcpy(copy->data, data, keep);
	e->peer_context = copy;
	e->size = m.len;
	e->srx = srx;
	if (lfv_rdm_is_tagged(h->op))
		srx->owner_ops->queue_tag(e);
	else
		srx->owner_ops->queue_msg(e);
}

static int lfv_rdm_start(struct fi_peer_rx_entry *e)
{
	struct lfv_rdm_unexp *m = e->peer_context;

	lfv_rdm_matched(m->ep, e, m, m->data);
	free(m);
	return 0;
}

/* The application discarded a queued message. A rendezvous sender still
 * waits for its FIN: it gets one (nothing was read). */
static int lfv_rdm_discard(struct fi_peer_rx_entry *e)
{
	struct lfv_rdm_unexp *m = e->peer_context;
	struct lfv_rdm_rreq *q;

	if (lfv_rdm_is_rts(m->op)) {
		q = lfv_rdm_rreq_new(m->ep, m);
		if (q)
			lfv_rdm_send_fin(m->ep, &q->req, true);
	}
	free(m);
	return 0;
}

/* A peek's CQ data (the SRX asks: 1.17 entries have no field for it). */
static bool lfv_rdm_peek_data(const struct fi_peer_rx_entry *e,
			      uint64_t *data)
{
	const struct lfv_rdm_unexp *m = e->peer_context;

	if (!m || !(m->flags & LFV_RDM_HDR_DATA))
		return false;
	*data = m->cq_data;
	return true;
}

static struct fi_ops_srx_peer lfv_rdm_srx_peer_ops = {
	.size = sizeof(struct fi_ops_srx_peer),
	.start_msg = lfv_rdm_start,
	.start_tag = lfv_rdm_start,
	.discard_msg = lfv_rdm_discard,
	.discard_tag = lfv_rdm_discard,
};

static void lfv_rdm_post_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf,
			       .length = (uint32_t)ep->buf_size,
			       .lkey = ep->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)&r->op, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(ep->srq, &wr, &bad))
		LFV_WARN(FI_LOG_EP_DATA, "RDM: a receive buffer was lost\n");
}

static void lfv_rdm_post_ctrl_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf,
			       .length = sizeof(struct lfv_rdm_ctrl_buf),
			       .lkey = ep->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)&r->op, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(ep->ctl_qp, &wr, &bad))
		LFV_WARN(FI_LOG_EP_CTRL, "RDM: a control buffer was lost\n");
}

/* ---- the completion handler ------------------------------------------------ */

static void lfv_rdm_tx_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
				  const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c = r->conn;
	bool ok = wc->status == IBV_WC_SUCCESS;

	if (r->rndv) {
		/* The RTS left (or not: then no FIN will come). */
		if (!ok)
			r->rndv_wait = 1;
		lfv_rdm_sq_done(ep, c, ok);
		lfv_rdm_rndv_event(ep, r,
				   ok ? 0 : -lfv_wc_errno(wc->status));
		return;
	}
	lfv_rdm_tx_done(ep, r, ok ? 0 : -lfv_wc_errno(wc->status),
			ok ? 0 : (int)wc->status);
	lfv_spin_lock(&ep->lock);
	lfv_list_insert_head(&ep->tx_free, &r->node);
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_sq_done(ep, c, ok);
}

static void lfv_rdm_completion(struct lfv_queue *q, struct lfv_op *op,
			       const struct ibv_wc *wc)
{
	struct lfv_rdm_ep *ep = lfv_container_of(q, struct lfv_rdm_ep, wq);
	struct lfv_rdm_req *r = lfv_container_of(op, struct lfv_rdm_req, op);
	struct lfv_rdm_ctrl_buf *cb;
	bool ok = wc->status == IBV_WC_SUCCESS;

	switch (r->kind) {
	case LFV_RDM_K_TX:
		lfv_rdm_tx_completion(ep, r, wc);
		return;
	case LFV_RDM_K_RX:
		if (!ok) /* flushed at close: the SRQ goes with it */
			return;
		if (!ep->enabled)
			return;
		lfv_rdm_arrived(ep, wc, r->buf);
		lfv_rdm_post_rx(ep, r);
		return;
	case LFV_RDM_K_CTRL_RX:
		if (!ok || !ep->enabled)
			return;
		cb = (struct lfv_rdm_ctrl_buf *)r->buf;
		lfv_spin_lock(&ep->lock);
		if (wc->byte_len > LFV_GRH_SIZE)
			lfv_rdm_ctrl_arrived(ep, &cb->msg,
					     wc->byte_len - LFV_GRH_SIZE);
		lfv_spin_unlock(&ep->lock);
		lfv_rdm_post_ctrl_rx(ep, r);
		return;
	case LFV_RDM_K_CTRL_TX:
		lfv_spin_lock(&ep->lock);
		lfv_list_insert_head(&ep->ctl_free, &r->node);
		lfv_spin_unlock(&ep->lock);
		return;
	case LFV_RDM_K_READ:
		lfv_rdm_read_chunk_done(ep, r, ok);
		return;
	case LFV_RDM_K_FIN:
		lfv_rdm_sq_done(ep, r->conn, ok);
		free(lfv_container_of(r, struct lfv_rdm_rreq, req));
		return;
	}
}

/* The CQs' progress hook (arg: the CQ's verbs CQ). Reading a CQ of an RDM
 * endpoint drives the endpoint: send completions give back the buffers and
 * the per-connection room that later sends (and those queued behind them)
 * need, even when the application only reads its receive CQ (fi_inject
 * makes no completion to read); handshakes that wait for an answer are
 * resent. Under FI_THREAD_COMPLETION another thread may own the endpoint's
 * other CQ: only this one is polled then (sends poll their own when out of
 * buffers). */
static void lfv_rdm_cq_progress(void *arg)
{
	struct lfv_vcq *vcq = arg;
	struct lfv_domain *domain = vcq->domain;
	bool both = domain->info->domain_attr->threading !=
		    FI_THREAD_COMPLETION;
	struct lfv_list *item;
	struct lfv_rdm_ep *ep;

	/* Without locks the application serialises opening and closing
	 * endpoints with reading their CQs. */
	if (domain->locked)
		pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->rdm_eps) {
		ep = lfv_container_of(item, struct lfv_rdm_ep, dnode);
		if (ep->tx_vcq != vcq && ep->rx_vcq != vcq)
			continue;
		if (both || ep->tx_vcq == vcq)
			lfv_vcq_progress(ep->tx_vcq);
		if (ep->rx_vcq != ep->tx_vcq && (both || ep->rx_vcq == vcq))
			lfv_vcq_progress(ep->rx_vcq);
		/* Relaxed read: a hint; the timers run under the lock. */
		if (!ep->handshakes)
			continue;
		lfv_spin_lock(&ep->lock);
		lfv_rdm_timers(ep);
		lfv_spin_unlock(&ep->lock);
	}
	if (domain->locked)
		pthread_mutex_unlock(&domain->vcq_lock);
}

/* ---- fi_ops_msg and fi_ops_tagged ------------------------------------------ */

static uint64_t lfv_rdm_tx_flags(const struct lfv_rdm_ep *ep)
{
	return ep->tx_op_flags;
}

static ssize_t lfv_rdm_msg_send(struct fid_ep *ep_fid, const void *buf,
				size_t len, void *desc, fi_addr_t dest,
				void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest,
		.context = context,
		.flags = lfv_rdm_tx_flags(ep) });
}

static ssize_t lfv_rdm_msg_sendv(struct fid_ep *ep_fid,
				 const struct iovec *iov, void **desc,
				 size_t count, fi_addr_t dest, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = iov, .desc = desc, .count = count, .dest = dest,
		.context = context,
		.flags = lfv_rdm_tx_flags(ep) });
}

static ssize_t lfv_rdm_msg_sendmsg(struct fid_ep *ep_fid,
				   const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_RDM_TX_FLAGS)
		return -FI_EBADFLAGS;
	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count,
		.dest = msg->addr, .context = msg->context,
		.data = msg->data, .flags = flags });
}

static ssize_t lfv_rdm_msg_inject(struct fid_ep *ep_fid, const void *buf,
				  size_t len, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = &iov, .count = 1, .dest = dest, .inject = true });
}

static ssize_t lfv_rdm_msg_senddata(struct fid_ep *ep_fid, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest,
		.context = context,
		.data = data,
		.flags = lfv_rdm_tx_flags(ep) | FI_REMOTE_CQ_DATA });
}

static ssize_t lfv_rdm_msg_injectdata(struct fid_ep *ep_fid, const void *buf,
				      size_t len, uint64_t data,
				      fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = &iov, .count = 1, .dest = dest, .data = data,
		.flags = FI_REMOTE_CQ_DATA, .inject = true });
}

/* Receives are the SRX's (the endpoint's own or the bound one). */
static ssize_t lfv_rdm_msg_recv(struct fid_ep *ep_fid, void *buf, size_t len,
				void *desc, fi_addr_t src, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_recv(ep->srx, buf, len, desc, src, context);
}

static ssize_t lfv_rdm_msg_recvv(struct fid_ep *ep_fid,
				 const struct iovec *iov, void **desc,
				 size_t count, fi_addr_t src, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_recvv(ep->srx, iov, desc, count, src, context);
}

static ssize_t lfv_rdm_msg_recvmsg(struct fid_ep *ep_fid,
				   const struct fi_msg *msg, uint64_t flags)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_recvmsg(ep->srx, msg, flags);
}

static struct fi_ops_msg lfv_rdm_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lfv_rdm_msg_recv,
	.recvv = lfv_rdm_msg_recvv,
	.recvmsg = lfv_rdm_msg_recvmsg,
	.send = lfv_rdm_msg_send,
	.sendv = lfv_rdm_msg_sendv,
	.sendmsg = lfv_rdm_msg_sendmsg,
	.inject = lfv_rdm_msg_inject,
	.senddata = lfv_rdm_msg_senddata,
	.injectdata = lfv_rdm_msg_injectdata,
};

static ssize_t lfv_rdm_tsend(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest, .tag = tag,
		.context = context, .flags = lfv_rdm_tx_flags(ep),
		.tagged = true });
}

static ssize_t lfv_rdm_tsendv(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t tag, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = iov, .desc = desc, .count = count, .dest = dest, .tag = tag,
		.context = context, .flags = lfv_rdm_tx_flags(ep),
		.tagged = true });
}

static ssize_t lfv_rdm_tsendmsg(struct fid_ep *ep_fid,
				const struct fi_msg_tagged *msg,
				uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_RDM_TX_FLAGS)
		return -FI_EBADFLAGS;
	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count,
		.dest = msg->addr, .tag = msg->tag, .context = msg->context,
		.data = msg->data, .flags = flags, .tagged = true });
}

static ssize_t lfv_rdm_tinject(struct fid_ep *ep_fid, const void *buf,
			       size_t len, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = &iov, .count = 1, .dest = dest, .tag = tag,
		.tagged = true, .inject = true });
}

static ssize_t lfv_rdm_tsenddata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest, uint64_t tag, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest, .tag = tag,
		.context = context, .data = data,
		.flags = lfv_rdm_tx_flags(ep) | FI_REMOTE_CQ_DATA,
		.tagged = true });
}

static ssize_t lfv_rdm_tinjectdata(struct fid_ep *ep_fid, const void *buf,
				   size_t len, uint64_t data, fi_addr_t dest,
				   uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), &(struct lfv_rdm_send){
		.iov = &iov, .count = 1, .dest = dest, .tag = tag,
		.data = data, .flags = FI_REMOTE_CQ_DATA, .tagged = true,
		.inject = true });
}

static ssize_t lfv_rdm_trecv(struct fid_ep *ep_fid, void *buf, size_t len,
			     void *desc, fi_addr_t src, uint64_t tag,
			     uint64_t ignore, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_trecv(ep->srx, buf, len, desc, src, tag, ignore, context);
}

static ssize_t lfv_rdm_trecvv(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t src,
			      uint64_t tag, uint64_t ignore, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_trecvv(ep->srx, iov, desc, count, src, tag, ignore,
			 context);
}

static ssize_t lfv_rdm_trecvmsg(struct fid_ep *ep_fid,
				const struct fi_msg_tagged *msg,
				uint64_t flags)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP; /* an owner's SRX takes receives */
	return fi_trecvmsg(ep->srx, msg, flags);
}

static struct fi_ops_tagged lfv_rdm_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lfv_rdm_trecv,
	.recvv = lfv_rdm_trecvv,
	.recvmsg = lfv_rdm_trecvmsg,
	.send = lfv_rdm_tsend,
	.sendv = lfv_rdm_tsendv,
	.sendmsg = lfv_rdm_tsendmsg,
	.inject = lfv_rdm_tinject,
	.senddata = lfv_rdm_tsenddata,
	.injectdata = lfv_rdm_tinjectdata,
};

/* ---- fi_ops_ep and fi_ops_cm ------------------------------------------------ */

static ssize_t lfv_rdm_cancel(fid_t fid, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (!ep->enabled || !ep->srx)
		return -FI_ENOENT;
	return fi_cancel(&ep->srx->fid, context);
}

static int lfv_rdm_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_MIN_MULTI_RECV || !ep->srx)
		return -FI_ENOPROTOOPT;
	return fi_getopt(&ep->srx->fid, level, optname, optval, optlen);
}

static int lfv_rdm_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_MIN_MULTI_RECV || !ep->srx)
		return -FI_ENOPROTOOPT;
	return fi_setopt(&ep->srx->fid, level, optname, optval, optlen);
}

static ssize_t lfv_rdm_tx_size_left(struct fid_ep *ep_fid)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);
	struct lfv_list *item;
	ssize_t n = 0;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	lfv_spin_lock(&ep->lock);
	lfv_list_foreach(item, &ep->tx_free)
		n++;
	lfv_spin_unlock(&ep->lock);
	return n;
}

static struct fi_ops_ep lfv_rdm_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_rdm_cancel,
	.getopt = lfv_rdm_getopt,
	.setopt = lfv_rdm_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_no_size_left,
	.tx_size_left = lfv_rdm_tx_size_left,
};

static int lfv_rdm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE; /* the name is the control QP's */
	return lfv_copy_name(&ep->name, sizeof(ep->name), addr, addrlen);
}

static struct fi_ops_cm lfv_rdm_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfv_no_setname,
	.getname = lfv_rdm_getname,
	.getpeer = lfv_no_getpeer,
	.connect = lfv_no_connect,
	.listen = lfv_no_listen,
	.accept = lfv_no_accept,
	.reject = lfv_no_reject,
	.shutdown = lfv_no_shutdown,
	.join = lfv_no_join,
};

/* An owner's SRX imported with FI_PEER (fi_peer(3)): receives are posted
 * with the owner; lfverbs' endpoints bound to it are its peer. */
struct lfv_rdm_isrx {
	struct fid_ep ep_fid;		/* FI_CLASS_SRX_CTX */
	struct fid_peer_srx *peer;	/* the owner's */
	lfv_atomic32_t ref;		/* 1 + endpoints bound */
};

static int lfv_rdm_isrx_close(struct fid *fid)
{
	struct lfv_rdm_isrx *x = lfv_container_of(fid, struct lfv_rdm_isrx,
						  ep_fid.fid);

	if (lfv_ref_read(&x->ref) > 1)
		return -FI_EBUSY;
	free(x);
	return 0;
}

static struct fi_ops lfv_rdm_isrx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_rdm_isrx_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

int lfv_rdm_srx_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
			struct fid_ep **rx_ep, void *context)
{
	struct fi_peer_srx_context *pctx = context;
	struct fi_rx_attr own = { .iov_limit = LFV_RDM_MAX_IOV };
	struct lfv_rdm_isrx *x;

	if (attr && (attr->op_flags & FI_PEER)) {
		if (!pctx || !pctx->srx || !pctx->srx->owner_ops)
			return -FI_EINVAL;
		x = calloc(1, sizeof(*x));
		if (!x)
			return -FI_ENOMEM;
		x->peer = pctx->srx;
		x->peer->peer_ops = &lfv_rdm_srx_peer_ops;
		atomic_init(&x->ref, 1);
		x->ep_fid.fid.fclass = FI_CLASS_SRX_CTX;
		x->ep_fid.fid.context = context;
		x->ep_fid.fid.ops = &lfv_rdm_isrx_fi_ops;
		x->ep_fid.ops = &lfv_no_ep_ops;
		x->ep_fid.cm = &lfv_no_cm_ops;
		x->ep_fid.msg = &lfv_no_msg_ops;
		x->ep_fid.rma = &lfv_no_rma_ops;
		x->ep_fid.tagged = &lfv_no_tagged_ops;
		x->ep_fid.atomic = &lfv_no_atomic_ops;
		x->ep_fid.collective = &lfv_no_collective_ops;
		*rx_ep = &x->ep_fid;
		return 0;
	}
	if (attr) {
		own.iov_limit = attr->iov_limit ? attr->iov_limit :
						  LFV_RDM_MAX_IOV;
		own.op_flags = attr->op_flags;
	}
	return lfv_peer_srx_open(&own, domain->info->caps & LFV_PEER_SRX_CAPS,
				 context, rx_ep);
}

static bool lfv_rdm_is_isrx(const struct fid *fid)
{
	return fid->ops == &lfv_rdm_isrx_fi_ops;
}

/* ---- bind ---------------------------------------------------------------------- */

static int lfv_rdm_bind_cq(struct lfv_rdm_ep *ep, struct lfv_cq *cq,
			   uint64_t flags)
{
	return lfv_bind_cq_pair(cq, flags, &ep->tx_cq, &ep->tx_selective,
				&ep->rx_cq, &ep->rx_selective);
}

static int lfv_rdm_bind_cntr(struct lfv_rdm_ep *ep, struct lfv_cntr *cntr,
			     uint64_t flags)
{
	if (!flags || (flags & ~(uint64_t)(FI_SEND | FI_RECV)))
		return -FI_EBADFLAGS;
	if (((flags & FI_SEND) && ep->tx_cntr) ||
	    ((flags & FI_RECV) && ep->rx_cntr))
		return -FI_EINVAL;
	if (flags & FI_SEND) {
		ep->tx_cntr = cntr;
		lfv_ref_get(&cntr->ref);
	}
	if (flags & FI_RECV) {
		ep->rx_cntr = cntr;
		lfv_ref_get(&cntr->ref);
	}
	lfv_cntr_set_progress(cntr, (struct lfv_progress_hook){
		.fn = lfv_domain_progress, .arg = ep->domain });
	return 0;
}

static int lfv_rdm_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);
	struct lfv_av *av;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ:
		return lfv_rdm_bind_cq(ep, lfv_cq_from_fid(
			lfv_container_of(bfid, struct fid_cq, fid)), flags);
	case FI_CLASS_CNTR:
		return lfv_rdm_bind_cntr(ep, lfv_cntr_from_fid(
			lfv_container_of(bfid, struct fid_cntr, fid)), flags);
	case FI_CLASS_SRX_CTX:
		if (flags)
			return -FI_EBADFLAGS;
		if (ep->srx || ep->imported)
			return -FI_EINVAL;
		if (lfv_rdm_is_isrx(bfid)) {
			ep->imported = lfv_container_of(bfid,
					struct lfv_rdm_isrx, ep_fid.fid);
			lfv_ref_get(&ep->imported->ref);
			return 0;
		}
		/* Only a matching SRX of lfverbs (lfv_peer_srx). */
		if (!lfv_peer_srx_is(bfid))
			return -FI_EINVAL;
		ep->srx = lfv_container_of(bfid, struct fid_ep, fid);
		return 0;
	case FI_CLASS_AV:
		av = lfv_av_from_fid(bfid);
		if (!av || ep->av || av->rx_ctx_bits)
			return -FI_EINVAL;
		if (flags)
			return -FI_EBADFLAGS;
		ep->av = av;
		lfv_av_hold(av);
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* ---- enable ------------------------------------------------------------------- */

static int lfv_rdm_ctl_qp_create(struct lfv_rdm_ep *ep)
{
	struct ibv_qp_init_attr init = {
		.qp_context = ep,
		.send_cq = ep->tx_vcq->ibv_cq,
		.recv_cq = ep->rx_vcq->ibv_cq,
		.cap = {
			.max_send_wr = LFV_RDM_CTRL_SLOTS,
			.max_recv_wr = LFV_RDM_CTRL_SLOTS,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	int ret;

	ep->ctl_qp = ibv_create_qp(ep->domain->pd, &init);
	if (!ep->ctl_qp)
		return lfv_verbs_errno();
	ret = lfv_ud_qp_ready(ep->ctl_qp, ep->domain->dev->port_num);
	if (ret) {
		ibv_destroy_qp(ep->ctl_qp);
		ep->ctl_qp = NULL;
	}
	return ret;
}

/* One registered block: tx buffers, rx buffers, control buffers. */
static int lfv_rdm_alloc_bufs(struct lfv_rdm_ep *ep)
{
	size_t nctl = 2 * LFV_RDM_CTRL_SLOTS, i;
	size_t ctl_off = (ep->ntx + ep->nrx) * ep->buf_size;
	struct lfv_rdm_req *r;

	ep->mem_len = ctl_off + nctl * sizeof(struct lfv_rdm_ctrl_buf);
	if (posix_memalign((void **)&ep->mem, 4096, ep->mem_len))
		return -FI_ENOMEM;
	ep->reqs = calloc(ep->ntx + ep->nrx + nctl, sizeof(*ep->reqs));
	if (!ep->reqs) {
		free(ep->mem);
		ep->mem = NULL;
		return -FI_ENOMEM;
	}
	ep->mr = ibv_reg_mr(ep->domain->pd, ep->mem, ep->mem_len,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!ep->mr) {
		free(ep->reqs);
		free(ep->mem);
		ep->reqs = NULL;
		ep->mem = NULL;
		return lfv_verbs_errno();
	}
	for (i = 0; i < ep->ntx + ep->nrx + nctl; i++) {
		r = &ep->reqs[i];
		r->op.q = &ep->wq;
		if (i < ep->ntx + ep->nrx) {
			r->buf = ep->mem + i * ep->buf_size;
			r->kind = i < ep->ntx ? LFV_RDM_K_TX : LFV_RDM_K_RX;
		} else {
			r->buf = ep->mem + ctl_off + (i - ep->ntx - ep->nrx) *
				 sizeof(struct lfv_rdm_ctrl_buf);
			r->kind = i < ep->ntx + ep->nrx + LFV_RDM_CTRL_SLOTS ?
				  LFV_RDM_K_CTRL_RX : LFV_RDM_K_CTRL_TX;
		}
		if (r->kind == LFV_RDM_K_TX)
			lfv_list_insert_tail(&ep->tx_free, &r->node);
		else if (r->kind == LFV_RDM_K_CTRL_TX)
			lfv_list_insert_tail(&ep->ctl_free, &r->node);
	}
	return 0;
}

static void lfv_rdm_free_bufs(struct lfv_rdm_ep *ep)
{
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	free(ep->reqs);
	free(ep->mem);
	ep->mr = NULL;
	ep->reqs = NULL;
	ep->mem = NULL;
}

static int lfv_rdm_srq_create(struct lfv_rdm_ep *ep)
{
	struct ibv_srq_init_attr attr = {
		.attr = { .max_wr = (uint32_t)ep->nrx, .max_sge = 1 },
	};
	size_t i;

	ep->srq = ibv_create_srq(ep->domain->pd, &attr);
	if (!ep->srq)
		return lfv_verbs_errno();
	for (i = 0; i < ep->nrx; i++)
		lfv_rdm_post_rx(ep, &ep->reqs[ep->ntx + i]);
	return 0;
}

/* Where the endpoint's messages match: an imported owner's SRX, the one
 * the application bound, or one of its own; and our handle on it as its
 * peer. */
static int lfv_rdm_srx_open(struct lfv_rdm_ep *ep)
{
	struct fi_rx_attr attr = {
		.iov_limit = ep->info->rx_attr->iov_limit,
		.op_flags = ep->rx_op_flags & LFV_PEER_SRX_OP_FLAGS,
	};
	int ret;

	if (ep->imported) {
		ep->peer_srx = ep->imported->peer;
		return 0;
	}
	if (!ep->srx) {
		ret = lfv_peer_srx_open(&attr,
					ep->info->caps & LFV_PEER_SRX_CAPS,
					ep, &ep->srx);
		if (ret)
			return ret;
		ep->own_srx = true;
	}
	ret = lfv_peer_srx_export(ep->srx, &ep->peer_srx);
	if (ret)
		goto close_srx;
	ep->peer_srx->peer_ops = &lfv_rdm_srx_peer_ops;
	lfv_peer_srx_set_data_fn(ep->peer_srx, lfv_rdm_peek_data);
	if (ep->rx_cq) {
		ret = lfv_peer_srx_bind_cq(ep->srx, &ep->rx_cq->peer_cq);
		if (ret)
			goto close_export;
	}
	return 0;

close_export:
	fi_close(&ep->peer_srx->ep_fid.fid);
	ep->peer_srx = NULL;
close_srx:
	if (ep->own_srx) {
		fi_close(&ep->srx->fid);
		ep->srx = NULL;
		ep->own_srx = false;
	}
	return ret;
}

static void lfv_rdm_srx_close(struct lfv_rdm_ep *ep)
{
	if (ep->peer_srx && !ep->imported)
		fi_close(&ep->peer_srx->ep_fid.fid);
	if (ep->srx && ep->own_srx)
		fi_close(&ep->srx->fid);
	ep->peer_srx = NULL;
	if (ep->own_srx)
		ep->srx = NULL;
}

static void lfv_rdm_set_name(struct lfv_rdm_ep *ep)
{
	memset(&ep->name, 0, sizeof(ep->name));
	memcpy(ep->name.gid, ep->domain->dev->gid.raw, sizeof(ep->name.gid));
	ep->name.qpn = ep->ctl_qp->qp_num;
	ep->name.qkey = LFV_UD_QKEY;
	ep->name.lid = ep->domain->dev->port_attr.lid;
}

static uint64_t lfv_rdm_new_incarnation(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
	       ((uint64_t)getpid() << 16) ^ (uint64_t)lrand48();
}

/* CQ reads drive the endpoint (lfv_rdm_cq_progress). */
static void lfv_rdm_hook_cq(struct lfv_cq *cq, struct lfv_vcq *vcq)
{
	if (cq && !cq->progress.fn)
		lfv_cq_set_progress(cq, (struct lfv_progress_hook){
			.fn = lfv_rdm_cq_progress, .arg = vcq });
}

static int lfv_rdm_enable(struct lfv_rdm_ep *ep)
{
	size_t i;
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->av)
		return -FI_ENOAV;
	ep->tx_reserve = (int)(ep->ntx + LFV_RDM_CTRL_SLOTS);
	ep->rx_reserve = (int)(ep->nrx + LFV_RDM_CTRL_SLOTS);
	ret = lfv_vcq_get(ep->domain, ep->tx_cq, ep->tx_reserve, &ep->tx_vcq);
	if (ret)
		return ret;
	ret = lfv_vcq_get(ep->domain, ep->rx_cq, ep->rx_reserve, &ep->rx_vcq);
	if (ret)
		goto put_tx;
	ret = lfv_rdm_alloc_bufs(ep);
	if (ret)
		goto put_rx;
	ret = lfv_rdm_srx_open(ep);
	if (ret)
		goto free_bufs;
	ret = lfv_rdm_ctl_qp_create(ep);
	if (ret)
		goto close_srx;
	ret = lfv_rdm_srq_create(ep);
	if (ret)
		goto destroy_ctl;
	for (i = 0; i < LFV_RDM_CTRL_SLOTS; i++)
		lfv_rdm_post_ctrl_rx(ep, &ep->reqs[ep->ntx + ep->nrx + i]);
	lfv_rdm_set_name(ep);
	ep->incarnation = lfv_rdm_new_incarnation();
	pthread_mutex_lock(&ep->domain->vcq_lock);
	lfv_list_insert_tail(&ep->domain->rdm_eps, &ep->dnode);
	pthread_mutex_unlock(&ep->domain->vcq_lock);
	lfv_rdm_hook_cq(ep->tx_cq, ep->tx_vcq);
	lfv_rdm_hook_cq(ep->rx_cq, ep->rx_vcq);
	ep->enabled = true;
	return 0;

destroy_ctl:
	ibv_destroy_qp(ep->ctl_qp);
	ep->ctl_qp = NULL;
close_srx:
	lfv_rdm_srx_close(ep);
free_bufs:
	lfv_rdm_free_bufs(ep);
put_rx:
	lfv_vcq_put(ep->rx_vcq, ep->rx_reserve);
	ep->rx_vcq = NULL;
put_tx:
	lfv_vcq_put(ep->tx_vcq, ep->tx_reserve);
	ep->tx_vcq = NULL;
	return ret;
}

static int lfv_rdm_control(struct fid *fid, int command, void *arg)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		return lfv_rdm_enable(ep);
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (!flags || !(*flags & FI_TRANSMIT) == !(*flags & FI_RECV))
			return -FI_EINVAL;
		if (command == FI_GETOPSFLAG)
			*flags = (*flags & FI_RECV) ? ep->rx_op_flags :
						      ep->tx_op_flags;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~(uint64_t)FI_RECV;
		else
			ep->tx_op_flags = *flags & ~(uint64_t)FI_TRANSMIT;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* ---- close -------------------------------------------------------------------- */

/* Every QP to the error state, then polls until no send is left in flight
 * (bounded), so no completion names a request after they are freed. */
static void lfv_rdm_quiesce(struct lfv_rdm_ep *ep)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int64_t deadline = lfv_now_ns() + LFV_RDM_DRAIN_NS;
	struct lfv_list *item;
	struct lfv_rdm_conn *c;
	size_t busy;

	ibv_modify_qp(ep->ctl_qp, &attr, IBV_QP_STATE);
	lfv_list_foreach(item, &ep->conns) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (c->qp)
			ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
	}
	ep->enabled = false; /* receives that still come are dropped */
	do {
		lfv_vcq_progress(ep->tx_vcq);
		lfv_vcq_progress(ep->rx_vcq);
		busy = 0;
		lfv_spin_lock(&ep->lock);
		lfv_list_foreach(item, &ep->conns)
			busy += lfv_container_of(item, struct lfv_rdm_conn,
						 node)->posted;
		lfv_list_foreach(item, &ep->ctl_free)
			busy--;
		busy += LFV_RDM_CTRL_SLOTS;
		lfv_spin_unlock(&ep->lock);
	} while (busy && lfv_now_ns() < deadline);
	if (busy)
		LFV_WARN(FI_LOG_EP_CTRL, "RDM close: %zu sends never "
			 "completed\n", busy);
}

static int lfv_rdm_close(struct fid *fid)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(fid);

	if (ep->ctl_qp) {
		pthread_mutex_lock(&ep->domain->vcq_lock);
		lfv_list_remove(&ep->dnode);
		pthread_mutex_unlock(&ep->domain->vcq_lock);
		lfv_rdm_quiesce(ep);
		lfv_rdm_conns_free(ep);
		ibv_destroy_qp(ep->ctl_qp);
		ibv_destroy_srq(ep->srq);
		lfv_rdm_srx_close(ep);
		lfv_rdm_free_bufs(ep);
		lfv_vcq_put(ep->rx_vcq, ep->rx_reserve);
		lfv_vcq_put(ep->tx_vcq, ep->tx_reserve);
	}
	if (ep->tx_cq)
		lfv_ref_put(&ep->tx_cq->ref);
	if (ep->rx_cq)
		lfv_ref_put(&ep->rx_cq->ref);
	if (ep->tx_cntr)
		lfv_ref_put(&ep->tx_cntr->ref);
	if (ep->rx_cntr)
		lfv_ref_put(&ep->rx_cntr->ref);
	if (ep->av)
		lfv_av_release(ep->av);
	if (ep->imported)
		lfv_ref_put(&ep->imported->ref);
	lfv_spin_fini(&ep->lock);
	lfv_ref_put(&ep->domain->ref);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static struct fi_ops lfv_rdm_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_rdm_close,
	.bind = lfv_rdm_bind,
	.control = lfv_rdm_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* ---- open ---------------------------------------------------------------------- */

static size_t lfv_rdm_pick(size_t asked, size_t dflt, size_t max)
{
	size_t v = asked ? asked : dflt;

	return v < max ? v : max;
}

int lfv_rdm_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep_fid, void *context)
{
	const struct lfv_device *dev = domain->dev;
	struct lfv_rdm_ep *ep;
	int ret;

	/* The domain was opened for RDM (its addresses are the UD names of
	 * control QPs). */
	if (!domain->info->ep_attr || domain->info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	if (!info->tx_attr || !info->rx_attr ||
	    info->tx_attr->iov_limit > LFV_RDM_MAX_IOV ||
	    info->rx_attr->iov_limit > LFV_PEER_SRX_MAX_IOV_LIMIT ||
	    info->tx_attr->inject_size > lfv_params.rdm_eager)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		ret = -FI_ENOMEM;
		goto free_ep;
	}
	ret = lfv_spin_init(&ep->lock, domain->locked ||
			    domain->progress_auto);
	if (ret)
		goto free_info;
	ep->domain = domain;
	ep->eager = lfv_params.rdm_eager;
	ep->buf_size = LFV_RDM_HDR_SIZE + ep->eager;
	ep->ntx = lfv_rdm_pick(info->tx_attr->size, lfv_params.tx_size,
			       (size_t)dev->attr.max_qp_wr);
	ep->nrx = lfv_rdm_pick(lfv_params.rdm_rx_bufs, 256,
			       (size_t)dev->attr.max_srq_wr);
	ep->max_inline = dev->max_inline;
	ep->max_rdma = dev->port_attr.max_msg_sz;
	if (!ep->info->tx_attr->iov_limit)
		ep->info->tx_attr->iov_limit = 1;
	if (!ep->info->rx_attr->iov_limit)
		ep->info->rx_attr->iov_limit = 1;
	if (!ep->info->tx_attr->inject_size)
		ep->info->tx_attr->inject_size = ep->eager;
	ep->tx_op_flags = info->tx_attr->op_flags;
	ep->rx_op_flags = info->rx_attr->op_flags;
	ep->wq.handler = lfv_rdm_completion;
	lfv_list_init(&ep->tx_free);
	lfv_list_init(&ep->ctl_free);
	lfv_list_init(&ep->conns);
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &lfv_rdm_fi_ops;
	ep->ep_fid.ops = &lfv_rdm_ep_ops;
	ep->ep_fid.cm = &lfv_rdm_cm_ops;
	ep->ep_fid.msg = &lfv_rdm_msg_ops;
	ep->ep_fid.rma = &lfv_no_rma_ops;
	ep->ep_fid.tagged = &lfv_rdm_tagged_ops;
	ep->ep_fid.atomic = &lfv_no_atomic_ops;
	ep->ep_fid.collective = &lfv_no_collective_ops;
	lfv_ref_get(&domain->ref);
	*ep_fid = &ep->ep_fid;
	return 0;

free_info:
	fi_freeinfo(ep->info);
free_ep:
	free(ep);
	return ret;
}
