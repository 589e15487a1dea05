/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_raw: the reference for bench_msg, in plain ibverbs + rdma_cm: the
 * same three measurements with the same loops (bench_ep.h) on an RC queue
 * pair. Not a test: see tests/bench/README.md and run-endpoints.sh.
 *
 *   bench_raw -s [-a ADDR]                  server (prints "listening")
 *   bench_raw -c [-a ADDR] [--lat N] [--rate M] [--bw B]
 *   bench_raw -c --callgrind N,K            instruction-count segments
 *
 * One CQ for sends and receives, busy polling with ibv_poll_cq, every send
 * signaled, data from registered memory (no IBV_SEND_INLINE), one SGE.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct tp {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
};

static void tp_fail(const char *what, int err)
{
	fprintf(stderr, "bench_raw: %s: %s (%d)\n", what, strerror(err), err);
	exit(1);
}

/* ibv_post_* return the error number itself, not -1 with errno. */
static inline void tp_posted(const char *what, int ret)
{
	if (ret)
		tp_fail(what, ret);
}

/* Sends and receives alike: one SGE over the registered buffer, and the
 * work request's fields that name it. */
#define TP_WR_ONE_SGE(id, sge) .wr_id = (id), .sg_list = &(sge), .num_sge = 1

static inline struct ibv_sge tp_sge(const struct tp *t, void *buf, size_t len)
{
	return (struct ibv_sge){
		.addr = (uintptr_t)buf,
		.length = (uint32_t)len,
		.lkey = t->mr->lkey,
	};
}

static inline void tp_send(struct tp *t, void *buf, size_t len, uint32_t id)
{
	struct ibv_sge sge = tp_sge(t, buf, len);
	struct ibv_send_wr wr = {
		TP_WR_ONE_SGE(id, sge),
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	tp_posted("ibv_post_send", ibv_post_send(t->qp, &wr, &bad));
}

static inline void tp_recv(struct tp *t, void *buf, size_t len, uint32_t id)
{
	struct ibv_sge sge = tp_sge(t, buf, len);
	struct ibv_recv_wr wr = {
		TP_WR_ONE_SGE(id, sge),
	}, *bad;

	tp_posted("ibv_post_recv", ibv_post_recv(t->qp, &wr, &bad));
}

static inline int tp_poll(struct tp *t, uint32_t *ids, int max)
{
	struct ibv_wc wc[16];
	int i, n = ibv_poll_cq(t->cq, max, wc);

	if (n < 0)
		tp_fail("ibv_poll_cq", -n);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "bench_raw: completion error: %s\n",
				ibv_wc_status_str(wc[i].status));
			exit(1);
		}
		ids[i] = (uint32_t)wc[i].wr_id;
	}
	return n;
}

#include "bench_ep.h"

static struct rdma_cm_event *tp_event(struct tp *t,
				      enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(t->ec, &ev))
		tp_fail("rdma_get_cm_event", errno);
	if (ev->event != want) {
		fprintf(stderr, "bench_raw: got %s, expected %s\n",
			rdma_event_str(ev->event), rdma_event_str(want));
		exit(1);
	}
	return ev;
}

static void tp_addr(const struct bench_opts *o, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res;
	int ret = getaddrinfo(o->addr, o->port, &hints, &res);

	if (ret) {
		fprintf(stderr, "bench_raw: %s: %s\n", o->addr,
			gai_strerror(ret));
		exit(1);
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

static void tp_open_qp(struct tp *t, struct bench *b,
		       const struct bench_opts *o)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = BENCH_TXQ,
			.max_recv_wr = BENCH_RXQ,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	char *region;

	if (o->dev && strcmp(ibv_get_device_name(t->id->verbs->device),
			     o->dev)) {
		fprintf(stderr, "bench_raw: address is on %s, not %s\n",
			ibv_get_device_name(t->id->verbs->device), o->dev);
		exit(1);
	}
	t->pd = ibv_alloc_pd(t->id->verbs);
	if (!t->pd)
		tp_fail("ibv_alloc_pd", errno);
	t->cq = ibv_create_cq(t->id->verbs, BENCH_CQ_SIZE, NULL, NULL, 0);
	if (!t->cq)
		tp_fail("ibv_create_cq", errno);
	attr.send_cq = t->cq;
	attr.recv_cq = t->cq;
	if (rdma_create_qp(t->id, t->pd, &attr))
		tp_fail("rdma_create_qp", errno);
	t->qp = t->id->qp;

	if (posix_memalign((void **)&region, 4096, BENCH_REGION))
		bench_die("out of memory");
	memset(region, 0, BENCH_REGION);
	t->mr = ibv_reg_mr(t->pd, region, BENCH_REGION, IBV_ACCESS_LOCAL_WRITE);
	if (!t->mr)
		tp_fail("ibv_reg_mr", errno);

	b->t = t;
	b->impl = "raw";
	b->tx_base = region;
	b->rx_base = region + BENCH_TX_REGION;
	bench_pre_connect(b, o);
	if (!o->server)
		printf("info impl=raw device=%s max_inline=%u\n",
		       ibv_get_device_name(t->id->verbs->device),
		       attr.cap.max_inline_data);
}

int main(int argc, char **argv)
{
	struct rdma_conn_param param = {
		.retry_count = 7,
		.rnr_retry_count = 7,	/* as lfverbs and verbs do */
	};
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;
	struct bench_opts o;
	struct bench b = { 0 };
	struct tp t = { 0 };

	bench_parse(argc, argv, &o, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	tp_addr(&o, &ss);
	t.ec = rdma_create_event_channel();
	if (!t.ec)
		tp_fail("rdma_create_event_channel", errno);

	if (o.server) {
		if (rdma_create_id(t.ec, &t.listen_id, NULL, RDMA_PS_TCP))
			tp_fail("rdma_create_id", errno);
		if (rdma_bind_addr(t.listen_id, (struct sockaddr *)&ss))
			tp_fail("rdma_bind_addr", errno);
		if (rdma_listen(t.listen_id, 1))
			tp_fail("rdma_listen", errno);
		printf("listening impl=raw\n");
		ev = tp_event(&t, RDMA_CM_EVENT_CONNECT_REQUEST);
		t.id = ev->id;
		rdma_ack_cm_event(ev);
		tp_open_qp(&t, &b, &o);
		if (rdma_accept(t.id, &param))
			tp_fail("rdma_accept", errno);
	} else {
		if (rdma_create_id(t.ec, &t.id, NULL, RDMA_PS_TCP))
			tp_fail("rdma_create_id", errno);
		if (rdma_resolve_addr(t.id, NULL, (struct sockaddr *)&ss, 5000))
			tp_fail("rdma_resolve_addr", errno);
		rdma_ack_cm_event(tp_event(&t, RDMA_CM_EVENT_ADDR_RESOLVED));
		if (rdma_resolve_route(t.id, 5000))
			tp_fail("rdma_resolve_route", errno);
		rdma_ack_cm_event(tp_event(&t, RDMA_CM_EVENT_ROUTE_RESOLVED));
		tp_open_qp(&t, &b, &o);
		if (rdma_connect(t.id, &param))
			tp_fail("rdma_connect", errno);
	}
	rdma_ack_cm_event(tp_event(&t, RDMA_CM_EVENT_ESTABLISHED));

	bench_run(&b, &o);

	rdma_disconnect(t.id);
	rdma_destroy_qp(t.id);
	ibv_dereg_mr(t.mr);
	ibv_destroy_cq(t.cq);
	ibv_dealloc_pd(t.pd);
	rdma_destroy_id(t.id);
	if (t.listen_id)
		rdma_destroy_id(t.listen_id);
	rdma_destroy_event_channel(t.ec);
	free(b.tx_base);
	return 0;
}
