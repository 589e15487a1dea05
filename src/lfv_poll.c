/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Poll sets and wait sets (fi_poll(3)). Both keep a list of members, one
 * struct lfv_set_member per EQ, CQ or counter, behind one mutex: the list
 * and its lookups are shared here, and so is the way one member is
 * checked.
 *
 * Poll sets: members are CQs and counters added with fi_poll_add; each
 * holds a reference on its member, so a CQ or counter in a set cannot
 * close (-FI_EBUSY), and a set with members cannot either. The mutex
 * serialises add, del and fi_poll: a poll set is a control object.
 *
 * Wait sets: members bind themselves when they open with FI_WAIT_SET and
 * leave when they close, so no reference is held on them; the set cannot
 * close while it has members. See include/lfv_wait_set.h.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_eq.h"
#include "lfv_list.h"
#include "lfv_poll.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

/* ---- the member list shared by both kinds of set --------------------------- */

struct lfv_set_member {
	struct lfv_list node;
	struct fid *fid;
	struct lfv_cq *cq;		/* one of cq, cntr and eq */
	struct lfv_cntr *cntr;
	struct lfv_eq *eq;
	uint64_t seen_value, seen_err;	/* poll set counter: last reported */
};

struct lfv_fid_set {
	pthread_mutex_t lock;
	struct lfv_list members;
};

static int lfv_fid_set_init(struct lfv_fid_set *set)
{
	lfv_list_init(&set->members);
	return pthread_mutex_init(&set->lock, NULL) ? -FI_ENOMEM : 0;
}

static bool lfv_fid_set_empty(struct lfv_fid_set *set)
{
	bool empty;

	pthread_mutex_lock(&set->lock);
	empty = lfv_list_empty(&set->members);
	pthread_mutex_unlock(&set->lock);
	return empty;
}

static struct lfv_set_member *lfv_set_member_of(struct lfv_list *item)
{
	return lfv_container_of(item, struct lfv_set_member, node);
}

/* A member for fid, typed by its class; EQs only where eq_ok (wait
 * sets). -FI_EINVAL for anything else. */
static int lfv_set_member_new(struct fid *fid, bool eq_ok,
			      struct lfv_set_member **out)
{
	struct lfv_set_member *m;

	if (!fid || (fid->fclass != FI_CLASS_CQ &&
		     fid->fclass != FI_CLASS_CNTR &&
		     !(eq_ok && fid->fclass == FI_CLASS_EQ)))
		return -FI_EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->fid = fid;
	if (fid->fclass == FI_CLASS_CQ)
		m->cq = lfv_cq_from_fid(lfv_container_of(fid, struct fid_cq,
							 fid));
	else if (fid->fclass == FI_CLASS_CNTR)
		m->cntr = lfv_cntr_from_fid(lfv_container_of(fid,
							     struct fid_cntr,
							     fid));
	else
		m->eq = lfv_eq_from_fid(lfv_container_of(fid, struct fid_eq,
							 fid));
	*out = m;
	return 0;
}

/* Caller holds the lock. */
static struct lfv_set_member *lfv_fid_set_find(struct lfv_fid_set *set,
					       const struct fid *fid)
{
	struct lfv_list *item;

	lfv_list_foreach(item, &set->members)
		if (lfv_set_member_of(item)->fid == fid)
			return lfv_set_member_of(item);
	return NULL;
}

/* Caller holds the lock. -FI_EALREADY when fid is a member already. */
static int lfv_fid_set_insert(struct lfv_fid_set *set, struct lfv_set_member *m)
{
	if (lfv_fid_set_find(set, m->fid))
		return -FI_EALREADY;
	lfv_list_insert_tail(&set->members, &m->node);
	return 0;
}

/* Unlinks fid's member and hands it to the caller (NULL: not a member). */
static struct lfv_set_member *lfv_fid_set_remove(struct lfv_fid_set *set,
						 const struct fid *fid)
{
	struct lfv_set_member *m;

	pthread_mutex_lock(&set->lock);
	m = lfv_fid_set_find(set, fid);
	if (m)
		lfv_list_remove(&m->node);
	pthread_mutex_unlock(&set->lock);
	return m;
}

/* What may drive a member forward: its own progress hook (the EQ's runs
 * inside its trywait and reads). */
static void lfv_set_member_progress(struct lfv_set_member *m)
{
	if (m->cq)
		lfv_progress_run(&m->cq->progress);
	else if (m->cntr)
		lfv_progress_run(&m->cntr->progress);
}

/* ---- poll sets ------------------------------------------------------------------ */

struct lfv_poll {
	struct fid_poll poll_fid;
	struct lfv_fid_set set;
	struct lfv_progress_hook progress;
	lfv_atomic32_t *parent_ref;
};

static struct lfv_poll *lfv_poll_of(struct fid_poll *poll_fid)
{
	return lfv_container_of(poll_fid, struct lfv_poll, poll_fid);
}

static lfv_atomic32_t *lfv_poll_member_ref(struct lfv_set_member *m)
{
	return m->cq ? &m->cq->ref : &m->cntr->ref;
}

static int lfv_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct lfv_poll *ps = lfv_poll_of(poll_fid);
	struct lfv_set_member *m;
	int ret;

	if (flags)
		return -FI_EBADFLAGS;
	ret = lfv_set_member_new(event_fid, false, &m);
	if (ret)
		return ret;
	pthread_mutex_lock(&ps->set.lock);
	ret = lfv_fid_set_insert(&ps->set, m);
	if (!ret) {
		if (m->cntr) {
			/* Changes from now on are events; what happened
			 * before the counter joined is not. */
			m->seen_value = fi_cntr_read(&m->cntr->cntr_fid);
			m->seen_err = fi_cntr_readerr(&m->cntr->cntr_fid);
		}
		lfv_ref_get(lfv_poll_member_ref(m));
	}
	pthread_mutex_unlock(&ps->set.lock);
	if (ret)
		free(m);
	return ret;
}

static int lfv_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct lfv_poll *ps = lfv_poll_of(poll_fid);
	struct lfv_set_member *m;

	if (flags)
		return -FI_EBADFLAGS;
	m = lfv_fid_set_remove(&ps->set, event_fid);
	if (!m)
		return -FI_EINVAL;
	lfv_ref_put(lfv_poll_member_ref(m));
	free(m);
	return 0;
}

/* A counter is reported once per change; the report moves its mark. */
static bool lfv_poll_cntr_changed(struct lfv_set_member *m)
{
	uint64_t value = fi_cntr_read(&m->cntr->cntr_fid);
	uint64_t err = fi_cntr_readerr(&m->cntr->cntr_fid);

	if (value == m->seen_value && err == m->seen_err)
		return false;
	m->seen_value = value;
	m->seen_err = err;
	return true;
}

static int lfv_poll_poll(struct fid_poll *poll_fid, void **context, int count)
{
	struct lfv_poll *ps = lfv_poll_of(poll_fid);
	struct lfv_set_member *m;
	struct lfv_list *item;
	int n = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	pthread_mutex_lock(&ps->set.lock);
	/* The domain's progress moves what its hardware CQs hold into the
	 * rings (and counts it); members' own hooks do the rest (RDM). */
	lfv_progress_run(&ps->progress);
	lfv_list_foreach(item, &ps->set.members) {
		if (n == count)
			break;
		m = lfv_set_member_of(item);
		if (m->cq ? lfv_cq_has_events(m->cq) : lfv_poll_cntr_changed(m))
			context[n++] = m->fid->context;
	}
	pthread_mutex_unlock(&ps->set.lock);
	return n;
}

static int lfv_poll_close(struct fid *fid)
{
	struct lfv_poll *ps = lfv_container_of(fid, struct lfv_poll,
					       poll_fid.fid);

	/* fi_poll(3): a set still associated with CQs or counters. */
	if (!lfv_fid_set_empty(&ps->set))
		return -FI_EBUSY;
	pthread_mutex_destroy(&ps->set.lock);
	lfv_ref_put(ps->parent_ref);
	free(ps);
	return 0;
}

static struct fi_ops lfv_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_poll_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_poll lfv_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = lfv_poll_poll,
	.poll_add = lfv_poll_add,
	.poll_del = lfv_poll_del,
};

int lfv_poll_open(const struct fi_poll_attr *attr,
		  struct lfv_progress_hook progress, lfv_atomic32_t *parent_ref,
		  struct fid_poll **pollset)
{
	struct lfv_poll *ps;

	if (!pollset)
		return -FI_EINVAL;
	if (attr && attr->flags)
		return -FI_EBADFLAGS;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	if (lfv_fid_set_init(&ps->set)) {
		free(ps);
		return -FI_ENOMEM;
	}
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &lfv_poll_fi_ops;
	ps->poll_fid.ops = &lfv_poll_ops;
	ps->progress = progress;
	ps->parent_ref = parent_ref;
	if (parent_ref)
		lfv_ref_get(parent_ref);
	*pollset = &ps->poll_fid;
	return 0;
}

/* ---- fi_trywait on one object ------------------------------------------------- */

struct lfv_wait_set {
	struct fid_wait wait_fid;
	struct lfv_fid_set set;
	struct lfv_wait wait;		/* FD: epoll over the members'; YIELD */
	lfv_atomic32_t *parent_ref;	/* the fabric's count of children */
};

static int lfv_wait_set_trywait(struct lfv_wait_set *ws);

int lfv_trywait_fid(struct fid *fid)
{
	if (!fid)
		return -FI_EINVAL;
	switch (fid->fclass) {
	case FI_CLASS_EQ:
		return lfv_eq_trywait(lfv_eq_from_fid(
			lfv_container_of(fid, struct fid_eq, fid)));
	case FI_CLASS_CQ:
		return lfv_cq_trywait(lfv_cq_from_fid(
			lfv_container_of(fid, struct fid_cq, fid)));
	case FI_CLASS_CNTR:
		return lfv_cntr_trywait(lfv_cntr_from_fid(
			lfv_container_of(fid, struct fid_cntr, fid)));
	case FI_CLASS_WAIT:
		return lfv_wait_set_trywait(lfv_container_of(
			fid, struct lfv_wait_set, wait_fid.fid));
	default:
		/* Nothing else can be waited on. */
		return -FI_EINVAL;
	}
}

/* ---- wait sets ------------------------------------------------------------------ */

static struct lfv_wait_set *lfv_wait_set_of(struct fid_wait *wait_fid)
{
	return lfv_container_of(wait_fid, struct lfv_wait_set, wait_fid);
}

/* fi_trywait over the members, in order, each after its progress: 0 when
 * all are armed and empty, else the first member's answer. */
static int lfv_wait_set_try_members(struct lfv_wait_set *ws)
{
	struct lfv_set_member *m;
	struct lfv_list *item;
	int ret = 0;

	pthread_mutex_lock(&ws->set.lock);
	lfv_list_foreach(item, &ws->set.members) {
		m = lfv_set_member_of(item);
		lfv_set_member_progress(m);
		ret = lfv_trywait_fid(m->fid);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&ws->set.lock);
	return ret;
}

static int lfv_wait_set_trywait(struct lfv_wait_set *ws)
{
	/* Drain first: a member that signals after its arm below leaves
	 * the set's fd readable. */
	lfv_wait_reset(&ws->wait);
	return lfv_wait_set_try_members(ws);
}

/* The shortest sleep any member allows before its hook must run again
 * (ms), -1 when all of them will signal. */
static int lfv_wait_set_slice_ms(struct lfv_wait_set *ws)
{
	struct lfv_set_member *m;
	struct lfv_list *item;
	int slice = -1, ms;

	pthread_mutex_lock(&ws->set.lock);
	lfv_list_foreach(item, &ws->set.members) {
		m = lfv_set_member_of(item);
		if (m->cq)
			ms = lfv_progress_wait_ms(&m->cq->progress);
		else if (m->cntr)
			ms = lfv_cntr_wait_ms(m->cntr);
		else
			ms = -1;	/* the EQ's source fd is in its epoll */
		if (ms >= 0 && (slice < 0 || ms < slice))
			slice = ms;
	}
	pthread_mutex_unlock(&ws->set.lock);
	return slice;
}

struct lfv_wait_set_arg {
	struct lfv_wait_set *ws;
	int ret;			/* a member's error, else 0 */
};

/* lfv_wait_until's check: true when a member has something (or failed). */
static bool lfv_wait_set_ready(void *arg)
{
	struct lfv_wait_set_arg *a = arg;
	int ret = lfv_wait_set_try_members(a->ws);

	a->ret = ret == -FI_EAGAIN ? 0 : ret;
	return ret != 0;
}

/* fi_wait: 0 once a member may have something to read, -FI_ETIMEDOUT
 * when timeout (ms, < 0: none) passes first, as libfabric's own wait
 * sets and fi_cntr_wait answer. */
static int lfv_wait_set_wait(struct fid_wait *wait_fid, int timeout)
{
	struct lfv_wait_set *ws = lfv_wait_set_of(wait_fid);
	struct lfv_wait_set_arg arg = { .ws = ws };
	int64_t deadline = timeout < 0 ? -1 :
			   lfv_now_ns() + (int64_t)timeout * 1000000;
	int64_t left = -1;
	int slice, ret;

	for (;;) {
		if (deadline >= 0) {
			left = deadline - lfv_now_ns();
			/* ms, rounded up: never return before the deadline */
			left = left > 0 ? (left + 999999) / 1000000 : 0;
		}
		slice = lfv_wait_set_slice_ms(ws);
		if (slice >= 0 && (left < 0 || slice < left))
			left = slice;
		ret = lfv_wait_until(&ws->wait, (int)left, lfv_wait_set_ready,
				     &arg);
		if (ret != -FI_EAGAIN)
			return ret ? ret : arg.ret;
		if (deadline >= 0 && lfv_now_ns() >= deadline)
			return -FI_ETIMEDOUT;
	}
}

static int lfv_wait_set_close(struct fid *fid)
{
	struct lfv_wait_set *ws = lfv_container_of(fid, struct lfv_wait_set,
						   wait_fid.fid);

	/* fi_poll(3): a set still bound to other opened resources. */
	if (!lfv_fid_set_empty(&ws->set))
		return -FI_EBUSY;
	lfv_wait_fini(&ws->wait);
	pthread_mutex_destroy(&ws->set.lock);
	lfv_ref_put(ws->parent_ref);
	free(ws);
	return 0;
}

static int lfv_wait_set_control(struct fid *fid, int command, void *arg)
{
	struct lfv_wait_set *ws = lfv_container_of(fid, struct lfv_wait_set,
						   wait_fid.fid);

	return lfv_wait_control(&ws->wait, command, arg);
}

static struct fi_ops lfv_wait_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_wait_set_close,
	.bind = lfv_no_bind,
	.control = lfv_wait_set_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_wait lfv_wait_set_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = lfv_wait_set_wait,
};

/* The set's own wait object: what fi_wait sleeps on. */
static int lfv_wait_set_check_attr(const struct fi_wait_attr *attr,
				   enum fi_wait_obj *wait_obj)
{
	if (!attr || attr->flags)
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		*wait_obj = FI_WAIT_FD;
		return 0;
	case FI_WAIT_YIELD:
		*wait_obj = FI_WAIT_YIELD;
		return 0;
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_POLLFD:
		/* A condition variable cannot watch the members' fds. */
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;	/* NONE, SET and junk */
	}
}

int lfv_wait_set_open(const struct fi_wait_attr *attr,
		      lfv_atomic32_t *parent_ref, struct fid_wait **waitset)
{
	enum fi_wait_obj wait_obj;
	struct lfv_wait_set *ws;
	int ret;

	if (!waitset)
		return -FI_EINVAL;
	ret = lfv_wait_set_check_attr(attr, &wait_obj);
	if (ret)
		return ret;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ret = lfv_fid_set_init(&ws->set);
	if (ret)
		goto free_ws;
	ret = lfv_wait_init(&ws->wait, wait_obj);
	if (ret)
		goto destroy_lock;
	ws->wait_fid.fid.fclass = FI_CLASS_WAIT;
	ws->wait_fid.fid.ops = &lfv_wait_set_fi_ops;
	ws->wait_fid.ops = &lfv_wait_set_ops;
	ws->parent_ref = parent_ref;
	if (parent_ref)
		lfv_ref_get(parent_ref);
	*waitset = &ws->wait_fid;
	return 0;

destroy_lock:
	pthread_mutex_destroy(&ws->set.lock);
free_ws:
	free(ws);
	return ret;
}

/* The lfverbs wait set behind an attr's wait_set, or NULL. */
static struct lfv_wait_set *lfv_wait_set_from_attr(struct fid_wait *wait_set)
{
	if (!wait_set || wait_set->fid.fclass != FI_CLASS_WAIT ||
	    wait_set->fid.ops != &lfv_wait_set_fi_ops)
		return NULL;
	return lfv_wait_set_of(wait_set);
}

int lfv_wait_select(enum fi_wait_obj requested, struct fid_wait *wait_set,
		    enum fi_wait_obj *resolved)
{
	if (requested != FI_WAIT_SET)
		return lfv_wait_resolve(requested, resolved);
	if (!lfv_wait_set_from_attr(wait_set))
		return -FI_EINVAL;
	/* An fd of the object's own, which joins the set's epoll. */
	*resolved = FI_WAIT_FD;
	return 0;
}

int lfv_wait_set_bind(struct fid_wait *wait_set, struct fid *member,
		      struct lfv_wait *wait)
{
	struct lfv_wait_set *ws = lfv_wait_set_from_attr(wait_set);
	struct lfv_set_member *m;
	int ret;

	if (!wait_set)
		return 0;
	if (!ws || wait->type != FI_WAIT_FD)
		return -FI_EINVAL;
	ret = lfv_set_member_new(member, true, &m);
	if (ret)
		return ret;
	pthread_mutex_lock(&ws->set.lock);
	ret = lfv_wait_add_fd(&ws->wait, wait->epfd);
	if (!ret) {
		ret = lfv_fid_set_insert(&ws->set, m);
		if (ret)
			lfv_wait_del_fd(&ws->wait, wait->epfd);
	}
	pthread_mutex_unlock(&ws->set.lock);
	if (ret) {
		free(m);
		return ret;
	}
	wait->set = ws;
	return 0;
}

void lfv_wait_set_unbind(struct lfv_wait *wait, struct fid *member)
{
	struct lfv_wait_set *ws = wait->set;
	struct lfv_set_member *m;

	if (!ws)
		return;
	m = lfv_fid_set_remove(&ws->set, member);
	if (m)
		lfv_wait_del_fd(&ws->wait, wait->epfd);
	free(m);
	wait->set = NULL;
}
