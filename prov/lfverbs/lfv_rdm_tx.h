/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RDM transmit side (lfv_rdm_tx.c): transmit requests, posting them on
 * a connection or queueing them behind it, their completions, and the
 * rendezvous sender's side (its source buffer, FIN, probes). The send
 * calls that fill them are lfv_rdm_send.h's.
 */
#ifndef LFV_RDM_TX_H
#define LFV_RDM_TX_H

#include "lfv_rdm_ep.h"
#include "lfv_tsan.h"
#include "lfv_vcq.h"

#define LFV_RDM_LIKELY(x) __builtin_expect(!!(x), 1)

/* One send call, whichever API it came through (lfv_rdm_send.h). */
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

/* Where the receiver reads a rendezvous payload from: the application's
 * registration when it gave one with FI_REMOTE_READ, else one of ours
 * for this send alone (never the cache's: the peer's key must die with
 * the send), over a gathered copy when there are several iovs. The
 * request keeps own_reg and own_copy until the send finishes, fails or
 * is dropped; lfv_rdm_src_free gives them back. */
struct lfv_rdm_src {
	uint64_t addr;
	uint32_t rkey, lkey;
	struct lfv_reg own_reg;
	void *own_copy;
};

int lfv_rdm_rndv_src(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		     size_t len, struct lfv_rdm_src *src);
void lfv_rdm_src_free(struct lfv_rdm_ep *ep, struct lfv_reg *reg, void *copy);
void lfv_rdm_gather(uint8_t *dst, const struct iovec *iov, size_t count);
/* len bytes from offset off of the iovs (that many are there). */
void lfv_rdm_gather_at(uint8_t *dst, const struct iovec *iov, size_t count,
		       size_t off, size_t len);

/* What names a rendezvous send in FIN, ASK and HELD: its request and the
 * use of it. */
static inline uint64_t lfv_rdm_cookie(const struct lfv_rdm_ep *ep,
				      const struct lfv_rdm_req *r)
{
	return (uint64_t)(r - ep->reqs) | ((uint64_t)r->gen << 32);
}

/* ---- shared with the send calls (lfv_rdm_send.c), inline: their fast
 * path takes a request and posts it as lfv_rdm_take_tx and lfv_rdm_post do,
 * without calling them. */

/* The connection the fast path reuses for dest while the AV's removal
 * count stays at seen (ep->lock). */
static inline void lfv_rdm_remember_conn(struct lfv_rdm_ep *ep,
					 struct lfv_rdm_conn *c,
					 fi_addr_t dest, uint64_t seen)
{
	ep->tx_last = c;
	ep->tx_last_addr = dest;
	ep->tx_last_seen = seen;
}

/* The first free transmit request (there is one), a send on c now; both
 * send paths take theirs here (ep->lock). */
static inline __attribute__((always_inline)) struct lfv_rdm_req *
lfv_rdm_tx_pop(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_req *r = lfv_container_of(ep->tx_free.next,
						 struct lfv_rdm_req, node);

	lfv_list_remove(&r->node);
	r->kind = LFV_RDM_K_TX;		/* fi_rma / fi_atomic reset it */
	r->conn = c;
	return r;
}

/* Posts the r->len bytes of a K_TX request's buffer. Its work request is
 * built once (the transmit requests are calloc'd, so wr_id 0 means not
 * yet) instead of zero-filled on the stack for every send. */
static inline int lfv_rdm_post_tx(struct lfv_rdm_ep *ep,
				  struct lfv_rdm_conn *c,
				  struct lfv_rdm_req *r)
{
	struct ibv_send_wr *bad;
	int ret;

	if (!LFV_RDM_LIKELY(r->wr.wr_id)) {
		r->sge.addr = (uintptr_t)r->buf;
		r->sge.lkey = ep->mr->lkey;
		r->wr.wr_id = (uintptr_t)&r->op;
		r->wr.sg_list = &r->sge;
		r->wr.num_sge = 1;
		r->wr.opcode = IBV_WR_SEND;
	}
	r->sge.length = r->len;
	r->wr.send_flags = r->len <= ep->max_inline ?
			   IBV_SEND_SIGNALED | IBV_SEND_INLINE :
			   IBV_SEND_SIGNALED;
	lfv_tsan_posted(r->wr.wr_id);
	ret = ibv_post_send(c->qp, &r->wr, &bad);
	if (ret)
		return lfv_post_ret(ret);
	c->posted++;
	return 0;
}

struct lfv_rdm_req *lfv_rdm_take_tx(struct lfv_rdm_ep *ep, fi_addr_t dest,
				    int *err);
void lfv_rdm_tx_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, int err,
		     int prov_errno);
void lfv_rdm_req_abort(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
		       int err);
void lfv_rdm_post_or_queue(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
void lfv_rdm_sq_done(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c, bool ok);

/* What a request of c that completed with wc's error reports: the verbs
 * status's, but a flush of a connection the liveness probes failed says
 * why they did (c->down_err). ep->lock held (down_err is its). */
static inline int lfv_rdm_wc_err(const struct lfv_rdm_conn *c,
				 const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_WR_FLUSH_ERR && c->down_err)
		return c->down_err;
	return -lfv_wc_errno(wc->status);
}
void lfv_rdm_flush_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_fail_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			  int err);
void lfv_rdm_on_fin(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		    const struct lfv_rdm_hdr *h);
void lfv_rdm_on_cts(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		    const struct lfv_rdm_hdr *h, const uint8_t *payload);
void lfv_rdm_fail_rndv(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
		       int err);
void lfv_rdm_rndv_event(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			int err);
void lfv_rdm_rndv_round(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
/* A rendezvous send that will not finish: its source given back, and no
 * longer counted as waiting for a FIN. */
void lfv_rdm_rndv_drop(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
int lfv_rdm_segs(struct lfv_rdm_ep *ep, const struct iovec *iov, void **desc,
		 size_t count, size_t want, struct lfv_rdm_seg *seg,
		 int *nseg, struct lfv_reg *regs, size_t *got);
void lfv_rdm_regs_put(struct lfv_rdm_ep *ep, struct lfv_reg *regs);
/* The zero-byte RDMA write posted behind a read or an atomic, whose
 * success vouches for theirs (lfv_rdm_post_read): it touches no memory,
 * so it needs no address or key. */
static inline struct ibv_send_wr lfv_rdm_vouch_wr(uint64_t wr_id)
{
	return (struct ibv_send_wr){
		.wr_id = wr_id, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
}
void lfv_rdm_tx_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			   const struct ibv_wc *wc);
void lfv_rdm_seg_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			    const struct ibv_wc *wc);
int lfv_rdm_slice(const struct lfv_rdm_seg *seg, int nseg, size_t off,
		  size_t n, struct ibv_sge *sge);

#endif /* LFV_RDM_TX_H */
