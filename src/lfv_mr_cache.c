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

/* Deregisters and frees e (out of the list; nobody uses it). Never
 * under c->lock: free() and the deregistration may unmap or drop watched
 * pages (a heap that shrinks), and that call waits until the monitor's
 * thread has read the event, which needs c->lock to invalidate. */
static void lfv_mr_entry_drop(struct lfv_mr_cache *c, struct lfv_mr_entry *e)
{
	c->ops->dereg(c->ctx, e->handle);
	free(e);
}

/* Drops every entry of list (c->lock not held). */
static void lfv_mr_entries_drop(struct lfv_mr_cache *c, struct lfv_list *list)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(list)))
		lfv_mr_entry_drop(c, lfv_mr_entry_of(item));
}

/* Moves every entry of from to the tail of to. */
static void lfv_mr_entries_move(struct lfv_list *to, struct lfv_list *from)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(from)))
		lfv_list_insert_tail(to, item);
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

/* Takes what the monitor took away into doomed, to drop once c->lock
 * is released (c->lock held; application side). */
static void lfv_mr_cache_bury(struct lfv_mr_cache *c, struct lfv_list *doomed)
{
	lfv_mr_entries_move(doomed, &c->dead);
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
	/* First: no invalidation runs once we hold nothing. */
	lfv_memmon_unsubscribe(&c->sub);
	lfv_mr_entries_drop(c, &c->entries);
	lfv_mr_entries_drop(c, &c->dead);
	c->count = 0;
	pthread_mutex_destroy(&c->lock);
}

/* Takes unused entries from the cold end into doomed while there are
 * too many (c->lock held). */
static void lfv_mr_cache_trim(struct lfv_mr_cache *c, struct lfv_list *doomed)
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
		lfv_list_insert_tail(doomed, &e->node);
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
	struct lfv_list doomed;
	uint64_t seen;

	lfv_list_init(&doomed);
	pthread_mutex_lock(&c->lock);
	lfv_mr_cache_bury(c, &doomed);
	e = lfv_mr_cache_find(c, start, end);
	if (e) {
		c->hits++;
		e->users++;
		lfv_list_remove(&e->node);
		lfv_list_insert_head(&c->entries, &e->node);
		pthread_mutex_unlock(&c->lock);
		lfv_mr_entries_drop(c, &doomed);
		return e;
	}
	c->misses++;
	seen = c->invalidations;
	/* Registering is a system call: the monitor may need the lock
	 * meanwhile (a munmap elsewhere waits for it). */
	pthread_mutex_unlock(&c->lock);
	lfv_mr_entries_drop(c, &doomed);
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
		lfv_mr_cache_trim(c, &doomed);
	}
	pthread_mutex_unlock(&c->lock);
	lfv_mr_entries_drop(c, &doomed);
	return e;
}

void lfv_mr_cache_put(struct lfv_mr_cache *c, struct lfv_mr_entry *e)
{
	struct lfv_list doomed;

	lfv_list_init(&doomed);
	pthread_mutex_lock(&c->lock);
	if (!--e->users) {
		if (e->stale)
			lfv_list_insert_tail(&doomed, &e->node);
		else
			lfv_mr_cache_trim(c, &doomed);
	}
	lfv_mr_cache_bury(c, &doomed);
	pthread_mutex_unlock(&c->lock);
	lfv_mr_entries_drop(c, &doomed);
}

void lfv_mr_cache_flush(struct lfv_mr_cache *c)
{
	struct lfv_list doomed;

	lfv_list_init(&doomed);
	pthread_mutex_lock(&c->lock);
	lfv_mr_cache_bury(c, &doomed);
	pthread_mutex_unlock(&c->lock);
	lfv_mr_entries_drop(c, &doomed);
}
