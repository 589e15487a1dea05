/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Completion queues: see include/lfv_cq.h for the design. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_cq.h"
#include "lfv_err_data.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

/* How many entries the FI_SOURCE read path splits per ring dequeue. */
#define LFV_CQ_SPLIT_BATCH 32

struct lfv_cq_err {
	struct lfv_list node;
	struct fi_cq_err_entry err;	/* err_data not set: data follows */
	size_t len;
	uint8_t data[];
};

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

/* Nothing queued: the spare (a non-zero spare_len means entries wait
 * there, lfv_cq_take_spare resets it when drained) and the ring. */
bool lfv_cq_ring_empty(const struct lfv_cq *cq)
{
	return !cq->spare_len && lfv_ring_empty(&cq->ring);
}

void lfv_cq_format_slot(const struct lfv_cq *cq, void *slot,
			const struct lfv_cq_comp *c)
{
	lfv_cq_format_entry(cq, slot, c);
	if (cq->store_src)
		memcpy((char *)slot + cq->fmt_size, &c->src, sizeof(c->src));
}

/* The inverse, for forwarding formatted slots to an owner CQ. */
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

static int lfv_cq_forward(struct lfv_cq *cq, const struct lfv_cq_comp *c)
{
	ssize_t ret = cq->owner->owner_ops->write(cq->owner, c->context,
						  c->flags, c->len, c->buf,
						  c->data, c->tag, c->src);

	return ret < 0 ? (int)ret : 0;
}

/*
 * The read window: the buffer of a reader whose own progress is running
 * (lfv_cq_progress_into opens it around the CQ's progress hook, on the
 * reading thread). Handlers that the hook runs write there through
 * lfv_cq_write_to_reader, never through lfv_cq_write: the entry skips the
 * ring when nothing older waits in it and the window has room.
 */
struct lfv_cq_window {
	struct lfv_cq *cq;
	char *buf;
	fi_addr_t *src;			/* NULL: not wanted */
	size_t room, n;
};

/* initial-exec: one pointer of the static TLS that the loader keeps for
 * libraries opened later, and no __tls_get_addr call per completion. */
static __thread struct lfv_cq_window *lfv_cq_window_tls
	__attribute__((tls_model("initial-exec")));

/* Past the reader's buffer: into the spare, if the CQ keeps one and it has
 * room (the caller saw the ring empty). */
static bool lfv_cq_keep_spare(struct lfv_cq *cq, const struct lfv_cq_comp *comp)
{
	if (cq->read_mode != LFV_CQ_READ_SPARE ||
	    cq->spare_len == LFV_CQ_SPARE)
		return false;
	cq->spare[cq->spare_len++] = *comp;
	return true;
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

int lfv_cq_write_to_reader(struct lfv_cq *cq, const struct lfv_cq_comp *comp)
{
	struct lfv_cq_window *w = lfv_cq_window_tls;

	/* A window opens only with the spare empty, and the spare fills only
	 * once the window is full: a window with room has nothing older in
	 * the spare. */
	if (!w || w->cq != cq || !lfv_ring_empty(&cq->ring))
		return lfv_cq_write(cq, comp);
	if (w->n == w->room)
		return lfv_cq_keep_spare(cq, comp) ? 0 : lfv_cq_write(cq, comp);
	lfv_cq_format_entry(cq, w->buf + w->n * cq->fmt_size, comp);
	if (w->src)
		w->src[w->n] = cq->store_src ? comp->src : FI_ADDR_NOTAVAIL;
	w->n++;
	return 0;
}

ssize_t lfv_cq_write_batch(struct lfv_cq *cq, const void *slots, size_t n)
{
	size_t stride = lfv_cq_slot_size(cq), i;
	struct lfv_cq_comp comp;
	ssize_t ret;
	int err;

	if (cq->owner) {
		for (i = 0; i < n; i++) {
			lfv_cq_slot_to_comp(cq, (const char *)slots + i * stride,
					    &comp);
			err = lfv_cq_forward(cq, &comp);
			if (err)
				return i ? (ssize_t)i : err;
		}
		return (ssize_t)n;
	}
	ret = lfv_ring_enqueue_batch(&cq->ring, slots, n);
	lfv_cq_wake(cq);
	return ret;
}

int lfv_cq_write_err(struct lfv_cq *cq, const struct fi_cq_err_entry *err)
{
	size_t len = err->err_data ? err->err_data_size : 0;
	struct lfv_cq_err *node;
	ssize_t ret;

	if (cq->owner) {
		ret = cq->owner->owner_ops->writeerr(cq->owner, err);
		return ret < 0 ? (int)ret : 0;
	}
	node = malloc(sizeof(*node) + len);
	if (!node)
		return -FI_ENOMEM;
	node->err = *err;
	node->err.err_data = NULL;
	node->err.err_data_size = 0;
	node->len = len;
	if (len)
		memcpy(node->data, err->err_data, len);
	lfv_mutex_lock(&cq->err_lock);
	lfv_list_insert_tail(&cq->errors, &node->node);
	/* Relaxed: readers take err_lock before using the list; the count
	 * only tells them to. */
	lfv_fetch_add64(&cq->err_count, 1);
	lfv_mutex_unlock(&cq->err_lock);
	lfv_cq_wake(cq);
	return 0;
}

/* ---- readers ---------------------------------------------------------------- */

/* Source addresses stored: split each slot into entry and fi_addr_t. */
static size_t lfv_cq_take_split(struct lfv_cq *cq, void *buf, size_t count,
				fi_addr_t *src)
{
	uint64_t tmp[LFV_CQ_SPLIT_BATCH * LFV_RING_MAX_ENTRY / sizeof(uint64_t)];
	size_t stride = lfv_cq_slot_size(cq), total = 0, want, got, i;
	const char *slot;

	while (total < count) {
		want = count - total < LFV_CQ_SPLIT_BATCH ?
		       count - total : LFV_CQ_SPLIT_BATCH;
		got = lfv_ring_dequeue(&cq->ring, tmp, want);
		for (i = 0; i < got; i++) {
			slot = (const char *)tmp + i * stride;
			memcpy((char *)buf + (total + i) * cq->fmt_size, slot,
			       cq->fmt_size);
			if (src)
				memcpy(&src[total + i], slot + cq->fmt_size,
				       sizeof(*src));
		}
		total += got;
		if (got < want)
			break;
	}
	return total;
}

/* The spare's entries, oldest first, up to count; only those (the ring's
 * are newer). */
static __attribute__((noinline)) size_t
lfv_cq_take_spare(struct lfv_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	const struct lfv_cq_comp *c = &cq->spare[cq->spare_pos];
	size_t n = cq->spare_len - cq->spare_pos, i;

	if (n > count)
		n = count;
	for (i = 0; i < n; i++)
		lfv_cq_format_entry(cq, (char *)buf + i * cq->fmt_size, &c[i]);
	for (i = 0; src && i < n; i++)
		src[i] = cq->store_src ? c[i].src : FI_ADDR_NOTAVAIL;
	cq->spare_pos += (uint32_t)n;
	if (cq->spare_pos == cq->spare_len)
		cq->spare_pos = cq->spare_len = 0;
	return n;
}

static size_t lfv_cq_take(struct lfv_cq *cq, void *buf, size_t count,
			  fi_addr_t *src)
{
	size_t n, i;

	if (cq->spare_len)
		return lfv_cq_take_spare(cq, buf, count, src);
	if (cq->store_src)
		return lfv_cq_take_split(cq, buf, count, src);
	n = lfv_ring_dequeue(&cq->ring, buf, count);
	for (i = 0; src && i < n; i++)
		src[i] = FI_ADDR_NOTAVAIL;
	return n;
}

/* Runs the progress hook with buf as the read window, where what its
 * handlers write through lfv_cq_write_to_reader goes (the caller saw the
 * ring empty: nothing older waits); how many they put there. */
static size_t lfv_cq_progress_into(struct lfv_cq *cq, void *buf,
				   fi_addr_t *src, size_t count)
{
	struct lfv_cq_window w = { .cq = cq, .buf = buf, .src = src,
				   .room = count };

	lfv_cq_window_tls = &w;
	cq->progress.fn(cq->progress.arg);
	lfv_cq_window_tls = NULL;
	return w.n;
}

/* The full read: progress, errors, ring, then the hardware source. */
static ssize_t lfv_cq_read_common(struct lfv_cq *cq, void *buf, size_t count,
				  fi_addr_t *src)
{
	ssize_t polled;
	size_t n;

	/* Relaxed: hints; the writers re-check the ring. */
	if (count && cq->progress.fn && !cq->owner &&
	    !lfv_load_relaxed64(&cq->err_count) && lfv_cq_ring_empty(cq)) {
		n = lfv_cq_progress_into(cq, buf, src, count);
		if (n) /* older than anything queued since */
			return (ssize_t)n;
	} else {
		lfv_progress_run(&cq->progress);
	}
	/* Relaxed: a hint; readerr takes err_lock. */
	if (lfv_load_relaxed64(&cq->err_count))
		return -FI_EAVAIL;
	if (!count)
		return 0;
	n = lfv_cq_take(cq, buf, count, src);
	if (n < count && cq->hw.poll && lfv_cq_ring_empty(cq)) {
		/* Nothing older is queued: let the hardware source translate
		 * straight into the caller's buffer. */
		polled = cq->hw.poll(cq->hw.arg,
				     (char *)buf + n * cq->fmt_size,
				     src ? src + n : NULL, count - n);
		if (polled > 0)
			n += (size_t)polled;
		/* A source that handed its completions to a transport (RDM)
		 * had them written to the ring instead. */
		if (n < count)
			n += lfv_cq_take(cq, (char *)buf + n * cq->fmt_size,
					 count - n, src ? src + n : NULL);
	}
	if (n)
		return (ssize_t)n;
	/* Relaxed: as above; a poll may have queued an error. */
	return lfv_load_relaxed64(&cq->err_count) ? -FI_EAVAIL : -FI_EAGAIN;
}

/* lfv_cq_read_hooked past the spare: what waits in the ring first; else
 * the hook, writing into buf; then what it could not put there. Out of
 * line: the spare's path saves no registers for it. */
static __attribute__((noinline)) ssize_t
lfv_cq_read_hooked_poll(struct lfv_cq *cq, void *buf, size_t count,
			fi_addr_t *src)
{
	size_t n;

	if (!lfv_ring_readable(&cq->ring)) {
		n = lfv_cq_progress_into(cq, buf, src, count);
		if (n)
			return (ssize_t)n;
		if (!lfv_ring_readable(&cq->ring))
			/* Relaxed: a hint; a poll may have queued an error. */
			return lfv_load_relaxed64(&cq->err_count) ?
			       -FI_EAVAIL : -FI_EAGAIN;
	}
	n = lfv_cq_take(cq, buf, count, src);
	return n ? (ssize_t)n : -FI_EAGAIN;
}

/* A CQ whose hook polls the hardware (lfv_cq_set_progress_polling):
 * errors, then the spare (older than the ring's), then the rest. */
static inline ssize_t lfv_cq_read_hooked(struct lfv_cq *cq, void *buf,
					 size_t count, fi_addr_t *src)
{
	/* Relaxed: a hint; readerr takes err_lock. */
	if (lfv_load_relaxed64(&cq->err_count))
		return -FI_EAVAIL;
	if (cq->spare_len)
		return (ssize_t)lfv_cq_take_spare(cq, buf, count, src);
	return lfv_cq_read_hooked_poll(cq, buf, count, src);
}

/* The read mode (the table in lfv_cq.h), recomputed whenever one of its
 * inputs changes: a progress hook set, a hardware source attached or
 * detached. The rest is fixed when the CQ opens. */
static void lfv_cq_update_mode(struct lfv_cq *cq)
{
	if (cq->progress.fn && cq->hook_polls_hw && !cq->owner)
		cq->read_mode = cq->serial_reads &&
				cq->wait.type == FI_WAIT_NONE ?
				LFV_CQ_READ_SPARE : LFV_CQ_READ_HOOKED;
	else if (cq->progress.fn || cq->store_src)
		cq->read_mode = LFV_CQ_READ_COMMON;
	else
		cq->read_mode = cq->hw.poll ? LFV_CQ_READ_DIRECT :
					      LFV_CQ_READ_PLAIN;
}

/* LFV_CQ_READ_PLAIN with something in the ring; out of line so that the
 * empty check in lfv_cq_read needs no stack frame. */
static __attribute__((noinline)) ssize_t
lfv_cq_read_plain(struct lfv_cq *cq, void *buf, size_t count)
{
	size_t n;

	/* Relaxed: a hint; readerr takes err_lock. */
	if (lfv_load_relaxed64(&cq->err_count))
		return -FI_EAVAIL;
	n = lfv_ring_dequeue(&cq->ring, buf, count);
	return n ? (ssize_t)n : lfv_cq_read_common(cq, buf, count, NULL);
}

/* LFV_CQ_READ_DIRECT: the ring; when empty, the hardware source
 * translates straight into buf. Relaxed: hints, as above; hw.poll
 * re-checks the ring locked. */
static inline ssize_t lfv_cq_read_direct(struct lfv_cq *cq, void *buf,
					 size_t count)
{
	ssize_t n;

	if (!lfv_load_relaxed64(&cq->err_count) &&
	    !lfv_ring_readable(&cq->ring)) {
		n = cq->hw.poll(cq->hw.arg, buf, NULL, count);
		if (n > 0)
			return n;
		if (!lfv_ring_readable(&cq->ring))
			/* Relaxed: a poll may have queued an error. */
			return lfv_load_relaxed64(&cq->err_count) ?
			       -FI_EAVAIL : -FI_EAGAIN;
	}
	return lfv_cq_read_common(cq, buf, count, NULL);
}

static ssize_t lfv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);

	/* First: an RDM endpoint's CQ reads here on every poll. */
	if (cq->read_mode >= LFV_CQ_READ_HOOKED && buf && count)
		return lfv_cq_read_hooked(cq, buf, count, NULL);
	if (!buf || !count)
		return count ? -FI_EINVAL :
			       lfv_cq_read_common(cq, buf, count, NULL);
	/* The polling loop's common case: a plain CQ with nothing in it. */
	if (__builtin_expect(cq->read_mode == LFV_CQ_READ_PLAIN &&
			     !lfv_ring_readable(&cq->ring), 1)) {
		/* Relaxed: a hint; readerr takes err_lock. */
		return lfv_load_relaxed64(&cq->err_count) ? -FI_EAVAIL :
							    -FI_EAGAIN;
	}
	if (cq->read_mode == LFV_CQ_READ_PLAIN)
		return lfv_cq_read_plain(cq, buf, count);
	if (cq->read_mode == LFV_CQ_READ_DIRECT)
		return lfv_cq_read_direct(cq, buf, count);
	return lfv_cq_read_common(cq, buf, count, NULL);
}

static ssize_t lfv_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	if (count && (!buf || !src_addr))
		return -FI_EINVAL;
	if (lfv_cq_from_fid(cq_fid)->read_mode >= LFV_CQ_READ_HOOKED && count)
		return lfv_cq_read_hooked(lfv_cq_from_fid(cq_fid), buf, count,
					  src_addr);
	return lfv_cq_read_common(lfv_cq_from_fid(cq_fid), buf, count,
				  src_addr);
}

/* fi_cq_err_entry grew err_data_size in 1.5: older callers have less room. */
static size_t lfv_cq_err_entry_size(uint32_t api_version)
{
	return api_version < FI_VERSION(1, 5) ?
	       offsetof(struct fi_cq_err_entry, err_data_size) :
	       sizeof(struct fi_cq_err_entry);
}

static ssize_t lfv_cq_readerr(struct fid_cq *cq_fid,
			      struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);
	struct fi_cq_err_entry out;
	struct lfv_list *item;
	struct lfv_cq_err *node;
	void *user_data = NULL;
	size_t user_size = 0;
	ssize_t ret;

	(void)flags;
	if (!buf)
		return -FI_EINVAL;
	if (cq->api_version >= FI_VERSION(1, 5)) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
	}
	lfv_mutex_lock(&cq->err_lock);
	item = lfv_list_first(&cq->errors);
	if (!item) {
		ret = -FI_EAGAIN;
		goto unlock;
	}
	node = lfv_container_of(item, struct lfv_cq_err, node);
	ret = lfv_err_data_deliver(&cq->err_data_held, cq->api_version,
				   node->data, node->len, &user_data,
				   &user_size);
	if (ret)
		goto unlock;
	out = node->err;
	out.err_data = user_data;
	out.err_data_size = user_size;
	memcpy(buf, &out, lfv_cq_err_entry_size(cq->api_version));
	lfv_list_remove(item);
	/* Relaxed: under err_lock, pairs with the increment there. */
	lfv_fetch_sub64(&cq->err_count, 1);
	free(node);
	ret = 1;
unlock:
	lfv_mutex_unlock(&cq->err_lock);
	return ret;
}

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

static const char *lfv_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);
	const char *str;

	(void)err_data;
	str = cq->prov_strerror ? cq->prov_strerror(prov_errno) :
				  fi_strerror(prov_errno < 0 ? -prov_errno :
							       prov_errno);
	return lfv_strerror_out(str, buf, len);
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

/* ---- the peer role: forwarding to an owner CQ -------------------------------- */

static ssize_t lfv_cq_peer_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	/* fi_peer(3): the owner calls fi_cq_read(peer, NULL, 0) to drive the
	 * peer's progress; the entries themselves are in the owner's CQ. */
	if (buf || count)
		return -FI_ENOSYS;
	lfv_progress_run(&lfv_cq_from_fid(cq_fid)->progress);
	return 0;
}

static ssize_t lfv_cq_peer_readfrom(struct fid_cq *cq_fid, void *buf,
				    size_t count, fi_addr_t *src_addr)
{
	(void)cq_fid; (void)buf; (void)count; (void)src_addr;
	return -FI_ENOSYS;
}

static ssize_t lfv_cq_peer_readerr(struct fid_cq *cq_fid,
				   struct fi_cq_err_entry *buf, uint64_t flags)
{
	(void)cq_fid; (void)buf; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_cq_peer_sread(struct fid_cq *cq_fid, void *buf, size_t count,
				 const void *cond, int timeout)
{
	(void)cq_fid; (void)buf; (void)count; (void)cond; (void)timeout;
	return -FI_ENOSYS;
}

static ssize_t lfv_cq_peer_sreadfrom(struct fid_cq *cq_fid, void *buf,
				     size_t count, fi_addr_t *src_addr,
				     const void *cond, int timeout)
{
	(void)cq_fid; (void)buf; (void)count; (void)src_addr; (void)cond;
	(void)timeout;
	return -FI_ENOSYS;
}

static int lfv_cq_peer_signal(struct fid_cq *cq_fid)
{
	(void)cq_fid;
	return -FI_ENOSYS;
}

/* ---- the owner role: the exported fid_peer_cq ------------------------------- */

static struct lfv_cq *lfv_cq_from_peer(struct fid_peer_cq *peer_cq)
{
	return lfv_container_of(peer_cq, struct lfv_cq, peer_cq);
}

static ssize_t lfv_cq_owner_write(struct fid_peer_cq *peer_cq, void *context,
				  uint64_t flags, size_t len, void *buf,
				  uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct lfv_cq_comp comp = {
		.context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .src = src,
	};

	return lfv_cq_write(lfv_cq_from_peer(peer_cq), &comp);
}

static ssize_t lfv_cq_owner_writeerr(struct fid_peer_cq *peer_cq,
				     const struct fi_cq_err_entry *err)
{
	if (!err)
		return -FI_EINVAL;
	return lfv_cq_write_err(lfv_cq_from_peer(peer_cq), err);
}

static struct fi_ops_cq_owner lfv_cq_owner_ops = {
	.size = sizeof(struct fi_ops_cq_owner),
	.write = lfv_cq_owner_write,
	.writeerr = lfv_cq_owner_writeerr,
};

/* The exported fid belongs to the CQ: closing it is a no-op. */
static int lfv_peer_cq_close(struct fid *fid)
{
	(void)fid;
	return 0;
}

static struct fi_ops lfv_peer_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_peer_cq_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static int lfv_cq_export(struct lfv_cq *cq, struct fi_fid_export *exp)
{
	if (!exp || !exp->fid || !lfv_peer_allowed())
		return -FI_EINVAL;
	if (exp->flags)
		return -FI_EBADFLAGS;
	if (cq->owner)
		return -FI_EINVAL; /* a peer CQ holds no entries to share */
	cq->peer_cq.fid.context = exp->context;
	*exp->fid = &cq->peer_cq.fid;
	return 0;
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
	struct lfv_list *item;

	if (lfv_ref_read(&cq->ref) > 1)
		return -FI_EBUSY;
	lfv_wait_set_unbind(&cq->wait, fid);
	if (cq->hw.fini)
		cq->hw.fini(cq->hw.arg);
	if (!cq->owner) {
		while ((item = lfv_list_pop_head(&cq->errors)))
			free(lfv_container_of(item, struct lfv_cq_err, node));
		free(cq->err_data_held);
		lfv_ring_fini(&cq->ring);
		lfv_wait_fini(&cq->wait);
	}
	lfv_mutex_destroy(&cq->err_lock);
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

static struct fi_ops_cq lfv_cq_peer_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfv_cq_peer_read,
	.readfrom = lfv_cq_peer_readfrom,
	.readerr = lfv_cq_peer_readerr,
	.sread = lfv_cq_peer_sread,
	.sreadfrom = lfv_cq_peer_sreadfrom,
	.signal = lfv_cq_peer_signal,
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

	if (!hw || !hw->poll || cq->hw.poll)
		return -FI_EINVAL;
	/* A peer CQ's progress polls the source too; its owner does the
	 * waiting, so there is no fd to wait on here. */
	if (hw->fd >= 0 && !cq->owner) {
		ret = lfv_wait_add_fd(&cq->wait, hw->fd);
		if (ret)
			return ret;
	}
	cq->hw = *hw;
	lfv_cq_update_mode(cq);
	return 0;
}

void lfv_cq_detach_hw(struct lfv_cq *cq)
{
	if (cq->hw.poll && cq->hw.fd >= 0 && !cq->owner)
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

	if ((attr->flags & FI_PEER) && !lfv_peer_allowed())
		return -FI_EINVAL;
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

static int lfv_cq_peer_owner(void *context, struct fid_peer_cq **owner)
{
	struct fi_peer_cq_context *peer = context;

	if (!peer || peer->size < sizeof(*peer) || !peer->cq ||
	    !peer->cq->owner_ops || !peer->cq->owner_ops->write ||
	    !peer->cq->owner_ops->writeerr)
		return -FI_EINVAL;
	*owner = peer->cq;
	return 0;
}

static void lfv_cq_init_fids(struct lfv_cq *cq, void *context)
{
	lfv_fid_init(&cq->cq_fid.fid, FI_CLASS_CQ, context, &lfv_cq_fi_ops);
	cq->cq_fid.ops = cq->owner ? &lfv_cq_peer_ops : &lfv_cq_ops;
	cq->peer_cq.fid.fclass = FI_CLASS_PEER_CQ;
	cq->peer_cq.fid.ops = &lfv_peer_cq_fi_ops;
	cq->peer_cq.owner_ops = &lfv_cq_owner_ops;
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
	ret = lfv_mutex_init(&cq->err_lock);
	if (ret)
		goto free_cq;
	if (!cq->owner) {
		ret = lfv_cq_init_queue(cq, attr, wait_obj);
		if (ret)
			goto destroy_lock;
	}
	lfv_list_init(&cq->errors);
	lfv_cq_update_mode(cq);
	atomic_init(&cq->ref, 1);
	lfv_cq_init_fids(cq, context);
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
destroy_lock:
	lfv_mutex_destroy(&cq->err_lock);
free_cq:
	free(cq);
	return ret;
}
