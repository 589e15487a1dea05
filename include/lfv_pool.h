/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Pools of fixed-size objects. Objects are carved from chunks allocated on
 * demand (chunk_objs at a time); free objects sit on an intrusive singly
 * linked list threaded through their own first bytes, so get and put are
 * O(1) and make no system call once the pool has grown. Chunks are only
 * returned when the pool is destroyed, which frees every object at once,
 * in use or not.
 *
 * An optional bound caps the number of objects the pool will ever hold:
 * at the bound, get reports -FI_EAGAIN until something is put back.
 *
 * Not thread-safe: callers serialise (each user holds its own lock).
 * Under AddressSanitizer, free objects are poisoned (all but the link
 * word), so a use after put is reported like a use after free.
 */
#ifndef LFV_POOL_H
#define LFV_POOL_H

#include <stddef.h>

struct lfv_pool_chunk;

struct lfv_pool {
	size_t obj_size;		/* stride: rounded to max_align_t */
	size_t chunk_objs;		/* objects per chunk */
	size_t max_objs;		/* 0: no bound */
	size_t total;			/* objects in all chunks */
	size_t in_use;			/* handed out and not put back */
	void *free_head;		/* free objects, linked by word 0 */
	struct lfv_pool_chunk *chunks;	/* every chunk, newest first */
};

/*
 * obj_size > 0 and chunk_objs > 0; max_objs 0 means no bound. Allocates
 * nothing until the first get. -FI_EINVAL on bad sizes (pool untouched).
 */
int lfv_pool_init(struct lfv_pool *pool, size_t obj_size, size_t chunk_objs,
		  size_t max_objs);

/* Frees every chunk: objects still in use become invalid. */
void lfv_pool_fini(struct lfv_pool *pool);

/*
 * Hands out one object (contents undefined, aligned for any type) in *obj.
 * -FI_EAGAIN at the bound, -FI_ENOMEM when a new chunk cannot be
 * allocated; *obj is untouched on error.
 */
int lfv_pool_get(struct lfv_pool *pool, void **obj);

/* Returns an object obtained from this pool's lfv_pool_get. */
void lfv_pool_put(struct lfv_pool *pool, void *obj);

static inline size_t lfv_pool_in_use(const struct lfv_pool *pool)
{
	return pool->in_use;
}

/* Objects the pool holds, free or in use (grows in chunks). */
static inline size_t lfv_pool_capacity(const struct lfv_pool *pool)
{
	return pool->total;
}

#endif /* LFV_POOL_H */
