/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lfverbs as the owner of a peer CQ (fi_peer(3)): Debian's shm provider
 * opens its CQ with FI_PEER on the fid_peer_cq an lfverbs CQ exports, two
 * shm endpoints exchange messages, and every completion, send and receive,
 * is read from the lfverbs CQ.
 *
 * Debian 12's libfabric 1.17.0 shm rejects FI_PEER, so this skips there (the
 * probe below). The proof that needs no shm is func_peer_prov.c: the
 * same traffic, errors and waits with lfvpeer (tests/func/peer_prov), a
 * test provider plugin built by `make check`, as the peer, and lfverbs as a
 * peer of an lfvpeer CQ.
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
		cmocka_unit_test(test_shm_completes_into_lfverbs_cq),
	};

	func_require_device();
	if (!shm_can_be_peer()) {
		printf("1..0 # SKIP shm of libfabric %u.%u rejects FI_PEER CQs "
		       "(-FI_EINVAL: util_cq has peer support from 1.18)\n",
		       FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
		return 0;
	}
	return cmocka_run_group_tests_name("func_peer_cq", tests, NULL, NULL);
}
