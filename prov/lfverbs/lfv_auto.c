/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The progress thread of a domain. It runs when the domain asked for
 * FI_PROGRESS_AUTO data progress, or when a CQ whose wait object cannot
 * watch a completion channel (FI_WAIT_MUTEX_COND) gets a hardware source:
 * then nobody reading the CQ would otherwise notice completions. It sleeps
 * in epoll on the completion channels of those verbs CQs, and on an event
 * re-arms the CQ and moves its completions into the ring, which wakes the
 * CQ's waiters.
 *
 * Sources without an fd (an RDM endpoint's shm peer, which progresses only
 * when its CQ is read) set the poller's tick: the thread then also runs
 * the domain's progress (lfv_rdm_domain_progress) every LFV_AUTO_TICK_MS.
 *
 * The thread (an lfv_poller) handles events only under domain->vcq_lock,
 * walking the list: a vcq leaves the list and the epoll set under that
 * lock before it is destroyed.
 */
#include "lfv_auto.h"
#include "lfv_errno.h"
#include "lfv_queue.h"
#include "lfv_vcq.h"

/* The poller's run: every watched vcq of the domain; with sources that
 * have no fd, the domain's whole progress (which takes vcq_lock itself). */
static void lfv_auto_run_all(void *arg)
{
	struct lfv_domain *domain = arg;
	struct lfv_list *item;
	struct lfv_vcq *vcq;
	bool ticked;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->vcqs) {
		vcq = lfv_container_of(item, struct lfv_vcq, node);
		if (vcq->auto_on)
			lfv_vcq_auto_event(vcq);
	}
	ticked = domain->auto_ticked != 0;
	pthread_mutex_unlock(&domain->vcq_lock);
	if (ticked)
		domain->progress.fn(domain->progress.arg);
}

void lfv_auto_ticked(struct lfv_domain *domain, bool on)
{
	pthread_mutex_lock(&domain->vcq_lock);
	domain->auto_ticked += on ? 1 : -1u;
	lfv_poller_set_tick(&domain->auto_poller,
			    domain->auto_ticked ? LFV_AUTO_TICK_MS : 0);
	pthread_mutex_unlock(&domain->vcq_lock);
}

/* Puts a vcq (with a channel) under the thread; vcq_lock held. */
int lfv_auto_add(struct lfv_domain *domain, struct lfv_vcq *vcq)
{
	int ret;

	ret = lfv_poller_start(&domain->auto_poller, lfv_auto_run_all,
			       domain);
	if (ret)
		return ret;
	ret = lfv_poller_add(&domain->auto_poller, vcq->channel->fd);
	if (ret)
		return ret;
	ret = lfv_verbs_ret(ibv_req_notify_cq(vcq->ibv_cq, 0));
	if (ret) {
		lfv_poller_del(&domain->auto_poller, vcq->channel->fd);
		return ret;
	}
	vcq->auto_on = true;
	return 0;
}

/* vcq_lock held. */
void lfv_auto_del(struct lfv_domain *domain, struct lfv_vcq *vcq)
{
	if (!vcq->auto_on)
		return;
	lfv_poller_del(&domain->auto_poller, vcq->channel->fd);
	vcq->auto_on = false;
}

/* At domain close, after every vcq is gone. */
void lfv_auto_stop(struct lfv_domain *domain)
{
	lfv_poller_stop(&domain->auto_poller);
}
