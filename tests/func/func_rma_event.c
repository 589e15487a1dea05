/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_RMA_EVENT on MSG and RDM endpoints, through the real libfabric core on
 * soft-RoCE: RDMA writes, reads and writes with remote CQ data counted at
 * the target by the endpoint's FI_REMOTE_WRITE / FI_REMOTE_READ counters
 * and by the counters bound to the region (fi_mr_bind); a region without
 * a counter leaves the other's alone; an announcement that names no region
 * (a forged key) is dropped, not counted. Initiator and target are two
 * endpoints of one domain in this process. Every wait has a deadline.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

#include "fi_lfverbs.h"
#include "func_common.h"
#include "func_pair.h"

#define TIMEOUT_MS 20000
#define REGION 4096
#define MAX_SEEN 64
#define CQ_DATA 0x5eedULL
/* lfverbs' event keys (lfv_prov.h): the bit, and the slot above the rkey,
 * from which a forged key is made. */
#define KEY_EVENT (1ULL << 63)
#define KEY_SLOT(s) ((uint64_t)(s) << 32)
#define KEY_SLOT_MASK KEY_SLOT(0xffffffULL)

struct region {
	uint8_t *buf;
	struct fid_mr *mr;
	uint64_t key;
	struct fid_cntr *wcntr, *rcntr;	/* bound with fi_mr_bind, or NULL */
};

/* ep[0] initiates, ep[1] is the target. */
struct pair {
	enum fi_ep_type type;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *ep[2];
	struct fid_cq *cq[2];
	struct fid_eq *eq[2];
	struct fid_pep *pep;
	struct fid_av *av;
	fi_addr_t peer;			/* the target, in ep[0]'s AV (RDM) */
	struct fid_cntr *rw, *rr;	/* the target endpoint's */
	struct region loc;		/* the initiator's memory */
	struct region ev;		/* target memory with counters */
	struct region plain;		/* target memory without */
	struct fi_cq_data_entry seen[2][MAX_SEEN];
	size_t nseen[2];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct fi_info *ev_hints(enum fi_ep_type type, bool event)
{
	struct fi_info *hints = func_hints(type);

	hints->caps = FI_MSG | FI_RMA | FI_ATOMIC | (event ? FI_RMA_EVENT : 0);
	hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	return hints;
}

/* Keeps what both CQs hold (errors fail the test). */
static void pump(struct pair *p)
{
	struct fi_cq_data_entry e;
	int i;

	for (i = 0; i < 2; i++) {
		ssize_t ret = fi_cq_read(p->cq[i], &e, 1);

		if (ret == -FI_EAGAIN)
			continue;
		if (ret == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(p->cq[i], &err, 0);
			print_error("# CQ %d error %d (%s)\n", i, err.err,
				    fi_strerror(err.err));
		}
		assert_int_equal(ret, 1);
		assert_true(p->nseen[i] < MAX_SEEN);
		p->seen[i][p->nseen[i]++] = e;
	}
}

/* Takes the completion of ctx from CQ i, waiting for it. */
static struct fi_cq_data_entry take(struct pair *p, int i, void *ctx)
{
	int64_t end = now_ms() + TIMEOUT_MS;
	struct fi_cq_data_entry e;
	size_t k;

	for (;;) {
		for (k = 0; k < p->nseen[i]; k++) {
			if (p->seen[i][k].op_context != ctx)
				continue;
			e = p->seen[i][k];
			p->seen[i][k] = p->seen[i][--p->nseen[i]];
			return e;
		}
		assert_true(now_ms() < end);
		pump(p);
		sched_yield();
	}
}

/* Announcements the fabric dropped so far. */
static uint64_t dropped(struct pair *p)
{
	struct fi_lfverbs_drops d;

	assert_int_equal(fi_control(&p->fabric->fid, FI_LFVERBS_GET_DROPS,
				    &d), 0);
	return d.count[FI_LFVERBS_DROP_MALFORMED];
}

/* Waits (progressing both ends) until cntr reads want; asserts it does. */
static void cntr_is(struct pair *p, struct fid_cntr *cntr, uint64_t want)
{
	int64_t end = now_ms() + TIMEOUT_MS;

	while (fi_cntr_read(cntr) < want && now_ms() < end) {
		pump(p);
		sched_yield();
	}
	assert_int_equal(fi_cntr_read(cntr), want);
}

static void cntr_open(struct pair *p, struct fid_cntr **cntr)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };

	assert_int_equal(fi_cntr_open(p->domain, &attr, cntr, NULL), 0);
}

static void region_open(struct pair *p, struct region *r, uint64_t access,
			bool counted)
{
	r->buf = calloc(1, REGION);
	assert_non_null(r->buf);
	assert_int_equal(fi_mr_reg(p->domain, r->buf, REGION, access, 0, 0, 0,
				   &r->mr, NULL), 0);
	r->key = fi_mr_key(r->mr);
	if (!counted)
		return;
	cntr_open(p, &r->wcntr);
	cntr_open(p, &r->rcntr);
	assert_int_equal(fi_mr_bind(r->mr, &r->wcntr->fid, FI_REMOTE_WRITE),
			 0);
	assert_int_equal(fi_mr_bind(r->mr, &r->rcntr->fid, FI_REMOTE_READ), 0);
}

#define CLOSE(f) do { if (f) assert_int_equal(fi_close(&(f)->fid), 0); \
		      (f) = NULL; } while (0)

static void region_close(struct region *r)
{
	CLOSE(r->mr);
	CLOSE(r->wcntr);
	CLOSE(r->rcntr);
	free(r->buf);
}

static void ep_open(struct pair *p, int i, struct fi_info *info)
{
	assert_int_equal(fi_endpoint(p->domain, info, &p->ep[i], NULL), 0);
	assert_int_equal(fi_ep_bind(p->ep[i], &p->cq[i]->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	if (p->type == FI_EP_MSG)
		assert_int_equal(fi_ep_bind(p->ep[i], &p->eq[i]->fid, 0), 0);
	else
		assert_int_equal(fi_ep_bind(p->ep[i], &p->av->fid, 0), 0);
	if (i == 1) {
		assert_int_equal(fi_ep_bind(p->ep[1], &p->rw->fid,
					    FI_REMOTE_WRITE), 0);
		assert_int_equal(fi_ep_bind(p->ep[1], &p->rr->fid,
					    FI_REMOTE_READ), 0);
	}
	assert_int_equal(fi_enable(p->ep[i]), 0);
}

static uint32_t eq_event(struct fid_eq *eq, struct fi_eq_cm_entry *cm)
{
	uint8_t raw[sizeof(*cm) + 64];
	uint32_t event = 0;

	assert_int_equal(fi_eq_sread(eq, &event, raw, sizeof(raw), TIMEOUT_MS,
				     0), sizeof(*cm));
	memcpy(cm, raw, sizeof(*cm));
	return event;
}

/* MSG: ep[0] connects to a passive endpoint whose request makes ep[1]. */
static void msg_connect(struct pair *p)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *hints = ev_hints(FI_EP_MSG, true), *pinfo = NULL;
	struct fi_eq_cm_entry cm;
	struct sockaddr_in addr;
	size_t alen = sizeof(addr);

	assert_int_equal(fi_eq_open(p->fabric, &eq_attr, &p->eq[0], NULL), 0);
	assert_int_equal(fi_eq_open(p->fabric, &eq_attr, &p->eq[1], NULL), 0);
	assert_int_equal(fi_getinfo(FUNC_VERSION, func_ip(), "0", FI_SOURCE,
				    hints, &pinfo), 0);
	fi_freeinfo(hints);
	assert_int_equal(fi_passive_ep(p->fabric, pinfo, &p->pep, NULL), 0);
	fi_freeinfo(pinfo);
	assert_int_equal(fi_pep_bind(p->pep, &p->eq[1]->fid, 0), 0);
	assert_int_equal(fi_listen(p->pep), 0);
	assert_int_equal(fi_getname(&p->pep->fid, &addr, &alen), 0);
	ep_open(p, 0, p->info);
	assert_int_equal(fi_connect(p->ep[0], &addr, NULL, 0), 0);
	assert_int_equal(eq_event(p->eq[1], &cm), FI_CONNREQ);
	ep_open(p, 1, cm.info);
	fi_freeinfo(cm.info);
	assert_int_equal(fi_accept(p->ep[1], NULL, 0), 0);
	assert_int_equal(eq_event(p->eq[1], &cm), FI_CONNECTED);
	assert_int_equal(eq_event(p->eq[0], &cm), FI_CONNECTED);
}

/* RDM: both endpoints on one AV; ep[0] reaches ep[1] at p->peer. */
static void rdm_open(struct pair *p)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint8_t name[64];
	size_t len = sizeof(name);

	assert_int_equal(fi_av_open(p->domain, &av_attr, &p->av, NULL), 0);
	ep_open(p, 0, p->info);
	ep_open(p, 1, p->info);
	assert_int_equal(fi_getname(&p->ep[1]->fid, name, &len), 0);
	assert_int_equal(fi_av_insert(p->av, name, 1, &p->peer, 0, NULL), 1);
}

static int pair_setup(void **state, enum fi_ep_type type)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_info *hints = ev_hints(type, true);
	struct pair *p = calloc(1, sizeof(*p));
	int i;

	p->type = type;
	func_domain_open(hints, &p->info, &p->fabric, &p->domain);
	for (i = 0; i < 2; i++)
		assert_int_equal(fi_cq_open(p->domain, &cq_attr, &p->cq[i],
					    NULL), 0);
	cntr_open(p, &p->rw);
	cntr_open(p, &p->rr);
	region_open(p, &p->loc, FI_READ | FI_WRITE, false);
	region_open(p, &p->ev, FI_REMOTE_READ | FI_REMOTE_WRITE, true);
	region_open(p, &p->plain, FI_REMOTE_READ | FI_REMOTE_WRITE, false);
	if (type == FI_EP_MSG)
		msg_connect(p);
	else
		rdm_open(p);
	*state = p;
	return 0;
}

static int msg_setup(void **state)
{
	return pair_setup(state, FI_EP_MSG);
}

static int rdm_setup(void **state)
{
	return pair_setup(state, FI_EP_RDM);
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	CLOSE(p->ep[0]);
	CLOSE(p->ep[1]);
	CLOSE(p->pep);
	CLOSE(p->av);
	CLOSE(p->eq[0]);
	CLOSE(p->eq[1]);
	CLOSE(p->cq[0]);
	CLOSE(p->cq[1]);
	region_close(&p->loc);
	region_close(&p->ev);
	region_close(&p->plain);
	CLOSE(p->rw);
	CLOSE(p->rr);
	CLOSE(p->domain);
	CLOSE(p->fabric);
	fi_freeinfo(p->info);
	free(p);
	return 0;
}

static uint64_t at(const struct region *r, size_t off)
{
	return (uint64_t)(uintptr_t)(r->buf + off);
}

static void write_to(struct pair *p, const struct region *r, uint64_t key,
		     size_t off, size_t len, void *ctx)
{
	assert_int_equal(fi_write(p->ep[0], p->loc.buf, len,
				  fi_mr_desc(p->loc.mr), p->peer, at(r, off),
				  key, ctx), 0);
	assert_int_equal(take(p, 0, ctx).flags, FI_RMA | FI_WRITE);
}

/* ---- tests ---------------------------------------------------------------- */

/* FI_RMA_EVENT only when asked for, on MSG and RDM; keys need 8 bytes. */
static void test_getinfo(void **state)
{
	enum fi_ep_type types[] = { FI_EP_MSG, FI_EP_RDM };
	struct fi_info *hints, *info;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		hints = ev_hints(types[i], false);
		assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
					    &info), 0);
		assert_false(info->caps & FI_RMA_EVENT);
		assert_int_equal(info->domain_attr->mr_key_size, 4);
		fi_freeinfo(info);
		hints->caps |= FI_RMA_EVENT;
		assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
					    &info), 0);
		assert_true(info->caps & FI_RMA_EVENT);
		assert_true(info->rx_attr->caps & FI_RMA_EVENT);
		assert_int_equal(info->domain_attr->mr_key_size, 8);
		fi_freeinfo(info);
		fi_freeinfo(hints);
	}
}

/* Writes, reads and a write with CQ data, each counted once by the
 * target's endpoint and region counters; the data is where it belongs. */
static void test_counted(void **state)
{
	struct pair *p = *state;
	void *desc = fi_mr_desc(p->loc.mr);
	struct fi_cq_data_entry e;
	int ctx[6];
	size_t i;

	for (i = 0; i < REGION; i++)
		p->loc.buf[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < 3; i++)
		write_to(p, &p->ev, p->ev.key, i * 512, 100 + i, &ctx[i]);
	for (i = 3; i < 5; i++) {
		assert_int_equal(fi_read(p->ep[0], p->loc.buf + 2048, 64, desc,
					 p->peer, at(&p->ev, 0), p->ev.key,
					 &ctx[i]), 0);
		assert_int_equal(take(p, 0, &ctx[i]).flags, FI_RMA | FI_READ);
	}
	assert_int_equal(fi_writedata(p->ep[0], p->loc.buf, 32, desc, CQ_DATA,
				      p->peer, at(&p->ev, 3072), p->ev.key,
				      &ctx[5]), 0);
	assert_int_equal(take(p, 0, &ctx[5]).flags, FI_RMA | FI_WRITE);
	cntr_is(p, p->ev.wcntr, 4);
	cntr_is(p, p->rw, 4);
	cntr_is(p, p->ev.rcntr, 2);
	cntr_is(p, p->rr, 2);
	/* The remote CQ data, reported once. */
	e = take(p, 1, NULL);
	assert_int_equal(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	assert_int_equal(e.data, CQ_DATA);
	assert_int_equal(memcmp(p->ev.buf + 1024, p->loc.buf, 102), 0);
	assert_int_equal(memcmp(p->ev.buf + 3072, p->loc.buf, 32), 0);
	assert_int_equal(memcmp(p->loc.buf + 2048, p->ev.buf, 64), 0);
	assert_int_equal(p->nseen[1], 0);
}

/* A base atomic counts as a remote write, a fetching one as a read
 * (fi_endpoint(3)); both do their work. */
static void test_atomics(void **state)
{
	struct pair *p = *state;
	void *desc = fi_mr_desc(p->loc.mr);
	uint64_t *target = (uint64_t *)(void *)(p->ev.buf + 256);
	uint64_t *opnd = (uint64_t *)(void *)p->loc.buf;
	uint64_t w = fi_cntr_read(p->ev.wcntr), r = fi_cntr_read(p->ev.rcntr);
	uint64_t ew = fi_cntr_read(p->rw), er = fi_cntr_read(p->rr);
	int ctx[2];

	*target = 5;
	opnd[0] = 3;
	opnd[1] = 0;
	assert_int_equal(fi_atomic(p->ep[0], opnd, 1, desc, p->peer,
				   at(&p->ev, 256), p->ev.key, FI_UINT64,
				   FI_SUM, &ctx[0]), 0);
	assert_int_equal(take(p, 0, &ctx[0]).flags, FI_ATOMIC | FI_WRITE);
	assert_int_equal(fi_fetch_atomic(p->ep[0], opnd, 1, desc, &opnd[1],
					 desc, p->peer, at(&p->ev, 256),
					 p->ev.key, FI_UINT64, FI_ATOMIC_READ,
					 &ctx[1]), 0);
	assert_int_equal(take(p, 0, &ctx[1]).flags, FI_ATOMIC | FI_READ);
	assert_int_equal(opnd[1], 8);
	cntr_is(p, p->ev.wcntr, w + 1);
	cntr_is(p, p->rw, ew + 1);
	cntr_is(p, p->ev.rcntr, r + 1);
	cntr_is(p, p->rr, er + 1);
}

/* A region peers may only read: a read of it is counted too (MSG's
 * zero-byte note writes nothing, so it needs no write access). */
static void test_read_only(void **state)
{
	struct pair *p = *state;
	struct region ro = { 0 };
	uint64_t er = fi_cntr_read(p->rr);
	int ctx;

	region_open(p, &ro, FI_REMOTE_READ, true);
	memset(ro.buf, 0x5a, 64);
	assert_int_equal(fi_read(p->ep[0], p->loc.buf, 64,
				 fi_mr_desc(p->loc.mr), p->peer, at(&ro, 0),
				 ro.key, &ctx), 0);
	assert_int_equal(take(p, 0, &ctx).flags, FI_RMA | FI_READ);
	cntr_is(p, ro.rcntr, 1);
	cntr_is(p, p->rr, er + 1);
	assert_int_equal(fi_cntr_read(ro.wcntr), 0);
	assert_int_equal(p->loc.buf[63], 0x5a);
	region_close(&ro);
}

/* A region without counters: the endpoint counts, the other region's
 * counters do not. */
static void test_plain_region(void **state)
{
	struct pair *p = *state;
	uint64_t w = fi_cntr_read(p->ev.wcntr), ep = fi_cntr_read(p->rw);
	uint64_t r = fi_cntr_read(p->ev.rcntr);
	int ctx;

	write_to(p, &p->plain, p->plain.key, 0, 256, &ctx);
	cntr_is(p, p->rw, ep + 1);
	assert_int_equal(fi_cntr_read(p->ev.wcntr), w);
	assert_int_equal(fi_cntr_read(p->ev.rcntr), r);
}

/* A key whose slot names no region: the write lands (its rkey is good),
 * the announcement is dropped and counted as such; the next good one is
 * counted. RDM also checks the rkey and the range against the region a
 * slot names. */
static void test_forged_key(void **state)
{
	struct pair *p = *state;
	uint64_t w = fi_cntr_read(p->ev.wcntr), ep = fi_cntr_read(p->rw);
	uint64_t drops = dropped(p);
	uint64_t forged = (p->ev.key & ~KEY_SLOT_MASK) | KEY_SLOT(4000);
	uint64_t other = (p->ev.key & ~KEY_SLOT_MASK) |
			 (p->plain.key & KEY_SLOT_MASK);
	int ctx[3];

	assert_true(p->ev.key & KEY_EVENT);
	p->loc.buf[0] = 0x42;
	write_to(p, &p->ev, forged, 8, 1, &ctx[0]);
	if (p->type == FI_EP_RDM)
		write_to(p, &p->ev, other, 8, 1, &ctx[1]);
	write_to(p, &p->ev, p->ev.key, 16, 1, &ctx[2]);
	cntr_is(p, p->rw, ep + 1);
	cntr_is(p, p->ev.wcntr, w + 1);
	assert_int_equal(dropped(p), drops + (p->type == FI_EP_RDM ? 2 : 1));
	assert_int_equal(p->ev.buf[8], 0x42);
	assert_int_equal(p->nseen[1], 0);
}

#define MSG(fn) cmocka_unit_test_prestate_setup_teardown( \
	fn, msg_setup, pair_teardown, NULL)
#define RDM(fn) cmocka_unit_test_prestate_setup_teardown( \
	fn, rdm_setup, pair_teardown, NULL)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getinfo),
		MSG(test_counted),
		MSG(test_atomics),
		MSG(test_read_only),
		MSG(test_plain_region),
		MSG(test_forged_key),
		RDM(test_counted),
		RDM(test_atomics),
		RDM(test_read_only),
		RDM(test_plain_region),
		RDM(test_forged_key),
	};

	func_require_device();
	return cmocka_run_group_tests_name("func_rma_event", tests, NULL,
					   NULL);
}
