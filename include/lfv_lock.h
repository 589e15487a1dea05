/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Locks for control paths (object lists, EQs). The data path uses lfv_atomic.h.
 * The order every lock of lfverbs is taken in, and what each protects, is
 * in prov/lfverbs/lfv_lock_order.h (the core's, src/, are inner ones
 * there). */
#ifndef LFV_LOCK_H
#define LFV_LOCK_H

#include <pthread.h>

struct lfv_mutex {
	pthread_mutex_t m;
};

static inline int lfv_mutex_init(struct lfv_mutex *lock)
{
	return -pthread_mutex_init(&lock->m, NULL);
}

static inline void lfv_mutex_destroy(struct lfv_mutex *lock)
{
	pthread_mutex_destroy(&lock->m);
}

static inline void lfv_mutex_lock(struct lfv_mutex *lock)
{
	pthread_mutex_lock(&lock->m);
}

static inline void lfv_mutex_unlock(struct lfv_mutex *lock)
{
	pthread_mutex_unlock(&lock->m);
}

#endif /* LFV_LOCK_H */
