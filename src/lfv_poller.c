/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Background epoll threads: see include/lfv_poller.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_log.h"
#include "lfv_poller.h"

static void *lfv_poller_main(void *arg)
{
	struct lfv_poller *p = arg;
	struct epoll_event ev[8];
	int n, i;

	uint64_t kicks;
	int tick;

	for (;;) {
		/* Relaxed: pairs with nothing; a new tick comes with a kick,
		 * whose eventfd write and read order it. */
		tick = (int)lfv_load_relaxed32(&p->tick_ms);
		n = epoll_wait(p->epfd, ev, 8, tick > 0 ? tick : -1);
		if (n < 0 && errno != EINTR) {
			LFV_WARN(FI_LOG_CORE, "progress thread: epoll: %d\n",
				 errno);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == p->stop_fd)
				return NULL;
			if (ev[i].data.fd == p->kick_fd &&
			    read(p->kick_fd, &kicks, sizeof(kicks)) < 0)
				LFV_DBG(FI_LOG_CORE, "kick: %d\n", errno);
		}
		/* n == 0: a tick passed. */
		if (n >= 0)
			p->run(p->arg);
	}
}

/* An eventfd in the epoll set: 0 and *fd, or an error and nothing. */
static int lfv_poller_eventfd(struct lfv_poller *p, int flags, int *fd)
{
	int efd = eventfd(0, EFD_CLOEXEC | flags), ret;

	if (efd < 0)
		return -FI_EMFILE;
	ret = lfv_poller_add(p, efd);
	if (ret) {
		close(efd);
		return ret;
	}
	*fd = efd;
	return 0;
}

int lfv_poller_start(struct lfv_poller *p, void (*run)(void *arg), void *arg)
{
	int ret;

	if (p->running)
		return 0;
	p->run = run;
	p->arg = arg;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		return -FI_EMFILE;
	ret = lfv_poller_eventfd(p, 0, &p->stop_fd);
	if (ret)
		goto close_epfd;
	/* Non-blocking: the thread drains it without waiting. */
	ret = lfv_poller_eventfd(p, EFD_NONBLOCK, &p->kick_fd);
	if (ret)
		goto close_stop;
	ret = -pthread_create(&p->thread, NULL, lfv_poller_main, p);
	if (ret)
		goto close_kick;
	p->running = true;
	return 0;

close_kick:
	close(p->kick_fd);
close_stop:
	close(p->stop_fd);
close_epfd:
	close(p->epfd);
	return ret;
}

int lfv_poller_add(struct lfv_poller *p, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void lfv_poller_del(struct lfv_poller *p, int fd)
{
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void lfv_poller_set_tick(struct lfv_poller *p, int ms)
{
	uint64_t one = 1;

	/* Relaxed: the kick below tells the thread to read it again. */
	lfv_store_relaxed32(&p->tick_ms, ms > 0 ? (uint32_t)ms : 0);
	if (p->running && write(p->kick_fd, &one, sizeof(one)) < 0)
		LFV_WARN(FI_LOG_CORE, "cannot wake a progress thread\n");
}

void lfv_poller_stop(struct lfv_poller *p)
{
	uint64_t one = 1;

	if (!p->running)
		return;
	if (write(p->stop_fd, &one, sizeof(one)) != sizeof(one))
		LFV_WARN(FI_LOG_CORE, "cannot stop a progress thread\n");
	pthread_join(p->thread, NULL);
	close(p->kick_fd);
	close(p->stop_fd);
	close(p->epfd);
	p->running = false;
}

int lfv_fd_set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -FI_EIO;
	return 0;
}
