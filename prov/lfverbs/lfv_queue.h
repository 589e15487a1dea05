/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Work requests and completions, for every endpoint type over ibverbs
 * queue pairs. Every posted work request has an lfv_op in
 * its queue's array, and wr_id is that op's address. A queue (the send or
 * receive side of one QP) posts at tail and retires at head; tail - head is
 * never more than the queue's size, which is also what it added to its
 * verbs CQ's capacity, so neither the QP nor the hardware CQ can overrun
 * (posting returns -FI_EAGAIN instead). Send queues complete in order: a
 * signaled completion retires every unsignaled request before it.
 *
 * Completions are translated once (the common case in lfv_vcq.c, the rest
 * by the queue's translate, lfv_msg_comp.c): straight into the caller's
 * buffer when fi_cq_read finds the CQ's ring empty, into the ring otherwise
 * (progress run by counters, sread, flow control).
 *
 * Locking: a vcq's poll lock serialises translation and the heads of the
 * queues it serves; a queue's post lock serialises posting. Both are
 * skipped under FI_THREAD_DOMAIN and FI_THREAD_COMPLETION, where the
 * application serialises (lfv_spin), unless a progress thread polls.
 * Posters read head with acquire (pairs with the poller's release store).
 */
#ifndef LFV_QUEUE_H
#define LFV_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <infiniband/verbs.h>

#include "lfv_atomic.h"
#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_list.h"
#include "lfv_progress.h"
#include "lfv_prov.h"

/* Set on an op that must show up in the CQ (not only in counters). */
#define LFV_OP_REPORT (1ULL << 63)
/* A shared receive without FI_COMPLETION: reported unless the endpoint it
 * lands on bound its CQ with FI_SELECTIVE_COMPLETION. */
#define LFV_OP_SHARED (1ULL << 62)
/* A provider's own send: an RMA event announcement (lfv_rma.c), or the
 * request a closing queue posts to retire its unsignaled sends
 * (lfv_ep_drain_queue). Neither counted nor reported, in success or
 * error. */
#define LFV_OP_SILENT (1ULL << 61)
#define LFV_OP_FLAGS_INTERNAL (LFV_OP_REPORT | LFV_OP_SHARED | LFV_OP_SILENT)

/* An optional spin lock: not taken when the domain's threading model
 * makes the application serialise access. */
struct lfv_spin {
	pthread_spinlock_t lock;
	bool on;
};

static inline int lfv_spin_init(struct lfv_spin *s, bool on)
{
	s->on = on;
	return on ? -pthread_spin_init(&s->lock, PTHREAD_PROCESS_PRIVATE) : 0;
}

static inline void lfv_spin_fini(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_destroy(&s->lock);
}

static inline void lfv_spin_lock(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_lock(&s->lock);
}

static inline void lfv_spin_unlock(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_unlock(&s->lock);
}

struct lfv_queue;
struct lfv_vcq;

/* Where translated completions go: the buffer of a reader of the CQ
 * (fi_cq_read's direct path), or, without one or once it is full, the
 * CQ's ring. */
struct lfv_vcq_sink {
	char *buf;
	fi_addr_t *src;
	size_t count, max;
};

/* The translation of a queue's completions beyond lfv_vcq.c's fast one:
 * each endpoint type's (lfv_msg_comp.c, lfv_dgram.c). */
typedef void lfv_translate_fn(struct lfv_vcq *vcq, const struct ibv_wc *wc,
			      struct lfv_vcq_sink *sink);

struct lfv_op {
	void *context;
	uint64_t flags;		/* completion flags | LFV_OP_REPORT */
	void *buf;		/* receive buffer start */
	size_t len;
	struct lfv_queue *q;
};

/* One verbs CQ; serves one lfverbs CQ (or none: counters only). A CQ
 * whose bound queues need more entries than one verbs CQ holds (max_cqe)
 * gets more: the first (the one attached to the CQ) chains the others,
 * which share its channel, and a read of the CQ polls them all. */
struct lfv_vcq {
	struct lfv_list node;		/* in domain->vcqs */
	struct lfv_domain *domain;
	struct lfv_cq *cq;		/* NULL: an endpoint's private CQ */
	struct ibv_cq *ibv_cq;
	struct ibv_comp_channel *channel;	/* FD waits only; first's */
	struct lfv_vcq *first;		/* the CQ's first (itself if so) */
	/* The next verbs CQ of the same CQ, made when those before it were
	 * full; set once (release), walked by readers without a lock. */
	lfv_atomic_ptr_t next;
	lfv_atomic32_t turn;		/* first: where the next read starts */
	struct lfv_spin lock;		/* polling, queue heads */
	int capacity;			/* cqe of ibv_cq */
	int reserved;			/* sum of bound queue sizes */
	uint32_t unacked;		/* channel events not yet acked (lock) */
	bool auto_on;			/* the progress thread watches it */
	lfv_atomic32_t ref;		/* queues bound */
	/* Polls it (lfv_vcq_progress), for posters that find their queue
	 * full: they reach the poller through the object, not by name. */
	struct lfv_progress_hook progress;
};

struct lfv_queue {
	struct lfv_op *ops;
	uint32_t mask;			/* ops has mask + 1 entries */
	uint32_t size;			/* most outstanding requests */
	uint64_t tail;			/* next to post; post lock */
	lfv_atomic64_t head;		/* next to retire; poll lock */
	uint32_t unsignaled;		/* sends posted since a signaled one */
	bool is_tx;
	bool selective;			/* FI_SELECTIVE_COMPLETION */
	bool closing;			/* poll lock: drop its completions */
	/* Poll lock: its successful completions need nothing but the CQ
	 * entry (RC, no counters, no buffering; set by fi_enable, cleared
	 * when closing), so lfv_vcq_translate_fast may take them. */
	bool fast;
	/* fi_cancel on a UD endpoint (lfv_ud_cancel.c), poll lock: flushed
	 * sends count as sent, flushed receives wait to be posted again
	 * from cancel_first on. */
	bool cancelling;
	uint64_t cancel_first;
	struct lfv_spin lock;		/* posting */
	/* FI_MORE: requests written but not yet posted, kept per op slot
	 * (send queues only), posted as one chain by the next call without
	 * FI_MORE. */
	struct ibv_send_wr *more_wr;
	struct ibv_sge *more_sge;	/* iov_max per slot */
	uint32_t iov_max;
	struct ibv_send_wr *more_first, *more_last;
	/* fi_send's common case (lfv_msg.c): a request already filled in
	 * but for wr_id and the one SGE (post lock). */
	struct ibv_send_wr one_wr;
	struct ibv_sge one_sge;
	struct lfv_vcq *vcq;
	struct lfv_cntr *cntr;		/* FI_SEND / FI_RECV counter */
	/* Another transport's requests (RDM, lfv_rdm_progress.c): every completion
	 * goes to it instead of a translation. */
	void (*handler)(struct lfv_queue *q, struct lfv_op *op,
			const struct ibv_wc *wc);
	/* Without a handler: what the fast translation leaves, translated
	 * as the endpoint type that opened the queue chose. */
	lfv_translate_fn *translate;
	/* Whose queue it is, opaque at this layer (as an ibv_qp's
	 * qp_context): a MSG or DGRAM endpoint's (struct lfv_ep), or with
	 * shared set an MSG SRQ's (struct lfv_msg_srq, whose receives may land
	 * on any endpoint bound to it). NULL for a dispatch-only queue. */
	void *owner;
	bool shared;
};

static inline struct lfv_op *lfv_queue_next(struct lfv_queue *q)
{
	/* Acquire: pairs with the poller's release store of head, so the
	 * op slots it retired are free to reuse. */
	if (q->tail - lfv_load_acquire64(&q->head) >= q->size)
		return NULL;
	return &q->ops[q->tail & q->mask];
}


/* The result of a failed ibv_post_* (a positive errno) for the caller. */
static inline ssize_t lfv_post_ret(int err)
{
	/* A full work queue the credits did not foresee, or a QP that is
	 * not (or no longer) connected. */
	if (err == ENOMEM)
		return -FI_EAGAIN;
	if (err == EINVAL)
		return -FI_EOPBADSTATE;
	return -(ssize_t)err;
}

#endif /* LFV_QUEUE_H */
