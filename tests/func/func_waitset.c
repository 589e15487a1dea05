/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Wait sets through the real libfabric core on soft-RoCE: two DGRAM (then
 * two RDM) endpoints in one process, their CQs (and, for DGRAM, a receive
 * counter and an EQ) opened with FI_WAIT_SET on one wait set. fi_wait
 * times out with -FI_ETIMEDOUT while nothing happens and returns for a
 * message (sent from another thread while it sleeps, for DGRAM, and
 * over a connection made on the first message for RDM), in fabtests'
 * loop: fi_wait, then fi_cq_read of every CQ. The set's fd (FI_GETWAIT) works with fi_trywait and poll(2), and
 * the set refuses to close while its members are open.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include "func_common.h"
#include "func_pair.h"
#include "../test_close.h"

#define LEN 256
#define WAIT_MS 10000		/* one fi_wait that must be woken */
#define DEADLINE_MS 30000	/* one exchange, soft-RoCE under TCG */

struct side {
	FUNC_UD_SIDE_FIELDS;
	uint8_t buf[2][LEN];
	int tx_done, rx_done;
};

struct bed {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_wait *ws;
	struct fid_cntr *rx_cntr;	/* side 1's receives (DGRAM) */
	struct fid_eq *eq;		/* a member that stays quiet */
	struct side s[2];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void side_open(struct bed *b, struct side *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_SET,
				      .wait_set = b->ws };

	func_ud_ep_open(b->domain, b->info, &cq_attr, &s->ep, &s->cq, &s->av);
	if (b->rx_cntr && s == &b->s[1])
		assert_int_equal(fi_ep_bind(s->ep, &b->rx_cntr->fid, FI_RECV),
				 0);
	func_ep_start(b->domain, s->ep, s->name, sizeof(s->name), &s->namelen,
		      s->buf, sizeof(s->buf), &s->mr);
}

static void bed_open(struct bed *b, enum fi_ep_type type)
{
	struct fi_info *hints = func_hints(type);
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
					  .wait_obj = FI_WAIT_SET };
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_SET };

	memset(b, 0, sizeof(*b));
	hints->caps = FI_MSG;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &b->info), 0);
	fi_freeinfo(hints);
	assert_int_equal(fi_fabric(b->info->fabric_attr, &b->fabric, NULL), 0);
	assert_int_equal(fi_wait_open(b->fabric, &wait_attr, &b->ws), 0);
	eq_attr.wait_set = b->ws;
	assert_int_equal(fi_eq_open(b->fabric, &eq_attr, &b->eq, NULL), 0);
	assert_int_equal(fi_domain(b->fabric, b->info, &b->domain, NULL), 0);
	if (type == FI_EP_DGRAM) {
		cntr_attr.wait_set = b->ws;
		assert_int_equal(fi_cntr_open(b->domain, &cntr_attr,
					      &b->rx_cntr, NULL), 0);
	}
	FUNC_OPEN_SIDES(b, side_open);
}

static void bed_close(struct bed *b)
{
	int i;

	for (i = 0; i < 2; i++) {
		test_close(b->s[i].ep, b->s[i].mr, b->s[i].av);
		/* The set is in use while a member is open. */
		assert_int_equal(fi_close(&b->ws->fid), -FI_EBUSY);
		assert_int_equal(fi_close(&b->s[i].cq->fid), 0);
	}
	test_close(b->rx_cntr, b->domain);
	assert_int_equal(fi_close(&b->ws->fid), -FI_EBUSY);
	test_close(b->eq, b->ws, b->fabric);
	fi_freeinfo(b->info);
}

/* Takes what both CQs hold, counting completions per side. */
static void drain(struct bed *b)
{
	struct fi_cq_entry e;
	ssize_t ret;
	int i;

	for (i = 0; i < 2; i++) {
		while ((ret = fi_cq_read(b->s[i].cq, &e, 1)) == 1) {
			if (e.op_context == b->s[i].buf[0])
				b->s[i].tx_done++;
			else
				b->s[i].rx_done++;
		}
		assert_int_equal(ret, -FI_EAGAIN);
	}
}

/* fabtests' loop: fi_wait, then read the CQs, until side 0's send and
 * side 1's receive are in, within DEADLINE_MS. */
static void wait_exchange(struct bed *b)
{
	int64_t end = now_ms() + DEADLINE_MS;

	while (!b->s[0].tx_done || !b->s[1].rx_done) {
		assert_true(now_ms() < end);
		assert_int_equal(fi_wait(b->ws, WAIT_MS), 0);
		drain(b);
	}
	assert_int_equal(b->s[0].tx_done, 1);
	assert_int_equal(b->s[1].rx_done, 1);
	assert_int_equal(b->s[1].buf[1][LEN - 1], 0x5a);
	b->s[0].tx_done = b->s[1].rx_done = 0;
}

static void post_recv(struct bed *b)
{
	memset(b->s[1].buf[1], 0, LEN);
	assert_int_equal(fi_recv(b->s[1].ep, b->s[1].buf[1], LEN,
				 fi_mr_desc(b->s[1].mr), FI_ADDR_UNSPEC,
				 b->s[1].buf[1]), 0);
}

static void post_send(struct bed *b)
{
	memset(b->s[0].buf[0], 0x5a, LEN);
	assert_int_equal(fi_send(b->s[0].ep, b->s[0].buf[0], LEN,
				 fi_mr_desc(b->s[0].mr), b->s[0].peer,
				 b->s[0].buf[0]), 0);
}

/* Nothing pending: fi_wait sleeps out its timeout. */
static void expect_timeout(struct bed *b, int ms)
{
	int64_t start = now_ms();

	assert_int_equal(fi_wait(b->ws, ms), -FI_ETIMEDOUT);
	assert_true(now_ms() - start >= ms);
}

static void *late_send(void *arg)
{
	usleep(200 * 1000);
	post_send(arg);
	return NULL;
}

static void test_dgram(void **state)
{
	struct pollfd pfd = { .events = POLLIN };
	struct fid *fids[1];
	pthread_t thread;
	struct bed b;
	int ret;

	(void)state;
	bed_open(&b, FI_EP_DGRAM);
	expect_timeout(&b, 100);
	/* A message sent while fi_wait sleeps wakes it. */
	post_recv(&b);
	assert_int_equal(pthread_create(&thread, NULL, late_send, &b), 0);
	wait_exchange(&b);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(fi_cntr_read(b.rx_cntr), 1);
	/* The counter's change is reported once (perhaps already, by one
	 * of the waits above: members are checked in order): after at
	 * most one more wakeup, the set is quiet. */
	ret = fi_wait(b.ws, 0);
	assert_true(ret == 0 || ret == -FI_ETIMEDOUT);
	expect_timeout(&b, 50);

	/* The set's fd, armed by fi_trywait, in the application's poll. */
	assert_int_equal(fi_control(&b.ws->fid, FI_GETWAIT, &pfd.fd), 0);
	fids[0] = &b.ws->fid;
	assert_int_equal(fi_trywait(b.fabric, fids, 1), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	post_recv(&b);
	post_send(&b);
	assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
	assert_int_equal(fi_trywait(b.fabric, fids, 1), -FI_EAGAIN);
	wait_exchange(&b);
	bed_close(&b);
}

static void test_rdm(void **state)
{
	struct bed b;
	int i;

	(void)state;
	bed_open(&b, FI_EP_RDM);
	expect_timeout(&b, 100);
	/* The first message makes the connection (both endpoints'
	 * progress, between the waits). */
	for (i = 0; i < 3; i++) {
		post_recv(&b);
		post_send(&b);
		wait_exchange(&b);
	}
	expect_timeout(&b, 100);
	bed_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgram),
		cmocka_unit_test(test_rdm),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
