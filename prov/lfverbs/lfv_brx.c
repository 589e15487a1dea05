/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Buffered receives for MSG endpoints opened with FI_MULTI_RECV (or with
 * FI_LFVERBS_BUFFERED_RECV=1).
 *
 * A verbs receive queue owns a posted buffer until a message lands in it:
 * it can neither take one back (fi_cancel) nor place several messages in
 * one buffer (FI_MULTI_RECV). Here the receive queue holds provider bounce
 * buffers instead, and application receives wait in a software queue: an
 * arriving message is copied once into the oldest posted receive (carved
 * from a multi-receive buffer), and a message that finds no receive waits
 * in its bounce buffer until one is posted. Cancelling takes a receive off
 * the software queue and reports FI_ECANCELED at once.
 *
 * Locking: brx->lock serialises the software queues between posters and
 * the poller (who holds the vcq lock, never the other way round).
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_brx.h"
#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_msg_rma.h"
#include "lfv_param.h"
#include "lfv_queue.h"

struct lfv_brecv {
	struct lfv_list node;
	void *context;
	uint8_t *buf;
	size_t len;
	size_t used;			/* multi-receive: bytes handed out */
	bool multi;
	bool report;
};

struct lfv_bounce {
	struct lfv_list node;		/* free or unexpected */
	uint8_t *data;
	uint32_t len;			/* unexpected: bytes held */
	bool has_imm;
	uint32_t imm;
};

struct lfv_brx {
	struct lfv_spin lock;
	struct lfv_list posted;		/* lfv_brecv, oldest first */
	struct lfv_list unexpected;	/* lfv_bounce with data, oldest first */
	struct lfv_list free_bounce;
	struct lfv_list free_recv;
	struct lfv_brecv *recvs;
	struct lfv_bounce *bounces;
	uint8_t *mem;
	struct ibv_mr *mr;
	size_t bsize;
	uint32_t count;
};

/* FI_RMA_EVENT: a peer's announcement of an RMA (a write with immediate
 * data, lfv_msg_rma.c) consumes a receive, which must not be the
 * application's. */
bool lfv_brx_wanted(const struct fi_info *info)
{
	return info->ep_attr->type == FI_EP_MSG &&
	       ((info->caps & (FI_MULTI_RECV | FI_RMA_EVENT)) ||
		lfv_params.buffered_recv);
}

/* ---- completions --------------------------------------------------------- */

static void lfv_brx_error(struct lfv_ep *ep, struct lfv_brecv *r, int err,
			  size_t olen)
{
	struct fi_cq_err_entry e = {
		.op_context = r->context,
		.flags = FI_RECV | FI_MSG,
		.buf = r->buf,
		.len = r->len,
		.olen = olen,
		.err = err,
		.prov_errno = -err,
	};

	if (ep->rx.cntr)
		lfv_cntr_inc_err(ep->rx.cntr);
	if (ep->base.rx_cq && lfv_cq_write_err(ep->base.rx_cq, &e))
		LFV_WARN(FI_LOG_CQ, "lost an error completion: no memory\n");
}

enum lfv_brx_result {
	LFV_BRX_RELEASED,	/* a multi-receive buffer full: b not used */
	LFV_BRX_DONE,		/* b delivered */
	LFV_BRX_DROPPED,	/* b cut short: an error was reported */
};

static void lfv_brx_retire(struct lfv_brx *brx, struct lfv_brecv *r)
{
	lfv_list_remove(&r->node);
	lfv_list_insert_tail(&brx->free_recv, &r->node);
}

/*
 * Copies the message in b into the receive at the head of the queue and
 * fills comp (*report: whether it goes to the CQ). A multi-receive buffer
 * already in use that cannot take the whole message is released instead
 * (an empty completion with FI_MULTI_RECV), and the caller goes on with
 * the next receive. Called with brx->lock held, posted not empty.
 */
static enum lfv_brx_result lfv_brx_deliver(struct lfv_ep *ep,
					   const struct lfv_bounce *b,
					   struct lfv_cq_comp *comp,
					   bool *report)
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_brecv *r = lfv_container_of(lfv_list_first(&brx->posted),
					       struct lfv_brecv, node);
	size_t room = r->len - r->used;

	*report = r->report;
	*comp = (struct lfv_cq_comp){ .context = r->context,
				      .flags = FI_RECV | FI_MSG,
				      .buf = r->buf + r->used,
				      .src = FI_ADDR_NOTAVAIL };
	if (r->multi && b->len > room && r->used) {
		comp->flags |= FI_MULTI_RECV;
		lfv_brx_retire(brx, r);
		return LFV_BRX_RELEASED;
	}
	if (b->len > room) {
		memcpy(r->buf + r->used, b->data, room);
		lfv_brx_retire(brx, r);
		lfv_brx_error(ep, r, FI_ETRUNC, b->len - room);
		return LFV_BRX_DROPPED;
	}
	memcpy(r->buf + r->used, b->data, b->len);
	comp->len = b->len;
	if (b->has_imm) {
		comp->flags |= FI_REMOTE_CQ_DATA;
		comp->data = b->imm;
	}
	r->used += b->len;
	if (!r->multi || r->len - r->used < ep->min_multi_recv) {
		if (r->multi)
			comp->flags |= FI_MULTI_RECV;
		lfv_brx_retire(brx, r);
	}
	if (ep->rx.cntr)
		lfv_cntr_inc(ep->rx.cntr);
	return LFV_BRX_DONE;
}

/*
 * Delivers b to the posted receives: up to two completions (a released
 * multi-receive buffer, then the message) in comp[], their number in *n.
 * Returns false when no receive was posted (b stays with the caller).
 * brx->lock held.
 */
static bool lfv_brx_place(struct lfv_ep *ep, const struct lfv_bounce *b,
			  struct lfv_cq_comp comp[2], size_t *n)
{
	enum lfv_brx_result res;
	bool report;

	*n = 0;
	while (!lfv_list_empty(&ep->brx->posted)) {
		res = lfv_brx_deliver(ep, b, &comp[*n], &report);
		if (report && res != LFV_BRX_DROPPED)
			(*n)++;
		if (res != LFV_BRX_RELEASED)
			return true;
	}
	return false;
}

/* ---- bounce buffers on the receive queue ------------------------------- */

/* Posts free bounce buffers to the QP. rx.lock serialises posting. */
static int lfv_brx_refill(struct lfv_ep *ep)
{
	struct lfv_brx *brx = ep->brx;
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct lfv_bounce *b;
	struct lfv_list *item;
	struct ibv_sge sge;
	struct lfv_op *op;
	int ret = 0;

	lfv_spin_lock(&ep->rx.lock);
	while ((op = lfv_queue_next(&ep->rx))) {
		lfv_spin_lock(&brx->lock);
		item = lfv_list_pop_head(&brx->free_bounce);
		lfv_spin_unlock(&brx->lock);
		if (!item)
			break;
		b = lfv_container_of(item, struct lfv_bounce, node);
		op->context = b;
		op->flags = FI_RECV | FI_MSG;
		op->buf = b->data;
		op->len = brx->bsize;
		sge.addr = (uintptr_t)b->data;
		sge.length = (uint32_t)brx->bsize;
		sge.lkey = brx->mr->lkey;
		wr.wr_id = (uintptr_t)op;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		ret = ibv_post_recv(ep->qp, &wr, &bad);
		if (ret) {
			lfv_spin_lock(&brx->lock);
			lfv_list_insert_head(&brx->free_bounce, &b->node);
			lfv_spin_unlock(&brx->lock);
			ret = -ret;
			break;
		}
		ep->rx.tail++;
	}
	lfv_spin_unlock(&ep->rx.lock);
	return ret;
}

int lfv_brx_enable(struct lfv_ep *ep)
{
	return lfv_brx_refill(ep);
}

/*
 * The poller's side: a message arrived in the bounce buffer behind op.
 * Fills comp[] with up to two completions to report; returns how many.
 */
size_t lfv_brx_arrived(struct lfv_ep *ep, const struct lfv_op *op,
		       const struct ibv_wc *wc, struct lfv_cq_comp comp[2])
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_bounce *b = op->context;
	size_t n = 0;
	bool placed;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* A remote write, not a message: the buffer holds nothing. */
		n = lfv_msg_rma_arrived(ep, wc, comp);
		lfv_spin_lock(&brx->lock);
		lfv_list_insert_tail(&brx->free_bounce, &b->node);
		lfv_spin_unlock(&brx->lock);
		lfv_brx_refill(ep);
		return n;
	}
	b->len = wc->byte_len;
	b->has_imm = wc->wc_flags & IBV_WC_WITH_IMM;
	b->imm = be32toh(wc->imm_data);
	lfv_spin_lock(&brx->lock);
	placed = lfv_brx_place(ep, b, comp, &n);
	/* Placed: the buffer is free again. Not: its data waits for a
	 * receive (the released-buffer completion, if any, goes now). */
	lfv_list_insert_tail(placed ? &brx->free_bounce : &brx->unexpected,
			     &b->node);
	lfv_spin_unlock(&brx->lock);
	if (placed)
		lfv_brx_refill(ep);
	return n;
}

/* ---- the application's side ------------------------------------------------ */

/* Delivers parked messages to newly posted receives (into the ring). */
static void lfv_brx_drain_unexpected(struct lfv_ep *ep)
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_cq_comp comp[2];
	struct lfv_bounce *b;
	bool freed = false, placed;
	size_t n, i;

	lfv_spin_lock(&brx->lock);
	while (!lfv_list_empty(&brx->unexpected) &&
	       !lfv_list_empty(&brx->posted)) {
		b = lfv_container_of(lfv_list_first(&brx->unexpected),
				     struct lfv_bounce, node);
		placed = lfv_brx_place(ep, b, comp, &n);
		for (i = 0; i < n && ep->base.rx_cq; i++)
			if (lfv_cq_write(ep->base.rx_cq, &comp[i]))
				LFV_WARN(FI_LOG_CQ, "lost a completion\n");
		if (!placed)
			break;
		lfv_list_remove(&b->node);
		lfv_list_insert_tail(&brx->free_bounce, &b->node);
		freed = true;
	}
	lfv_spin_unlock(&brx->lock);
	if (freed)
		lfv_brx_refill(ep);
}

ssize_t lfv_brx_post(struct lfv_ep *ep, const struct iovec *iov, size_t count,
		     void *context, uint64_t flags)
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_list *item;
	struct lfv_brecv *r;

	if (count > 1)
		return -FI_EINVAL; /* one buffer per buffered receive */
	if (!ep->qp)
		return -FI_EOPBADSTATE;
	lfv_spin_lock(&brx->lock);
	item = lfv_list_pop_head(&brx->free_recv);
	if (!item) {
		lfv_spin_unlock(&brx->lock);
		return -FI_EAGAIN;
	}
	r = lfv_container_of(item, struct lfv_brecv, node);
	r->context = context;
	r->buf = count ? iov[0].iov_base : NULL;
	r->len = count ? iov[0].iov_len : 0;
	r->used = 0;
	r->multi = flags & FI_MULTI_RECV;
	r->report = !ep->rx.selective || (flags & FI_COMPLETION);
	lfv_list_insert_tail(&brx->posted, &r->node);
	lfv_spin_unlock(&brx->lock);
	lfv_brx_drain_unexpected(ep);
	return 0;
}

ssize_t lfv_brx_cancel(struct lfv_ep *ep, void *context)
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_brecv *r = NULL;
	struct lfv_list *item;

	lfv_spin_lock(&brx->lock);
	lfv_list_foreach(item, &brx->posted) {
		if (lfv_container_of(item, struct lfv_brecv, node)->context ==
		    context) {
			r = lfv_container_of(item, struct lfv_brecv, node);
			break;
		}
	}
	if (r) {
		lfv_list_remove(&r->node);
		lfv_list_insert_tail(&brx->free_recv, &r->node);
	}
	lfv_spin_unlock(&brx->lock);
	if (!r)
		return -FI_ENOENT;
	lfv_brx_error(ep, r, FI_ECANCELED, 0);
	return 0;
}

/* The QP is in error: no message will come; cancel what waits. */
void lfv_brx_flush(struct lfv_ep *ep)
{
	struct lfv_brx *brx = ep->brx;
	struct lfv_list *item;
	struct lfv_brecv *r;

	for (;;) {
		lfv_spin_lock(&brx->lock);
		item = lfv_list_pop_head(&brx->posted);
		if (item)
			lfv_list_insert_tail(&brx->free_recv, item);
		lfv_spin_unlock(&brx->lock);
		if (!item)
			return;
		r = lfv_container_of(item, struct lfv_brecv, node);
		lfv_brx_error(ep, r, FI_ECANCELED, 0);
	}
}

ssize_t lfv_brx_size_left(struct lfv_ep *ep)
{
	struct lfv_list *item;
	ssize_t n = 0;

	lfv_spin_lock(&ep->brx->lock);
	lfv_list_foreach(item, &ep->brx->free_recv)
		n++;
	lfv_spin_unlock(&ep->brx->lock);
	return n;
}

/* ---- setup ------------------------------------------------------------------ */

void lfv_brx_free(struct lfv_ep *ep)
{
	struct lfv_brx *brx = ep->brx;

	if (!brx)
		return;
	if (brx->mr)
		ibv_dereg_mr(brx->mr);
	free(brx->mem);
	free(brx->recvs);
	free(brx->bounces);
	lfv_spin_fini(&brx->lock);
	free(brx);
	ep->brx = NULL;
}

int lfv_brx_init(struct lfv_ep *ep)
{
	uint32_t n = ep->rx.size, i;
	struct lfv_brx *brx;
	int ret;

	brx = calloc(1, sizeof(*brx));
	if (!brx)
		return -FI_ENOMEM;
	ep->brx = brx;
	brx->count = n;
	brx->bsize = lfv_params.bounce_size;
	lfv_list_init(&brx->posted);
	lfv_list_init(&brx->unexpected);
	lfv_list_init(&brx->free_bounce);
	lfv_list_init(&brx->free_recv);
	ret = lfv_spin_init(&brx->lock, true);
	if (ret) {
		free(brx);
		ep->brx = NULL;
		return ret;
	}
	brx->recvs = calloc(n, sizeof(*brx->recvs));
	brx->bounces = calloc(n, sizeof(*brx->bounces));
	brx->mem = malloc((size_t)n * brx->bsize);
	if (!brx->recvs || !brx->bounces || !brx->mem) {
		ret = -FI_ENOMEM;
		goto free;
	}
	brx->mr = ibv_reg_mr(ep->base.domain->pd, brx->mem, (size_t)n * brx->bsize,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!brx->mr) {
		ret = lfv_verbs_errno();
		goto free;
	}
	for (i = 0; i < n; i++) {
		brx->bounces[i].data = brx->mem + (size_t)i * brx->bsize;
		lfv_list_insert_tail(&brx->free_bounce, &brx->bounces[i].node);
		lfv_list_insert_tail(&brx->free_recv, &brx->recvs[i].node);
	}
	return 0;

free:
	lfv_brx_free(ep);
	return ret;
}
