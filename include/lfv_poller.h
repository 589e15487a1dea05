/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A background thread asleep in epoll on a set of fds (completion channels,
 * rdma_cm event channels). Whenever one is readable it calls run(arg) once;
 * the owner keeps the list of what to service and its lock. Used by the
 * data progress thread (lfv_auto.c) and the rdma_cm thread of
 * FI_PROGRESS_AUTO control progress (lfv_cm.c). With a tick set, it also
 * calls run(arg) when tick_ms pass without an fd becoming readable: for
 * sources without an fd (a peer provider that progresses only when
 * called, such as shm).
 */
#ifndef LFV_POLLER_H
#define LFV_POLLER_H

#include <pthread.h>
#include <stdbool.h>

#include "lfv_atomic.h"

struct lfv_poller {
	pthread_t thread;
	int epfd;
	int stop_fd;			/* eventfd: tells the thread to end */
	int kick_fd;			/* eventfd: the tick changed */
	lfv_atomic32_t tick_ms;		/* > 0: run at least this often */
	bool running;
	void (*run)(void *arg);
	void *arg;
};

/* Starts the thread unless it runs already (callers serialise). */
int lfv_poller_start(struct lfv_poller *p, void (*run)(void *arg), void *arg);
int lfv_poller_add(struct lfv_poller *p, int fd);
void lfv_poller_del(struct lfv_poller *p, int fd);
/* Sets the tick (ms; 0: none) and wakes the thread to take it up. */
void lfv_poller_set_tick(struct lfv_poller *p, int ms);
/* Ends the thread (if it was started) and closes its fds. */
void lfv_poller_stop(struct lfv_poller *p);

/* Makes fd non-blocking: 0 or -FI_EIO. */
int lfv_fd_set_nonblock(int fd);

#endif /* LFV_POLLER_H */
