/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Completion queues: see include/lfv_cq.h for the design. Here: the entry
 * formats, the writers and the producer side of waking. The other parts
 * build on these: lfv_cq_read.c (the read path), lfv_cq_err.c (the error
 * queue), lfv_cq_wait.c (sread, signal, trywait), lfv_cq_peer.c (the peer
 * roles), lfv_cq_open.c (the fid: open, close, ops tables).
 */
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_cq.h"

size_t lfv_cq_slot_size(const struct lfv_cq *cq)
{
	/* Not the ring's entry size: a peer-role CQ has no ring. */
	return cq->fmt_size + (cq->store_src ? sizeof(fi_addr_t) : 0);
}


void lfv_cq_format_slot(const struct lfv_cq *cq, void *slot,
			const struct lfv_cq_comp *c)
{
	lfv_cq_format_entry(cq, slot, c);
	if (cq->store_src)
		memcpy((char *)slot + cq->fmt_size, &c->src, sizeof(c->src));
}

/* ---- waking --------------------------------------------------------------- */

/* Entries queued, approximately: reserved-but-unpublished slots count. */
static size_t lfv_cq_queued(const struct lfv_cq *cq)
{
	/* Relaxed: an estimate for wake-up conditions, no data is read on it.
	 * head first: it never passes tail, so the difference is >= 0. */
	uint64_t head = lfv_load_relaxed64(&cq->ring.head);
	/* Relaxed: as above. */
	uint64_t tail = lfv_load_relaxed64(&cq->ring.tail);

	/* Relaxed: as above. */
	return (size_t)(tail - head + lfv_load_relaxed64(&cq->ring.ovf_count));
}

bool lfv_cq_cond_met(const struct lfv_cq *cq, size_t threshold,
		     bool count_signal)
{
	/* Relaxed: hints; the reads that follow take the real locks/acquires. */
	if (lfv_load_relaxed64(&cq->err_count))
		return true;
	/* Relaxed: as above; fi_cq_signal handshakes before waking. */
	if (count_signal && lfv_load_relaxed32(&cq->signaled))
		return true;
	return lfv_cq_queued(cq) >= threshold;
}

static bool lfv_cq_can_wake(const struct lfv_cq *cq)
{
	return cq->wait.type == FI_WAIT_FD ||
	       cq->wait.type == FI_WAIT_MUTEX_COND;
}

/* Producer side of the handshake in lfv_cq.h. Any armed waiter is woken;
 * one waiting for a threshold re-checks it and re-arms (fi_cq(3) makes the
 * condition an optimization), so waiters with different thresholds never
 * miss a wake-up meant for another. */
void lfv_cq_wake(struct lfv_cq *cq)
{
	if (!lfv_cq_can_wake(cq))
		return;
	/* Pairs with the handshake in lfv_cq_arm: our entry is published
	 * before we look at armed, the waiter's armed store before it looks
	 * at the queue; whichever handshake comes second sees the other. */
	lfv_handshake(&cq->handshake);
	/* Relaxed: ordered by the handshake above. */
	if (!lfv_load_relaxed32(&cq->armed))
		return;
	/* acq_rel exchange: one producer wins the right to signal. */
	if (lfv_exchange32(&cq->armed, 0))
		lfv_wait_signal(&cq->wait);
}

/* Waiter side: 0 if the caller may sleep (nothing ready, all armed),
 * -FI_EAGAIN if something is ready, another error if the hardware source
 * could not be armed: its next completion would raise no event, so the
 * caller must not sleep on the fd. */
int lfv_cq_arm(struct lfv_cq *cq, size_t threshold, bool count_signal)
{
	/* Relaxed: the handshake below orders it before the queue check. */
	lfv_store_relaxed32(&cq->armed, 1);
	/* Pairs with the handshake in lfv_cq_wake and lfv_cq_signal. */
	lfv_handshake(&cq->handshake);
	if (lfv_cq_cond_met(cq, threshold, count_signal))
		return -FI_EAGAIN;
	return cq->hw.arm ? cq->hw.arm(cq->hw.arg) : 0;
}

/* ---- writers ---------------------------------------------------------------- */

/* lfv_cq_format_slot's inverse, for forwarding formatted slots to the
 * owner of a peer CQ. */
static void lfv_cq_slot_to_comp(const struct lfv_cq *cq, const void *slot,
				struct lfv_cq_comp *c)
{
	struct fi_cq_tagged_entry e = { 0 };

	memcpy(&e, slot, cq->fmt_size);
	c->context = e.op_context;
	c->flags = e.flags;
	c->len = e.len;
	c->buf = e.buf;
	c->data = e.data;
	c->tag = e.tag;
	c->src = FI_ADDR_NOTAVAIL;
	if (cq->store_src)
		memcpy(&c->src, (const char *)slot + cq->fmt_size,
		       sizeof(c->src));
}

static int lfv_cq_forward(struct lfv_cq *cq, const struct lfv_cq_comp *c)
{
	ssize_t ret = cq->owner->owner_ops->write(cq->owner, c->context,
						  c->flags, c->len, c->buf,
						  c->data, c->tag, c->src);

	return ret < 0 ? (int)ret : 0;
}

static ssize_t lfv_cq_forward_slots(struct lfv_cq *cq, const void *slots,
				    size_t n)
{
	size_t stride = lfv_cq_slot_size(cq), i;
	struct lfv_cq_comp comp;
	int err;

	for (i = 0; i < n; i++) {
		lfv_cq_slot_to_comp(cq, (const char *)slots + i * stride, &comp);
		err = lfv_cq_forward(cq, &comp);
		if (err)
			return i ? (ssize_t)i : err;
	}
	return (ssize_t)n;
}

int lfv_cq_write(struct lfv_cq *cq, const struct lfv_cq_comp *comp)
{
	uint64_t slot[LFV_RING_MAX_ENTRY / sizeof(uint64_t)];
	int ret;

	if (cq->owner)
		return lfv_cq_forward(cq, comp);
	lfv_cq_format_slot(cq, slot, comp);
	ret = lfv_ring_enqueue(&cq->ring, slot);
	lfv_cq_wake(cq);
	return ret;
}

ssize_t lfv_cq_write_batch(struct lfv_cq *cq, const void *slots, size_t n)
{
	ssize_t ret;

	if (cq->owner)
		return lfv_cq_forward_slots(cq, slots, n);
	ret = lfv_ring_enqueue_batch(&cq->ring, slots, n);
	lfv_cq_wake(cq);
	return ret;
}
