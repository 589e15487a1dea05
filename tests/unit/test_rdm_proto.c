/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RDM protocol (lfv_rdm.h) under races and faults (issue 15): two RDM
 * endpoints in one process, opened through the libfabric API over fake
 * verbs, whose packets cross a fake network (fake_net.h) that the test
 * drives: it delivers, drops, duplicates, holds back and fails packets
 * one by one, and moves the provider's clock. Progress is fi_cq_read.
 *
 * Each case checks one piece of the handshake (REQ, REP, RTU), of the
 * rendezvous (RTS, read, FIN) or of restarts (incarnations), through
 * what the application sees (completions, data) and the connection
 * states and QPs behind it.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>

#include "fake_net.h"
#include "fi_lfverbs.h"
#include "lfv_device.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "lfv_param.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "unit_fake.h"

#define MAX_COMPS 32
/* FI_LFVERBS_RDM_LIVE_TIMEOUT in every world (the faults of the two-node
 * bed run with it too). */
#define LIVE_TIMEOUT_S 8
#define DEAD_NS (LIVE_TIMEOUT_S * 1000000000LL)
#define SMALL 64
#define PUMP_ROUNDS 64

struct node {
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_cq *cq;		/* both directions, or transmit */
	struct fid_cq *rxcq;		/* split CQs: receive; else NULL */
	fi_addr_t peer;			/* the other node, in av */
	uint8_t name[64];
	size_t namelen;
	struct fi_cq_tagged_entry ok[MAX_COMPS];
	size_t nok;
	struct fi_cq_err_entry err[MAX_COMPS];
	size_t nerr;
};

struct world {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct node a, b;
	size_t big;			/* a rendezvous size (a SAR size
					 * with world_opts.sar) */
	uint8_t *src, *dst;		/* big bytes each */
	/* Receive buffers live here, not on a case's stack: a case that
	 * fails leaves its receives posted, and teardown still delivers. */
	char small_a[SMALL], small_b[SMALL];
	size_t saved_rx_bufs, saved_sar, saved_read_max, saved_reads;
	size_t saved_live_timeout, saved_rndv_write;
	size_t min_multi_recv;		/* set before enable; 0: not */
	bool split_cqs;			/* a CQ per direction */
	unsigned int rc_base;		/* RC QPs made before the endpoints
					 * (the device's inline probe) */
};

/* Contexts of the operations the cases post (of either node). */
static char tx1[4], tx2[4], rx1[4], rx2[4];

/* ---- endpoints --------------------------------------------------------------- */

static struct lfv_rdm_ep *rdm(const struct node *n)
{
	return lfv_rdm_of(&n->ep->fid);
}

static struct lfv_rdm_conn *conn(const struct node *n)
{
	return lfv_rdm_conn_by_addr(rdm(n), n->peer);
}

/* RC QPs the endpoints made (connections). */
static unsigned int rc_made(const struct world *w)
{
	return fake_net_rc_made() - w->rc_base;
}

static uint32_t ctl_qpn(const struct node *n)
{
	return rdm(n)->name.qpn;
}

static size_t min_multi_recv(const struct node *n)
{
	size_t value = 0, len = sizeof(value);

	assert_int_equal(fi_getopt(&n->ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &value, &len), 0);
	assert_int_equal(len, sizeof(value));
	return value;
}

/* Set (and read back) on the endpoint, as 2.x's fabtests do. */
static void set_min_multi_recv(struct node *n, size_t value)
{
	assert_int_equal(fi_setopt(&n->ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &value,
				   sizeof(value)), 0);
	assert_int_equal(min_multi_recv(n), value);
}

static void node_open(struct world *w, struct node *n)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .wait_obj = FI_WAIT_NONE, .size = 128 };

	memset(n, 0, sizeof(*n));
	n->peer = FI_ADDR_NOTAVAIL;
	assert_int_equal(fi_endpoint(w->domain, w->info, &n->ep, NULL), 0);
	assert_int_equal(fi_av_open(w->domain, &av_attr, &n->av, NULL), 0);
	assert_int_equal(fi_cq_open(w->domain, &cq_attr, &n->cq, NULL), 0);
	if (w->split_cqs)
		assert_int_equal(fi_cq_open(w->domain, &cq_attr, &n->rxcq,
					    NULL), 0);
	if (w->min_multi_recv)
		set_min_multi_recv(n, w->min_multi_recv);
	assert_int_equal(fi_ep_bind(n->ep, &n->av->fid, 0), 0);
	if (n->rxcq) {
		assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT),
				 0);
		assert_int_equal(fi_ep_bind(n->ep, &n->rxcq->fid, FI_RECV), 0);
	} else {
		assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid,
					    FI_TRANSMIT | FI_RECV), 0);
	}
	assert_int_equal(fi_enable(n->ep), 0);
	if (w->min_multi_recv)
		assert_int_equal(min_multi_recv(n), w->min_multi_recv);
	n->namelen = sizeof(n->name);
	assert_int_equal(fi_getname(&n->ep->fid, n->name, &n->namelen), 0);
}

static void node_close(struct node *n)
{
	assert_int_equal(fi_close(&n->ep->fid), 0);
	assert_int_equal(fi_close(&n->cq->fid), 0);
	if (n->rxcq)
		assert_int_equal(fi_close(&n->rxcq->fid), 0);
	assert_int_equal(fi_close(&n->av->fid), 0);
	n->ep = NULL;
}

/* n learns the address of other. */
static void node_meet(struct node *n, const struct node *other)
{
	assert_int_equal(fi_av_insert(n->av, other->name, 1, &n->peer, 0,
				      NULL), 1);
}

/* ---- progress and completions ------------------------------------------------ */

/* Reads what cq, one of n's, has (which drives n's progress); how
 * many. */
static size_t poll_cq(struct node *n, struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	size_t got = 0;
	ssize_t ret;

	for (;;) {
		ret = fi_cq_read(cq, &e, 1);
		if (ret == 1) {
			assert_true(n->nok < MAX_COMPS);
			n->ok[n->nok++] = e;
		} else if (ret == -FI_EAVAIL) {
			memset(&ee, 0, sizeof(ee));
			assert_int_equal(fi_cq_readerr(cq, &ee, 0), 1);
			assert_true(n->nerr < MAX_COMPS);
			n->err[n->nerr++] = ee;
		} else {
			assert_int_equal(ret, -FI_EAGAIN);
			return got;
		}
		got++;
	}
}

/* Reads n's CQs. */
static size_t poll_node(struct node *n)
{
	return poll_cq(n, n->cq) + (n->rxcq ? poll_cq(n, n->rxcq) : 0);
}

/* Delivers everything and lets both sides answer until the network is
 * quiet (or PUMP_ROUNDS: packets that wait for a receive stay). */
static void pump(struct world *w)
{
	int round, quiet = 0;
	size_t moved, got;

	for (round = 0; round < PUMP_ROUNDS && quiet < 2; round++) {
		moved = fake_net_deliver_all();
		got = poll_node(&w->a) + poll_node(&w->b);
		quiet = moved || got || fake_net_count() ? 0 : quiet + 1;
	}
}

/* Delivers and polls until a packet of that kind and first byte is on
 * the wire, before it is delivered; its index. */
static size_t step_until(struct world *w, enum fake_pkt_kind kind, int op)
{
	int round, i;

	for (round = 0; round < PUMP_ROUNDS; round++) {
		i = fake_net_find(0, kind, op, 0);
		if (i >= 0)
			return (size_t)i;
		fake_net_deliver_all();
		poll_node(&w->a);
		poll_node(&w->b);
	}
	fail_msg("no packet of kind %d op %d came", kind, op);
	return 0;
}

/* n's completions of ctx: successful ones, and errors. */
static size_t oks(const struct node *n, const void *ctx)
{
	size_t i, k = 0;

	for (i = 0; i < n->nok; i++)
		k += n->ok[i].op_context == ctx;
	return k;
}

static const struct fi_cq_tagged_entry *ok_of(const struct node *n,
					      const void *ctx)
{
	size_t i;

	for (i = 0; i < n->nok; i++)
		if (n->ok[i].op_context == ctx)
			return &n->ok[i];
	return NULL;
}

static const struct fi_cq_err_entry *err_of(const struct node *n,
					    const void *ctx)
{
	size_t i;

	for (i = 0; i < n->nerr; i++)
		if (n->err[i].op_context == ctx)
			return &n->err[i];
	return NULL;
}

/* Messages the fabric dropped as bad for reason (FI_LFVERBS_DROP_*), or
 * for any reason (-1). */
static uint64_t drops_for(struct world *w, int reason)
{
	struct fi_lfverbs_drops d;
	uint64_t n = 0;
	int i;

	assert_int_equal(fi_control(&w->fabric->fid, FI_LFVERBS_GET_DROPS,
				    &d), 0);
	for (i = 0; i < FI_LFVERBS_DROP_REASONS; i++)
		if (reason < 0 || i == reason)
			n += d.count[i];
	return n;
}

static uint64_t drops(struct world *w)
{
	return drops_for(w, -1);
}

static void post_recv(struct node *n, void *buf, size_t len, void *ctx)
{
	assert_int_equal(fi_recv(n->ep, buf, len, NULL, FI_ADDR_UNSPEC, ctx),
			 0);
}

static void send_to_peer(struct node *n, const void *buf, size_t len,
			 void *ctx)
{
	assert_int_equal(fi_send(n->ep, buf, len, NULL, n->peer, ctx), 0);
}

/* A received small message: once, with these bytes. */
static void assert_got(const struct node *n, const void *ctx,
		       const char *buf, const char *want)
{
	const struct fi_cq_tagged_entry *e = ok_of(n, ctx);

	assert_non_null(e);
	assert_int_equal(oks(n, ctx), 1);
	assert_int_equal(e->len, strlen(want) + 1);
	assert_string_equal(buf, want);
}

/* ---- the world ------------------------------------------------------------------ */

/* What a case's world differs in. */
struct world_opts {
	uint64_t caps;			/* besides FI_MSG | FI_TAGGED */
	bool b_unmet;			/* B has no A in its AV at first (A
					 * always has B) */
	size_t min_multi_recv;		/* set before enable; 0: not */
	enum fi_threading threading;	/* 0: FI_THREAD_DOMAIN */
	bool split_cqs;			/* a CQ per direction */
	bool sar;			/* segmented eager on (else off:
					 * big goes by rendezvous) */
	size_t read_max;		/* FI_LFVERBS_RDM_READ_MAX; 0: not set */
	size_t reads;			/* FI_LFVERBS_RDM_READS; 0: not set */
	bool rndv_write;		/* FI_LFVERBS_RDM_RNDV_WRITE=1 */
};

/* Two nodes of an RDM domain. */
static int world_setup(void **state, const struct world_opts *o)
{
	struct world *w = calloc(1, sizeof(*w));
	struct fi_info *hints = fi_allocinfo();
	struct fake_dev *dev;

	dev = unit_fake_device();
	fake_net_init(dev);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | o->caps;
	hints->domain_attr->threading = o->threading ? o->threading :
						       FI_THREAD_DOMAIN;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	assert_int_equal(lfv_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				     &w->info), 0);
	fi_freeinfo(hints);
	w->info->tx_attr->size = 16;	/* few buffers: quick to open */
	w->saved_rx_bufs = lfv_params.rdm_rx_bufs;
	lfv_params.rdm_rx_bufs = 32;
	w->saved_sar = lfv_params.rdm_sar;
	if (!o->sar)
		lfv_params.rdm_sar = 0;
	w->saved_read_max = lfv_params.rdm_read_max;
	if (o->read_max)
		lfv_params.rdm_read_max = o->read_max;
	w->saved_live_timeout = lfv_params.rdm_live_timeout;
	lfv_params.rdm_live_timeout = LIVE_TIMEOUT_S;
	w->saved_reads = lfv_params.rdm_reads;
	if (o->reads)
		lfv_params.rdm_reads = o->reads;
	w->saved_rndv_write = lfv_params.rdm_rndv_write;
	lfv_params.rdm_rndv_write = o->rndv_write;
	assert_int_equal(lfv_fabric_open(w->info->fabric_attr, &w->fabric,
					 NULL), 0);
	assert_int_equal(fi_domain(w->fabric, w->info, &w->domain, NULL), 0);
	w->rc_base = fake_net_rc_made();
	w->min_multi_recv = o->min_multi_recv;
	w->split_cqs = o->split_cqs;
	node_open(w, &w->a);
	node_open(w, &w->b);
	node_meet(&w->a, &w->b);
	if (!o->b_unmet)
		node_meet(&w->b, &w->a);
	w->big = 4 * lfv_params.rdm_eager;
	w->src = malloc(w->big);
	w->dst = calloc(1, w->big);
	assert_non_null(w->src);
	assert_non_null(w->dst);
	for (size_t i = 0; i < w->big; i++)
		w->src[i] = (uint8_t)(i * 7 + 1);
	*state = w;
	return 0;
}

static int setup(void **state)
{
	static const struct world_opts plain = { 0 };

	return world_setup(state, &plain);
}

static int setup_rma(void **state)
{
	static const struct world_opts o = { .caps = FI_RMA };

	return world_setup(state, &o);
}

/* Directed receive, and B meets A only when the case says. */
static int setup_directed_unmet(void **state)
{
	static const struct world_opts o = { .caps = FI_DIRECTED_RECV,
					     .b_unmet = true };

	return world_setup(state, &o);
}

#define MIN_MULTI_RECV 8

/* Multi-receive, and FI_OPT_MIN_MULTI_RECV set on the endpoints before
 * fi_enable. */
static int setup_multi_recv(void **state)
{
	static const struct world_opts o = { .caps = FI_MULTI_RECV,
					     .min_multi_recv = MIN_MULTI_RECV };

	return world_setup(state, &o);
}

/* Segmented eager on: big (4 eager buffers) goes as SAR segments. */
static int setup_sar(void **state)
{
	static const struct world_opts o = { .sar = true };

	return world_setup(state, &o);
}

#define READ_MAX 4096
#define READS 3

/* Rendezvous reads of at most READ_MAX bytes each, READS in flight. */
static int setup_read_max(void **state)
{
	static const struct world_opts o = { .read_max = READ_MAX,
					     .reads = READS };

	return world_setup(state, &o);
}

/* Rendezvous by write, in chunks of READ_MAX (FI_LFVERBS_RDM_READ_MAX
 * cuts writes too). */
static int setup_rndv_write(void **state)
{
	static const struct world_opts o = { .rndv_write = true,
					     .read_max = READ_MAX };

	return world_setup(state, &o);
}

/* FI_THREAD_COMPLETION, and a CQ per direction. */
static int setup_split_completion(void **state)
{
	static const struct world_opts o = {
		.threading = FI_THREAD_COMPLETION, .split_cqs = true,
	};

	return world_setup(state, &o);
}

static int teardown(void **state)
{
	struct world *w = *state;

	pump(w);
	node_close(&w->a);
	node_close(&w->b);
	assert_int_equal(fi_close(&w->domain->fid), 0);
	assert_int_equal(fi_close(&w->fabric->fid), 0);
	fi_freeinfo(w->info);
	lfv_params.rdm_rx_bufs = w->saved_rx_bufs;
	lfv_params.rdm_sar = w->saved_sar;
	lfv_params.rdm_read_max = w->saved_read_max;
	lfv_params.rdm_reads = w->saved_reads;
	lfv_params.rdm_live_timeout = w->saved_live_timeout;
	lfv_params.rdm_rndv_write = w->saved_rndv_write;
	fake_net_fini();
	assert_int_equal(fake_open.qp, 0);
	assert_int_equal(fake_open.srq, 0);
	unit_fake_release();
	free(w->src);
	free(w->dst);
	free(w);
	return 0;
}

/* A and B connected by a first message from A. */
static void connect_a_to_b(struct world *w)
{
	static const char hello[] = "hello";
	char *buf = w->small_b;

	post_recv(&w->b, buf, SMALL, rx2);
	send_to_peer(&w->a, hello, sizeof(hello), tx1);
	pump(w);
	assert_got(&w->b, rx2, buf, hello);
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_CONNECTED);
	w->a.nok = w->b.nok = 0;
}

/* ---- the cases ---------------------------------------------------------------------- */

/* Both sides send first: both REQs cross. The lower name ignores the
 * other's REQ, the higher one adopts it: one RC QP each, both messages
 * arrive. */
static void test_simultaneous_reqs(void **state)
{
	struct world *w = *state;
	static const char from_a[] = "from a", from_b[] = "from b";
	char *buf_a = w->small_a, *buf_b = w->small_b;

	post_recv(&w->a, buf_a, SMALL, rx1);
	post_recv(&w->b, buf_b, SMALL, rx2);
	send_to_peer(&w->a, from_a, sizeof(from_a), tx1);
	send_to_peer(&w->b, from_b, sizeof(from_b), tx2);
	assert_int_equal(fake_net_count_of(FAKE_PKT_DGRAM, LFV_RDM_CTRL_REQ,
					   0), 2);
	pump(w);
	assert_got(&w->a, rx1, buf_a, from_b);
	assert_got(&w->b, rx2, buf_b, from_a);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(oks(&w->b, tx2), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
	assert_int_equal(rdm(&w->a)->nconns, 1);
	assert_int_equal(rdm(&w->b)->nconns, 1);
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_CONNECTED);
	assert_int_equal(rc_made(w), 2);
}

/* The REP is lost: the acceptor repeats it on its timer, unasked, and
 * the requester connects on the repeat. */
static void test_lost_rep(void **state)
{
	struct world *w = *state;
	static const char hi[] = "hi";
	char *buf = w->small_b;
	int i;

	post_recv(&w->b, buf, SMALL, rx2);
	send_to_peer(&w->a, hi, sizeof(hi), tx1);
	fake_net_deliver_all();
	poll_node(&w->b);		/* B accepts and answers */
	i = fake_net_find(0, FAKE_PKT_DGRAM, LFV_RDM_CTRL_REP, ctl_qpn(&w->b));
	assert_true(i >= 0);
	fake_net_drop((size_t)i);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_ACCEPTED);

	fake_net_advance(LFV_RDM_RETRY_NS + 1000000);
	poll_node(&w->b);		/* only the acceptor's timers run */
	assert_int_equal(fake_net_count_of(FAKE_PKT_DGRAM, LFV_RDM_CTRL_REP,
					   ctl_qpn(&w->b)), 1);
	assert_int_equal(fake_net_count_of(FAKE_PKT_DGRAM, LFV_RDM_CTRL_REQ,
					   0), 0);
	pump(w);
	assert_got(&w->b, rx2, buf, hi);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
	assert_int_equal(rdm(&w->b)->nconns, 1);
	assert_int_equal(rc_made(w), 2);
}

/* Sets the MTU the first control datagram of op from src says. */
static void set_dgram_mtu(int op, uint32_t src, uint8_t mtu)
{
	struct fake_pkt *q;
	int i = fake_net_find(0, FAKE_PKT_DGRAM, op, src);

	assert_true(i >= 0);
	q = fake_net_take((size_t)i);
	((struct lfv_rdm_ctrl *)q->data)->mtu = mtu;
	fake_net_put(q);
}

/* Each side's RC QP takes the smaller of the two ports' MTUs, which the
 * REQ and the REP carry (the fake device's is IBV_MTU_1024): the
 * acceptor the requester's, the requester the acceptor's. */
static void test_handshake_takes_smaller_mtu(void **state)
{
	struct world *w = *state;
	static const char hi[] = "mtu";
	char *buf = w->small_b;

	post_recv(&w->b, buf, SMALL, rx2);
	send_to_peer(&w->a, hi, sizeof(hi), tx1);
	set_dgram_mtu(LFV_RDM_CTRL_REQ, ctl_qpn(&w->a), IBV_MTU_512);
	fake_net_deliver_all();
	poll_node(&w->b);
	assert_int_equal(fake_net_path_mtu(conn(&w->b)->qp), IBV_MTU_512);
	/* A larger MTU than ours: ours. */
	set_dgram_mtu(LFV_RDM_CTRL_REP, ctl_qpn(&w->b), IBV_MTU_4096);
	pump(w);
	assert_int_equal(fake_net_path_mtu(conn(&w->a)->qp), IBV_MTU_1024);
	assert_got(&w->b, rx2, buf, hi);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
}

/* The network duplicates the REQ: the acceptor answers the copy with the
 * same REP (its QP and connection stay), the requester ignores the second
 * REP, the message arrives once. */
static void test_duplicate_req(void **state)
{
	struct world *w = *state;
	static const char hi[] = "once";
	char *buf = w->small_b;
	int i;

	post_recv(&w->b, buf, SMALL, rx2);
	send_to_peer(&w->a, hi, sizeof(hi), tx1);
	i = fake_net_find(0, FAKE_PKT_DGRAM, LFV_RDM_CTRL_REQ, ctl_qpn(&w->a));
	assert_true(i >= 0);
	fake_net_dup((size_t)i);
	fake_net_deliver_all();
	poll_node(&w->b);		/* both REQs */
	assert_int_equal(rdm(&w->b)->nconns, 1);
	assert_int_equal(rc_made(w), 2);
	assert_int_equal(fake_net_count_of(FAKE_PKT_DGRAM, LFV_RDM_CTRL_REP,
					   ctl_qpn(&w->b)), 2);
	pump(w);
	assert_got(&w->b, rx2, buf, hi);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
	assert_int_equal(rdm(&w->a)->nconns, 1);
	assert_int_equal(rdm(&w->b)->nconns, 1);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_CONNECTED);
}

/* The acceptor's QP is ready before the requester's: a send of the
 * acceptor waits (ACCEPTED) until the requester's RTU proves its QP ready,
 * even with the REP answered and the RTU on its way; sent earlier it would
 * reach a QP that is not ready and fail the connection. */
static void test_rtu_gates_acceptor(void **state)
{
	struct world *w = *state;
	static const char a2b[] = "a to b", b2a[] = "b to a";
	char *buf_a = w->small_a, *buf_b = w->small_b;
	uint32_t b_qpn;
	int i;

	post_recv(&w->a, buf_a, SMALL, rx1);
	post_recv(&w->b, buf_b, SMALL, rx2);
	send_to_peer(&w->a, a2b, sizeof(a2b), tx1);
	fake_net_deliver_all();
	poll_node(&w->b);		/* B accepts: REP out */
	b_qpn = conn(&w->b)->qp->qp_num;

	send_to_peer(&w->b, b2a, sizeof(b2a), tx2);
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, -1, b_qpn), 0);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_ACCEPTED);

	fake_net_deliver_all();
	poll_node(&w->a);		/* A takes the REP: RTU, then its send */
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
	i = fake_net_find(0, FAKE_PKT_SEND, -1, 0);
	assert_true(i >= 0);
	assert_int_equal(fake_net_peek((size_t)i)->data[0], LFV_RDM_RTU);
	assert_int_equal(conn(&w->b)->state, LFV_RDM_ACCEPTED);
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, -1, b_qpn), 0);

	fake_net_deliver_all();
	poll_node(&w->b);		/* the RTU, then A's message */
	assert_int_equal(conn(&w->b)->state, LFV_RDM_CONNECTED);
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, LFV_RDM_EAGER_MSG,
					   b_qpn), 1);
	pump(w);
	assert_got(&w->a, rx1, buf_a, b2a);
	assert_got(&w->b, rx2, buf_b, a2b);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(oks(&w->b, tx2), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
}

/* The requester closes with its RTU not yet acknowledged: closing puts
 * the QP in error, which flushes the RTU (unsignaled, but a flushed
 * request completes all the same). Its completion must name something
 * the endpoint knows: an RTU without a work request id made the
 * completion handler follow a NULL request. */
static void test_close_with_rtu_in_flight(void **state)
{
	struct world *w = *state;
	static const char hi[] = "hi";
	int i;

	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, hi, sizeof(hi), tx1);
	fake_net_deliver_all();
	poll_node(&w->b);		/* B accepts: REP out */
	fake_net_deliver_all();
	poll_node(&w->a);		/* A takes the REP: RTU, then "hi" */
	i = fake_net_find(0, FAKE_PKT_SEND, LFV_RDM_RTU, 0);
	assert_true(i >= 0);
	node_close(&w->a);		/* flushes the RTU and "hi" */
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, -1, 0), 0);
	node_open(w, &w->a);		/* for teardown */
}

/* An endpoint closes beside another on one CQ, on a device that flushes
 * a QP's receives late (soft-RoCE: in a task, which destroying the QP
 * waits for): the flushed control receives name the closing endpoint's
 * buffers. Its close must take them from the CQ before it frees those:
 * left there, the other endpoint's next read followed freed memory
 * (func_rdm_many's crash: 64 endpoints closing in turn on one CQ). */
static void test_close_beside_on_one_cq(void **state)
{
	struct world *w = *state;
	struct fid_ep *x;

	fake_net_late_flush(true);
	assert_int_equal(fi_endpoint(w->domain, w->info, &x, NULL), 0);
	assert_int_equal(fi_ep_bind(x, &w->a.av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(x, &w->a.cq->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_enable(x), 0);
	assert_int_equal(fi_close(&x->fid), 0);
	assert_int_equal(fake_net_stale_wcs(), 0);
	connect_a_to_b(w);		/* the CQ still serves A */
}

/* A REP that comes after its requester gave up: A's handshake timed out
 * (B's REP held back), and A's next send asks again on a new QP. The old
 * REP then arrives (B repeats it on its timer): it answers the first REQ,
 * not this one, and must not connect A's new QP to B's QP of the first
 * handshake (which B tears down when the new REQ comes: A's message would
 * fail). A connects on B's answer to the new REQ. */
static void test_late_rep(void **state)
{
	struct world *w = *state;
	static const char again[] = "again";
	char *buf = w->small_b;
	struct fake_pkt *rep;
	int i, round;

	post_recv(&w->b, buf, SMALL, rx2);
	send_to_peer(&w->a, again, 1, tx1);
	fake_net_deliver_all();
	poll_node(&w->b);		/* B accepts: REP out */
	i = fake_net_find(0, FAKE_PKT_DGRAM, LFV_RDM_CTRL_REP, ctl_qpn(&w->b));
	assert_true(i >= 0);
	rep = fake_net_take((size_t)i);
	for (round = 0; round <= LFV_RDM_MAX_TRIES && !err_of(&w->a, tx1);
	     round++) {
		while (fake_net_count())
			fake_net_drop(0);	/* A's REQs, lost */
		fake_net_advance(LFV_RDM_RETRY_NS + 1000000);
		poll_node(&w->a);
	}
	assert_non_null(err_of(&w->a, tx1));
	assert_int_equal(err_of(&w->a, tx1)->err, FI_EHOSTUNREACH);

	send_to_peer(&w->a, again, sizeof(again), tx2);
	assert_int_equal(conn(&w->a)->state, LFV_RDM_REQ_SENT);
	fake_net_put(rep);
	i = fake_net_find(0, FAKE_PKT_DGRAM, LFV_RDM_CTRL_REP, ctl_qpn(&w->b));
	assert_true(i >= 0);
	assert_true(fake_net_deliver((size_t)i));
	poll_node(&w->a);		/* the late REP: ignored */
	assert_int_equal(conn(&w->a)->state, LFV_RDM_REQ_SENT);

	pump(w);			/* the new REQ, B's REP to it */
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
	assert_int_equal(oks(&w->a, tx2), 1);
	assert_null(err_of(&w->a, tx2));
	assert_got(&w->b, rx2, buf, again);
	assert_int_equal(w->a.nerr, 1);	/* tx1 */
	assert_int_equal(w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
}

/* A FIN of an earlier use of a transmit request (a replay of the first
 * rendezvous' FIN) arrives while the request serves a second rendezvous
 * to the same peer: it must not complete the second one, whose payload
 * the receiver has not read yet. */
static void test_stale_fin(void **state)
{
	struct world *w = *state;
	const struct lfv_rdm_rts *rts;
	struct fake_pkt *stale;
	uint64_t cookie;
	size_t i;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	i = step_until(w, FAKE_PKT_SEND, LFV_RDM_FIN);
	fake_net_dup(i);
	stale = fake_net_take(fake_net_count() - 1);
	pump(w);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_non_null(ok_of(&w->b, rx2));
	assert_memory_equal(w->dst, w->src, w->big);

	/* The second rendezvous takes the same request, a new use. */
	memset(w->dst, 0, w->big);
	send_to_peer(&w->a, w->src, w->big, tx2);
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, LFV_RDM_RTS_MSG, 0),
			 1);
	i = (size_t)fake_net_find(0, FAKE_PKT_SEND, LFV_RDM_RTS_MSG, 0);
	rts = (const void *)(fake_net_peek(i)->data +
			     sizeof(struct lfv_rdm_hdr));
	cookie = ((const struct lfv_rdm_hdr *)stale->data)->tag;
	assert_int_equal((uint32_t)rts->cookie, (uint32_t)cookie);
	assert_int_not_equal(rts->cookie >> 32, cookie >> 32);
	pump(w);			/* B holds the RTS: no receive yet */
	assert_int_equal(oks(&w->a, tx2) + (err_of(&w->a, tx2) != NULL),
			 0);

	fake_net_put(stale);
	pump(w);
	assert_int_equal(oks(&w->a, tx2), 0);
	assert_null(err_of(&w->a, tx2));
	/* Dropped, and counted like any FIN that names no request. */
	assert_int_equal(drops_for(w, FI_LFVERBS_DROP_MALFORMED), 1);

	post_recv(&w->b, w->dst, w->big, rx1);
	pump(w);
	assert_int_equal(oks(&w->a, tx2), 1);
	assert_int_equal(oks(&w->b, rx1), 1);
	assert_int_equal(ok_of(&w->b, rx1)->len, w->big);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 1);
}

/* FI_LFVERBS_RDM_READ_MAX cuts a rendezvous payload into reads of at most
 * that many bytes at consecutive offsets, and FI_LFVERBS_RDM_READS keeps
 * that many of them in flight, the next posted as one completes (across
 * the nodes of a bed, 8 MiB reads all at once overflowed the sender's
 * qdisc: tests/bench/README.md). */
static void test_read_chunks(void **state)
{
	struct world *w = *state;
	const struct fake_pkt *p;
	uint64_t next = 0;
	size_t n = 0, on_wire, round;
	int at;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	at = (int)step_until(w, FAKE_PKT_READ, -1);
	for (round = 0; at >= 0 && round < PUMP_ROUNDS; round++) {
		on_wire = fake_net_count_of(FAKE_PKT_READ, -1, 0);
		assert_true(on_wire <= READS);
		for (; at >= 0; at = fake_net_find((size_t)at + 1,
						   FAKE_PKT_READ, -1, 0)) {
			p = fake_net_peek((size_t)at);
			assert_int_equal(p->len, READ_MAX);
			if (n)
				assert_int_equal(p->raddr, next);
			next = p->raddr + READ_MAX;
			n++;
		}
		fake_net_deliver_all();
		poll_node(&w->a);
		poll_node(&w->b);
		at = fake_net_find(0, FAKE_PKT_READ, -1, 0);
	}
	assert_int_equal(n, w->big / READ_MAX);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
}

/* One step: the first read on the wire delivered (everything when there
 * is none), then both nodes polled. */
static void deliver_a_read(struct world *w)
{
	int i = fake_net_find(0, FAKE_PKT_READ, -1, 0);

	if (i >= 0)
		fake_net_deliver((size_t)i);
	else
		fake_net_deliver_all();
	poll_node(&w->a);
	poll_node(&w->b);
}

/* The limit is the connection's, not each receive's: two rendezvous
 * from one peer, their reads answered one at a time, never have more than
 * FI_LFVERBS_RDM_READS on the wire together (the responses of both share
 * the peer's link; per receive, the second's began beside the first's
 * last ones). */
static void test_reads_per_connection(void **state)
{
	struct world *w = *state;
	uint8_t *dst2 = calloc(1, w->big);
	size_t on_wire, most = 0;
	int round;

	assert_non_null(dst2);
	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx1);
	post_recv(&w->b, dst2, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	send_to_peer(&w->a, w->src, w->big, tx2);
	for (round = 0; round < 1000 && (!oks(&w->b, rx1) ||
					 !oks(&w->b, rx2)); round++) {
		on_wire = fake_net_count_of(FAKE_PKT_READ, -1, 0);
		most = on_wire > most ? on_wire : most;
		deliver_a_read(w);
	}
	pump(w);
	assert_int_equal(most, READS);
	assert_int_equal(oks(&w->b, rx1), 1);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_memory_equal(dst2, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1) + oks(&w->a, tx2), 2);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	free(dst2);
}

/* A and B connected; A's rendezvous send (tx1) to B's receive (rx2),
 * whose read of A's buffer fails at A's device: B's receive fails with
 * FI_EIO and no data. */
static void rndv_read_fails(struct world *w)
{
	const struct fi_cq_err_entry *e;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	fake_net_fail(step_until(w, FAKE_PKT_READ, -1), IBV_WC_REM_ACCESS_ERR);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 0);
	e = err_of(&w->b, rx2);
	assert_non_null(e);
	assert_int_equal(e->err, FI_EIO);
}

/* The receiver's RDMA read of a rendezvous payload fails: the receive
 * completes with FI_EIO (not with the bytes it does not have), the
 * sender's send fails (its probe finds the connection dead), and the
 * next send connects again. */
/* n's operation ctx waits for something that will not come: its probe of
 * the connection, once a second, meets the peer's dead QP within rounds
 * seconds and more; it then fails with err. */
static void probe_fails(struct world *w, struct node *n, const void *ctx,
			size_t rounds, int err)
{
	const struct fi_cq_err_entry *e;
	size_t i;
	int k;

	for (i = 0; i < rounds && !err_of(n, ctx); i++) {
		fake_net_advance(3 * LFV_RDM_PING_NS / 2);
		for (k = 0; k < 256; k++)
			poll_node(n);
		pump(w);
	}
	assert_int_equal(oks(n, ctx), 0);
	e = err_of(n, ctx);
	assert_non_null(e);
	assert_int_equal(e->err, err);
}

/* After a failure, A's next send to B connects again and arrives. */
static void talk_again(struct world *w)
{
	static const char again[] = "again";
	char *buf = w->small_b;

	post_recv(&w->b, buf, SMALL, rx1);
	send_to_peer(&w->a, again, sizeof(again), tx2);
	pump(w);
	assert_got(&w->b, rx1, buf, again);
	assert_int_equal(oks(&w->a, tx2), 1);
}

static void test_read_fails(void **state)
{
	struct world *w = *state;

	rndv_read_fails(w);
	/* A's send waits for a FIN that will not come. */
	probe_fails(w, &w->a, tx1, 2, FI_ECONNRESET);
	talk_again(w);
}

/* Runs until the zero-byte RDMA write that follows a rendezvous' last
 * read is on the wire, with no READ before it; its index. */
static size_t step_to_vouch(struct world *w)
{
	int at;
	size_t round;

	for (round = 0; round < PUMP_ROUNDS; round++) {
		at = fake_net_find(0, FAKE_PKT_WRITE, -1, 0);
		if (at >= 0 && fake_net_find(0, FAKE_PKT_READ, -1, 0) < 0)
			return (size_t)at;
		deliver_a_read(w);
	}
	fail_msg("no zero-byte write after the reads");
	return 0;
}

/* A read's success is believed only after a later request on its QP has
 * succeeded: soft-RoCE (Linux 6.1) completes a read with success on the
 * path that then puts the QP in error, its data partly written, and what
 * follows is flushed. A zero-byte write follows the last read: B's
 * receive is not reported while it is on the wire, and fails with FI_EIO
 * when it fails (and A's send with it: the FIN says so). */
static void test_read_believed_after_write(void **state)
{
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	size_t at;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	at = step_to_vouch(w);
	assert_int_equal(fake_net_peek(at)->len, 0);
	poll_node(&w->b);
	assert_int_equal(oks(&w->b, rx2), 0);
	assert_null(err_of(&w->b, rx2));
	fake_net_fail(at, IBV_WC_WR_FLUSH_ERR);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 0);
	e = err_of(&w->b, rx2);
	assert_non_null(e);
	assert_int_equal(e->err, FI_EIO);
	assert_int_equal(e->len, 0);
}

/* ... and once that write has succeeded the receive is reported, before
 * the FIN has even left: a sender may close as soon as its send completes,
 * and the FIN's acknowledgement would then never come. */
static void test_read_reported_before_fin(void **state)
{
	struct world *w = *state;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	step_until(w, FAKE_PKT_SEND, LFV_RDM_FIN);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 0);
	pump(w);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
}

/* ---- rendezvous by write ---------------------------------------------------- */

/* The header of the packet at i (a send). */
static const struct lfv_rdm_hdr *hdr_at(size_t i)
{
	return (const struct lfv_rdm_hdr *)fake_net_peek(i)->data;
}

/* FI_LFVERBS_RDM_RNDV_WRITE: B's receive answers A's RTS with a CTS that
 * names its buffer under a key made for it (remote write, given back
 * after); A writes the payload there in chunks, WDONE behind them. No
 * read, no FIN; both complete with the data in place. */
static void test_rndv_by_write(void **state)
{
	struct world *w = *state;
	const struct lfv_rdm_cts *cts;
	unsigned int mrs;
	size_t i, writes = 0;

	connect_a_to_b(w);
	mrs = fake_open.mr;
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	i = step_until(w, FAKE_PKT_SEND, LFV_RDM_CTS);
	cts = (const void *)(hdr_at(i) + 1);
	assert_int_equal(cts->len, w->big);
	assert_int_equal(cts->addr, (uintptr_t)w->dst);
	assert_int_equal(fake_last_mr_access,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(fake_open.mr, mrs + 2);	/* A's source, B's */
	fake_net_deliver(i);
	poll_node(&w->a);
	for (i = 0; i < PUMP_ROUNDS && !oks(&w->b, rx2); i++) {
		assert_int_equal(fake_net_count_of(FAKE_PKT_READ, -1, 0), 0);
		assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, LFV_RDM_FIN,
						   0), 0);
		writes += fake_net_count_of(FAKE_PKT_WRITE, -1, 0);
		fake_net_deliver_all();
		poll_node(&w->a);
		poll_node(&w->b);
	}
	pump(w);
	assert_true(writes >= w->big / READ_MAX);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_int_equal(ok_of(&w->b, rx2)->len, w->big);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(fake_open.mr, mrs);
	assert_int_equal(drops(w), 0);
}

/* A's rendezvous send (tx1) to B's receive (rx2), by write, up to B's
 * CTS on the wire, which it copies (at the wire's end); the CTS's index. */
static size_t cts_and_copy(struct world *w)
{
	size_t i;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	i = step_until(w, FAKE_PKT_SEND, LFV_RDM_CTS);
	fake_net_dup(i);
	return i;
}

/* A second CTS for the same send (a replay) while it writes is dropped and
 * counted: it would write the payload again, maybe elsewhere. So is a
 * WDONE for a receive that is over: it would finish it twice. The
 * transfer itself is unharmed. */
static void test_rndv_write_replays(void **state)
{
	struct world *w = *state;
	struct fake_pkt *wdone;
	size_t i = cts_and_copy(w);

	fake_net_deliver(i);
	poll_node(&w->a);		/* the writes begin */
	i = (size_t)fake_net_find(0, FAKE_PKT_SEND, LFV_RDM_CTS, 0);
	fake_net_deliver(i);		/* the replay */
	poll_node(&w->a);
	assert_int_equal(drops_for(w, FI_LFVERBS_DROP_FORGED), 1);
	i = step_until(w, FAKE_PKT_SEND, LFV_RDM_WDONE);
	fake_net_dup(i);
	wdone = fake_net_take(fake_net_count() - 1);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 1);
	fake_net_put(wdone);
	pump(w);
	assert_int_equal(drops_for(w, FI_LFVERBS_DROP_FORGED), 2);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
}

/* A CTS that asks for more bytes than the send has is dropped (the
 * sender would write past its source), and so is one for a send that
 * does not wait: the send is unharmed when the true one comes. */
static void test_rndv_write_cts_too_long(void **state)
{
	struct world *w = *state;
	struct fake_pkt *p;
	struct lfv_rdm_cts *cts;
	size_t i = cts_and_copy(w);

	p = fake_net_take(fake_net_count() - 1);
	cts = (struct lfv_rdm_cts *)(p->data + sizeof(struct lfv_rdm_hdr));
	cts->len = w->big + 1;
	fake_net_put(p);	/* behind the true one: first, move it */
	p = fake_net_take(i);
	fake_net_put(p);
	fake_net_deliver(i);	/* the long one */
	poll_node(&w->a);
	assert_int_equal(drops_for(w, FI_LFVERBS_DROP_FORGED), 1);
	assert_int_equal(fake_net_count_of(FAKE_PKT_WRITE, -1, 0), 0);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 1);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
}

/* A WDONE that says other bytes were written than the CTS offered fails
 * the receive (FI_EIO), counted as malformed. */
static void test_rndv_write_wdone_short(void **state)
{
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	struct lfv_rdm_hdr *h;
	struct fake_pkt *p;
	size_t i;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	i = step_until(w, FAKE_PKT_SEND, LFV_RDM_WDONE);
	p = fake_net_take(i);
	h = (struct lfv_rdm_hdr *)p->data;
	h->cq_data--;
	fake_net_put(p);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 0);
	e = err_of(&w->b, rx2);
	assert_non_null(e);
	assert_int_equal(e->err, FI_EIO);
	assert_int_equal(drops_for(w, FI_LFVERBS_DROP_MALFORMED), 1);
}

/* A's rendezvous send to B by write, whose write fails at B's device (a
 * key B does not honour). */
static void write_fails_at_b(struct world *w)
{
	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx2);
	send_to_peer(&w->a, w->src, w->big, tx1);
	fake_net_fail(step_until(w, FAKE_PKT_WRITE, -1), IBV_WC_REM_ACCESS_ERR);
	pump(w);
}

/* Then A's send fails, and B's receive, which waits for a WDONE that will
 * not come, fails too once its probe of the connection meets A's dead QP;
 * then the peers talk again. */
static void test_rndv_write_fails(void **state)
{
	struct world *w = *state;

	write_fails_at_b(w);
	assert_int_equal(oks(&w->a, tx1), 0);
	assert_non_null(err_of(&w->a, tx1));
	/* B's receive waits for a WDONE that will not come. */
	probe_fails(w, &w->b, rx2, 3, FI_EIO);
	talk_again(w);
}

/* As test_rndv_write_fails, with nothing on B waiting but its receive by
 * write: two reads of B's CQ, each after a probe's interval, probe the
 * connection (zero-byte writes), whatever the count of reads the liveness
 * look goes by (LFV_RDM_LIVE_CALLS). */
static void test_rndv_write_probe_due(void **state)
{
	struct world *w = *state;
	size_t before;

	write_fails_at_b(w);
	before = fake_net_count_of(FAKE_PKT_WRITE, -1, 0);
	fake_net_advance(3 * LFV_RDM_PING_NS / 2);
	poll_node(&w->b);
	fake_net_advance(3 * LFV_RDM_PING_NS / 2);
	poll_node(&w->b);
	assert_true(fake_net_count_of(FAKE_PKT_WRITE, -1, 0) > before);
	probe_fails(w, &w->b, rx2, 3, FI_EIO);
}

/* The same for fi_read: a zero-byte RDMA write follows its read, and the
 * read completes only when that write has: in error when it fails. */
static void test_rma_read_believed_after_write(void **state)
{
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	struct fid_mr *mr;
	uint64_t addr = (uintptr_t)w->src;	/* lfverbs: FI_MR_VIRT_ADDR */
	int rd, wr;

	connect_a_to_b(w);
	assert_int_equal(fi_mr_reg(w->domain, w->src, SMALL, FI_REMOTE_READ,
				   0, 0, 0, &mr, NULL), 0);
	assert_int_equal(fi_read(w->a.ep, w->dst, SMALL, NULL, w->a.peer,
				 addr, fi_mr_key(mr), tx2), 0);
	rd = fake_net_find(0, FAKE_PKT_READ, -1, 0);
	wr = fake_net_find(0, FAKE_PKT_WRITE, -1, 0);
	assert_true(rd >= 0);
	assert_true(wr > rd);
	assert_int_equal(fake_net_peek((size_t)wr)->len, 0);
	assert_true(fake_net_deliver((size_t)rd));
	poll_node(&w->a);
	assert_int_equal(oks(&w->a, tx2), 0);
	assert_null(err_of(&w->a, tx2));
	fake_net_fail((size_t)fake_net_find(0, FAKE_PKT_WRITE, -1, 0),
		      IBV_WC_WR_FLUSH_ERR);
	pump(w);
	assert_int_equal(oks(&w->a, tx2), 0);
	e = err_of(&w->a, tx2);
	assert_non_null(e);
	assert_int_not_equal(e->err, 0);
	assert_int_equal(fi_close(&mr->fid), 0);
}

/* The same with a reader that polls once per sleep slice, as one blocked
 * in fi_cq_sread does (50 ms): A's probe goes about a second after the
 * FIN is due, by the clock, not after 256 polls (12.8 s of slices). */
static void test_read_fails_slow_reader(void **state)
{
	const int64_t slice = LFV_RDM_WAIT_TIMERS_MS * 1000000LL;
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	int64_t waited;

	rndv_read_fails(w);
	for (waited = 0; waited < 3 * LFV_RDM_PING_NS && !err_of(&w->a, tx1);
	     waited += slice) {
		fake_net_advance(slice);
		poll_node(&w->a);
		fake_net_deliver_all();
	}
	e = err_of(&w->a, tx1);
	assert_non_null(e);
	assert_int_equal(e->err, FI_ECONNRESET);
}

/* B exits and starts again at the same address (its control QP number
 * again): its REQ carries a new incarnation. A drops the old connection
 * (the rendezvous send that waited on it fails with FI_ECONNRESET) and
 * accepts the new one, both ways. */
static void test_restart_same_address(void **state)
{
	struct world *w = *state;
	static const char reborn[] = "reborn", welcome[] = "welcome";
	uint8_t old_name[64];
	size_t old_len = w->b.namelen;
	char *buf_a = w->small_a, *buf_b = w->small_b;
	const struct fi_cq_err_entry *e;

	connect_a_to_b(w);
	send_to_peer(&w->a, w->src, w->big, tx1);
	pump(w);			/* B holds the RTS, A waits for FIN */
	assert_int_equal(oks(&w->a, tx1), 0);
	memcpy(old_name, w->b.name, old_len);

	node_close(&w->b);
	fake_net_next_qpn(((struct lfv_ud_name *)old_name)->qpn);
	node_open(w, &w->b);
	assert_int_equal(w->b.namelen, old_len);
	assert_memory_equal(w->b.name, old_name, old_len);
	node_meet(&w->b, &w->a);

	post_recv(&w->a, buf_a, SMALL, rx1);
	send_to_peer(&w->b, reborn, sizeof(reborn), tx2);
	fake_net_deliver_all();
	poll_node(&w->a);		/* the new incarnation's REQ */
	e = err_of(&w->a, tx1);
	assert_non_null(e);
	assert_int_equal(e->err, FI_ECONNRESET);
	pump(w);
	assert_got(&w->a, rx1, buf_a, reborn);
	assert_int_equal(oks(&w->b, tx2), 1);

	post_recv(&w->b, buf_b, SMALL, rx2);
	send_to_peer(&w->a, welcome, sizeof(welcome), tx2);
	pump(w);
	assert_got(&w->b, rx2, buf_b, welcome);
	assert_int_equal(oks(&w->a, tx2), 1);
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
}

/* 2.x's fi_unexpected_msg: A sends two tagged messages to B before B
 * has A in its AV. B takes the first with an FI_ADDR_UNSPEC receive,
 * inserts A, and a receive directed to A's new fi_addr_t takes the
 * second, which was queued from the then unknown peer. */
static void test_unexpected_before_insert(void **state)
{
	struct world *w = *state;
	static const char one[] = "one", two[] = "two";
	const uint64_t tag = 7;
	char *buf = w->small_b;

	assert_int_equal(fi_tsend(w->a.ep, one, sizeof(one), NULL, w->a.peer,
				  tag, tx1), 0);
	assert_int_equal(fi_tsend(w->a.ep, two, sizeof(two), NULL, w->a.peer,
				  tag, tx2), 0);
	pump(w);
	assert_int_equal(oks(&w->a, tx1) + oks(&w->a, tx2), 2);
	assert_int_equal(rdm(&w->b)->unexp_n, 2);

	assert_int_equal(fi_trecv(w->b.ep, buf, SMALL, NULL, FI_ADDR_UNSPEC,
				  tag, 0, rx1), 0);
	pump(w);
	assert_got(&w->b, rx1, buf, one);

	node_meet(&w->b, &w->a);
	memset(buf, 0, SMALL);
	assert_int_equal(fi_trecv(w->b.ep, buf, SMALL, NULL, w->b.peer, tag,
				  0, rx2), 0);
	pump(w);
	assert_got(&w->b, rx2, buf, two);
	assert_int_equal(rdm(&w->b)->unexp_n, 0);
	assert_int_equal(lfv_load_relaxed64(&rdm(&w->b)->unexp_unknown), 0);
	assert_int_equal(w->b.nerr, 0);
}

/* FI_OPT_MIN_MULTI_RECV set on the endpoint before enable takes effect:
 * B's 64-byte buffer keeps taking messages while 8 bytes or more are
 * left (the default, 16 KiB, would release it at the first). */
static void test_min_multi_recv_on_ep(void **state)
{
	struct world *w = *state;
	static const char first[20] = "first", second[40] = "second";
	struct iovec iov = { .iov_base = w->small_b, .iov_len = SMALL };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1,
			      .addr = FI_ADDR_UNSPEC, .context = rx2 };
	const struct fi_cq_tagged_entry *e;

	assert_int_equal(fi_recvmsg(w->b.ep, &msg, FI_MULTI_RECV), 0);
	send_to_peer(&w->a, first, sizeof(first), tx1);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 1);
	e = ok_of(&w->b, rx2);
	assert_int_equal(e->len, sizeof(first));
	assert_false(e->flags & FI_MULTI_RECV);	/* 44 bytes left */

	send_to_peer(&w->a, second, sizeof(second), tx2);
	pump(w);
	assert_int_equal(oks(&w->b, rx2), 2);
	e = &w->b.ok[w->b.nok - 1];
	assert_int_equal(e->len, sizeof(second));
	assert_true(e->flags & FI_MULTI_RECV);		/* 4 left: released */
	assert_string_equal(w->small_b + sizeof(first), "second");
	assert_int_equal(min_multi_recv(&w->b), MIN_MULTI_RECV);
}

/* 2.x's fi_multi_ep --threading completion, its ft_finalize: under
 * FI_THREAD_COMPLETION with a CQ per direction, both sides send first and
 * read only their transmit CQs until the sends complete. The handshake
 * (REQ, REP, RTU) arrives on the receive side: the reads connect anyway
 * (the timers would fail the sends with FI_EHOSTUNREACH otherwise). */
static void test_connect_reading_tx_cq(void **state)
{
	struct world *w = *state;
	static const char from_a[] = "from a", from_b[] = "from b";
	int round;

	post_recv(&w->a, w->small_a, SMALL, rx1);
	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, from_a, sizeof(from_a), tx1);
	send_to_peer(&w->b, from_b, sizeof(from_b), tx2);
	for (round = 0; round < PUMP_ROUNDS; round++) {
		fake_net_deliver_all();
		poll_cq(&w->a, w->a.cq);
		poll_cq(&w->b, w->b.cq);
		if (oks(&w->a, tx1) && oks(&w->b, tx2))
			break;
	}
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(oks(&w->b, tx2), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	pump(w);
	assert_got(&w->a, rx1, w->small_a, from_b);
	assert_got(&w->b, rx2, w->small_b, from_a);
}

/* ---- segmented eager (SAR) ------------------------------------------------- */

/* SAR segments of big on the wire: its first (SAR_MSG) and its SEGs. */
static void assert_sar_on_wire(struct world *w)
{
	size_t first = rdm(&w->a)->eager - sizeof(struct lfv_rdm_sar);
	size_t segs = (w->big - first + rdm(&w->a)->eager - 1) /
		      rdm(&w->a)->eager;

	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, LFV_RDM_SAR_MSG, 0),
			 1);
	assert_int_equal(fake_net_count_of(FAKE_PKT_SEND, LFV_RDM_SEG, 0),
			 segs);
	assert_int_equal(fake_net_count_of(FAKE_PKT_READ, -1, 0), 0);
}

/* A message of 4 eager buffers goes in SAR segments, no rendezvous:
 * received expected, then unexpected (its send completing before the
 * receive is posted), the right bytes, one completion each side. */
static void test_sar_both_orders(void **state)
{
	struct world *w = *state;
	const struct fi_cq_tagged_entry *e;

	connect_a_to_b(w);
	assert_true(rdm(&w->a)->sar_max >= w->big);
	post_recv(&w->b, w->dst, w->big, rx1);
	send_to_peer(&w->a, w->src, w->big, tx1);
	assert_sar_on_wire(w);
	pump(w);
	e = ok_of(&w->b, rx1);
	assert_non_null(e);
	assert_int_equal(e->len, w->big);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(oks(&w->a, tx1), 1);

	memset(w->dst, 0, w->big);
	send_to_peer(&w->a, w->src, w->big, tx2);
	pump(w);
	assert_int_equal(oks(&w->a, tx2), 1);
	post_recv(&w->b, w->dst, w->big, rx2);
	pump(w);
	e = ok_of(&w->b, rx2);
	assert_non_null(e);
	assert_int_equal(e->len, w->big);
	assert_memory_equal(w->dst, w->src, w->big);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
}

/* A and B connected, B's receive rx1 posted, A's SAR send of big (tx1)
 * on the wire: the index of its first SEG, not yet delivered. */
static size_t sar_under_way(struct world *w)
{
	int i;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx1);
	send_to_peer(&w->a, w->src, w->big, tx1);
	i = fake_net_find(0, FAKE_PKT_SEND, LFV_RDM_SEG, 0);
	assert_true(i > 0);
	return (size_t)i;
}

/* A segment that is not the next one (a forged offset): dropped and
 * counted, the receive that took the message fails with FI_EIO (never
 * with the wrong bytes), the rest of the message is dropped, and the
 * next message arrives. */
static void test_sar_bad_offset(void **state)
{
	struct world *w = *state;
	static const char after[] = "after";
	const struct fi_cq_err_entry *err;
	struct lfv_rdm_hdr *h;
	struct fake_pkt *p;
	size_t i;

	i = sar_under_way(w);
	p = fake_net_take(i);
	h = (struct lfv_rdm_hdr *)p->data;
	h->tag += 8;
	/* In its place: the segments after it stay behind it. */
	fake_net_deliver_all();
	fake_net_put(p);
	pump(w);
	err = err_of(&w->b, rx1);
	assert_non_null(err);
	assert_int_equal(err->err, FI_EIO);
	assert_int_equal(oks(&w->b, rx1), 0);
	assert_true(drops_for(w, FI_LFVERBS_DROP_MALFORMED) >= 1);
	assert_int_equal(oks(&w->a, tx1), 1);	/* delivered, as far as RC knows */

	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, after, sizeof(after), tx2);
	pump(w);
	assert_got(&w->b, rx2, w->small_b, after);
}

/* Sends big and rewrites its first segment's total before it arrives. */
static void send_sar_total(struct world *w, uint64_t total, void *ctx)
{
	struct lfv_rdm_sar *first;
	int i;

	send_to_peer(&w->a, w->src, w->big, ctx);
	i = fake_net_find(0, FAKE_PKT_SEND, LFV_RDM_SAR_MSG, 0);
	assert_true(i >= 0);
	first = (struct lfv_rdm_sar *)((struct lfv_rdm_hdr *)
				       fake_net_peek((size_t)i)->data + 1);
	first->total = total;
	pump(w);
}

/* Totals a peer may lie about: below what the message sends (a segment
 * past it is dropped, the receive fails with FI_EIO), not past the first
 * segment, past max_msg_size (the message is dropped before it is matched:
 * nothing is queued, no receive is taken). Each is counted; the next
 * message arrives. */
static void test_sar_bad_total(void **state)
{
	struct world *w = *state;
	static const char after[] = "after";
	size_t first = rdm(&w->a)->eager - sizeof(struct lfv_rdm_sar);
	const struct fi_cq_err_entry *err;
	uint64_t before;

	connect_a_to_b(w);
	post_recv(&w->b, w->dst, w->big, rx1);
	before = drops_for(w, FI_LFVERBS_DROP_MALFORMED);
	send_sar_total(w, first + 8, tx1);
	err = err_of(&w->b, rx1);
	assert_non_null(err);
	assert_int_equal(err->err, FI_EIO);
	assert_true(drops_for(w, FI_LFVERBS_DROP_MALFORMED) > before);

	before = drops_for(w, FI_LFVERBS_DROP_MALFORMED);
	send_sar_total(w, first, tx2);
	assert_true(drops_for(w, FI_LFVERBS_DROP_MALFORMED) > before);
	before = drops_for(w, FI_LFVERBS_DROP_MALFORMED);
	send_sar_total(w, w->info->ep_attr->max_msg_size + 1, tx2);
	assert_true(drops_for(w, FI_LFVERBS_DROP_MALFORMED) > before);

	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, after, sizeof(after), tx2);
	pump(w);
	assert_got(&w->b, rx2, w->small_b, after);
}

/* A segment's delivery fails at the sender (its retries exhausted): the
 * send completes in error, once; the receiver's connection is replaced
 * when the sender connects again, and the receive that had the first
 * segment fails with FI_EIO; the next message arrives. */
static void test_sar_segment_fails(void **state)
{
	struct world *w = *state;
	static const char again[] = "again";
	const struct fi_cq_err_entry *err;
	size_t i;

	i = sar_under_way(w);
	fake_net_fail(i, IBV_WC_RETRY_EXC_ERR);
	pump(w);
	err = err_of(&w->a, tx1);
	assert_non_null(err);
	assert_int_equal(oks(&w->a, tx1), 0);
	assert_int_equal(w->a.nerr, 1);
	assert_int_equal(oks(&w->b, rx1), 0);

	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, again, sizeof(again), tx2);
	pump(w);
	assert_got(&w->b, rx2, w->small_b, again);
	err = err_of(&w->b, rx1);
	assert_non_null(err);
	assert_int_equal(err->err, FI_EIO);
}

/* ---- liveness (lfv_rdm_proto.h) ------------------------------------------ */

/* A's small send to B, on the wire and kept there (not delivered): A's
 * connection has work on its QP that does not complete. Its index. */
static size_t send_held(struct world *w)
{
	static const char held[] = "held";

	connect_a_to_b(w);
	post_recv(&w->b, w->small_b, SMALL, rx2);
	send_to_peer(&w->a, held, sizeof(held), tx1);
	return step_until(w, FAKE_PKT_SEND, LFV_RDM_EAGER_MSG);
}

/* What one liveness step does to a control datagram of the wire. */
enum dgram_fate { DELIVER, DROP_FROM_A, FORGE_ANSWERS };

/* Delivers, drops or forges the control datagrams on the wire (the RC
 * packets stay); forged: B's answers carry another nonce. How many PINGs
 * of A's were there. */
static size_t move_dgrams(struct world *w, enum dgram_fate fate)
{
	struct lfv_rdm_ctrl *m;
	const struct fake_pkt *p;
	struct fake_pkt *q;
	size_t i = 0, pings = 0, n = fake_net_count();

	while (i < fake_net_count() && n--) {
		p = fake_net_peek(i);
		if (p->kind != FAKE_PKT_DGRAM) {
			i++;
			continue;
		}
		m = (struct lfv_rdm_ctrl *)p->data;
		pings += m->op == LFV_RDM_CTRL_PING &&
			 p->src_qpn == ctl_qpn(&w->a);
		if (fate == DROP_FROM_A && p->src_qpn == ctl_qpn(&w->a)) {
			fake_net_drop(i);
			continue;
		}
		if (fate == FORGE_ANSWERS && m->op != LFV_RDM_CTRL_PING) {
			q = fake_net_take(i);
			((struct lfv_rdm_ctrl *)q->data)->psn ^= 0x100;
			fake_net_put(q);
			fake_net_deliver(fake_net_count() - 1);
			continue;
		}
		if (!fake_net_deliver(i))
			i++;
	}
	return pings;
}

/* One second of A's reader polling (one liveness look), then the
 * control datagrams moved, and B's answers read. A's PINGs seen. */
static size_t live_step(struct world *w, enum dgram_fate fate)
{
	size_t pings;
	int k;

	fake_net_advance(LFV_RDM_LIVE_LOOK_NS);
	for (k = 0; k < LFV_RDM_LIVE_CALLS; k++)
		poll_node(&w->a);
	pings = move_dgrams(w, fate);
	poll_node(&w->b);
	move_dgrams(w, fate);
	poll_node(&w->a);
	return pings;
}

/* Steps (at most max) until A's held send fails; how many it took. */
static int live_until_failed(struct world *w, enum dgram_fate fate, int max,
			     size_t *pings)
{
	int s;

	for (s = 1; s <= max; s++) {
		*pings += live_step(w, fate);
		if (err_of(&w->a, tx1))
			return s;
	}
	return s;
}

/* The peer answers: a send whose completion does not come (a lossy link,
 * RC resending) waits as long as it takes, its connection asked about
 * once a look after the quiet time, never failed; it completes when its
 * packet gets through. */
static void test_live_pong_keeps_waiting(void **state)
{
	struct world *w = *state;
	size_t i = send_held(w), pings = 0;
	int s;

	(void)i;
	for (s = 0; s < 30; s++)
		pings += live_step(w, DELIVER);
	assert_true(pings >= 25);
	assert_null(err_of(&w->a, tx1));
	assert_int_equal(conn(&w->a)->state, LFV_RDM_CONNECTED);
	pump(w);
	assert_got(&w->b, rx2, w->small_b, "held");
	assert_int_equal(oks(&w->a, tx1), 1);
	assert_int_equal(w->a.nerr + w->b.nerr, 0);
	assert_int_equal(drops(w), 0);
}

/* No answer (the peer's host is gone, or the link): after
 * DEAD_NS of quiet the connection fails, and the send
 * flushed from its QP says FI_ETIMEDOUT; the next send connects again. */
static void test_live_silence_fails(void **state)
{
	struct world *w = *state;
	static const char again[] = "again";
	const struct fi_cq_err_entry *e;
	size_t pings = 0;
	int steps;

	send_held(w);
	steps = live_until_failed(w, DROP_FROM_A, 20, &pings);
	/* Quiet from the first look on: DEAD later, a look or two. */
	assert_true(steps >= DEAD_NS / LFV_RDM_LIVE_LOOK_NS);
	assert_true(steps <= DEAD_NS / LFV_RDM_LIVE_LOOK_NS + 2);
	assert_true(pings >= 6);
	e = err_of(&w->a, tx1);
	assert_non_null(e);
	assert_int_equal(e->err, FI_ETIMEDOUT);
	assert_int_equal(oks(&w->a, tx1), 0);

	post_recv(&w->b, w->small_a, SMALL, rx1);
	send_to_peer(&w->a, again, sizeof(again), tx2);
	pump(w);
	assert_int_equal(oks(&w->a, tx2), 1);
	assert_true(oks(&w->b, rx1) + oks(&w->b, rx2) == 1);
}

/* FI_LFVERBS_RDM_LIVE_TIMEOUT 0: silence never fails a connection (a
 * peer may not read its CQ for long); it completes once its packet gets
 * through. */
static void test_live_timeout_zero(void **state)
{
	struct world *w = *state;
	size_t pings = 0;
	int steps;

	lfv_params.rdm_live_timeout = 0;
	send_held(w);
	steps = live_until_failed(w, DROP_FROM_A, 3 * LIVE_TIMEOUT_S, &pings);
	assert_int_equal(steps, 3 * LIVE_TIMEOUT_S + 1);
	assert_true(pings >= 2 * LIVE_TIMEOUT_S);
	assert_null(err_of(&w->a, tx1));
	pump(w);
	assert_got(&w->b, rx2, w->small_b, "held");
	assert_int_equal(oks(&w->a, tx1), 1);
}

/* The peer lives but no longer holds the connection (it failed it, or
 * took a new one from a restart of ours): its GONE fails ours at once,
 * with FI_ECONNRESET. */
static void test_live_gone_fails_at_once(void **state)
{
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	size_t pings = 0;
	int steps;

	send_held(w);
	conn(&w->b)->peer_inc ^= 1;	/* B's is another connection */
	steps = live_until_failed(w, DELIVER, 20, &pings);
	assert_true(steps <= LFV_RDM_LIVE_QUIET_NS / LFV_RDM_LIVE_LOOK_NS + 2);
	assert_int_equal(pings, 1);
	e = err_of(&w->a, tx1);
	assert_non_null(e);
	assert_int_equal(e->err, FI_ECONNRESET);
	conn(&w->b)->peer_inc ^= 1;
}

/* Answers that do not carry the nonce of A's question (a forger's, or
 * late ones) are dropped and counted: forged PONGs do not keep a dead
 * connection up, forged GONEs do not take a live one down. */
static void test_live_forged_answers(void **state)
{
	struct world *w = *state;
	const struct fi_cq_err_entry *e;
	size_t pings = 0;
	int steps;

	send_held(w);
	steps = live_until_failed(w, FORGE_ANSWERS, 20, &pings);
	assert_true(steps >= DEAD_NS / LFV_RDM_LIVE_LOOK_NS);
	e = err_of(&w->a, tx1);
	assert_non_null(e);
	assert_int_equal(e->err, FI_ETIMEDOUT);
	assert_true(drops_for(w, FI_LFVERBS_DROP_FORGED) >= 6);

	/* B's GONE, forged the same way, is no reason either. */
	w->a.nerr = 0;
	send_held(w);
	conn(&w->b)->peer_inc ^= 1;
	pings = 0;
	for (steps = 0; steps < 5; steps++)
		pings += live_step(w, FORGE_ANSWERS);
	assert_true(pings >= 3);
	assert_null(err_of(&w->a, tx1));
	conn(&w->b)->peer_inc ^= 1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_simultaneous_reqs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lost_rep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshake_takes_smaller_mtu,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_req, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rtu_gates_acceptor, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_with_rtu_in_flight,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_beside_on_one_cq,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_late_rep, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stale_fin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_read_fails_slow_reader,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restart_same_address,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unexpected_before_insert,
						setup_directed_unmet, teardown),
		cmocka_unit_test_setup_teardown(test_min_multi_recv_on_ep,
						setup_multi_recv, teardown),
		cmocka_unit_test_setup_teardown(test_connect_reading_tx_cq,
						setup_split_completion,
						teardown),
		cmocka_unit_test_setup_teardown(test_sar_both_orders,
						setup_sar, teardown),
		cmocka_unit_test_setup_teardown(test_sar_bad_offset,
						setup_sar, teardown),
		cmocka_unit_test_setup_teardown(test_sar_bad_total,
						setup_sar, teardown),
		cmocka_unit_test_setup_teardown(test_sar_segment_fails,
						setup_sar, teardown),
		cmocka_unit_test_setup_teardown(test_read_chunks,
						setup_read_max, teardown),
		cmocka_unit_test_setup_teardown(test_reads_per_connection,
						setup_read_max, teardown),
		cmocka_unit_test_setup_teardown(test_read_believed_after_write,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_reported_before_fin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rma_read_believed_after_write,
						setup_rma, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_by_write,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_write_replays,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_write_cts_too_long,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_write_wdone_short,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_write_fails,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_rndv_write_probe_due,
						setup_rndv_write, teardown),
		cmocka_unit_test_setup_teardown(test_live_pong_keeps_waiting,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_silence_fails,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_timeout_zero,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_gone_fails_at_once,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_forged_answers,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
