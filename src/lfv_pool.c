/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Fixed-size object pools: see include/lfv_pool.h. */
#include <stdint.h>
#include <stdlib.h>

#include <rdma/fi_errno.h>

#include "lfv_pool.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LFV_POOL_POISON(addr, size) ASAN_POISON_MEMORY_REGION(addr, size)
#define LFV_POOL_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define LFV_POOL_POISON(addr, size) ((void)(addr), (void)(size))
#define LFV_POOL_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

struct lfv_pool_chunk {
	struct lfv_pool_chunk *next;
	size_t bytes;			/* of objs[], for unpoisoning */
	max_align_t objs[];		/* the objects, suitably aligned */
};

/* A free object holds the next free object in its first word. */
struct lfv_pool_link {
	void *next;
};

static size_t lfv_pool_stride(size_t obj_size)
{
	const size_t align = _Alignof(max_align_t);

	if (obj_size < sizeof(struct lfv_pool_link))
		obj_size = sizeof(struct lfv_pool_link);
	return (obj_size + align - 1) / align * align;
}

int lfv_pool_init(struct lfv_pool *pool, size_t obj_size, size_t chunk_objs,
		  size_t max_objs)
{
	size_t stride;

	if (!pool || !obj_size || !chunk_objs)
		return -FI_EINVAL;
	if (obj_size > SIZE_MAX / 2)
		return -FI_EINVAL;
	stride = lfv_pool_stride(obj_size);
	/* Every chunk's size must be representable. */
	if (chunk_objs > (SIZE_MAX - sizeof(struct lfv_pool_chunk)) / stride)
		return -FI_EINVAL;
	*pool = (struct lfv_pool){
		.obj_size = stride,
		.chunk_objs = chunk_objs,
		.max_objs = max_objs,
	};
	return 0;
}

void lfv_pool_fini(struct lfv_pool *pool)
{
	struct lfv_pool_chunk *chunk;

	while ((chunk = pool->chunks)) {
		pool->chunks = chunk->next;
		LFV_POOL_UNPOISON(chunk->objs, chunk->bytes);
		free(chunk);
	}
	pool->free_head = NULL;
	pool->total = 0;
	pool->in_use = 0;
}

static void lfv_pool_push_free(struct lfv_pool *pool, void *obj)
{
	struct lfv_pool_link *link = obj;

	link->next = pool->free_head;
	pool->free_head = obj;
	/* The link word stays readable: get follows it. */
	LFV_POOL_POISON((char *)obj + sizeof(*link),
			pool->obj_size - sizeof(*link));
}

/* Adds one chunk (smaller than chunk_objs only to stay within the bound).
 * Out of line: inlined, its registers would make every get save and
 * restore six of them. */
static __attribute__((noinline)) int lfv_pool_grow(struct lfv_pool *pool)
{
	size_t n = pool->chunk_objs, i;
	struct lfv_pool_chunk *chunk;
	char *objs;

	if (pool->max_objs) {
		if (pool->total >= pool->max_objs)
			return -FI_EAGAIN;
		if (n > pool->max_objs - pool->total)
			n = pool->max_objs - pool->total;
	}
	chunk = malloc(sizeof(*chunk) + n * pool->obj_size);
	if (!chunk)
		return -FI_ENOMEM;
	chunk->bytes = n * pool->obj_size;
	chunk->next = pool->chunks;
	pool->chunks = chunk;
	pool->total += n;
	/* Pushed backwards so the lowest address is handed out first. */
	objs = (char *)chunk->objs;
	for (i = n; i-- > 0;)
		lfv_pool_push_free(pool, objs + i * pool->obj_size);
	return 0;
}

int lfv_pool_get(struct lfv_pool *pool, void **obj)
{
	struct lfv_pool_link *link;
	int ret;

	if (!pool->free_head) {
		ret = lfv_pool_grow(pool);
		if (ret)
			return ret;
	}
	link = pool->free_head;
	pool->free_head = link->next;
	LFV_POOL_UNPOISON(link, pool->obj_size);
	pool->in_use++;
	*obj = link;
	return 0;
}

void lfv_pool_put(struct lfv_pool *pool, void *obj)
{
	pool->in_use--;
	lfv_pool_push_free(pool, obj);
}
