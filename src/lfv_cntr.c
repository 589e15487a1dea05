/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Counters. Why the wake-up cannot be lost:
 *
 * An updater does U = seq_cst RMW/store on value (or err), then L = seq_cst
 * load of armed; if L reads 1 it exchanges armed to 0 and, if that returned
 * 1, signals the wait object. A sleeper first empties the wait object (the
 * FD drain in lfv_wait_until or fi_trywait), then does A = seq_cst exchange
 * of armed to 1, then C = seq_cst loads of value and err, and sleeps only if
 * C found nothing. All of these are seq_cst, so they sit in one total order
 * S that agrees with program order:
 *  - U before A in S: then U is before C, and C sees the update.
 *  - A before L in S: L reads A's 1 or a later 0. A 0 means some updater's
 *    exchange consumed A after A, and that updater signals; a 1 means this
 *    updater or a competitor wins the exchange after A and signals. Either
 *    way a signal is sent after A, hence after the drain, and the sleeper
 *    wakes (the FD stays readable; the MUTEX_COND broadcast needs the mutex
 *    the sleeper holds across C and pthread_cond_wait).
 * U precedes L in program order, so one of the two cases always holds. The
 * woken sleeper drains and arms again, so every later update is covered too.
 *
 * Several fi_cntr_wait callers: an FD wakes one epoll_wait and the woken
 * thread drains it, so the others could sleep through an update meant for
 * them. Hence only one caller (the leader) sleeps on the wait object; the
 * others (followers) sleep on follow_cond, and the leader broadcasts it
 * after every arm, i.e. every time it wakes. A follower checks the counter
 * under follow_lock, the leader broadcasts under it after arming, so by the
 * argument above a follower either sees an update or is asleep when the
 * broadcast that follows it comes. A leaving leader hands over by
 * broadcasting, and a follower that finds no leader becomes one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_errno.h>

#include "lfv_cntr.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

/*
 * With a progress hook set (FI_PROGRESS_MANUAL), updates may only appear
 * when somebody calls the hook, so a waiter cannot sleep on the wait object
 * alone: it sleeps at most this long, then polls. Without a hook it sleeps
 * until signalled or the deadline. fi_cntr_wait doubles its slice after
 * each one that found nothing, up to the MAX: a completion nobody else
 * reports then waits at most about as long again as the wait had lasted,
 * and an idle wait wakes some 30 times a second, not 1000 (issue 18:
 * ranks sharing a core).
 */
#define LFV_CNTR_PROGRESS_SLICE_MS 1
#define LFV_CNTR_PROGRESS_SLICE_MAX_MS 32

#define LFV_NS_PER_MS 1000000LL
#define LFV_NS_PER_S 1000000000LL

/* Still waiting; wait results are 0 or negative. */
#define LFV_CNTR_PENDING 1

struct lfv_cntr_waiter {
	struct lfv_cntr *cntr;
	uint64_t threshold;
	uint64_t err_seen;	/* error count at entry */
	int64_t deadline;	/* CLOCK_MONOTONIC ns; -1: none */
	int status;		/* LFV_CNTR_PENDING, 0 or -FI_EAVAIL */
};

void lfv_cntr_wake(struct lfv_cntr *cntr)
{
	/* seq_cst exchange: pairs with the seq_cst exchange that armed
	 * (lfv_cntr_arm, lfv_cntr_trywait); only the updater that consumes
	 * the arm pays for the signal. */
	if (lfv_exchange_seqcst32(&cntr->armed, 0))
		lfv_wait_signal(&cntr->wait);
}

__attribute__((noinline, cold)) void
lfv_cntr_owner_add(struct lfv_cntr *cntr, bool err)
{
	if (err)
		cntr->owner->owner_ops->incerr(cntr->owner);
	else
		cntr->owner->owner_ops->inc(cntr->owner);
}

static void lfv_cntr_arm(struct lfv_cntr *cntr)
{
	/* seq_cst exchange: pairs with the seq_cst load in lfv_cntr_updated
	 * and the exchange in lfv_cntr_wake; precedes the check in S. */
	lfv_exchange_seqcst32(&cntr->armed, 1);
}

/* Records why the wait is over, if it is. */
static bool lfv_cntr_reached(struct lfv_cntr_waiter *w)
{
	/* seq_cst loads: the check C of the handshake; they pair with the
	 * seq_cst RMW/store of every update. */
	if (lfv_load_seqcst64(&w->cntr->value) >= w->threshold)
		w->status = 0;
	else if (lfv_load_seqcst64(&w->cntr->err) != w->err_seen)
		w->status = -FI_EAVAIL;
	return w->status != LFV_CNTR_PENDING;
}

static void lfv_cntr_wake_followers(struct lfv_cntr *cntr)
{
	pthread_mutex_lock(&cntr->follow_lock);
	if (cntr->followers)
		pthread_cond_broadcast(&cntr->follow_cond);
	pthread_mutex_unlock(&cntr->follow_lock);
}

/* The leader's check, run by lfv_wait_until after each drain/wake-up. For
 * MUTEX_COND it runs under the wait mutex (lock order: wait mutex, then
 * follow_lock), so the progress hook, which may update the counter and so
 * take the wait mutex, must not run here except for YIELD. */
static bool lfv_cntr_lead_ready(void *arg)
{
	struct lfv_cntr_waiter *w = arg;
	struct lfv_cntr *cntr = w->cntr;

	if (cntr->wait.type == FI_WAIT_YIELD) {
		/* Spinning anyway and holding no lock: progress every turn;
		 * nothing sleeps on the object, so nothing needs arming. */
		lfv_progress_run(&cntr->progress);
	} else {
		lfv_cntr_arm(cntr);
	}
	lfv_cntr_wake_followers(cntr);
	return lfv_cntr_reached(w);
}

int lfv_cntr_wait_ms(const struct lfv_cntr *cntr)
{
	return cntr->progress.fn ? LFV_CNTR_PROGRESS_SLICE_MS : -1;
}

/* How long the leader may sleep next, at most slice (-1: no limit): -1
 * forever, 0 when time is up. */
static int lfv_cntr_slice_ms(const struct lfv_cntr_waiter *w, int slice)
{
	int64_t left, left_ms;

	if (w->deadline < 0)
		return slice;
	left = w->deadline - lfv_now_ns();
	if (left <= 0)
		return 0;
	/* Round up, so that a wait never ends before its deadline. */
	left_ms = (left + LFV_NS_PER_MS - 1) / LFV_NS_PER_MS;
	return slice > 0 && slice < left_ms ? slice : (int)left_ms;
}

/* Sleeps on the wait object until the wait is over or time is up. */
static int lfv_cntr_lead(struct lfv_cntr_waiter *w)
{
	int step = lfv_cntr_wait_ms(w->cntr), slice, ret;

	for (;;) {
		slice = lfv_cntr_slice_ms(w, step);
		if (slice == 0)
			return -FI_EAGAIN;
		ret = lfv_wait_until(&w->cntr->wait, slice,
				     lfv_cntr_lead_ready, w);
		if (ret != -FI_EAGAIN)
			return ret;
		lfv_progress_run(&w->cntr->progress);
		if (step > 0 && step < LFV_CNTR_PROGRESS_SLICE_MAX_MS)
			step *= 2;
	}
}

/* Caller holds follow_lock. Returns false once the deadline has passed. */
static bool lfv_cntr_follower_sleep(struct lfv_cntr *cntr, int64_t deadline)
{
	struct timespec ts;

	if (deadline < 0) {
		pthread_cond_wait(&cntr->follow_cond, &cntr->follow_lock);
		return true;
	}
	ts.tv_sec = deadline / LFV_NS_PER_S;
	ts.tv_nsec = deadline % LFV_NS_PER_S;
	return pthread_cond_timedwait(&cntr->follow_cond, &cntr->follow_lock,
				      &ts) != ETIMEDOUT;
}

/* Sleeps while another caller leads. Returns true when the caller must
 * lead: the wait is not over and nobody else leads. */
static bool lfv_cntr_follow(struct lfv_cntr_waiter *w)
{
	struct lfv_cntr *cntr = w->cntr;
	bool lead = false;

	pthread_mutex_lock(&cntr->follow_lock);
	cntr->followers++;
	while (!lfv_cntr_reached(w)) {
		if (!cntr->leader) {
			cntr->leader = true;
			lead = true;
			break;
		}
		if (!lfv_cntr_follower_sleep(cntr, w->deadline))
			break;
	}
	cntr->followers--;
	pthread_mutex_unlock(&cntr->follow_lock);
	return lead;
}

static void lfv_cntr_resign(struct lfv_cntr *cntr)
{
	pthread_mutex_lock(&cntr->follow_lock);
	cntr->leader = false;
	/* A follower still waiting takes over. */
	if (cntr->followers)
		pthread_cond_broadcast(&cntr->follow_cond);
	pthread_mutex_unlock(&cntr->follow_lock);
}

static int lfv_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold,
			 int timeout)
{
	struct lfv_cntr *cntr = lfv_cntr_from_fid(cntr_fid);
	struct lfv_cntr_waiter w = {
		.cntr = cntr,
		.threshold = threshold,
		.deadline = timeout < 0 ? -1 :
			lfv_now_ns() + timeout * LFV_NS_PER_MS,
		.status = LFV_CNTR_PENDING,
	};
	int ret = -FI_EAGAIN;

	/* fi_cntr(3): waiting on an FI_WAIT_NONE counter is invalid (the
	 * same answer as fi_cq_sread and fi_eq_sread). */
	if (cntr->wait.type == FI_WAIT_NONE)
		return -FI_EINVAL;
	/* seq_cst load: pairs with the seq_cst RMW/store of error updates;
	 * only a change after this point ends the wait with -FI_EAVAIL. */
	w.err_seen = lfv_load_seqcst64(&cntr->err);
	lfv_progress_run(&cntr->progress);
	if (!lfv_cntr_reached(&w) && lfv_cntr_follow(&w)) {
		ret = lfv_cntr_lead(&w);
		lfv_cntr_resign(cntr);
	}
	/* One last look: an update may have come with the deadline. */
	if (w.status == LFV_CNTR_PENDING)
		lfv_cntr_reached(&w);
	if (w.status != LFV_CNTR_PENDING)
		return w.status;
	return ret == -FI_EAGAIN ? -FI_ETIMEDOUT : ret;
}

static uint64_t lfv_cntr_read(struct fid_cntr *cntr_fid)
{
	struct lfv_cntr *cntr = lfv_cntr_from_fid(cntr_fid);

	lfv_progress_run(&cntr->progress);
	/* acquire: pairs with the release half of the seq_cst RMW/store of
	 * each update, so the data the update announces is visible. */
	return lfv_load_acquire64(&cntr->value);
}

static uint64_t lfv_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct lfv_cntr *cntr = lfv_cntr_from_fid(cntr_fid);

	/* Errors are found by progress too. */
	lfv_progress_run(&cntr->progress);
	/* acquire: pairs with the seq_cst RMW/store of each error update. */
	return lfv_load_acquire64(&cntr->err);
}

/* fi_cntr_add/set/adderr/seterr: a seq_cst RMW (set: store) to the value
 * (err: the error count), the update U of the handshake; pairs with the
 * loads in fi_cntr_read/readerr and lfv_cntr_reached. */
static int lfv_cntr_update(struct fid_cntr *cntr_fid, bool err, bool set,
			   uint64_t value)
{
	struct lfv_cntr *cntr = lfv_cntr_from_fid(cntr_fid);
	lfv_atomic64_t *word = err ? &cntr->err : &cntr->value;

	if (set)
		lfv_store_seqcst64(word, value);
	else
		lfv_fetch_add_seqcst64(word, value);
	lfv_cntr_updated(cntr);
	return 0;
}

static int lfv_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	return lfv_cntr_update(cntr_fid, false, false, value);
}

static int lfv_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	return lfv_cntr_update(cntr_fid, false, true, value);
}

static int lfv_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return lfv_cntr_update(cntr_fid, true, false, value);
}

static int lfv_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	return lfv_cntr_update(cntr_fid, true, true, value);
}

int lfv_cntr_trywait(struct lfv_cntr *cntr)
{
	if (cntr->wait.type != FI_WAIT_FD &&
	    cntr->wait.type != FI_WAIT_MUTEX_COND)
		return -FI_EINVAL;
	/* Drain before arming: a signal sent after the arm stays pending.
	 * No wait-mutex here: the application may hold it while calling. */
	lfv_wait_reset(&cntr->wait);
	/* What the hardware already holds counts as an update since the
	 * last arm (it consumes that arm). */
	lfv_progress_run(&cntr->progress);
	/* seq_cst exchange: arm A of the handshake; pairs with the exchange
	 * in lfv_cntr_wake. Reading 0 means an update consumed the previous
	 * arm, i.e. the counter changed since then. */
	if (!lfv_exchange_seqcst32(&cntr->armed, 1))
		return -FI_EAGAIN;
	/* Under manual progress nothing moves completions while the
	 * application sleeps on the fd: make it readable after the slice
	 * fi_cntr_wait sleeps, so that the application reads (progress). */
	if (cntr->progress.fn)
		return lfv_wait_arm_timer(&cntr->wait,
					  LFV_CNTR_PROGRESS_SLICE_MS);
	return 0;
}

void lfv_cntr_set_progress(struct lfv_cntr *cntr,
			   struct lfv_progress_hook hook)
{
	cntr->progress = hook;
}

static int lfv_cntr_close(struct fid *fid)
{
	struct lfv_cntr *cntr =
		lfv_container_of(fid, struct lfv_cntr, cntr_fid.fid);

	if (lfv_ref_read(&cntr->ref) > 1)
		return -FI_EBUSY;
	lfv_wait_set_unbind(&cntr->wait, fid);
	pthread_cond_destroy(&cntr->follow_cond);
	pthread_mutex_destroy(&cntr->follow_lock);
	lfv_wait_fini(&cntr->wait);
	lfv_ref_put(cntr->parent_ref);
	free(cntr);
	return 0;
}

/* ---- peer counters (fi_peer(3), 1.19 on) -------------------------------- */

/* Owner role: what the peer's inc/incerr calls reach. */
static struct lfv_cntr *lfv_cntr_of_peer(struct fid_peer_cntr *peer)
{
	return lfv_container_of(peer, struct lfv_cntr, peer_cntr);
}

static void lfv_cntr_owner_inc(struct fid_peer_cntr *peer)
{
	lfv_cntr_inc(lfv_cntr_of_peer(peer));
}

static void lfv_cntr_owner_incerr(struct fid_peer_cntr *peer)
{
	lfv_cntr_inc_err(lfv_cntr_of_peer(peer));
}

static struct fi_ops_cntr_owner lfv_cntr_owner_ops = {
	.size = sizeof(struct fi_ops_cntr_owner),
	.inc = lfv_cntr_owner_inc,
	.incerr = lfv_cntr_owner_incerr,
};

/* fi_export_fid: a fid_peer_cntr for a peer provider; it is part of the
 * counter (closing it does nothing; close the peer's counter first). */
static int lfv_cntr_export(struct lfv_cntr *cntr, struct fi_fid_export *exp)
{
	if (!exp || !exp->fid || !lfv_peer_allowed())
		return -FI_EINVAL;
	if (!LFV_PEER_CNTR_SUPPORTED)
		return -FI_ENOSYS;
	return lfv_part_export(&cntr->peer_cntr.fid, cntr->owner != NULL,
			       exp->flags, exp->context, exp->fid);
}

static int lfv_cntr_control(struct fid *fid, int command, void *arg)
{
	struct lfv_cntr *cntr =
		lfv_container_of(fid, struct lfv_cntr, cntr_fid.fid);

	if (command == FI_EXPORT_FID)
		return lfv_cntr_export(cntr, arg);
	if (cntr->owner)
		return -FI_ENOSYS;
	return lfv_wait_control(&cntr->wait, command, arg);
}

/* Peer role: the count is the owner's; a read only drives progress. */
static uint64_t lfv_peer_cntr_read(struct fid_cntr *cntr_fid)
{
	lfv_progress_run(&lfv_cntr_from_fid(cntr_fid)->progress);
	return 0;
}

LFV_STUB(static int, lfv_peer_cntr_update, -FI_ENOSYS,
	 struct fid_cntr *cntr_fid, uint64_t value)
LFV_STUB(static int, lfv_peer_cntr_wait, -FI_ENOSYS, struct fid_cntr *cntr_fid,
	 uint64_t threshold, int timeout)

static struct fi_ops_cntr lfv_peer_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = lfv_peer_cntr_read,
	.readerr = lfv_peer_cntr_read,
	.add = lfv_peer_cntr_update,
	.set = lfv_peer_cntr_update,
	.wait = lfv_peer_cntr_wait,
	.adderr = lfv_peer_cntr_update,
	.seterr = lfv_peer_cntr_update,
};

/* The owner named by an FI_PEER open's context, or -FI_EINVAL. */
static int lfv_cntr_peer_owner(void *context, struct fid_peer_cntr **owner)
{
	struct fi_peer_cntr_context *peer = context;

	if (!LFV_PEER_CNTR_SUPPORTED || !lfv_peer_allowed() || !peer ||
	    peer->size < sizeof(*peer) || !peer->cntr ||
	    !peer->cntr->owner_ops || !peer->cntr->owner_ops->inc ||
	    !peer->cntr->owner_ops->incerr)
		return -FI_EINVAL;
	*owner = peer->cntr;
	return 0;
}

static struct fi_ops lfv_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_cntr_close,
	.bind = lfv_no_bind,
	.control = lfv_cntr_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_cntr lfv_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = lfv_cntr_read,
	.readerr = lfv_cntr_readerr,
	.add = lfv_cntr_add,
	.set = lfv_cntr_set,
	.wait = lfv_cntr_wait,
	.adderr = lfv_cntr_adderr,
	.seterr = lfv_cntr_seterr,
};

static int lfv_cntr_check_attr(const struct fi_cntr_attr *attr,
			       enum fi_wait_obj *wait_obj)
{
	int ret;

	/* fi_cntr(3): "The default is FI_WAIT_NONE". */
	if (!attr) {
		*wait_obj = FI_WAIT_NONE;
		return 0;
	}
	if (attr->events != FI_CNTR_EVENTS_COMP) {
		LFV_WARN(FI_LOG_CNTR, "unsupported counter events %d\n",
			 attr->events);
		return -FI_ENOSYS;
	}
	if (attr->flags & FI_PEER) {
		*wait_obj = FI_WAIT_NONE;	/* the owner does the waiting */
		return 0;
	}
	if (attr->flags) {
		LFV_WARN(FI_LOG_CNTR, "counter flags must be 0 or FI_PEER, not 0x%llx\n",
			 (unsigned long long)attr->flags);
		return -FI_EINVAL;
	}
	ret = lfv_wait_select(attr->wait_obj, attr->wait_set, wait_obj);
	if (ret)
		LFV_WARN(FI_LOG_CNTR, "unsupported counter wait object %d\n",
			 attr->wait_obj);
	return ret;
}

/* follow_cond times out on CLOCK_MONOTONIC, like the deadlines. */
static int lfv_cntr_init_follow_cond(pthread_cond_t *cond)
{
	pthread_condattr_t cattr;
	int ret;

	ret = -pthread_condattr_init(&cattr);
	if (ret)
		return ret;
	ret = -pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	if (!ret)
		ret = -pthread_cond_init(cond, &cattr);
	pthread_condattr_destroy(&cattr);
	return ret;
}

int lfv_cntr_open(const struct fi_cntr_attr *attr, void *context,
		  lfv_atomic32_t *parent_ref, struct fid_cntr **cntr_fid)
{
	struct fid_peer_cntr *owner = NULL;
	enum fi_wait_obj wait_obj;
	struct lfv_cntr *cntr;
	int ret;

	if (!parent_ref || !cntr_fid)
		return -FI_EINVAL;
	ret = lfv_cntr_check_attr(attr, &wait_obj);
	if (ret)
		return ret;
	if (attr && (attr->flags & FI_PEER)) {
		ret = lfv_cntr_peer_owner(context, &owner);
		if (ret)
			return ret;
	}

	/* The hot line must really be a line of its own. */
	cntr = aligned_alloc(LFV_CACHELINE, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	memset(cntr, 0, sizeof(*cntr));
	ret = -pthread_mutex_init(&cntr->follow_lock, NULL);
	if (ret)
		goto free_cntr;
	ret = lfv_cntr_init_follow_cond(&cntr->follow_cond);
	if (ret)
		goto destroy_follow_lock;
	ret = lfv_wait_init(&cntr->wait, wait_obj);
	if (ret)
		goto destroy_follow_cond;

	atomic_init(&cntr->value, 0);
	atomic_init(&cntr->err, 0);
	/* Armed from the start: the first update signals, and a first
	 * fi_trywait succeeds only if nothing changed since open. */
	atomic_init(&cntr->armed, 1);
	atomic_init(&cntr->ref, 1);
	cntr->parent_ref = parent_ref;
	lfv_fid_init(&cntr->cntr_fid.fid, FI_CLASS_CNTR,
		     context, &lfv_cntr_fi_ops);
	cntr->cntr_fid.ops = owner ? &lfv_peer_cntr_ops : &lfv_cntr_ops;
	cntr->owner = owner;
	cntr->peer_cntr.fid.fclass = LFV_CLASS_PEER_CNTR;
	cntr->peer_cntr.fid.ops = &lfv_part_fi_ops;
	cntr->peer_cntr.owner_ops = &lfv_cntr_owner_ops;
	/* Last: a wait set's fi_wait may look at the counter from now on. */
	if (attr && attr->wait_obj == FI_WAIT_SET) {
		ret = lfv_wait_set_bind(attr->wait_set, &cntr->cntr_fid.fid,
					&cntr->wait);
		if (ret)
			goto fini_wait;
	}
	lfv_ref_get(parent_ref);
	*cntr_fid = &cntr->cntr_fid;
	return 0;

fini_wait:
	lfv_wait_fini(&cntr->wait);
destroy_follow_cond:
	pthread_cond_destroy(&cntr->follow_cond);
destroy_follow_lock:
	pthread_mutex_destroy(&cntr->follow_lock);
free_cntr:
	free(cntr);
	return ret;
}
