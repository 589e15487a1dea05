/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Counters: attributes, values, fi_cntr_wait on every wait object (timeout,
 * wake-ups, errors, progress, several waiters), fi_trywait and the native
 * wait objects, and exact values under concurrent updates. Every blocking
 * wait runs in a helper thread joined with a time limit, so a lost wake-up
 * fails the test instead of hanging it. */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lfv_cntr.h"
#include "unit_wait.h"
#include "../test_with.h"

/* A wake-up that has not come by then is lost. */
#define JOIN_LIMIT_S 10

static lfv_atomic32_t parent_ref;

static struct fid_cntr *cntr_open(enum fi_wait_obj wait)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP, .wait_obj = wait,
	};
	struct fid_cntr *cntr = NULL;

	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr), 0);
	return cntr;
}

static void cntr_close(struct fid_cntr *cntr)
{
	assert_int_equal(fi_close(&cntr->fid), 0);
}

static struct lfv_cntr *lcntr(struct fid_cntr *cntr)
{
	return lfv_cntr_from_fid(cntr);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void join_within_limit(pthread_t thread, void **result)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += JOIN_LIMIT_S;
	assert_int_equal(pthread_timedjoin_np(thread, result, &ts), 0);
}

/* fi_cntr_wait in another thread. Heap-allocated: a waiter that never
 * returns (the failure being tested for) must not outlive its memory. */
struct waiter {
	pthread_t thread;
	struct fid_cntr *cntr;
	uint64_t threshold;
	int timeout;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->ret = fi_cntr_wait(w->cntr, w->threshold, w->timeout);
	return NULL;
}

static struct waiter *waiter_start(struct fid_cntr *cntr, uint64_t threshold,
				   int timeout)
{
	struct waiter *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->cntr = cntr;
	w->threshold = threshold;
	w->timeout = timeout;
	w->ret = 1;
	assert_int_equal(pthread_create(&w->thread, NULL, waiter_main, w), 0);
	return w;
}

/* Returns the wait's result once it has returned within the limit. */
static int waiter_finish(struct waiter *w)
{
	int ret;

	join_within_limit(w->thread, NULL);
	ret = w->ret;
	free(w);
	return ret;
}

/* Returns once n fi_cntr_wait callers are inside the counter (leading or
 * following), so that the update made next happens during their wait: an
 * error count is compared with its value at entry, and a wake-up is only
 * tested if the waiter went to sleep before the update. */
static void wait_for_waiters(struct fid_cntr *cntr, uint32_t n)
{
	struct lfv_cntr *c = lcntr(cntr);
	int64_t limit = now_ns() + (int64_t)JOIN_LIMIT_S * 1000000000;
	uint32_t inside;

	for (;;) {
		pthread_mutex_lock(&c->follow_lock);
		inside = c->leader + c->followers;
		pthread_mutex_unlock(&c->follow_lock);
		if (inside >= n || now_ns() > limit)
			break;
		usleep(1000);
	}
	assert_true(inside >= n);
	/* Give them time to go to sleep on the wait object, too. */
	usleep(10000);
}

static void test_open_bad_input(void **state)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr;

	(void)state;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, NULL),
			 -FI_EINVAL);
	assert_int_equal(lfv_cntr_open(&attr, NULL, NULL, &cntr), -FI_EINVAL);
	attr.flags = FI_SEND;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_EINVAL);
	attr.flags = 0;
	attr.events = (enum fi_cntr_events)1;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_ENOSYS);
	attr.events = FI_CNTR_EVENTS_COMP;
	attr.wait_obj = FI_WAIT_SET;	/* without its wait set */
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_EINVAL);
	attr.wait_obj = FI_WAIT_POLLFD;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_ENOSYS);
	attr.wait_obj = (enum fi_wait_obj)99;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_EINVAL);
	attr.wait_obj = (enum fi_wait_obj)-7;
	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr),
			 -FI_EINVAL);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_open_null_attr(void **state)
{
	struct fid_cntr *cntr = NULL;
	enum fi_wait_obj obj;
	int fd;

	(void)state;
	/* fi_cntr(3): "The default is FI_WAIT_NONE." */
	assert_int_equal(lfv_cntr_open(NULL, &obj, &parent_ref, &cntr), 0);
	assert_ptr_equal(cntr->fid.context, &obj);
	assert_int_equal(cntr->fid.fclass, FI_CLASS_CNTR);
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_NONE);
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	assert_int_equal(fi_cntr_read(cntr), 0);
	cntr_close(cntr);
}

static void check_wait_obj(enum fi_wait_obj requested, enum fi_wait_obj got)
{
	struct fid_cntr *cntr = cntr_open(requested);
	enum fi_wait_obj obj;

	assert_int_equal(fi_control(&cntr->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, got);
	cntr_close(cntr);
}

static void test_open_wait_objects(void **state)
{
	(void)state;
	check_wait_obj(FI_WAIT_NONE, FI_WAIT_NONE);
	check_wait_obj(FI_WAIT_UNSPEC, FI_WAIT_FD);
	check_wait_obj(FI_WAIT_FD, FI_WAIT_FD);
	check_wait_obj(FI_WAIT_MUTEX_COND, FI_WAIT_MUTEX_COND);
	check_wait_obj(FI_WAIT_YIELD, FI_WAIT_YIELD);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_parent_reference(void **state)
{
	struct fid_cntr *a, *b;

	(void)state;
	a = cntr_open(FI_WAIT_FD);
	b = cntr_open(FI_WAIT_NONE);
	assert_int_equal(lfv_ref_read(&parent_ref), 2);
	/* An endpoint bound to the counter keeps it open. */
	lfv_ref_get(&lcntr(a)->ref);
	assert_int_equal(fi_close(&a->fid), -FI_EBUSY);
	assert_int_equal(lfv_ref_read(&parent_ref), 2);
	lfv_ref_put(&lcntr(a)->ref);
	cntr_close(a);
	assert_int_equal(lfv_ref_read(&parent_ref), 1);
	cntr_close(b);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

/* The value and the error count: the same operations on two numbers. */
static const struct cntr_number {
	uint64_t (*read)(struct fid_cntr *cntr);
	int (*add)(struct fid_cntr *cntr, uint64_t value);
	int (*set)(struct fid_cntr *cntr, uint64_t value);
	void (*inc)(struct lfv_cntr *cntr);
} cntr_numbers[] = {
	{ fi_cntr_read, fi_cntr_add, fi_cntr_set, lfv_cntr_inc },
	{ fi_cntr_readerr, fi_cntr_adderr, fi_cntr_seterr, lfv_cntr_inc_err },
};

static void test_values(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_NONE);
	const struct cntr_number *n, *other;
	uint64_t other_before;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		n = &cntr_numbers[i];
		other = &cntr_numbers[1 - i];
		other_before = other->read(cntr);
		assert_int_equal(n->read(cntr), 0);
		assert_int_equal(n->add(cntr, 5), 0);
		n->inc(lcntr(cntr));
		assert_int_equal(n->read(cntr), 6);
		assert_int_equal(n->set(cntr, 2), 0);
		assert_int_equal(n->read(cntr), 2);
		/* 64 bits, no truncation. */
		assert_int_equal(n->set(cntr, UINT64_MAX - 1), 0);
		n->inc(lcntr(cntr));
		assert_true(n->read(cntr) == UINT64_MAX);
		assert_int_equal(n->set(cntr, 0), 0);
		assert_int_equal(n->read(cntr), 0);
		/* Each number is apart from the other. */
		assert_int_equal(other->read(cntr), other_before);
	}
	cntr_close(cntr);
}

static void test_wait_none(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_NONE);

	(void)state;
	/* fi_cntr(3): invalid on FI_WAIT_NONE; refused even when met. */
	assert_int_equal(fi_cntr_wait(cntr, 1, 10), -FI_EINVAL);
	assert_int_equal(fi_cntr_wait(cntr, 0, -1), -FI_EINVAL);
	assert_int_equal(lfv_cntr_trywait(lcntr(cntr)), -FI_EINVAL);
	cntr_close(cntr);
}

static void check_wait_threshold_met(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);

	assert_int_equal(fi_cntr_wait(cntr, 0, 0), 0);
	fi_cntr_add(cntr, 7);
	assert_int_equal(fi_cntr_wait(cntr, 7, -1), 0);
	assert_int_equal(fi_cntr_wait(cntr, 3, 0), 0);
	assert_int_equal(fi_cntr_wait(cntr, 8, 0), -FI_ETIMEDOUT);
	cntr_close(cntr);
}

TEST_WITH(test_wait_threshold_met, unit_each_wait, check_wait_threshold_met)

static void check_wait_timeout(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	int64_t start, elapsed_ms;

	fi_cntr_add(cntr, 1);
	start = now_ns();
	assert_int_equal(fi_cntr_wait(cntr, 2, 50), -FI_ETIMEDOUT);
	elapsed_ms = (now_ns() - start) / 1000000;
	assert_true(elapsed_ms >= 50);
	assert_true(elapsed_ms < 50 + 450);
	/* "The error value associated with the counter remains unchanged." */
	assert_int_equal(fi_cntr_readerr(cntr), 0);
	assert_int_equal(fi_cntr_read(cntr), 1);
	cntr_close(cntr);
}

TEST_WITH(test_wait_timeout, unit_each_wait_unspec, check_wait_timeout)

/* For each blocking wait object: a thread waiting for the counter to
 * reach threshold sleeps until wake brings it there, and no longer. */
static void check_woken(uint64_t threshold, void (*wake)(struct fid_cntr *))
{
	size_t i;

	for (i = 0; i < UNIT_N_BLOCKING; i++) {
		struct fid_cntr *cntr = cntr_open(unit_blocking_waits[i]);
		struct waiter *w = waiter_start(cntr, threshold, -1);

		wait_for_waiters(cntr, 1);
		wake(cntr);
		assert_int_equal(waiter_finish(w), 0);
		assert_int_equal(fi_cntr_read(cntr), threshold);
		cntr_close(cntr);
	}
}

/* 5 in two steps. */
static void add_two_then_three(struct fid_cntr *cntr)
{
	fi_cntr_add(cntr, 2);
	usleep(10000);
	fi_cntr_add(cntr, 3);
}

static void set_to_100(struct fid_cntr *cntr)
{
	fi_cntr_set(cntr, 100);
}

/* 3, each increment after the waiter had time to sleep again. */
static void inc_three_times(struct fid_cntr *cntr)
{
	int n;

	for (n = 0; n < 3; n++) {
		usleep(20000);
		lfv_cntr_inc(lcntr(cntr));
	}
}

TEST_WITH(test_wait_woken_by_add, check_woken, 5, add_two_then_three)

TEST_WITH(test_wait_woken_by_set, check_woken, 100, set_to_100)

TEST_WITH(test_wait_woken_by_inc, check_woken, 3, inc_three_times)

static void check_wait_eavail(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	struct waiter *w;

	/* An error counted before the wait does not end it. */
	fi_cntr_adderr(cntr, 1);
	assert_int_equal(fi_cntr_wait(cntr, 1, 20), -FI_ETIMEDOUT);

	w = waiter_start(cntr, 10, -1);
	wait_for_waiters(cntr, 1);
	lfv_cntr_inc_err(lcntr(cntr));
	assert_int_equal(waiter_finish(w), -FI_EAVAIL);

	w = waiter_start(cntr, 10, -1);
	wait_for_waiters(cntr, 1);
	fi_cntr_adderr(cntr, 4);
	assert_int_equal(waiter_finish(w), -FI_EAVAIL);

	/* "Any change in a counter's error value", resets included. */
	w = waiter_start(cntr, 10, -1);
	wait_for_waiters(cntr, 1);
	fi_cntr_seterr(cntr, 0);
	assert_int_equal(waiter_finish(w), -FI_EAVAIL);

	/* Reaching the threshold wins over an error. */
	fi_cntr_adderr(cntr, 1);
	fi_cntr_set(cntr, 10);
	assert_int_equal(fi_cntr_wait(cntr, 10, 0), 0);
	cntr_close(cntr);
}

TEST_WITH(test_wait_eavail, unit_each_wait, check_wait_eavail)

/* A transport under FI_PROGRESS_MANUAL: the completion only appears on the
 * third progress call, from the thread that makes progress. */
struct fake_progress {
	struct lfv_cntr *cntr;
	lfv_atomic32_t calls;
};

static void fake_progress_fn(void *arg)
{
	struct fake_progress *p = arg;

	/* relaxed: a plain call count; the counter update orders itself. */
	if (atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed) == 2)
		lfv_cntr_inc(p->cntr);
}

static struct fake_progress *fake_progress_attach(struct fid_cntr *cntr)
{
	struct fake_progress *p = calloc(1, sizeof(*p));
	struct lfv_progress_hook hook = { .fn = fake_progress_fn };

	assert_non_null(p);
	p->cntr = lcntr(cntr);
	hook.arg = p;
	lfv_cntr_set_progress(lcntr(cntr), hook);
	return p;
}

static void test_progress_read(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_NONE);
	struct fake_progress *p = fake_progress_attach(cntr);

	(void)state;
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(lfv_load_relaxed32(&p->calls), 1);
	assert_int_equal(fi_cntr_readerr(cntr), 0);
	assert_int_equal(lfv_load_relaxed32(&p->calls), 2);
	/* The third read makes the progress that completes the operation. */
	assert_int_equal(fi_cntr_read(cntr), 1);
	assert_int_equal(lfv_load_relaxed32(&p->calls), 3);
	cntr_close(cntr);
	free(p);
}

static void check_progress_wait(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	struct fake_progress *p = fake_progress_attach(cntr);
	struct waiter *w = waiter_start(cntr, 1, -1);

	/* Nobody else updates the counter: only progress can. */
	assert_int_equal(waiter_finish(w), 0);
	assert_true(lfv_load_relaxed32(&p->calls) >= 3);
	cntr_close(cntr);
	free(p);
}

TEST_WITH(test_progress_wait, unit_each_wait, check_progress_wait)

static void count_progress_fn(void *arg)
{
	/* relaxed: a plain call count, read after the wait returned. */
	atomic_fetch_add_explicit((lfv_atomic32_t *)arg, 1,
				  memory_order_relaxed);
}

/* Under manual progress with nothing to find, fi_cntr_wait sleeps longer
 * and longer slices (1 ms doubling to 32), not 1 ms each: some 15 progress
 * calls in 300 ms, not 300 (a rank sharing its core, issue 18). */
static void check_idle_wait_backs_off(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	lfv_atomic32_t calls = 0;

	if (wait == FI_WAIT_YIELD) {	/* spins by definition */
		cntr_close(cntr);
		return;
	}
	lfv_cntr_set_progress(lcntr(cntr), (struct lfv_progress_hook){
				      .fn = count_progress_fn, .arg = &calls });
	assert_int_equal(fi_cntr_wait(cntr, 1, 300), -FI_ETIMEDOUT);
	assert_true(lfv_load_relaxed32(&calls) >= 5);
	assert_true(lfv_load_relaxed32(&calls) < 60);
	cntr_close(cntr);
}

TEST_WITH(test_idle_wait_backs_off, unit_each_wait, check_idle_wait_backs_off)

/* An update since the last arm signalled fd: trywait says so once (and
 * drains the fd), then arms again. */
static void expect_signalled(struct lfv_cntr *c, int fd)
{
	assert_true(unit_readable(fd));
	assert_int_equal(lfv_cntr_trywait(c), -FI_EAGAIN);
	assert_int_equal(lfv_cntr_trywait(c), 0);
	assert_false(unit_readable(fd));
}

static void test_trywait_fd(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_FD);
	struct lfv_cntr *c = lcntr(cntr);
	int fd = -1, i;

	(void)state;
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &fd), 0);
	assert_true(fd >= 0);
	assert_false(unit_readable(fd));
	/* Nothing happened since open: safe to block. */
	assert_int_equal(lfv_cntr_trywait(c), 0);
	assert_false(unit_readable(fd));

	/* Changed since armed: read first. */
	lfv_cntr_inc(c);
	expect_signalled(c, fd);
	assert_int_equal(fi_cntr_read(cntr), 1);

	/* Every kind of update signals, to the value and the errors. */
	for (i = 0; i < 2; i++) {
		cntr_numbers[i].inc(c);
		expect_signalled(c, fd);
		cntr_numbers[i].add(cntr, 2);
		expect_signalled(c, fd);
		cntr_numbers[i].set(cntr, 9);
		expect_signalled(c, fd);
	}
	cntr_close(cntr);
}

/* fi_trywait's loop under FI_PROGRESS_MANUAL: the update appears only when
 * somebody makes progress, so an fd that nothing makes readable would keep
 * the application asleep for good. */
static void test_trywait_fd_manual_progress(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_FD);
	struct fake_progress *p = fake_progress_attach(cntr);
	struct pollfd pfd = { .events = POLLIN };
	int i;

	(void)state;
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &pfd.fd), 0);
	for (i = 0; i < 10 && fi_cntr_read(cntr) < 1; i++) {
		if (lfv_cntr_trywait(lcntr(cntr)) == 0)
			assert_int_equal(poll(&pfd, 1, 3000), 1);
	}
	assert_int_equal(fi_cntr_read(cntr), 1);
	cntr_close(cntr);
	free(p);
}

struct delayed_inc {
	struct lfv_cntr *cntr;
	int delay_us;
};

static void *delayed_inc_main(void *arg)
{
	struct delayed_inc *d = arg;

	usleep(d->delay_us);
	lfv_cntr_inc(d->cntr);
	return NULL;
}

/* fi_trywait(3)'s loop with poll(2) on the fd, woken by another thread. */
static void test_trywait_native_fd(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_FD);
	struct delayed_inc d = { .cntr = lcntr(cntr), .delay_us = 30000 };
	struct pollfd pfd = { .events = POLLIN };
	pthread_t thread;
	int blocked = 0;

	(void)state;
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &pfd.fd), 0);
	assert_int_equal(pthread_create(&thread, NULL, delayed_inc_main, &d), 0);
	while (fi_cntr_read(cntr) < 1) {
		if (lfv_cntr_trywait(lcntr(cntr)) != 0)
			continue;
		blocked++;
		assert_int_equal(poll(&pfd, 1, JOIN_LIMIT_S * 1000), 1);
	}
	assert_true(blocked >= 1);
	join_within_limit(thread, NULL);
	cntr_close(cntr);
}

/* The same with the FI_WAIT_MUTEX_COND pair handed out by FI_GETWAIT. */
static void test_trywait_native_mutex_cond(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_MUTEX_COND);
	struct delayed_inc d = { .cntr = lcntr(cntr), .delay_us = 30000 };
	struct fi_mutex_cond mc = { 0 };
	struct timespec limit;
	pthread_t thread;
	int blocked = 0;

	(void)state;
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &mc), 0);
	assert_non_null(mc.mutex);
	assert_non_null(mc.cond);
	assert_int_equal(pthread_create(&thread, NULL, delayed_inc_main, &d), 0);
	clock_gettime(CLOCK_REALTIME, &limit);
	limit.tv_sec += JOIN_LIMIT_S;
	pthread_mutex_lock(mc.mutex);
	while (fi_cntr_read(cntr) < 1) {
		if (lfv_cntr_trywait(lcntr(cntr)) != 0)
			continue;
		blocked++;
		assert_int_equal(pthread_cond_timedwait(mc.cond, mc.mutex,
							&limit), 0);
	}
	pthread_mutex_unlock(mc.mutex);
	assert_true(blocked >= 1);
	join_within_limit(thread, NULL);
	cntr_close(cntr);
}

static void test_control(void **state)
{
	struct fid_cntr *cntr = cntr_open(FI_WAIT_YIELD);
	uint64_t flags;
	int fd;

	(void)state;
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	assert_int_equal(fi_control(&cntr->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	assert_int_equal(fi_control(&cntr->fid, FI_GETOPSFLAG, &flags),
			 -FI_ENOSYS);
	assert_int_equal(fi_control(&cntr->fid, FI_SETOPSFLAG, &flags),
			 -FI_ENOSYS);
	/* Nothing native to block on. */
	assert_int_equal(lfv_cntr_trywait(lcntr(cntr)), -FI_EINVAL);
	assert_int_equal(fi_cntr_adderr(cntr, 1), 0);
	cntr_close(cntr);
}

/* Several waiters: only one (the leader, the first to arrive) sleeps on
 * the wait object, yet each must return as soon as its threshold is met. */
static void check_followers_woken(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	struct waiter *leader, *w[4];
	int i;

	leader = waiter_start(cntr, 5, -1);
	wait_for_waiters(cntr, 1);
	for (i = 0; i < 4; i++)
		w[i] = waiter_start(cntr, (uint64_t)i + 1, -1);
	wait_for_waiters(cntr, 5);
	/* Each follower returns while the leader still waits. */
	for (i = 0; i < 4; i++) {
		lfv_cntr_inc(lcntr(cntr));
		assert_int_equal(waiter_finish(w[i]), 0);
	}
	lfv_cntr_inc(lcntr(cntr));
	assert_int_equal(waiter_finish(leader), 0);
	cntr_close(cntr);
}

/* A leader that gives up hands the wait object over to a follower. Whether
 * the followers are awake when it leaves is up to the scheduler, so a lost
 * hand-over only shows in some rounds: run several. */
#define HANDOVER_ROUNDS 8

static void check_leader_hands_over(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	struct waiter *quitter, *w[2];
	int i;

	/* Long enough to be seen inside on a loaded machine. */
	quitter = waiter_start(cntr, 1000, 200);
	wait_for_waiters(cntr, 1);
	for (i = 0; i < 2; i++)
		w[i] = waiter_start(cntr, (uint64_t)i + 1, -1);
	assert_int_equal(waiter_finish(quitter), -FI_ETIMEDOUT);
	for (i = 0; i < 2; i++) {
		usleep(20000);
		lfv_cntr_inc(lcntr(cntr));
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(waiter_finish(w[i]), 0);
	cntr_close(cntr);
}

static void check_many_waiters(enum fi_wait_obj wait)
{
	int round;

	check_followers_woken(wait);
	for (round = 0; round < HANDOVER_ROUNDS; round++)
		check_leader_hands_over(wait);
}

TEST_WITH(test_many_waiters, unit_each_wait, check_many_waiters)

#define MT_INC_THREADS 4
#define MT_INCS 1000000
#define MT_ADDS 100000
#define MT_READERS 2
#define MT_FINAL ((uint64_t)MT_INC_THREADS * MT_INCS + 3 * MT_ADDS)

static void *inc_main(void *arg)
{
	struct lfv_cntr *cntr = arg;
	int i;

	for (i = 0; i < MT_INCS; i++)
		lfv_cntr_inc(cntr);
	return NULL;
}

static void *add_main(void *arg)
{
	struct fid_cntr *cntr = arg;
	int i;

	for (i = 0; i < MT_ADDS; i++)
		fi_cntr_add(cntr, 3);
	return NULL;
}

/* Reads never go backwards and end at the exact total. */
static void *reader_main(void *arg)
{
	struct fid_cntr *cntr = arg;
	uint64_t prev = 0, v;
	intptr_t backwards = 0;

	do {
		v = fi_cntr_read(cntr);
		backwards += v < prev;
		prev = v;
		sched_yield();
	} while (v < MT_FINAL);
	return (void *)backwards;
}

static void check_concurrent(enum fi_wait_obj wait)
{
	struct fid_cntr *cntr = cntr_open(wait);
	pthread_t inc[MT_INC_THREADS], rd[MT_READERS], add;
	struct waiter *half, *all;
	void *backwards;
	int i;

	half = waiter_start(cntr, MT_FINAL / 2, -1);
	all = waiter_start(cntr, MT_FINAL, -1);
	wait_for_waiters(cntr, 2);
	for (i = 0; i < MT_READERS; i++)
		assert_int_equal(pthread_create(&rd[i], NULL, reader_main,
						cntr), 0);
	for (i = 0; i < MT_INC_THREADS; i++)
		assert_int_equal(pthread_create(&inc[i], NULL, inc_main,
						lcntr(cntr)), 0);
	assert_int_equal(pthread_create(&add, NULL, add_main, cntr), 0);
	for (i = 0; i < MT_INC_THREADS; i++)
		pthread_join(inc[i], NULL);
	pthread_join(add, NULL);
	assert_true(fi_cntr_read(cntr) == MT_FINAL);
	assert_int_equal(waiter_finish(all), 0);
	assert_int_equal(waiter_finish(half), 0);
	for (i = 0; i < MT_READERS; i++) {
		join_within_limit(rd[i], &backwards);
		assert_true(backwards == NULL);
	}
	assert_int_equal(fi_cntr_readerr(cntr), 0);
	cntr_close(cntr);
}

TEST_WITH(test_concurrent, unit_each_wait, check_concurrent)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_bad_input),
		cmocka_unit_test(test_open_null_attr),
		cmocka_unit_test(test_open_wait_objects),
		cmocka_unit_test(test_parent_reference),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_wait_none),
		cmocka_unit_test(test_wait_threshold_met),
		cmocka_unit_test(test_wait_timeout),
		cmocka_unit_test(test_wait_woken_by_add),
		cmocka_unit_test(test_wait_woken_by_set),
		cmocka_unit_test(test_wait_woken_by_inc),
		cmocka_unit_test(test_wait_eavail),
		cmocka_unit_test(test_progress_read),
		cmocka_unit_test(test_idle_wait_backs_off),
		cmocka_unit_test(test_progress_wait),
		cmocka_unit_test(test_trywait_fd),
		cmocka_unit_test(test_trywait_fd_manual_progress),
		cmocka_unit_test(test_trywait_native_fd),
		cmocka_unit_test(test_trywait_native_mutex_cond),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_many_waiters),
		cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests_name("cntr", tests, NULL, NULL);
}
