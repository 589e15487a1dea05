/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lfv_ring: the bounded multi-producer / multi-consumer ring under the
 * completion queue, backed by an unbounded overflow list so that a
 * completion is never dropped and a producer never waits for a consumer.
 *
 * Layout. capacity (a power of two) slots of 16, 32 or 64 bytes: an 8-byte
 * sequence word followed by the entry (8..56 bytes, a multiple of 8), so a
 * slot never straddles a cache line and the largest one fills exactly one.
 * head (next position a consumer claims) and tail (next position a producer
 * reserves) are free-running 64-bit counters, masked to find the slot; at
 * 2^64 positions they cannot wrap into ABA within the life of a process.
 *
 * Slot protocol. The sequence word of the slot that holds position p reads
 *   p          free: the producer that reserves p may write it;
 *   p + 1      published: the consumer that claims p may read it;
 *   p + cap    released: free again, for position p + cap.
 * Each value is stored once, so seeing it tells the whole state. A producer
 * scans slots from tail while they read "free for my position", then claims
 * the whole run with one CAS on tail; a consumer scans from head while slots
 * read "published", then claims the run with one CAS on head. A successful
 * CAS from pos proves no one else claimed positions >= pos, so the slots
 * still hold what the scan saw. Nothing on this path locks, allocates or
 * waits: a slot that is not ready ends the scan ("full" or "empty").
 *
 * Overflow. When the ring is full the rest of a write goes, in order, to a
 * mutex-protected FIFO of malloc'd nodes (-FI_ENOMEM if malloc fails, the
 * only error). ovf_count is the number of entries in that list.
 *
 * Why per-producer order holds (entries one thread writes are read in that
 * order by any one reader). Take entries a then b written by thread T.
 *  - Both in the ring: T reserved a's position before b's (tail only grows),
 *    and each reader claims positions in increasing order (head only grows).
 *  - Both in overflow: one FIFO, popped from the front under its mutex.
 *  - a in overflow, b in the ring: impossible while a is still queued. T
 *    stored ovf_count += 1 for a, and T's later read of ovf_count before
 *    writing b sees that store or a later one (coherence); the count only
 *    returns to 0 once every listed entry, a included, has been popped. So
 *    producers write to overflow while it is non-empty.
 *  - a in the ring at position p, b in overflow: the dangerous case. A
 *    reader can find the ring "empty" while a is still in it, because a
 *    slot before p, reserved by another producer and not yet published,
 *    stops its scan. So overflow is popped only under its mutex and only
 *    when head >= tail, with tail read after taking the mutex. T reserved p
 *    (CAS on tail) before it locked the mutex to append b; a reader that
 *    sees b in the list locked the mutex after T unlocked it, so T's CAS
 *    happens before the reader's load of tail, which returns p + 1 or more
 *    (relaxed is enough: the mutex orders them); head >= p + 1 then means
 *    position p, i.e. a, was already claimed by some reader. A single reader
 *    so reads a first; several readers have no order among themselves, as
 *    with any shared completion queue.
 * Overflow therefore drains only after the ring empties, and while it is
 * non-empty new writes queue behind it, so the ring is bypassed only until
 * the readers catch up.
 *
 * Not thread-safe: init and fini (the caller owns the ring then).
 */
#ifndef LFV_RING_H
#define LFV_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <rdma/fi_errno.h>

#include "lfv_atomic.h"
#include "lfv_list.h"
#include "lfv_lock.h"

#define LFV_RING_DEFAULT_CAPACITY 1024
#define LFV_RING_MIN_CAPACITY 2		/* p + 1 and p + cap must differ */
#define LFV_RING_MAX_CAPACITY (1u << 30)
#define LFV_RING_MAX_ENTRY 56		/* 8-byte sequence + entry = 64 */

struct lfv_ring_slot {
	lfv_atomic64_t seq;
	unsigned char entry[];
};

struct lfv_ring {
	/* Read-mostly: written at init, and ovf_count only on the slow path,
	 * so this line stays shared in every core's cache. */
	unsigned char *slots;
	uint64_t mask;			/* capacity - 1 */
	uint32_t shift;			/* log2 of the slot stride */
	uint32_t entry_size;
	lfv_atomic64_t ovf_count;	/* entries in ovf_list */

	/* Producers' line: the next position to reserve. */
	lfv_atomic64_t tail lfv_cacheline_aligned;

	/* Consumers' line: the next position to claim. */
	lfv_atomic64_t head lfv_cacheline_aligned;

	/* Slow path only. */
	struct lfv_mutex ovf_lock lfv_cacheline_aligned;
	struct lfv_list ovf_list;	/* struct lfv_ring_ovf_node, FIFO */
	lfv_atomic64_t ovf_total;	/* entries that ever took overflow */
};

_Static_assert(offsetof(struct lfv_ring, head) -
	       offsetof(struct lfv_ring, tail) >= LFV_CACHELINE,
	       "producer and consumer state must not share a cache line");
_Static_assert(offsetof(struct lfv_ring, tail) / LFV_CACHELINE !=
	       offsetof(struct lfv_ring, ovf_count) / LFV_CACHELINE,
	       "read-mostly state must not share the producers' line");
_Static_assert(offsetof(struct lfv_ring, ovf_lock) -
	       offsetof(struct lfv_ring, head) >= LFV_CACHELINE,
	       "the overflow lock must not share the consumers' line");
_Static_assert(sizeof(struct lfv_ring_slot) + LFV_RING_MAX_ENTRY <=
	       LFV_CACHELINE, "the largest slot must fit one cache line");

/* capacity 0 means LFV_RING_DEFAULT_CAPACITY; others round up to a power of
 * two. entry_size: 8..56, a multiple of 8. -FI_EINVAL or -FI_ENOMEM. */
int lfv_ring_init(struct lfv_ring *r, size_t capacity, size_t entry_size);
/* As lfv_ring_init with head and tail starting at start: lets tests cross
 * the 2^64 wrap of the free-running counters. */
int lfv_ring_init_at(struct lfv_ring *r, size_t capacity, size_t entry_size,
		     uint64_t start);
/* Frees the slots and any entries still in overflow. */
void lfv_ring_fini(struct lfv_ring *r);

/* Slow paths, out of line: append to / pop from the overflow list. */
int lfv_ring_ovf_push(struct lfv_ring *r, const void *entries, size_t n);
size_t lfv_ring_ovf_pop(struct lfv_ring *r, void *out, size_t max);


/* The ring's fixed geometry, loaded into registers once per call: entry
 * copies store through char pointers, which may alias *r, and would
 * otherwise make the compiler reload every field after each slot. */
struct lfv_ring_geom {
	unsigned char *slots;
	uint64_t mask;
	uint32_t shift;
	uint32_t size;
};

static inline struct lfv_ring_geom lfv_ring_geom(const struct lfv_ring *r)
{
	return (struct lfv_ring_geom){ r->slots, r->mask, r->shift,
				       r->entry_size };
}

static inline struct lfv_ring_slot *lfv_ring_at(struct lfv_ring_geom g,
					       uint64_t pos)
{
	return (struct lfv_ring_slot *)(g.slots + ((pos & g.mask) << g.shift));
}

static inline struct lfv_ring_slot *lfv_ring_slot(const struct lfv_ring *r,
						  uint64_t pos)
{
	return lfv_ring_at(lfv_ring_geom(r), pos);
}

/* How many of the n slots from pos read "seq == pos + k + ready", each load
 * acquire. Producers pass ready 0 (free), consumers 1 (published). */
static inline size_t lfv_ring_scan(struct lfv_ring_geom g, uint64_t pos,
				   size_t n, uint64_t ready)
{
	size_t k;

	for (k = 0; k < n; k++) {
		/* Acquire: pairs with the release store of seq that made the
		 * slot ready (a consumer's release for producers, so our write
		 * follows its read; a producer's publish for consumers, so we
		 * see the entry). */
		if (lfv_load_acquire64(&lfv_ring_at(g, pos + k)->seq) !=
		    pos + k + ready)
			break;
	}
	return k;
}

/* Claims up to n ready slots from the counter *ctr with one CAS; returns
 * how many, with their first position in *pos. 0 when the slot at the
 * counter is not ready and the counter has not moved meanwhile. */
static inline size_t lfv_ring_claim(struct lfv_ring_geom g,
				    lfv_atomic64_t *ctr, size_t n,
				    uint64_t ready, uint64_t *pos)
{
	uint64_t now;
	size_t m;

	/* Relaxed: a guess at the position; the CAS validates it. */
	*pos = lfv_load_relaxed64(ctr);
	for (;;) {
		m = lfv_ring_scan(g, *pos, n, ready);
		if (m) {
			/* Relaxed CAS (see lfv_cas_relaxed64): on success no one
			 * else claimed [pos, pos + m), so the scan still holds;
			 * on failure *pos is refreshed and we scan again. */
			if (lfv_cas_relaxed64(ctr, pos, *pos + m))
				return m;
			continue;
		}
		/* Relaxed: only tells a stale guess from a real full/empty. */
		now = lfv_load_relaxed64(ctr);
		if (now == *pos)
			return 0;
		*pos = now;
	}
}

/* Forced inline: the size switches below only pay off when every case is
 * a loop with a constant-size memcpy (a few moves) instead of a libc call
 * or a word loop per entry (measured, batches of 32: 48-byte entries 6.8
 * -> 3.9 ns each, 8-byte 4.1 -> 3.2). */

/* Copies m entries into the slots from pos and publishes each. */
LFV_ALWAYS_INLINE void lfv_ring_write_run(struct lfv_ring_geom g, uint64_t pos,
					const unsigned char *src, size_t m,
					uint32_t size)
{
	struct lfv_ring_slot *s;
	size_t k;

	for (k = 0; k < m; k++) {
		s = lfv_ring_at(g, pos + k);
		memcpy(s->entry, src + k * size, size);
		/* Release: pairs with the consumer's acquire in lfv_ring_scan;
		 * the entry is visible before the slot reads published. */
		lfv_store_release64(&s->seq, pos + k + 1);
	}
}

/* Copies m entries out of the slots from pos and frees each. */
LFV_ALWAYS_INLINE void lfv_ring_read_run(struct lfv_ring_geom g, uint64_t pos,
				       unsigned char *dst, size_t m,
				       uint32_t size)
{
	struct lfv_ring_slot *s;
	size_t k;

	for (k = 0; k < m; k++) {
		s = lfv_ring_at(g, pos + k);
		memcpy(dst + k * size, s->entry, size);
		/* Release: pairs with the producer's acquire in lfv_ring_scan;
		 * our read is done before the slot reads free. */
		lfv_store_release64(&s->seq, pos + k + g.mask + 1);
	}
}

#ifdef __SANITIZE_THREAD__
/* GCC leaves some constant-size copies uninstrumented under TSan; a runtime
 * size makes a libc memcpy that TSan checks byte for byte. */
#define LFV_RING_SIZED(run, g, pos, buf, m) run(g, pos, buf, m, (g).size)
#else
/* run(g, pos, buf, m, size) with the entry size a constant, so that each
 * case copies with a fixed-size memcpy. The empty asm hides the caller's
 * object from the compiler, which would otherwise warn about the cases
 * larger than that object: only the case equal to the ring's entry size
 * ever runs. */
#define LFV_RING_SIZED(run, g, pos, buf, m)				\
	do {								\
		__asm__("" : "+r"(buf));				\
		switch ((g).size) {					\
		case 8: run(g, pos, buf, m, 8); break;			\
		case 16: run(g, pos, buf, m, 16); break;		\
		case 24: run(g, pos, buf, m, 24); break;		\
		case 32: run(g, pos, buf, m, 32); break;		\
		case 40: run(g, pos, buf, m, 40); break;		\
		case 48: run(g, pos, buf, m, 48); break;		\
		default: run(g, pos, buf, m, 56); break;		\
		}							\
	} while (0)
#endif

LFV_ALWAYS_INLINE void lfv_ring_write(struct lfv_ring_geom g, uint64_t pos,
				    const void *entries, size_t m)
{
	const unsigned char *src = entries;

	LFV_RING_SIZED(lfv_ring_write_run, g, pos, src, m);
}

LFV_ALWAYS_INLINE void lfv_ring_read(struct lfv_ring_geom g, uint64_t pos,
				   void *out, size_t m)
{
	unsigned char *dst = out;

	LFV_RING_SIZED(lfv_ring_read_run, g, pos, dst, m);
}

/* Writes up to n entries to the ring, no overflow; returns how many. */
LFV_ALWAYS_INLINE size_t lfv_ring_put(struct lfv_ring *r, const void *entries,
				    size_t n)
{
	struct lfv_ring_geom g = lfv_ring_geom(r);
	uint64_t pos;
	size_t m;

	m = lfv_ring_claim(g, &r->tail, n, 0, &pos);
	if (m)
		lfv_ring_write(g, pos, entries, m);
	return m;
}

/* Reads up to max entries from the ring, not from overflow. */
LFV_ALWAYS_INLINE size_t lfv_ring_get(struct lfv_ring *r, void *out,
				    size_t max)
{
	struct lfv_ring_geom g = lfv_ring_geom(r);
	uint64_t pos;
	size_t m;

	m = lfv_ring_claim(g, &r->head, max, 1, &pos);
	if (m)
		lfv_ring_read(g, pos, out, m);
	return m;
}

/* Non-zero while overflow holds entries. Relaxed: a routing hint; a thread
 * always sees its own appends (see the ordering argument above). */
static inline bool lfv_ring_ovf_active(const struct lfv_ring *r)
{
	return lfv_load_relaxed64(&r->ovf_count) != 0;
}

/*
 * Queues n entries of entry_size bytes: one reservation for as many as fit,
 * the rest to overflow. Returns n, or on malloc failure the number queued
 * before it if any (the rest were not queued and may be retried), else
 * -FI_ENOMEM.
 */
LFV_ALWAYS_INLINE ssize_t lfv_ring_enqueue_batch(struct lfv_ring *r,
					       const void *entries, size_t n)
{
	size_t done = 0;
	int ret;

	if (!lfv_ring_ovf_active(r))
		done = lfv_ring_put(r, entries, n);
	if (done == n)
		return (ssize_t)n;
	ret = lfv_ring_ovf_push(r, (const unsigned char *)entries +
				done * r->entry_size, n - done);
	if (ret)
		return done ? (ssize_t)done : ret;
	return (ssize_t)n;
}

/* Queues one entry: 0, or -FI_ENOMEM if it had to and could not overflow. */
LFV_ALWAYS_INLINE int lfv_ring_enqueue(struct lfv_ring *r, const void *entry)
{
	if (!lfv_ring_ovf_active(r) && lfv_ring_put(r, entry, 1))
		return 0;
	return lfv_ring_ovf_push(r, entry, 1);
}

/* Copies up to max entries to out (max * entry_size bytes), oldest first;
 * returns how many, 0 when nothing is readable. */
LFV_ALWAYS_INLINE size_t lfv_ring_dequeue(struct lfv_ring *r, void *out,
					size_t max)
{
	size_t got = lfv_ring_get(r, out, max);

	if (got == max || !lfv_ring_ovf_active(r))
		return got;
	return got + lfv_ring_ovf_pop(r, (unsigned char *)out +
				      got * r->entry_size, max - got);
}

/* One entry: true if one was copied to out. */
LFV_ALWAYS_INLINE bool lfv_ring_dequeue_one(struct lfv_ring *r, void *out)
{
	return lfv_ring_dequeue(r, out, 1) == 1;
}

/* True when nothing is queued and no slot is reserved, not even one still
 * being written. A snapshot: exact when no one writes or reads meanwhile
 * (for example once the writers are joined), a hint otherwise, so a reader
 * about to sleep must pair it with its wake-up protocol. */
static inline bool lfv_ring_empty(const struct lfv_ring *r)
{
	/* Relaxed: a snapshot, no entry is read on the strength of it. */
	uint64_t head = lfv_load_relaxed64(&r->head);

	/* Relaxed: as above. */
	return head == lfv_load_relaxed64(&r->tail) && !lfv_ring_ovf_active(r);
}

/* True when a dequeue now would likely return something, without copying:
 * the slot at head is published, or overflow is non-empty and may drain. */
static inline bool lfv_ring_readable(const struct lfv_ring *r)
{
	/* Relaxed: a hint; lfv_ring_dequeue does the acquiring loads. */
	uint64_t head = lfv_load_relaxed64(&r->head);

	/* Relaxed: as above, no entry is read on the strength of it. */
	if (lfv_load_relaxed64(&lfv_ring_slot(r, head)->seq) == head + 1)
		return true;
	/* Relaxed: as above. */
	return lfv_ring_ovf_active(r) && head == lfv_load_relaxed64(&r->tail);
}

static inline size_t lfv_ring_capacity(const struct lfv_ring *r)
{
	return (size_t)r->mask + 1;
}

static inline size_t lfv_ring_entry_size(const struct lfv_ring *r)
{
	return r->entry_size;
}

/* Entries that ever went to overflow (tests, statistics). */
static inline uint64_t lfv_ring_overflow_total(const struct lfv_ring *r)
{
	/* Relaxed: a statistic; written under ovf_lock. */
	return lfv_load_relaxed64(&r->ovf_total);
}

#endif /* LFV_RING_H */
