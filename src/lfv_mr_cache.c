/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The registration cache (include/lfv_mr_cache.h). */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_mr_cache.h"

static struct lfv_mr_entry *lfv_mr_entry_of(struct lfv_list *item)
{
	return lfv_container_of(item, struct lfv_mr_entry, node);
}

/* Deregisters and frees e (out of the list; nobody uses it). */
static void lfv_mr_entry_drop(struct lfv_mr_cache *c, struct lfv_mr_entry *e)
{
	c->ops->dereg(c->ctx, e->handle);
	free(e);
}

/* The monitor's thread: [start, end) went away. Entries in use stay
 * (stale) until put back. */
static void lfv_mr_cache_invalidate(struct lfv_memmon_sub *sub,
				    uintptr_t start, uintptr_t end)
{
	struct lfv_mr_cache *c = lfv_container_of(sub, struct lfv_mr_cache,
						  sub);
	struct lfv_list *item, *next;
	struct lfv_mr_entry *e;

	pthread_mutex_lock(&c->lock);
	c->invalidations++;
	for (item = c->entries.next; item != &c->entries; item = next) {
		next = item->next;
		e = lfv_mr_entry_of(item);
		if (e->end <= start || e->start >= end)
			continue;
		lfv_list_remove(&e->node);
		c->count--;
		e->stale = true;
		/* Deregistered on the application's side (never here: free()
		 * may unmap watched memory, and only this thread reads the
		 * event that the unmap waits for). */
		if (!e->users)
			lfv_list_insert_tail(&c->dead, &e->node);
	}
	pthread_mutex_unlock(&c->lock);
}

/* Drops what the monitor took away (c->lock held; application side). */
static void lfv_mr_cache_bury(struct lfv_mr_cache *c)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(&c->dead)))
		lfv_mr_entry_drop(c, lfv_mr_entry_of(item));
}

int lfv_mr_cache_init(struct lfv_mr_cache *c, const struct lfv_mr_cache_ops *ops,
		      void *ctx, size_t max_entries)
{
	int ret;

	lfv_list_init(&c->entries);
	lfv_list_init(&c->dead);
	c->count = 0;
	c->max_entries = max_entries ? max_entries : 1;
	c->ops = ops;
	c->ctx = ctx;
	c->hits = c->misses = c->invalidations = 0;
	c->sub.invalidate = lfv_mr_cache_invalidate;
	if (pthread_mutex_init(&c->lock, NULL))
		return -FI_ENOMEM;
	ret = lfv_memmon_subscribe(&c->sub);
	if (ret)
		pthread_mutex_destroy(&c->lock);
	return ret;
}

void lfv_mr_cache_fini(struct lfv_mr_cache *c)
{
	struct lfv_list *item;

	/* First: no invalidation runs once we hold nothing. */
	lfv_memmon_unsubscribe(&c->sub);
	while ((item = lfv_list_pop_head(&c->entries)))
		lfv_mr_entry_drop(c, lfv_mr_entry_of(item));
	lfv_mr_cache_bury(c);
	c->count = 0;
	pthread_mutex_destroy(&c->lock);
}

/* Drops unused entries from the cold end while there are too many. */
static void lfv_mr_cache_trim(struct lfv_mr_cache *c)
{
	struct lfv_list *item, *prev;
	struct lfv_mr_entry *e;

	for (item = c->entries.prev; item != &c->entries &&
	     c->count > c->max_entries; item = prev) {
		prev = item->prev;
		e = lfv_mr_entry_of(item);
		if (e->users)
			continue;
		lfv_list_remove(&e->node);
		c->count--;
		lfv_mr_entry_drop(c, e);
	}
}

static struct lfv_mr_entry *lfv_mr_cache_find(struct lfv_mr_cache *c,
					      uintptr_t start, uintptr_t end)
{
	struct lfv_list *item;
	struct lfv_mr_entry *e;

	lfv_list_foreach(item, &c->entries) {
		e = lfv_mr_entry_of(item);
		if (e->start <= start && e->end >= end)
			return e;
	}
	return NULL;
}

/* A new entry for the pages of [start, end), watched by the monitor
 * before it is registered: an unmap can only come after. NULL when the
 * pages cannot be watched (the caller registers without the cache). */
static struct lfv_mr_entry *lfv_mr_entry_new(struct lfv_mr_cache *c,
					     uintptr_t start, uintptr_t end,
					     int *err)
{
	struct lfv_mr_entry *e;

	*err = lfv_memmon_watch((void *)start, end - start);
	if (*err)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	e->start = start;
	e->end = end;
	e->handle = c->ops->reg(c->ctx, (void *)start, end - start, err);
	if (!e->handle) {
		free(e);
		return NULL;
	}
	return e;
}

struct lfv_mr_entry *lfv_mr_cache_get(struct lfv_mr_cache *c, void *addr,
				      size_t len, int *err)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + (len ? len : 1) + page - 1) &
			~(page - 1);
	struct lfv_mr_entry *e;
	uint64_t seen;

	pthread_mutex_lock(&c->lock);
	lfv_mr_cache_bury(c);
	e = lfv_mr_cache_find(c, start, end);
	if (e) {
		c->hits++;
		e->users++;
		lfv_list_remove(&e->node);
		lfv_list_insert_head(&c->entries, &e->node);
		pthread_mutex_unlock(&c->lock);
		return e;
	}
	c->misses++;
	seen = c->invalidations;
	/* Registering is a system call: the monitor may need the lock
	 * meanwhile (a munmap elsewhere waits for it). */
	pthread_mutex_unlock(&c->lock);
	e = lfv_mr_entry_new(c, start, end, err);
	if (!e)
		return NULL;
	pthread_mutex_lock(&c->lock);
	e->users = 1;
	if (c->invalidations != seen) {
		/* Memory went away meanwhile, maybe this: use it once. */
		e->stale = true;
	} else {
		lfv_list_insert_head(&c->entries, &e->node);
		c->count++;
		lfv_mr_cache_trim(c);
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

void lfv_mr_cache_put(struct lfv_mr_cache *c, struct lfv_mr_entry *e)
{
	bool drop;

	pthread_mutex_lock(&c->lock);
	drop = !--e->users && e->stale;
	if (!e->users && !e->stale)
		lfv_mr_cache_trim(c);
	lfv_mr_cache_bury(c);
	pthread_mutex_unlock(&c->lock);
	if (drop)
		lfv_mr_entry_drop(c, e);
}

void lfv_mr_cache_flush(struct lfv_mr_cache *c)
{
	pthread_mutex_lock(&c->lock);
	lfv_mr_cache_bury(c);
	pthread_mutex_unlock(&c->lock);
}
