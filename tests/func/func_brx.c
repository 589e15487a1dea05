/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Buffered receives on soft-RoCE (MSG endpoints opened with FI_MULTI_RECV):
 * multi-receive buffers carved message by message and released below
 * FI_OPT_MIN_MULTI_RECV, messages that arrive before any receive, fi_cancel
 * of a posted receive (FI_ECANCELED), truncation (FI_ETRUNC), writes with
 * remote CQ data, which take a provider buffer and carry no message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

#include "func_common.h"
#include "func_pair.h"

#define TIMEOUT_MS 5000

struct pair {
	struct func_listener l;
	struct fid_cq *ccq, *scq;
	struct fid_ep *cli, *srv;
	struct fid_mr *mr;
	uint8_t sbuf[8][256];
	uint8_t rbuf[2048];
};

/* rx_op_flags: the default receive flags asked for in the hints; caps:
 * more than FI_MSG | FI_MULTI_RECV. */
static void pair_open_caps(struct pair *p, uint64_t rx_op_flags,
			   uint64_t caps)
{
	struct fi_info *hints = func_hints(FI_EP_MSG);
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	size_t min = 100;

	memset(p, 0, sizeof(*p));
	hints->caps = FI_MSG | FI_MULTI_RECV | caps;
	hints->rx_attr->op_flags = rx_op_flags;
	/* Remote CQ data of a write (FI_RMA) takes a receive (here one of
	 * the provider's buffers). */
	hints->mode |= FI_RX_CQ_DATA;
	func_listener_open(&p->l, hints);
	assert_true(p->l.info->caps & FI_MULTI_RECV);
	assert_int_equal(fi_cq_open(p->l.domain, &cq_attr, &p->ccq, NULL), 0);
	assert_int_equal(fi_cq_open(p->l.domain, &cq_attr, &p->scq, NULL), 0);
	assert_int_equal(fi_mr_reg(p->l.domain, p, sizeof(*p),
				   FI_SEND | FI_RECV, 0, 0, 0, &p->mr, NULL), 0);
	p->cli = func_msg_ep(&p->l, p->l.info, p->ccq);
	p->srv = func_msg_connect(&p->l, p->cli, p->scq);
	assert_int_equal(fi_setopt(&p->srv->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	func_msg_accept(&p->l, p->srv);
}

static void pair_open_flags(struct pair *p, uint64_t rx_op_flags)
{
	pair_open_caps(p, rx_op_flags, 0);
}

static void pair_open(struct pair *p)
{
	pair_open_flags(p, 0);
}

static void pair_close(struct pair *p)
{
	test_close(p->cli, p->srv, p->mr, p->ccq, p->scq);
	func_listener_close(&p->l);
}

/* Reads one entry within the timeout: 1, or what fi_cq_read said. */
static ssize_t read_one(struct fid_cq *cq, struct fi_cq_data_entry *e)
{
	ssize_t ret = func_cq_read_n(cq, e, sizeof(*e), 1, NULL, TIMEOUT_MS);

	return ret ? ret : -FI_EAGAIN;
}

static void send_n(struct pair *p, int n, size_t len, int first)
{
	struct fi_cq_data_entry e;
	int i;

	for (i = 0; i < n; i++) {
		memset(p->sbuf[i], first + i, len);
		assert_int_equal(fi_send(p->cli, p->sbuf[i], len,
					 fi_mr_desc(p->mr), 0, NULL), 0);
		assert_int_equal(read_one(p->ccq, &e), 1);
	}
}

/* Five messages of 200 bytes into the 1024-byte multi-receive buffer at
 * p->rbuf posted with context p: each carved in order from it, the last
 * releasing it (24 bytes left: below FI_OPT_MIN_MULTI_RECV, 100). */
static void send_five_carved(struct pair *p)
{
	struct fi_cq_data_entry e;
	int i;

	send_n(p, 5, 200, 1);
	for (i = 0; i < 5; i++) {
		assert_int_equal(read_one(p->scq, &e), 1);
		assert_ptr_equal(e.op_context, p);
		assert_int_equal(e.len, 200);
		assert_ptr_equal(e.buf, p->rbuf + 200 * i);
		assert_int_equal(p->rbuf[200 * i], i + 1);
		assert_int_equal(p->rbuf[200 * i + 199], i + 1);
		assert_int_equal(e.flags, FI_RECV | FI_MSG |
				 (i == 4 ? FI_MULTI_RECV : 0));
	}
}

static void test_multi_recv(void **state)
{
	struct fi_msg msg;
	struct iovec iov;
	void *desc;
	struct pair p;

	(void)state;
	pair_open(&p);
	desc = fi_mr_desc(p.mr);
	iov = (struct iovec){ .iov_base = p.rbuf, .iov_len = 1024 };
	msg = (struct fi_msg){ .msg_iov = &iov, .desc = &desc,
			       .iov_count = 1, .context = &p };
	assert_int_equal(fi_recvmsg(p.srv, &msg, FI_MULTI_RECV), 0);
	send_five_carved(&p);
	pair_close(&p);
}

/* FI_MULTI_RECV as the endpoint's default receive flag (fabtests'
 * multi_recv -e msg asks so in rx_attr->op_flags): fi_recv posts a
 * multi-receive buffer, on the accepting endpoint too. */
static void test_default_multi_recv(void **state)
{
	struct pair p;

	(void)state;
	pair_open_flags(&p, FI_MULTI_RECV);
	assert_int_equal(p.l.info->rx_attr->op_flags, FI_MULTI_RECV);
	assert_int_equal(fi_recv(p.srv, p.rbuf, 1024, fi_mr_desc(p.mr), 0, &p),
			 0);
	send_five_carved(&p);
	pair_close(&p);
}

static void test_unexpected_then_posted(void **state)
{
	struct fi_cq_data_entry e;
	struct pair p;
	int i;

	(void)state;
	pair_open(&p);
	/* Sends complete before any receive exists: the data waits. */
	send_n(&p, 3, 64, 10);
	assert_int_equal(fi_cq_read(p.scq, &e, 1), -FI_EAGAIN);
	for (i = 0; i < 3; i++)
		assert_int_equal(fi_recv(p.srv, p.rbuf + 100 * i, 100,
					 fi_mr_desc(p.mr), 0, p.rbuf + 100 * i),
				 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(read_one(p.scq, &e), 1);
		assert_ptr_equal(e.op_context, p.rbuf + 100 * i);
		assert_int_equal(e.len, 64);
		assert_int_equal(p.rbuf[100 * i], 10 + i);
	}
	pair_close(&p);
}

static void test_cancel_and_truncate(void **state)
{
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry e;
	struct pair p;
	int tag;

	(void)state;
	pair_open(&p);
	assert_int_equal(fi_recv(p.srv, p.rbuf, 100, fi_mr_desc(p.mr), 0,
				 &tag), 0);
	assert_int_equal(fi_cancel(&p.srv->fid, &tag), 0);
	assert_int_equal(fi_cq_read(p.scq, &e, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(p.scq, &err, 0), 1);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_ptr_equal(err.op_context, &tag);
	/* Gone already; and never posted. */
	assert_int_equal(fi_cancel(&p.srv->fid, &tag), -FI_ENOENT);
	assert_int_equal(fi_cancel(&p.srv->fid, &p), -FI_ENOENT);

	/* A message longer than the receive: FI_ETRUNC with the overflow. */
	assert_int_equal(fi_recv(p.srv, p.rbuf, 100, fi_mr_desc(p.mr), 0,
				 &tag), 0);
	send_n(&p, 1, 160, 7);
	assert_int_equal(read_one(p.scq, &e), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(p.scq, &err, 0), 1);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.olen, 60);
	assert_int_equal(p.rbuf[99], 7);
	/* The connection goes on. */
	assert_int_equal(fi_recv(p.srv, p.rbuf, 100, fi_mr_desc(p.mr), 0,
				 &tag), 0);
	send_n(&p, 1, 50, 9);
	assert_int_equal(read_one(p.scq, &e), 1);
	assert_int_equal(e.len, 50);
	pair_close(&p);
}

/* A write with remote CQ data lands in a provider buffer, which holds the
 * last message that went through it: the target reports the write (no
 * data, len 0) and keeps that stale buffer away from the application's
 * receive, which the next message fills (issue 14, defect 3). */
static void test_writedata_into_buffers(void **state)
{
	uint8_t target[256] = { 0 }, src[64];
	struct fi_cq_data_entry e;
	struct fid_mr *tmr, *smr;
	struct pair p;
	int tag, tag2;

	(void)state;
	pair_open_caps(&p, 0, FI_RMA);
	assert_int_equal(fi_mr_reg(p.l.domain, target, sizeof(target),
				   FI_REMOTE_WRITE, 0, 0, 0, &tmr, NULL), 0);
	assert_int_equal(fi_mr_reg(p.l.domain, src, sizeof(src), FI_WRITE, 0, 0,
				   0, &smr, NULL), 0);
	/* A message through a provider buffer, so that it holds 200 bytes. */
	assert_int_equal(fi_recv(p.srv, p.rbuf, 256, fi_mr_desc(p.mr), 0,
				 &tag), 0);
	send_n(&p, 1, 200, 3);
	assert_int_equal(read_one(p.scq, &e), 1);
	assert_ptr_equal(e.op_context, &tag);
	memset(p.rbuf, 0x5a, 256);
	assert_int_equal(fi_recv(p.srv, p.rbuf, 256, fi_mr_desc(p.mr), 0,
				 &tag2), 0);
	memset(src, 0x77, sizeof(src));
	assert_int_equal(fi_writedata(p.cli, src, sizeof(src),
				      fi_mr_desc(smr), 0xbeef, 0,
				      (p.l.info->domain_attr->mr_mode &
				       FI_MR_VIRT_ADDR) ?
				      (uint64_t)(uintptr_t)target : 0,
				      fi_mr_key(tmr), NULL), 0);
	assert_int_equal(read_one(p.ccq, &e), 1);
	assert_int_equal(read_one(p.scq, &e), 1);
	assert_int_equal(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0xbeef);
	assert_int_equal(e.len, sizeof(src));	/* the write's length */
	assert_int_equal(target[63], 0x77);
	assert_int_equal(p.rbuf[0], 0x5a);	/* the receive is untouched */
	/* ...and the next message fills it. */
	send_n(&p, 1, 10, 9);
	assert_int_equal(read_one(p.scq, &e), 1);
	assert_ptr_equal(e.op_context, &tag2);
	assert_int_equal(e.len, 10);
	assert_int_equal(p.rbuf[9], 9);
	assert_int_equal(p.rbuf[10], 0x5a);
	test_close(tmr, smr);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_recv),
		cmocka_unit_test(test_default_multi_recv),
		cmocka_unit_test(test_unexpected_then_posted),
		cmocka_unit_test(test_cancel_and_truncate),
		cmocka_unit_test(test_writedata_into_buffers),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
