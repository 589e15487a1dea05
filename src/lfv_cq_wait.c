/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Waiting on a CQ: fi_cq_sread/sreadfrom and fi_cq_signal, and its part in
 * fi_trywait and fi_poll. The handshake with the writers is in lfv_cq.c
 * (lfv_cq_arm, lfv_cq_wake); see include/lfv_cq.h.
 */
#include <rdma/fi_errno.h>

#include "lfv_cq.h"

struct lfv_cq_sread_arg {
	struct lfv_cq *cq;
	size_t threshold;
};

/* Runs inside lfv_wait_until (under the wait mutex for MUTEX_COND): true
 * when sread should stop waiting and read. */
static bool lfv_cq_sread_ready(void *arg)
{
	struct lfv_cq_sread_arg *a = arg;
	struct lfv_cq *cq = a->cq;

	/* Disarm before progress: completions our own progress writes must
	 * not try to signal (and take the wait mutex we may hold). */
	lfv_store_relaxed32(&cq->armed, 0);
	if (cq->hw.ack)
		cq->hw.ack(cq->hw.arg);
	lfv_progress_run(&cq->progress);
	if (lfv_cq_cond_met(cq, a->threshold, true))
		return true;
	/* Ready, or the source could not be armed: read (and poll) again
	 * rather than sleep through its completions. */
	return lfv_cq_arm(cq, a->threshold, true) != 0;
}

static size_t lfv_cq_threshold(const struct lfv_cq *cq, const void *cond,
			       size_t count)
{
	size_t threshold = 1;

	/* FI_CQ_COND_THRESHOLD: sread's cond is a size_t count of entries;
	 * never wait for more than the caller can take. */
	if (cq->cond_threshold && cond)
		threshold = (size_t)(uintptr_t)cond;
	if (threshold > count)
		threshold = count;
	return threshold ? threshold : 1;
}

ssize_t lfv_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			 fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);
	struct lfv_cq_sread_arg arg = { .cq = cq };
	int64_t deadline, left = 0;
	int slice;
	ssize_t ret;

	if (!buf || !count)
		return -FI_EINVAL;
	/* fi_cq(3): invalid with FI_WAIT_NONE (and FI_WAIT_SET). */
	if (cq->wait.type == FI_WAIT_NONE)
		return -FI_EINVAL;
	arg.threshold = lfv_cq_threshold(cq, cond, count);
	deadline = timeout < 0 ? -1 : lfv_now_ns() + (int64_t)timeout * 1000000;
	for (;;) {
		ret = lfv_cq_read_common(cq, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			return ret;
		/* acq_rel exchange: consume a pending fi_cq_signal. */
		if (lfv_exchange32(&cq->signaled, 0))
			return -FI_EAGAIN;
		if (deadline >= 0) {
			left = deadline - lfv_now_ns();
			if (left <= 0)
				return -FI_EAGAIN;
			left = (left + 999999) / 1000000; /* ms, rounded up */
		}
		/* The transport may need progress before anything here can
		 * wake us (lfv_progress_hook.wait_ms): sleep in slices. */
		slice = lfv_progress_wait_ms(&cq->progress);
		if (slice >= 0 && (deadline < 0 || slice < left))
			left = slice;
		else if (deadline < 0)
			left = -1;
		/* The queue may count an entry whose producer has reserved
		 * but not yet published it: the read above then finds
		 * nothing, and we wait again rather than return early. */
		lfv_wait_until(&cq->wait, (int)left, lfv_cq_sread_ready, &arg);
	}
}

ssize_t lfv_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
		     const void *cond, int timeout)
{
	return lfv_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

int lfv_cq_signal(struct fid_cq *cq_fid)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);

	if (cq->wait.type == FI_WAIT_NONE)
		return -FI_EINVAL;
	/* Relaxed store, then the handshake with lfv_cq_arm: a waiter
	 * either sees the flag or gets the signal below. */
	lfv_store_relaxed32(&cq->signaled, 1);
	lfv_handshake(&cq->handshake);
	lfv_wait_signal(&cq->wait);
	return 0;
}

int lfv_cq_trywait(struct lfv_cq *cq)
{
	int ret, slice;

	if (cq->owner || cq->wait.type == FI_WAIT_NONE)
		return -FI_EINVAL;
	/* Drain first: a signal sent after this leaves the fd readable. */
	lfv_wait_reset(&cq->wait);
	if (cq->hw.ack)
		cq->hw.ack(cq->hw.arg);
	/* Disarmed, our own progress does not signal what we see below.
	 * Relaxed: lfv_cq_arm stores 1 behind its handshake before the
	 * check that matters. */
	lfv_store_relaxed32(&cq->armed, 0);
	lfv_progress_run(&cq->progress);
	ret = lfv_cq_arm(cq, 1, false);
	if (ret)
		return ret;
	/*
	 * A transport that needs progress now and then (lfv_progress_hook.
	 * wait_ms: RDM's handshake REPs and rendezvous FINs arrive on the
	 * endpoint's other verbs CQ, whose events this fd does not carry;
	 * timers resend) would leave an application asleep on the fd for
	 * good. Make the fd readable after that slice, as fi_cq_sread
	 * sleeps in slices: the application reads, which drives progress.
	 */
	slice = lfv_progress_wait_ms(&cq->progress);
	return slice >= 0 ? lfv_wait_arm_timer(&cq->wait, slice) : 0;
}

bool lfv_cq_has_events(struct lfv_cq *cq)
{
	if (cq->owner)
		return false;	/* its completions are in the owner's CQ */
	lfv_progress_run(&cq->progress);
	/* Relaxed: a hint, as for fi_cq_read; a false positive is allowed
	 * (fi_poll(3)), and a completion written after this is seen by the
	 * next call. */
	return lfv_load_relaxed64(&cq->err_count) ||
	       cq->spare_pos < cq->spare_len || !lfv_cq_ring_empty(cq);
}
