/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The verbs CQ behind an lfverbs CQ: one ibv_cq per fi_cq, created when the
 * first endpoint binds and grown (ibv_resize_cq) as more bind, so that its
 * capacity always covers every request the bound queues may have
 * outstanding. A queue that no longer fits under the device's max_cqe
 * goes to another verbs CQ of the same fi_cq, chained behind the first
 * (made on demand, sharing its completion channel; a read polls them
 * all, in turn), so no verbs CQ can overflow however many endpoints
 * share the fi_cq. Work completions are translated once, into the caller's
 * buffer (lfv_cq_hw.poll) or into the CQ's ring (progress): the common
 * case here, the rest by the queue's handler (another transport's) or
 * translate (an endpoint type's, lfv_msg_comp.c). Nothing here knows an
 * endpoint type.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "lfv_auto.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_queue.h"
#include "lfv_tsan.h"
#include "lfv_vcq.h"

#define LFV_VCQ_POLL_BATCH 16
#define LFV_VCQ_ACK_BATCH 32
#define LFV_VCQ_MIN_CQE 64

int lfv_wc_errno(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case IBV_WC_LOC_LEN_ERR:
		return FI_ETRUNC;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		return FI_EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
		return FI_EREMOTEIO;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	default:
		return FI_EIO;
	}
}

/* The next entry of the reader's buffer (the caller checked its room). */
static inline __attribute__((always_inline)) void
lfv_vcq_sink_put(struct lfv_vcq *vcq, struct lfv_vcq_sink *sink,
		 const struct lfv_cq_comp *comp)
{
	lfv_cq_format_entry(vcq->cq, sink->buf + sink->count *
			    vcq->cq->fmt_size, comp);
	if (sink->src)
		sink->src[sink->count] = comp->src;
	sink->count++;
}

void lfv_vcq_emit(struct lfv_vcq *vcq, struct lfv_vcq_sink *sink,
		  const struct lfv_cq_comp *comp)
{
	if (sink->buf && sink->count < sink->max) {
		lfv_vcq_sink_put(vcq, sink, comp);
		return;
	}
	/* Progress that a read of the CQ runs (an RDM endpoint's hook on a
	 * CQ shared with this queue) fills that reader's buffer. */
	if (lfv_cq_write_to_reader(vcq->cq, comp))
		LFV_WARN(FI_LOG_CQ, "lost a completion: no memory\n");
}

/*
 * The common case of a queue's translate, for lfv_vcq_poll_locked: a
 * successful completion of an RC queue with no counters (q->fast), that
 * nothing but its own CQ entry depends on, written straight into the
 * reader's buffer through the same builders. Returns false to let the
 * general path do it.
 */
static inline __attribute__((always_inline)) bool
lfv_vcq_translate_fast(struct lfv_vcq *vcq, const struct ibv_wc *wc,
		       struct lfv_vcq_sink *sink)
{
	struct lfv_op *op = (struct lfv_op *)(uintptr_t)wc->wr_id;
	struct lfv_queue *q = op->q;
	/* Relaxed: head is written only under the poll lock we hold. */
	uint64_t head = lfv_load_relaxed64(&q->head);
	struct lfv_cq_comp comp;

	if (wc->status != IBV_WC_SUCCESS || !q->fast || !sink->buf ||
	    sink->count >= sink->max)
		return false;
	/* A send with unsignaled ones before it retires them too, and a
	 * receive that a remote write consumed counts that write: both the
	 * general path's. */
	if (q->is_tx ? (uint64_t)(op - q->ops) != (head & q->mask) :
		       wc->opcode != IBV_WC_RECV)
		return false;
	lfv_vcq_comp(q->is_tx, 0, op, wc, &comp);
	if (lfv_vcq_wanted(q, q->is_tx, op->flags))
		lfv_vcq_sink_put(vcq, sink, &comp);
	lfv_vcq_retire_head(q, head);
	return true;
}

/* The general path: another transport's queue takes its own completions
 * (it writes them to its CQs itself); an endpoint type's queue, its type's
 * translation. */
static void lfv_vcq_dispatch(struct lfv_vcq *vcq, const struct ibv_wc *wc,
			     struct lfv_vcq_sink *sink)
{
	struct lfv_queue *q = ((struct lfv_op *)(uintptr_t)wc->wr_id)->q;

	if (q->handler)
		q->handler(q, (struct lfv_op *)(uintptr_t)wc->wr_id, wc);
	else
		q->translate(vcq, wc, sink);
}

/* Polls under the lock; returns entries placed in the sink's buffer.
 * Inlined into its two callers: fi_cq_read's direct path runs it once per
 * completion read. reader: the sink is a reader's buffer (hw.poll), whose
 * room bounds the poll and which only the fast translation serves;
 * progress (no buffer) leaves both out. */
static inline __attribute__((always_inline)) size_t
lfv_vcq_poll_locked(struct lfv_vcq *vcq, struct lfv_vcq_sink *sink, bool reader)
{
	struct ibv_wc wc[LFV_VCQ_POLL_BATCH];
	int n, i, want;

	/* The sink has room (callers read at least one). */
	for (;;) {
		want = LFV_VCQ_POLL_BATCH;
		if (reader && sink->max - sink->count < (size_t)want)
			want = (int)(sink->max - sink->count);
		n = ibv_poll_cq(vcq->ibv_cq, want, wc);
		for (i = 0; i < n; i++) {
			lfv_tsan_completed(wc[i].wr_id);
			if (!reader ||
			    !lfv_vcq_translate_fast(vcq, &wc[i], sink))
				lfv_vcq_dispatch(vcq, &wc[i], sink);
		}
		if (n < want || (reader && sink->count >= sink->max))
			return sink->count;
	}
}

void lfv_vcq_progress(struct lfv_vcq *vcq)
{
	struct lfv_vcq_sink sink = { 0 };

	lfv_spin_lock(&vcq->lock);
	lfv_vcq_poll_locked(vcq, &sink, false);
	lfv_spin_unlock(&vcq->lock);
}

void lfv_vcq_progress_pair(struct lfv_vcq *tx, struct lfv_vcq *rx)
{
	if (tx)
		lfv_vcq_progress(tx);
	if (rx && rx != tx)
		lfv_vcq_progress(rx);
}

static inline struct lfv_vcq *lfv_vcq_next(struct lfv_vcq *vcq)
{
	/* Acquire: pairs with the release that linked it (lfv_vcq_create). */
	return lfv_load_acquire_ptr(&vcq->next);
}

/* Every verbs CQ of a CQ: the first's chain. */
#define lfv_vcq_foreach(v, first) \
	for ((v) = (first); (v); (v) = lfv_vcq_next(v))

/* Moves what every verbs CQ of the chain holds into the ring. */
static void lfv_vcq_progress_all(struct lfv_vcq *first)
{
	struct lfv_vcq *v;

	lfv_vcq_foreach(v, first)
		lfv_vcq_progress(v);
}

/* One verbs CQ's part of a read, while nothing older of it waits in the
 * ring. */
static void lfv_vcq_read_one(struct lfv_vcq *vcq, struct lfv_vcq_sink *sink)
{
	lfv_spin_lock(&vcq->lock);
	if (lfv_cq_ring_empty(vcq->cq))
		lfv_vcq_poll_locked(vcq, sink, true);
	lfv_spin_unlock(&vcq->lock);
}

/* A read of a CQ with more than one verbs CQ: all of them, each read
 * starting at the next one, so that a busy one cannot starve the
 * others of a reader who takes few at a time. */
static __attribute__((noinline)) size_t
lfv_vcq_read_chain(struct lfv_vcq *first, struct lfv_vcq_sink *sink)
{
	/* Relaxed: only where a read starts; readers may race on it. */
	uint32_t start = lfv_load_relaxed32(&first->turn), n = 0, i;
	struct lfv_vcq *v, *from = first;

	lfv_store_relaxed32(&first->turn, start + 1);
	lfv_vcq_foreach(v, first)
		n++;
	for (i = start % n; i; i--)
		from = lfv_vcq_next(from);
	for (v = from; v && sink->count < sink->max; v = lfv_vcq_next(v))
		lfv_vcq_read_one(v, sink);
	for (v = first; v != from && sink->count < sink->max;
	     v = lfv_vcq_next(v))
		lfv_vcq_read_one(v, sink);
	return sink->count;
}

/* lfv_cq_hw.poll: straight into the reader's buffer while nothing older
 * waits in the ring. */
static ssize_t lfv_vcq_hw_poll(void *arg, void *buf, fi_addr_t *src,
			       size_t count)
{
	struct lfv_vcq *vcq = arg;
	struct lfv_vcq_sink sink = { .buf = buf, .src = src, .max = count };
	size_t n = 0;

	if (__builtin_expect(lfv_vcq_next(vcq) != NULL, 0))
		return (ssize_t)lfv_vcq_read_chain(vcq, &sink);
	/* Unlocked, nobody else moves completions into the ring: the
	 * caller's check that it is empty still holds. */
	if (!vcq->lock.on)
		return (ssize_t)lfv_vcq_poll_locked(vcq, &sink, true);
	lfv_spin_lock(&vcq->lock);
	if (lfv_cq_ring_empty(vcq->cq))
		n = lfv_vcq_poll_locked(vcq, &sink, true);
	lfv_spin_unlock(&vcq->lock);
	return (ssize_t)n;
}

/* Asks every verbs CQ of the chain for its next event. */
static int lfv_vcq_arm_all(struct lfv_vcq *first)
{
	struct lfv_vcq *v;
	int ret;

	lfv_vcq_foreach(v, first) {
		ret = lfv_verbs_ret(ibv_req_notify_cq(v->ibv_cq, 0));
		if (ret)
			return ret;
	}
	return 0;
}

static int lfv_vcq_hw_arm(void *arg)
{
	struct lfv_vcq *vcq = arg;
	int ret;

	ret = lfv_vcq_arm_all(vcq);
	if (ret)
		return ret;
	/* A completion that arrived before the request raises no event:
	 * move anything already there into the ring and report it. */
	lfv_vcq_progress_all(vcq);
	return lfv_cq_ring_empty(vcq->cq) ? 0 : -FI_EAGAIN;
}

/* Takes the channel's pending events, acking them in batches to the
 * verbs CQ each came from (the chain shares the first's channel). */
static void lfv_vcq_take_events(struct lfv_vcq *vcq)
{
	struct ibv_cq *ev_cq;
	struct lfv_vcq *from;
	void *ev_ctx;

	/* The channel fd is non-blocking: this takes what is there. */
	while (!ibv_get_cq_event(vcq->channel, &ev_cq, &ev_ctx)) {
		from = ev_ctx;
		lfv_spin_lock(&from->lock);
		if (++from->unacked >= LFV_VCQ_ACK_BATCH) {
			ibv_ack_cq_events(from->ibv_cq, from->unacked);
			from->unacked = 0;
		}
		lfv_spin_unlock(&from->lock);
	}
}

static void lfv_vcq_hw_ack(void *arg)
{
	struct lfv_vcq *vcq = arg;

	if (vcq->channel)
		lfv_vcq_take_events(vcq);
}

void lfv_vcq_auto_event(struct lfv_vcq *vcq)
{
	lfv_vcq_take_events(vcq);
	/* Re-arm before polling: a completion after the poll raises the
	 * next event. */
	lfv_vcq_arm_all(vcq);
	lfv_vcq_progress_all(vcq);
}

static void lfv_vcq_destroy_one(struct lfv_vcq *vcq)
{
	struct lfv_domain *domain = vcq->domain;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_auto_del(domain, vcq);
	lfv_list_remove(&vcq->node);
	pthread_mutex_unlock(&domain->vcq_lock);
	if (vcq->unacked)
		ibv_ack_cq_events(vcq->ibv_cq, vcq->unacked);
	ibv_destroy_cq(vcq->ibv_cq);
	if (vcq->channel && vcq->first == vcq)
		ibv_destroy_comp_channel(vcq->channel);
	lfv_spin_fini(&vcq->lock);
	free(vcq);
}

/* A vcq and those chained behind it: those first, as they use its
 * channel. */
static void lfv_vcq_destroy(struct lfv_vcq *vcq)
{
	struct lfv_vcq *v = lfv_vcq_next(vcq), *next;

	for (; v; v = next) {
		next = lfv_vcq_next(v);
		lfv_vcq_destroy_one(v);
	}
	lfv_vcq_destroy_one(vcq);
}

static void lfv_vcq_hw_fini(void *arg)
{
	lfv_vcq_destroy(arg);
}

/* FI_PROGRESS_AUTO, or a CQ whose waiters block on a condition variable:
 * nothing else would notice hardware completions. */
static bool lfv_vcq_wants_thread(const struct lfv_domain *domain,
				 const struct lfv_cq *cq)
{
	return domain->progress_auto ||
	       (cq && cq->wait.type == FI_WAIT_MUTEX_COND);
}

static int lfv_vcq_open_channel(struct lfv_vcq *vcq)
{
	int ret;

	vcq->channel = ibv_create_comp_channel(vcq->domain->ctx);
	if (!vcq->channel)
		return lfv_verbs_errno();
	ret = lfv_fd_set_nonblock(vcq->channel->fd);
	if (ret) {
		ibv_destroy_comp_channel(vcq->channel);
		vcq->channel = NULL;
	}
	return ret;
}

static void lfv_vcq_progress_hook(void *vcq)
{
	lfv_vcq_progress(vcq);
}

/* Links vcq behind the last of first's chain; vcq_lock held. */
static void lfv_vcq_link(struct lfv_vcq *first, struct lfv_vcq *vcq)
{
	struct lfv_vcq *last = first, *next;

	while ((next = lfv_vcq_next(last)))
		last = next;
	/* Release: readers that find it see it whole. */
	lfv_store_release_ptr(&last->next, vcq);
}

/* A verbs CQ for cq (NULL: private), the first of cq's or, with first,
 * one more behind it on first's channel. */
static int lfv_vcq_create(struct lfv_domain *domain, struct lfv_cq *cq,
			  struct lfv_vcq *first, int size,
			  struct lfv_vcq **out)
{
	struct lfv_vcq *vcq;
	int ret;

	vcq = calloc(1, sizeof(*vcq));
	if (!vcq)
		return -FI_ENOMEM;
	vcq->domain = domain;
	vcq->cq = cq;
	vcq->first = first ? first : vcq;
	vcq->progress = (struct lfv_progress_hook){
		.fn = lfv_vcq_progress_hook, .arg = vcq };
	/* A progress thread polls beside the application: lock then. */
	ret = lfv_spin_init(&vcq->lock, domain->locked ||
			    lfv_vcq_wants_thread(domain, cq));
	if (ret)
		goto free_vcq;
	if (first) {
		vcq->channel = first->channel;
	} else if ((cq && cq->wait.type == FI_WAIT_FD) ||
		   lfv_vcq_wants_thread(domain, cq)) {
		ret = lfv_vcq_open_channel(vcq);
		if (ret)
			goto fini_lock;
	}
	vcq->capacity = size > LFV_VCQ_MIN_CQE ? size : LFV_VCQ_MIN_CQE;
	if (vcq->capacity > domain->dev->attr.max_cqe)
		vcq->capacity = domain->dev->attr.max_cqe;
	vcq->ibv_cq = ibv_create_cq(domain->ctx, vcq->capacity, vcq,
				    vcq->channel, 0);
	if (!vcq->ibv_cq) {
		ret = lfv_verbs_errno();
		goto destroy_channel;
	}
	vcq->capacity = vcq->ibv_cq->cqe;
	/* The first's waiters (and progress thread) re-arm the chain after
	 * each event; one made between two events needs its own request. */
	ret = first && vcq->channel ?
	      lfv_verbs_ret(ibv_req_notify_cq(vcq->ibv_cq, 0)) : 0;
	if (ret)
		goto destroy_cq;
	pthread_mutex_lock(&domain->vcq_lock);
	ret = !first && lfv_vcq_wants_thread(domain, cq) ?
	      lfv_auto_add(domain, vcq) : 0;
	if (!ret)
		lfv_list_insert_tail(&domain->vcqs, &vcq->node);
	if (!ret && first)
		lfv_vcq_link(first, vcq);
	pthread_mutex_unlock(&domain->vcq_lock);
	if (ret)
		goto destroy_cq;
	*out = vcq;
	return 0;

destroy_cq:
	ibv_destroy_cq(vcq->ibv_cq);
destroy_channel:
	if (vcq->channel && !first)
		ibv_destroy_comp_channel(vcq->channel);
fini_lock:
	lfv_spin_fini(&vcq->lock);
free_vcq:
	free(vcq);
	return ret;
}

static int lfv_vcq_attach(struct lfv_vcq *vcq)
{
	struct lfv_cq_hw hw = {
		.poll = lfv_vcq_hw_poll,
		.arm = vcq->channel ? lfv_vcq_hw_arm : NULL,
		.ack = vcq->channel ? lfv_vcq_hw_ack : NULL,
		.fini = lfv_vcq_hw_fini,
		.fd = vcq->channel ? vcq->channel->fd : -1,
		.arg = vcq,
	};

	return lfv_cq_attach_hw(vcq->cq, &hw);
}

/* Makes room for size more outstanding requests. */
static int lfv_vcq_reserve(struct lfv_vcq *vcq, int size)
{
	int need = vcq->reserved + size;
	int ret;

	if (need > vcq->domain->dev->attr.max_cqe)
		return -FI_ENOSPC;
	if (need > vcq->capacity) {
		lfv_spin_lock(&vcq->lock);
		ret = lfv_verbs_ret(ibv_resize_cq(vcq->ibv_cq, need));
		lfv_spin_unlock(&vcq->lock);
		if (ret)
			return ret;
		vcq->capacity = vcq->ibv_cq->cqe;
	}
	vcq->reserved = need;
	return 0;
}

/* The first verbs CQ of cq, made for a queue of size requests (cq NULL:
 * a private one). */
static int lfv_vcq_get_first(struct lfv_domain *domain, struct lfv_cq *cq,
			     int size, struct lfv_vcq **out)
{
	struct lfv_vcq *vcq;
	int ret;

	ret = lfv_vcq_create(domain, cq, NULL, size, &vcq);
	if (ret)
		return ret;
	if (cq) {
		ret = lfv_vcq_attach(vcq);
		if (ret)
			goto destroy;
	}
	ret = lfv_vcq_reserve(vcq, size);
	if (ret)
		goto detach;
	*out = vcq;
	return 0;

detach:
	if (cq)
		lfv_cq_detach_hw(cq);
destroy:
	lfv_vcq_destroy(vcq);
	return ret;
}

/* A verbs CQ of first's chain with room for size more requests: the
 * first that has it, or a new one behind them. */
static int lfv_vcq_get_room(struct lfv_vcq *first, int size,
			    struct lfv_vcq **out)
{
	struct lfv_vcq *vcq;
	int ret;

	lfv_vcq_foreach(vcq, first) {
		ret = lfv_vcq_reserve(vcq, size);
		if (ret != -FI_ENOSPC) {
			if (!ret)
				*out = vcq;
			return ret;
		}
	}
	ret = lfv_vcq_create(first->domain, first->cq, first, size, &vcq);
	if (ret)
		return ret;
	LFV_INFO(FI_LOG_CQ, "a CQ's queues need more than max_cqe (%d) "
		 "entries: one more verbs CQ\n",
		 first->domain->dev->attr.max_cqe);
	/* Linked already: on failure it waits, empty, for later queues. */
	ret = lfv_vcq_reserve(vcq, size);
	if (!ret)
		*out = vcq;
	return ret;
}

/*
 * The verbs CQ for a queue of size requests: one of the CQ's (created on
 * demand), or a private one when cq is NULL. Binding is a control-path
 * call serialised by the domain's vcq_lock.
 */
int lfv_vcq_get(struct lfv_domain *domain, struct lfv_cq *cq, int size,
		struct lfv_vcq **out)
{
	struct lfv_vcq *vcq = cq && cq->hw.poll == lfv_vcq_hw_poll ?
			      cq->hw.arg : NULL;
	int ret;

	/* No verbs CQ could hold it. */
	if (size > domain->dev->attr.max_cqe)
		return -FI_ENOSPC;
	ret = vcq ? lfv_vcq_get_room(vcq, size, &vcq) :
		    lfv_vcq_get_first(domain, cq, size, &vcq);
	if (ret)
		return ret;
	lfv_ref_get(&vcq->ref);
	*out = vcq;
	return 0;
}

void lfv_vcq_put(struct lfv_vcq *vcq, int size)
{
	vcq->reserved -= size;
	/* A CQ's vcq lives until the CQ closes; a private one goes now. */
	if (!lfv_ref_put(&vcq->ref) && !vcq->cq)
		lfv_vcq_destroy(vcq);
}

/* Counters drive progress on every verbs CQ of their domain. */
void lfv_domain_progress(void *arg)
{
	struct lfv_domain *domain = arg;
	struct lfv_list *item;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->vcqs)
		lfv_vcq_progress(lfv_container_of(item, struct lfv_vcq, node));
	pthread_mutex_unlock(&domain->vcq_lock);
}

bool lfv_vcq_wait_empty(struct lfv_queue *q, int64_t deadline)
{
	/* Acquire: pairs with the poller's release of head. */
	while (q->tail != lfv_load_acquire64(&q->head)) {
		if (lfv_now_ns() > deadline)
			return false;
		lfv_vcq_progress(q->vcq);
	}
	return true;
}

void lfv_vcq_set_cancelling(struct lfv_queue *q, bool on)
{
	lfv_spin_lock(&q->vcq->lock);
	q->cancelling = on;
	q->cancel_first = UINT64_MAX;
	lfv_spin_unlock(&q->vcq->lock);
}

int lfv_queue_init(struct lfv_queue *q, void *owner, bool is_tx,
		   uint32_t size, bool locked)
{
	uint32_t n = 1;
	int ret;

	while (n < size)
		n <<= 1;
	q->ops = calloc(n, sizeof(*q->ops));
	if (!q->ops)
		return -FI_ENOMEM;
	ret = lfv_spin_init(&q->lock, locked);
	if (ret) {
		free(q->ops);
		q->ops = NULL;
		return ret;
	}
	q->mask = n - 1;
	q->size = size;
	q->is_tx = is_tx;
	q->owner = owner;
	for (n = 0; n <= q->mask; n++)
		q->ops[n].q = q;
	q->one_wr = (struct ibv_send_wr){
		.sg_list = &q->one_sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	return 0;
}

int lfv_queue_enable_more(struct lfv_queue *q, uint32_t iov_max)
{
	size_t slots = (size_t)q->mask + 1;

	q->more_wr = calloc(slots, sizeof(*q->more_wr));
	q->more_sge = calloc(slots * iov_max, sizeof(*q->more_sge));
	if (!q->more_wr || !q->more_sge) {
		free(q->more_wr);
		free(q->more_sge);
		q->more_wr = NULL;
		q->more_sge = NULL;
		return -FI_ENOMEM;
	}
	q->iov_max = iov_max;
	return 0;
}

void lfv_queue_fini(struct lfv_queue *q)
{
	if (!q->ops)
		return;
	lfv_spin_fini(&q->lock);
	free(q->more_wr);
	free(q->more_sge);
	free(q->ops);
	q->ops = NULL;
}
