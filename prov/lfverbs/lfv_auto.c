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
 * The thread handles events only under domain->vcq_lock, walking the list
 * rather than trusting epoll's pointers: a vcq leaves the list and the
 * epoll set under that lock before it is destroyed.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_log.h"

static void lfv_auto_run_all(struct lfv_domain *domain)
{
	struct lfv_list *item;
	struct lfv_vcq *vcq;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->vcqs) {
		vcq = lfv_container_of(item, struct lfv_vcq, node);
		if (vcq->auto_on)
			lfv_vcq_auto_event(vcq);
	}
	pthread_mutex_unlock(&domain->vcq_lock);
}

static void *lfv_auto_thread(void *arg)
{
	struct lfv_domain *domain = arg;
	struct epoll_event ev[8];
	bool stop = false;
	int n, i;

	while (!stop) {
		n = epoll_wait(domain->auto_epfd, ev, 8, -1);
		if (n < 0 && errno != EINTR) {
			LFV_WARN(FI_LOG_DOMAIN, "progress thread: epoll: %d\n",
				 errno);
			break;
		}
		for (i = 0; i < n; i++)
			if (ev[i].data.ptr == NULL)
				stop = true;
		if (!stop && n > 0)
			lfv_auto_run_all(domain);
	}
	return NULL;
}

/* Starts the thread once; called with domain->vcq_lock held. */
static int lfv_auto_start(struct lfv_domain *domain)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int ret;

	if (domain->auto_running)
		return 0;
	domain->auto_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (domain->auto_epfd < 0)
		return -FI_EMFILE;
	domain->auto_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (domain->auto_stop_fd < 0) {
		ret = -FI_EMFILE;
		goto close_epfd;
	}
	if (epoll_ctl(domain->auto_epfd, EPOLL_CTL_ADD, domain->auto_stop_fd,
		      &ev)) {
		ret = -errno;
		goto close_stop;
	}
	ret = -pthread_create(&domain->auto_thread, NULL, lfv_auto_thread,
			      domain);
	if (ret)
		goto close_stop;
	domain->auto_running = true;
	return 0;

close_stop:
	close(domain->auto_stop_fd);
close_epfd:
	close(domain->auto_epfd);
	return ret;
}

/* Puts a vcq (with a channel) under the thread; vcq_lock held. */
int lfv_auto_add(struct lfv_domain *domain, struct lfv_vcq *vcq)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = vcq };
	int ret;

	ret = lfv_auto_start(domain);
	if (ret)
		return ret;
	if (epoll_ctl(domain->auto_epfd, EPOLL_CTL_ADD, vcq->channel->fd, &ev))
		return -errno;
	ret = lfv_verbs_ret(ibv_req_notify_cq(vcq->ibv_cq, 0));
	if (ret) {
		epoll_ctl(domain->auto_epfd, EPOLL_CTL_DEL, vcq->channel->fd,
			  NULL);
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
	epoll_ctl(domain->auto_epfd, EPOLL_CTL_DEL, vcq->channel->fd, NULL);
	vcq->auto_on = false;
}

/* At domain close, after every vcq is gone. */
void lfv_auto_stop(struct lfv_domain *domain)
{
	uint64_t one = 1;

	if (!domain->auto_running)
		return;
	if (write(domain->auto_stop_fd, &one, sizeof(one)) != sizeof(one))
		LFV_WARN(FI_LOG_DOMAIN, "cannot stop the progress thread\n");
	pthread_join(domain->auto_thread, NULL);
	close(domain->auto_stop_fd);
	close(domain->auto_epfd);
	domain->auto_running = false;
}
