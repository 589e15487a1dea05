/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Orders that go through the device, told to ThreadSanitizer. A work
 * request's fields are written by the thread that posts it, before
 * ibv_post_*, and read by whichever thread polls its completion (the
 * progress thread, another reader of a shared CQ). The order is real: the
 * device takes the request at the post and completes it after, and the
 * completion reaches the poller through the CQ's ring. TSan sees neither
 * step. lfv_tsan_posted(wr_id) just before the post and
 * lfv_tsan_completed(wr_id) where a completion is taken pair on the
 * request's address, as a release and an acquire. Nothing outside TSan
 * builds.
 */
#ifndef LFV_TSAN_H
#define LFV_TSAN_H

#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>

/* 1 in TSan builds: a walk that only tells TSan (a chain of work
 * requests) is skipped without it; C lets the compiler keep a loop it
 * cannot prove finite, even with an empty body. */
#define LFV_TSAN 1

static inline void lfv_tsan_posted(uint64_t wr_id)
{
	__tsan_release((void *)(uintptr_t)wr_id);
}

static inline void lfv_tsan_completed(uint64_t wr_id)
{
	__tsan_acquire((void *)(uintptr_t)wr_id);
}
#else
#define LFV_TSAN 0

static inline void lfv_tsan_posted(uint64_t wr_id)
{
	(void)wr_id;
}

static inline void lfv_tsan_completed(uint64_t wr_id)
{
	(void)wr_id;
}
#endif

#endif /* LFV_TSAN_H */
