/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A background thread asleep in epoll on a set of fds (completion channels,
 * rdma_cm event channels). Whenever one is readable it calls run(arg) once;
 * the owner keeps the list of what to service and its lock. Used by the
 * data progress thread (lfv_auto.c) and the rdma_cm thread of
 * FI_PROGRESS_AUTO control progress (lfv_cm.c).
 */
#ifndef LFV_POLLER_H
#define LFV_POLLER_H

#include <pthread.h>
#include <stdbool.h>

struct lfv_poller {
	pthread_t thread;
	int epfd;
	int stop_fd;			/* eventfd: tells the thread to end */
	bool running;
	void (*run)(void *arg);
	void *arg;
};

/* Starts the thread unless it runs already (callers serialise). */
int lfv_poller_start(struct lfv_poller *p, void (*run)(void *arg), void *arg);
int lfv_poller_add(struct lfv_poller *p, int fd);
void lfv_poller_del(struct lfv_poller *p, int fd);
/* Ends the thread (if it was started) and closes its fds. */
void lfv_poller_stop(struct lfv_poller *p);

/* Makes fd non-blocking: 0 or -FI_EIO. */
int lfv_fd_set_nonblock(int fd);

#endif /* LFV_POLLER_H */
