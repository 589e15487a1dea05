/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_msg: 64 B ping-pong latency, 64 B message rate (window 64) and 1 MiB
 * bandwidth over FI_EP_MSG, for any libfabric provider (lfverbs, verbs),
 * through the public API only. One connection: run a server and a client.
 * Not a test: see tests/bench/README.md and run-endpoints.sh.
 *
 *   bench_msg -p PROV -s [-a ADDR]            server (prints "listening")
 *   bench_msg -p PROV -c [-a ADDR] [--lat N] [--rate M] [--bw B]
 *   bench_msg -p PROV -c --callgrind N,K      instruction-count segments
 *
 * Busy polling with fi_cq_read, one CQ (FI_CQ_FORMAT_CONTEXT) for sends and
 * receives, FI_THREAD_DOMAIN when the provider accepts it, registered
 * buffers with their descriptors when mr_mode has FI_MR_LOCAL, fi_send /
 * fi_recv (no inject), every send completing.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define BENCH_PROG "bench_msg"
#include "bench_fi.h"

struct tp {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	void *desc;
	struct fi_context2 *ctx;	/* one per id */
};

static inline void tp_send(struct tp *t, void *buf, size_t len, uint32_t id)
{
	ssize_t ret = fi_send(t->ep, buf, len, t->desc, 0, &t->ctx[id]);

	if (ret)
		tp_fail("fi_send", ret);
}

static inline void tp_recv(struct tp *t, void *buf, size_t len, uint32_t id)
{
	ssize_t ret = fi_recv(t->ep, buf, len, t->desc, 0, &t->ctx[id]);

	if (ret)
		tp_fail("fi_recv", ret);
}

static inline int tp_poll(struct tp *t, uint32_t *ids, int max)
{
	struct fi_cq_entry e[16];
	ssize_t n = fi_cq_read(t->cq, e, (size_t)max);
	ssize_t i;

	if (n > 0) {
		for (i = 0; i < n; i++)
			ids[i] = (uint32_t)((struct fi_context2 *)e[i].op_context -
					    t->ctx);
		return (int)n;
	}
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL)
		tp_cq_error(t->cq);
	tp_fail("fi_cq_read", n);
	return 0;
}

#include "bench_ep.h"

static struct fi_info *tp_hints(const struct bench_opts *o, bool thread_domain)
{
	struct fi_info *h = tp_hints_common(o->prov, FI_EP_MSG, FI_MSG,
					    thread_domain, BENCH_TXQ,
					    BENCH_RXQ);

	if (!h)
		bench_die("fi_allocinfo");
	if (o->dev)
		h->domain_attr->name = strdup(o->dev);
	return h;
}

static struct fi_info *tp_getinfo(const struct bench_opts *o)
{
	uint64_t flags = o->server ? FI_SOURCE : 0;
	struct fi_info *h, *info = NULL;
	int ret;

	h = tp_hints(o, true);
	ret = fi_getinfo(FI_VERSION(1, 17), o->addr, o->port, flags, h, &info);
	fi_freeinfo(h);
	if (ret == -FI_ENODATA) {
		h = tp_hints(o, false);
		ret = fi_getinfo(FI_VERSION(1, 17), o->addr, o->port, flags, h,
				 &info);
		fi_freeinfo(h);
	}
	if (ret)
		tp_fail("fi_getinfo", ret);
	return info;
}

static uint32_t tp_eq_wait(struct tp *t, void *entry, size_t len)
{
	uint32_t event;
	ssize_t ret = fi_eq_sread(t->eq, &event, entry, len, 60000, 0);

	if (ret == -FI_EAVAIL) {
		struct fi_eq_err_entry err = { 0 };

		fi_eq_readerr(t->eq, &err, 0);
		fprintf(stderr, "bench_msg: connection: %s\n",
			fi_strerror(err.err));
		exit(1);
	}
	if (ret < 0)
		tp_fail("fi_eq_sread", ret);
	return event;
}

/* Domain, endpoint, CQ, registered region; the receives posted. */
static void tp_open_ep(struct tp *t, struct fi_info *info, struct bench *b,
		       const struct bench_opts *o)
{
	char *region;
	int ret;

	ret = fi_domain(t->fabric, info, &t->domain, NULL);
	if (ret)
		tp_fail("fi_domain", ret);
	tp_cq_open(t->domain, FI_CQ_FORMAT_CONTEXT, BENCH_CQ_SIZE, &t->cq);
	tp_ep_start(t->domain, info, &t->eq->fid, "fi_ep_bind(eq)", t->cq,
		    &t->ep);

	if (posix_memalign((void **)&region, 4096, BENCH_REGION))
		bench_die("out of memory");
	memset(region, 0, BENCH_REGION);
	t->desc = tp_reg(t->domain, info, region, BENCH_REGION, &t->mr);
	t->ctx = calloc(BENCH_TXQ + BENCH_RXQ, sizeof(*t->ctx));
	if (!t->ctx)
		bench_die("out of memory");

	b->t = t;
	b->impl = o->prov;
	b->tx_base = region;
	b->rx_base = region + BENCH_TX_REGION;
	bench_pre_connect(b, o);
	if (!o->server)
		printf("info impl=%s fabric=%s domain=%s threading=%s "
		       "mr_local=%d inject_size=%zu\n", o->prov,
		       info->fabric_attr->name, info->domain_attr->name,
		       info->domain_attr->threading == FI_THREAD_DOMAIN ?
		       "domain" : "other", t->desc != NULL,
		       info->tx_attr->inject_size);
}

int main(int argc, char **argv)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry cm;
	struct bench_opts o;
	struct bench b = { 0 };
	struct tp t = { 0 };
	struct fi_info *info;
	int ret;

	bench_parse(argc, argv, &o, BENCH_OPT_PROV);
	setvbuf(stdout, NULL, _IOLBF, 0);
	info = tp_getinfo(&o);
	ret = fi_fabric(info->fabric_attr, &t.fabric, NULL);
	if (ret)
		tp_fail("fi_fabric", ret);
	ret = fi_eq_open(t.fabric, &eq_attr, &t.eq, NULL);
	if (ret)
		tp_fail("fi_eq_open", ret);

	if (o.server) {
		ret = fi_passive_ep(t.fabric, info, &t.pep, NULL);
		if (ret)
			tp_fail("fi_passive_ep", ret);
		ret = fi_pep_bind(t.pep, &t.eq->fid, 0);
		if (ret)
			tp_fail("fi_pep_bind", ret);
		ret = fi_listen(t.pep);
		if (ret)
			tp_fail("fi_listen", ret);
		printf("listening impl=%s\n", o.prov);
		if (tp_eq_wait(&t, &cm, sizeof(cm)) != FI_CONNREQ)
			bench_die("expected a connection request");
		tp_open_ep(&t, cm.info, &b, &o);
		ret = fi_accept(t.ep, NULL, 0);
		if (ret)
			tp_fail("fi_accept", ret);
		fi_freeinfo(cm.info);
	} else {
		tp_open_ep(&t, info, &b, &o);
		ret = fi_connect(t.ep, info->dest_addr, NULL, 0);
		if (ret)
			tp_fail("fi_connect", ret);
	}
	if (tp_eq_wait(&t, &cm, sizeof(cm)) != FI_CONNECTED)
		bench_die("expected FI_CONNECTED");

	bench_run(&b, &o);

	fi_shutdown(t.ep, 0);
	tp_close(t.ep, t.mr, t.cq, t.pep, t.eq, t.domain, t.fabric);
	fi_freeinfo(info);
	free(t.ctx);
	free(b.tx_base);
	return 0;
}
