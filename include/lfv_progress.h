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
};

static inline void lfv_progress_run(const struct lfv_progress_hook *hook)
{
	if (hook->fn)
		hook->fn(hook->arg);
}

#endif /* LFV_PROGRESS_H */
