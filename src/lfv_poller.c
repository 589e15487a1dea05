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

	for (;;) {
		n = epoll_wait(p->epfd, ev, 8, -1);
		if (n < 0 && errno != EINTR) {
			LFV_WARN(FI_LOG_CORE, "progress thread: epoll: %d\n",
				 errno);
			return NULL;
		}
		for (i = 0; i < n; i++)
			if (ev[i].data.fd == p->stop_fd)
				return NULL;
		if (n > 0)
			p->run(p->arg);
	}
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
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (p->stop_fd < 0) {
		ret = -FI_EMFILE;
		goto close_epfd;
	}
	ret = lfv_poller_add(p, p->stop_fd);
	if (ret)
		goto close_stop;
	ret = -pthread_create(&p->thread, NULL, lfv_poller_main, p);
	if (ret)
		goto close_stop;
	p->running = true;
	return 0;

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

void lfv_poller_stop(struct lfv_poller *p)
{
	uint64_t one = 1;

	if (!p->running)
		return;
	if (write(p->stop_fd, &one, sizeof(one)) != sizeof(one))
		LFV_WARN(FI_LOG_CORE, "cannot stop a progress thread\n");
	pthread_join(p->thread, NULL);
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
