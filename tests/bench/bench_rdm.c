/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_rdm: 64 B tagged ping-pong latency, 64 B tagged message rate
 * (window 64), 1 MiB and 64 MiB bandwidth over FI_EP_RDM, for any libfabric
 * provider (lfverbs, "verbs;ofi_rxm", "tcp;ofi_rxm"), through the public API
 * only. The loops are bench_ep.h's, as in bench_msg and bench_raw. Not a
 * test: see tests/bench/README.md and run-rdm.sh.
 *
 *   bench_rdm -p PROV -s [-a ADDR] [-P PORT]     server (prints "listening")
 *   bench_rdm -p PROV -c [-a ADDR] [-P PORT] [--lat N] [--rate M] [--bw B]
 *             [--big G] [--check]
 *   bench_rdm -p PROV -c --callgrind N,K         instruction-count segments
 *
 * PROV must be the provider's full name: "verbs;ofi_rxm", not "verbs", so
 * that "lfverbs" never measures rxm layered over lfverbs' MSG endpoints.
 * The endpoint is bound to ADDR (FI_SOURCE, any port), which selects the
 * device; -d is not used.
 *
 * Addresses go out of band: the server listens on TCP ADDR:PORT, and the
 * two sides swap their fi_getname names over that socket, then each inserts
 * the other's into its AV (FI_AV_TABLE when the provider takes it) and
 * posts its first receives; a last byte from the server says its receive
 * is posted, so nothing ever arrives unexpected.
 *
 * FI_TAGGED with fi_tsend / fi_trecv and exact tags (ignore 0): message k
 * in either direction carries tag k (mod 2^32), and the k-th receive a
 * side posts is the one for the peer's k-th message (bench_ep.h keeps the
 * two sequences in step), so every receive names the one message it takes
 * and no ordering is needed. Receives name the peer (FI_DIRECTED_RECV)
 * when the provider offers it, else FI_ADDR_UNSPEC. FI_CQ_FORMAT_TAGGED,
 * one CQ for sends and receives, busy polling with fi_cq_read,
 * FI_THREAD_DOMAIN when accepted, registered buffers with their
 * descriptors when mr_mode has FI_MR_LOCAL, no inject, every send
 * completing.
 *
 * An RDM send or receive may return -FI_EAGAIN where an MSG one would not
 * (rxm while it sets up the connection to the peer): tp_send / tp_recv
 * then read completions (kept for the next tp_poll, which hands them out
 * first) until the request is taken, and count the retries: those of a
 * side's first send (connection set-up) apart from the others.
 *
 * --check (both sides): every payload but each side's first message (the
 * client's carries the configuration) is filled with a pattern of its
 * sequence number and direction, and every receive completion is checked
 * for its flags, tag, length and pattern; each side prints a "check" line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define BENCH_PROG "bench_rdm"
#include "bench_fi.h"
#include "bench_sock.h"

/* The big phase of bench_ep.h: 64 MiB messages, two in flight. */
#define BENCH_BIG_SIZE ((size_t)64 << 20)

#define TP_TAG_MASK 0xffffffffULL	/* fits any provider's tag format */
#define TP_IDS (128 + 528)	/* BENCH_TXQ + BENCH_RXQ */
#define TP_NAME_MAX 1024

/* --check: what one posted request expects. */
struct tp_expect {
	char *buf;
	size_t len;
	uint64_t seq;
	bool recv;
};

struct tp {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	void *desc;
	enum fi_av_type av_type;
	fi_addr_t peer;
	fi_addr_t src;		/* receives: peer, or FI_ADDR_UNSPEC */
	uint64_t tx_seq, rx_seq;	/* tags of the next send, receive */
	struct fi_context2 *ctx;	/* one per id */
	/* -FI_EAGAIN: completions read while retrying, not yet returned */
	uint32_t *stash;		/* one slot per id: never full */
	size_t stash_head, stash_len;
	uint64_t eagain, eagain_first;
	/* --check */
	bool check, server;
	bool loose;		/* receives may be larger than messages */
	struct tp_expect *expect;	/* one per id */
	uint64_t checked_msgs, checked_bytes;
};

/* --check: word i of message seq from the server or the client. Differs
 * from message to message, so a stale or misplaced buffer shows. */
static inline uint64_t tp_word(uint64_t seq, bool from_server, size_t i)
{
	return (seq << 32 | (uint64_t)i) ^
	       (from_server ? 0x5352565253525652ULL : 0x434c4e54434c4e54ULL);
}

static void tp_fill(const struct tp *t, void *buf, size_t len, uint64_t seq)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++)
		w[i] = tp_word(seq, t->server, i);
}

static void tp_check_fail(uint64_t seq, const char *what)
{
	fprintf(stderr, "bench_rdm: check: receive %llu: %s\n",
		(unsigned long long)seq, what);
	exit(1);
}

static void tp_check(struct tp *t, const struct fi_cq_tagged_entry *e,
		     uint32_t id)
{
	const struct tp_expect *x = &t->expect[id];
	const uint64_t *w = (const uint64_t *)x->buf;
	size_t i;

	if (!x->recv) {
		if ((e->flags & (FI_SEND | FI_TAGGED)) != (FI_SEND | FI_TAGGED))
			tp_check_fail(x->seq, "send completion flags");
		return;
	}
	if ((e->flags & (FI_RECV | FI_TAGGED)) != (FI_RECV | FI_TAGGED))
		tp_check_fail(x->seq, "flags lack FI_RECV | FI_TAGGED");
	if (e->tag != (x->seq & TP_TAG_MASK))
		tp_check_fail(x->seq, "wrong tag");
	/* With --lat-size the client's receives are that large, and the
	 * small messages land in them too. */
	if (e->len != x->len && !(t->loose && e->len < x->len))
		tp_check_fail(x->seq, "wrong length");
	if (e->buf && e->buf != x->buf)
		tp_check_fail(x->seq, "wrong buffer");
	if (x->seq) {
		for (i = 0; i < e->len / sizeof(*w); i++)
			if (w[i] != tp_word(x->seq, !t->server, i))
				tp_check_fail(x->seq, "wrong payload");
	}
	t->checked_msgs++;
	t->checked_bytes += x->len;
}

/* Completions read before the CQ has been polled, -FI_EAGAIN or not. */
static ssize_t tp_read(struct tp *t, struct fi_cq_tagged_entry *e, size_t max,
		       uint32_t *ids)
{
	ssize_t n = fi_cq_read(t->cq, e, max), i;

	if (n == -FI_EAVAIL)
		tp_cq_error(t->cq);
	if (n < 0 && n != -FI_EAGAIN)
		tp_fail("fi_cq_read", n);
	for (i = 0; i < n; i++) {
		ids[i] = (uint32_t)((struct fi_context2 *)e[i].op_context -
				    t->ctx);
		if (t->check)
			tp_check(t, &e[i], ids[i]);
	}
	return n;
}

/* A request was refused with -FI_EAGAIN: drive progress, keeping what
 * completes for tp_poll. */
static void tp_retry(struct tp *t, const char *what, ssize_t ret, bool first)
{
	struct fi_cq_tagged_entry e[16];
	uint32_t ids[16];
	ssize_t n, i;

	if (ret != -FI_EAGAIN)
		tp_fail(what, ret);
	if (first)
		t->eagain_first++;
	else
		t->eagain++;
	n = tp_read(t, e, 16, ids);
	for (i = 0; i < n; i++)
		t->stash[(t->stash_head + t->stash_len++) % TP_IDS] = ids[i];
}

static inline void tp_send(struct tp *t, void *buf, size_t len, uint32_t id)
{
	uint64_t seq = t->tx_seq++;
	ssize_t ret;

	if (t->check) {
		t->expect[id] = (struct tp_expect){ buf, len, seq, false };
		if (seq)
			tp_fill(t, buf, len, seq);
	}
	while ((ret = fi_tsend(t->ep, buf, len, t->desc, t->peer,
			       seq & TP_TAG_MASK, &t->ctx[id])))
		tp_retry(t, "fi_tsend", ret, seq == 0);
}

static inline void tp_recv(struct tp *t, void *buf, size_t len, uint32_t id)
{
	uint64_t seq = t->rx_seq++;
	ssize_t ret;

	if (t->check)
		t->expect[id] = (struct tp_expect){ buf, len, seq, true };
	while ((ret = fi_trecv(t->ep, buf, len, t->desc, t->src,
			       seq & TP_TAG_MASK, 0, &t->ctx[id])))
		tp_retry(t, "fi_trecv", ret, false);
}

static int tp_unstash(struct tp *t, uint32_t *ids, int max)
{
	int n = 0;

	while (t->stash_len && n < max) {
		ids[n++] = t->stash[t->stash_head];
		t->stash_head = (t->stash_head + 1) % TP_IDS;
		t->stash_len--;
	}
	return n;
}

static inline int tp_poll(struct tp *t, uint32_t *ids, int max)
{
	struct fi_cq_tagged_entry e[16];	/* BENCH_POLL_BATCH */
	ssize_t n;

	if (t->stash_len)
		return tp_unstash(t, ids, max);
	n = tp_read(t, e, (size_t)max, ids);
	return n > 0 ? (int)n : 0;
}

#include "bench_ep.h"

_Static_assert(BENCH_POLL_BATCH <= 16, "tp_poll's array");
_Static_assert(TP_IDS == BENCH_TXQ + BENCH_RXQ, "ids");

/* ---- set-up ------------------------------------------------------------- */

static struct fi_info *tp_hints(const struct bench_opts *o,
				bool thread_domain, bool directed)
{
	struct fi_info *h = tp_hints_common(o->prov, FI_EP_RDM, FI_TAGGED |
					    (directed ? FI_DIRECTED_RECV : 0),
					    thread_domain, BENCH_TXQ,
					    BENCH_RXQ);

	if (!h)
		bench_die("fi_allocinfo");
	return h;
}

/* The first answer from exactly the provider asked for: a name filter of
 * "lfverbs" also lets through "lfverbs;ofi_rxm". Exits 3 when there is
 * none, so that run-rdm.sh can tell "no RDM here" from a failure. */
static struct fi_info *tp_pick(const struct bench_opts *o,
			       struct fi_info *list)
{
	struct fi_info *i;

	for (i = list; i; i = i->next) {
		if (!strcmp(i->fabric_attr->prov_name, o->prov)) {
			struct fi_info *one = fi_dupinfo(i);

			if (!one)
				bench_die("fi_dupinfo");
			fi_freeinfo(list);
			return one;
		}
	}
	fprintf(stderr, "bench_rdm: no FI_EP_RDM from provider \"%s\"",
		o->prov);
	for (i = list; i; i = i->next)
		fprintf(stderr, "%s %s", i == list ? "; found:" : ",",
			i->fabric_attr->prov_name);
	fprintf(stderr, "\n");
	exit(3);
}

/* FI_THREAD_DOMAIN and FI_DIRECTED_RECV if accepted, each dropped in
 * turn otherwise (*domain says whether the first was). The endpoint is
 * bound to ADDR, any port. */
static struct fi_info *tp_getinfo(const struct bench_opts *o, bool *domain)
{
	static const bool tries[][2] = {
		{ true, true }, { true, false }, { false, true }, { false, false },
	};
	struct fi_info *h, *info = NULL;
	size_t k;
	int ret = -FI_ENODATA;

	for (k = 0; k < sizeof(tries) / sizeof(tries[0]); k++) {
		h = tp_hints(o, tries[k][0], tries[k][1]);
		ret = fi_getinfo(FI_VERSION(1, 17), o->src ? o->src : o->addr,
				 NULL, FI_SOURCE, h, &info);
		fi_freeinfo(h);
		if (ret != -FI_ENODATA)
			break;
	}
	*domain = k < sizeof(tries) / sizeof(tries[0]) && tries[k][0];
	if (ret == -FI_ENODATA) {
		fprintf(stderr, "bench_rdm: no FI_EP_RDM from provider "
			"\"%s\" on %s\n", o->prov, o->src ? o->src : o->addr);
		exit(3);
	}
	if (ret)
		tp_fail("fi_getinfo", ret);
	return tp_pick(o, info);
}

/* FI_AV_TABLE unless the provider refuses it. */
static void tp_open_av(struct tp *t, const struct fi_info *info)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 4 };
	int ret = fi_av_open(t->domain, &attr, &t->av, NULL);

	if (ret) {
		attr.type = info->domain_attr->av_type;
		ret = fi_av_open(t->domain, &attr, &t->av, NULL);
	}
	if (ret)
		tp_fail("fi_av_open", ret);
	t->av_type = attr.type;
}

/* Domain, AV, CQ, endpoint, registered region. */
static void tp_open(struct tp *t, struct fi_info *info, struct bench *b,
		    const struct bench_opts *o)
{
	char *region;
	int ret;

	ret = fi_fabric(info->fabric_attr, &t->fabric, NULL);
	if (ret)
		tp_fail("fi_fabric", ret);
	ret = fi_domain(t->fabric, info, &t->domain, NULL);
	if (ret)
		tp_fail("fi_domain", ret);
	tp_open_av(t, info);
	tp_cq_open(t->domain, FI_CQ_FORMAT_TAGGED, BENCH_CQ_SIZE, &t->cq);
	tp_ep_start(t->domain, info, &t->av->fid, "fi_ep_bind(av)", t->cq,
		    &t->ep);

	/* 256 MiB: faulted in by the kernel (MAP_POPULATE), which under TCG
	 * is faster than a memset and under callgrind is not executed on
	 * the simulated CPU; every page is resident before the first
	 * phase, registered or not. */
	region = mmap(NULL, BENCH_REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (region == MAP_FAILED)
		bench_die("out of memory");
	t->desc = tp_reg(t->domain, info, region, BENCH_REGION, &t->mr);
	/* --desc: a provider without FI_MR_LOCAL may still use it (lfverbs'
	 * rendezvous then registers nothing per message). */
	if (o->desc && !t->desc)
		t->desc = fi_mr_desc(t->mr);
	t->ctx = calloc(TP_IDS, sizeof(*t->ctx));
	t->expect = calloc(TP_IDS, sizeof(*t->expect));
	t->stash = calloc(TP_IDS, sizeof(*t->stash));
	if (!t->ctx || !t->expect || !t->stash)
		bench_die("out of memory");
	t->check = o->check;
	t->server = o->server;
	t->loose = !o->server && o->cfg.lat_size > BENCH_SMALL;

	b->t = t;
	b->impl = o->prov;
	b->tx_base = region;
	b->rx_base = region + BENCH_TX_REGION;
}

/* ---- out-of-band address exchange ---------------------------------------- */

/*
 * Both sides send their name (after its length and their --check flag:
 * either side's --check turns it on for both) and read the peer's, insert
 * it and post their first receives (bench_pre_connect). Then the server
 * sends one byte: the client sends nothing before the server's receive is
 * posted, and the server sends nothing before the client's first message.
 */
static void tp_exchange(struct tp *t, struct bench *b,
			const struct bench_opts *o, const struct fi_info *info)
{
	char name[TP_NAME_MAX], peer[TP_NAME_MAX], ready = 'r';
	size_t len = sizeof(name);
	uint32_t hdr[2];
	int fd, ret;

	ret = fi_getname(&t->ep->fid, name, &len);
	if (ret)
		tp_fail("fi_getname", ret);
	fd = bench_sock_open(o->addr, o->port, o->server, o->prov);
	hdr[0] = htonl((uint32_t)len);
	hdr[1] = htonl((uint32_t)t->check);
	bench_sock_io(fd, hdr, sizeof(hdr), true);
	bench_sock_io(fd, name, len, true);
	bench_sock_io(fd, hdr, sizeof(hdr), false);
	len = ntohl(hdr[0]);
	t->check = t->check || ntohl(hdr[1]);
	if (len > sizeof(peer))
		bench_die("address exchange: name too long");
	bench_sock_io(fd, peer, len, false);

	ret = fi_av_insert(t->av, peer, 1, &t->peer, 0, NULL);
	if (ret != 1 || t->peer == FI_ADDR_NOTAVAIL)
		tp_fail("fi_av_insert", ret < 0 ? ret : -FI_EADDRNOTAVAIL);
	t->src = (info->caps & FI_DIRECTED_RECV) ? t->peer : FI_ADDR_UNSPEC;
	bench_pre_connect(b, o);
	bench_sock_io(fd, &ready, 1, o->server);
	close(fd);
}

/* ---- main ---------------------------------------------------------------- */

static const char *tp_threading(enum fi_threading th)
{
	switch (th) {
	case FI_THREAD_SAFE: return "safe";
	case FI_THREAD_FID: return "fid";
	case FI_THREAD_DOMAIN: return "domain";
	case FI_THREAD_COMPLETION: return "completion";
	case FI_THREAD_ENDPOINT: return "endpoint";
	default: return "unspec";
	}
}

/* What the provider gave: thread_hint says whether FI_THREAD_DOMAIN was
 * asked for and accepted (the answer may be a stronger level). */
static void tp_info(const struct tp *t, const struct fi_info *info,
		    const struct bench_opts *o, bool domain)
{
	printf("info impl=%s fabric=%s domain=%s thread_hint=%s threading=%s "
	       "directed=%d av=%s mr_local=%d inject_size=%zu "
	       "max_msg_size=%zu check=%d\n", o->prov,
	       info->fabric_attr->name, info->domain_attr->name,
	       domain ? "domain" : "unspec",
	       tp_threading(info->domain_attr->threading),
	       t->src != FI_ADDR_UNSPEC,
	       t->av_type == FI_AV_TABLE ? "table" : "map", t->desc != NULL,
	       info->tx_attr->inject_size, info->ep_attr->max_msg_size,
	       o->check);
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct bench b = { 0 };
	struct tp t = { 0 };
	struct fi_info *info;
	bool domain;

	bench_parse(argc, argv, &o, BENCH_OPT_PROV | BENCH_OPT_CHECK);
	setvbuf(stdout, NULL, _IOLBF, 0);
	info = tp_getinfo(&o, &domain);
	/* rxm on rxe says 8 MiB (the device's max_msg_sz) yet moves 64 MiB
	 * messages (its rendezvous reads them); --check shows whether the
	 * bytes are right. Run the phase and say so. */
	if (info->ep_attr->max_msg_size < BENCH_BIG_SIZE && o.cfg.big_msgs &&
	    !o.server)
		printf("note impl=%s max_msg_size=%zu below_big=%zu\n", o.prov,
		       info->ep_attr->max_msg_size, BENCH_BIG_SIZE);
	tp_open(&t, info, &b, &o);
	tp_exchange(&t, &b, &o, info);
	if (!o.server)
		tp_info(&t, info, &o, domain);

	bench_run(&b, &o);
	printf("retry impl=%s side=%s eagain=%llu eagain_first_send=%llu\n",
	       o.prov, o.server ? "server" : "client",
	       (unsigned long long)t.eagain,
	       (unsigned long long)t.eagain_first);
	if (t.check)
		printf("check impl=%s side=%s msgs=%llu bytes=%llu ok\n",
		       o.prov, o.server ? "server" : "client",
		       (unsigned long long)t.checked_msgs,
		       (unsigned long long)t.checked_bytes);

	tp_close(t.ep, t.mr, t.cq, t.av, t.domain, t.fabric);
	fi_freeinfo(info);
	free(t.ctx);
	free(t.expect);
	free(t.stash);
	munmap(b.tx_base, BENCH_REGION);
	return 0;
}
