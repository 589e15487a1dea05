/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ's read path: the read modes of the table in include/lfv_cq.h, the
 * read window and the spare. One file, so that the compiler sees the whole
 * of fi_cq_read (the provider's hottest path) at once.
 */
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_cq.h"

/* How many entries the FI_SOURCE read path splits per ring dequeue. */
#define LFV_CQ_SPLIT_BATCH 32

/* Nothing queued: the spare (a non-zero spare_len means entries wait
 * there, lfv_cq_take_spare resets it when drained) and the ring. */
bool lfv_cq_ring_empty(const struct lfv_cq *cq)
{
	return !cq->spare_len && lfv_ring_empty(&cq->ring);
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
ssize_t lfv_cq_read_common(struct lfv_cq *cq, void *buf, size_t count,
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

/* lfv_cq_read_hooked with an error waiting: the read still runs the hook
 * (under FI_PROGRESS_MANUAL every read makes progress), which queues what
 * it finds behind the error. A caller that reads errors in a loop, such as
 * a peek repeated until its message comes (each miss is an FI_ENOMSG
 * error), would otherwise never let the message arrive. */
static __attribute__((noinline)) ssize_t
lfv_cq_read_hooked_err(struct lfv_cq *cq)
{
	lfv_progress_run(&cq->progress);
	return -FI_EAVAIL;
}

/* A CQ whose hook polls the hardware (lfv_cq_set_progress_polling):
 * errors, then the spare (older than the ring's), then the rest. */
static inline ssize_t lfv_cq_read_hooked(struct lfv_cq *cq, void *buf,
					 size_t count, fi_addr_t *src)
{
	/* Relaxed: a hint; readerr takes err_lock. */
	if (lfv_load_relaxed64(&cq->err_count))
		return lfv_cq_read_hooked_err(cq);
	if (cq->spare_len)
		return (ssize_t)lfv_cq_take_spare(cq, buf, count, src);
	return lfv_cq_read_hooked_poll(cq, buf, count, src);
}

/* The read mode (the table in lfv_cq.h), recomputed whenever one of its
 * inputs changes: a progress hook set, a hardware source attached or
 * detached. The rest is fixed when the CQ opens. */
void lfv_cq_update_mode(struct lfv_cq *cq)
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

ssize_t lfv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
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

ssize_t lfv_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
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

/* ---- transport wiring: the inputs of the read mode ------------------------ */

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
	ret = cq->owner ? 0 : lfv_wait_add_fd(&cq->wait, hw->fd);
	if (ret)
		return ret;
	cq->hw = *hw;
	lfv_cq_update_mode(cq);
	return 0;
}

void lfv_cq_detach_hw(struct lfv_cq *cq)
{
	if (cq->hw.poll && !cq->owner)
		lfv_wait_del_fd(&cq->wait, cq->hw.fd);
	memset(&cq->hw, 0, sizeof(cq->hw));
	cq->hw.fd = -1;
	lfv_cq_update_mode(cq);
}
