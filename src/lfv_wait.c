/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_wait.h"

int lfv_wait_resolve(enum fi_wait_obj requested, enum fi_wait_obj *resolved)
{
	switch (requested) {
	case FI_WAIT_NONE:
	case FI_WAIT_FD:
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
		*resolved = requested;
		return 0;
	case FI_WAIT_UNSPEC:
		*resolved = FI_WAIT_FD;
		return 0;
	case FI_WAIT_POLLFD:
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}
}

static int lfv_wait_init_fd(struct lfv_wait *wait)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	wait->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (wait->epfd < 0)
		return -errno;
	wait->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wait->evfd < 0) {
		ret = -errno;
		goto close_epfd;
	}
	ev.data.fd = wait->evfd;
	if (epoll_ctl(wait->epfd, EPOLL_CTL_ADD, wait->evfd, &ev)) {
		ret = -errno;
		goto close_evfd;
	}
	return 0;

close_evfd:
	close(wait->evfd);
close_epfd:
	close(wait->epfd);
	return ret;
}

int lfv_wait_init(struct lfv_wait *wait, enum fi_wait_obj type)
{
	int ret;

	memset(wait, 0, sizeof(*wait));
	wait->epfd = -1;
	wait->evfd = -1;
	wait->tfd = -1;
	wait->type = type;

	switch (type) {
	case FI_WAIT_FD:
		return lfv_wait_init_fd(wait);
	case FI_WAIT_MUTEX_COND:
		ret = -pthread_mutex_init(&wait->mutex, NULL);
		if (ret)
			return ret;
		ret = -pthread_cond_init(&wait->cond, NULL);
		if (ret)
			pthread_mutex_destroy(&wait->mutex);
		return ret;
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		return 0;
	default:
		return -FI_EINVAL;
	}
}

void lfv_wait_fini(struct lfv_wait *wait)
{
	switch (wait->type) {
	case FI_WAIT_FD:
		if (wait->tfd >= 0)
			close(wait->tfd);
		close(wait->evfd);
		close(wait->epfd);
		break;
	case FI_WAIT_MUTEX_COND:
		pthread_cond_destroy(&wait->cond);
		pthread_mutex_destroy(&wait->mutex);
		break;
	default:
		break;
	}
}

void lfv_wait_signal(struct lfv_wait *wait)
{
	uint64_t one = 1;

	switch (wait->type) {
	case FI_WAIT_FD:
		/* EAGAIN means the counter is saturated: already signalled. */
		if (write(wait->evfd, &one, sizeof(one)) < 0)
			(void)errno;
		break;
	case FI_WAIT_MUTEX_COND:
		/* Taking the mutex orders this wake-up after the waiter's
		 * ready() check, which it runs while holding the mutex. */
		pthread_mutex_lock(&wait->mutex);
		pthread_cond_broadcast(&wait->cond);
		pthread_mutex_unlock(&wait->mutex);
		break;
	default:
		break;
	}
}

void lfv_wait_reset(struct lfv_wait *wait)
{
	uint64_t count;

	if (wait->type != FI_WAIT_FD)
		return;
	if (read(wait->evfd, &count, sizeof(count)) < 0)
		(void)errno; /* EAGAIN: nothing was pending */
	/* An expired timer would keep the fd readable; one still running
	 * stays armed (a wake-up that comes early is harmless). */
	if (wait->tfd >= 0 && read(wait->tfd, &count, sizeof(count)) < 0)
		(void)errno;
}

/* The timerfd, created and added to the epoll set on first use. */
static int lfv_wait_timer_fd(struct lfv_wait *wait)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd, ret;

	if (wait->tfd >= 0)
		return 0;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ev.data.fd = fd;
	if (epoll_ctl(wait->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -errno;
		goto close_fd;
	}
	wait->tfd = fd;
	return 0;

close_fd:
	close(fd);
	return ret;
}

int lfv_wait_arm_timer(struct lfv_wait *wait, int ms)
{
	struct itimerspec its = { 0 };
	int ret;

	if (wait->type != FI_WAIT_FD)
		return 0;
	ret = lfv_wait_timer_fd(wait);
	if (ret)
		return ret;
	if (ms < 0)
		return -FI_EINVAL;
	/* A zero it_value would disarm the timer: at least 1 ns. */
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000 + (ms ? 0 : 1);
	return timerfd_settime(wait->tfd, 0, &its, NULL) ? -errno : 0;
}

int64_t lfv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t lfv_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t lfv_now_ms(void)
{
	return lfv_now_ns() / 1000000;
}

/* Milliseconds left before deadline (-1: none); 0 once it has passed. */
static int lfv_remaining_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - lfv_now_ms();
	return left > 0 ? (int)left : 0;
}

static int lfv_wait_fd(struct lfv_wait *wait, int64_t deadline,
		       lfv_wait_ready_fn ready, void *arg)
{
	struct epoll_event ev;
	int left, n;

	for (;;) {
		/* Drain first, then check: a signal sent after the check
		 * leaves the eventfd readable, so epoll_wait cannot miss it. */
		lfv_wait_reset(wait);
		if (ready(arg))
			return 0;
		left = lfv_remaining_ms(deadline);
		if (left == 0)
			return -FI_EAGAIN;
		n = epoll_wait(wait->epfd, &ev, 1, left);
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int lfv_wait_cond(struct lfv_wait *wait, int64_t deadline,
			 lfv_wait_ready_fn ready, void *arg)
{
	struct timespec abstime;
	int ret = 0;

	if (deadline >= 0) {
		/* pthread_cond_timedwait takes CLOCK_REALTIME. */
		int64_t left = lfv_remaining_ms(deadline);

		clock_gettime(CLOCK_REALTIME, &abstime);
		abstime.tv_sec += left / 1000;
		abstime.tv_nsec += (left % 1000) * 1000000;
		if (abstime.tv_nsec >= 1000000000) {
			abstime.tv_sec++;
			abstime.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&wait->mutex);
	while (!ready(arg)) {
		if (deadline < 0) {
			pthread_cond_wait(&wait->cond, &wait->mutex);
			continue;
		}
		if (pthread_cond_timedwait(&wait->cond, &wait->mutex,
					   &abstime) == ETIMEDOUT) {
			ret = ready(arg) ? 0 : -FI_EAGAIN;
			break;
		}
	}
	pthread_mutex_unlock(&wait->mutex);
	return ret;
}

static int lfv_wait_yield(int64_t deadline, lfv_wait_ready_fn ready, void *arg)
{
	while (!ready(arg)) {
		if (lfv_remaining_ms(deadline) == 0)
			return -FI_EAGAIN;
		sched_yield();
	}
	return 0;
}

int lfv_wait_until(struct lfv_wait *wait, int timeout_ms,
		   lfv_wait_ready_fn ready, void *arg)
{
	int64_t deadline = timeout_ms < 0 ? -1 : lfv_now_ms() + timeout_ms;

	switch (wait->type) {
	case FI_WAIT_FD:
		return lfv_wait_fd(wait, deadline, ready, arg);
	case FI_WAIT_MUTEX_COND:
		return lfv_wait_cond(wait, deadline, ready, arg);
	case FI_WAIT_YIELD:
		return lfv_wait_yield(deadline, ready, arg);
	default:
		return -FI_ENOSYS;
	}
}

int lfv_wait_add_fd(struct lfv_wait *wait, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (wait->type != FI_WAIT_FD || fd < 0)
		return 0;
	return epoll_ctl(wait->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int lfv_wait_del_fd(struct lfv_wait *wait, int fd)
{
	if (wait->type != FI_WAIT_FD || fd < 0)
		return 0;
	return epoll_ctl(wait->epfd, EPOLL_CTL_DEL, fd, NULL) ? -errno : 0;
}

int lfv_wait_control(struct lfv_wait *wait, int command, void *arg)
{
	struct fi_mutex_cond *mc;

	if (!arg)
		return -FI_EINVAL;
	switch (command) {
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = wait->type;
		return 0;
	case FI_GETWAIT:
		if (wait->type == FI_WAIT_FD) {
			*(int *)arg = wait->epfd;
			return 0;
		}
		if (wait->type == FI_WAIT_MUTEX_COND) {
			mc = arg;
			mc->mutex = &wait->mutex;
			mc->cond = &wait->cond;
			return 0;
		}
		/* NONE and YIELD have no object to hand out. */
		return -FI_ENODATA;
	default:
		return -FI_ENOSYS;
	}
}
