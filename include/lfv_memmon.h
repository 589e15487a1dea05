/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The memory monitor: tells registration caches when memory they cached
 * is unmapped or its pages are dropped (munmap, mremap, madvise
 * DONTNEED/REMOVE, a heap that shrinks), so a later buffer at the same
 * address is never given a stale registration.
 *
 * It is a userfaultfd (user-mode only, which needs no privilege) with the
 * unmap, remove and remap events, and one thread that reads them. The
 * mappings that hold watched memory are registered whole (a part would
 * split the mapping, and mremap of it would fail), in write-protect mode,
 * and nothing is ever write-protected, so no page fault waits for the thread; only the calls
 * that unmap watched memory do, until the thread has read the event.
 * Where the kernel has no such userfaultfd the monitor is unavailable and
 * caches are not used.
 */
#ifndef LFV_MEMMON_H
#define LFV_MEMMON_H

#include <stddef.h>
#include <stdint.h>

#include "lfv_list.h"

/* A subscriber: invalidate is called from the monitor's thread with the
 * page-aligned range [start, end) that went away. */
struct lfv_memmon_sub {
	struct lfv_list node;
	void (*invalidate)(struct lfv_memmon_sub *sub, uintptr_t start,
			   uintptr_t end);
};

/* 0 and the subscriber added (the monitor starts with its first), or
 * -FI_ENOSYS when this kernel cannot monitor. */
int lfv_memmon_subscribe(struct lfv_memmon_sub *sub);
void lfv_memmon_unsubscribe(struct lfv_memmon_sub *sub);

/* Watches the pages of [addr, addr + len): 0, or a negative error when
 * they cannot be watched (memory that is not private anonymous, say). */
int lfv_memmon_watch(const void *addr, size_t len);

/* Stops the thread (at provider cleanup; subscribers are gone). */
void lfv_memmon_fini(void);

#endif /* LFV_MEMMON_H */
