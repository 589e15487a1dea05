/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lfverbs as the owner of a peer CQ (fi_peer(3)): Debian's shm provider
 * opens its CQ with FI_PEER on the fid_peer_cq an lfverbs CQ exports, two
 * shm endpoints exchange messages, and every completion, send and receive,
 * is read from the lfverbs CQ.
 *
 * Debian 12's libfabric 1.17.0 shm rejects FI_PEER CQs, so that case is
 * left out there (the probe below). The proof that needs no shm is
 * func_peer_prov.c: the same traffic, errors and waits with lfvpeer
 * (tests/func/peer_prov), a test provider plugin built by `make check`, as
 * the peer, and lfverbs as a peer of an lfvpeer CQ.
 *
 * shm of every version, Debian 12's included, takes an lfverbs SRX as its
 * peer SRX: tagged messages sent through shm land in receives posted on
 * the lfverbs SRX, posted before or after they arrive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>
#include "lfv_fi_compat.h"	/* the peer interfaces of this libfabric */

#include "func_common.h"
#include "func_owner.h"

#define MSGS 64
#define MSG_LEN 256

struct shm {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;	/* the peer CQ: writes into the owner's */
	struct fid_av *av;
	struct fid_ep *ep[2];
	fi_addr_t addr[2];
};

/* false when shm cannot be a peer: fi_peer(3) has providers without peer
 * CQ support fail fi_cq_open with -FI_EINVAL. Debian 12's libfabric 1.17.0
 * is such a provider (util_cq gained FI_PEER in 1.18). */
static bool shm_open(struct shm *s, struct fid_peer_cq *owner)
{
	struct fi_peer_cq_context peer_ctx = { .size = sizeof(peer_ctx),
					       .cq = owner };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
				      .flags = FI_PEER };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints = fi_allocinfo();
	char name[2][256];
	size_t len;
	int i, ret;

	hints->fabric_attr->prov_name = strdup("shm");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	func_domain_open(hints, &s->info, &s->fabric, &s->domain);
	ret = fi_cq_open(s->domain, &cq_attr, &s->cq, &peer_ctx);
	if (ret == -FI_EINVAL) {
		func_domain_close(s->info, s->fabric, s->domain);
		return false;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(fi_av_open(s->domain, &av_attr, &s->av, NULL), 0);
	for (i = 0; i < 2; i++) {
		len = sizeof(name[i]);
		s->ep[i] = peer_ep_open(s->domain, s->info, s->cq, s->av,
					name[i], &len);
		assert_int_equal(fi_av_insert(s->av, name[i], 1, &s->addr[i], 0,
					      NULL), 1);
	}
	return true;
}

static void shm_close(struct shm *s)
{
	test_close(s->ep[0], s->ep[1], s->av, s->cq);
	func_domain_close(s->info, s->fabric, s->domain);
}

static void test_shm_completes_into_lfverbs_cq(void **state)
{
	static char send_buf[MSGS][MSG_LEN], recv_buf[MSGS][MSG_LEN];
	struct fi_context send_ctx[MSGS], recv_ctx[MSGS];
	struct fi_cq_data_entry e[16];
	int sends = 0, recvs = 0, posted = 0, spins = 0, i;
	struct owner o = { 0 };
	struct shm s = { 0 };
	ssize_t n, ret;

	(void)state;
	owner_open(&o, FI_WAIT_NONE);
	assert_true(shm_open(&s, o.peer));
	for (i = 0; i < MSGS; i++) {
		memset(send_buf[i], 'a' + i % 26, MSG_LEN);
		assert_int_equal(fi_recv(s.ep[1], recv_buf[i], MSG_LEN, NULL,
					 s.addr[0], &recv_ctx[i]), 0);
	}
	while ((sends < MSGS || recvs < MSGS) && spins++ < 1000000) {
		if (posted < MSGS) {
			ret = fi_send(s.ep[0], send_buf[posted], MSG_LEN, NULL,
				      s.addr[1], &send_ctx[posted]);
			if (ret == 0)
				posted++;
			else
				assert_int_equal(ret, -FI_EAGAIN);
		}
		/* fi_peer(3): the owner drives the peer's progress. */
		fi_cq_read(s.cq, NULL, 0);
		n = fi_cq_read(o.cq, e, 16);
		if (n == -FI_EAGAIN)
			continue;
		assert_true(n > 0);
		for (i = 0; i < n; i++) {
			if (e[i].flags & FI_SEND) {
				assert_ptr_equal(e[i].op_context,
						 &send_ctx[sends]);
				sends++;
			} else {
				assert_true(e[i].flags & FI_RECV);
				assert_ptr_equal(e[i].op_context,
						 &recv_ctx[recvs]);
				assert_int_equal(e[i].len, MSG_LEN);
				recvs++;
			}
		}
	}
	assert_int_equal(sends, MSGS);
	assert_int_equal(recvs, MSGS);
	for (i = 0; i < MSGS; i++)
		assert_memory_equal(recv_buf[i], send_buf[i], MSG_LEN);
	/* shm's CQ is a peer: its own reads are not where entries are. */
	assert_int_equal(fi_cq_read(o.cq, e, 16), -FI_EAGAIN);
	shm_close(&s);
	owner_close(&o);
}

#define SRX_MSGS 16
#define SRX_BIG 40000	/* past shm's inline sizes: its other protocols */

static size_t srx_len(int i)
{
	return i % 2 ? SRX_BIG : MSG_LEN;
}

/* shm with its own CQ (Debian 12's has no peer CQ) and, on ep[1], the
 * lfverbs SRX ps as its peer SRX: fi_srx_context(FI_PEER) on shm's domain,
 * then the bind. shm 2.x hands back its side of the SRX to bind; shm
 * before 2.0 binds ours itself (1.17 uses it as it is, 1.18-1.22 copy it:
 * lfverbs' owner ops find the SRX either way). */
static void shm_srx_open(struct shm *s, struct fid_peer_srx *ps,
			 struct fid_ep **rx_ep)
{
	struct fi_peer_srx_context ctx = { .size = sizeof(ctx), .srx = ps };
	struct fi_rx_attr rx_attr = { .op_flags = FI_PEER };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *hints = fi_allocinfo();
	char name[2][256];
	size_t len = sizeof(name[0]);
	int i;

	hints->fabric_attr->prov_name = strdup("shm");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	func_domain_open(hints, &s->info, &s->fabric, &s->domain);
	assert_int_equal(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL), 0);
	assert_int_equal(fi_av_open(s->domain, &av_attr, &s->av, NULL), 0);
	s->ep[0] = peer_ep_open(s->domain, s->info, s->cq, s->av, name[0],
				&len);
	*rx_ep = NULL;
	assert_int_equal(fi_srx_context(s->domain, &rx_attr, rx_ep, &ctx), 0);
	assert_int_equal(fi_endpoint(s->domain, s->info, &s->ep[1], NULL), 0);
	assert_int_equal(fi_ep_bind(s->ep[1], *rx_ep ? &(*rx_ep)->fid :
					      &ps->ep_fid.fid, 0), 0);
	assert_int_equal(fi_ep_bind(s->ep[1], &s->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(s->ep[1], &s->av->fid, 0), 0);
	assert_int_equal(fi_enable(s->ep[1]), 0);
	len = sizeof(name[1]);
	assert_int_equal(fi_getname(&s->ep[1]->fid, name[1], &len), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(fi_av_insert(s->av, name[i], 1, &s->addr[i], 0,
					      NULL), 1);
}

/* Reads shm's CQ (which progresses both endpoints) until want receives
 * and sends have completed; receives must complete in posting order with
 * the contexts posted on the lfverbs SRX, tags base + i. */
static void shm_srx_drain(struct shm *s, int want_recvs, int want_sends,
			  struct fi_context *rctx, uint64_t base)
{
	struct fi_cq_tagged_entry e[8];
	int recvs = 0, sends = 0, spins = 0, i;
	ssize_t n;

	while ((recvs < want_recvs || sends < want_sends) &&
	       spins++ < 2000000) {
		n = fi_cq_read(s->cq, e, 8);
		if (n == -FI_EAGAIN)
			continue;
		assert_true(n > 0);
		for (i = 0; i < n; i++) {
			if (e[i].flags & FI_SEND) {
				sends++;
				continue;
			}
			assert_true(e[i].flags & FI_RECV);
			assert_ptr_equal(e[i].op_context, &rctx[recvs]);
			assert_int_equal(e[i].tag, base + recvs);
			assert_int_equal(e[i].len, srx_len(recvs));
			recvs++;
		}
	}
	assert_int_equal(recvs, want_recvs);
	assert_int_equal(sends, want_sends);
}

/* Reads shm's CQ reads times, long enough for sent messages to reach the
 * receiving endpoint, which queues them with the owner. Returns the send
 * completions seen: shm completes a small send at once, a large one (1.x:
 * a CMA read by the receiver) only once its receive is posted. */
static int shm_srx_progress(struct shm *s, int reads)
{
	struct fi_cq_tagged_entry e[8];
	int sends = 0, i;
	ssize_t n;

	while (reads-- > 0) {
		n = fi_cq_read(s->cq, e, 8);
		if (n == -FI_EAGAIN)
			continue;
		assert_true(n > 0);
		for (i = 0; i < n; i++)
			assert_true(e[i].flags & FI_SEND);
		sends += (int)n;
	}
	return sends;
}

static void shm_srx_send_all(struct shm *s, char (*buf)[SRX_BIG],
			     uint64_t base)
{
	int i;

	for (i = 0; i < SRX_MSGS; i++) {
		memset(buf[i], (int)(base + i), srx_len(i));
		while (fi_tsend(s->ep[0], buf[i], srx_len(i), NULL, s->addr[1],
				base + i, NULL) == -FI_EAGAIN)
			fi_cq_read(s->cq, NULL, 0);
	}
}

static void shm_srx_post_all(struct fid_ep *srx, char (*buf)[SRX_BIG],
			     struct fi_context *rctx, uint64_t base)
{
	int i;

	for (i = 0; i < SRX_MSGS; i++) {
		memset(buf[i], 0, SRX_BIG);
		assert_int_equal(fi_trecv(srx, buf[i], SRX_BIG, NULL,
					  FI_ADDR_UNSPEC, base + i, 0,
					  &rctx[i]), 0);
	}
}

static void shm_srx_check(char (*sbuf)[SRX_BIG], char (*rbuf)[SRX_BIG])
{
	int i;

	for (i = 0; i < SRX_MSGS; i++)
		assert_memory_equal(rbuf[i], sbuf[i], srx_len(i));
}

static void test_shm_takes_lfverbs_srx(void **state)
{
	static char sbuf[SRX_MSGS][SRX_BIG], rbuf[SRX_MSGS][SRX_BIG];
	struct fi_rx_attr attr = { .iov_limit = 4 };
	struct fi_context rctx[SRX_MSGS];
	struct fi_info *hints = func_hints(FI_EP_RDM);
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_ep *srx, *rx_ep;
	struct fid *peer_fid = NULL;
	struct fid_peer_srx *ps;
	struct shm s = { 0 };
	int early;

	(void)state;
	hints->caps = FI_TAGGED | FI_MSG;
	func_domain_open(hints, &info, &fabric, &domain);
	assert_int_equal(fi_srx_context(domain, &attr, &srx, NULL), 0);
	assert_int_equal(fi_export_fid(&srx->fid, 0, &peer_fid, NULL), 0);
	ps = container_of(peer_fid, struct fid_peer_srx, ep_fid.fid);
	shm_srx_open(&s, ps, &rx_ep);

	/* Receives first: shm finds each through the owner's get_tag. */
	shm_srx_post_all(srx, rbuf, rctx, 100);
	shm_srx_send_all(&s, sbuf, 100);
	shm_srx_drain(&s, SRX_MSGS, SRX_MSGS, rctx, 100);
	shm_srx_check(sbuf, rbuf);

	/* Messages first: shm queues them with the owner; each receive
	 * posted on the lfverbs SRX starts one through shm's peer ops. */
	shm_srx_send_all(&s, sbuf, 200);
	early = shm_srx_progress(&s, 20000);
	shm_srx_post_all(srx, rbuf, rctx, 200);
	shm_srx_drain(&s, SRX_MSGS, SRX_MSGS - early, rctx, 200);
	shm_srx_check(sbuf, rbuf);

	test_close(s.ep[0], s.ep[1], rx_ep, s.av, s.cq, peer_fid, srx);
	func_domain_close(s.info, s.fabric, s.domain);
	func_domain_close(info, fabric, domain);
}

/* Can this libfabric's shm be a peer at all? (cmocka 1.1.5 reports skipped
 * cases as "not ok", so the whole program skips instead.) */
static bool shm_can_be_peer(void)
{
	struct owner o = { 0 };
	struct shm s = { 0 };
	bool ok;

	owner_open(&o, FI_WAIT_NONE);
	ok = shm_open(&s, o.peer);
	if (ok)
		shm_close(&s);
	owner_close(&o);
	return ok;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shm_takes_lfverbs_srx),
		cmocka_unit_test(test_shm_completes_into_lfverbs_cq),
	};
	size_t n = 2;

	func_require_device();
	if (!shm_can_be_peer()) {
		printf("# shm of libfabric %u.%u rejects FI_PEER CQs "
		       "(-FI_EINVAL: util_cq has peer support from 1.18): "
		       "its peer CQ case is left out\n",
		       FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
		n = 1;
	}
	return _cmocka_run_group_tests("func_peer_cq", tests, n, NULL, NULL);
}
