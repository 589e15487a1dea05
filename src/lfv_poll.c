/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Poll sets. Members are lfverbs CQs and counters; each holds a reference
 * on its member, so a CQ or counter in a set cannot close (-FI_EBUSY), and
 * a set with members cannot either. One mutex serialises add, del and
 * fi_poll: a poll set is a control object, not a data path.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_list.h"
#include "lfv_poll.h"
#include "lfv_stubs.h"

struct lfv_poll_member {
	struct lfv_list node;
	struct fid *fid;
	struct lfv_cq *cq;		/* one of cq and cntr */
	struct lfv_cntr *cntr;
	uint64_t seen_value, seen_err;	/* counter: as last reported */
};

struct lfv_poll {
	struct fid_poll poll_fid;
	pthread_mutex_t lock;
	struct lfv_list members;
	struct lfv_progress_hook progress;
	lfv_atomic32_t *parent_ref;
};

static struct lfv_poll *lfv_poll_of(struct fid_poll *poll_fid)
{
	return lfv_container_of(poll_fid, struct lfv_poll, poll_fid);
}

static struct lfv_poll_member *lfv_poll_find(struct lfv_poll *ps,
					     const struct fid *fid)
{
	struct lfv_list *item;
	struct lfv_poll_member *m;

	lfv_list_foreach(item, &ps->members) {
		m = lfv_container_of(item, struct lfv_poll_member, node);
		if (m->fid == fid)
			return m;
	}
	return NULL;
}

static int lfv_poll_add(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct lfv_poll *ps = lfv_poll_of(poll_fid);
	struct lfv_poll_member *m;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (!event_fid || (event_fid->fclass != FI_CLASS_CQ &&
			   event_fid->fclass != FI_CLASS_CNTR))
		return -FI_EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->fid = event_fid;
	if (event_fid->fclass == FI_CLASS_CQ)
		m->cq = lfv_cq_from_fid(lfv_container_of(event_fid,
							 struct fid_cq, fid));
	else
		m->cntr = lfv_cntr_from_fid(lfv_container_of(event_fid,
							     struct fid_cntr,
							     fid));
	pthread_mutex_lock(&ps->lock);
	if (lfv_poll_find(ps, event_fid)) {
		ret = -FI_EALREADY;
		goto unlock;
	}
	if (m->cntr) {
		/* Changes from now on are events; what happened before the
		 * counter joined is not. */
		m->seen_value = fi_cntr_read(&m->cntr->cntr_fid);
		m->seen_err = fi_cntr_readerr(&m->cntr->cntr_fid);
	}
	lfv_ref_get(m->cq ? &m->cq->ref : &m->cntr->ref);
	lfv_list_insert_tail(&ps->members, &m->node);
	m = NULL;
unlock:
	pthread_mutex_unlock(&ps->lock);
	free(m);
	return ret;
}

static int lfv_poll_del(struct fid_poll *poll_fid, struct fid *event_fid,
			uint64_t flags)
{
	struct lfv_poll *ps = lfv_poll_of(poll_fid);
	struct lfv_poll_member *m;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ps->lock);
	m = lfv_poll_find(ps, event_fid);
	if (m)
		lfv_list_remove(&m->node);
	pthread_mutex_unlock(&ps->lock);
	if (!m)
		return -FI_EINVAL;
	lfv_ref_put(m->cq ? &m->cq->ref : &m->cntr->ref);
	free(m);
	return 0;
}

/* A counter is reported once per change; the report moves its mark. */
static bool lfv_poll_cntr_changed(struct lfv_poll_member *m)
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
	struct lfv_poll_member *m;
	struct lfv_list *item;
	int n = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	pthread_mutex_lock(&ps->lock);
	/* The domain's progress moves what its hardware CQs hold into the
	 * rings (and counts it); members' own hooks do the rest (RDM). */
	lfv_progress_run(&ps->progress);
	lfv_list_foreach(item, &ps->members) {
		if (n == count)
			break;
		m = lfv_container_of(item, struct lfv_poll_member, node);
		if (m->cq ? lfv_cq_has_events(m->cq) : lfv_poll_cntr_changed(m))
			context[n++] = m->fid->context;
	}
	pthread_mutex_unlock(&ps->lock);
	return n;
}

static int lfv_poll_close(struct fid *fid)
{
	struct lfv_poll *ps = lfv_container_of(fid, struct lfv_poll,
					       poll_fid.fid);
	bool empty;

	/* fi_poll(3): a set still associated with CQs or counters. */
	pthread_mutex_lock(&ps->lock);
	empty = lfv_list_empty(&ps->members);
	pthread_mutex_unlock(&ps->lock);
	if (!empty)
		return -FI_EBUSY;
	pthread_mutex_destroy(&ps->lock);
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
	if (pthread_mutex_init(&ps->lock, NULL)) {
		free(ps);
		return -FI_ENOMEM;
	}
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &lfv_poll_fi_ops;
	ps->poll_fid.ops = &lfv_poll_ops;
	lfv_list_init(&ps->members);
	ps->progress = progress;
	ps->parent_ref = parent_ref;
	if (parent_ref)
		lfv_ref_get(parent_ref);
	*pollset = &ps->poll_fid;
	return 0;
}
