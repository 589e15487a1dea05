/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM, the send calls: checking a call, choosing eager or
 * rendezvous, building the header (and the RTS) into a transmit request,
 * and the fast path of the one-buffer calls of fi_msg and fi_tagged. The
 * requests they fill are posted, completed and finished by lfv_rdm_tx.c;
 * the protocol is in lfv_rdm_proto.h.
 */
#include "config.h"

#include <string.h>

#include "lfv_av.h"
#include "lfv_ep_base.h"
#include "lfv_param.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_send.h"
#include "lfv_rdm_shm.h"
#include "lfv_rdm_tx.h"

/* ---- checking a call and building its request ---------------------------- */

/* A buffer the application names: bytes need an address. The send
 * paths' one check of it (the fast path's buffer, every iov here). */
static inline bool lfv_rdm_buf_ok(const void *base, size_t len)
{
	return base || !len;
}

/* Checks the call; its payload length in *len. */
static int lfv_rdm_check_send(const struct lfv_rdm_ep *ep,
			      const struct lfv_rdm_send *s, size_t *lenp)
{
	size_t i, len;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (s->count > ep->base.info->tx_attr->iov_limit || (s->count && !s->iov))
		return -FI_EINVAL;
	for (i = 0; i < s->count; i++)
		if (!lfv_rdm_buf_ok(s->iov[i].iov_base, s->iov[i].iov_len))
			return -FI_EINVAL;
	*lenp = len = lfv_rdm_iov_len(s->iov, s->count);
	if (len > ep->base.info->ep_attr->max_msg_size)
		return -FI_EMSGSIZE;
	if ((s->inject || (s->flags & FI_INJECT)) &&
	    len > ep->base.info->tx_attr->inject_size)
		return -FI_EMSGSIZE;
	return 0;
}

/* The completion a send wants: its flags, 0 for none (lfv_rdm_tx_wanted).
 * Both send paths decide here. */
static inline uint64_t lfv_rdm_send_cflags(const struct lfv_rdm_ep *ep,
					   const struct lfv_rdm_send *s)
{
	if (!lfv_rdm_tx_wanted(ep, s->inject, s->flags))
		return 0;
	return FI_SEND | (s->tagged ? FI_TAGGED : FI_MSG);
}

/*
 * The one builder of what a send puts on the wire and keeps: the header
 * (an eager message, or an RTS when rndv) and the request's bookkeeping,
 * for the fast and the general path alike. body: the bytes behind the
 * header (the payload, or the RTS), left to the caller; len: the payload,
 * what the completion reports.
 */
static inline __attribute__((always_inline)) struct lfv_rdm_hdr *
lfv_rdm_build(struct lfv_rdm_req *r, const struct lfv_rdm_send *s,
	      uint8_t op_msg, uint8_t op_tag, uint32_t body, size_t len,
	      uint64_t cflags)
{
	struct lfv_rdm_hdr *h = (struct lfv_rdm_hdr *)r->buf;
	bool rndv = op_msg == LFV_RDM_RTS_MSG;

	/* Field by field, every one (the header has no padding): a
	 * compound literal would zero it first. */
	h->op = s->tagged ? op_tag : op_msg;
	h->flags = (s->flags & FI_REMOTE_CQ_DATA) ? LFV_RDM_HDR_DATA : 0;
	h->reserved = 0;
	h->len = body;
	h->tag = s->tag;
	h->cq_data = s->data;
	r->len = (uint32_t)(sizeof(*h) + body);
	r->paylen = len;
	r->context = s->context;
	r->cflags = cflags;
	r->rndv = rndv;
	return h;
}

/* An eager message of the iovs. */
static void lfv_rdm_fill(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			 const struct lfv_rdm_send *s, size_t len)
{
	struct lfv_rdm_hdr *h = lfv_rdm_build(r, s, LFV_RDM_EAGER_MSG,
					      LFV_RDM_EAGER_TAG, (uint32_t)len,
					      len, lfv_rdm_send_cflags(ep, s));

	lfv_rdm_gather((uint8_t *)(h + 1), s->iov, s->count);
}

/* Rendezvous sends one peer may have waiting for their FIN: past it, sends
 * to that peer wait (-FI_EAGAIN), so that a peer that never answers
 * cannot take every transmit request. */
static uint32_t lfv_rdm_rndv_cap(const struct lfv_rdm_ep *ep)
{
	size_t cap = lfv_params.rdm_rndv_peer_max ?
		     lfv_params.rdm_rndv_peer_max : ep->ntx / 2;

	return cap ? (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX) : 1;
}

/* A rendezvous request: RTS {length, address, key, cookie}. */
static void lfv_rdm_fill_rts(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct lfv_rdm_send *s, size_t len,
			     const struct lfv_rdm_src *src)
{
	struct lfv_rdm_rts *rts = (struct lfv_rdm_rts *)
		(lfv_rdm_build(r, s, LFV_RDM_RTS_MSG, LFV_RDM_RTS_TAG,
			       sizeof(*rts), len,
			       lfv_rdm_send_cflags(ep, s)) + 1);

	++r->gen;
	*rts = (struct lfv_rdm_rts){
		.len = len, .addr = src->addr, .rkey = src->rkey,
		.cookie = lfv_rdm_cookie(ep, r),
	};
	ep->rndv_out++;
	r->conn->rndv_out++;
	r->rndv_wait = 2;		/* the RTS sent, the FIN received */
	r->rts_done = false;
	r->fin_seen = false;
	r->push = false;
	r->rndv_err = 0;
	r->rndv_rounds = 0;
	r->asked = false;
	r->own_reg = src->own_reg;
	r->own_copy = src->own_copy;
	r->src_lkey = src->lkey;
}

/* ---- segmented eager (SAR) ------------------------------------------------ */

/* Payload bytes of a SAR message's first segment (behind its total). */
static inline size_t lfv_rdm_sar_first(const struct lfv_rdm_ep *ep)
{
	return ep->eager - sizeof(struct lfv_rdm_sar);
}

/* Whether a send goes as segmented eager: above the eager size, within
 * ep->sar_max, and not FI_DELIVERY_COMPLETE (a rendezvous: its FIN says
 * the data is in the receive buffer). */
static inline bool lfv_rdm_by_sar(const struct lfv_rdm_ep *ep,
				  const struct lfv_rdm_send *s, size_t len)
{
	return len > ep->eager && len <= ep->sar_max &&
	       !(s->flags & FI_DELIVERY_COMPLETE);
}

/* A SAR segment after the first: {SEG, tag: its offset; payload}. It
 * carries the send's completion (the last one's is reported). */
static void lfv_rdm_fill_seg(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct lfv_rdm_send *s, size_t off,
			     size_t n, size_t len)
{
	struct lfv_rdm_hdr *h = (struct lfv_rdm_hdr *)r->buf;

	*h = (struct lfv_rdm_hdr){
		.op = LFV_RDM_SEG, .len = (uint32_t)n, .tag = off,
	};
	lfv_rdm_gather_at((uint8_t *)(h + 1), s->iov, s->count, off, n);
	r->len = (uint32_t)(sizeof(*h) + n);
	r->paylen = len;
	r->context = s->context;
	r->cflags = lfv_rdm_send_cflags(ep, s);
	r->rndv = false;
}

/* The first segment: {SAR_MSG or SAR_TAG, tag, data; total; payload}. */
static void lfv_rdm_fill_sar(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     const struct lfv_rdm_send *s, size_t len)
{
	size_t n = lfv_rdm_sar_first(ep);
	struct lfv_rdm_sar *sar = (struct lfv_rdm_sar *)
		(lfv_rdm_build(r, s, LFV_RDM_SAR_MSG, LFV_RDM_SAR_TAG,
			       (uint32_t)(sizeof(*sar) + n), len,
			       lfv_rdm_send_cflags(ep, s)) + 1);

	sar->total = len;
	lfv_rdm_gather_at((uint8_t *)(sar + 1), s->iov, s->count, 0, n);
}

/* Gives back requests taken for a SAR send that will not go (ep->lock). */
static void lfv_rdm_sar_untake(struct lfv_rdm_ep *ep, struct lfv_list *taken)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(taken)))
		lfv_list_insert_head(&ep->tx_free, item);
}

/* A SAR send: a transmit request for each segment, all taken (on one
 * connection) before any is posted, then posted or queued back to back,
 * so that nothing of ours comes between them on the QP; every segment
 * but the last completes silently (K_SEG). -FI_EAGAIN, having sent
 * nothing, without enough requests (ep->lock). */
static int lfv_rdm_send_sar(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
			    size_t len)
{
	size_t first = lfv_rdm_sar_first(ep), off, n;
	size_t segs = 1 + (len - first + ep->eager - 1) / ep->eager, i;
	struct lfv_rdm_req *r, *r0 = NULL;
	struct lfv_list taken, *item;
	int ret = 0;

	lfv_list_init(&taken);
	for (i = 0; i < segs; i++) {
		r = lfv_rdm_take_tx(ep, s->dest, &ret);
		if (!r)
			break;
		lfv_list_insert_tail(&taken, &r->node);
		if (!r0)
			r0 = r;
		/* The lock dropped inside to free requests: a connection
		 * replaced meanwhile would split the message. */
		if (r->conn != r0->conn) {
			ret = -FI_EAGAIN;
			break;
		}
	}
	if (ret) {
		lfv_rdm_sar_untake(ep, &taken);
		return ret;
	}
	lfv_rdm_fill_sar(ep, r0, s, len);
	for (i = 0, off = 0; (item = lfv_list_pop_head(&taken)); i++) {
		r = lfv_container_of(item, struct lfv_rdm_req, node);
		n = i ? (len - off < ep->eager ? len - off : ep->eager) : first;
		if (i)
			lfv_rdm_fill_seg(ep, r, s, off, n, len);
		if (i + 1 < segs)
			r->kind = LFV_RDM_K_SEG;
		off += n;
		lfv_rdm_post_or_queue(ep, r);
	}
	return 0;
}

/* What the fast path takes: 1 + the largest payload that is eager, may be
 * injected and is not over max_msg_size (set by the first send, which
 * found the endpoint enabled). */
static size_t lfv_rdm_small_limit(const struct lfv_rdm_ep *ep)
{
	size_t lim = ep->eager;

	/* Every send is a rendezvous then (lfv_rdm_by_rndv). */
	if (ep->base.tx_op_flags & FI_DELIVERY_COMPLETE)
		return 0;
	if (ep->base.info->tx_attr->inject_size < lim)
		lim = ep->base.info->tx_attr->inject_size;
	if (ep->base.info->ep_attr->max_msg_size < lim)
		lim = ep->base.info->ep_attr->max_msg_size;
	return lim + 1;
}

/* FI_DELIVERY_COMPLETE: the completion may come only once the message is in
 * the receiver's buffer. An eager message completes when it reaches the
 * peer's provider buffer, so such sends go by rendezvous, whose FIN the
 * receiver sends after its read landed (an inject, or FI_INJECT, leaves no
 * buffer to read from: it stays eager). */
static inline bool lfv_rdm_by_rndv(const struct lfv_rdm_ep *ep,
				   const struct lfv_rdm_send *s, size_t len)
{
	return len > ep->eager ||
	       ((s->flags & FI_DELIVERY_COMPLETE) && !s->inject &&
		!(s->flags & FI_INJECT));
}

ssize_t lfv_rdm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s)
{
	size_t len = 0;
	struct lfv_rdm_src src = { 0 };
	struct lfv_rdm_req *r;
	ssize_t sret;
	bool rndv;
	int ret;

	ret = lfv_rdm_check_send(ep, s, &len);
	if (ret)
		return ret;
	if (ep->shm && lfv_rdm_shm_send(ep, s, &sret))
		return sret;
	if (lfv_rdm_by_sar(ep, s, len)) {
		lfv_spin_lock(&ep->lock);
		ep->tx_small = lfv_rdm_small_limit(ep);
		ret = lfv_rdm_send_sar(ep, s, len);
		lfv_spin_unlock(&ep->lock);
		return ret;
	}
	rndv = lfv_rdm_by_rndv(ep, s, len);
	if (rndv) {
		/* Registration is a system call: not under ep->lock. */
		ret = lfv_rdm_rndv_src(ep, s, len, &src);
		if (ret)
			return ret;
	}
	lfv_spin_lock(&ep->lock);
	ep->tx_small = lfv_rdm_small_limit(ep);
	r = lfv_rdm_take_tx(ep, s->dest, &ret);
	if (!r)
		goto unlock;
	if (rndv && r->conn->rndv_out >= lfv_rdm_rndv_cap(ep)) {
		lfv_list_insert_head(&ep->tx_free, &r->node);
		ret = -FI_EAGAIN;
		goto unlock;
	}
	if (rndv)
		lfv_rdm_fill_rts(ep, r, s, len, &src);
	else
		lfv_rdm_fill(ep, r, s, len);
	src = (struct lfv_rdm_src){ 0 };	/* the request owns it now */
	/* In call order: behind anything still waiting for the QP. */
	lfv_rdm_post_or_queue(ep, r);
unlock:
	lfv_spin_unlock(&ep->lock);
	lfv_rdm_src_free(ep, &src.own_reg, src.own_copy); /* on failure only */
	return ret;
}

/* ---- the one-buffer calls and their fast path ---------------------------- */

/* The connection to dest when this send may go out on it at once
 * (ep->lock): its address needs no AV lookup (the one the last send took
 * or, with lookup, one seen live, while no AV entry was removed since;
 * tx_last_seen is 0, never equal, until tx_last is set), it is connected,
 * nothing is queued on it (FI_ORDER_SAS), its send queue has room, and no
 * handshake waits for the timers the slow path runs. */
static inline __attribute__((always_inline)) struct lfv_rdm_conn *
lfv_rdm_ready_conn(struct lfv_rdm_ep *ep, fi_addr_t dest, bool lookup)
{
	uint64_t seen = lfv_av_removals(ep->base.av) + 1;
	struct lfv_rdm_conn *c;

	if (LFV_RDM_LIKELY(ep->tx_last_addr == dest &&
			   ep->tx_last_seen == seen)) {
		c = ep->tx_last;
	} else {
		/* Another peer: its table entry, still no AV lookup (out
		 * of line, lookup set: a call here would make the common
		 * case save its arguments). */
		if (!lookup)
			return NULL;
		c = lfv_rdm_conn_seen(ep, dest, seen);
		if (!c)
			return NULL;
		lfv_rdm_remember_conn(ep, c, dest, seen);
	}
	if (c->state != LFV_RDM_CONNECTED || !lfv_list_empty(&c->pending) ||
	    c->posted >= LFV_RDM_SQ_DEPTH || ep->handshakes)
		return NULL;
	return c;
}

/* The calls the small-send entry points stand for (how). */
#define LFV_RDM_SMALL_TAGGED 0x1	/* fi_tagged */
#define LFV_RDM_SMALL_INJECT 0x2	/* fi_inject*: never a completion */
#define LFV_RDM_SMALL_DATA 0x4		/* FI_REMOTE_CQ_DATA */

/* A one-buffer call as both send paths take it: iov, its buffer. */
static inline __attribute__((always_inline)) struct lfv_rdm_send
lfv_rdm_small_send(const struct lfv_rdm_ep *ep, const struct iovec *iov,
		   void **desc, fi_addr_t dest, uint64_t tag, uint64_t data,
		   void *context, unsigned int how)
{
	return (struct lfv_rdm_send){
		.iov = iov, .desc = desc, .count = 1, .dest = dest,
		.tag = tag, .data = data, .context = context,
		.flags = (how & LFV_RDM_SMALL_INJECT ? 0 : ep->base.tx_op_flags) |
			 (how & LFV_RDM_SMALL_DATA ? FI_REMOTE_CQ_DATA : 0),
		.tagged = how & LFV_RDM_SMALL_TAGGED,
		.inject = how & LFV_RDM_SMALL_INJECT,
	};
}

/* An eager message of one contiguous buffer on a connected peer: what
 * lfv_rdm_send does, with its checks reduced to what can fail here (the
 * limits are in tx_small) and the post on a connection that needs no
 * queueing (ep->lock). False, having changed nothing, when the call needs
 * lfv_rdm_send. */
static inline __attribute__((always_inline)) bool
lfv_rdm_small_try(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		  bool lookup)
{
	const void *buf = s->iov[0].iov_base;
	size_t len = s->iov[0].iov_len;
	struct lfv_rdm_conn *c;
	struct lfv_rdm_req *r;
	struct lfv_rdm_hdr *h;

	if (!LFV_RDM_LIKELY(len < ep->tx_small && lfv_rdm_buf_ok(buf, len) &&
			    ep->enabled && !lfv_list_empty(&ep->tx_free)))
		return false;
	c = lfv_rdm_ready_conn(ep, s->dest, lookup);
	if (!c)
		return false;
	r = lfv_rdm_tx_pop(ep, c);
	h = lfv_rdm_build(r, s, LFV_RDM_EAGER_MSG, LFV_RDM_EAGER_TAG,
			  (uint32_t)len, len, lfv_rdm_send_cflags(ep, s));
	/* Last before the post: fewer values live across the call. */
	if (len)
		memcpy(h + 1, buf, len);
	if (lfv_rdm_post_tx(ep, c, r))
		lfv_list_insert_tail(&c->pending, &r->node); /* as queued */
	return true;
}

static ssize_t lfv_rdm_small_other(struct lfv_rdm_ep *ep, const void *buf,
				   size_t len, void *desc, fi_addr_t dest,
				   uint64_t tag, uint64_t data, void *context,
				   unsigned int how);

/* Inlined into each entry point below, where how is a constant. Without
 * a lock (the domain's threading model serialises the calls) a send to
 * the last send's peer calls nothing before the copy; everything else is
 * lfv_rdm_small_other's (other: we are it). */
static inline __attribute__((always_inline)) ssize_t
lfv_rdm_small(struct lfv_rdm_ep *ep, const void *buf, size_t len,
	      void *desc, fi_addr_t dest, uint64_t tag, uint64_t data,
	      void *context, unsigned int how, bool other)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_rdm_send s = lfv_rdm_small_send(ep, &iov, &desc, dest, tag,
						   data, context, how);
	bool sent;

	if (!other) {
		/* With shm as a peer (ep->shm) the out-of-line path decides:
		 * testing it here keeps s out of memory on the fast path. */
		if (!ep->lock.on && !ep->shm && lfv_rdm_small_try(ep, &s, false))
			return 0;
		return lfv_rdm_small_other(ep, buf, len, desc, dest, tag,
					   data, context, how);
	}
	/* A same-host peer's messages go through shm (lfv_rdm_send). */
	if (!LFV_RDM_LIKELY(!ep->shm))
		return lfv_rdm_send(ep, &s);
	lfv_spin_lock(&ep->lock);
	sent = lfv_rdm_small_try(ep, &s, true);
	lfv_spin_unlock(&ep->lock);
	return sent ? 0 : lfv_rdm_send(ep, &s);
}

/* Out of line, so that the common case keeps its arguments in registers:
 * the fast path with ep->lock on (FI_THREAD_SAFE and the like) or to
 * another peer than the last send's, else lfv_rdm_send. */
static ssize_t __attribute__((noinline))
lfv_rdm_small_other(struct lfv_rdm_ep *ep, const void *buf, size_t len,
		    void *desc, fi_addr_t dest, uint64_t tag, uint64_t data,
		    void *context, unsigned int how)
{
	return lfv_rdm_small(ep, buf, len, desc, dest, tag, data, context,
			     how, true);
}

/* The one-buffer calls of fi_msg and fi_tagged (lfv_rdm_ops.c's tables). */
ssize_t lfv_rdm_msg_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, void *context)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, desc, dest,
			     0, 0, context, 0, false);
}

ssize_t lfv_rdm_msg_inject(struct fid_ep *ep_fid, const void *buf,
			   size_t len, fi_addr_t dest)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, NULL, dest,
			     0, 0, NULL, LFV_RDM_SMALL_INJECT, false);
}

ssize_t lfv_rdm_msg_senddata(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, uint64_t data,
			     fi_addr_t dest, void *context)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, desc, dest,
			     0, data, context, LFV_RDM_SMALL_DATA, false);
}

ssize_t lfv_rdm_msg_injectdata(struct fid_ep *ep_fid, const void *buf,
			       size_t len, uint64_t data, fi_addr_t dest)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, NULL, dest,
			     0, data, NULL,
			     LFV_RDM_SMALL_INJECT | LFV_RDM_SMALL_DATA, false);
}

ssize_t lfv_rdm_tsend(struct fid_ep *ep_fid, const void *buf, size_t len,
		      void *desc, fi_addr_t dest, uint64_t tag, void *context)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, desc, dest,
			     tag, 0, context, LFV_RDM_SMALL_TAGGED, false);
}

ssize_t lfv_rdm_tinject(struct fid_ep *ep_fid, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, NULL, dest,
			     tag, 0, NULL,
			     LFV_RDM_SMALL_TAGGED | LFV_RDM_SMALL_INJECT, false);
}

ssize_t lfv_rdm_tsenddata(struct fid_ep *ep_fid, const void *buf,
			  size_t len, void *desc, uint64_t data,
			  fi_addr_t dest, uint64_t tag, void *context)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, desc, dest,
			     tag, data, context,
			     LFV_RDM_SMALL_TAGGED | LFV_RDM_SMALL_DATA, false);
}

ssize_t lfv_rdm_tinjectdata(struct fid_ep *ep_fid, const void *buf,
			    size_t len, uint64_t data, fi_addr_t dest,
			    uint64_t tag)
{
	return lfv_rdm_small(lfv_rdm_of(&ep_fid->fid), buf, len, NULL, dest,
			     tag, data, NULL, LFV_RDM_SMALL_TAGGED |
			     LFV_RDM_SMALL_INJECT | LFV_RDM_SMALL_DATA, false);
}
