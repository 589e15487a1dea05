/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A registration cache: transfers of memory the application did not
 * register (RDM rendezvous and RMA) register it once and keep the
 * registration for the next transfer of the same buffer, as MPI libraries
 * reuse their buffers. The memory monitor (lfv_memmon.h) drops an entry
 * whose pages go away; an entry in use then lives until it is put back.
 *
 * Entries cover whole pages. A lookup takes the most recently used entry
 * that covers the range (the list is kept in use order); a miss registers
 * the range, and beyond max_entries unused entries are dropped, least
 * recently used first. Transport independent: the transport registers
 * and deregisters through ops.
 *
 * Thread safety: one mutex per cache; the monitor's thread takes it too.
 */
#ifndef LFV_MR_CACHE_H
#define LFV_MR_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "lfv_memmon.h"

struct lfv_mr_cache_ops {
	/* A registration of [addr, addr + len), or NULL with -FI_E* in
	 * *err. */
	void *(*reg)(void *ctx, void *addr, size_t len, int *err);
	void (*dereg)(void *ctx, void *handle);
};

struct lfv_mr_entry {
	struct lfv_list node;		/* cache->entries, in use order */
	uintptr_t start, end;		/* whole pages */
	void *handle;			/* ops->reg's */
	uint32_t users;
	bool stale;			/* unmapped: dropped when put */
};

struct lfv_mr_cache {
	struct lfv_memmon_sub sub;
	pthread_mutex_t lock;
	struct lfv_list entries;	/* most recently used first */
	struct lfv_list dead;		/* invalidated, unused: to drop */
	size_t count, max_entries;
	const struct lfv_mr_cache_ops *ops;
	void *ctx;
	uint64_t hits, misses;		/* for tests and logs */
	uint64_t invalidations;		/* ranges the monitor reported */
};

/* 0, or -FI_ENOSYS without a memory monitor (use no cache then). */
int lfv_mr_cache_init(struct lfv_mr_cache *c, const struct lfv_mr_cache_ops *ops,
		      void *ctx, size_t max_entries);
/* Every entry must have been put back. */
void lfv_mr_cache_fini(struct lfv_mr_cache *c);

/* An entry covering [addr, addr + len), in use until put; NULL and *err
 * when it cannot be registered. */
struct lfv_mr_entry *lfv_mr_cache_get(struct lfv_mr_cache *c, void *addr,
				      size_t len, int *err);
void lfv_mr_cache_put(struct lfv_mr_cache *c, struct lfv_mr_entry *e);
/* Deregisters what the monitor invalidated (get and put do it too). */
void lfv_mr_cache_flush(struct lfv_mr_cache *c);

#endif /* LFV_MR_CACHE_H */
