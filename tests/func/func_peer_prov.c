/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lfverbs' peer CQs (fi_peer(3)) against another provider, both loaded by
 * the real libfabric core: lfvpeer (tests/func/peer_prov), a loopback RDM
 * test provider built by `make check`.
 *
 * - lfverbs as owner: lfvpeer opens its CQ with FI_PEER on the fid_peer_cq
 *   an lfverbs CQ exports; lfvpeer traffic completes, send and receive,
 *   into the lfverbs CQ (also its wait fd and sread), errors through
 *   writeerr into fi_cq_readerr.
 * - lfverbs as peer: an lfverbs CQ opened with FI_PEER on an lfvpeer CQ
 *   keeps the peer read contract (lfverbs has no endpoints yet to send).
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include "lfv_fi_compat.h"	/* the peer interfaces of this libfabric */

#include "func_common.h"
#include "func_owner.h"

#define MSGS 64
#define MSG_LEN 256
#define SHORT_LEN 64
#define DATA_BASE 0x5eed0000ULL

/* An lfverbs fabric, domain and CQ, the CQ exported as a fid_peer_cq. */
/* lfvpeer objects: one CQ (a peer, or an owner with its own entries) bound
 * to two endpoints that know each other through one AV. */
struct lfvpeer {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep[2];
	fi_addr_t addr[2];
};

static struct fi_info *lfvpeer_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		abort();
	hints->fabric_attr->prov_name = strdup("lfvpeer");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	return hints;
}

/* owner NULL: the lfvpeer CQ holds its own entries (format DATA). */
static void lfvpeer_open(struct lfvpeer *p, struct fid_peer_cq *owner)
{
	struct fi_peer_cq_context peer_ctx = { .size = sizeof(peer_ctx),
					       .cq = owner };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
				      .flags = owner ? FI_PEER : 0 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints = lfvpeer_hints();
	char name[2][64];
	const char *names[2] = { name[0], name[1] };
	size_t len;
	int i;

	func_domain_open(hints, &p->info, &p->fabric, &p->domain);
	assert_int_equal(p->info->addr_format, FI_ADDR_STR);
	assert_int_equal(fi_cq_open(p->domain, &cq_attr, &p->cq,
				    owner ? (void *)&peer_ctx : NULL), 0);
	assert_int_equal(fi_av_open(p->domain, &av_attr, &p->av, NULL), 0);
	for (i = 0; i < 2; i++) {
		len = sizeof(name[i]);
		p->ep[i] = peer_ep_open(p->domain, p->info, p->cq, p->av,
					name[i], &len);
		assert_int_equal(len, strlen(name[i]) + 1);
	}
	/* FI_ADDR_STR: fi_av_insert takes an array of strings. */
	assert_int_equal(fi_av_insert(p->av, names, 2, p->addr, 0, NULL), 2);
	assert_int_not_equal(p->addr[0], p->addr[1]);
}

static void lfvpeer_close(struct lfvpeer *p)
{
	test_close(p->ep[0], p->ep[1], p->av, p->cq);
	func_domain_close(p->info, p->fabric, p->domain);
}

/* fi_peer(3): the owner drives the peer's progress this way. */
static void drive(struct lfvpeer *p)
{
	assert_int_equal(fi_cq_read(p->cq, NULL, 0), 0);
}

/* ---- the plugin, through the core ------------------------------------------ */

static void test_lfvpeer_loaded(void **state)
{
	struct fi_info *hints = lfvpeer_hints(), *info = NULL;

	(void)state;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &info), 0);
	assert_string_equal(info->fabric_attr->prov_name, "lfvpeer");
	assert_int_equal(info->ep_attr->type, FI_EP_RDM);
	assert_int_equal(info->caps & (FI_MSG | FI_SEND | FI_RECV),
			 FI_MSG | FI_SEND | FI_RECV);
	assert_null(info->next);
	fi_freeinfo(info);
	/* It honours hints: no MSG endpoints, no tagged messages. */
	hints->ep_attr->type = FI_EP_MSG;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &info), -FI_ENODATA);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

/* ---- lfverbs as owner --------------------------------------------------------- */

static void fill(char *buf, int i, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		buf[k] = (char)('a' + (i * 7 + (int)k) % 26);
}

/* MSGS messages from ep[0] to ep[1], odd ones carrying CQ data; every
 * completion read from the lfverbs CQ, in order, exactly once. */
static void traffic(enum fi_wait_obj wait)
{
	static char send_buf[MSGS][MSG_LEN], recv_buf[MSGS][MSG_LEN];
	struct fi_context send_ctx[MSGS], recv_ctx[MSGS];
	struct fi_cq_data_entry e[16];
	int sends = 0, recvs = 0, rounds = 0, i, fd = -1;
	struct pollfd pfd;
	struct owner o = { 0 };
	struct lfvpeer p = { 0 };
	struct fid *fids[1];
	uint64_t want;
	ssize_t n;

	owner_open(&o, wait);
	lfvpeer_open(&p, o.peer);
	memset(recv_buf, 0, sizeof(recv_buf));
	for (i = 0; i < MSGS; i++) {
		fill(send_buf[i], i, MSG_LEN);
		assert_int_equal(fi_recv(p.ep[1], recv_buf[i], MSG_LEN, NULL,
					 FI_ADDR_UNSPEC, &recv_ctx[i]), 0);
	}
	for (i = 0; i < MSGS; i++)
		assert_int_equal(i % 2 ?
				 fi_senddata(p.ep[0], send_buf[i], MSG_LEN,
					     NULL, DATA_BASE + i, p.addr[1],
					     &send_ctx[i]) :
				 fi_send(p.ep[0], send_buf[i], MSG_LEN, NULL,
					 p.addr[1], &send_ctx[i]), 0);
	/* Nothing moves until the owner drives the peer. */
	assert_int_equal(fi_cq_read(o.cq, e, 16), -FI_EAGAIN);
	if (wait == FI_WAIT_FD) {
		assert_int_equal(fi_control(&o.cq->fid, FI_GETWAIT, &fd), 0);
		fids[0] = &o.cq->fid;
		assert_int_equal(fi_trywait(o.fabric, fids, 1), 0);
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		assert_int_equal(poll(&pfd, 1, 0), 0);
	}
	drive(&p);
	if (wait == FI_WAIT_FD) {
		/* The owner's write signalled its wait object. */
		assert_int_equal(poll(&pfd, 1, 1000), 1);
	}
	while ((sends < MSGS || recvs < MSGS) && rounds++ < 1000) {
		n = wait == FI_WAIT_NONE ? fi_cq_read(o.cq, e, 16) :
					   fi_cq_sread(o.cq, e, 16, NULL, 1000);
		if (n == -FI_EAGAIN)
			continue;
		assert_in_range(n, 1, 16);
		for (i = 0; i < n; i++) {
			if (e[i].flags & FI_SEND) {
				assert_true(sends < MSGS);
				assert_ptr_equal(e[i].op_context,
						 &send_ctx[sends]);
				assert_int_equal(e[i].flags, FI_SEND | FI_MSG);
				assert_int_equal(e[i].len, 0);
				sends++;
				continue;
			}
			assert_true(recvs < MSGS);
			want = FI_RECV | FI_MSG |
			       (recvs % 2 ? FI_REMOTE_CQ_DATA : 0);
			assert_ptr_equal(e[i].op_context, &recv_ctx[recvs]);
			assert_int_equal(e[i].flags, want);
			assert_int_equal(e[i].len, MSG_LEN);
			assert_ptr_equal(e[i].buf, recv_buf[recvs]);
			if (recvs % 2)
				assert_int_equal(e[i].data,
						 DATA_BASE + recvs);
			recvs++;
		}
	}
	assert_int_equal(sends, MSGS);
	assert_int_equal(recvs, MSGS);
	for (i = 0; i < MSGS; i++)
		assert_memory_equal(recv_buf[i], send_buf[i], MSG_LEN);
	/* Nothing duplicated, nothing left behind in the peer. */
	drive(&p);
	assert_int_equal(fi_cq_read(o.cq, e, 16), -FI_EAGAIN);
	/* The peer CQ's own reads are not where the entries are. */
	assert_int_equal(fi_cq_read(p.cq, e, 16), -FI_ENOSYS);
	lfvpeer_close(&p);
	owner_close(&o);
}

TEST_WITH(test_traffic_into_lfverbs_cq, traffic, FI_WAIT_NONE)

TEST_WITH(test_traffic_into_lfverbs_cq_wait_fd, traffic, FI_WAIT_FD)

TEST_WITH(test_traffic_into_lfverbs_cq_wait_unspec, traffic,
	  FI_WAIT_UNSPEC)

struct sender {
	struct lfvpeer *p;
	char *buf;
	struct fi_context *ctx;
	int ret;
};

/* Sends one message and drives lfvpeer, so that the completions are
 * written into the lfverbs CQ from this thread. */
static void *send_later(void *arg)
{
	struct sender *s = arg;
	struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };

	nanosleep(&pause, NULL);
	s->ret = (int)fi_send(s->p->ep[0], s->buf, MSG_LEN, NULL,
			      s->p->addr[1], s->ctx);
	if (!s->ret)
		s->ret = (int)fi_cq_read(s->p->cq, NULL, 0);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sread_woken(enum fi_wait_obj wait)
{
	static char send_buf[MSG_LEN], recv_buf[MSG_LEN];
	struct fi_context send_ctx, recv_ctx;
	struct fi_cq_data_entry e;
	struct owner o = { 0 };
	struct lfvpeer p = { 0 };
	struct sender s = { .p = &p, .buf = send_buf, .ctx = &send_ctx };
	pthread_t thread;
	double start, waited;

	owner_open(&o, wait);
	lfvpeer_open(&p, o.peer);
	fill(send_buf, 3, MSG_LEN);
	assert_int_equal(fi_recv(p.ep[1], recv_buf, MSG_LEN, NULL,
				 FI_ADDR_UNSPEC, &recv_ctx), 0);
	assert_int_equal(pthread_create(&thread, NULL, send_later, &s), 0);
	start = now_s();
	assert_int_equal(fi_cq_sread(o.cq, &e, 1, NULL, 10000), 1);
	waited = now_s() - start;
	assert_ptr_equal(e.op_context, &send_ctx);
	assert_int_equal(e.flags, FI_SEND | FI_MSG);
	/* It blocked until the other thread wrote, not until the timeout. */
	assert_true(waited > 0.1 && waited < 9.0);
	assert_int_equal(fi_cq_sread(o.cq, &e, 1, NULL, 10000), 1);
	assert_ptr_equal(e.op_context, &recv_ctx);
	assert_int_equal(e.flags, FI_RECV | FI_MSG);
	assert_int_equal(e.len, MSG_LEN);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(s.ret, 0);
	assert_memory_equal(recv_buf, send_buf, MSG_LEN);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAGAIN);
	lfvpeer_close(&p);
	owner_close(&o);
}

TEST_WITH(test_sread_woken_through_peer, sread_woken, FI_WAIT_UNSPEC)

TEST_WITH(test_sread_woken_through_peer_wait_fd, sread_woken, FI_WAIT_FD)

/* A receive too short for the message: lfvpeer reports FI_ETRUNC through
 * writeerr, the send itself completes normally. */
static void test_truncation_through_writeerr(void **state)
{
	static char send_buf[MSG_LEN], recv_buf[MSG_LEN];
	struct fi_context send_ctx, recv_ctx;
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry e;
	struct owner o = { 0 };
	struct lfvpeer p = { 0 };
	char str[128];

	(void)state;
	owner_open(&o, FI_WAIT_NONE);
	lfvpeer_open(&p, o.peer);
	fill(send_buf, 5, MSG_LEN);
	memset(recv_buf, 0, sizeof(recv_buf));
	assert_int_equal(fi_recv(p.ep[1], recv_buf, SHORT_LEN, NULL,
				 FI_ADDR_UNSPEC, &recv_ctx), 0);
	assert_int_equal(fi_senddata(p.ep[0], send_buf, MSG_LEN, NULL, 42,
				     p.addr[1], &send_ctx), 0);
	assert_int_equal(fi_cq_readerr(o.cq, &err, 0), -FI_EAGAIN);
	drive(&p);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(o.cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, &recv_ctx);
	assert_int_equal(err.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
	assert_int_equal(err.err, FI_ETRUNC);
	assert_int_equal(err.prov_errno, -FI_ETRUNC);
	assert_int_equal(err.len, SHORT_LEN);
	assert_int_equal(err.olen, MSG_LEN - SHORT_LEN);
	assert_ptr_equal(err.buf, recv_buf);
	assert_int_equal(err.data, 42);
	assert_string_equal(fi_cq_strerror(o.cq, err.prov_errno, err.err_data,
					   str, sizeof(str)),
			    fi_strerror(FI_ETRUNC));
	assert_memory_equal(recv_buf, send_buf, SHORT_LEN);
	assert_int_equal(recv_buf[SHORT_LEN], 0);
	/* The error is gone; the send's completion is still there. */
	assert_int_equal(fi_cq_readerr(o.cq, &err, 0), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), 1);
	assert_ptr_equal(e.op_context, &send_ctx);
	assert_int_equal(e.flags, FI_SEND | FI_MSG);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAGAIN);
	lfvpeer_close(&p);
	owner_close(&o);
}

/* fi_cancel of a posted receive: FI_ECANCELED through writeerr. */
static void test_cancel_through_writeerr(void **state)
{
	static char recv_buf[MSG_LEN];
	struct fi_context recv_ctx[2];
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry e;
	struct owner o = { 0 };
	struct lfvpeer p = { 0 };

	(void)state;
	owner_open(&o, FI_WAIT_NONE);
	lfvpeer_open(&p, o.peer);
	assert_int_equal(fi_recv(p.ep[1], recv_buf, MSG_LEN, NULL,
				 FI_ADDR_UNSPEC, &recv_ctx[0]), 0);
	assert_int_equal(fi_recv(p.ep[1], recv_buf, MSG_LEN, NULL,
				 FI_ADDR_UNSPEC, &recv_ctx[1]), 0);
	assert_int_equal(fi_cancel(&p.ep[1]->fid, &recv_ctx[1]), 0);
	assert_int_equal(fi_cancel(&p.ep[1]->fid, &recv_ctx[1]), -FI_ENOENT);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(o.cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, &recv_ctx[1]);
	assert_int_equal(err.flags, FI_RECV | FI_MSG);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAGAIN);
	/* The other receive is still posted. */
	assert_int_equal(fi_cancel(&p.ep[1]->fid, &recv_ctx[0]), 0);
	assert_int_equal(fi_cq_readerr(o.cq, &err, 0), 1);
	assert_ptr_equal(err.op_context, &recv_ctx[0]);
	assert_int_equal(fi_cq_read(o.cq, &e, 1), -FI_EAGAIN);
	lfvpeer_close(&p);
	owner_close(&o);
}

/* ---- lfverbs as peer ------------------------------------------------------------ */

static void test_lfverbs_cq_as_peer(void **state)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_DATA,
				   .flags = FI_PEER };
	struct fi_peer_cq_context ctx = { .size = sizeof(ctx) };
	static char send_buf[MSG_LEN], recv_buf[MSG_LEN];
	struct fi_context send_ctx, recv_ctx, written;
	struct fi_cq_data_entry e[2];
	struct fi_cq_err_entry err = { 0 };
	struct fi_info *hints = func_hints(FI_EP_MSG), *info = NULL;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid *fid = NULL;
	struct lfvpeer owner = { 0 };
	fi_addr_t src[2];

	(void)state;
	lfvpeer_open(&owner, NULL);
	ctx.cq = export_cq(owner.cq);
	func_domain_open(hints, &info, &fabric, &domain);

	/* A context that is not a fi_peer_cq_context is refused. */
	ctx.size = 0;
	assert_int_equal(fi_cq_open(domain, &attr, &cq, &ctx), -FI_EINVAL);
	ctx.size = sizeof(ctx);
	assert_int_equal(fi_cq_open(domain, &attr, &cq, &ctx), 0);
	/* fi_peer(3): read(NULL, 0) is progress, every other read ENOSYS. */
	assert_int_equal(fi_cq_read(cq, NULL, 0), 0);
	assert_int_equal(fi_cq_read(cq, e, 1), -FI_ENOSYS);
	assert_int_equal(fi_cq_readfrom(cq, e, 1, src), -FI_ENOSYS);
	assert_int_equal(fi_cq_readerr(cq, &err, 0), -FI_ENOSYS);
	assert_int_equal(fi_cq_sread(cq, e, 1, NULL, 0), -FI_ENOSYS);
	assert_int_equal(fi_cq_signal(cq), -FI_ENOSYS);
	/* A peer holds no entries, so it has none to share. */
	assert_int_equal(fi_export_fid(&cq->fid, 0, &fid, NULL), -FI_EINVAL);
	test_close(cq);
	func_domain_close(info, fabric, domain);

	/* The owner side lfverbs would write into: an entry written through
	 * the exported fid_peer_cq, and lfvpeer's own traffic, both come out
	 * of the lfvpeer CQ with their source addresses. */
	assert_int_equal(ctx.cq->owner_ops->write(ctx.cq, &written,
						  FI_RECV | FI_MSG, 8, NULL,
						  7, 0, owner.addr[1]), 0);
	fill(send_buf, 9, MSG_LEN);
	assert_int_equal(fi_recv(owner.ep[1], recv_buf, MSG_LEN, NULL,
				 FI_ADDR_UNSPEC, &recv_ctx), 0);
	assert_int_equal(fi_send(owner.ep[0], send_buf, MSG_LEN, NULL,
				 owner.addr[1], &send_ctx), 0);
	assert_int_equal(fi_cq_readfrom(owner.cq, e, 1, src), 1);
	assert_ptr_equal(e[0].op_context, &written);
	assert_int_equal(e[0].len, 8);
	assert_int_equal(e[0].data, 7);
	assert_int_equal(src[0], owner.addr[1]);
	assert_int_equal(fi_cq_readfrom(owner.cq, e, 2, src), 2);
	assert_ptr_equal(e[0].op_context, &send_ctx);
	assert_ptr_equal(e[1].op_context, &recv_ctx);
	assert_int_equal(src[1], owner.addr[0]);
	assert_memory_equal(recv_buf, send_buf, MSG_LEN);
	assert_int_equal(fi_cq_read(owner.cq, e, 1), -FI_EAGAIN);
	lfvpeer_close(&owner);
}

/* ---- main ------------------------------------------------------------------ */

/* Adds the lfvpeer build directory to FI_PROVIDER_PATH. The core reads it
 * once, at the first fi_* call, as a colon-separated list of directories
 * ("dir1:dir2:dir3", fi_info -e). */
static void add_lfvpeer_dir(void)
{
	const char *top = getenv("LFV_TOP_BUILDDIR");
	const char *path = getenv("FI_PROVIDER_PATH");
	char both[4096];
	int len;

	if (!top || !*top) {
		printf("1..0 # SKIP LFV_TOP_BUILDDIR is unset: run through "
		       "make check\n");
		exit(0);
	}
	/* Without a path the core would not look in the lfverbs build. */
	if (path && *path)
		len = snprintf(both, sizeof(both), "%s:%s/tests/func/peer_prov/"
			       ".libs", path, top);
	else
		len = snprintf(both, sizeof(both), "%s/.libs:%s/tests/func/"
			       "peer_prov/.libs", top, top);
	if (len < 0 || (size_t)len >= sizeof(both) ||
	    setenv("FI_PROVIDER_PATH", both, 1))
		abort();
}

/* The plugin is part of this build: not finding it is a failure. */
static void require_lfvpeer(void)
{
	struct fi_info *hints = lfvpeer_hints(), *info = NULL;
	int ret = fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info);

	fi_freeinfo(hints);
	if (ret) {
		printf("Bail out! the core did not load lfvpeer from "
		       "FI_PROVIDER_PATH=%s (%s)\n",
		       getenv("FI_PROVIDER_PATH"), fi_strerror(-ret));
		exit(1);
	}
	fi_freeinfo(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lfvpeer_loaded),
		cmocka_unit_test(test_traffic_into_lfverbs_cq),
		cmocka_unit_test(test_traffic_into_lfverbs_cq_wait_fd),
		cmocka_unit_test(test_traffic_into_lfverbs_cq_wait_unspec),
		cmocka_unit_test(test_sread_woken_through_peer),
		cmocka_unit_test(test_sread_woken_through_peer_wait_fd),
		cmocka_unit_test(test_truncation_through_writeerr),
		cmocka_unit_test(test_cancel_through_writeerr),
		cmocka_unit_test(test_lfverbs_cq_as_peer),
	};

	add_lfvpeer_dir();
	func_require_device();
	require_lfvpeer();
	return cmocka_run_group_tests_name("func_peer_prov", tests, NULL, NULL);
}
