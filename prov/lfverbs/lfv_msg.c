/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_msg on RC (MSG) and UD (DGRAM) queue pairs: one work request per call,
 * posted with the queue's lock held only under FI_THREAD_SAFE. See lfv_queue.h
 * for how requests, ops and completions relate. What DGRAM does its own way
 * (destinations, the GRH in front of receives) comes from its struct
 * lfv_ep_kind (lfv_dgram.c); MSG's fi_send has a fast path, in its table.
 */
#include <errno.h>
#include <string.h>

#include "lfv_brx.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_msg.h"
#include "lfv_queue.h"
#include "lfv_sge.h"
#include "lfv_msg_srq.h"
#include "lfv_stubs.h"

/* Flags a caller may give fi_sendmsg / fi_recvmsg. */
#define LFV_TX_MSG_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA |   \
			  FI_FENCE | FI_MORE | FI_INJECT_COMPLETE |          \
			  FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
#define LFV_RX_MSG_FLAGS (FI_COMPLETION | FI_MORE | FI_MULTI_RECV)

/* A free op (post lock held), polling the queue's CQ once when the
 * queue is full. */
static struct lfv_op *lfv_queue_take(struct lfv_queue *q)
{
	struct lfv_op *op = lfv_queue_next(q);

	if (op || !q->vcq)
		return op;
	lfv_spin_unlock(&q->lock);
	lfv_progress_run(&q->vcq->progress);
	lfv_spin_lock(&q->lock);
	return lfv_queue_next(q);
}


/* Locks q's posting and takes what take finds free (the post lock held
 * from here); NULL, unlocked again, when q is full: -FI_EAGAIN. */
static inline struct lfv_op *
lfv_queue_lock_take(struct lfv_queue *q,
		    struct lfv_op *(*take)(struct lfv_queue *q))
{
	struct lfv_op *op;

	lfv_spin_lock(&q->lock);
	op = take(q);
	if (!op)
		lfv_spin_unlock(&q->lock);
	return op;
}


static bool lfv_tx_signaled(const struct lfv_ep *ep, const struct lfv_queue *q,
			    bool report)
{
	/* Signal often enough that unsignaled requests get retired and
	 * their credits come back. */
	return report || q->cntr || ep->base.cntr[LFV_CNTR_READ] || ep->base.cntr[LFV_CNTR_WRITE] ||
	       q->unsignaled + 1 >= (q->size + 1) / 2;
}

/* FI_MORE: keeps a copy of wr (and its SGEs) in op's slot, linked after
 * the requests already waiting. */
static void lfv_tx_defer(struct lfv_queue *q, struct lfv_op *op,
			 const struct ibv_send_wr *wr)
{
	size_t slot = (size_t)(op - q->ops);
	struct ibv_send_wr *copy = &q->more_wr[slot];
	struct ibv_sge *sge = &q->more_sge[slot * q->iov_max];

	*copy = *wr;
	memcpy(sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*sge));
	copy->sg_list = sge;
	copy->next = NULL;
	if (q->more_last)
		q->more_last->next = copy;
	else
		q->more_first = copy;
	q->more_last = copy;
}

/* Posts wr behind any deferred requests: one doorbell for the chain. A
 * request the device refused, and those after it, give their slots back. */
LFV_ALWAYS_INLINE int lfv_tx_ring(struct lfv_ep *ep, struct lfv_queue *q,
				  struct ibv_send_wr *wr)
{
	struct ibv_send_wr *first = wr, *bad = NULL;
	struct lfv_op *bad_op;
	int ret;

	if (q->more_first) {
		q->more_last->next = wr;
		first = q->more_first;
		q->more_first = q->more_last = NULL;
	}
	ret = ibv_post_send(ep->qp, first, &bad);
	if (!ret) {
		q->tail++;
		return 0;
	}
	/* Slots from the refused request on were never posted. Some
	 * providers (rxe in a wrong QP state) leave bad unset: then
	 * nothing was. */
	if (!bad)
		bad = first;
	bad_op = (struct lfv_op *)(uintptr_t)bad->wr_id;
	if (bad != wr)
		q->tail = lfv_load_relaxed64(&q->head) +
			  (((uint64_t)(bad_op - q->ops) -
			    lfv_load_relaxed64(&q->head)) & q->mask);
	return ret;
}

/* Whether r's completion goes to the CQ. FI_INJECT alone only frees the
 * buffer at once; fi_inject and friends are the calls that generate no
 * completion. */
static bool lfv_tx_report(const struct lfv_queue *q,
			  const struct lfv_tx_req *r)
{
	return !r->no_report && (!q->selective || (r->flags & FI_COMPLETION));
}

/* Fills op for r and wr's id and flags (post lock held). */
LFV_ALWAYS_INLINE void lfv_tx_fill(struct lfv_ep *ep, struct lfv_queue *q,
				   struct lfv_op *op, struct ibv_send_wr *wr,
				   const struct lfv_tx_req *r, size_t len)
{
	bool report = lfv_tx_report(q, r);
	bool signaled = lfv_tx_signaled(ep, q, report);

	op->context = r->context;
	op->flags = r->comp_flags | (report ? LFV_OP_REPORT : 0);
	op->len = len;
	op->buf = NULL;
	wr->wr_id = (uintptr_t)op;
	wr->send_flags = (signaled ? IBV_SEND_SIGNALED : 0) |
			 ((r->flags & FI_INJECT) ? IBV_SEND_INLINE : 0) |
			 ((r->flags & FI_FENCE) ? IBV_SEND_FENCE : 0);
	q->unsignaled = signaled ? 0 : q->unsignaled + 1;
}

/* Takes an op and posts wr (opcode, sge and remote fields set). */
ssize_t lfv_tx_post(struct lfv_ep *ep, struct ibv_send_wr *wr,
		    const struct lfv_tx_req *r, size_t len)
{
	struct lfv_queue *q = &ep->tx;
	struct lfv_op *op;
	int ret;

	/* Relaxed: the application learns of the connection through the
	 * EQ, whose lock orders it after the CM thread's store. */
	if (!lfv_load_relaxed32(&ep->tx_ready))
		return -FI_EOPBADSTATE; /* not enabled, or not connected */
	op = lfv_queue_lock_take(q, lfv_queue_take);
	if (!op)
		return -FI_EAGAIN;
	lfv_tx_fill(ep, q, op, wr, r, len);
	/* Inline data is copied at post time, which must be now. */
	if ((r->flags & FI_MORE) && !(r->flags & FI_INJECT) && q->more_wr &&
	    wr->num_sge <= (int)q->iov_max) {
		lfv_tx_defer(q, op, wr);
		q->tail++;
		lfv_spin_unlock(&q->lock);
		return 0;
	}
	ret = lfv_tx_ring(ep, q, wr);
	lfv_spin_unlock(&q->lock);
	return ret ? lfv_post_ret(ret) : 0;
}

/* Two free ops in a row (post lock held), polling once when short. */
static struct lfv_op *lfv_queue_take_two(struct lfv_queue *q)
{
	if (q->tail + 1 - lfv_load_acquire64(&q->head) >= q->size &&
	    q->vcq) {
		lfv_spin_unlock(&q->lock);
		lfv_progress_run(&q->vcq->progress);
		lfv_spin_lock(&q->lock);
	}
	if (q->tail + 1 - lfv_load_acquire64(&q->head) >= q->size)
		return NULL;
	return &q->ops[q->tail & q->mask];
}

ssize_t lfv_tx_post_noted(struct lfv_ep *ep, struct ibv_send_wr *wr,
			  const struct lfv_tx_req *r, size_t len,
			  struct ibv_send_wr *note, bool note_first)
{
	struct lfv_queue *q = &ep->tx;
	struct ibv_send_wr *first = note_first ? note : wr;
	struct lfv_op *op, *nop;
	int ret;

	if (!lfv_load_relaxed32(&ep->tx_ready))
		return -FI_EOPBADSTATE;
	op = lfv_queue_lock_take(q, lfv_queue_take_two);
	if (!op)
		return -FI_EAGAIN;
	nop = &q->ops[(q->tail + 1) & q->mask];
	if (note_first) {
		nop = op;
		op = &q->ops[(q->tail + 1) & q->mask];
	}
	lfv_tx_fill(ep, q, op, wr, r, len);
	/* Unsignaled: a later signaled request retires it. */
	*nop = (struct lfv_op){ .flags = LFV_OP_SILENT, .q = q };
	note->wr_id = (uintptr_t)nop;
	q->unsignaled++;
	first->next = note_first ? wr : note;
	(note_first ? wr : note)->next = NULL;
	ret = lfv_tx_ring(ep, q, first);
	if (!ret)
		q->tail++;	/* the ring counted one of the two */
	lfv_spin_unlock(&q->lock);
	return ret ? lfv_post_ret(ret) : 0;
}

static ssize_t lfv_send_common(struct lfv_ep *ep, const struct lfv_tx_req *r)
{
	struct ibv_sge sge[LFV_MAX_SGE];
	struct ibv_send_wr wr = { 0 };
	bool inject = r->flags & FI_INJECT;
	size_t len;
	int nsge, ret;

	if (r->count > ep->base.info->tx_attr->iov_limit || r->count > LFV_MAX_SGE)
		return -FI_EINVAL;
	nsge = lfv_fill_sge(sge, r->iov, r->desc, r->count, inject, &len);
	if (nsge < 0)
		return nsge;
	if (inject && len > ep->inject_size)
		return -FI_EINVAL;
	if (ep->kind->tx_dest) {	/* unconnected: an address */
		ret = ep->kind->tx_dest(ep, r->dest, len, &wr);
		if (ret)
			return ret;
	}
	wr.sg_list = sge;
	wr.num_sge = nsge;
	if (r->flags & FI_REMOTE_CQ_DATA) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htobe32((uint32_t)r->data);
	} else {
		wr.opcode = IBV_WR_SEND;
	}
	return lfv_tx_post(ep, &wr, r, len);
}

/* Fills a receive's op (post lock held) with what its CQ entry says. */
LFV_ALWAYS_INLINE void lfv_rx_fill(const struct lfv_queue *q, struct lfv_op *op,
				   void *context, void *buf, size_t len,
				   uint64_t flags)
{
	op->context = context;
	op->flags = FI_RECV | FI_MSG |
		    ((!q->selective || (flags & FI_COMPLETION)) ?
		     LFV_OP_REPORT : 0);
	op->buf = buf;
	op->len = len;
}

static ssize_t lfv_recv_common(struct lfv_ep *ep, const struct iovec *iov,
			       void **desc, size_t count, void *context,
			       uint64_t flags)
{
	struct lfv_queue *q = &ep->rx;
	struct ibv_sge sge[LFV_MAX_SGE + 1], *user = sge;
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct lfv_op *op;
	size_t len;
	int nsge, ret;

	if (ep->srq) /* receives of a bound endpoint go to the shared queue */
		return lfv_msg_srq_post(ep->srq, iov, desc, count, context, flags);
	if (ep->brx)
		return lfv_brx_post(ep, iov, count, context, flags);
	if (flags & FI_MULTI_RECV)
		return -FI_EINVAL; /* only buffered endpoints */
	if (count > ep->base.info->rx_attr->iov_limit || count > LFV_MAX_SGE)
		return -FI_EINVAL;
	/* The type's SGEs (a GRH) come first, in front of the data. */
	user = &sge[ep->kind->rx_hdr_sges];
	nsge = lfv_fill_recv_sge(user, iov, desc, count, &len);
	if (nsge < 0)
		return nsge;
	if (!ep->qp)
		return -FI_EOPBADSTATE;

	op = lfv_queue_lock_take(q, lfv_queue_take);
	if (!op)
		return -FI_EAGAIN;
	lfv_rx_fill(q, op, context, count ? iov[0].iov_base : NULL, len,
		    flags);
	wr.wr_id = (uintptr_t)op;
	wr.sg_list = sge;
	wr.num_sge = nsge + (int)ep->kind->rx_hdr_sges;
	if (ep->kind->rx_hdr)
		ep->kind->rx_hdr(ep, op, &wr);
	ret = ibv_post_recv(ep->qp, &wr, &bad);
	if (ret) {
		lfv_spin_unlock(&q->lock);
		return lfv_post_ret(ret);
	}
	q->tail++;
	lfv_spin_unlock(&q->lock);
	return 0;
}

/* ---- fi_ops_msg -------------------------------------------------------------- */

/* fi_recv's common case: one registered buffer on an RC receive queue. */
static ssize_t lfv_recv_one(struct lfv_ep *ep, void *buf, size_t len,
			    void *desc, void *context, uint64_t flags)
{
	struct lfv_queue *q = &ep->rx;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = (uint32_t)len,
			       .lkey = lfv_lkey(desc) };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct lfv_op *op;
	int ret;

	lfv_spin_lock(&q->lock);
	op = lfv_queue_next(q);
	if (__builtin_expect(!op, 0)) {
		op = lfv_queue_take(q);
		if (!op) {
			lfv_spin_unlock(&q->lock);
			return -FI_EAGAIN;
		}
	}
	lfv_rx_fill(q, op, context, buf, len, flags);
	wr.wr_id = (uintptr_t)op;
	ret = ibv_post_recv(ep->qp, &wr, &bad);
	if (!ret)
		q->tail++;
	lfv_spin_unlock(&q->lock);
	return ret ? lfv_post_ret(ret) : 0;
}

static ssize_t lfv_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			void *desc, fi_addr_t src_addr, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_ep *ep = lfv_ep_of(ep_fid);

	(void)src_addr;
	if (ep->rx_direct && len && buf && desc)
		return lfv_recv_one(ep, buf, len, desc, context,
				    lfv_ep_op_flags(ep_fid, false));
	return lfv_recv_common(ep, &iov, &desc, 1, context,
			       lfv_ep_op_flags(ep_fid, false));
}

static ssize_t lfv_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src_addr,
			 void *context)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);

	(void)src_addr;
	if (count && !iov)
		return -FI_EINVAL;
	return lfv_recv_common(ep, iov, desc, count, context,
			       lfv_ep_op_flags(ep_fid, false));
}

static ssize_t lfv_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_RX_MSG_FLAGS)
		return -FI_EBADFLAGS;
	return lfv_recv_common(lfv_ep_of(ep_fid), msg->msg_iov, msg->desc,
			       msg->iov_count, msg->context, flags);
}

/*
 * fi_send's common case: one registered buffer on RC, a send that reports
 * its completion and needs no FI_INJECT, FI_MORE or FI_FENCE. It posts the
 * queue's prepared request (signaled, so nothing unsignaled is pending
 * after it); anything unusual goes the general way.
 */
static inline ssize_t lfv_send_one(struct lfv_ep *ep, const void *buf,
				   size_t len, void *desc, void *context)
{
	struct lfv_queue *q = &ep->tx;
	struct ibv_send_wr *bad;
	struct lfv_op *op;
	int ret;

	lfv_spin_lock(&q->lock);
	op = lfv_queue_next(q);
	if (!op || q->more_first) {
		lfv_spin_unlock(&q->lock);
		return 1; /* not this way */
	}
	op->context = context;
	op->flags = FI_SEND | FI_MSG | LFV_OP_REPORT;
	op->len = len;
	op->buf = NULL;
	q->one_sge.addr = (uintptr_t)buf;
	q->one_sge.length = (uint32_t)len;
	q->one_sge.lkey = lfv_lkey(desc);
	q->one_wr.wr_id = (uintptr_t)op;
	q->unsignaled = 0;
	ret = ibv_post_send(ep->qp, &q->one_wr, &bad);
	if (!ret)
		q->tail++;
	lfv_spin_unlock(&q->lock);
	return ret ? lfv_post_ret(ret) : 0;
}

/* fi_send past the common case; out of line so that lfv_send needs no
 * stack for it. */
static __attribute__((noinline)) ssize_t
lfv_send_general(struct lfv_ep *ep, const void *buf, size_t len, void *desc,
		 fi_addr_t dest_addr, void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .dest = dest_addr,
		.context = context, .flags = flags,
		.comp_flags = FI_SEND | FI_MSG,
	};
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	/* One registered buffer still skips the general request builder. */
	if (len && buf && desc && !(flags & FI_INJECT)) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)buf,
					.length = (uint32_t)len,
					.lkey = lfv_lkey(desc) };
		wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND };
		return lfv_tx_post(ep, &wr, &r, len);
	}
	return lfv_send_common(ep, &r);
}

/* fi_send on MSG (RC). */
static ssize_t lfv_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	uint64_t flags = lfv_ep_op_flags(ep_fid, true);
	ssize_t ret;

	/* Relaxed: as in lfv_tx_post. */
	if (len && buf && desc &&
	    !(flags & (FI_INJECT | FI_MORE | FI_FENCE)) &&
	    (!ep->tx.selective || (flags & FI_COMPLETION)) &&
	    lfv_load_relaxed32(&ep->tx_ready)) {
		ret = lfv_send_one(ep, buf, len, desc, context);
		if (ret <= 0)
			return ret;
	}
	return lfv_send_general(ep, buf, len, desc, dest_addr, context, flags);
}

static ssize_t lfv_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest_addr,
			 void *context)
{
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = iov, .desc = desc, .count = count, .dest = dest_addr,
		.context = context, .flags = lfv_ep_op_flags(ep_fid, true),
		.comp_flags = FI_SEND | FI_MSG,
	};

	if (count && !iov)
		return -FI_EINVAL;
	return lfv_send_common(ep, &r);
}

/* fi_send on DGRAM (UD): every send names its destination. */
static ssize_t lfv_dgram_send(struct fid_ep *ep_fid, const void *buf,
			      size_t len, void *desc, fi_addr_t dest_addr,
			      void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_sendv(ep_fid, &iov, &desc, 1, dest_addr, context);
}

static ssize_t lfv_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			   uint64_t flags)
{
	struct lfv_tx_req r;

	if (!msg || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_TX_MSG_FLAGS)
		return -FI_EBADFLAGS;
	r = (struct lfv_tx_req){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .data = msg->data,
		.dest = msg->addr, .context = msg->context, .flags = flags,
		.comp_flags = FI_SEND | FI_MSG,
	};
	return lfv_send_common(lfv_ep_of(ep_fid), &r);
}

static ssize_t lfv_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			  fi_addr_t dest_addr)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = lfv_inject_req(&iov, dest_addr, 0, 0,
					     FI_SEND | FI_MSG);

	return lfv_send_common(lfv_ep_of(ep_fid), &r);
}

static ssize_t lfv_senddata(struct fid_ep *ep_fid, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_ep *ep = lfv_ep_of(ep_fid);
	struct lfv_tx_req r = {
		.iov = &iov, .desc = &desc, .count = 1, .data = data,
		.dest = dest_addr, .context = context,
		.flags = lfv_ep_op_flags(ep_fid, true) | FI_REMOTE_CQ_DATA,
		.comp_flags = FI_SEND | FI_MSG,
	};

	return lfv_send_common(ep, &r);
}

static ssize_t lfv_injectdata(struct fid_ep *ep_fid, const void *buf,
			      size_t len, uint64_t data, fi_addr_t dest_addr)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct lfv_tx_req r = lfv_inject_req(&iov, dest_addr, data,
					     FI_REMOTE_CQ_DATA,
					     FI_SEND | FI_MSG);

	return lfv_send_common(lfv_ep_of(ep_fid), &r);
}

/* The two halves of the tables below, as slots: receives, and sends
 * (MSG's fi_send has a fast path, DGRAM's none). */
#define LFV_MSG_RECV_SLOTS                                                 \
	.recv = lfv_recv, .recvv = lfv_recvv, .recvmsg = lfv_recvmsg
#define LFV_MSG_SEND_SLOTS(send_fn)                                        \
	.send = (send_fn), .sendv = lfv_sendv, .sendmsg = lfv_sendmsg,     \
	.inject = lfv_inject, .senddata = lfv_senddata,                    \
	.injectdata = lfv_injectdata

/* One table of the halves (slots) it takes. */
#define LFV_MSG_OPS(...)                                                   \
	{ .size = sizeof(struct fi_ops_msg), __VA_ARGS__ }

struct fi_ops_msg lfv_msg_ops =
	LFV_MSG_OPS(LFV_MSG_RECV_SLOTS, LFV_MSG_SEND_SLOTS(lfv_send));
struct fi_ops_msg lfv_dgram_msg_ops =
	LFV_MSG_OPS(LFV_MSG_RECV_SLOTS, LFV_MSG_SEND_SLOTS(lfv_dgram_send));

/* A scalable (DGRAM) endpoint's transmit context sends only, a receive
 * context receives only (lfv_sep.c): the other half answers -FI_ENOSYS. */
struct fi_ops_msg lfv_dgram_tx_ops =
	LFV_MSG_OPS(LFV_NO_MSG_RECV_SLOTS, LFV_MSG_SEND_SLOTS(lfv_dgram_send));
struct fi_ops_msg lfv_dgram_rx_ops =
	LFV_MSG_OPS(LFV_MSG_RECV_SLOTS, LFV_NO_MSG_SEND_SLOTS);
