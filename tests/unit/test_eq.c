/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Event queues: attributes, read/readerr/write/sread, err_data rules per
 * API version, every wait object, trywait and the FD contract. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lfv_eq.h"
#include "unit_wait.h"
#include "../test_with.h"

static lfv_atomic32_t parent_ref;

static struct fid_eq *eq_open(enum fi_wait_obj wait, uint32_t version)
{
	struct fi_eq_attr attr = { .wait_obj = wait };
	struct fid_eq *eq = NULL;

	assert_int_equal(lfv_eq_open(&attr, NULL, version, &parent_ref, &eq), 0);
	return eq;
}

static void eq_close(struct fid_eq *eq)
{
	assert_int_equal(fi_close(&eq->fid), 0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_open_bad_attr(void **state)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };
	struct fid_eq *eq;

	(void)state;
	assert_int_equal(lfv_eq_open(NULL, NULL, FI_VERSION(1, 17), &parent_ref,
				     &eq), -FI_EINVAL);
	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17), &parent_ref,
				     NULL), -FI_EINVAL);
	attr.flags = FI_RECV;
	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17), &parent_ref,
				     &eq), -FI_EINVAL);
	attr.flags = FI_WRITE;
	attr.wait_obj = FI_WAIT_SET;	/* without its wait set */
	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17), &parent_ref,
				     &eq), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_POLLFD;
	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17), &parent_ref,
				     &eq), -FI_ENOSYS);
	attr.wait_obj = (enum fi_wait_obj)99;
	assert_int_equal(lfv_eq_open(&attr, NULL, FI_VERSION(1, 17), &parent_ref,
				     &eq), -FI_EINVAL);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_parent_reference(void **state)
{
	struct fid_eq *eq;

	(void)state;
	eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 17));
	assert_int_equal(lfv_ref_read(&parent_ref), 1);
	/* An object bound to the EQ keeps it open. */
	lfv_ref_get(&lfv_eq_from_fid(eq)->ref);
	assert_int_equal(fi_close(&eq->fid), -FI_EBUSY);
	lfv_ref_put(&lfv_eq_from_fid(eq)->ref);
	eq_close(eq);
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
}

static void test_write_read(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 17));
	struct fi_eq_entry in = { .fid = &eq->fid, .context = &in, .data = 7 };
	struct fi_eq_entry out;
	uint32_t event = 0;
	char small[4];

	(void)state;
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAGAIN);
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0),
			 sizeof(in));
	assert_int_equal(fi_eq_read(eq, &event, small, sizeof(small), 0),
			 -FI_ETOOSMALL);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), FI_PEEK),
			 sizeof(out));
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 sizeof(out));
	assert_int_equal(event, FI_NOTIFY);
	assert_memory_equal(&in, &out, sizeof(in));
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAGAIN);
	/* Events keep their order. */
	in.data = 1;
	fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	in.data = 2;
	fi_eq_write(eq, FI_MR_COMPLETE, &in, sizeof(in), 0);
	fi_eq_read(eq, &event, &out, sizeof(out), 0);
	assert_int_equal(out.data, 1);
	fi_eq_read(eq, &event, &out, sizeof(out), 0);
	assert_int_equal(out.data, 2);
	assert_int_equal(event, FI_MR_COMPLETE);
	/* Bad input. */
	assert_int_equal(fi_eq_read(eq, NULL, &out, sizeof(out), 0), -FI_EINVAL);
	assert_int_equal(fi_eq_read(eq, &event, NULL, sizeof(out), 0),
			 -FI_EINVAL);
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, NULL, 8, 0), -FI_EINVAL);
	assert_int_equal(fi_eq_readerr(eq, NULL, 0), -FI_EINVAL);
	eq_close(eq); /* with nothing queued */
}

static void push_error(struct fid_eq *eq, const char *data, size_t len)
{
	struct fi_eq_err_entry err = {
		.fid = &eq->fid, .context = eq, .err = FI_ECONNREFUSED,
		.prov_errno = 111, .err_data = (void *)data,
		.err_data_size = len,
	};

	assert_int_equal(lfv_eq_push_err(lfv_eq_from_fid(eq), &err), 0);
}

static void test_errors_v1_17(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 17));
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry out;
	char user[4];
	uint32_t event;

	(void)state;
	assert_int_equal(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
	push_error(eq, "0123456789", 10);
	push_error(eq, "abcdefghij", 10);
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAVAIL);
	/* A caller buffer gets a truncated copy and its size. */
	err.err_data = user;
	err.err_data_size = sizeof(user);
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_int_equal(err.err, FI_ECONNREFUSED);
	assert_int_equal(err.prov_errno, 111);
	assert_ptr_equal(err.err_data, user);
	assert_int_equal(err.err_data_size, sizeof(user));
	assert_memory_equal(user, "0123", 4);
	/* Size 0: the provider lends its own buffer until the next read. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_int_equal(err.err_data_size, 10);
	assert_memory_equal(err.err_data, "abcdefghij", 10);
	assert_non_null(fi_eq_strerror(eq, err.prov_errno, err.err_data, NULL, 0));
	assert_int_equal(fi_eq_read(eq, &event, &out, sizeof(out), 0),
			 -FI_EAGAIN);
	eq_close(eq);
}

static void test_errors_v1_4(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 4));
	union {
		struct fi_eq_err_entry err;
		struct {
			char entry[offsetof(struct fi_eq_err_entry,
					    err_data_size)];
			char guard[8];
		} old;
	} u;
	char user[4];

	(void)state;
	push_error(eq, "0123456789", 10);
	/* Before 1.5 the caller's err_data is not a buffer (ours is used)
	 * and its struct ends before err_data_size: nothing there is
	 * written. */
	memset(&u, 0x5a, sizeof(u));
	u.err.err_data = user;
	assert_int_equal(fi_eq_readerr(eq, &u.err, 0), sizeof(u.err));
	assert_ptr_not_equal(u.err.err_data, user);
	assert_int_equal(u.err.err, FI_ECONNREFUSED);
	assert_memory_equal(u.err.err_data, "0123456789", 10);
	assert_memory_equal(u.old.guard, "\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a", 8);
	eq_close(eq); /* frees the lent buffer */
}

static void test_strerror(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 17));
	char buf[8];
	const char *s;

	(void)state;
	s = fi_eq_strerror(eq, FI_ETIMEDOUT, NULL, buf, sizeof(buf));
	assert_ptr_equal(s, buf);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_int_equal(strncmp(fi_strerror(FI_ETIMEDOUT), buf, 7), 0);
	eq_close(eq);
}

static void test_sread_wait_none(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_NONE, FI_VERSION(1, 17));
	uint32_t event;
	char buf[8];

	(void)state;
	assert_int_equal(fi_eq_sread(eq, &event, buf, sizeof(buf), 10, 0),
			 -FI_EINVAL);
	assert_int_equal(fi_control(&eq->fid, FI_GETWAIT, &event), -FI_ENODATA);
	eq_close(eq);
}

static void check_sread_timeout(enum fi_wait_obj wait)
{
	struct fid_eq *eq = eq_open(wait, FI_VERSION(1, 17));
	uint32_t event;
	char buf[8];
	int64_t start = now_ms(), elapsed;

	assert_int_equal(fi_eq_sread(eq, &event, buf, sizeof(buf), 50, 0),
			 -FI_EAGAIN);
	elapsed = now_ms() - start;
	assert_true(elapsed >= 49);
	/* An event already queued returns at once. */
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, "x", 1, 0), 1);
	assert_int_equal(fi_eq_sread(eq, &event, buf, sizeof(buf), -1, 0), 1);
	eq_close(eq);
}

TEST_WITH(test_sread_timeout, unit_each_wait_unspec, check_sread_timeout)

static void *writer(void *arg)
{
	struct fid_eq *eq = arg;

	usleep(30000);
	fi_eq_write(eq, FI_NOTIFY, "wake", 4, 0);
	return NULL;
}

static void check_sread_wakeup(enum fi_wait_obj wait)
{
	struct fid_eq *eq = eq_open(wait, FI_VERSION(1, 17));
	pthread_t thread;
	uint32_t event;
	char buf[8];

	assert_int_equal(pthread_create(&thread, NULL, writer, eq), 0);
	/* Blocks (no timeout) until the other thread writes. */
	assert_int_equal(fi_eq_sread(eq, &event, buf, sizeof(buf), -1, 0), 4);
	assert_memory_equal(buf, "wake", 4);
	pthread_join(thread, NULL);
	eq_close(eq);
}

TEST_WITH(test_sread_wakeup, unit_each_wait, check_sread_wakeup)

static void test_wait_fd_contract(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_FD, FI_VERSION(1, 17));
	struct lfv_eq *leq = lfv_eq_from_fid(eq);
	enum fi_wait_obj obj;
	uint32_t event;
	char buf[8];
	int fd = -1;

	(void)state;
	assert_int_equal(fi_control(&eq->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_FD);
	assert_int_equal(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fi_control(&eq->fid, FI_GETWAIT, NULL), -FI_EINVAL);
	assert_false(unit_readable(fd));
	fi_eq_write(eq, FI_NOTIFY, "a", 1, 0);
	assert_true(unit_readable(fd));
	assert_int_equal(lfv_eq_trywait(leq), -FI_EAGAIN);
	fi_eq_read(eq, &event, buf, sizeof(buf), 0);
	/* Level-triggered until trywait says it is safe to block. */
	assert_true(unit_readable(fd));
	assert_int_equal(lfv_eq_trywait(leq), 0);
	assert_false(unit_readable(fd));
	fi_eq_write(eq, FI_NOTIFY, "b", 1, 0);
	assert_true(unit_readable(fd));
	eq_close(eq);
}

static void test_wait_mutex_cond_object(void **state)
{
	struct fid_eq *eq = eq_open(FI_WAIT_MUTEX_COND, FI_VERSION(1, 17));
	struct fi_mutex_cond mc = { 0 };
	enum fi_wait_obj obj;

	(void)state;
	assert_int_equal(fi_control(&eq->fid, FI_GETWAIT, &mc), 0);
	assert_non_null(mc.mutex);
	assert_non_null(mc.cond);
	assert_int_equal(fi_control(&eq->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_MUTEX_COND);
	assert_int_equal(fi_control(&eq->fid, FI_GETOPSFLAG, &obj), -FI_ENOSYS);
	eq_close(eq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_bad_attr),
		cmocka_unit_test(test_parent_reference),
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_errors_v1_17),
		cmocka_unit_test(test_errors_v1_4),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_sread_wait_none),
		cmocka_unit_test(test_sread_timeout),
		cmocka_unit_test(test_sread_wakeup),
		cmocka_unit_test(test_wait_fd_contract),
		cmocka_unit_test(test_wait_mutex_cond_object),
	};

	return cmocka_run_group_tests_name("eq", tests, NULL, NULL);
}
