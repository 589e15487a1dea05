/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * How completion objects (CQs, counters) drive the transport. Under
 * FI_PROGRESS_MANUAL, reading a CQ or counter must make progress: the object
 * calls its hook, which the transport sets when it binds (e.g. polls the
 * hardware CQ). Objects with no transport attached have a NULL fn.
 */
#ifndef LFV_PROGRESS_H
#define LFV_PROGRESS_H

struct lfv_progress_hook {
	void (*fn)(void *arg);
	void *arg;
	/* Optional: how long (ms) a reader blocked on the object may sleep
	 * before fn must run again, -1 for as long as it likes. For work
	 * that completes where the object's wait does not look (another
	 * hardware CQ, a timer). */
	int (*wait_ms)(void *arg);
};

static inline void lfv_progress_run(const struct lfv_progress_hook *hook)
{
	if (hook->fn)
		hook->fn(hook->arg);
}

static inline int lfv_progress_wait_ms(const struct lfv_progress_hook *hook)
{
	return hook->wait_ms ? hook->wait_ms(hook->arg) : -1;
}

#endif /* LFV_PROGRESS_H */
