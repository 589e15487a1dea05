/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Poll sets (fi_poll(3)) over lfverbs CQs and counters: contexts of CQs
 * with completions or errors and of counters that changed, the progress
 * hooks run, membership and its references, bad input. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_poll.h"
#include "../test_close.h"

static lfv_atomic32_t parent_ref;
static int progress_runs;
static char cq_ctx[2], cntr_ctx[2];

static void count_progress(void *arg)
{
	(void)arg;
	progress_runs++;
}

/* A transport's progress that writes a completion (RDM's hook). */
static void write_one(void *arg)
{
	struct lfv_cq_comp c = { .context = arg, .flags = FI_RECV | FI_MSG };

	assert_int_equal(lfv_cq_write(lfv_cq_from_fid(arg), &c), 0);
}

static struct fid_poll *poll_open(void)
{
	struct fid_poll *ps = NULL;

	assert_int_equal(lfv_poll_open(NULL, (struct lfv_progress_hook){
					       count_progress, NULL },
				       &parent_ref, &ps), 0);
	return ps;
}

static struct fid_cq *cq_open(void *context)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct lfv_cq_params p = { .api_version = FI_VERSION(1, 17),
				   .parent_ref = &parent_ref };
	struct fid_cq *cq = NULL;

	assert_int_equal(lfv_cq_open(&attr, context, &p, &cq), 0);
	return cq;
}

static struct fid_cntr *cntr_open(void *context)
{
	struct fid_cntr *cntr = NULL;

	assert_int_equal(lfv_cntr_open(NULL, context, &parent_ref, &cntr), 0);
	return cntr;
}

static void cq_put(struct fid_cq *cq, void *context)
{
	struct lfv_cq_comp c = { .context = context, .flags = FI_SEND };

	assert_int_equal(lfv_cq_write(lfv_cq_from_fid(cq), &c), 0);
}

/* Whether the n contexts fi_poll returned hold want (order is the
 * set's, not the events'). */
static bool polled(void *const *ctx, int n, const void *want)
{
	int i;

	for (i = 0; i < n; i++)
		if (ctx[i] == want)
			return true;
	return false;
}

static void test_cq_and_counter_events(void **state)
{
	struct fid_poll *ps = poll_open();
	struct fid_cq *cq[2] = { cq_open(&cq_ctx[0]), cq_open(&cq_ctx[1]) };
	struct fid_cntr *cntr[2] = { cntr_open(&cntr_ctx[0]),
				     cntr_open(&cntr_ctx[1]) };
	struct fi_cq_entry e;
	struct fi_cq_err_entry err = { .op_context = &e, .err = FI_EIO };
	void *ctx[4];
	int i;

	(void)state;
	/* A counter's value before it joins is no event. */
	assert_int_equal(fi_cntr_add(cntr[1], 3), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fi_poll_add(ps, &cq[i]->fid, 0), 0);
		assert_int_equal(fi_poll_add(ps, &cntr[i]->fid, 0), 0);
	}
	progress_runs = 0;
	assert_int_equal(fi_poll(ps, ctx, 4), 0);
	assert_true(progress_runs >= 1);

	cq_put(cq[1], &e);
	lfv_cntr_inc(lfv_cntr_from_fid(cntr[0]));
	assert_int_equal(fi_poll(ps, ctx, 4), 2);
	assert_true(polled(ctx, 2, &cq_ctx[1]));
	assert_true(polled(ctx, 2, &cntr_ctx[0]));
	/* The CQ stays reported until it is read; the counter only once
	 * per change. */
	assert_int_equal(fi_poll(ps, ctx, 4), 1);
	assert_ptr_equal(ctx[0], &cq_ctx[1]);
	assert_int_equal(fi_cq_read(cq[1], &e, 1), 1);
	assert_int_equal(fi_poll(ps, ctx, 4), 0);
	/* Errors count: a CQ error entry, a counter's error count. */
	assert_int_equal(lfv_cq_write_err(lfv_cq_from_fid(cq[0]), &err), 0);
	lfv_cntr_inc_err(lfv_cntr_from_fid(cntr[1]));
	assert_int_equal(fi_poll(ps, ctx, 4), 2);
	assert_true(polled(ctx, 2, &cq_ctx[0]));
	assert_true(polled(ctx, 2, &cntr_ctx[1]));
	/* count bounds the contexts; the rest wait for the next call. */
	cq_put(cq[1], &e);
	assert_int_equal(fi_poll(ps, ctx, 1), 1);
	assert_ptr_equal(ctx[0], &cq_ctx[0]);
	assert_int_equal(fi_poll(ps, ctx, 0), 0);
	assert_int_equal(fi_cq_readerr(cq[0], &err, 0), 1);
	assert_int_equal(fi_poll(ps, ctx, 4), 1);
	assert_ptr_equal(ctx[0], &cq_ctx[1]);
	assert_int_equal(fi_cq_read(cq[1], &e, 1), 1);

	/* Members hold their objects and the set. */
	assert_int_equal(fi_close(&cq[0]->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&cntr[0]->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ps->fid), -FI_EBUSY);
	for (i = 0; i < 2; i++) {
		assert_int_equal(fi_poll_del(ps, &cq[i]->fid, 0), 0);
		assert_int_equal(fi_poll_del(ps, &cntr[i]->fid, 0), 0);
		test_close(cq[i], cntr[i]);
	}
	assert_int_equal(fi_close(&ps->fid), 0);
	assert_int_equal(parent_ref, 0);
}

/* A member's own progress hook runs in fi_poll: what it writes counts. */
static void test_member_progress(void **state)
{
	struct fid_poll *ps = poll_open();
	struct fid_cq *cq = cq_open(&cq_ctx[0]);
	struct fi_cq_entry e;
	void *ctx[2];

	(void)state;
	lfv_cq_set_progress(lfv_cq_from_fid(cq), (struct lfv_progress_hook){
		write_one, cq });
	assert_int_equal(fi_poll_add(ps, &cq->fid, 0), 0);
	assert_int_equal(fi_poll(ps, ctx, 2), 1);
	assert_ptr_equal(ctx[0], &cq_ctx[0]);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 0), 0);
	test_close(cq, ps);
}

static void test_bad_input(void **state)
{
	struct fi_poll_attr attr = { .flags = 1 };
	struct fid_poll *ps = NULL;
	struct fid_cq *cq = cq_open(NULL);
	struct fid other = { .fclass = FI_CLASS_EQ };
	void *ctx[1];

	(void)state;
	assert_int_equal(lfv_poll_open(&attr, (struct lfv_progress_hook){ 0 },
				       &parent_ref, &ps), -FI_EBADFLAGS);
	assert_null(ps);
	ps = poll_open();
	assert_int_equal(fi_poll_add(ps, &other, 0), -FI_EINVAL);
	assert_int_equal(fi_poll_add(ps, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 1), -FI_EBADFLAGS);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 0), 0);
	assert_int_equal(fi_poll_add(ps, &cq->fid, 0), -FI_EALREADY);
	assert_int_equal(fi_poll(ps, NULL, 1), -FI_EINVAL);
	assert_int_equal(fi_poll(ps, ctx, -1), -FI_EINVAL);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 1), -FI_EBADFLAGS);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 0), 0);
	assert_int_equal(fi_poll_del(ps, &cq->fid, 0), -FI_EINVAL);
	test_close(cq, ps);
	assert_int_equal(parent_ref, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cq_and_counter_events),
		cmocka_unit_test(test_member_progress),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("poll", tests, NULL, NULL);
}
