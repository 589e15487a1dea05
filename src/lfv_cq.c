/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Completion queues: see include/lfv_cq.h for the design. Here: waking,
 * the writers, the waiting calls, open and close. The read path is in
 * lfv_cq_read.c, the error queue in lfv_cq_err.c, the peer roles in
 * lfv_cq_peer.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_cq_err.h"
#include "lfv_cq_peer.h"
#include "lfv_cq_read.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

static uint32_t lfv_cq_format_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return sizeof(struct fi_cq_entry);
	}
}

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

static bool lfv_cq_cond_met(const struct lfv_cq *cq, size_t threshold,
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
static void lfv_cq_wake(struct lfv_cq *cq)
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
static int lfv_cq_arm(struct lfv_cq *cq, size_t threshold, bool count_signal)
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

int lfv_cq_write_err(struct lfv_cq *cq, const struct fi_cq_err_entry *err)
{
	int ret;

	if (cq->owner)
		return lfv_cq_forward_err(cq, err);
	ret = lfv_cq_err_queue(cq, err);
	if (ret)
		return ret;
	lfv_cq_wake(cq);
	return 0;
}

/* ---- waiting ---------------------------------------------------------------- */

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

static ssize_t lfv_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
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

static ssize_t lfv_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return lfv_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int lfv_cq_signal(struct fid_cq *cq_fid)
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
/* ---- fid ops, open and close --------------------------------------------- */

static int lfv_cq_control(struct fid *fid, int command, void *arg)
{
	struct lfv_cq *cq = lfv_container_of(fid, struct lfv_cq, cq_fid.fid);

	if (command == FI_EXPORT_FID)
		return lfv_cq_export(cq, arg);
	if (cq->owner)
		return -FI_ENOSYS;
	return lfv_wait_control(&cq->wait, command, arg);
}

static int lfv_cq_close(struct fid *fid)
{
	struct lfv_cq *cq = lfv_container_of(fid, struct lfv_cq, cq_fid.fid);

	if (lfv_ref_read(&cq->ref) > 1)
		return -FI_EBUSY;
	lfv_wait_set_unbind(&cq->wait, fid);
	if (cq->hw.fini)
		cq->hw.fini(cq->hw.arg);
	if (!cq->owner) {
		lfv_ring_fini(&cq->ring);
		lfv_wait_fini(&cq->wait);
	}
	lfv_cq_err_fini(cq);
	lfv_ref_put(cq->parent_ref);
	free(cq);
	return 0;
}

static struct fi_ops lfv_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_cq_close,
	.bind = lfv_no_bind,
	.control = lfv_cq_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_cq lfv_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfv_cq_read,
	.readfrom = lfv_cq_readfrom,
	.readerr = lfv_cq_readerr,
	.sread = lfv_cq_sread,
	.sreadfrom = lfv_cq_sreadfrom,
	.signal = lfv_cq_signal,
	.strerror = lfv_cq_strerror,
};

void lfv_cq_set_progress(struct lfv_cq *cq, struct lfv_progress_hook hook)
{
	cq->progress = hook;
	cq->hook_polls_hw = false;
	lfv_cq_update_mode(cq);
}

void lfv_cq_set_progress_polling(struct lfv_cq *cq,
				 struct lfv_progress_hook hook)
{
	cq->progress = hook;
	cq->hook_polls_hw = true;
	lfv_cq_update_mode(cq);
}

int lfv_cq_attach_hw(struct lfv_cq *cq, const struct lfv_cq_hw *hw)
{
	int ret;

	if (!hw || !hw->poll || cq->hw.poll || cq->owner)
		return -FI_EINVAL;
	ret = lfv_wait_add_fd(&cq->wait, hw->fd);
	if (ret)
		return ret;
	cq->hw = *hw;
	lfv_cq_update_mode(cq);
	return 0;
}

void lfv_cq_detach_hw(struct lfv_cq *cq)
{
	if (cq->hw.poll)
		lfv_wait_del_fd(&cq->wait, cq->hw.fd);
	memset(&cq->hw, 0, sizeof(cq->hw));
	cq->hw.fd = -1;
	lfv_cq_update_mode(cq);
}

static int lfv_cq_check_attr(const struct fi_cq_attr *attr,
			     enum fi_wait_obj *wait_obj)
{
	long ncpu;
	int ret;

	if (attr->flags & ~(uint64_t)(FI_AFFINITY | FI_PEER))
		return -FI_EINVAL;
	if (attr->format > FI_CQ_FORMAT_TAGGED)
		return -FI_EINVAL;
	if (attr->size > LFV_RING_MAX_CAPACITY)
		return -FI_EINVAL;
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_EINVAL;
	if (attr->flags & FI_AFFINITY) {
		ncpu = sysconf(_SC_NPROCESSORS_CONF);
		if (attr->signaling_vector < 0 || attr->signaling_vector >= ncpu)
			return -FI_EINVAL;
	}
	if (attr->flags & FI_PEER) {
		*wait_obj = FI_WAIT_NONE; /* the owner does the waiting */
		return 0;
	}
	ret = lfv_wait_select(attr->wait_obj, attr->wait_set, wait_obj);
	if (ret)
		LFV_WARN(FI_LOG_CQ, "unsupported CQ wait object %d\n",
			 attr->wait_obj);
	return ret;
}
/* The ring, wait object and error queue of a CQ that holds entries. */
static int lfv_cq_init_queue(struct lfv_cq *cq, const struct fi_cq_attr *attr,
			     enum fi_wait_obj wait_obj)
{
	int ret;

	ret = lfv_ring_init(&cq->ring, attr->size ? attr->size :
				       LFV_CQ_DEFAULT_SIZE, lfv_cq_slot_size(cq));
	if (ret)
		return ret;
	ret = lfv_wait_init(&cq->wait, wait_obj);
	if (ret)
		lfv_ring_fini(&cq->ring);
	return ret;
}

int lfv_cq_open(const struct fi_cq_attr *attr, void *context,
		const struct lfv_cq_params *params, struct fid_cq **cq_fid)
{
	enum fi_wait_obj wait_obj;
	struct lfv_cq *cq;
	int ret;

	if (!attr || !params || !cq_fid)
		return -FI_EINVAL;
	ret = lfv_cq_check_attr(attr, &wait_obj);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	if (attr->flags & FI_PEER) {
		ret = lfv_cq_peer_owner(context, &cq->owner);
		if (ret)
			goto free_cq;
	}
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->fmt_size = lfv_cq_format_size(cq->format);
	cq->store_src = params->store_src;
	cq->serial_reads = params->serial_reads;
	cq->cond_threshold = attr->wait_cond == FI_CQ_COND_THRESHOLD;
	cq->signaling_vector = (attr->flags & FI_AFFINITY) ?
			       attr->signaling_vector : -1;
	cq->api_version = params->api_version;
	cq->prov_strerror = params->prov_strerror;
	cq->parent_ref = params->parent_ref;
	cq->hw.fd = -1;
	ret = lfv_cq_err_init(cq);
	if (ret)
		goto free_cq;
	if (!cq->owner) {
		ret = lfv_cq_init_queue(cq, attr, wait_obj);
		if (ret)
			goto fini_errors;
	}
	lfv_cq_update_mode(cq);
	atomic_init(&cq->ref, 1);
	lfv_fid_init(&cq->cq_fid.fid, FI_CLASS_CQ, context, &lfv_cq_fi_ops);
	cq->cq_fid.ops = cq->owner ? &lfv_cq_peer_ops : &lfv_cq_ops;
	lfv_cq_init_export(cq);
	/* Last: a wait set's fi_wait may look at the CQ from now on. */
	if (wait_obj == FI_WAIT_FD && attr->wait_obj == FI_WAIT_SET) {
		ret = lfv_wait_set_bind(attr->wait_set, &cq->cq_fid.fid,
					&cq->wait);
		if (ret)
			goto fini_queue;
	}
	lfv_ref_get(cq->parent_ref);
	*cq_fid = &cq->cq_fid;
	return 0;

fini_queue:
	lfv_wait_fini(&cq->wait);
	lfv_ring_fini(&cq->ring);
fini_errors:
	lfv_cq_err_fini(cq);
free_cq:
	free(cq);
	return ret;
}
