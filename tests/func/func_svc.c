/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM and DGRAM peers addressed by host and service, as fabtests and
 * applications that exchange no names out of band do: the server opens its
 * endpoint with fi_getinfo(NULL, service, FI_SOURCE), the client inserts
 * the dest_addr of fi_getinfo(host, service) (or calls fi_av_insertsvc)
 * and talks to it; FI_SOURCE reports the server's address on the client;
 * a second endpoint cannot take the same service; an address where nobody
 * listens fails its insert with -FI_ECONNREFUSED. And fabtests' blocking
 * shape: RDM peers with separate transmit and receive CQs that wait in
 * fi_cq_sread, from the first contact on; and fabtests' -U, sends with
 * FI_DELIVERY_COMPLETE as the endpoint's default.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
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

#define TIMEOUT_MS 10000
#define MSG_LEN 64

struct peer {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cq *rx_cq;		/* split CQs: receives; else cq */
	struct fid_ep *ep;
	struct fid_mr *mr;
	char buf[2][MSG_LEN];		/* receive, send */
};

static char service[16];
static int service_base;

/* Each test takes its own port: one that fails leaves its endpoint open. */
static int next_service(void **state)
{
	(void)state;
	snprintf(service, sizeof(service), "%d", service_base++);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct fi_info *svc_hints(enum fi_ep_type type)
{
	struct fi_info *hints = func_hints(type);

	hints->caps = FI_MSG | FI_SOURCE;
	return hints;
}

/* The server's info (FI_SOURCE, service only) or the client's (host and
 * service); NULL when fi_getinfo fails. */
static struct fi_info *svc_info(enum fi_ep_type type, bool server)
{
	struct fi_info *hints = svc_hints(type), *info = NULL;
	int ret;

	ret = fi_getinfo(FUNC_VERSION, server ? NULL : func_ip(), service,
			 server ? FI_SOURCE : 0, hints, &info);
	fi_freeinfo(hints);
	return ret ? NULL : info;
}

/* Opens everything but the endpoint's enable, whose result it returns;
 * split: a transmit and a receive CQ that can be waited on. */
static int peer_open_cqs(struct peer *p, struct fi_info *info, bool split)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .wait_obj = split ? FI_WAIT_UNSPEC :
							  FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	memset(p, 0, sizeof(*p));
	p->info = info;
	assert_non_null(info);
	assert_int_equal(fi_fabric(info->fabric_attr, &p->fabric, NULL), 0);
	assert_int_equal(fi_domain(p->fabric, info, &p->domain, NULL), 0);
	assert_int_equal(fi_av_open(p->domain, &av_attr, &p->av, NULL), 0);
	assert_int_equal(fi_cq_open(p->domain, &cq_attr, &p->cq, NULL), 0);
	p->rx_cq = p->cq;
	if (split)
		assert_int_equal(fi_cq_open(p->domain, &cq_attr, &p->rx_cq,
					    NULL), 0);
	assert_int_equal(fi_endpoint(p->domain, info, &p->ep, NULL), 0);
	assert_int_equal(fi_ep_bind(p->ep, &p->av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(p->ep, &p->cq->fid, FI_TRANSMIT), 0);
	assert_int_equal(fi_ep_bind(p->ep, &p->rx_cq->fid, FI_RECV), 0);
	assert_int_equal(fi_mr_reg(p->domain, p->buf, sizeof(p->buf),
				   FI_SEND | FI_RECV, 0, 0, 0, &p->mr, NULL),
			 0);
	return fi_enable(p->ep);
}

static int peer_open(struct peer *p, struct fi_info *info)
{
	return peer_open_cqs(p, info, false);
}

static void peer_close(struct peer *p)
{
	test_close(p->mr, p->ep);
	if (p->rx_cq != p->cq)
		assert_int_equal(fi_close(&p->rx_cq->fid), 0);
	test_close(p->cq, p->av);
	func_domain_close(p->info, p->fabric, p->domain);
}

/* One completion of a peer (and its source) into *src; -FI_EAGAIN while
 * there is none. */
static ssize_t try_comp(struct peer *p, fi_addr_t *src)
{
	struct fi_cq_err_entry err = { .err = 0 };
	struct fi_cq_tagged_entry e;
	ssize_t n;

	n = fi_cq_readfrom(p->cq, &e, 1, src);
	if (n == -FI_EAVAIL) {
		fi_cq_readerr(p->cq, &err, 0);
		print_message("error completion: %s\n", fi_strerror(err.err));
	}
	return n;
}

/* Waits for one completion of each peer (b may be NULL), reading a's
 * source; both make progress meanwhile (the RDM handshake needs it). */
static void wait_comps(struct peer *a, fi_addr_t *src, struct peer *b)
{
	int64_t end = now_ms() + TIMEOUT_MS;
	fi_addr_t from = FI_ADDR_NOTAVAIL, dummy;
	ssize_t na = -FI_EAGAIN, nb = b ? -FI_EAGAIN : 1;

	while ((na == -FI_EAGAIN || nb == -FI_EAGAIN) && now_ms() < end) {
		if (na == -FI_EAGAIN)
			na = try_comp(a, &from);
		if (nb == -FI_EAGAIN)
			nb = try_comp(b, &dummy);
	}
	assert_int_equal(na, 1);
	assert_int_equal(nb, 1);
	if (src)
		*src = from;
}

static void post_recv(struct peer *p)
{
	assert_int_equal(fi_recv(p->ep, p->buf[0], MSG_LEN,
				 fi_mr_desc(p->mr), FI_ADDR_UNSPEC, NULL), 0);
}

/* p sends text to its address `to`, which is peer q. */
static void send_text(struct peer *p, fi_addr_t to, const char *text,
		      struct peer *q, fi_addr_t *src)
{
	snprintf(p->buf[1], MSG_LEN, "%s", text);
	assert_int_equal(fi_send(p->ep, p->buf[1], MSG_LEN, fi_mr_desc(p->mr),
				 to, NULL), 0);
	wait_comps(q, src, p);
}

static void assert_same_name(struct fid_av *av, fi_addr_t fa,
			     struct fid_ep *ep)
{
	uint8_t want[64], got[64];
	size_t wlen = sizeof(want), glen = sizeof(got);

	assert_int_equal(fi_getname(&ep->fid, want, &wlen), 0);
	assert_int_equal(fi_av_lookup(av, fa, got, &glen), 0);
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
}

static void exchange_by_service(enum fi_ep_type type)
{
	struct peer srv, cli;
	fi_addr_t srv_fa = FI_ADDR_NOTAVAIL, cli_fa, from, svc_fa;
	uint8_t name[64];
	size_t len = sizeof(name);

	assert_int_equal(peer_open(&srv, svc_info(type, true)), 0);
	assert_int_equal(peer_open(&cli, svc_info(type, false)), 0);
	assert_non_null(cli.info->dest_addr);
	assert_int_equal(cli.info->dest_addrlen, srv.info->src_addrlen);

	/* What getinfo returned reaches the endpoint opened at the
	 * service: the AV holds the name that endpoint gives itself. */
	assert_int_equal(fi_av_insert(cli.av, cli.info->dest_addr, 1, &srv_fa,
				      0, NULL), 1);
	assert_same_name(cli.av, srv_fa, srv.ep);

	/* The client introduces itself, as fabtests do. */
	post_recv(&srv);
	assert_int_equal(fi_getname(&cli.ep->fid, name, &len), 0);
	memcpy(cli.buf[1], name, len);
	assert_int_equal(fi_send(cli.ep, cli.buf[1], len, fi_mr_desc(cli.mr),
				 srv_fa, NULL), 0);
	wait_comps(&srv, NULL, &cli);
	assert_int_equal(fi_av_insert(srv.av, srv.buf[0], 1, &cli_fa, 0,
				      NULL), 1);

	/* The answer's source is the service's entry. */
	post_recv(&cli);
	send_text(&srv, cli_fa, "pong", &cli, &from);
	assert_string_equal(cli.buf[0], "pong");
	assert_int_equal(from, srv_fa);

	/* fi_av_insertsvc reaches the same endpoint. */
	assert_int_equal(fi_av_insertsvc(cli.av, func_ip(), service, &svc_fa,
					 0, NULL), 1);
	assert_same_name(cli.av, svc_fa, srv.ep);
	peer_close(&cli);
	peer_close(&srv);
}

TEST_WITH(test_rdm_by_service, exchange_by_service, FI_EP_RDM)

TEST_WITH(test_dgram_by_service, exchange_by_service, FI_EP_DGRAM)

/* One service, one endpoint; once it is closed nobody answers there. */
static void service_taken_and_freed(enum fi_ep_type type)
{
	struct peer a, b, cli;
	fi_addr_t fa;
	int err = 0;

	assert_int_equal(peer_open(&a, svc_info(type, true)), 0);
	assert_int_equal(peer_open(&b, svc_info(type, true)), -FI_EADDRINUSE);
	peer_close(&b);
	peer_close(&a);

	assert_int_equal(peer_open(&cli, svc_info(type, false)), 0);
	assert_int_equal(fi_av_insert(cli.av, cli.info->dest_addr, 1, &fa,
				      FI_SYNC_ERR, &err), 0);
	assert_int_equal(err, FI_ECONNREFUSED);
	assert_int_equal(fa, FI_ADDR_NOTAVAIL);

	/* The service is free again. */
	assert_int_equal(peer_open(&a, svc_info(type, true)), 0);
	assert_int_equal(fi_av_insert(cli.av, cli.info->dest_addr, 1, &fa, 0,
				      NULL), 1);
	assert_same_name(cli.av, fa, a.ep);
	peer_close(&a);
	peer_close(&cli);
}

TEST_WITH(test_rdm_service_taken_and_freed, service_taken_and_freed,
	  FI_EP_RDM)

TEST_WITH(test_dgram_service_taken_and_freed, service_taken_and_freed,
	  FI_EP_DGRAM)

/* Blocks in fi_cq_sread on cq for one completion: 1, or the error. */
static ssize_t sread_one(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;

	return fi_cq_sread(cq, &e, 1, NULL, TIMEOUT_MS);
}

struct sread_server {
	struct peer *p;
	ssize_t got;
};

static void *server_sread(void *arg)
{
	struct sread_server *s = arg;

	/* Late: the client's REQ has long completed, and the client sleeps
	 * on its transmit CQ when our REP reaches its receive side. */
	usleep(300 * 1000);
	s->got = sread_one(s->p->rx_cq);
	return NULL;
}

/* The client's first send blocks in sread on its transmit CQ while the
 * handshake's answer arrives on its receive side; the server blocks on
 * its receive CQ. Both must make progress while they wait. */
static void test_rdm_sread_split_cqs(void **state)
{
	struct sread_server s;
	struct peer srv, cli;
	pthread_t thr;
	fi_addr_t fa;
	int64_t t0;

	(void)state;
	assert_int_equal(peer_open_cqs(&srv, svc_info(FI_EP_RDM, true), true),
			 0);
	assert_int_equal(peer_open_cqs(&cli, svc_info(FI_EP_RDM, false),
				       true), 0);
	assert_int_equal(fi_av_insert(cli.av, cli.info->dest_addr, 1, &fa, 0,
				      NULL), 1);
	post_recv(&srv);
	s = (struct sread_server){ .p = &srv, .got = 0 };
	assert_int_equal(pthread_create(&thr, NULL, server_sread, &s), 0);
	snprintf(cli.buf[1], MSG_LEN, "first contact");
	assert_int_equal(fi_send(cli.ep, cli.buf[1], MSG_LEN,
				 fi_mr_desc(cli.mr), fa, NULL), 0);
	t0 = now_ms();
	assert_int_equal(sread_one(cli.cq), 1);
	/* Not woken, a reader only finds the completion when its timeout
	 * ends (the read after the wait): that is a hang. */
	assert_true(now_ms() - t0 < TIMEOUT_MS / 2);
	pthread_join(thr, NULL);
	assert_int_equal(s.got, 1);
	assert_string_equal(srv.buf[0], "first contact");
	peer_close(&cli);
	peer_close(&srv);
}

/* Polls both peers for ms, counting a's completions. */
static int poll_both(struct peer *a, struct peer *b, int ms)
{
	int64_t end = now_ms() + ms;
	fi_addr_t src;
	int got = 0;

	while (now_ms() < end) {
		if (try_comp(a, &src) == 1)
			got++;
		(void)try_comp(b, &src);
	}
	return got;
}

/* A small send with FI_DELIVERY_COMPLETE (the endpoint's default, as
 * fabtests -U sets it) completes only once the message is in a receive
 * buffer: not while the peer has no receive posted. Zero bytes too. */
static void test_rdm_delivery_complete(void **state)
{
	size_t lens[] = { 64, 0 };
	struct fi_info *info;
	struct peer srv, cli;
	fi_addr_t fa;
	size_t i;

	(void)state;
	info = svc_info(FI_EP_RDM, false);
	assert_non_null(info);
	info->tx_attr->op_flags |= FI_DELIVERY_COMPLETE;
	assert_int_equal(peer_open(&srv, svc_info(FI_EP_RDM, true)), 0);
	assert_int_equal(peer_open(&cli, info), 0);
	assert_int_equal(fi_av_insert(cli.av, cli.info->dest_addr, 1, &fa, 0,
				      NULL), 1);
	for (i = 0; i < 2; i++) {
		snprintf(cli.buf[1], MSG_LEN, "delivered %zu", i);
		assert_int_equal(fi_send(cli.ep, cli.buf[1], lens[i],
					 fi_mr_desc(cli.mr), fa, NULL), 0);
		/* The message reaches the peer (a handshake first), but no
		 * receive takes it. */
		assert_int_equal(poll_both(&cli, &srv, 500), 0);
		post_recv(&srv);
		wait_comps(&cli, NULL, &srv);
		if (lens[i])
			assert_string_equal(srv.buf[0], "delivered 0");
	}
	peer_close(&cli);
	peer_close(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_rdm_by_service, next_service),
		cmocka_unit_test_setup(test_dgram_by_service, next_service),
		cmocka_unit_test_setup(test_rdm_service_taken_and_freed, next_service),
		cmocka_unit_test_setup(test_dgram_service_taken_and_freed, next_service),
		cmocka_unit_test_setup(test_rdm_sread_split_cqs, next_service),
		cmocka_unit_test_setup(test_rdm_delivery_complete, next_service),
	};

	/* A refused insert waits this long (ms) for a listener. */
	setenv("FI_LFVERBS_SVC_TIMEOUT", "300", 0);
	service_base = 20000 + (int)(getpid() % 2000) * 16;
	func_require_device();
	return cmocka_run_group_tests_name("svc", tests, NULL, NULL);
}
