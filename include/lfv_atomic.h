/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The one atomics header of lfverbs: thin, named wrappers over C11
 * <stdatomic.h> so that every ordering choice is visible at the call site.
 * Each caller comments which store (or load) its acquire/release pairs with.
 */
#ifndef LFV_ATOMIC_H
#define LFV_ATOMIC_H

#include <stdatomic.h>
#include <stdint.h>

#define LFV_CACHELINE 64
#define lfv_cacheline_aligned __attribute__((aligned(LFV_CACHELINE)))

typedef _Atomic uint32_t lfv_atomic32_t;
typedef _Atomic uint64_t lfv_atomic64_t;

static inline uint32_t lfv_load_relaxed32(const lfv_atomic32_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline uint32_t lfv_load_acquire32(const lfv_atomic32_t *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

static inline void lfv_store_relaxed32(lfv_atomic32_t *p, uint32_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline void lfv_store_release32(lfv_atomic32_t *p, uint32_t v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

static inline uint64_t lfv_load_relaxed64(const lfv_atomic64_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}

static inline uint64_t lfv_load_acquire64(const lfv_atomic64_t *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

static inline void lfv_store_relaxed64(lfv_atomic64_t *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_relaxed);
}

static inline void lfv_store_release64(lfv_atomic64_t *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

/* Reference counts: increments need no ordering; the decrement that may
 * free the object is acq_rel so the freeing thread sees every prior use. */
static inline void lfv_ref_get(lfv_atomic32_t *ref)
{
	atomic_fetch_add_explicit(ref, 1, memory_order_relaxed);
}

static inline uint32_t lfv_ref_put(lfv_atomic32_t *ref)
{
	return atomic_fetch_sub_explicit(ref, 1, memory_order_acq_rel) - 1;
}

static inline uint32_t lfv_ref_read(const lfv_atomic32_t *ref)
{
	return atomic_load_explicit(ref, memory_order_acquire);
}

#endif /* LFV_ATOMIC_H */
