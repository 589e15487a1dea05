/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Wait sets (fi_poll(3)) over lfverbs EQs, CQs and counters: open and its
 * bad attributes, members binding at open and leaving at close, a busy set
 * refusing to close, fi_wait woken by each kind of member (also from
 * another thread, and by a member's progress hook), its timeout, and
 * fi_trywait with the set's fd in epoll. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_eq.h"
#include "lfv_wait.h"
#include "lfv_wait_set.h"
#include "../test_close.h"

static lfv_atomic32_t parent_ref;

static struct fid_wait *set_open(enum fi_wait_obj wait_obj)
{
	struct fi_wait_attr attr = { .wait_obj = wait_obj };
	struct fid_wait *ws = NULL;

	assert_int_equal(lfv_wait_set_open(&attr, &parent_ref, &ws), 0);
	return ws;
}

static struct fid_cq *cq_open(struct fid_wait *ws)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT,
				   .wait_obj = FI_WAIT_SET, .wait_set = ws };
	struct lfv_cq_params p = { .api_version = FI_VERSION(1, 17),
				   .parent_ref = &parent_ref };
	struct fid_cq *cq = NULL;

	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), 0);
	return cq;
}

static struct fid_cntr *cntr_open(struct fid_wait *ws)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_SET, .wait_set = ws };
	struct fid_cntr *cntr = NULL;

	assert_int_equal(lfv_cntr_open(&attr, NULL, &parent_ref, &cntr), 0);
	return cntr;
}

static struct fid_eq *eq_open(struct fid_wait *ws)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_SET, .wait_set = ws };
	struct fid_eq *eq = NULL;

	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17),
				     &parent_ref, &eq), 0);
	return eq;
}

static void cq_put(struct fid_cq *cq)
{
	struct lfv_cq_comp c = { .context = cq, .flags = FI_SEND };

	assert_int_equal(lfv_cq_write(lfv_cq_from_fid(cq), &c), 0);
}

static int64_t ms_since(int64_t start_ns)
{
	return (lfv_now_ns() - start_ns) / 1000000;
}

static void test_open_bad_attr(void **state)
{
	/* Wait objects a set cannot be: none, a set, an unknown one; and
	 * those it could be but lfverbs does not do. */
	static const struct {
		enum fi_wait_obj wait_obj;
		int ret;
	} objs[] = {
		{ FI_WAIT_NONE, -FI_EINVAL },
		{ FI_WAIT_SET, -FI_EINVAL },
		{ (enum fi_wait_obj)77, -FI_EINVAL },
		{ FI_WAIT_MUTEX_COND, -FI_ENOSYS },
		{ FI_WAIT_POLLFD, -FI_ENOSYS },
	};
	struct fi_wait_attr attr = { .wait_obj = FI_WAIT_FD, .flags = 1 };
	struct fid_wait *ws = NULL;
	size_t i;

	(void)state;
	assert_int_equal(lfv_wait_set_open(NULL, &parent_ref, &ws),
			 -FI_EINVAL);
	assert_int_equal(lfv_wait_set_open(&attr, &parent_ref, &ws),
			 -FI_EINVAL);
	attr.flags = 0;
	assert_int_equal(lfv_wait_set_open(&attr, &parent_ref, NULL),
			 -FI_EINVAL);
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		attr.wait_obj = objs[i].wait_obj;
		assert_int_equal(lfv_wait_set_open(&attr, &parent_ref, &ws),
				 objs[i].ret);
	}
	assert_null(ws);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_open_control(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_UNSPEC);
	struct fid_wait *yield = set_open(FI_WAIT_YIELD);
	enum fi_wait_obj obj;
	int fd = -1;

	(void)state;
	assert_int_equal(lfv_ref_read(&parent_ref), 2);
	assert_int_equal(fi_control(&ws->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_FD);
	assert_int_equal(fi_control(&ws->fid, FI_GETWAIT, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fi_control(&yield->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_YIELD);
	assert_int_equal(fi_control(&yield->fid, FI_GETWAIT, &fd),
			 -FI_ENODATA);
	test_close(yield, ws);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

/* Members bind at open and leave at close; a set with members is busy;
 * FI_WAIT_SET needs an lfverbs wait set. */
static void test_bind_close_busy(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_FD);
	struct fid_cq *cq = cq_open(ws);
	struct fid_cntr *cntr = cntr_open(ws);
	struct fid_eq *eq = eq_open(ws);
	struct fid_wait bogus = { .fid = { .fclass = FI_CLASS_WAIT } };
	struct fi_cq_attr cq_attr = { .wait_obj = FI_WAIT_SET };
	struct lfv_cq_params p = { .api_version = FI_VERSION(1, 17),
				   .parent_ref = &parent_ref };
	struct fid_cq *bad = NULL;
	enum fi_wait_obj obj;

	(void)state;
	/* The member's own wait object is an fd (sread still works). */
	assert_int_equal(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_FD);
	assert_int_equal(fi_close(&ws->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&cq->fid), 0);
	assert_int_equal(fi_close(&ws->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&eq->fid), 0);
	assert_int_equal(fi_close(&ws->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&cntr->fid), 0);

	assert_int_equal(lfv_cq_open(&cq_attr, NULL, &p, &bad), -FI_EINVAL);
	cq_attr.wait_set = &bogus;
	assert_int_equal(lfv_cq_open(&cq_attr, NULL, &p, &bad), -FI_EINVAL);
	assert_null(bad);
	assert_int_equal(fi_close(&ws->fid), 0);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_wait_timeout(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_FD);
	struct fid_cq *cq;
	int64_t start;

	(void)state;
	/* An empty set just sleeps out its timeout. */
	start = lfv_now_ns();
	assert_int_equal(fi_wait(ws, 20), -FI_ETIMEDOUT);
	assert_true(ms_since(start) >= 20);
	cq = cq_open(ws);
	start = lfv_now_ns();
	assert_int_equal(fi_wait(ws, 30), -FI_ETIMEDOUT);
	assert_true(ms_since(start) >= 30);
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);
	test_close(cq, ws);
}

/* Each kind of member wakes fi_wait: a CQ while it holds an entry, a
 * counter once per change, an EQ while it holds an event. */
static void test_wait_members(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_FD);
	struct fid_cq *cq = cq_open(ws);
	struct fid_cntr *cntr = cntr_open(ws);
	struct fid_eq *eq = eq_open(ws);
	struct fi_eq_entry entry = { .data = 7 };
	struct fi_cq_entry e;
	uint32_t event;

	(void)state;
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);
	cq_put(cq);
	assert_int_equal(fi_wait(ws, 5000), 0);
	assert_int_equal(fi_wait(ws, 0), 0);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);

	assert_int_equal(fi_cntr_add(cntr, 2), 0);
	assert_int_equal(fi_wait(ws, 5000), 0);
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);

	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(fi_wait(ws, 5000), 0);
	assert_int_equal(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);

	/* Errors count as something to read. */
	lfv_cntr_inc_err(lfv_cntr_from_fid(cntr));
	assert_int_equal(fi_wait(ws, 5000), 0);
	assert_int_equal(fi_wait(ws, 0), -FI_ETIMEDOUT);

	test_close(cq, cntr, eq, ws);
}

struct late_writer {
	pthread_t thread;
	struct fid_cq *cq;
	int delay_ms;
};

static void *late_write(void *arg)
{
	struct late_writer *w = arg;

	usleep((useconds_t)w->delay_ms * 1000);
	cq_put(w->cq);
	return NULL;
}

/* A sleeping fi_wait wakes for a completion written on another thread,
 * on both kinds of set. */
static void wait_woken_by_thread(enum fi_wait_obj wait_obj)
{
	struct fid_wait *ws = set_open(wait_obj);
	struct late_writer w = { .cq = cq_open(ws), .delay_ms = 50 };
	struct fi_cq_entry e;
	int64_t start;

	start = lfv_now_ns();
	assert_int_equal(pthread_create(&w.thread, NULL, late_write, &w), 0);
	assert_int_equal(fi_wait(ws, 10000), 0);
	assert_true(ms_since(start) < 5000);
	assert_int_equal(pthread_join(w.thread, NULL), 0);
	assert_int_equal(fi_cq_read(w.cq, &e, 1), 1);
	test_close(w.cq, ws);
}

static void test_wait_woken_by_thread(void **state)
{
	(void)state;
	wait_woken_by_thread(FI_WAIT_FD);
	wait_woken_by_thread(FI_WAIT_YIELD);
}

/* A transport that only writes when its hook runs (manual progress). */
static int hook_runs;
static int hook_writes_after;

static void write_when_due(void *arg)
{
	if (++hook_runs == hook_writes_after)
		cq_put(arg);
}

static int hook_slice_ms(void *arg)
{
	(void)arg;
	return 5;
}

/* fi_wait drives members' progress, and sleeps in the slices the hook
 * asks for, so completions only its progress finds still wake it. */
static void test_wait_drives_progress(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_FD);
	struct fid_cq *cq = cq_open(ws);
	struct fi_cq_entry e;

	(void)state;
	hook_runs = 0;
	hook_writes_after = 4;
	lfv_cq_set_progress(lfv_cq_from_fid(cq), (struct lfv_progress_hook){
		.fn = write_when_due, .arg = cq, .wait_ms = hook_slice_ms });
	assert_int_equal(fi_wait(ws, 10000), 0);
	assert_true(hook_runs >= 4);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	test_close(cq, ws);
}

/* fi_trywait on the set, then the set's fd in the application's epoll. */
static void test_trywait_epoll(void **state)
{
	struct fid_wait *ws = set_open(FI_WAIT_FD);
	struct fid_cq *cq = cq_open(ws);
	struct epoll_event ev = { .events = EPOLLIN };
	struct fi_cq_entry e;
	int fd, epfd;

	(void)state;
	assert_int_equal(fi_control(&ws->fid, FI_GETWAIT, &fd), 0);
	epfd = epoll_create1(0);
	assert_true(epfd >= 0);
	assert_int_equal(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
	assert_int_equal(lfv_trywait_fid(&ws->fid), 0);
	assert_int_equal(epoll_wait(epfd, &ev, 1, 0), 0);
	cq_put(cq);
	assert_int_equal(epoll_wait(epfd, &ev, 1, 1000), 1);
	assert_int_equal(lfv_trywait_fid(&ws->fid), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(lfv_trywait_fid(&ws->fid), 0);
	assert_int_equal(epoll_wait(epfd, &ev, 1, 0), 0);
	close(epfd);
	test_close(cq, ws);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_bad_attr),
		cmocka_unit_test(test_open_control),
		cmocka_unit_test(test_bind_close_busy),
		cmocka_unit_test(test_wait_timeout),
		cmocka_unit_test(test_wait_members),
		cmocka_unit_test(test_wait_woken_by_thread),
		cmocka_unit_test(test_wait_drives_progress),
		cmocka_unit_test(test_trywait_epoll),
	};

	return cmocka_run_group_tests_name("waitset", tests, NULL, NULL);
}
