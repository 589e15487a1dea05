/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM robustness (issue 5) through the real libfabric core on soft-RoCE:
 * many endpoints in one process, all-to-all across processes, simultaneous
 * first sends (in one process and across two), a peer killed with traffic
 * in flight, a peer that restarts, addresses removed from the AV, sends to
 * oneself, and a sweep of bad input.
 *
 * The other processes are this program again, exec'd with --peer ROLE:
 * each opens libfabric and ibverbs itself (a forked copy of an initialised
 * ibverbs must not be used). The test drives each over a socketpair with
 * small framed messages. Peers die with the test (PR_SET_PDEATHSIG) or by
 * an alarm of their own, and every test that starts them kills and reaps
 * what is left in its teardown, so nothing outlives a failure.
 *
 * LFV_PEER_HOST=HOST runs the peers of odd index on HOST through ssh
 * (kid_start; tests/nodes/rdm.sh runs the tests with peers that way on
 * the two-node bed). LFV_A2A_LOSSY=S makes the all-to-all a lossy
 * link's (tests/nodes/faults.sh, case 12): messages may fail or not come
 * within S s; every receive that completed without error is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>

#include "func_common.h"
#include "func_pair.h"
#include "func_rdm_common.h"
#include "../test_close.h"

#define STEP_MS 60000			/* one phase of a peer test */
#define PEER_ALARM_S 150		/* a peer that hangs dies by then */
#define NSIZES 4
#define SIM_MSGS 24

/* ---- control messages between the test and its peers ----------------------- */

enum { M_NAMES = 1, M_GO, M_DONE, M_EXIT };

/* ---- all-to-all: every endpoint sends every other one NSIZES messages ----- */

/* The endpoints base .. base + k - 1 of g are this process's; every name
 * is in one AV, addr[] in global order. Sizes straddle the eager limit. */
struct a2a {
	struct node *nodes;
	int g, base, k;
	const fi_addr_t *addr;
	size_t size[NSIZES], off[NSIZES], slot;
	uint8_t *sbuf;			/* k slots: each local sender's */
	uint8_t *rbuf;			/* k * g slots */
	struct op *sops, *rops;		/* [local][peer][size] */
	struct fid_mr *smr;		/* half the senders pass it as desc */
	int done, stray;
	/* LFV_A2A_LOSSY=S (a lossy link): a message may fail or never
	 * come, the wait ends after S s; every receive that completed
	 * without error is still checked whole. What it found: */
	int lossy_s;
	int checked[NSIZES], failed, missing;
	char why[512];
};

static size_t a2a_idx(const struct a2a *x, int r, int s, int z)
{
	return ((size_t)r * (size_t)x->g + (size_t)s) * NSIZES + (size_t)z;
}

static uint64_t a2a_tag(int s, int z)
{
	return (uint64_t)s << 16 | (uint64_t)z << 8 | 0x5a;
}

static uint64_t a2a_seed(int s, int z)
{
	return (uint64_t)s * NSIZES + (uint64_t)z + 1;
}

static uint8_t *a2a_rslot(const struct a2a *x, int r, int s, int z)
{
	return x->rbuf + ((size_t)r * (size_t)x->g + (size_t)s) * x->slot +
	       x->off[z];
}

static int a2a_fail(struct a2a *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int a2a_init(struct a2a *x, struct fab *f, struct node *nodes, int g,
		    int base, int k, const fi_addr_t *addr)
{
	size_t n, total = 0;
	int r, z, ret;

	memset(x, 0, sizeof(*x));
	x->lossy_s = env_int("LFV_A2A_LOSSY", 0);
	x->nodes = nodes;
	x->g = g;
	x->base = base;
	x->k = k;
	x->addr = addr;
	x->size[0] = 1;
	x->size[1] = f->eager;		/* the largest eager message */
	x->size[2] = f->eager + 1;	/* the smallest segmented one */
	x->size[3] = f->rndv + 2;	/* a rendezvous */
	for (z = 0; z < NSIZES; z++) {
		x->off[z] = total;
		total += x->size[z];
	}
	x->slot = total;
	n = (size_t)k * (size_t)g * NSIZES;
	x->sbuf = malloc((size_t)k * x->slot);
	x->rbuf = calloc((size_t)k * (size_t)g, x->slot);
	x->sops = calloc(n, sizeof(*x->sops));
	x->rops = calloc(n, sizeof(*x->rops));
	if (!x->sbuf || !x->rbuf || !x->sops || !x->rops)
		return a2a_fail(x, "out of memory");
	for (r = 0; r < k; r++)
		for (z = 0; z < NSIZES; z++)
			fill(x->sbuf + (size_t)r * x->slot + x->off[z],
			     x->size[z], a2a_seed(base + r, z));
	ret = fi_mr_reg(f->domain, x->sbuf, (size_t)k * x->slot, FI_SEND, 0,
			0, 0, &x->smr, NULL);
	return ret ? a2a_fail(x, "fi_mr_reg: %d", ret) : 0;
}

static void a2a_fini(struct a2a *x)
{
	if (x->smr)
		fi_close(&x->smr->fid);
	free(x->sbuf);
	free(x->rbuf);
	free(x->sops);
	free(x->rops);
}

static int a2a_drain(struct a2a *x)
{
	int r, n;

	for (r = 0; r < x->k; r++) {
		n = drain_cq(x->nodes[r].cq, &x->stray);
		if (n < 0)
			return a2a_fail(x, "CQ of %d: %d", x->base + r, n);
		x->done += n;
	}
	return 0;
}

/* Receives of the sizes of one parity: half before the messages come,
 * half after (unexpected); directed and wildcard alternately. */
static int a2a_post(struct a2a *x, int parity)
{
	fi_addr_t from;
	int r, s, z, ret;

	for (r = 0; r < x->k; r++)
		for (s = 0; s < x->g; s++)
			for (z = parity; z < NSIZES; z += 2) {
				if (s == x->base + r)
					continue;
				from = ((s + z) & 1) ? x->addr[s] :
						       FI_ADDR_UNSPEC;
				ret = (int)fi_trecv(x->nodes[r].ep,
					a2a_rslot(x, r, s, z), x->size[z],
					NULL, from, a2a_tag(s, z), 0,
					&x->rops[a2a_idx(x, r, s, z)]);
				if (ret)
					return a2a_fail(x, "fi_trecv: %d",
							ret);
			}
	return 0;
}

static int a2a_send(struct a2a *x, int64_t deadline)
{
	int r, d, z, me, s;
	ssize_t ret;
	void *desc;
	uint8_t *buf;

	for (z = 0; z < NSIZES; z++)
		for (d = 1; d < x->g; d++)
			for (r = 0; r < x->k; r++) {
				me = x->base + r;
				s = (me + d) % x->g;
				buf = x->sbuf + (size_t)r * x->slot + x->off[z];
				desc = (me & 1) ? NULL : fi_mr_desc(x->smr);
				while ((ret = fi_tsend(x->nodes[r].ep, buf,
						x->size[z], desc, x->addr[s],
						a2a_tag(me, z),
						&x->sops[a2a_idx(x, r, s, z)])) ==
				       -FI_EAGAIN) {
					if (a2a_drain(x))
						return -1;
					if (now_ms() > deadline)
						return a2a_fail(x, "fi_tsend: "
							"no room in time");
				}
				if (ret)
					return a2a_fail(x, "fi_tsend %d -> %d: "
							"%zd", me, s, ret);
			}
	return 0;
}

static int a2a_expected(const struct a2a *x)
{
	return 2 * x->k * (x->g - 1) * NSIZES;
}

/* What a2a_walk calls for each message: local endpoint r (of x->k) to or
 * from peer s, size index z, with its send and receive. */
typedef int a2a_visit(struct a2a *x, int r, int s, int z,
		      const struct op *so, const struct op *ro, void *arg);

/* Calls visit for every message (by r, then s, then z; none from an
 * endpoint to itself) until one returns nonzero; returns that, or 0. */
static int a2a_walk(struct a2a *x, a2a_visit *visit, void *arg)
{
	int r, s, z, ret;

	for (r = 0; r < x->k; r++)
		for (s = 0; s < x->g; s++)
			for (z = 0; z < NSIZES; z++) {
				if (s == x->base + r)
					continue;
				ret = visit(x, r, s, z,
					    &x->sops[a2a_idx(x, r, s, z)],
					    &x->rops[a2a_idx(x, r, s, z)], arg);
				if (ret)
					return ret;
			}
	return 0;
}

/* Prints an unfinished pair or a send error. */
static int a2a_dump_one(struct a2a *x, int r, int s, int z,
			const struct op *so, const struct op *ro, void *arg)
{
	(void)arg;
	if (!so->ndone || so->err)
		fprintf(stderr, "send %d -> %d size %zu: %d completions, err "
			"%d\n", x->base + r, s, x->size[z], so->ndone,
			so->err);
	if (!ro->ndone)
		fprintf(stderr, "receive %d <- %d size %zu: none\n",
			x->base + r, s, x->size[z]);
	return 0;
}

/* Missing completions by size, and the first missing send and receive
 * (-1 -> -1: none). */
struct a2a_gaps {
	int ns[NSIZES], nr[NSIZES];
	int fs_from, fs_to, fr_at, fr_from;
};

static int a2a_gap_one(struct a2a *x, int r, int s, int z,
		       const struct op *so, const struct op *ro, void *arg)
{
	struct a2a_gaps *gp = arg;

	if (!so->ndone) {
		gp->ns[z]++;
		if (gp->fs_from < 0) {
			gp->fs_from = x->base + r;
			gp->fs_to = s;
		}
	}
	if (!ro->ndone) {
		gp->nr[z]++;
		if (gp->fr_at < 0) {
			gp->fr_at = x->base + r;
			gp->fr_from = s;
		}
	}
	return 0;
}

/* What a timed-out run still waits for: missing send and receive
 * completions by message size, and the first missing pair of each. */
static void a2a_missing(struct a2a *x, char *out, size_t len)
{
	struct a2a_gaps gp = { .fs_from = -1, .fs_to = -1, .fr_at = -1,
			       .fr_from = -1 };
	int z, used;

	a2a_walk(x, a2a_gap_one, &gp);
	used = snprintf(out, len, "missing sends/receives by size:");
	for (z = 0; z < NSIZES && used > 0 && (size_t)used < len; z++)
		used += snprintf(out + used, len - (size_t)used, " %zu:%d/%d",
				 x->size[z], gp.ns[z], gp.nr[z]);
	/* LFV_A2A_DEBUG: every unfinished pair and every send error. */
	if (getenv("LFV_A2A_DEBUG"))
		a2a_walk(x, a2a_dump_one, NULL);
	if (used > 0 && (size_t)used < len)
		snprintf(out + used, len - (size_t)used,
			 "; first send %d -> %d, first receive %d <- %d",
			 gp.fs_from, gp.fs_to, gp.fr_at, gp.fr_from);
}

static int a2a_wait(struct a2a *x, int64_t deadline)
{
	char missing[200];

	if (x->lossy_s)
		deadline = now_ms() + x->lossy_s * 1000;
	while (x->done < a2a_expected(x)) {
		if (a2a_drain(x))
			return -1;
		if (now_ms() > deadline && x->lossy_s)
			return 0;	/* what came is checked */
		if (now_ms() > deadline) {
			a2a_missing(x, missing, sizeof(missing));
			return a2a_fail(x, "timed out with %d of %d "
					"completions; %s", x->done,
					a2a_expected(x), missing);
		}
	}
	return 0;
}

/* A received message's bytes; when wrong, where: the first bad offset,
 * what was there and what should be, how many bytes are bad. */
static int a2a_check_data(struct a2a *x, int r, int s, int z)
{
	const uint8_t *p = a2a_rslot(x, r, s, z);
	uint64_t seed = a2a_seed(s, z);
	size_t len = x->size[z], bad = first_bad(p, len, seed);

	if (bad == len)
		return 0;
	return a2a_fail(x, "receive %d <- %d size %zu: wrong data from "
			"offset %zu (%#x, not %#x), %zu bytes wrong",
			x->base + r, s, len, bad, p[bad], pat(seed, bad),
			count_bad(p, len, seed, bad));
}

/* A receive that completed once without error: the right flags,
 * length, tag, source and data. */
static int a2a_check_recv(struct a2a *x, int r, int s, int z,
			  const struct op *ro)
{
	if (ro->flags != (FI_RECV | FI_TAGGED) || ro->len != x->size[z] ||
	    ro->tag != a2a_tag(s, z))
		return a2a_fail(x, "receive %d <- %d: flags %#lx len %zu tag "
				"%#lx", x->base + r, s,
				(unsigned long)ro->flags, ro->len,
				(unsigned long)ro->tag);
	if (ro->src != x->addr[s])
		return a2a_fail(x, "receive %d <- %d: FI_SOURCE %#lx, not %#lx",
				x->base + r, s, (unsigned long)ro->src,
				(unsigned long)x->addr[s]);
	return a2a_check_data(x, r, s, z);
}

/* One message: each side completed once, without error; the receive is
 * right. */
static int a2a_check_one(struct a2a *x, int r, int s, int z,
			 const struct op *so, const struct op *ro, void *arg)
{
	(void)arg;
	if (so->ndone != 1 || so->err || !(so->flags & FI_SEND))
		return a2a_fail(x, "send %d -> %d size %zu: %d completions, "
				"err %d", x->base + r, s, x->size[z],
				so->ndone, so->err);
	if (ro->ndone != 1 || ro->err)
		return a2a_fail(x, "receive %d <- %d size %zu: %d completions, "
				"err %d", x->base + r, s, x->size[z],
				ro->ndone, ro->err);
	return a2a_check_recv(x, r, s, z, ro);
}

/* One message over a lossy link: it may have failed or not come, but
 * nothing completes twice, and a receive that completed without error
 * must be right (a send's success says nothing more: its peer may have
 * failed the connection after taking the message). */
static int a2a_check_lossy(struct a2a *x, int r, int s, int z,
			   const struct op *so, const struct op *ro, void *arg)
{
	(void)arg;
	if (so->ndone > 1 || ro->ndone > 1)
		return a2a_fail(x, "%d <-> %d size %zu: %d send and %d "
				"receive completions", x->base + r, s,
				x->size[z], so->ndone, ro->ndone);
	if (!ro->ndone) {
		x->missing++;
		return 0;
	}
	if (ro->err) {
		x->failed++;
		return 0;
	}
	x->checked[z]++;
	return a2a_check_recv(x, r, s, z, ro);
}

static int a2a_verify(struct a2a *x)
{
	if (x->stray)
		return a2a_fail(x, "%d completions without a context",
				x->stray);
	return a2a_walk(x, x->lossy_s ? a2a_check_lossy : a2a_check_one,
			NULL);
}

/* Everything posted, everyone's completions counted and checked; then a
 * quiet spell in which nothing more may come. */
static int a2a_run(struct a2a *x, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms, quiet;

	if (a2a_post(x, 0) || a2a_send(x, deadline) || a2a_post(x, 1) ||
	    a2a_wait(x, deadline))
		return -1;
	quiet = now_ms() + 200;
	while (now_ms() < quiet)
		if (a2a_drain(x))
			return -1;
	if (x->done != a2a_expected(x) && !x->lossy_s)
		return a2a_fail(x, "%d completions, %d expected", x->done,
				a2a_expected(x));
	return a2a_verify(x);
}

/* ---- simultaneous first sends ---------------------------------------------- */

/* One side: SIM_MSGS untagged messages to the peer, sent before any
 * receive is posted; receive i must hold the peer's message i. */
struct sim {
	struct node *n;
	fi_addr_t peer;
	int me, other;
	size_t eager, max;
	uint8_t *sbuf, *rbuf;
	struct op sops[SIM_MSGS], rops[SIM_MSGS];
	int done, stray;
};

static size_t sim_len(const struct sim *s, int i)
{
	return i % 4 == 3 ? s->eager + 1 + (size_t)i : 8 + (size_t)i;
}

static int sim_init(struct sim *s, struct node *n, fi_addr_t peer, int me,
		    int other, size_t eager)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->peer = peer;
	s->me = me;
	s->other = other;
	s->eager = eager;
	s->max = eager + 1 + SIM_MSGS;
	s->sbuf = malloc(SIM_MSGS * s->max);
	s->rbuf = calloc(SIM_MSGS, s->max);
	if (!s->sbuf || !s->rbuf)
		return -FI_ENOMEM;
	for (i = 0; i < SIM_MSGS; i++)
		fill(s->sbuf + (size_t)i * s->max, sim_len(s, i),
		     (uint64_t)me * 1000 + (uint64_t)i);
	return 0;
}

static void sim_fini(struct sim *s)
{
	free(s->sbuf);
	free(s->rbuf);
}

static int sim_drain(struct sim *s)
{
	int n = drain_cq(s->n->cq, &s->stray);

	if (n < 0)
		return n;
	s->done += n;
	return 0;
}

static int sim_send(struct sim *s)
{
	int64_t deadline = now_ms() + WAIT_MS;
	ssize_t ret;
	int i;

	for (i = 0; i < SIM_MSGS; i++) {
		while ((ret = fi_send(s->n->ep, s->sbuf + (size_t)i * s->max,
				      sim_len(s, i), NULL, s->peer,
				      &s->sops[i])) == -FI_EAGAIN) {
			if (sim_drain(s) || now_ms() > deadline)
				return -FI_ETIMEDOUT;
		}
		if (ret)
			return (int)ret;
	}
	return 0;
}

static int sim_post(struct sim *s)
{
	ssize_t ret;
	int i;

	for (i = 0; i < SIM_MSGS; i++) {
		ret = fi_recv(s->n->ep, s->rbuf + (size_t)i * s->max, s->max,
			      NULL, FI_ADDR_UNSPEC, &s->rops[i]);
		if (ret)
			return (int)ret;
	}
	return 0;
}

static bool sim_complete(const struct sim *s)
{
	return s->done == 2 * SIM_MSGS;
}

/* 0, or the index + 1 of the first message that is wrong (receives as
 * negative). */
static int sim_verify(const struct sim *s)
{
	const struct op *o;
	int i;

	if (s->stray)
		return 1000;
	for (i = 0; i < SIM_MSGS; i++) {
		o = &s->sops[i];
		if (o->ndone != 1 || o->err || o->flags != (FI_SEND | FI_MSG))
			return i + 1;
		o = &s->rops[i];
		if (o->ndone != 1 || o->err || o->flags != (FI_RECV | FI_MSG) ||
		    o->len != sim_len(s, i) || o->src != s->peer ||
		    !check(s->rbuf + (size_t)i * s->max, o->len,
			   (uint64_t)s->other * 1000 + (uint64_t)i))
			return -(i + 1);
	}
	return 0;
}

/* ---- the peer processes ------------------------------------------------------ */

/* Waits for the test's message while serving the peers of nodes. */
static int peer_wait_msg(int fd, uint32_t want, void *p, uint32_t cap,
			 uint32_t *len, struct node *nodes, int cnt,
			 int *stray)
{
	int64_t deadline = now_ms() + STEP_MS;
	int i, n, got;

	while (!msg_waiting(fd)) {
		if (now_ms() > deadline)
			return -FI_ETIMEDOUT;
		for (i = got = 0; i < cnt; i++) {
			n = drain_cq(nodes[i].cq, stray);
			if (n < 0)
				return n;
			got += n;
		}
		if (!got)
			sched_yield();
	}
	return msg_get(fd, want, p, cap, len, WAIT_MS);
}

/* k endpoints in all-to-all with everyone the test names. */
static int peer_a2a(int fd, int idx, int k)
{
	uint8_t names[MSG_MAX];
	struct node nodes[16];
	fi_addr_t addr[MSG_MAX / NAME_LEN];
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_av *av;
	struct a2a x;
	struct fab f;
	uint32_t len;
	int i, g, dummy = 0;

	PCHECK(k > 0 && k <= 16);
	PCALL(fab_open(&f, 128));
	PCALL(fi_av_open(f.domain, &av_attr, &av, NULL));
	for (i = 0; i < k; i++) {
		PCALL(node_open(&f, av, &nodes[i]));
		memcpy(names + i * NAME_LEN, nodes[i].name, NAME_LEN);
	}
	PCALL(msg_put(fd, M_NAMES, names, (uint32_t)(k * NAME_LEN)));
	PCALL(msg_get(fd, M_NAMES, names, sizeof(names), &len, STEP_MS));
	g = (int)(len / NAME_LEN);
	PCHECK(g >= (idx + 1) * k);
	PCHECK(fi_av_insert(av, names, (size_t)g, addr, 0, NULL) == g);
	if (a2a_init(&x, &f, nodes, g, idx * k, k, addr) ||
	    a2a_run(&x, STEP_MS)) {
		fprintf(stderr, "peer a2a %d: %s\n", idx, x.why);
		_exit(4);
	}
	if (x.lossy_s)
		fprintf(stderr, "peer a2a %d lossy: checked %d %d %d %d "
			"(by size), failed %d, never came %d\n", idx,
			x.checked[0], x.checked[1], x.checked[2], x.checked[3],
			x.failed, x.missing);
	PCALL(msg_put(fd, M_DONE, NULL, 0));
	PCALL(peer_wait_msg(fd, M_EXIT, names, sizeof(names), &len, nodes, k,
			    &dummy));
	PCHECK(!dummy);
	PCHECK(!a2a_drain(&x) && !x.stray &&
	       (x.lossy_s || x.done == a2a_expected(&x)));
	a2a_fini(&x);
	for (i = 0; i < k; i++)
		PCALL(node_close(&nodes[i]));
	PCALL(fi_close(&av->fid));
	PCALL(fab_close(&f));
	return 0;
}

/* Rounds of simultaneous first sends with a fresh endpoint each. */
static int peer_sim(int fd, int idx, int rounds)
{
	uint8_t peer_name[MSG_MAX];
	struct node n;
	struct sim s;
	struct fab f;
	fi_addr_t peer;
	uint32_t len;
	int round, v;

	PCALL(fab_open(&f, 64));
	for (round = 0; round < rounds; round++) {
		PCALL(node_open(&f, NULL, &n));
		PCALL(msg_put(fd, M_NAMES, n.name, NAME_LEN));
		PCALL(msg_get(fd, M_NAMES, peer_name, sizeof(peer_name), &len,
			      STEP_MS));
		PCHECK(len == NAME_LEN);
		PCHECK(fi_av_insert(n.av, peer_name, 1, &peer, 0, NULL) == 1);
		PCALL(sim_init(&s, &n, peer, idx, 1 - idx, f.eager));
		PCALL(msg_get(fd, M_GO, NULL, 0, NULL, STEP_MS));
		/* Both send before either receives. */
		PCALL(sim_send(&s));
		PCALL(sim_post(&s));
		while (!sim_complete(&s)) {
			PCALL(sim_drain(&s));
			PCHECK(s.done <= 2 * SIM_MSGS);
		}
		v = sim_verify(&s);
		if (v)
			peer_die(__LINE__, "sim_verify", v);
		PCALL(msg_put(fd, M_DONE, NULL, 0));
		PCALL(peer_wait_msg(fd, M_EXIT, NULL, 0, NULL, &n, 1,
				    &s.stray));
		PCHECK(!sim_drain(&s) && s.done == 2 * SIM_MSGS && !s.stray);
		sim_fini(&s);
		PCALL(node_close(&n));
	}
	PCALL(fab_close(&f));
	return 0;
}

/* Greets the test's endpoint, then answers each TAG_PING with a TAG_PONG
 * of the same payload, until told to exit. Never receives TAG_SINK. */
static int peer_echo(int fd, int idx)
{
	uint8_t name[MSG_MAX];
	struct op hop = { 0 };
	struct echo e;
	struct node n;
	struct fab f;
	fi_addr_t a;
	uint32_t len;
	int stray = 0;

	PCALL(fab_open(&f, 0));
	echo_init(&e, f.rndv + 2 * f.eager + 64);
	PCALL(node_open(&f, NULL, &n));
	PCALL(msg_put(fd, M_NAMES, n.name, NAME_LEN));
	PCALL(msg_get(fd, M_NAMES, name, sizeof(name), &len, STEP_MS));
	PCHECK(len == NAME_LEN);
	PCHECK(fi_av_insert(n.av, name, 1, &a, 0, NULL) == 1);
	echo_start(&e, &n, a);
	PCALL(peer_wait_msg(fd, M_GO, NULL, 0, NULL, &n, 1, &stray));
	PCALL(fi_tsend(n.ep, "hello", 6, NULL, a, TAG_HELLO | (uint64_t)idx,
		       &hop));
	echo_serve(&e, fd, &hop, &stray);
	PCALL(msg_get(fd, M_EXIT, NULL, 0, NULL, WAIT_MS));
	echo_finish(&e, &stray);
	PCALL(node_close(&n));
	PCALL(fab_close(&f));
	return 0;
}

static int peer_main(char **argv)
{
	int fd, arg = atoi(argv[5]);

	peer_role = argv[2];
	peer_idx = atoi(argv[4]);
	fd = peer_channel(argv[3]);
	alarm(PEER_ALARM_S);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(peer_role, "a2a"))
		return peer_a2a(fd, peer_idx, arg);
	if (!strcmp(peer_role, "sim"))
		return peer_sim(fd, peer_idx, arg);
	if (!strcmp(peer_role, "echo"))
		return peer_echo(fd, peer_idx);
	return 2;
}

/* ---- the test's side of the peers ---------------------------------------- */

/* Starts this program as a peer; returns its slot. */
static int kid_spawn(const char *role, int idx, int arg)
{
	char sarg[16];

	snprintf(sarg, sizeof(sarg), "%d", arg);
	return kid_start("func_rdm_peers", role, idx, sarg);
}

static void kid_get(int i, uint32_t type, void *p, uint32_t cap,
		    uint32_t *len)
{
	int ret = msg_get(kids[i].fd, type, p, cap, len, STEP_MS);

	if (ret)
		print_message("peer %d: no message %u: %s\n", i, type,
			      fi_strerror(-ret));
	assert_int_equal(ret, 0);
}

/* ---- the test's own endpoint ("A") talking to peers --------------------------- */

/* Swaps names with a peer: returns its address in our AV. */
static fi_addr_t host_meet(struct host *h, int kid)
{
	uint8_t name[NAME_LEN];
	fi_addr_t addr;
	uint32_t len;

	kid_get(kid, M_NAMES, name, sizeof(name), &len);
	assert_int_equal(len, NAME_LEN);
	assert_int_equal(fi_av_insert(h->n.av, name, 1, &addr, 0, NULL), 1);
	kid_put(kid, M_NAMES, h->n.name, NAME_LEN);
	return addr;
}

static void host_wait(struct host *h, struct op *op, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	while (!op->ndone && now_ms() < deadline)
		host_drain(h);
	assert_int_equal(op->ndone, 1);
}

/* A ping in flight to an echo peer (one at a time). */
struct pinger {
	fi_addr_t peer;
	uint32_t seq;
	size_t len;
	uint8_t *sbuf, *rbuf;
	struct op sop, rop;
	bool busy;
	int pongs;
};

static void pinger_init(struct pinger *p, fi_addr_t peer, size_t len,
			size_t max)
{
	memset(p, 0, sizeof(*p));
	p->peer = peer;
	p->len = len;
	p->sbuf = malloc(max);
	p->rbuf = malloc(max);
	assert_non_null(p->sbuf);
	assert_non_null(p->rbuf);
}

static void pinger_fini(struct pinger *p)
{
	assert_false(p->busy);
	free(p->sbuf);
	free(p->rbuf);
}

/* Starts a ping when idle; checks the pong when both halves are in. */
static void pinger_step(struct host *h, struct pinger *p)
{
	if (p->busy) {
		if (!p->sop.ndone || !p->rop.ndone)
			return;
		assert_int_equal(p->sop.ndone, 1);
		assert_int_equal(p->sop.err, 0);
		assert_int_equal(p->rop.ndone, 1);
		assert_int_equal(p->rop.err, 0);
		assert_int_equal(p->rop.len, p->len);
		assert_int_equal(p->rop.src, p->peer);
		assert_int_equal(p->rop.tag, TAG_PONG | p->seq);
		assert_true(check(p->rbuf, p->len, p->seq));
		p->pongs++;
		p->busy = false;
		return;
	}
	p->seq++;
	fill(p->sbuf, p->len, p->seq);
	memset(p->rbuf, 0, p->len);
	memset(&p->rop, 0, sizeof(p->rop));
	assert_int_equal(fi_trecv(h->n.ep, p->rbuf, p->len, NULL, p->peer,
				  TAG_PONG | p->seq, 0, &p->rop), 0);
	host_send(h, p->sbuf, p->len, p->peer, TAG_PING | p->seq, &p->sop);
	p->busy = true;
}

static void pinger_finish(struct host *h, struct pinger *p)
{
	int64_t deadline = now_ms() + WAIT_MS;

	while (p->busy && now_ms() < deadline) {
		host_drain(h);
		pinger_step(h, p);
	}
	assert_false(p->busy);
}

static void host_ping(struct host *h, fi_addr_t peer, size_t len)
{
	struct pinger p;

	pinger_init(&p, peer, len, len);
	pinger_step(h, &p);
	pinger_finish(h, &p);
	assert_int_equal(p.pongs, 1);
	pinger_fini(&p);
}

/* Pings of sizes on both sides of the eager limit, and a rendezvous. */
static void host_ping_sizes(struct host *h, fi_addr_t peer)
{
	size_t sizes[] = { 1, h->f.eager, h->f.eager + 1,
			   h->f.rndv + 2 * h->f.eager };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		host_ping(h, peer, sizes[i]);
}

/* The greeting an echo peer sends first (it makes the connection). */
static void host_post_hello(struct host *h, int idx, struct op *op)
{
	static uint8_t hello[MAX_KIDS][8];

	memset(op, 0, sizeof(*op));
	assert_int_equal(fi_trecv(h->n.ep, hello[idx], sizeof(hello[idx]),
				  NULL, FI_ADDR_UNSPEC,
				  TAG_HELLO | (uint64_t)idx, 0, op), 0);
}

static void host_expect_hello(struct host *h, struct op *op, fi_addr_t from)
{
	host_wait(h, op, WAIT_MS);
	assert_int_equal(op->err, 0);
	assert_int_equal(op->len, 6);
	assert_int_equal(op->src, from);
}

/* ---- tests: one process -------------------------------------------------------- */

/* LFV_RDM_PEERS_NEP endpoints (32) of one domain on one AV, all to all. */
static void test_many_endpoints(void **state)
{
	int g = env_int("LFV_RDM_PEERS_NEP", 32), i;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct node *nodes = calloc((size_t)g, sizeof(*nodes));
	fi_addr_t *addr = calloc((size_t)g, sizeof(*addr));
	uint8_t *names = malloc((size_t)g * NAME_LEN);
	struct fid_av *av;
	struct a2a x;
	struct fab f;
	int64_t t0;

	(void)state;
	assert_true(g >= 2);
	assert_non_null(nodes);
	assert_non_null(addr);
	assert_non_null(names);
	t0 = now_ms();
	assert_int_equal(fab_open(&f, 128), 0);
	assert_int_equal(fi_av_open(f.domain, &av_attr, &av, NULL), 0);
	for (i = 0; i < g; i++) {
		assert_int_equal(node_open(&f, av, &nodes[i]), 0);
		memcpy(names + (size_t)i * NAME_LEN, nodes[i].name, NAME_LEN);
	}
	assert_int_equal(fi_av_insert(av, names, (size_t)g, addr, 0, NULL),
			 g);
	print_message("%d endpoints open in %ld ms\n", g,
		      (long)(now_ms() - t0));
	t0 = now_ms();
	if (a2a_init(&x, &f, nodes, g, 0, g, addr) ||
	    a2a_run(&x, 2 * STEP_MS)) {
		print_message("all-to-all: %s\n", x.why);
		fail();
	}
	print_message("%d messages in %ld ms\n", g * (g - 1) * NSIZES,
		      (long)(now_ms() - t0));
	a2a_fini(&x);
	t0 = now_ms();
	for (i = 0; i < g; i++)
		assert_int_equal(node_close(&nodes[i]), 0);
	print_message("closed in %ld ms\n", (long)(now_ms() - t0));
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fab_close(&f), 0);
	free(nodes);
	free(addr);
	free(names);
}

/* Rounds of two fresh endpoints that both send before either polls: each
 * side's first send starts a handshake before the other's request has
 * been read, so the requests cross every time. */
static void test_simultaneous_local(void **state)
{
	int rounds = env_int("LFV_RDM_PEERS_ROUNDS", 10), round, i, v;
	struct node n[2];
	struct sim s[2];
	fi_addr_t peer[2];
	struct fab f;
	int64_t deadline;

	(void)state;
	assert_int_equal(fab_open(&f, 64), 0);
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < 2; i++)
			assert_int_equal(node_open(&f, NULL, &n[i]), 0);
		for (i = 0; i < 2; i++) {
			assert_int_equal(fi_av_insert(n[i].av, n[1 - i].name,
						      1, &peer[i], 0, NULL), 1);
			assert_int_equal(sim_init(&s[i], &n[i], peer[i], i,
						  1 - i, f.eager), 0);
		}
		for (i = 0; i < 2; i++)
			assert_int_equal(sim_send(&s[i]), 0);
		for (i = 0; i < 2; i++)
			assert_int_equal(sim_post(&s[i]), 0);
		deadline = now_ms() + WAIT_MS;
		while (!(sim_complete(&s[0]) && sim_complete(&s[1])) &&
		       now_ms() < deadline)
			for (i = 0; i < 2; i++)
				assert_int_equal(sim_drain(&s[i]), 0);
		for (i = 0; i < 2; i++) {
			v = sim_verify(&s[i]);
			if (v)
				print_message("round %d side %d: message %d "
					      "(%d of %d completions)\n",
					      round, i, v, s[i].done,
					      2 * SIM_MSGS);
			assert_int_equal(v, 0);
		}
		for (i = 0; i < 2; i++) {
			sim_fini(&s[i]);
			assert_int_equal(node_close(&n[i]), 0);
		}
	}
	assert_int_equal(fab_close(&f), 0);
}

/* FI_LOCAL_COMM: an endpoint sends to its own address (eager and
 * rendezvous); FI_SOURCE is that address. */
static void test_send_to_self(void **state)
{
	size_t len[2], i;
	struct host h;
	struct op sop, rop;
	fi_addr_t self;
	uint8_t *sbuf, *rbuf;

	(void)state;
	host_open(&h);
	len[0] = 100;
	len[1] = h.f.rndv + 5;
	sbuf = malloc(len[1]);
	rbuf = malloc(len[1]);
	assert_non_null(sbuf);
	assert_non_null(rbuf);
	assert_int_equal(fi_av_insert(h.n.av, h.n.name, 1, &self, 0, NULL), 1);
	for (i = 0; i < 2; i++) {
		fill(sbuf, len[i], i + 77);
		memset(rbuf, 0, len[i]);
		memset(&rop, 0, sizeof(rop));
		assert_int_equal(fi_trecv(h.n.ep, rbuf, len[i], NULL,
					  FI_ADDR_UNSPEC, 3, 0, &rop), 0);
		host_send(&h, sbuf, len[i], self, 3, &sop);
		host_wait(&h, &rop, WAIT_MS);
		host_wait(&h, &sop, WAIT_MS);
		assert_int_equal(sop.err, 0);
		assert_int_equal(rop.err, 0);
		assert_int_equal(rop.len, len[i]);
		assert_int_equal(rop.src, self);
		assert_true(check(rbuf, len[i], i + 77));
	}
	free(sbuf);
	free(rbuf);
	host_close(&h);
}

/* Two endpoints of one process, one AV each; a has b at ab, b has a at
 * ba. */
struct pair {
	struct fab f;
	struct node a, b;
	fi_addr_t ab, ba;
	int stray;
};

static void pair_open(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(fab_open(&p->f, 0), 0);
	assert_int_equal(node_open(&p->f, NULL, &p->a), 0);
	assert_int_equal(node_open(&p->f, NULL, &p->b), 0);
	assert_int_equal(fi_av_insert(p->a.av, p->b.name, 1, &p->ab, 0, NULL),
			 1);
	assert_int_equal(fi_av_insert(p->b.av, p->a.name, 1, &p->ba, 0, NULL),
			 1);
}

static void pair_close(struct pair *p)
{
	assert_int_equal(node_close(&p->a), 0);
	assert_int_equal(node_close(&p->b), 0);
	assert_int_equal(fab_close(&p->f), 0);
	assert_int_equal(p->stray, 0);
}

static void pair_drain(struct pair *p)
{
	assert_true(drain_cq(p->a.cq, &p->stray) >= 0);
	assert_true(drain_cq(p->b.cq, &p->stray) >= 0);
}

static void pair_wait(struct pair *p, struct op *op, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	while (!op->ndone && now_ms() < deadline)
		pair_drain(p);
}

/* One tagged message from -> to (to's address for from: dest), which must
 * arrive from src; returns nothing, asserts. */
static void pair_msg(struct pair *p, struct node *from, struct node *to,
		     fi_addr_t dest, fi_addr_t src, uint64_t tag)
{
	struct op sop = { 0 }, rop = { 0 };
	char got[16] = { 0 };

	assert_int_equal(fi_trecv(to->ep, got, sizeof(got), NULL,
				  FI_ADDR_UNSPEC, tag, 0, &rop), 0);
	assert_int_equal(fi_tsend(from->ep, "pair", 5, NULL, dest, tag, &sop),
			 0);
	pair_wait(p, &rop, WAIT_MS);
	pair_wait(p, &sop, WAIT_MS);
	assert_int_equal(sop.ndone, 1);
	assert_int_equal(sop.err, 0);
	assert_int_equal(rop.ndone, 1);
	assert_int_equal(rop.err, 0);
	assert_int_equal(rop.src, src);
	assert_string_equal(got, "pair");
}

/* fi_av_remove of a live peer: the address is gone, so sends to it fail
 * at once; they do not travel over the connection made before. */
static void test_removed_address(void **state)
{
	struct op rop = { 0 };
	struct pair p;
	char got[16];

	(void)state;
	pair_open(&p);
	pair_msg(&p, &p.a, &p.b, p.ab, p.ba, 1);
	pair_msg(&p, &p.b, &p.a, p.ba, p.ab, 2);
	assert_int_equal(fi_av_remove(p.a.av, &p.ab, 1, 0), 0);
	assert_int_equal(fi_trecv(p.b.ep, got, sizeof(got), NULL,
				  FI_ADDR_UNSPEC, 3, 0, &rop), 0);
	assert_int_equal(fi_tsend(p.a.ep, "gone", 5, NULL, p.ab, 3, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_tinject(p.a.ep, "gone", 5, p.ab, 3), -FI_EINVAL);
	pair_wait(&p, &rop, 300);
	assert_int_equal(rop.ndone, 0);
	assert_int_equal(fi_cancel(&p.b.ep->fid, &rop), 0);
	pair_wait(&p, &rop, WAIT_MS);
	assert_int_equal(rop.err, FI_ECANCELED);
	/* b still reaches a, which no longer knows who that is. */
	pair_msg(&p, &p.b, &p.a, p.ba, FI_ADDR_NOTAVAIL, 6);
	/* Inserted again, the peer is reachable at its new address. */
	assert_int_equal(fi_av_insert(p.a.av, p.b.name, 1, &p.ab, 0, NULL), 1);
	pair_msg(&p, &p.a, &p.b, p.ab, p.ba, 4);
	pair_msg(&p, &p.b, &p.a, p.ba, p.ab, 5);
	pair_close(&p);
}

/* A handshake to nobody is still being retried when its address is
 * removed from the AV (whose address handle goes with it): the retries
 * must not use that handle, the send fails in time, and the endpoint's
 * control QP keeps working for new connections both ways. */
static void test_remove_during_handshake(void **state)
{
	uint8_t nobody[NAME_LEN];
	struct op xop = { 0 };
	struct pair p;
	fi_addr_t ax;
	uint32_t qpn;
	int64_t t0;

	(void)state;
	pair_open(&p);
	/* b's GID with a QP number nobody has. */
	memcpy(nobody, p.b.name, NAME_LEN);
	qpn = 0xfffff0;
	memcpy(nobody + 16, &qpn, sizeof(qpn));
	assert_int_equal(fi_av_insert(p.a.av, nobody, 1, &ax, 0, NULL), 1);
	t0 = now_ms();
	assert_int_equal(fi_tsend(p.a.ep, "x", 2, NULL, ax, 9, &xop), 0);
	pair_wait(&p, &xop, 300);
	assert_int_equal(fi_av_remove(p.a.av, &ax, 1, 0), 0);
	pair_wait(&p, &xop, 500);
	/* New connections both ways over a's control QP. */
	pair_msg(&p, &p.b, &p.a, p.ba, p.ab, 1);
	pair_msg(&p, &p.a, &p.b, p.ab, p.ba, 2);
	pair_wait(&p, &xop, WAIT_MS);
	assert_int_equal(xop.ndone, 1);
	assert_int_equal(xop.err, FI_EHOSTUNREACH);
	print_message("handshake to nobody failed after %ld ms\n",
		      (long)(now_ms() - t0));
	pair_close(&p);
}

/* ---- tests: several processes ------------------------------------------------- */

/* LFV_RDM_PEERS_PROCS processes (4) of LFV_RDM_PEERS_K endpoints (4) each,
 * all to all; the test only relays names and collects statuses. */
static void test_processes(void **state)
{
	int np = env_int("LFV_RDM_PEERS_PROCS", 4);
	int k = env_int("LFV_RDM_PEERS_K", 4), i, slot[MAX_KIDS];
	uint8_t names[MSG_MAX];
	uint32_t len, total = 0;
	int64_t t0 = now_ms();

	(void)state;
	assert_true(np >= 2 && np <= MAX_KIDS);
	assert_true(np * k * NAME_LEN <= MSG_MAX);
	for (i = 0; i < np; i++)
		slot[i] = kid_spawn("a2a", i, k);
	for (i = 0; i < np; i++) {
		kid_get(slot[i], M_NAMES, names + total, MSG_MAX - total,
			&len);
		assert_int_equal(len, (uint32_t)(k * NAME_LEN));
		total += len;
	}
	for (i = 0; i < np; i++)
		kid_put(slot[i], M_NAMES, names, total);
	for (i = 0; i < np; i++)
		kid_get(slot[i], M_DONE, NULL, 0, NULL);
	for (i = 0; i < np; i++)
		kid_put(slot[i], M_EXIT, NULL, 0);
	for (i = 0; i < np; i++)
		kid_expect_exit(slot[i]);
	print_message("%d processes x %d endpoints: %ld ms\n", np, k,
		      (long)(now_ms() - t0));
}

/* Two processes, rounds of fresh endpoints that both send first. */
static void test_simultaneous_procs(void **state)
{
	int rounds = env_int("LFV_RDM_PEERS_ROUNDS", 10), round, i, s[2];
	uint8_t name[2][NAME_LEN];
	uint32_t len;

	(void)state;
	for (i = 0; i < 2; i++)
		s[i] = kid_spawn("sim", i, rounds);
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < 2; i++) {
			kid_get(s[i], M_NAMES, name[i], NAME_LEN, &len);
			assert_int_equal(len, NAME_LEN);
		}
		for (i = 0; i < 2; i++)
			kid_put(s[i], M_NAMES, name[1 - i], NAME_LEN);
		for (i = 0; i < 2; i++)
			kid_put(s[i], M_GO, NULL, 0);
		for (i = 0; i < 2; i++)
			kid_get(s[i], M_DONE, NULL, 0, NULL);
		for (i = 0; i < 2; i++)
			kid_put(s[i], M_EXIT, NULL, 0);
	}
	for (i = 0; i < 2; i++)
		kid_expect_exit(s[i]);
}

/* Echo peers B and C. B is killed while A has messages to it in flight;
 * they, and the ones A sends to B afterwards, complete in error in
 * bounded time, while A's traffic with C goes on; closing A does not
 * hang. */
static void test_peer_exit(void **state)
{
	enum { NLATE = 8, NSINK = 8 };
	struct op hb, hc, sink[NSINK], late[NLATE], more[2];
	uint8_t *big, small[128];
	struct pinger pc;
	struct host h;
	fi_addr_t fb, fc;
	int b, c, i, pending;
	int64_t t0, deadline;

	(void)state;
	b = kid_spawn("echo", 1, 0);
	c = kid_spawn("echo", 2, 0);
	host_open(&h);
	big = malloc(h.f.rndv);
	assert_non_null(big);
	memset(big, 0xb1, h.f.rndv);
	memset(small, 0x5b, sizeof(small));
	fb = host_meet(&h, b);
	fc = host_meet(&h, c);
	host_post_hello(&h, 1, &hb);
	host_post_hello(&h, 2, &hc);
	kid_put(b, M_GO, NULL, 0);
	kid_put(c, M_GO, NULL, 0);
	host_expect_hello(&h, &hb, fb);
	host_expect_hello(&h, &hc, fc);
	host_ping(&h, fb, 64);
	host_ping(&h, fc, 64);

	/* Messages B never receives: its device acknowledges them. */
	for (i = 0; i < NSINK; i++)
		host_send(&h, small, sizeof(small), fb, TAG_SINK | (uint64_t)i,
			  &sink[i]);
	for (i = 0; i < NSINK; i++) {
		host_wait(&h, &sink[i], WAIT_MS);
		assert_int_equal(sink[i].err, 0);
	}

	kid_kill(b);
	/* In flight to the dead peer: eager ones and a rendezvous (its RTS
	 * cannot be delivered, so no FIN is awaited). */
	t0 = now_ms();
	for (i = 0; i < NLATE; i++)
		host_send(&h, i == 3 ? big : small,
			  i == 3 ? h.f.rndv : sizeof(small), fb,
			  TAG_SINK | (uint64_t)(100 + i), &late[i]);
	pinger_init(&pc, fc, 256, 256);
	deadline = now_ms() + STEP_MS / 2;
	do {
		host_drain(&h);
		pinger_step(&h, &pc);
		for (i = pending = 0; i < NLATE; i++)
			pending += !late[i].ndone;
	} while (pending && now_ms() < deadline);
	if (pending)
		print_message("%d sends to the dead peer never completed\n",
			      pending);
	assert_int_equal(pending, 0);
	for (i = 0; i < NLATE; i++) {
		assert_int_equal(late[i].ndone, 1);
		if (!peer_gone_err(late[i].err))
			print_message("send %d: err %d\n", i, late[i].err);
		assert_true(peer_gone_err(late[i].err));
	}
	print_message("sends to the dead peer failed within %ld ms (%s, "
		      "then %s); %d pings to the live one meanwhile\n",
		      (long)(now_ms() - t0), fi_strerror(late[0].err),
		      fi_strerror(late[NLATE - 1].err), pc.pongs);

	/* Sends after the failure connect again and find nobody. */
	t0 = now_ms();
	host_send(&h, small, 16, fb, TAG_SINK | 200, &more[0]);
	host_send(&h, small, 32, fb, TAG_SINK | 201, &more[1]);
	deadline = now_ms() + STEP_MS / 2;
	while ((!more[0].ndone || !more[1].ndone) && now_ms() < deadline) {
		host_drain(&h);
		pinger_step(&h, &pc);
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(more[i].ndone, 1);
		assert_int_equal(more[i].err, FI_EHOSTUNREACH);
	}
	print_message("new handshake to the dead peer failed in %ld ms\n",
		      (long)(now_ms() - t0));
	pinger_finish(&h, &pc);
	assert_true(pc.pongs >= 2);
	pinger_fini(&pc);
	host_ping_sizes(&h, fc);

	kid_put(c, M_EXIT, NULL, 0);
	kid_expect_exit(c);
	free(big);
	host_close(&h);
}

/* A rendezvous send whose RTS reached B (B has not received it, so A
 * waits for its FIN) when B is killed: once A's connection to B fails
 * (here: A sends B another message), the rendezvous completes in error
 * too. */
static void test_peer_exit_rendezvous(void **state)
{
	struct op hb, rndv, after;
	struct host h;
	uint8_t *big;
	fi_addr_t fb;
	int b;
	int64_t deadline;

	(void)state;
	b = kid_spawn("echo", 1, 0);
	host_open(&h);
	big = malloc(h.f.rndv);
	assert_non_null(big);
	memset(big, 0x3c, h.f.rndv);
	fb = host_meet(&h, b);
	host_post_hello(&h, 1, &hb);
	kid_put(b, M_GO, NULL, 0);
	host_expect_hello(&h, &hb, fb);
	host_ping(&h, fb, 64);
	host_send(&h, big, h.f.rndv, fb, TAG_SINK | 1, &rndv);
	deadline = now_ms() + 500;
	while (now_ms() < deadline)
		host_drain(&h);
	assert_int_equal(rndv.ndone, 0);	/* B has not received it */
	kid_kill(b);
	host_send(&h, "x", 2, fb, TAG_SINK | 2, &after);
	deadline = now_ms() + STEP_MS / 2;
	while ((!rndv.ndone || !after.ndone) && now_ms() < deadline)
		host_drain(&h);
	assert_int_equal(after.ndone, 1);
	assert_true(peer_gone_err(after.err));
	assert_int_equal(rndv.ndone, 1);
	assert_true(peer_gone_err(rndv.err));
	free(big);
	host_close(&h);
}

/* A rendezvous send to an address nobody answers fails with the
 * handshake; the registration made for its payload goes with it, so the
 * domain closes. */
static void test_failed_rendezvous_close(void **state)
{
	uint8_t nobody[NAME_LEN], *big;
	struct op op;
	struct host h;
	fi_addr_t ax;
	uint32_t qpn = 0xfffff0;

	(void)state;
	host_open(&h);
	big = calloc(1, h.f.rndv + 5);
	assert_non_null(big);
	memcpy(nobody, h.n.name, NAME_LEN);
	memcpy(nobody + 16, &qpn, sizeof(qpn));
	assert_int_equal(fi_av_insert(h.n.av, nobody, 1, &ax, 0, NULL), 1);
	host_send(&h, big, h.f.rndv + 5, ax, 1, &op);
	host_wait(&h, &op, WAIT_MS);
	assert_int_equal(op.err, FI_EHOSTUNREACH);
	host_close(&h);
	free(big);
}

/* An endpoint closed while a rendezvous send of it waits for its FIN
 * (the receiver has not received the message): the send is dropped with
 * everything it holds, so the domain closes. */
static void test_close_with_rendezvous_pending(void **state)
{
	struct op op = { 0 };
	struct pair p;
	uint8_t *big;
	size_t len;
	int64_t deadline;

	(void)state;
	pair_open(&p);
	len = p.f.rndv + 5;
	big = calloc(1, len);
	assert_non_null(big);
	assert_int_equal(fi_tsend(p.a.ep, big, len, NULL, p.ab, 1, &op), 0);
	deadline = now_ms() + 500;
	while (now_ms() < deadline)
		pair_drain(&p);
	assert_int_equal(op.ndone, 0);	/* b has not received it */
	pair_close(&p);
	free(big);
}

/* Host A and one echo peer B that said hello; B's address in A's AV. */
static fi_addr_t host_start_echo(struct host *h, int *kid)
{
	struct op hb;
	fi_addr_t fb;

	*kid = kid_spawn("echo", 1, 0);
	host_open(h);
	fb = host_meet(h, *kid);
	host_post_hello(h, 1, &hb);
	kid_put(*kid, M_GO, NULL, 0);
	host_expect_hello(h, &hb, fb);
	return fb;
}

/* B sends A a rendezvous message A has not received when B is killed; A's
 * connection to B fails (A sends B something); then A posts the receive:
 * it completes, in error, as the payload cannot be read. */
static void test_peer_exit_unexpected_rendezvous(void **state)
{
	struct op ping, pong, after;
	uint8_t *sbuf, *rbuf;
	struct host h;
	fi_addr_t fb;
	size_t len;
	int b;
	int64_t deadline;

	(void)state;
	fb = host_start_echo(&h, &b);
	len = h.f.rndv;
	sbuf = malloc(len);
	rbuf = malloc(len);
	assert_non_null(sbuf);
	assert_non_null(rbuf);
	fill(sbuf, len, 5);
	/* A ping whose pong (an RTS) nobody receives yet. */
	host_send(&h, sbuf, len, fb, TAG_PING | 77, &ping);
	host_wait(&h, &ping, WAIT_MS);
	assert_int_equal(ping.err, 0);
	deadline = now_ms() + 500;
	while (now_ms() < deadline)
		host_drain(&h);
	kid_kill(b);
	host_send(&h, "x", 2, fb, TAG_SINK | 1, &after);
	host_wait(&h, &after, STEP_MS / 2);
	assert_true(peer_gone_err(after.err));
	memset(&pong, 0, sizeof(pong));
	assert_int_equal(fi_trecv(h.n.ep, rbuf, len, NULL, fb, TAG_PONG | 77,
				  0, &pong), 0);
	host_wait(&h, &pong, STEP_MS / 2);
	assert_int_not_equal(pong.err, 0);
	free(sbuf);
	free(rbuf);
	host_close(&h);
}

/* A's rendezvous send waits for B's FIN (B got the RTS, nobody receives
 * it) when B is killed; A sends nothing more. Its send still completes,
 * in error: an idle connection with a FIN outstanding is probed. */
static void test_peer_exit_fin_wait(void **state)
{
	struct op fin;
	struct host h;
	uint8_t *sbuf;
	fi_addr_t fb;
	size_t len;
	int64_t deadline, t0;
	int b;

	(void)state;
	fb = host_start_echo(&h, &b);
	len = h.f.rndv;
	sbuf = malloc(len);
	assert_non_null(sbuf);
	fill(sbuf, len, 6);
	host_send(&h, sbuf, len, fb, TAG_SINK | 2, &fin);
	deadline = now_ms() + 500;
	while (now_ms() < deadline)
		host_drain(&h);
	assert_int_equal(fin.ndone, 0);	/* the FIN cannot have come */
	kid_kill(b);
	t0 = now_ms();
	host_wait(&h, &fin, STEP_MS / 2);
	assert_true(peer_gone_err(fin.err));
	print_message("a FIN-waiting send to the dead peer failed within "
		      "%ld ms\n", (long)(now_ms() - t0));
	free(sbuf);
	host_close(&h);
}

/* B exits; B' starts (a new endpoint, normally at a new address: rxe
 * hands out QP numbers cyclically); A swaps the address in its AV and
 * traffic resumes, with B' making the first connection. */
static void test_peer_restart(void **state)
{
	uint8_t old_name[NAME_LEN];
	struct op hb, hb2;
	struct host h;
	fi_addr_t fb, fb2;
	size_t len = NAME_LEN;
	int b, b2;

	(void)state;
	b = kid_spawn("echo", 1, 0);
	host_open(&h);
	fb = host_meet(&h, b);
	host_post_hello(&h, 1, &hb);
	kid_put(b, M_GO, NULL, 0);
	host_expect_hello(&h, &hb, fb);
	host_ping_sizes(&h, fb);
	assert_int_equal(fi_av_lookup(h.n.av, fb, old_name, &len), 0);
	kid_put(b, M_EXIT, NULL, 0);
	kid_expect_exit(b);

	b2 = kid_spawn("echo", 2, 0);
	assert_int_equal(fi_av_remove(h.n.av, &fb, 1, 0), 0);
	fb2 = host_meet(&h, b2);
	assert_true(fb2 != fb);
	len = NAME_LEN;
	{
		uint8_t new_name[NAME_LEN];

		assert_int_equal(fi_av_lookup(h.n.av, fb2, new_name, &len), 0);
		print_message("restarted peer at %s address\n",
			      memcmp(old_name, new_name, NAME_LEN) ?
			      "a new" : "THE SAME");
	}
	host_post_hello(&h, 2, &hb2);
	kid_put(b2, M_GO, NULL, 0);
	host_expect_hello(&h, &hb2, fb2);
	host_ping_sizes(&h, fb2);
	kid_put(b2, M_EXIT, NULL, 0);
	kid_expect_exit(b2);
	host_close(&h);
}

/* ---- bad input ------------------------------------------------------------------ */


/* Endpoint attributes beyond what the provider offers. */
static void bad_endpoint_attrs(struct fab *f)
{
	struct fi_info *info = fi_dupinfo(f->info);
	struct fid_ep *ep;

	assert_non_null(info);
	info->tx_attr->iov_limit = 1000;
	assert_int_equal(fi_endpoint(f->domain, info, &ep, NULL), -FI_EINVAL);
	info->tx_attr->iov_limit = f->info->tx_attr->iov_limit;
	info->tx_attr->inject_size = f->eager + 1;
	assert_int_equal(fi_endpoint(f->domain, info, &ep, NULL), -FI_EINVAL);
	fi_freeinfo(info);
}

/* Everything that needs fi_enable first, and the binds. */
static void bad_before_enable(struct fab *f, struct node *n,
			      struct fid_cntr *cntr, struct fid_eq *eq)
{
	struct fi_av_attr ctx_attr = { .type = FI_AV_TABLE, .rx_ctx_bits = 2 };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_msg_tagged tmsg = { 0 };
	struct fi_msg msg = { 0 };
	struct fid_av *ctx_av;
	uint8_t buf[64];
	uint64_t flags;
	size_t len = sizeof(buf);

	assert_int_equal(fi_endpoint(f->domain, f->info, &n->ep, NULL), 0);
	assert_int_equal(fi_getname(&n->ep->fid, buf, &len), -FI_EOPBADSTATE);
	assert_int_equal(fi_send(n->ep, buf, 8, NULL, 0, NULL),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_tsend(n->ep, buf, 8, NULL, 0, 1, NULL),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_inject(n->ep, buf, 8, 0), -FI_EOPBADSTATE);
	assert_int_equal(fi_sendmsg(n->ep, &msg, 0), -FI_EOPBADSTATE);
	assert_int_equal(fi_recv(n->ep, buf, 8, NULL, 0, NULL),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_trecv(n->ep, buf, 8, NULL, 0, 1, 0, NULL),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_recvmsg(n->ep, &msg, 0), -FI_EOPBADSTATE);
	assert_int_equal(fi_trecvmsg(n->ep, &tmsg, 0), -FI_EOPBADSTATE);
	assert_int_equal(func_tx_left(n->ep), -FI_EOPBADSTATE);
	assert_int_equal(fi_cancel(&n->ep->fid, buf), -FI_ENOENT);
	assert_int_equal(fi_enable(n->ep), -FI_ENOAV);

	assert_int_equal(fi_ep_bind(n->ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_cq_open(f->domain, &cq_attr, &n->cq, NULL), 0);
	assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, 0), -FI_EBADFLAGS);
	assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, FI_READ),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT), 0);
	assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT),
			 -FI_EINVAL);
	assert_int_equal(fi_ep_bind(n->ep, &n->cq->fid, FI_RECV), 0);
	assert_int_equal(fi_ep_bind(n->ep, &cntr->fid, 0), -FI_EBADFLAGS);
	assert_int_equal(fi_ep_bind(n->ep, &cntr->fid, FI_TAGGED),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_ep_bind(n->ep, &cntr->fid, FI_SEND), 0);
	assert_int_equal(fi_ep_bind(n->ep, &cntr->fid, FI_SEND), -FI_EINVAL);
	assert_int_equal(fi_ep_bind(n->ep, &eq->fid, 0), -FI_EINVAL);
	/* An AV for scalable endpoints takes other names. */
	assert_int_equal(fi_av_open(f->domain, &ctx_attr, &ctx_av, NULL), 0);
	assert_int_equal(fi_ep_bind(n->ep, &ctx_av->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&ctx_av->fid), 0);
	assert_int_equal(fi_av_open(f->domain, &av_attr, &n->av, NULL), 0);
	n->own_av = true;
	assert_int_equal(fi_ep_bind(n->ep, &n->av->fid, FI_SEND),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_ep_bind(n->ep, &n->av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(n->ep, &n->av->fid, 0), -FI_EINVAL);

	assert_int_equal(fi_control(&n->ep->fid, FI_GETOPSFLAG, NULL),
			 -FI_EINVAL);
	flags = FI_TRANSMIT | FI_RECV;
	assert_int_equal(fi_control(&n->ep->fid, FI_GETOPSFLAG, &flags),
			 -FI_EINVAL);
	flags = 0;
	assert_int_equal(fi_control(&n->ep->fid, FI_SETOPSFLAG, &flags),
			 -FI_EINVAL);
	assert_int_equal(fi_control(&n->ep->fid, FI_GETWAIT, &flags),
			 -FI_ENOSYS);
}

static void bad_after_enable(struct fab *f, struct node *n)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_cq *cq2;
	uint8_t buf[64];
	size_t len;
	int v = 1;

	assert_int_equal(fi_enable(n->ep), 0);
	assert_int_equal(fi_enable(n->ep), -FI_EOPBADSTATE);
	assert_int_equal(fi_cq_open(f->domain, &cq_attr, &cq2, NULL), 0);
	assert_int_equal(fi_ep_bind(n->ep, &cq2->fid, FI_TRANSMIT),
			 -FI_EOPBADSTATE);
	assert_int_equal(fi_close(&cq2->fid), 0);
	assert_int_equal(fi_ep_bind(n->ep, &n->av->fid, 0), -FI_EOPBADSTATE);
	/* Bound objects stay while the endpoint holds them. */
	assert_int_equal(fi_close(&n->cq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&n->av->fid), -FI_EBUSY);
	len = 8;
	assert_int_equal(fi_getname(&n->ep->fid, buf, &len), -FI_ETOOSMALL);
	assert_int_equal(len, NAME_LEN);
	assert_int_equal(fi_getname(&n->ep->fid, buf, NULL), -FI_EINVAL);
	n->namelen = sizeof(n->name);
	assert_int_equal(fi_getname(&n->ep->fid, n->name, &n->namelen), 0);
	assert_int_equal(n->namelen, NAME_LEN);
	/* What RDM does not do. */
	assert_int_equal(func_rx_left(n->ep), -FI_ENOSYS);
	assert_int_equal(fi_connect(n->ep, buf, NULL, 0), -FI_ENOSYS);
	assert_int_equal(fi_setopt(&n->ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_CM_DATA_SIZE, &v, sizeof(v)),
			 -FI_ENOPROTOOPT);
	assert_int_equal(fi_cancel(&n->ep->fid, buf), -FI_ENOENT);
}

/* Sends that must fail at once, taking no buffer and making no
 * completion. */
static void bad_sends(struct fab *f, struct node *n, fi_addr_t peer)
{
	size_t lim = f->info->tx_attr->iov_limit, i;
	size_t max = f->info->ep_attr->max_msg_size;
	struct iovec iov[16];
	struct fi_msg_tagged tmsg;
	struct fi_msg msg;
	uint8_t *buf = calloc(1, f->rndv + 2);
	ssize_t room = func_tx_left(n->ep);
	fi_addr_t bad[3] = { peer + 1000, FI_ADDR_NOTAVAIL, FI_ADDR_UNSPEC };

	assert_non_null(buf);
	assert_true(room > 0);
	assert_true(lim < 16);
	for (i = 0; i < 16; i++)
		iov[i] = (struct iovec){ .iov_base = buf, .iov_len = 4 };
	assert_int_equal(fi_sendv(n->ep, iov, NULL, lim + 1, peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_tsendv(n->ep, iov, NULL, lim + 1, peer, 1, NULL),
			 -FI_EINVAL);
	iov[0].iov_base = NULL;
	assert_int_equal(fi_sendv(n->ep, iov, NULL, 1, peer, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_send(n->ep, NULL, 10, NULL, peer, NULL),
			 -FI_EINVAL);
	iov[0].iov_base = buf;
	/* Lengths are checked before anything is read. */
	if (max < SIZE_MAX) {
		assert_int_equal(fi_send(n->ep, buf, max + 1, NULL, peer,
					 NULL), -FI_EMSGSIZE);
		assert_int_equal(fi_tsend(n->ep, buf, max + 1, NULL, peer, 1,
					  NULL), -FI_EMSGSIZE);
	}
	assert_int_equal(fi_inject(n->ep, buf, f->eager + 1, peer),
			 -FI_EMSGSIZE);
	assert_int_equal(fi_injectdata(n->ep, buf, f->eager + 1, 7, peer),
			 -FI_EMSGSIZE);
	assert_int_equal(fi_tinject(n->ep, buf, f->eager + 1, peer, 1),
			 -FI_EMSGSIZE);
	assert_int_equal(fi_tinjectdata(n->ep, buf, f->eager + 1, 7, peer, 1),
			 -FI_EMSGSIZE);
	iov[0].iov_len = f->eager + 1;
	msg = (struct fi_msg){ .msg_iov = iov, .iov_count = 1, .addr = peer };
	tmsg = (struct fi_msg_tagged){ .msg_iov = iov, .iov_count = 1,
				       .addr = peer, .tag = 1 };
	assert_int_equal(fi_sendmsg(n->ep, &msg, FI_INJECT), -FI_EMSGSIZE);
	assert_int_equal(fi_tsendmsg(n->ep, &tmsg, FI_INJECT), -FI_EMSGSIZE);
	iov[0].iov_len = 4;
	assert_int_equal(fi_sendmsg(n->ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_tsendmsg(n->ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_sendmsg(n->ep, &msg, FI_MULTI_RECV),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_sendmsg(n->ep, &msg, FI_PEEK), -FI_EBADFLAGS);
	assert_int_equal(fi_tsendmsg(n->ep, &tmsg, FI_CLAIM), -FI_EBADFLAGS);
	assert_int_equal(fi_tsendmsg(n->ep, &tmsg, FI_READ), -FI_EBADFLAGS);
	msg.iov_count = lim + 1;
	assert_int_equal(fi_sendmsg(n->ep, &msg, 0), -FI_EINVAL);
	msg.iov_count = 1;
	/* Addresses that are not in the AV, eager and rendezvous. */
	for (i = 0; i < 3; i++) {
		assert_int_equal(fi_send(n->ep, buf, 8, NULL, bad[i], NULL),
				 -FI_EINVAL);
		assert_int_equal(fi_tsend(n->ep, buf, f->rndv + 2, NULL,
					  bad[i], 1, NULL), -FI_EINVAL);
		assert_int_equal(fi_inject(n->ep, buf, 8, bad[i]), -FI_EINVAL);
		msg.addr = bad[i];
		assert_int_equal(fi_sendmsg(n->ep, &msg, 0), -FI_EINVAL);
	}
	assert_int_equal(func_tx_left(n->ep), room);
	free(buf);
}

static void bad_recvs(struct fab *f, struct node *n)
{
	size_t lim = f->info->rx_attr->iov_limit, i;
	struct iovec iov[16];
	struct fi_msg_tagged tmsg;
	struct fi_msg msg;
	uint8_t buf[64];

	assert_true(lim < 16);
	for (i = 0; i < 16; i++)
		iov[i] = (struct iovec){ .iov_base = buf, .iov_len = 4 };
	msg = (struct fi_msg){ .msg_iov = iov, .iov_count = 1,
			       .addr = FI_ADDR_UNSPEC };
	tmsg = (struct fi_msg_tagged){ .msg_iov = iov, .iov_count = 1,
				       .addr = FI_ADDR_UNSPEC };
	assert_int_equal(fi_recvmsg(n->ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(n->ep, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_recvmsg(n->ep, &msg, FI_PEEK), -FI_EBADFLAGS);
	assert_int_equal(fi_recvmsg(n->ep, &msg, FI_INJECT), -FI_EBADFLAGS);
	assert_int_equal(fi_trecvmsg(n->ep, &tmsg, FI_INJECT), -FI_EBADFLAGS);
	assert_int_equal(fi_trecvmsg(n->ep, &tmsg, FI_DISCARD), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(n->ep, &tmsg, FI_CLAIM), -FI_EINVAL);
	assert_int_equal(fi_recvv(n->ep, NULL, NULL, 1, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_trecvv(n->ep, NULL, NULL, 1, FI_ADDR_UNSPEC, 1, 0,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_recvv(n->ep, iov, NULL, lim + 1, FI_ADDR_UNSPEC,
				  NULL), -FI_EINVAL);
	assert_int_equal(fi_trecvv(n->ep, iov, NULL, lim + 1, FI_ADDR_UNSPEC,
				   1, 0, NULL), -FI_EINVAL);
	msg.iov_count = lim + 1;
	assert_int_equal(fi_recvmsg(n->ep, &msg, 0), -FI_EINVAL);
}

/* Every call with bad arguments returns its -FI_E*, consumes nothing and
 * makes no completion; the endpoint works afterwards. */
static void test_bad_input(void **state)
{
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_NONE };
	struct fi_cq_tagged_entry e;
	struct fid_cntr *cntr;
	struct fid_eq *eq;
	struct node n, peer;
	struct pair p;
	struct fab f;
	fi_addr_t np, pn;
	int64_t deadline;

	(void)state;
	assert_int_equal(fab_open(&f, 0), 0);
	bad_endpoint_attrs(&f);
	memset(&n, 0, sizeof(n));
	assert_int_equal(fi_cntr_open(f.domain, &cntr_attr, &cntr, NULL), 0);
	assert_int_equal(fi_eq_open(f.fabric, &eq_attr, &eq, NULL), 0);
	bad_before_enable(&f, &n, cntr, eq);
	bad_after_enable(&f, &n);
	assert_int_equal(node_open(&f, NULL, &peer), 0);
	assert_int_equal(fi_av_insert(n.av, peer.name, 1, &np, 0, NULL), 1);
	assert_int_equal(fi_av_insert(peer.av, n.name, 1, &pn, 0, NULL), 1);
	bad_sends(&f, &n, np);
	bad_recvs(&f, &n);
	/* Nothing completed, nothing was counted. */
	deadline = now_ms() + 200;
	while (now_ms() < deadline) {
		assert_int_equal(fi_cq_read(n.cq, &e, 1), -FI_EAGAIN);
		assert_int_equal(fi_cq_read(peer.cq, &e, 1), -FI_EAGAIN);
	}
	assert_int_equal(fi_cntr_read(cntr), 0);
	assert_int_equal(fi_cntr_readerr(cntr), 0);
	/* The endpoint still works, both ways. */
	memset(&p, 0, sizeof(p));
	p.a = n;
	p.b = peer;
	pair_msg(&p, &p.a, &p.b, np, pn, 1);
	pair_msg(&p, &p.b, &p.a, pn, np, 2);
	assert_int_equal(fi_cntr_read(cntr), 1);
	assert_int_equal(p.stray, 0);
	assert_int_equal(node_close(&n), 0);
	assert_int_equal(node_close(&peer), 0);
	test_close(cntr, eq);
	assert_int_equal(fab_close(&f), 0);
}

/* A receive into NULL with a length is refused like such a send is (it
 * would fault when a message comes). */
static void test_bad_recv_buffer(void **state)
{
	struct node n;
	struct fab f;
	struct op op = { 0 };
	ssize_t ret;
	int stray = 0;
	int64_t deadline;

	(void)state;
	assert_int_equal(fab_open(&f, 0), 0);
	assert_int_equal(node_open(&f, NULL, &n), 0);
	ret = fi_trecv(n.ep, NULL, 100, NULL, FI_ADDR_UNSPEC, 0x77, 0, &op);
	if (!ret) {
		/* Take it back before anything can match it. */
		assert_int_equal(fi_cancel(&n.ep->fid, &op), 0);
		deadline = now_ms() + WAIT_MS;
		while (!op.ndone && now_ms() < deadline)
			assert_true(drain_cq(n.cq, &stray) >= 0);
	}
	assert_int_equal(ret, -FI_EINVAL);
	assert_int_equal(fi_recv(n.ep, NULL, 100, NULL, FI_ADDR_UNSPEC, &op),
			 -FI_EINVAL);
	assert_int_equal(node_close(&n), 0);
	assert_int_equal(fab_close(&f), 0);
}

/* Sends whose iov is NULL with a count are refused (they are not read). */
static void test_bad_send_null_iov(void **state)
{
	struct fi_msg_tagged tmsg = { .iov_count = 1 };
	struct fi_msg msg = { .iov_count = 1 };
	struct node n, peer;
	struct fab f;
	fi_addr_t np;

	(void)state;
	assert_int_equal(fab_open(&f, 0), 0);
	assert_int_equal(node_open(&f, NULL, &n), 0);
	assert_int_equal(node_open(&f, NULL, &peer), 0);
	assert_int_equal(fi_av_insert(n.av, peer.name, 1, &np, 0, NULL), 1);
	msg.addr = np;
	tmsg.addr = np;
	assert_int_equal(fi_sendv(n.ep, NULL, NULL, 1, np, NULL), -FI_EINVAL);
	assert_int_equal(fi_tsendv(n.ep, NULL, NULL, 1, np, 1, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_sendmsg(n.ep, &msg, 0), -FI_EINVAL);
	assert_int_equal(fi_tsendmsg(n.ep, &tmsg, 0), -FI_EINVAL);
	assert_int_equal(node_close(&n), 0);
	assert_int_equal(node_close(&peer), 0);
	assert_int_equal(fab_close(&f), 0);
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[32];
	const struct CMUnitTest always[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_send_to_self),
		cmocka_unit_test(test_removed_address),
		cmocka_unit_test(test_remove_during_handshake),
		cmocka_unit_test(test_simultaneous_local),
		cmocka_unit_test(test_many_endpoints),
		cmocka_unit_test_teardown(test_processes, kids_teardown),
		cmocka_unit_test_teardown(test_simultaneous_procs,
					  kids_teardown),
		cmocka_unit_test_teardown(test_peer_exit, kids_teardown),
		cmocka_unit_test_teardown(test_peer_restart, kids_teardown),
		cmocka_unit_test(test_failed_rendezvous_close),
		cmocka_unit_test_teardown(test_peer_exit_unexpected_rendezvous,
					  kids_teardown),
		cmocka_unit_test_teardown(test_peer_exit_fin_wait,
					  kids_teardown),
		/* Each of these showed a bug once: a NULL send iov faulted,
		 * a NULL receive buffer was taken, a rendezvous send to a
		 * peer that died after the RTS never completed, and closing
		 * an endpoint with a queued rendezvous message faulted. */
		cmocka_unit_test(test_bad_send_null_iov),
		cmocka_unit_test(test_bad_recv_buffer),
		cmocka_unit_test_teardown(test_peer_exit_rendezvous,
					  kids_teardown),
		cmocka_unit_test(test_close_with_rendezvous_pending),
	};

	size_t n = 0, i;

	/* A dead peer is noticed FI_LFVERBS_RDM_LIVE_TIMEOUT (30 s by
	 * default) after the last completion: 8 here, inside each step's
	 * STEP_MS / 2 (set before the provider reads its parameters; the
	 * peer processes inherit it). */
	setenv("FI_LFVERBS_RDM_LIVE_TIMEOUT", "8", 0);
	if (argc == 6 && !strcmp(argv[1], "--peer"))
		return peer_main(argv);
	signal(SIGPIPE, SIG_IGN);
	func_require_device();
	for (i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		tests[n++] = always[i];
	if (getenv("LFV_RDM_PEERS_ONLY"))	/* e.g. "test_peer_*" */
		cmocka_set_test_filter(getenv("LFV_RDM_PEERS_ONLY"));
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
