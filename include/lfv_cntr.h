/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Counters (fi_cntr(3)): a success count and an error count, both 64-bit
 * atomics so that the completion path, fi_cntr_add/set and readers can run
 * on any thread at once and no update is ever lost.
 *
 * The completion path calls lfv_cntr_inc()/lfv_cntr_inc_err(): one atomic
 * RMW plus one load of `armed`, which shares the RMW's cache line. Only when
 * a sleeper has armed the counter (fi_cntr_wait, fi_trywait) does an update
 * take the slow path, lfv_cntr_wake(): disarm, then one signal of the wait
 * object. The handshake that makes this safe is argued in lfv_cntr.c.
 *
 * Semantics chosen where fi_cntr(3)/fi_trywait(3) leave room:
 *  - NULL attr: FI_CNTR_EVENTS_COMP, FI_WAIT_NONE ("The default is
 *    FI_WAIT_NONE"), flags 0.
 *  - fi_cntr_wait returns 0 once value >= threshold (checked first),
 *    -FI_EAVAIL if the error count differs from its value at entry,
 *    -FI_ETIMEDOUT on timeout, and -FI_ENOSYS on an FI_WAIT_NONE counter.
 *  - FI_PEER in attr->flags (fi_peer(3), libfabric 1.19 on) with a struct
 *    fi_peer_cntr_context: every update goes to the owner's counter
 *    (owner_ops->inc/incerr); reads return 0, fi_cntr_add/set/adderr/
 *    seterr and fi_cntr_wait -FI_ENOSYS. fi_export_fid on any other
 *    counter hands out a struct fid_peer_cntr whose inc/incerr update it.
 *    Before 1.19, FI_PEER and the export are -FI_EINVAL / -FI_ENOSYS.
 *  - lfv_cntr_trywait returns -FI_EAGAIN when the counter was updated since
 *    it was opened or last armed (by fi_trywait or fi_cntr_wait), 0 when it
 *    drained the wait object and armed it; -FI_EINVAL for FI_WAIT_NONE and
 *    FI_WAIT_YIELD, which have no native object to block on.
 */
#ifndef LFV_CNTR_H
#define LFV_CNTR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "lfv_atomic.h"
#include "lfv_fi_compat.h"
#include "lfv_list.h"
#include "lfv_progress.h"
#include "lfv_wait.h"

struct lfv_cntr {
	/* Written by every completion: kept on their own cache line, apart
	 * from the fid that readers dereference, and together so that the
	 * load of armed after the RMW on value hits the line just taken. */
	lfv_atomic64_t value lfv_cacheline_aligned;
	lfv_atomic64_t err;
	lfv_atomic32_t armed;		/* 1: a sleeper needs the next update */
	struct fid_peer_cntr *owner;	/* peer role: where updates go */

	struct fid_cntr cntr_fid lfv_cacheline_aligned;
	lfv_atomic32_t ref;		/* 1 + objects bound to this counter */
	lfv_atomic32_t *parent_ref;	/* the domain's count of children */
	struct fid_peer_cntr peer_cntr;	/* owner role: exported */
	struct lfv_progress_hook progress;
	struct lfv_wait wait;
	/* fi_cntr_wait callers: one leader sleeps on the wait object, the
	 * others on follow_cond (see lfv_cntr.c for why). */
	pthread_mutex_t follow_lock;	/* protects leader and followers */
	pthread_cond_t follow_cond;	/* CLOCK_MONOTONIC */
	bool leader;
	uint32_t followers;
};

/* Opens a counter whose parent keeps a reference count at *parent_ref. */
int lfv_cntr_open(const struct fi_cntr_attr *attr, void *context,
		  lfv_atomic32_t *parent_ref, struct fid_cntr **cntr_fid);

/* fi_trywait for one counter; see the semantics above. */
int lfv_cntr_trywait(struct lfv_cntr *cntr);

/* Set by the transport when an endpoint binds, before any thread reads or
 * waits on the counter through it: the hook is not read atomically. The
 * hook runs in fi_cntr_read/readerr/wait callers, possibly on several
 * threads at once, holding no counter lock; it may call lfv_cntr_inc. */
void lfv_cntr_set_progress(struct lfv_cntr *cntr,
			   struct lfv_progress_hook hook);

/* How long a sleeper may sleep before the progress hook must run again:
 * a short slice when a hook is set, -1 (until signalled) otherwise. Used
 * by fi_cntr_wait and by wait sets. */
int lfv_cntr_wait_ms(const struct lfv_cntr *cntr);

/* Slow path of an update: disarms and signals the wait object. */
void lfv_cntr_wake(struct lfv_cntr *cntr);

/* After every update: wakes only if a sleeper armed the counter. */
static inline void lfv_cntr_updated(struct lfv_cntr *cntr)
{
	/* seq_cst load: with the seq_cst update before it and the seq_cst
	 * arm (exchange) a sleeper does before its check, either this load
	 * sees the arm or the sleeper's check sees the update. */
	if (lfv_load_seqcst32(&cntr->armed))
		lfv_cntr_wake(cntr);
}

/* A peer counter's update: the owner counts (fi_peer(3)), through its
 * ops. Out of line: inlined, its indirect call made every completion
 * handler that counts save all its registers (callgrind: +11
 * instructions a receive with no counter bound). */
__attribute__((noinline, cold)) void lfv_cntr_owner_add(struct lfv_cntr *cntr,
						   bool err);

/* Completion path: one successful / failed operation. Lock-free. */
static inline void lfv_cntr_inc(struct lfv_cntr *cntr)
{
	if (cntr->owner) {
		lfv_cntr_owner_add(cntr, false);
		return;
	}
	/* seq_cst RMW: its release half pairs with the acquire load in
	 * fi_cntr_read; seq_cst orders it before the load of armed. */
	lfv_fetch_add_seqcst64(&cntr->value, 1);
	lfv_cntr_updated(cntr);
}

static inline void lfv_cntr_inc_err(struct lfv_cntr *cntr)
{
	if (cntr->owner) {
		lfv_cntr_owner_add(cntr, true);
		return;
	}
	/* seq_cst RMW: as in lfv_cntr_inc; pairs with fi_cntr_readerr. */
	lfv_fetch_add_seqcst64(&cntr->err, 1);
	lfv_cntr_updated(cntr);
}

/* One operation's outcome on an optional counter (NULL: none bound). */
static inline void lfv_cntr_count(struct lfv_cntr *cntr, bool ok)
{
	if (!cntr)
		return;
	if (ok)
		lfv_cntr_inc(cntr);
	else
		lfv_cntr_inc_err(cntr);
}

static inline struct lfv_cntr *lfv_cntr_from_fid(struct fid_cntr *cntr_fid)
{
	return lfv_container_of(cntr_fid, struct lfv_cntr, cntr_fid);
}

#endif /* LFV_CNTR_H */
