/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Least exposure (issue 14, item 3) over fake verbs: what a peer can reach
 * in the application's memory. An RDM domain's fi_mr_reg gets remote
 * access only as the application asked; the registrations lfverbs makes
 * for its own transfers (lfv_reg_get), cached or not, are local; a
 * rendezvous source without an application key that allows remote read
 * is registered for remote read for that send alone, and deregistered
 * when the send finishes (FIN) or is dropped (close). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_domain.h>

#include "fake_verbs.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_rdm.h"
#include "lfv_rdm_ep.h"
#include "lfv_device.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "lfv_mr.h"
#include "lfv_rdm_tx.h"
#include "../test_close.h"
#include "unit_fake.h"

#define PAGES 4

struct xp {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct lfv_domain *dom;
	char *buf;			/* PAGES pages, mapped */
	size_t len;
};

static int open_rdm(void **state, size_t mr_cache)
{
	struct fi_info *hints = fi_allocinfo();
	struct xp *x = calloc(1, sizeof(*x));

	unit_fake_device();
	hints->ep_attr->type = FI_EP_RDM;
	unit_fabric_open(hints, &x->info, &x->fabric);
	assert_int_equal(x->info->ep_attr->type, FI_EP_RDM);
	lfv_params.mr_cache = mr_cache;
	assert_int_equal(fi_domain(x->fabric, x->info, &x->domain, NULL), 0);
	lfv_params.mr_cache = 0;
	x->dom = lfv_container_of(x->domain, struct lfv_domain, domain_fid);
	x->len = PAGES * (size_t)sysconf(_SC_PAGESIZE);
	x->buf = mmap(NULL, x->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(x->buf != MAP_FAILED);
	memset(x->buf, 7, x->len);
	*state = x;
	return 0;
}

static int setup(void **state)
{
	return open_rdm(state, 0);
}

static int setup_cache(void **state)
{
	return open_rdm(state, 16);
}

static int teardown(void **state)
{
	struct xp *x = *state;

	test_close(x->domain, x->fabric);
	fi_freeinfo(x->info);
	munmap(x->buf, x->len);
	free(x);
	unit_fake_release();
	return 0;
}

/* The verbs access of an application region registered with access. */
static unsigned int app_access(struct xp *x, uint64_t access)
{
	struct fid_mr *mr;
	unsigned int got;

	assert_int_equal(fi_mr_reg(x->domain, x->buf, x->len, access, 0, 0, 0,
				   &mr, NULL), 0);
	got = fake_last_mr_access;
	assert_int_equal(fi_close(&mr->fid), 0);
	return got;
}

/* fi_mr_reg in an RDM domain: remote access only as asked (it used to
 * add remote read to every region, for rendezvous sends). */
static void test_app_mr(void **state)
{
	struct xp *x = *state;

	assert_int_equal(app_access(x, FI_SEND | FI_RECV),
			 IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(app_access(x, FI_READ | FI_WRITE),
			 IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(app_access(x, FI_REMOTE_READ),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_int_equal(app_access(x, FI_REMOTE_WRITE) &
			 IBV_ACCESS_REMOTE_READ, 0);
}

/* lfverbs' own registrations for local use (receives, read targets, RMA
 * sources), without the cache: local write, nothing remote. */
static void test_own_local(void **state)
{
	struct xp *x = *state;
	struct lfv_reg reg = { 0 };

	assert_int_equal(lfv_reg_get(x->dom, x->buf, x->len, LFV_REG_LOCAL,
				     &reg), 0);
	assert_int_equal(fake_last_mr_access, IBV_ACCESS_LOCAL_WRITE);
	assert_null(reg.ent);
	assert_int_equal(fake_open.mr, 1);
	lfv_reg_put(x->dom, &reg);
	assert_int_equal(fake_open.mr, 0);
}

/* With the cache on: its registrations, which outlive the transfers,
 * are local only; a remote-read registration never goes through it, and
 * is gone when put back while the cached one stays. */
static void test_cache_local(void **state)
{
	struct xp *x = *state;
	struct lfv_reg loc = { 0 }, rem = { 0 };

	if (!x->dom->mr_cache_on)
		skip();	/* no userfaultfd here: no cache */
	assert_int_equal(lfv_reg_get(x->dom, x->buf, x->len, LFV_REG_LOCAL,
				     &loc), 0);
	assert_non_null(loc.ent);
	assert_int_equal(fake_last_mr_access, IBV_ACCESS_LOCAL_WRITE);
	lfv_reg_put(x->dom, &loc);
	assert_int_equal(fake_open.mr, 1);	/* kept by the cache */

	assert_int_equal(lfv_reg_get(x->dom, x->buf, x->len,
				     LFV_REG_REMOTE_READ, &rem), 0);
	assert_null(rem.ent);
	assert_int_equal(fake_last_mr_access, IBV_ACCESS_REMOTE_READ);
	assert_int_equal(fake_open.mr, 2);
	lfv_reg_put(x->dom, &rem);
	assert_int_equal(fake_open.mr, 1);
}

/* An RDM endpoint with only what the rendezvous bookkeeping touches:
 * ntx transmit requests, no CQ, no counter, no lock. */
static struct lfv_rdm_ep *bare_ep(struct xp *x, size_t ntx)
{
	struct lfv_rdm_ep *ep = calloc(1, sizeof(*ep));

	assert_non_null(ep);
	ep->base.domain = x->dom;
	ep->reqs = calloc(ntx, sizeof(*ep->reqs));
	assert_non_null(ep->reqs);
	ep->ntx = ntx;
	lfv_list_init(&ep->tx_free);
	lfv_list_init(&ep->conns);
	lfv_list_init(&ep->aborted);
	lfv_list_init(&ep->reading);
	return ep;
}

static void bare_ep_free(struct lfv_rdm_ep *ep)
{
	free(ep->reqs);
	free(ep);
}

/* Request i waits for its FIN on c, holding src (as lfv_rdm_send leaves
 * it once the RTS completed). */
static void rndv_waiting(struct lfv_rdm_ep *ep, size_t i,
			 struct lfv_rdm_conn *c, const struct lfv_rdm_src *src)
{
	struct lfv_rdm_req *r = &ep->reqs[i];

	r->kind = LFV_RDM_K_TX;
	r->conn = c;
	r->gen = 1;
	r->rndv = true;
	r->rts_done = true;
	r->rndv_wait = 1;
	r->own_reg = src->own_reg;
	r->own_copy = src->own_copy;
	ep->rndv_out++;
}

static void fin(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		size_t i)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_FIN,
				 .tag = i | (1ULL << 32) };

	lfv_rdm_on_fin(ep, c, &h);
}

/* The source of a rendezvous send with no key, with a key of a region
 * without FI_REMOTE_READ, and of several iovs: a remote-read registration
 * of its own, not cached, deregistered when the FIN finishes the send. */
static void test_rndv_src_own(void **state)
{
	struct xp *x = *state;
	struct lfv_rdm_ep *ep = bare_ep(x, 3);
	struct lfv_rdm_conn conn = { 0 };
	struct fid_mr *mr;
	struct iovec iov[2] = { { x->buf, 100 }, { x->buf + 200, 50 } };
	void *desc[2];
	struct lfv_rdm_src src;
	size_t i;

	assert_int_equal(fi_mr_reg(x->domain, x->buf, x->len, FI_SEND, 0, 0, 0,
				   &mr, NULL), 0);
	desc[0] = desc[1] = fi_mr_desc(mr);
	for (i = 0; i < 3; i++) {
		struct lfv_rdm_send s = { .iov = iov, .count = i == 2 ? 2 : 1,
					  .desc = i == 1 ? desc : NULL };

		assert_int_equal(lfv_rdm_rndv_src(ep, &s, i == 2 ? 150 : 100,
						  &src), 0);
		assert_int_equal(fake_last_mr_access, IBV_ACCESS_REMOTE_READ);
		assert_non_null(src.own_reg.mr);
		assert_null(src.own_reg.ent);
		assert_int_equal(src.rkey, src.own_reg.mr->rkey);
		assert_true(src.rkey != mr->key);
		assert_int_equal(fake_open.mr, 2 + (int)i);
		rndv_waiting(ep, i, &conn, &src);
	}
	for (i = 0; i < 3; i++) {
		fin(ep, &conn, i);
		assert_int_equal(fake_open.mr, 3 - (int)i);
		assert_null(ep->reqs[i].own_reg.mr);
		assert_null(ep->reqs[i].own_copy);
	}
	assert_int_equal(ep->rndv_out, 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	bare_ep_free(ep);
}

/* With the cache on too: the source's registration is not the cache's,
 * and closing the endpoint (a send still waiting for its FIN) takes it
 * back. */
static void test_rndv_src_cache_close(void **state)
{
	struct xp *x = *state;
	struct lfv_rdm_conn conn = { 0 };
	struct iovec iov = { x->buf, x->len };
	struct lfv_rdm_send s = { .iov = &iov, .count = 1 };
	struct lfv_rdm_src src;
	struct lfv_rdm_ep *ep;

	if (!x->dom->mr_cache_on)
		skip();
	ep = bare_ep(x, 1);
	assert_int_equal(lfv_rdm_rndv_src(ep, &s, x->len, &src), 0);
	assert_null(src.own_reg.ent);
	assert_int_equal(fake_last_mr_access, IBV_ACCESS_REMOTE_READ);
	assert_int_equal(fake_open.mr, 1);
	rndv_waiting(ep, 0, &conn, &src);
	lfv_rdm_drop_all(ep);
	assert_int_equal(fake_open.mr, 0);
	assert_int_equal(ep->rndv_out, 0);
	bare_ep_free(ep);
}

static void test_rndv_src_own_cached(void **state)
{
	struct xp *x = *state;

	if (!x->dom->mr_cache_on)
		skip();
	test_rndv_src_own(state);
}

/* A region registered with FI_REMOTE_READ: its own key goes to the peer,
 * and nothing is registered for the send. */
static void test_rndv_src_app_key(void **state)
{
	struct xp *x = *state;
	struct lfv_rdm_ep *ep = bare_ep(x, 1);
	struct iovec iov = { x->buf, 100 };
	struct fid_mr *mr;
	void *desc;
	struct lfv_rdm_send s = { .iov = &iov, .count = 1, .desc = &desc };
	struct lfv_rdm_src src;

	assert_int_equal(fi_mr_reg(x->domain, x->buf, x->len,
				   FI_SEND | FI_REMOTE_READ, 0, 0, 0, &mr,
				   NULL), 0);
	desc = fi_mr_desc(mr);
	assert_int_equal(lfv_rdm_rndv_src(ep, &s, 100, &src), 0);
	assert_int_equal(src.rkey, mr->key);
	assert_null(src.own_reg.mr);
	assert_int_equal(fake_open.mr, 1);
	lfv_rdm_src_free(ep, &src.own_reg, src.own_copy);
	assert_int_equal(fi_close(&mr->fid), 0);
	bare_ep_free(ep);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TC(fn) cmocka_unit_test_setup_teardown(fn, setup_cache, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_app_mr),
		T(test_own_local),
		TC(test_cache_local),
		T(test_rndv_src_own),
		TC(test_rndv_src_own_cached),
		TC(test_rndv_src_cache_close),
		T(test_rndv_src_app_key),
	};

	return cmocka_run_group_tests_name("exposure", tests, NULL, NULL);
}
