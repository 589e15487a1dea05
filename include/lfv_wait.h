/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Wait objects behind EQs, CQs and counters.
 *
 * FI_WAIT_FD is an epoll fd holding an eventfd that producers signal; other
 * fds (a verbs completion channel, an rdma_cm event channel) can be added,
 * so one fd tells the application "something may be ready". The fd is level
 * triggered: it stays readable until lfv_wait_reset() (fi_trywait, sread)
 * drains the eventfd, which is why fi_trywait must be called before blocking.
 *
 * FI_WAIT_MUTEX_COND exposes the mutex/cond pair through FI_GETWAIT.
 * FI_WAIT_YIELD spins with sched_yield(). FI_WAIT_NONE cannot block.
 */
#ifndef LFV_WAIT_H
#define LFV_WAIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <rdma/fi_eq.h>

struct lfv_wait_set;

struct lfv_wait {
	enum fi_wait_obj type;	/* NONE, FD, MUTEX_COND or YIELD */
	int epfd;		/* FD: what the application polls */
	int evfd;		/* FD: signalled by producers */
	int tfd;		/* FD: a timerfd for lfv_wait_arm_timer, or -1
				 * until the first use */
	pthread_mutex_t mutex;	/* MUTEX_COND */
	pthread_cond_t cond;	/* MUTEX_COND */
	/* The wait set (FI_WAIT_SET) whose epoll holds epfd, or NULL: set
	 * by lfv_wait_set_bind (lfv_wait_set.h). */
	struct lfv_wait_set *set;
};

/* Returns true when the waiter should stop waiting (data, error, signal). */
typedef bool (*lfv_wait_ready_fn)(void *arg);

/* Validates a requested wait object; FI_WAIT_UNSPEC resolves to FI_WAIT_FD.
 * Returns -FI_ENOSYS for FI_WAIT_POLLFD, -FI_EINVAL for junk and for
 * FI_WAIT_SET, which needs its set: objects call lfv_wait_select. */
int lfv_wait_resolve(enum fi_wait_obj requested, enum fi_wait_obj *resolved);

/* CLOCK_MONOTONIC in nanoseconds: the clock of every timeout here. */
int64_t lfv_now_ns(void);
/* CLOCK_MONOTONIC_COARSE in nanoseconds: a few ms of resolution, read
 * from memory the kernel updates (no clock device: in a VM that may be
 * an emulated one), for checks made on every poll. */
int64_t lfv_now_coarse_ns(void);

int lfv_wait_init(struct lfv_wait *wait, enum fi_wait_obj type);
void lfv_wait_fini(struct lfv_wait *wait);

/* Wakes every waiter; safe from any thread, never blocks. */
void lfv_wait_signal(struct lfv_wait *wait);

/* Drains a pending FD signal so the fd blocks again (fi_trywait). */
void lfv_wait_reset(struct lfv_wait *wait);

/*
 * Makes an FD wait object readable in ms milliseconds (once), for owners
 * whose progress cannot signal by itself (manual progress, a transport that
 * needs a poll now and then): fi_trywait arms it so that an application
 * blocked on the fd wakes up, reads, and so drives progress. 0 for the
 * other wait types (their waiters sleep in slices already).
 */
int lfv_wait_arm_timer(struct lfv_wait *wait, int ms);

/* Blocks until ready(arg) is true or timeout_ms passes (< 0: forever).
 * Returns 0 when ready, -FI_EAGAIN on timeout, -FI_ENOSYS for FI_WAIT_NONE. */
int lfv_wait_until(struct lfv_wait *wait, int timeout_ms,
		   lfv_wait_ready_fn ready, void *arg);

/* Adds/removes an extra fd (readable = wake up) to an FD wait object;
 * nothing for an fd < 0 (a source that has none) or another wait object. */
int lfv_wait_add_fd(struct lfv_wait *wait, int fd);
int lfv_wait_del_fd(struct lfv_wait *wait, int fd);

/* fi_control(FI_GETWAIT / FI_GETWAITOBJ) on the owning object. */
int lfv_wait_control(struct lfv_wait *wait, int command, void *arg);

#endif /* LFV_WAIT_H */
