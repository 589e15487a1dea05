/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Ring set-up and the overflow slow path; the fast path is in lfv_ring.h. */
#include <stdlib.h>
#include <string.h>

#include "lfv_ring.h"

/* A run of entries that did not fit in the ring, in write order. */
struct lfv_ring_ovf_node {
	struct lfv_list link;
	size_t count;		/* entries in data */
	size_t next;		/* first entry not yet popped */
	unsigned char data[];
};

static size_t lfv_ring_pow2(size_t n)
{
	size_t p = LFV_RING_MIN_CAPACITY;

	while (p < n)
		p <<= 1;
	return p;
}

/* Slots are 16, 32 or 64 bytes so none straddles a cache line. */
static uint32_t lfv_ring_stride_shift(size_t entry_size)
{
	size_t need = sizeof(struct lfv_ring_slot) + entry_size;
	uint32_t shift = 4;

	while (((size_t)1 << shift) < need)
		shift++;
	return shift;
}

int lfv_ring_init_at(struct lfv_ring *r, size_t capacity, size_t entry_size,
		     uint64_t start)
{
	size_t bytes;
	uint64_t i;
	void *mem;
	int ret;

	if (!r || !entry_size || entry_size % 8 ||
	    entry_size > LFV_RING_MAX_ENTRY || capacity > LFV_RING_MAX_CAPACITY)
		return -FI_EINVAL;
	memset(r, 0, sizeof(*r));
	r->mask = lfv_ring_pow2(capacity ? capacity :
				LFV_RING_DEFAULT_CAPACITY) - 1;
	r->shift = lfv_ring_stride_shift(entry_size);
	r->entry_size = (uint32_t)entry_size;
	bytes = (r->mask + 1) << r->shift;
	if (posix_memalign(&mem, LFV_CACHELINE, bytes))
		return -FI_ENOMEM;
	r->slots = mem;
	ret = lfv_mutex_init(&r->ovf_lock);
	if (ret) {
		free(mem);
		return ret;
	}
	lfv_list_init(&r->ovf_list);
	/* Relaxed: nothing shares the ring before init returns. */
	for (i = start; i != start + r->mask + 1; i++)
		lfv_store_relaxed64(&lfv_ring_slot(r, i)->seq, i);
	/* Relaxed, both: as above. */
	lfv_store_relaxed64(&r->head, start);
	lfv_store_relaxed64(&r->tail, start);
	return 0;
}

int lfv_ring_init(struct lfv_ring *r, size_t capacity, size_t entry_size)
{
	return lfv_ring_init_at(r, capacity, entry_size, 0);
}

void lfv_ring_fini(struct lfv_ring *r)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(&r->ovf_list)))
		free(lfv_container_of(item, struct lfv_ring_ovf_node, link));
	lfv_mutex_destroy(&r->ovf_lock);
	free(r->slots);
	r->slots = NULL;
}

/* ovf_count and ovf_total change only under ovf_lock, so a relaxed load
 * plus store cannot lose an update; the mutex orders them for lock holders
 * and lock-free readers only use them as hints (see lfv_ring.h). */
static void lfv_ring_ovf_account(struct lfv_ring *r, size_t added,
				 size_t removed)
{
	/* Relaxed: ordered by ovf_lock, which the caller holds. */
	uint64_t count = lfv_load_relaxed64(&r->ovf_count);

	/* Relaxed: read by producers and readers as a routing hint only. */
	lfv_store_relaxed64(&r->ovf_count, count + added - removed);
	if (added)
		/* Relaxed, load and store: a statistic, under ovf_lock. */
		lfv_store_relaxed64(&r->ovf_total,
				    lfv_load_relaxed64(&r->ovf_total) + added);
}

int lfv_ring_ovf_push(struct lfv_ring *r, const void *entries, size_t n)
{
	struct lfv_ring_ovf_node *node;

	/* A count whose byte size would wrap cannot be allocated either. */
	if (n > (SIZE_MAX - sizeof(*node)) / r->entry_size)
		return -FI_ENOMEM;
	node = malloc(sizeof(*node) + n * r->entry_size);
	if (!node)
		return -FI_ENOMEM;
	node->count = n;
	node->next = 0;
	memcpy(node->data, entries, n * r->entry_size);
	lfv_mutex_lock(&r->ovf_lock);
	lfv_list_insert_tail(&r->ovf_list, &node->link);
	lfv_ring_ovf_account(r, n, 0);
	lfv_mutex_unlock(&r->ovf_lock);
	return 0;
}

/* Every position reserved before the caller took ovf_lock has been
 * claimed by some reader: the condition for letting overflow out. */
static bool lfv_ring_drained(const struct lfv_ring *r)
{
	/* Relaxed: taken after ovf_lock, whose acquire orders it after the
	 * reservation (CAS on tail) of every producer that appended before. */
	uint64_t tail = lfv_load_relaxed64(&r->tail);

	/* Relaxed: head only grows, so a stale value can only say "not yet". */
	return (int64_t)(lfv_load_relaxed64(&r->head) - tail) >= 0;
}

/* Pops up to max entries from the node at the front; frees it when done. */
static size_t lfv_ring_ovf_take(struct lfv_ring *r,
				struct lfv_ring_ovf_node *node,
				unsigned char *out, size_t max)
{
	size_t n = node->count - node->next;

	if (n > max)
		n = max;
	memcpy(out, node->data + node->next * r->entry_size,
	       n * r->entry_size);
	node->next += n;
	if (node->next == node->count) {
		lfv_list_remove(&node->link);
		free(node);
	}
	return n;
}

size_t lfv_ring_ovf_pop(struct lfv_ring *r, void *out, size_t max)
{
	unsigned char *dst = out;
	struct lfv_list *item;
	size_t got = 0;

	lfv_mutex_lock(&r->ovf_lock);
	if (lfv_ring_drained(r)) {
		while (got < max && (item = lfv_list_first(&r->ovf_list)))
			got += lfv_ring_ovf_take(r, lfv_container_of(item,
					struct lfv_ring_ovf_node, link),
					dst + got * r->entry_size, max - got);
		lfv_ring_ovf_account(r, 0, got);
	}
	lfv_mutex_unlock(&r->ovf_lock);
	return got;
}
