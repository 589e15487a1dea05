/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scalable DGRAM endpoints through the real libfabric core on soft-RoCE:
 * two scalable endpoints in one process, every transmit context of one
 * sending to every receive context of the other through fi_rx_addr();
 * each receive context's CQ gets exactly its messages, with the sender
 * reported (FI_SOURCE) as the other endpoint's base address. An ordinary
 * endpoint reaches receive context 0 with the first 32 bytes of the name.
 * Bad input to every call.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include "func_common.h"
#include "func_pair.h"

#define NTX 3
#define NRX 4
#define RX_BITS 2
#define LEN 64
#define TIMEOUT_MS 5000
#define SEP_NAME_LEN 168	/* struct lfv_sep_name, fi_lfverbs(7) */

struct sep {
	struct fid_ep *sep;
	struct fid_ep *tx[NTX], *rx[NRX];
	struct fid_cq *tx_cq[NTX], *rx_cq[NRX];
	struct fid_mr *mr;
	uint8_t buf[NRX][NTX][LEN];	/* receive slots */
	uint8_t out[NTX][NRX][LEN];	/* send buffers */
	uint8_t name[256];
	size_t namelen;
	fi_addr_t addr;			/* in the shared AV */
};

struct bed {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct sep s[2];
};

static struct fi_info *sep_hints(void)
{
	struct fi_info *hints = func_hints(FI_EP_DGRAM);

	hints->caps = FI_MSG | FI_SOURCE;
	hints->ep_attr->tx_ctx_cnt = NTX;
	hints->ep_attr->rx_ctx_cnt = NRX;
	return hints;
}

static void cq_open(struct bed *b, struct fid_cq **cq)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_DATA };

	assert_int_equal(fi_cq_open(b->domain, &attr, cq, NULL), 0);
}

/* Context i of sep for dir (FI_TRANSMIT or FI_RECV), its own CQ bound. */
static void ctx_open(struct bed *b, struct fid_ep *sep, int i, uint64_t dir,
		     struct fid_ep **ctx, struct fid_cq **cq)
{
	assert_int_equal(dir == FI_TRANSMIT ?
			 fi_tx_context(sep, i, NULL, ctx, NULL) :
			 fi_rx_context(sep, i, NULL, ctx, NULL), 0);
	cq_open(b, cq);
	assert_int_equal(fi_ep_bind(*ctx, &(*cq)->fid, dir), 0);
}

static void sep_open(struct bed *b, struct sep *s)
{
	int i;

	assert_int_equal(fi_scalable_ep(b->domain, b->info, &s->sep, NULL), 0);
	assert_int_equal(fi_scalable_ep_bind(s->sep, &b->av->fid, 0), 0);
	for (i = 0; i < NTX; i++)
		ctx_open(b, s->sep, i, FI_TRANSMIT, &s->tx[i], &s->tx_cq[i]);
	for (i = 0; i < NRX; i++)
		ctx_open(b, s->sep, i, FI_RECV, &s->rx[i], &s->rx_cq[i]);
	/* Before enabling, the contexts have no QP numbers: no name. */
	s->namelen = sizeof(s->name);
	assert_int_equal(fi_getname(&s->sep->fid, s->name, &s->namelen),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_enable(s->sep), 0);
	s->namelen = sizeof(s->name);
	assert_int_equal(fi_getname(&s->sep->fid, s->name, &s->namelen), 0);
	assert_int_equal(s->namelen, SEP_NAME_LEN);
	assert_int_equal(fi_mr_reg(b->domain, s, sizeof(*s), FI_SEND | FI_RECV,
				   0, 0, 0, &s->mr, NULL), 0);
}

static void sep_close(struct sep *s)
{
	int i;

	/* Contexts first (fi_endpoint(3)). */
	assert_int_equal(fi_close(&s->sep->fid), -FI_EBUSY);
	for (i = 0; i < NTX; i++) {
		test_close(s->tx[i], s->tx_cq[i]);
	}
	for (i = 0; i < NRX; i++) {
		test_close(s->rx[i], s->rx_cq[i]);
	}
	test_close(s->mr, s->sep);
}

static void bed_open(struct bed *b)
{
	struct fi_info *hints = sep_hints();
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE,
				      .rx_ctx_bits = RX_BITS };
	int i;

	memset(b, 0, sizeof(*b));
	func_domain_open(hints, &b->info, &b->fabric, &b->domain);
	assert_int_equal(b->info->ep_attr->tx_ctx_cnt, NTX);
	assert_int_equal(b->info->ep_attr->rx_ctx_cnt, NRX);
	assert_true(b->info->domain_attr->max_ep_rx_ctx >= NRX);
	assert_int_equal(fi_av_open(b->domain, &av_attr, &b->av, NULL), 0);
	for (i = 0; i < 2; i++) {
		sep_open(b, &b->s[i]);
		assert_int_equal(fi_av_insert(b->av, b->s[i].name, 1,
					      &b->s[i].addr, 0, NULL), 1);
	}
}

static void bed_close(struct bed *b)
{
	sep_close(&b->s[0]);
	sep_close(&b->s[1]);
	test_close(b->av);
	func_domain_close(b->info, b->fabric, b->domain);
}

static void test_every_context_pair(void **state)
{
	struct fi_cq_data_entry e[NTX + NRX];
	struct bed b;
	struct sep *a, *z;
	fi_addr_t src[NTX];
	bool seen[NTX];
	int t, r, i;
	uint8_t *p;

	(void)state;
	bed_open(&b);
	a = &b.s[0];
	z = &b.s[1];
	for (r = 0; r < NRX; r++)
		for (t = 0; t < NTX; t++)
			assert_int_equal(fi_recv(z->rx[r], z->buf[r][t], LEN,
						 fi_mr_desc(z->mr), 0,
						 z->buf[r][t]), 0);
	for (t = 0; t < NTX; t++) {
		for (r = 0; r < NRX; r++) {
			p = a->out[t][r];
			memset(p, 0, LEN);
			p[0] = (uint8_t)t;
			p[1] = (uint8_t)r;
			p[2] = 0xa5;
			assert_int_equal(fi_send(a->tx[t], p, LEN,
						 fi_mr_desc(a->mr),
						 fi_rx_addr(z->addr, r, RX_BITS),
						 p), 0);
		}
	}
	/* Every transmit context completes its NRX sends. */
	for (t = 0; t < NTX; t++)
		assert_int_equal(func_cq_read_n(a->tx_cq[t], e, sizeof(e[0]),
						NRX, NULL, TIMEOUT_MS), NRX);
	/* Receive context r holds exactly the NTX messages sent to r. */
	for (r = 0; r < NRX; r++) {
		assert_int_equal(func_cq_read_n(z->rx_cq[r], e, sizeof(e[0]),
						NTX, src, TIMEOUT_MS), NTX);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < NTX; i++) {
			p = e[i].buf;
			assert_int_equal(e[i].len, LEN);
			assert_int_equal(p[1], r);
			assert_int_equal(p[2], 0xa5);
			assert_true(p[0] < NTX);
			assert_false(seen[p[0]]);
			seen[p[0]] = true;
			/* Any sending context maps back to the endpoint. */
			assert_int_equal(src[i], a->addr);
		}
		assert_int_equal(fi_cq_read(z->rx_cq[r], e, 1), -FI_EAGAIN);
	}
	bed_close(&b);
}

/* An ordinary endpoint: the first 32 bytes of the name are an
 * FI_ADDR_IB_UD name of receive context 0; and the scalable endpoint's
 * AV takes the ordinary name in a slot of its own size. */
static void test_ordinary_peer(void **state)
{
	struct fi_av_attr plain_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cq_data_entry e;
	uint8_t slot[SEP_NAME_LEN], name[64], buf[2][LEN];
	struct fid_av *plain_av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	struct fi_info *info;
	fi_addr_t to_sep, to_ep;
	size_t len = sizeof(name);
	struct bed b;

	(void)state;
	memset(buf, 0, sizeof(buf)); /* the device's writes are invisible
					* to valgrind */
	bed_open(&b);
	info = fi_dupinfo(b.info);
	info->ep_attr->tx_ctx_cnt = 1;
	info->ep_attr->rx_ctx_cnt = 1;
	assert_int_equal(fi_endpoint(b.domain, info, &ep, NULL), 0);
	assert_int_equal(fi_av_open(b.domain, &plain_attr, &plain_av, NULL), 0);
	assert_int_equal(fi_cq_open(b.domain, &cq_attr, &cq, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(ep, &plain_av->fid, 0), 0);
	assert_int_equal(fi_enable(ep), 0);
	assert_int_equal(fi_getname(&ep->fid, name, &len), 0);
	assert_int_equal(len, 32);
	assert_int_equal(fi_mr_reg(b.domain, buf, sizeof(buf),
				   FI_SEND | FI_RECV, 0, 0, 0, &mr, NULL), 0);

	/* ordinary -> receive context 0 of s[1] */
	assert_int_equal(fi_av_insert(plain_av, b.s[1].name, 1, &to_sep, 0,
				      NULL), 1);
	assert_int_equal(fi_recv(b.s[1].rx[0], b.s[1].buf[0][0], LEN,
				 fi_mr_desc(b.s[1].mr), 0, NULL), 0);
	memset(buf[0], 0x3c, LEN);
	assert_int_equal(fi_send(ep, buf[0], LEN, fi_mr_desc(mr), to_sep,
				 NULL), 0);
	assert_int_equal(func_cq_read_n(b.s[1].rx_cq[0], &e, sizeof(e), 1,
					NULL, TIMEOUT_MS), 1);
	assert_int_equal(b.s[1].buf[0][0][LEN - 1], 0x3c);

	/* transmit context 2 of s[0] -> ordinary endpoint */
	memset(slot, 0, sizeof(slot));
	memcpy(slot, name, 32);
	assert_int_equal(fi_av_insert(b.av, slot, 1, &to_ep, 0, NULL), 1);
	assert_int_equal(fi_recv(ep, buf[1], LEN, fi_mr_desc(mr), 0, NULL), 0);
	memset(b.s[0].out[2][0], 0x5a, LEN);
	assert_int_equal(fi_send(b.s[0].tx[2], b.s[0].out[2][0], LEN,
				 fi_mr_desc(b.s[0].mr), to_ep, NULL), 0);
	/* Context 1 of an ordinary endpoint does not exist. */
	assert_int_equal(fi_send(b.s[0].tx[2], b.s[0].out[2][0], LEN,
				 fi_mr_desc(b.s[0].mr),
				 fi_rx_addr(to_ep, 1, RX_BITS), NULL),
			 -FI_EINVAL);
	/* cq holds the send completion and the receive. */
	assert_int_equal(func_cq_read_n(cq, &e, sizeof(e), 1, NULL,
					TIMEOUT_MS), 1);
	assert_int_equal(func_cq_read_n(cq, &e, sizeof(e), 1, NULL,
					TIMEOUT_MS), 1);
	assert_int_equal(buf[1][0], 0x5a);
	assert_int_equal(buf[1][LEN - 1], 0x5a);
	assert_int_equal(func_cq_read_n(b.s[0].tx_cq[2], &e, sizeof(e), 1,
					NULL, TIMEOUT_MS), 1);

	test_close(ep, mr, cq, plain_av);
	fi_freeinfo(info);
	bed_close(&b);
}

/* fi_av_lookup gives the whole name back; straddr names the counts; a
 * name with a bad context count is refused. */
static void test_av_names(void **state)
{
	uint8_t out[SEP_NAME_LEN + 8], bad[SEP_NAME_LEN];
	char str[256];
	size_t len = sizeof(out), slen = sizeof(str);
	fi_addr_t fa;
	struct bed b;

	(void)state;
	bed_open(&b);
	assert_int_equal(fi_av_lookup(b.av, b.s[1].addr, out, &len), 0);
	assert_int_equal(len, SEP_NAME_LEN);
	assert_memory_equal(out, b.s[1].name, SEP_NAME_LEN);
	assert_non_null(fi_av_straddr(b.av, b.s[1].name, str, &slen));
	assert_non_null(strstr(str, "/rx4/tx3"));
	/* nrx (bytes 36-37 after the 32-byte base and the magic) = 0 */
	memcpy(bad, b.s[1].name, sizeof(bad));
	memset(bad + 36, 0, 2);
	assert_int_equal(fi_av_insert(b.av, bad, 1, &fa, 0, NULL), 0);
	assert_int_equal(fa, FI_ADDR_NOTAVAIL);
	bed_close(&b);
}

static void test_bad_input(void **state)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 17 };
	struct fi_tx_attr tx_attr;
	struct fi_rx_attr rx_attr;
	struct fid_ep *sep, *ctx, *ctx2, *ep;
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	uint8_t buf[8];

	(void)state;
	hints = sep_hints();
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &info), 0);
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), 0);

	/* More contexts than the domain allows. */
	hints->ep_attr->tx_ctx_cnt = info->domain_attr->max_ep_tx_ctx + 1;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &(struct fi_info *){ NULL }), -FI_ENODATA);
	fi_freeinfo(hints);
	info->ep_attr->tx_ctx_cnt = 17;
	assert_int_equal(fi_scalable_ep(domain, info, &sep, NULL), -FI_EINVAL);
	info->ep_attr->tx_ctx_cnt = NTX;
	/* fi_endpoint is one context each way. */
	assert_int_equal(fi_endpoint(domain, info, &ep, NULL), -FI_EINVAL);
	assert_int_equal(fi_av_open(domain, &av_attr, &av, NULL), -FI_EINVAL);
	av_attr.rx_ctx_bits = RX_BITS;
	assert_int_equal(fi_av_open(domain, &av_attr, &av, NULL), 0);

	assert_int_equal(fi_scalable_ep(domain, info, &sep, NULL), 0);
	assert_int_equal(fi_scalable_ep_bind(sep, &domain->fid, 0),
			 -FI_EINVAL);
	assert_int_equal(fi_enable(sep), -FI_ENOAV);
	assert_int_equal(fi_tx_context(sep, -1, NULL, &ctx, NULL), -FI_EINVAL);
	assert_int_equal(fi_tx_context(sep, NTX, NULL, &ctx, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_rx_context(sep, NRX, NULL, &ctx, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_tx_context(sep, 0, NULL, NULL, NULL), -FI_EINVAL);
	/* Context attributes beyond the endpoint's. */
	tx_attr = *info->tx_attr;
	tx_attr.iov_limit++;
	assert_int_equal(fi_tx_context(sep, 0, &tx_attr, &ctx, NULL),
			 -FI_EINVAL);
	tx_attr = *info->tx_attr;
	tx_attr.size = 8;
	assert_int_equal(fi_tx_context(sep, 0, &tx_attr, &ctx, NULL), 0);
	assert_int_equal(tx_attr.size, 8);
	assert_int_equal(fi_tx_context(sep, 0, NULL, &ctx2, NULL), -FI_EBUSY);
	rx_attr = *info->rx_attr;
	assert_int_equal(fi_rx_context(sep, 1, &rx_attr, &ctx2, NULL), 0);
	/* Each context does one direction; the endpoint itself none. */
	assert_int_equal(fi_recv(ctx, buf, sizeof(buf), NULL, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_send(ctx2, buf, sizeof(buf), NULL, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_send(sep, buf, sizeof(buf), NULL, 0, NULL),
			 -FI_ENOSYS);
	/* The AV binds once; the contexts take it. */
	assert_int_equal(fi_scalable_ep_bind(sep, &av->fid, 1), -FI_EBADFLAGS);
	assert_int_equal(fi_scalable_ep_bind(sep, &av->fid, 0), 0);
	assert_int_equal(fi_scalable_ep_bind(sep, &av->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(ctx, &av->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&av->fid), -FI_EBUSY);
	assert_int_equal(fi_cq_open(domain, &cq_attr, &cq, NULL), 0);
	assert_int_equal(fi_ep_bind(ctx, &cq->fid, FI_TRANSMIT), 0);
	assert_int_equal(fi_enable(sep), 0);
	assert_int_equal(fi_inject(ctx, buf, sizeof(buf),
				   fi_rx_addr(0, 1, RX_BITS)), -FI_EINVAL);
	assert_int_equal(fi_close(&sep->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ctx->fid), 0);
	/* A closed context's index can be opened again. */
	assert_int_equal(fi_tx_context(sep, 0, NULL, &ctx, NULL), 0);
	test_close(ctx, ctx2, sep, cq, av);

	/* MSG endpoints are not scalable. */
	fi_freeinfo(info);
	hints = func_hints(FI_EP_MSG);
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &info), 0);
	fi_freeinfo(hints);
	assert_int_equal(info->domain_attr->max_ep_tx_ctx, 1);
	assert_int_equal(fi_scalable_ep(domain, info, &sep, NULL),
			 -FI_ENOSYS);
	fi_freeinfo(info);
	test_close(domain, fabric);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_context_pair),
		cmocka_unit_test(test_ordinary_peer),
		cmocka_unit_test(test_av_names),
		cmocka_unit_test(test_bad_input),
	};

	func_require_device();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
