/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM under FI_THREAD_SAFE with two threads on one endpoint (issue 15): a
 * reader that does nothing but read the endpoint's CQ, which drives its
 * progress (lfv_rdm_cq_progress), while the main thread sends on it: the
 * first send starts the handshake and rendezvous sends wait for their FIN,
 * state that both threads touch; then again with the domain's progress
 * thread polling as well. Every message must arrive whole, every send
 * complete once. Run under ThreadSanitizer (tests/run-all.sh) this is
 * what shows an unlocked read of the endpoint's state.
 */
#include <pthread.h>
#include <stdatomic.h>

#include <rdma/fi_cm.h>

#include "func_rdm_common.h"

#define NMSG 64				/* eager, segmented, rendezvous */
#define SMALL 100

struct reader {
	struct node *n;
	atomic_bool stop;
	atomic_int done;		/* send completions seen */
	int stray;
	int err;			/* the first error drain_cq returned */
};

/* The reader: reads the sender's CQ until told to stop. */
static void *reader_run(void *arg)
{
	struct reader *r = arg;
	int got;

	while (!atomic_load(&r->stop)) {
		got = drain_cq(r->n->cq, &r->stray);
		if (got < 0) {
			if (!r->err)
				r->err = got;
			continue;
		}
		if (got)
			atomic_fetch_add(&r->done, got);
		else
			sched_yield();
	}
	return NULL;
}

/* Eager, segmented eager and rendezvous in turn. */
static size_t msg_len(const struct fab *f, int i)
{
	return i % 3 == 0 ? SMALL : i % 3 == 1 ? 2 * f->eager + 3 :
	       f->rndv + 3;
}

/* Sends every message from a to b (whose receives are posted), b's CQ
 * read meanwhile (a rendezvous needs b's progress); a's CQ is the
 * reader's. */
static void send_all(struct fab *f, struct node *a, struct node *b,
		     fi_addr_t to, uint8_t **src, struct op *sops,
		     int *rdone, int *stray)
{
	int64_t deadline;
	ssize_t ret;
	int i, got;

	for (i = 0; i < NMSG; i++) {
		memset(&sops[i], 0, sizeof(sops[i]));
		deadline = now_ms() + WAIT_MS;
		while ((ret = fi_tsend(a->ep, src[i], msg_len(f, i), NULL, to,
				       (uint64_t)i, &sops[i])) == -FI_EAGAIN &&
		       now_ms() < deadline) {
			got = drain_cq(b->cq, stray);
			assert_true(got >= 0);
			*rdone += got;
		}
		assert_int_equal(ret, 0);
	}
}

/* Sends NMSG messages from a to b while the reader thread reads a's CQ;
 * checks every message and every completion. */
static void send_while_reading(enum fi_progress progress)
{
	struct reader rd = { .stop = false, .done = 0 };
	uint8_t *src[NMSG], *dst[NMSG];
	struct op sops[NMSG], rops[NMSG];
	struct node a, b;
	struct fab f;
	pthread_t thread;
	fi_addr_t to, unused;
	int64_t deadline;
	int i, got, rdone = 0, stray = 0;

	/* lfverbs' default threading: its locks on. */
	assert_int_equal(fab_open_progress(&f, 0, progress), 0);
	assert_int_equal(f.info->domain_attr->threading, FI_THREAD_SAFE);
	assert_int_equal(f.info->domain_attr->data_progress, progress);
	assert_int_equal(node_open(&f, NULL, &a), 0);
	assert_int_equal(node_open(&f, NULL, &b), 0);
	assert_int_equal(fi_av_insert(a.av, b.name, 1, &to, 0, NULL), 1);
	assert_int_equal(fi_av_insert(b.av, a.name, 1, &unused, 0, NULL), 1);
	for (i = 0; i < NMSG; i++) {
		src[i] = malloc(msg_len(&f, i));
		dst[i] = calloc(1, msg_len(&f, i));
		assert_non_null(src[i]);
		assert_non_null(dst[i]);
		fill(src[i], msg_len(&f, i), (uint64_t)i);
		memset(&rops[i], 0, sizeof(rops[i]));
		assert_int_equal(fi_trecv(b.ep, dst[i], msg_len(&f, i), NULL,
					  FI_ADDR_UNSPEC, (uint64_t)i, 0,
					  &rops[i]), 0);
	}
	rd.n = &a;
	assert_int_equal(pthread_create(&thread, NULL, reader_run, &rd), 0);

	send_all(&f, &a, &b, to, src, sops, &rdone, &stray);
	deadline = now_ms() + WAIT_MS;
	while ((rdone < NMSG || atomic_load(&rd.done) < NMSG) &&
	  now_ms() < deadline) {
		got = drain_cq(b.cq, &stray);
		assert_true(got >= 0);
		rdone += got;
		if (!got)
			sched_yield();
	}
	atomic_store(&rd.stop, true);
	assert_int_equal(pthread_join(thread, NULL), 0);

	assert_int_equal(rd.err, 0);
	assert_int_equal(rdone, NMSG);
	assert_int_equal(atomic_load(&rd.done), NMSG);
	assert_int_equal(rd.stray + stray, 0);
	for (i = 0; i < NMSG; i++) {
		assert_int_equal(sops[i].ndone, 1);
		assert_int_equal(sops[i].err, 0);
		assert_int_equal(rops[i].ndone, 1);
		assert_int_equal(rops[i].err, 0);
		assert_int_equal(rops[i].len, msg_len(&f, i));
		assert_true(check(dst[i], msg_len(&f, i), (uint64_t)i));
		free(src[i]);
		free(dst[i]);
	}
	assert_int_equal(node_close(&a), 0);
	assert_int_equal(node_close(&b), 0);
	assert_int_equal(fab_close(&f), 0);
}

/* Progress by the readers of the CQs. */
TEST_WITH(test_send_while_reading, send_while_reading, FI_PROGRESS_MANUAL)

/* The domain's progress thread polls too (lfv_auto.c). */
TEST_WITH(test_send_while_reading_auto, send_while_reading,
	  FI_PROGRESS_AUTO)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_while_reading),
		cmocka_unit_test(test_send_while_reading_auto),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
