/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * DGRAM endpoints (UD queue pairs) through the real libfabric core on
 * soft-RoCE: two endpoints in one process exchange datagrams; receives
 * report their sender through the AV (FI_SOURCE); remote CQ data; inject;
 * FI_PROGRESS_AUTO with a condition-variable CQ; bad input.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
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

#define LEN 512
#define NMSG 32
#define TIMEOUT_MS 5000

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	uint8_t buf[NMSG][LEN];
	fi_addr_t peer;		/* the other side, in the shared AV */
};

struct bed {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct side s[2];
};

static void side_open(struct bed *b, struct side *s, enum fi_wait_obj wait)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_DATA,
				   .wait_obj = wait };

	assert_int_equal(fi_endpoint(b->domain, b->info, &s->ep, NULL), 0);
	assert_int_equal(fi_cq_open(b->domain, &attr, &s->cq, NULL), 0);
	assert_int_equal(fi_ep_bind(s->ep, &s->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(s->ep, &b->av->fid, 0), 0);
	assert_int_equal(fi_enable(s->ep), 0);
	assert_int_equal(fi_mr_reg(b->domain, s->buf, sizeof(s->buf),
				   FI_SEND | FI_RECV, 0, 0, 0, &s->mr, NULL),
			 0);
}

static void bed_open_tc(struct bed *b, enum fi_progress progress,
			enum fi_wait_obj wait, uint32_t tclass);

static void bed_open(struct bed *b, enum fi_progress progress,
		     enum fi_wait_obj wait)
{
	bed_open_tc(b, progress, wait, 0);
}

static void bed_open_tc(struct bed *b, enum fi_progress progress,
			enum fi_wait_obj wait, uint32_t tclass)
{
	struct fi_info *hints = func_hints(FI_EP_DGRAM);
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t name[2][64];
	size_t len;
	int i;

	memset(b, 0, sizeof(*b));
	hints->caps = FI_MSG | FI_SOURCE;
	hints->domain_attr->data_progress = progress;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &b->info), 0);
	fi_freeinfo(hints);
	assert_true(b->info->caps & FI_SOURCE);
	b->info->tx_attr->tclass = tclass;
	assert_int_equal(fi_fabric(b->info->fabric_attr, &b->fabric, NULL), 0);
	assert_int_equal(fi_domain(b->fabric, b->info, &b->domain, NULL), 0);
	assert_int_equal(fi_av_open(b->domain, &av_attr, &b->av, NULL), 0);
	for (i = 0; i < 2; i++) {
		side_open(b, &b->s[i], wait);
		len = sizeof(name[i]);
		assert_int_equal(fi_getname(&b->s[i].ep->fid, name[i], &len),
				 0);
		assert_int_equal(len, 32); /* FI_ADDR_IB_UD */
	}
	/* s[0] is fi_addr 0 in the shared AV, s[1] is 1. */
	for (i = 0; i < 2; i++)
		assert_int_equal(fi_av_insert(b->av, name[i], 1,
					      &b->s[1 - i].peer, 0, NULL), 1);
}

static void bed_close(struct bed *b)
{
	int i;

	for (i = 0; i < 2; i++) {
		test_close(b->s[i].ep, b->s[i].mr, b->s[i].cq);
	}
	test_close(b->av);
	func_domain_close(b->info, b->fabric, b->domain);
}

/* Reads one entry (and its source) within the timeout; fails otherwise. */
static void read_one(struct fid_cq *cq, struct fi_cq_data_entry *e,
		     fi_addr_t *src)
{
	assert_int_equal(func_cq_read_n(cq, e, sizeof(*e), 1, src, TIMEOUT_MS),
			 1);
}

static void test_exchange_with_source(void **state)
{
	struct fi_cq_data_entry e;
	struct bed b;
	fi_addr_t src;
	int i;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	for (i = 0; i < NMSG; i++)
		assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[i], LEN,
					 fi_mr_desc(b.s[1].mr), 0,
					 &b.s[1].buf[i]), 0);
	for (i = 0; i < NMSG; i++) {
		memset(b.s[0].buf[i], i + 1, LEN);
		assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf[i],
					 (size_t)(i + 1) * 8,
					 fi_mr_desc(b.s[0].mr), b.s[0].peer,
					 &b.s[0].buf[i]), 0);
		read_one(b.s[0].cq, &e, &src);
		assert_ptr_equal(e.op_context, &b.s[0].buf[i]);
		assert_int_equal(e.flags, FI_SEND | FI_MSG);
		/* UD delivers in order on one path; the receive is ours. */
		read_one(b.s[1].cq, &e, &src);
		assert_ptr_equal(e.op_context, &b.s[1].buf[i]);
		assert_int_equal(e.flags, FI_RECV | FI_MSG);
		assert_int_equal(e.len, (size_t)(i + 1) * 8);
		assert_ptr_equal(e.buf, b.s[1].buf[i]);
		assert_int_equal(b.s[1].buf[i][0], i + 1);
		assert_int_equal(b.s[1].buf[i][e.len - 1], i + 1);
		/* The sender, as the receiver's AV knows it. */
		assert_int_equal(src, b.s[1].peer);
	}
	bed_close(&b);
}

static void test_data_and_inject(void **state)
{
	struct fi_cq_data_entry e;
	struct bed b;
	fi_addr_t src;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[0], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[1], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	assert_int_equal(fi_senddata(b.s[0].ep, b.s[0].buf[0], 16,
				     fi_mr_desc(b.s[0].mr), 0xabcd1234,
				     b.s[0].peer, NULL), 0);
	read_one(b.s[1].cq, &e, &src);
	assert_int_equal(e.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, 0xabcd1234);
	memcpy(b.s[0].buf[1], "inject", 7);
	assert_int_equal(fi_inject(b.s[0].ep, b.s[0].buf[1], 7, b.s[0].peer),
			 0);
	memset(b.s[0].buf[1], 0, 7); /* inject copied it already */
	read_one(b.s[1].cq, &e, &src);
	assert_int_equal(e.len, 7);
	assert_string_equal((char *)b.s[1].buf[1], "inject");
	/* One send completion (senddata); inject makes none. */
	read_one(b.s[0].cq, &e, &src);
	assert_int_equal(e.flags, FI_SEND | FI_MSG);
	assert_int_equal(fi_cq_read(b.s[0].cq, &e, 1), -FI_EAGAIN);
	bed_close(&b);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Inject (unsignaled) sends that went out leave no completion of their
 * own: closing the endpoint must not wait for one (it once waited 2 s and
 * warned "N requests never completed"). */
static void test_close_after_injects(void **state)
{
	struct fi_cq_data_entry e;
	struct bed b;
	fi_addr_t src;
	int64_t t0;
	int i;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	for (i = 0; i < 8; i++)
		assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[i], LEN,
					 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(fi_inject(b.s[0].ep, b.s[0].buf[i], 8,
					   b.s[0].peer), 0);
	for (i = 0; i < 8; i++)
		read_one(b.s[1].cq, &e, &src);
	t0 = now_ms();
	assert_int_equal(fi_close(&b.s[0].ep->fid), 0);
	print_message("# close after 8 injects: %lld ms\n",
		      (long long)(now_ms() - t0));
	assert_true(now_ms() - t0 < 1000);
	assert_int_equal(fi_endpoint(b.domain, b.info, &b.s[0].ep, NULL), 0);
	bed_close(&b);
}

/* FI_MORE holds requests back until a call without it posts the chain. */
static void test_more_chain(void **state)
{
	struct fi_cq_data_entry e;
	struct iovec iov;
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1 };
	void *desc;
	struct bed b;
	fi_addr_t src;
	int i;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	desc = fi_mr_desc(b.s[0].mr);
	msg.desc = &desc;
	msg.addr = b.s[0].peer;
	for (i = 0; i < 4; i++)
		assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[i], LEN,
					 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	for (i = 0; i < 4; i++) {
		b.s[0].buf[i][0] = (uint8_t)(0xa0 + i);
		iov = (struct iovec){ .iov_base = b.s[0].buf[i],
				      .iov_len = 32 };
		msg.context = &b.s[0].buf[i];
		assert_int_equal(fi_sendmsg(b.s[0].ep, &msg, i < 3 ? FI_MORE :
					    FI_COMPLETION), 0);
		if (i == 2) {
			/* Three requests wait; nothing was sent. */
			poll(NULL, 0, 50);
			assert_int_equal(fi_cq_read(b.s[1].cq, &e, 1),
					 -FI_EAGAIN);
		}
	}
	for (i = 0; i < 4; i++) {
		read_one(b.s[1].cq, &e, &src);
		assert_int_equal(b.s[1].buf[i][0], 0xa0 + i);
		read_one(b.s[0].cq, &e, &src);
		assert_ptr_equal(e.op_context, &b.s[0].buf[i]);
	}
	bed_close(&b);
}

/* A DSCP traffic class (fi_tc_dscp_set) goes into the address handles;
 * traffic still flows. */
static void test_traffic_class(void **state)
{
	struct fi_cq_data_entry e;
	struct bed b;
	fi_addr_t src;

	(void)state;
	bed_open_tc(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE, fi_tc_dscp_set(46));
	assert_int_equal(fi_tc_dscp_get(b.info->tx_attr->tclass), 46);
	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[0], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf[0], 40,
				 fi_mr_desc(b.s[0].mr), b.s[0].peer, NULL), 0);
	read_one(b.s[1].cq, &e, &src);
	assert_int_equal(e.len, 40);
	assert_int_equal(src, b.s[1].peer);
	bed_close(&b);
}

/* fi_ep_alias: the same endpoint with other default flags. With selective
 * completion, fi_send on the endpoint reports nothing, fi_send on an
 * alias whose transmit flags hold FI_COMPLETION does. */
static void test_alias(void **state)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cq_data_entry e;
	struct fid_ep *ep, *alias = NULL;
	struct fid_cq *cq;
	uint64_t flags;
	uint8_t name[64];
	size_t len = sizeof(name);
	struct bed b;
	fi_addr_t src;
	int tag;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	assert_int_equal(fi_endpoint(b.domain, b.info, &ep, NULL), 0);
	assert_int_equal(fi_cq_open(b.domain, &cq_attr, &cq, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV |
				    FI_SELECTIVE_COMPLETION), 0);
	assert_int_equal(fi_ep_bind(ep, &b.av->fid, 0), 0);
	assert_int_equal(fi_enable(ep), 0);
	assert_int_equal(fi_ep_alias(ep, &alias, 0), -FI_EINVAL);
	assert_int_equal(fi_ep_alias(ep, &alias, FI_TRANSMIT | FI_COMPLETION),
			 0);
	flags = FI_TRANSMIT;
	assert_int_equal(fi_control(&alias->fid, FI_GETOPSFLAG, &flags), 0);
	assert_int_equal(flags, FI_COMPLETION);
	/* Calls through the alias reach the endpoint. */
	assert_int_equal(fi_getname(&alias->fid, name, &len), 0);
	assert_int_equal(fi_ep_bind(alias, &cq->fid, FI_TRANSMIT),
			 -FI_EINVAL);
	assert_int_equal(fi_close(&ep->fid), -FI_EBUSY);

	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[0], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[1], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	assert_int_equal(fi_send(ep, b.s[0].buf[0], 8, fi_mr_desc(b.s[0].mr),
				 b.s[0].peer, NULL), 0);
	read_one(b.s[1].cq, &e, &src);
	assert_int_equal(fi_send(alias, b.s[0].buf[0], 8,
				 fi_mr_desc(b.s[0].mr), b.s[0].peer, &tag), 0);
	read_one(b.s[1].cq, &e, &src);
	/* Only the alias's send shows up. */
	read_one(cq, &e, &src);
	assert_ptr_equal(e.op_context, &tag);
	assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAGAIN);

	test_close(alias, ep, cq);
	bed_close(&b);
}

struct late_send {
	struct side *from;
	int delay_ms;
};

static void *send_later(void *arg)
{
	struct late_send *l = arg;

	poll(NULL, 0, l->delay_ms);
	assert_int_equal(fi_send(l->from->ep, l->from->buf[0], 64,
				 fi_mr_desc(l->from->mr), l->from->peer,
				 NULL), 0);
	return NULL;
}

/* Side 1's receive (context b) is filled by a send from side 0 100 ms
 * later, which fi_cq_sread sleeps until. */
static void sread_late_send(struct bed *b)
{
	struct late_send l = { .from = &b->s[0], .delay_ms = 100 };
	struct fi_cq_data_entry e;
	pthread_t t;

	assert_int_equal(fi_recv(b->s[1].ep, b->s[1].buf[0], LEN,
				 fi_mr_desc(b->s[1].mr), 0, b), 0);
	pthread_create(&t, NULL, send_later, &l);
	assert_int_equal(fi_cq_sread(b->s[1].cq, &e, 1, NULL, TIMEOUT_MS), 1);
	assert_ptr_equal(e.op_context, b);
	assert_int_equal(e.len, 64);
	pthread_join(t, NULL);
}

/* With FI_PROGRESS_AUTO a condition-variable CQ needs no reader to make
 * progress: sread sleeps and the progress thread wakes it. */
static void test_auto_progress_mutex_cond(void **state)
{
	struct bed b;

	(void)state;
	bed_open(&b, FI_PROGRESS_AUTO, FI_WAIT_MUTEX_COND);
	assert_int_equal(b.info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	sread_late_send(&b);
	bed_close(&b);
}

/* FI_WAIT_FD under manual progress: sread sleeps on the channel. */
static void test_fd_sread(void **state)
{
	struct bed b;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_FD);
	sread_late_send(&b);
	bed_close(&b);
}

/* fi_cancel: the UD QP flushes and takes its other receives back, in
 * order, with the same address; sends in flight complete as sent; a
 * receive that completed before the cancel keeps its completion. */
static void test_cancel(void **state)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err;
	uint8_t name0[64], name1[64];
	size_t len0 = sizeof(name0), len1 = sizeof(name1);
	struct iovec iov[2];
	void *desc[2];
	struct bed b;
	fi_addr_t src;
	int i, sends, errs;
	ssize_t ret;

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	assert_int_equal(fi_getname(&b.s[1].ep->fid, name0, &len0), 0);
	/* Receives 0..6 (6 in two pieces); cancel 3. */
	for (i = 0; i < 6; i++)
		assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[i], LEN,
					 fi_mr_desc(b.s[1].mr), 0,
					 &b.s[1].buf[i]), 0);
	iov[0] = (struct iovec){ .iov_base = b.s[1].buf[6], .iov_len = 8 };
	iov[1] = (struct iovec){ .iov_base = b.s[1].buf[7], .iov_len = LEN };
	desc[0] = desc[1] = fi_mr_desc(b.s[1].mr);
	assert_int_equal(fi_recvv(b.s[1].ep, iov, desc, 2, 0, &b.s[1].buf[6]),
			 0);
	/* Sends of the cancelling side in flight: none may fail. */
	for (i = 0; i < 8; i++)
		assert_int_equal(fi_send(b.s[1].ep, b.s[1].buf[20 + i], 8,
					 fi_mr_desc(b.s[1].mr), b.s[1].peer,
					 &b.s[1].buf[20 + i]), 0);
	assert_int_equal(fi_cancel(&b.s[1].ep->fid, &b.s[1].buf[3]), 0);
	assert_int_equal(fi_cancel(&b.s[1].ep->fid, &b.s[1].buf[3]),
			 -FI_ENOENT);
	assert_int_equal(fi_cancel(&b.s[1].ep->fid, NULL), -FI_ENOENT);
	assert_int_equal(fi_cancel(&b.s[1].ep->fid, &e), -FI_ENOENT);
	/* Same QP number, same address. */
	assert_int_equal(fi_getname(&b.s[1].ep->fid, name1, &len1), 0);
	assert_memory_equal(name0, name1, len0);

	/* The 8 sends completed as sent (s[0] has no receives posted). The
	 * cancelled receive is in the error queue, among them. */
	sends = errs = 0;
	for (i = 0; i < TIMEOUT_MS && (sends < 8 || errs < 1); i++) {
		ret = fi_cq_read(b.s[1].cq, &e, 1);
		if (ret == 1) {
			assert_int_equal(e.flags, FI_SEND | FI_MSG);
			sends++;
		} else if (ret == -FI_EAVAIL) {
			assert_int_equal(fi_cq_readerr(b.s[1].cq, &err, 0), 1);
			assert_ptr_equal(err.op_context, &b.s[1].buf[3]);
			assert_int_equal(err.err, FI_ECANCELED);
			assert_int_equal(err.flags, FI_RECV | FI_MSG);
			errs++;
		} else {
			assert_int_equal(ret, -FI_EAGAIN);
			usleep(1000);
		}
	}
	assert_int_equal(sends, 8);
	assert_int_equal(errs, 1);
	assert_int_equal(fi_cq_read(b.s[1].cq, &e, 1), -FI_EAGAIN);

	/* The other six come back in order, scattering still works, and
	 * the sender is still known. */
	for (i = 0; i < 6; i++) {
		memset(b.s[0].buf[i], 0x40 + i, LEN);
		assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf[i], 8 + LEN / 2,
					 fi_mr_desc(b.s[0].mr), b.s[0].peer,
					 NULL), 0);
	}
	for (i = 0; i < 6; i++) {
		int want = i < 3 ? i : i + 1;

		read_one(b.s[1].cq, &e, &src);
		assert_ptr_equal(e.op_context, &b.s[1].buf[want]);
		assert_int_equal(e.len, 8 + LEN / 2);
		assert_int_equal(src, b.s[1].peer);
		if (want == 6) {
			assert_int_equal(b.s[1].buf[6][7], 0x40 + i);
			assert_int_equal(b.s[1].buf[7][LEN / 2 - 1], 0x40 + i);
		} else {
			assert_int_equal(b.s[1].buf[want][LEN / 2], 0x40 + i);
		}
	}
	for (i = 0; i < 6; i++)
		read_one(b.s[0].cq, &e, &src);

	/* Completed before the cancel (still in the verbs CQ): not
	 * cancelled, its completion stays. */
	assert_int_equal(fi_recv(b.s[1].ep, b.s[1].buf[8], LEN,
				 fi_mr_desc(b.s[1].mr), 0, &b.s[1].buf[8]), 0);
	assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf[0], 16,
				 fi_mr_desc(b.s[0].mr), b.s[0].peer, NULL), 0);
	read_one(b.s[0].cq, &e, &src);
	usleep(100 * 1000); /* let it land */
	assert_int_equal(fi_cancel(&b.s[1].ep->fid, &b.s[1].buf[8]), 0);
	read_one(b.s[1].cq, &e, &src);
	assert_ptr_equal(e.op_context, &b.s[1].buf[8]);
	assert_int_equal(e.len, 16);
	assert_int_equal(fi_cq_read(b.s[1].cq, &e, 1), -FI_EAGAIN);
	bed_close(&b);
}

static void test_bad_input(void **state)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_ep *ep;
	struct fid_av *av2;
	struct bed b;
	uint8_t name[64];
	size_t len = sizeof(name), optval, optlen = sizeof(optval);

	(void)state;
	bed_open(&b, FI_PROGRESS_MANUAL, FI_WAIT_NONE);
	/* Larger than one MTU. */
	assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf, sizeof(b.s[0].buf),
				 fi_mr_desc(b.s[0].mr), b.s[0].peer, NULL),
			 b.info->ep_attr->max_msg_size < sizeof(b.s[0].buf) ?
			 -FI_EINVAL : 0);
	/* An address the AV never gave out. */
	assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf, 8,
				 fi_mr_desc(b.s[0].mr), 77, NULL), -FI_EINVAL);
	/* Unregistered memory for a non-inject send (FI_MR_LOCAL). */
	assert_int_equal(fi_send(b.s[0].ep, b.s[0].buf, 8, NULL, b.s[0].peer,
				 NULL), -FI_EINVAL);
	assert_int_equal(fi_inject(b.s[0].ep, b.s[0].buf,
				   b.info->tx_attr->inject_size + 1,
				   b.s[0].peer), -FI_EINVAL);
	/* The AV is in use. */
	assert_int_equal(fi_close(&b.av->fid), -FI_EBUSY);
	/* Names come with fi_enable; enabling needs an AV; one AV only. */
	assert_int_equal(fi_endpoint(b.domain, b.info, &ep, NULL), 0);
	assert_int_equal(fi_getname(&ep->fid, name, &len), -FI_EOPBADSTATE);
	assert_int_equal(fi_enable(ep), -FI_ENOAV);
	assert_int_equal(fi_av_open(b.domain, &av_attr, &av2, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &b.av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(ep, &av2->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_connect(ep, name, NULL, 0), -FI_ENOSYS);
	/* No connection, no connection data (MSG's option only). */
	assert_int_equal(fi_getopt(&ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_CM_DATA_SIZE, &optval, &optlen),
			 -FI_ENOPROTOOPT);
	test_close(ep, av2);
	bed_close(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exchange_with_source),
		cmocka_unit_test(test_data_and_inject),
		cmocka_unit_test(test_close_after_injects),
		cmocka_unit_test(test_more_chain),
		cmocka_unit_test(test_traffic_class),
		cmocka_unit_test(test_alias),
		cmocka_unit_test(test_auto_progress_mutex_cond),
		cmocka_unit_test(test_fd_sread),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_bad_input),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
