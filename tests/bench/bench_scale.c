/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The cost of scale (issue 17): one RDM endpoint (the server) and N peer
 * endpoints in one process on another node (the client). Each peer sends
 * one 64 B tagged message to the server and waits for its answer, all N at
 * once: the first exchange of each peer includes its connection's set-up.
 * Then each does a second exchange, on the connection now up. The client
 * reports the first and second exchanges' median and maximum per peer and
 * the wall time of all N first ones; the server reports how much its
 * resident memory grew from before the first message to after the last
 * answer, per peer. Public libfabric API only.
 *
 *   bench_scale -p PROV -s [-a ADDR] [-P PORT]
 *   bench_scale -p PROV -c -n N [-a SERVER] [--src ADDR] [-P PORT]
 *
 * Output: the client's line
 *   result impl=PROV test=scale peers=N first_median_us= first_max_us=
 *          all_first_ms= second_median_us= client_rss_kib_per_peer=
 *   server_rss_kib_per_peer=K
 * (the server's number comes to the client through the out-of-band socket).
 */
#define _GNU_SOURCE
#define BENCH_PROG "bench_scale"

#include <getopt.h>
#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "bench_fi.h"
#include "bench_sock.h"

#define SCALE_MAX 1024
#define SCALE_MSG 64
#define SCALE_NAME 256

struct scale_opts {
	const char *prov, *addr, *src, *port;
	int server;
	unsigned n;
};

/* Per peer (client) or per message slot (server): a buffer and the
 * contexts of its receive and send. */
struct scale_slot {
	struct fi_context2 rx_ctx, tx_ctx;
	unsigned idx;
	char rx[SCALE_MSG], tx[SCALE_MSG];
	double t0;
};

struct scale {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep[SCALE_MAX];
	struct fid_mr *mr;
	void *desc;
	struct scale_slot *slot;
	fi_addr_t *peer;
	struct fi_info *info;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Resident memory of this process in KiB (/proc/self/statm). */
static long rss_kib(void)
{
	long size, res;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &size, &res) != 2)
		tp_fail("/proc/self/statm", -FI_EIO);
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Fabric, domain, one AV and one CQ for every endpoint, count endpoints,
 * a registered region of the slots. */
static void scale_open(struct scale *s, const struct scale_opts *o,
		       unsigned count, unsigned slots)
{
	struct fi_info *h = tp_hints_common(o->prov, FI_EP_RDM, FI_TAGGED,
					    false, 64, 64), *list, *i;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE, .count = SCALE_MAX };
	unsigned k;
	int ret;

	if (!h)
		tp_fail("fi_allocinfo", -FI_ENOMEM);
	ret = fi_getinfo(FI_VERSION(1, 17), o->src ? o->src : o->addr, NULL,
			 FI_SOURCE, h, &list);
	fi_freeinfo(h);
	if (ret)
		tp_fail("fi_getinfo", ret);
	for (i = list; i && strcmp(i->fabric_attr->prov_name, o->prov);)
		i = i->next;
	if (!i)
		tp_fail("no FI_EP_RDM of that provider", -FI_ENODATA);
	s->info = fi_dupinfo(i);
	fi_freeinfo(list);
	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (ret)
		tp_fail("fi_fabric", ret);
	ret = fi_domain(s->fabric, s->info, &s->domain, NULL);
	if (ret)
		tp_fail("fi_domain", ret);
	ret = fi_av_open(s->domain, &av_attr, &s->av, NULL);
	if (ret)
		tp_fail("fi_av_open", ret);
	tp_cq_open(s->domain, FI_CQ_FORMAT_CONTEXT, 4 * SCALE_MAX, &s->cq);
	for (k = 0; k < count; k++)
		tp_ep_start(s->domain, s->info, &s->av->fid, "fi_ep_bind(av)",
			    s->cq, &s->ep[k]);
	s->slot = calloc(slots, sizeof(*s->slot));
	s->peer = calloc(SCALE_MAX, sizeof(*s->peer));
	if (!s->slot || !s->peer)
		tp_fail("calloc", -FI_ENOMEM);
	s->desc = tp_reg(s->domain, s->info, s->slot,
			 slots * sizeof(*s->slot), &s->mr);
}

static void scale_recv(struct scale *s, struct fid_ep *ep,
		       struct scale_slot *sl)
{
	ssize_t ret;

	do {
		ret = fi_trecv(ep, sl->rx, SCALE_MSG, s->desc, FI_ADDR_UNSPEC,
			       0, ~0ULL, &sl->rx_ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(s->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret)
		tp_fail("fi_trecv", ret);
}

static void scale_send(struct scale *s, struct fid_ep *ep,
		       struct scale_slot *sl, fi_addr_t to)
{
	ssize_t ret;

	do {
		ret = fi_tsend(ep, sl->tx, SCALE_MSG, s->desc, to, 0,
			       &sl->tx_ctx);
		if (ret == -FI_EAGAIN)
			fi_cq_read(s->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret)
		tp_fail("fi_tsend", ret);
}

/* One completion's context, or NULL when there is none yet. */
static void *scale_poll(struct scale *s)
{
	struct fi_cq_entry e;
	ssize_t ret = fi_cq_read(s->cq, &e, 1);

	if (ret == -FI_EAGAIN)
		return NULL;
	if (ret == -FI_EAVAIL)
		tp_cq_error(s->cq);
	if (ret < 0)
		tp_fail("fi_cq_read", ret);
	return e.op_context;
}

/* The slot of a completion's context and whether it was the receive. */
static struct scale_slot *slot_of(struct scale *s, void *ctx, unsigned slots,
				  bool *rx)
{
	size_t off = (size_t)((char *)ctx - (char *)s->slot);
	struct scale_slot *sl;

	if ((char *)ctx < (char *)s->slot || off >= slots * sizeof(*sl))
		tp_fail("a completion of no slot", -FI_EINVAL);
	sl = &s->slot[off / sizeof(*sl)];
	*rx = ctx == &sl->rx_ctx;
	return sl;
}

/* ---- server: answers 2n messages, each to the peer it names ----------- */

static void run_server(const struct scale_opts *o)
{
	struct scale s = { 0 };
	char name[SCALE_NAME];
	size_t len = sizeof(name);
	unsigned n, k, answered = 0, sent = 0;
	struct scale_slot *sl;
	int fd;
	long rss0, rss1;
	double per;
	void *ctx;
	bool rx;

	scale_open(&s, o, 1, 2 * SCALE_MAX);
	if (fi_getname(&s.ep[0]->fid, name, &len))
		tp_fail("fi_getname", -FI_EINVAL);
	fd = bench_sock_open(o->addr, o->port, o->server, o->prov);
	bench_sock_io(fd, &n, sizeof(n), false);
	if (!n || n > SCALE_MAX)
		tp_fail("peers", -FI_EINVAL);
	bench_sock_io(fd, &len, sizeof(len), true);
	bench_sock_io(fd, name, len, true);
	/* The peers' names, inserted in their order: peer k is s.peer[k]. */
	for (k = 0; k < n; k++) {
		size_t plen;

		bench_sock_io(fd, &plen, sizeof(plen), false);
		if (plen > sizeof(name))
			tp_fail("peer name", -FI_EINVAL);
		bench_sock_io(fd, name, plen, false);
		if (fi_av_insert(s.av, name, 1, &s.peer[k], 0, NULL) != 1)
			tp_fail("fi_av_insert", -FI_EINVAL);
	}
	for (k = 0; k < 2 * n; k++)
		scale_recv(&s, s.ep[0], &s.slot[k]);
	rss0 = rss_kib();
	bench_sock_io(fd, &rss0, sizeof(rss0), true);	/* ready */
	while (answered < 2 * n || sent < 2 * n) {
		ctx = scale_poll(&s);
		if (!ctx)
			continue;
		sl = slot_of(&s, ctx, 2 * n, &rx);
		if (!rx) {
			sent++;
			continue;
		}
		memcpy(&sl->idx, sl->rx, sizeof(sl->idx));
		if (sl->idx >= n)
			tp_fail("peer index", -FI_EINVAL);
		memcpy(sl->tx, sl->rx, SCALE_MSG);
		scale_send(&s, s.ep[0], sl, s.peer[sl->idx]);
		answered++;
	}
	rss1 = rss_kib();
	per = (double)(rss1 - rss0) / n;
	bench_sock_io(fd, &per, sizeof(per), true);
	bench_sock_io(fd, &rss1, sizeof(rss1), false);	/* the client is done */
	close(fd);
	tp_close(s.ep[0], s.mr, s.cq, s.av, s.domain, s.fabric);
	fi_freeinfo(s.info);
}

/* ---- client: n endpoints, two exchanges each -------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Every endpoint sends its index and waits for the answer, all at once;
 * each one's time in t[k]; the wall time of all. */
static double exchange(struct scale *s, unsigned n, fi_addr_t server,
		       double *t)
{
	double start = now_us();
	struct scale_slot *sl;
	unsigned k, done = 0;
	void *ctx;
	bool rx;

	for (k = 0; k < n; k++)
		scale_recv(s, s->ep[k], &s->slot[k]);
	for (k = 0; k < n; k++) {
		memcpy(s->slot[k].tx, &k, sizeof(k));
		s->slot[k].t0 = now_us();
		scale_send(s, s->ep[k], &s->slot[k], server);
	}
	while (done < 2 * n) {
		ctx = scale_poll(s);
		if (!ctx)
			continue;
		sl = slot_of(s, ctx, n, &rx);
		if (rx)
			t[sl - s->slot] = now_us() - sl->t0;
		done++;
	}
	return now_us() - start;
}

static void run_client(const struct scale_opts *o)
{
	struct scale s = { 0 };
	char name[SCALE_NAME];
	size_t len;
	unsigned k;
	int fd;
	long srv_rss, rss0, rss1;
	double per;
	double *t1 = calloc(o->n, sizeof(double));
	double *t2 = calloc(o->n, sizeof(double));
	double all;
	fi_addr_t server;

	if (!t1 || !t2)
		tp_fail("calloc", -FI_ENOMEM);
	scale_open(&s, o, o->n, o->n);
	fd = bench_sock_open(o->addr, o->port, o->server, o->prov);
	bench_sock_io(fd, (void *)&o->n, sizeof(o->n), true);
	bench_sock_io(fd, &len, sizeof(len), false);
	if (len > sizeof(name))
		tp_fail("server name", -FI_EINVAL);
	bench_sock_io(fd, name, len, false);
	if (fi_av_insert(s.av, name, 1, &server, 0, NULL) != 1)
		tp_fail("fi_av_insert", -FI_EINVAL);
	for (k = 0; k < o->n; k++) {
		len = sizeof(name);
		if (fi_getname(&s.ep[k]->fid, name, &len))
			tp_fail("fi_getname", -FI_EINVAL);
		bench_sock_io(fd, &len, sizeof(len), true);
		bench_sock_io(fd, name, len, true);
	}
	bench_sock_io(fd, &srv_rss, sizeof(srv_rss), false);	/* ready */
	rss0 = rss_kib();
	all = exchange(&s, o->n, server, t1);
	rss1 = rss_kib();
	exchange(&s, o->n, server, t2);
	bench_sock_io(fd, &per, sizeof(per), false);
	bench_sock_io(fd, &rss1, sizeof(rss1), true);
	close(fd);
	qsort(t1, o->n, sizeof(double), cmp_double);
	qsort(t2, o->n, sizeof(double), cmp_double);
	printf("result impl=%s test=scale peers=%u first_median_us=%.1f "
	       "first_max_us=%.1f all_first_ms=%.2f second_median_us=%.1f "
	       "client_rss_kib_per_peer=%.1f server_rss_kib_per_peer=%.1f\n",
	       o->prov, o->n, t1[o->n / 2], t1[o->n - 1], all / 1e3,
	       t2[o->n / 2], (double)(rss1 - rss0) / o->n, per);
	for (k = 0; k < o->n; k++)
		fi_close(&s.ep[k]->fid);
	tp_close(s.mr, s.cq, s.av, s.domain, s.fabric);
	fi_freeinfo(s.info);
	free(t1);
	free(t2);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_scale -p PROV (-s | -c -n N) [-a ADDR] "
		"[--src ADDR] [-P PORT]\n"
		"  -a ADDR     the server's address (default $LFV_BED_IP)\n"
		"  --src ADDR  the client's own address (default -a)\n"
		"  -n N        peer endpoints of the client (1 to %d)\n",
		SCALE_MAX);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "src", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct scale_opts o = { .addr = getenv("LFV_BED_IP"), .port = "47650",
				.server = -1 };
	int c;

	while ((c = getopt_long(argc, argv, "p:scn:a:P:", longs, NULL)) != -1) {
		switch (c) {
		case 'p': o.prov = optarg; break;
		case 's': o.server = 1; break;
		case 'c': o.server = 0; break;
		case 'n': o.n = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'a': o.addr = optarg; break;
		case 'A': o.src = optarg; break;
		case 'P': o.port = optarg; break;
		default: usage();
		}
	}
	if (!o.prov || o.server < 0 || !o.addr || optind != argc ||
	    (!o.server && (!o.n || o.n > SCALE_MAX)))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.server)
		run_server(&o);
	else
		run_client(&o);
	return 0;
}
