/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Many RDM endpoints of one process on one CQ (issue 17), as an MPI-style
 * scale test opens them: LFV_RDM_MANY_NEP endpoints (64) at the default
 * queue sizes, all bound to one CQ, more requests in all than one verbs
 * CQ of soft-RoCE holds (32767). Every endpoint must enable, and messages
 * between endpoints far apart in opening order (the first and the last,
 * and others), eager, segmented and rendezvous, must arrive whole with one
 * completion each. The same with the CQ's waiters on its fd, with the
 * domain's progress thread, and with counters instead of a CQ.
 */
#include <rdma/fi_cm.h>

#include "func_rdm_common.h"

#define SMALL 100
#define NPAIR 8				/* sender/receiver pairs */
#define NMSG (2 * NPAIR * 2)		/* both ways, two sizes */

enum many_mode {
	MANY_POLL,			/* fi_cq_readfrom */
	MANY_WAIT_FD,			/* fi_cq_sreadfrom on an FD CQ */
	MANY_AUTO,			/* FI_PROGRESS_AUTO, fi_cq_readfrom */
	MANY_CNTR,			/* counters, no CQ */
};

struct many {
	struct fab f;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *tx_cntr, *rx_cntr;
	struct fid_ep **ep;
	fi_addr_t *addr;
	int n;
	enum many_mode mode;
};

/* One message: from, to, its buffers and both completions. */
struct msg {
	int from, to;
	size_t len;
	uint8_t *src, *dst;
	struct op sop, rop;
};

static int many_bind(struct many *m, struct fid_ep *ep)
{
	int ret;

	if (m->mode != MANY_CNTR)
		return fi_ep_bind(ep, &m->cq->fid, FI_TRANSMIT | FI_RECV);
	ret = fi_ep_bind(ep, &m->tx_cntr->fid, FI_SEND);
	return ret ? ret : fi_ep_bind(ep, &m->rx_cntr->fid, FI_RECV);
}

/* Opens and enables n endpoints on one CQ (or one pair of counters) and
 * one AV, and inserts them all. */
static void many_open(struct many *m, int n, enum many_mode mode)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED, .size = 1024,
		.wait_obj = mode == MANY_WAIT_FD ? FI_WAIT_FD : FI_WAIT_NONE };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
					  .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t *names = malloc((size_t)n * NAME_LEN);
	size_t len;
	int i, ret;

	memset(m, 0, sizeof(*m));
	m->n = n;
	m->mode = mode;
	m->ep = calloc((size_t)n, sizeof(*m->ep));
	m->addr = calloc((size_t)n, sizeof(*m->addr));
	assert_non_null(names);
	assert_non_null(m->ep);
	assert_non_null(m->addr);
	assert_int_equal(fab_open_progress(&m->f, 0, mode == MANY_AUTO ?
					   FI_PROGRESS_AUTO :
					   FI_PROGRESS_UNSPEC), 0);
	assert_int_equal(fi_av_open(m->f.domain, &av_attr, &m->av, NULL), 0);
	if (mode == MANY_CNTR) {
		assert_int_equal(fi_cntr_open(m->f.domain, &cntr_attr,
					      &m->tx_cntr, NULL), 0);
		assert_int_equal(fi_cntr_open(m->f.domain, &cntr_attr,
					      &m->rx_cntr, NULL), 0);
	} else {
		assert_int_equal(fi_cq_open(m->f.domain, &cq_attr, &m->cq,
					    NULL), 0);
	}
	for (i = 0; i < n; i++) {
		assert_int_equal(fi_endpoint(m->f.domain, m->f.info,
					     &m->ep[i], NULL), 0);
		assert_int_equal(many_bind(m, m->ep[i]), 0);
		assert_int_equal(fi_ep_bind(m->ep[i], &m->av->fid, 0), 0);
		ret = fi_enable(m->ep[i]);
		if (ret) {
			print_message("endpoint %d of %d: fi_enable: %s\n",
				      i, n, fi_strerror(-ret));
			fail();
		}
		len = NAME_LEN;
		assert_int_equal(fi_getname(&m->ep[i]->fid,
					    names + (size_t)i * NAME_LEN,
					    &len), 0);
		assert_int_equal(len, NAME_LEN);
	}
	assert_int_equal(fi_av_insert(m->av, names, (size_t)n, m->addr, 0,
				      NULL), n);
	free(names);
}

static void many_close(struct many *m)
{
	int i, ret = 0;

	for (i = 0; i < m->n; i++)
		close_fid(&m->ep[i]->fid, &ret);
	close_fid(m->cq ? &m->cq->fid : NULL, &ret);
	close_fid(m->tx_cntr ? &m->tx_cntr->fid : NULL, &ret);
	close_fid(m->rx_cntr ? &m->rx_cntr->fid : NULL, &ret);
	close_fid(&m->av->fid, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(fab_close(&m->f), 0);
	free(m->ep);
	free(m->addr);
}

/* Pair p of NPAIR: endpoints far apart in opening order (the first and
 * the last, the second and the middle, ...), distinct within a pair. */
static void pair_of(int n, int p, int *a, int *b)
{
	*a = (p * 7) % n;
	*b = n - 1 - (p * 5) % n;
	if (*b == *a)
		*b = (*a + n / 2) % n;
}

static void msgs_init(struct many *m, struct msg *msgs)
{
	int i, a, b;

	for (i = 0; i < NMSG; i++) {
		struct msg *x = &msgs[i];

		pair_of(m->n, i / 4, &a, &b);
		x->from = i % 2 ? b : a;
		x->to = i % 2 ? a : b;
		/* Eager, segmented eager, eager, rendezvous. */
		x->len = (i / 2) % 4 == 1 ? 2 * m->f.eager + 3 :
			 (i / 2) % 4 == 3 ? m->f.rndv + 3 : SMALL;
		x->src = malloc(x->len);
		x->dst = calloc(1, x->len);
		assert_non_null(x->src);
		assert_non_null(x->dst);
		fill(x->src, x->len, (uint64_t)i + 1);
		memset(&x->sop, 0, sizeof(x->sop));
		memset(&x->rop, 0, sizeof(x->rop));
	}
}

/* Reads the CQ once (blocking for a while on an FD CQ); returns the
 * operations completed for the first time. */
static int many_read(struct many *m, int *stray)
{
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	ssize_t n;

	if (m->mode != MANY_WAIT_FD)
		return drain_cq(m->cq, stray);
	n = fi_cq_sreadfrom(m->cq, &e, 1, &src, NULL, 100);
	if (n == 1) {
		if (!e.op_context) {
			(*stray)++;
			return 0;
		}
		return op_mark(e.op_context, e.flags, e.len, e.tag, e.data,
			       src, 0);
	}
	/* An error entry, or nothing within the timeout. */
	return n == -FI_EAGAIN ? 0 : drain_cq(m->cq, stray);
}

/* Whether every operation completed (counters: their totals). */
static bool many_done(struct many *m, const int *done)
{
	if (m->mode == MANY_CNTR)
		return fi_cntr_read(m->tx_cntr) >= NMSG &&
		       fi_cntr_read(m->rx_cntr) >= NMSG;
	return *done >= 2 * NMSG;
}

static void many_run(struct many *m, struct msg *msgs)
{
	int64_t deadline;
	int i, done = 0, stray = 0, got;
	ssize_t ret;

	for (i = 0; i < NMSG; i++)
		assert_int_equal(fi_trecv(m->ep[msgs[i].to], msgs[i].dst,
					  msgs[i].len, NULL,
					  m->addr[msgs[i].from], (uint64_t)i,
					  0, &msgs[i].rop), 0);
	for (i = 0; i < NMSG; i++) {
		deadline = now_ms() + WAIT_MS;
		while ((ret = fi_tsend(m->ep[msgs[i].from], msgs[i].src,
				       msgs[i].len, NULL, m->addr[msgs[i].to],
				       (uint64_t)i, &msgs[i].sop)) ==
		       -FI_EAGAIN && now_ms() < deadline) {
			got = m->cq ? many_read(m, &stray) : 0;
			assert_true(got >= 0);
			done += got;
		}
		assert_int_equal(ret, 0);
	}
	deadline = now_ms() + WAIT_MS;
	while (!many_done(m, &done) && now_ms() < deadline) {
		got = m->cq ? many_read(m, &stray) : 0;
		assert_true(got >= 0);
		done += got;
		if (!got)
			sched_yield();
	}
	assert_int_equal(stray, 0);
	if (m->mode == MANY_CNTR) {
		assert_int_equal(fi_cntr_read(m->tx_cntr), NMSG);
		assert_int_equal(fi_cntr_read(m->rx_cntr), NMSG);
		assert_int_equal(fi_cntr_readerr(m->tx_cntr), 0);
		assert_int_equal(fi_cntr_readerr(m->rx_cntr), 0);
	} else {
		/* Nothing more comes: no completion twice. */
		sleep_ms(50);
		assert_int_equal(many_read(m, &stray), 0);
		assert_int_equal(stray, 0);
		assert_int_equal(done, 2 * NMSG);
	}
}

static void msgs_check(struct many *m, struct msg *msgs)
{
	int i;

	for (i = 0; i < NMSG; i++) {
		struct msg *x = &msgs[i];

		assert_true(check(x->dst, x->len, (uint64_t)i + 1));
		if (m->mode != MANY_CNTR) {
			assert_int_equal(x->sop.ndone, 1);
			assert_int_equal(x->sop.err, 0);
			assert_true(x->sop.flags & FI_SEND);
			assert_int_equal(x->rop.ndone, 1);
			assert_int_equal(x->rop.err, 0);
			assert_true(x->rop.flags & FI_RECV);
			assert_int_equal(x->rop.len, x->len);
			assert_int_equal(x->rop.tag, (uint64_t)i);
			assert_int_equal(x->rop.src, m->addr[x->from]);
		}
		free(x->src);
		free(x->dst);
	}
}

static void many_endpoints(enum many_mode mode)
{
	int n = env_int("LFV_RDM_MANY_NEP", 64);
	struct msg msgs[NMSG];
	struct many m;
	int64_t t0 = now_ms();

	assert_true(n >= 2);
	many_open(&m, n, mode);
	print_message("%d endpoints enabled in %ld ms\n", n,
		      (long)(now_ms() - t0));
	msgs_init(&m, msgs);
	many_run(&m, msgs);
	msgs_check(&m, msgs);
	many_close(&m);
}

TEST_WITH(test_many_one_cq, many_endpoints, MANY_POLL)
TEST_WITH(test_many_one_cq_fd, many_endpoints, MANY_WAIT_FD)
TEST_WITH(test_many_one_cq_auto, many_endpoints, MANY_AUTO)
TEST_WITH(test_many_counters, many_endpoints, MANY_CNTR)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_one_cq),
		cmocka_unit_test(test_many_one_cq_fd),
		cmocka_unit_test(test_many_one_cq_auto),
		cmocka_unit_test(test_many_counters),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
