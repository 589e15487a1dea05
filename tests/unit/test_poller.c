/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The background epoll thread (lfv_poller.h): it runs its owner's work when
 * one of its fds is readable, and with a tick also when the tick passes
 * with none readable (sources without an fd: an RDM endpoint's shm peer
 * under FI_PROGRESS_AUTO), and a tick set while it sleeps takes effect
 * without waiting for an fd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lfv_atomic.h"
#include "lfv_poller.h"

#define WAIT_MS 5000

static lfv_atomic32_t runs;

static void count_run(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs, 1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Whether runs reaches n within WAIT_MS. */
static bool runs_reach(uint32_t n)
{
	int waited;

	for (waited = 0; waited < WAIT_MS; waited += 5) {
		if (lfv_load_relaxed32(&runs) >= n)
			return true;
		sleep_ms(5);
	}
	return false;
}

/* No fd readable, no tick: the thread sleeps. */
static void test_no_tick_no_run(void **state)
{
	struct lfv_poller p = { 0 };

	(void)state;
	atomic_store(&runs, 0);
	assert_int_equal(lfv_poller_start(&p, count_run, NULL), 0);
	sleep_ms(50);
	assert_int_equal(lfv_load_relaxed32(&runs), 0);
	lfv_poller_stop(&p);
}

/* A readable fd runs the work. */
static void test_fd_runs(void **state)
{
	struct lfv_poller p = { 0 };
	uint64_t one = 1;
	int fd = eventfd(0, EFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	atomic_store(&runs, 0);
	assert_int_equal(lfv_poller_start(&p, count_run, NULL), 0);
	assert_int_equal(lfv_poller_add(&p, fd), 0);
	assert_int_equal(write(fd, &one, sizeof(one)), sizeof(one));
	assert_true(runs_reach(1));
	lfv_poller_del(&p, fd);
	lfv_poller_stop(&p);
	close(fd);
}

/* A tick set while the thread sleeps (with no fd at all): it wakes and
 * runs the work again and again; cleared, it stops. */
static void test_tick_runs_without_fd(void **state)
{
	struct lfv_poller p = { 0 };
	uint32_t after;

	(void)state;
	atomic_store(&runs, 0);
	assert_int_equal(lfv_poller_start(&p, count_run, NULL), 0);
	sleep_ms(20);			/* asleep with no timeout */
	lfv_poller_set_tick(&p, 1);
	assert_true(runs_reach(5));
	lfv_poller_set_tick(&p, 0);
	sleep_ms(20);			/* a run in flight ends */
	after = lfv_load_relaxed32(&runs);
	sleep_ms(50);
	/* At most the one run the kick of the clearing caused. */
	assert_true(lfv_load_relaxed32(&runs) <= after + 1);
	lfv_poller_stop(&p);
}

/* A tick set before the thread starts is its from the start. */
static void test_tick_before_start(void **state)
{
	struct lfv_poller p = { 0 };

	(void)state;
	atomic_store(&runs, 0);
	lfv_poller_set_tick(&p, 1);
	assert_int_equal(lfv_poller_start(&p, count_run, NULL), 0);
	assert_true(runs_reach(3));
	lfv_poller_stop(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_tick_no_run),
		cmocka_unit_test(test_fd_runs),
		cmocka_unit_test(test_tick_runs_without_fd),
		cmocka_unit_test(test_tick_before_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
