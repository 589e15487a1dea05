/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The one atomics header of lfverbs: thin, named wrappers over C11
 * <stdatomic.h> so that every ordering choice is visible at the call site.
 * Each caller comments which store (or load) its acquire/release pairs with.
 */
#ifndef LFV_ATOMIC_H
#define LFV_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LFV_CACHELINE 64
#define lfv_cacheline_aligned __attribute__((aligned(LFV_CACHELINE)))

typedef _Atomic uint32_t lfv_atomic32_t;
typedef _Atomic uint64_t lfv_atomic64_t;

/*
 * Relaxed and acquire loads, relaxed and release stores, one set for each
 * width: lfv_load_relaxed32/64, lfv_load_acquire32/64,
 * lfv_store_relaxed32/64, lfv_store_release32/64.
 */
#define LFV_ATOMIC_ACCESSORS(bits)                                          \
	static inline uint##bits##_t lfv_load_relaxed##bits(                \
		const lfv_atomic##bits##_t *p)                              \
	{                                                                   \
		return atomic_load_explicit(p, memory_order_relaxed);       \
	}                                                                   \
	static inline uint##bits##_t lfv_load_acquire##bits(                \
		const lfv_atomic##bits##_t *p)                              \
	{                                                                   \
		return atomic_load_explicit(p, memory_order_acquire);       \
	}                                                                   \
	static inline void lfv_store_relaxed##bits(lfv_atomic##bits##_t *p, \
						   uint##bits##_t v)        \
	{                                                                   \
		atomic_store_explicit(p, v, memory_order_relaxed);          \
	}                                                                   \
	static inline void lfv_store_release##bits(lfv_atomic##bits##_t *p, \
						   uint##bits##_t v)        \
	{                                                                   \
		atomic_store_explicit(p, v, memory_order_release);          \
	}

LFV_ATOMIC_ACCESSORS(32)
LFV_ATOMIC_ACCESSORS(64)

/* A pointer published once to readers that do not lock: a list that only
 * grows while they walk it. */
typedef void *_Atomic lfv_atomic_ptr_t;

static inline void *lfv_load_acquire_ptr(const lfv_atomic_ptr_t *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

static inline void lfv_store_release_ptr(lfv_atomic_ptr_t *p, void *v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

/* Forces inlining where the compiler's heuristics measured wrong. */
#define LFV_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Strong CAS with no ordering: for claiming positions whose data is ordered
 * by other stores (the ring's slot sequence words). On failure *expected
 * gets the current value. */
static inline bool lfv_cas_relaxed64(lfv_atomic64_t *p, uint64_t *expected,
				     uint64_t desired)
{
	return atomic_compare_exchange_strong_explicit(p, expected, desired,
						       memory_order_relaxed,
						       memory_order_relaxed);
}

static inline uint32_t lfv_exchange32(lfv_atomic32_t *p, uint32_t v)
{
	return atomic_exchange_explicit(p, v, memory_order_acq_rel);
}

static inline uint64_t lfv_fetch_add64(lfv_atomic64_t *p, uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

static inline uint64_t lfv_fetch_add_release64(lfv_atomic64_t *p,
					       uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_release);
}

static inline uint64_t lfv_fetch_sub64(lfv_atomic64_t *p, uint64_t v)
{
	return atomic_fetch_sub_explicit(p, v, memory_order_relaxed);
}

/*
 * The middle of a store-then-load handshake (a sleeper stores "armed" then
 * checks the queue; a producer publishes then checks "armed"). Both sides
 * RMW the same word between their store and their load: the second RMW
 * reads the first one's value, so it synchronizes with it, and whichever
 * side comes second sees the other's store. Unlike atomic_thread_fence,
 * ThreadSanitizer models this.
 */
static inline void lfv_handshake(lfv_atomic32_t *word)
{
	atomic_fetch_add_explicit(word, 1, memory_order_acq_rel);
}

/*
 * Sequentially consistent wrappers (the counter's armed/update handshake):
 * a store followed by a load of another location is only ordered under
 * seq_cst.
 */
static inline uint64_t lfv_fetch_add_seqcst64(lfv_atomic64_t *p, uint64_t v)
{
	return atomic_fetch_add_explicit(p, v, memory_order_seq_cst);
}

static inline void lfv_store_seqcst64(lfv_atomic64_t *p, uint64_t v)
{
	atomic_store_explicit(p, v, memory_order_seq_cst);
}

static inline uint64_t lfv_load_seqcst64(const lfv_atomic64_t *p)
{
	return atomic_load_explicit(p, memory_order_seq_cst);
}

static inline uint32_t lfv_load_seqcst32(const lfv_atomic32_t *p)
{
	return atomic_load_explicit(p, memory_order_seq_cst);
}

static inline uint32_t lfv_exchange_seqcst32(lfv_atomic32_t *p, uint32_t v)
{
	return atomic_exchange_explicit(p, v, memory_order_seq_cst);
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
