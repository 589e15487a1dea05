/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_ring: the completion ring (lfv_ring) against DPDK's rte_ring (element
 * API, on plain memory, no EAL), Concurrency Kit's ck_ring (its typed
 * variants, which store the entry itself in the slot) and a mutex-protected
 * circular array like libfabric's util CQ, at the same entry size (48 and 8
 * bytes). Not a test: prints tables. See tests/bench/README.md.
 *
 *   bench_ring [--reps R] [--entries N] [--only SCEN]
 *       all scenarios (or one), both sizes
 *   bench_ring --callgrind-op IMPL:SCEN:SIZE N
 *       only N rounds of one same-thread scenario, for instruction counts
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ck_ring.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "lfv_ring.h"

#define BENCH_CAPACITY 1024
#define BENCH_MAX_BATCH 32
#define BENCH_MAX_PRODUCERS 4

struct pl48 {
	uint64_t w[6];
};

struct pl8 {
	uint64_t w[1];
};

/* ck's typed variants: the entry is copied into the ring buffer, as in
 * lfv_ring and rte_ring, instead of a pointer to it. */
CK_RING_PROTOTYPE(pl48, pl48)
CK_RING_PROTOTYPE(pl8, pl8)

/* ---- the mutex baseline: one lock around a circular array --------------- */

struct mring {
	pthread_mutex_t lock;
	unsigned char *buf;
	uint64_t head;
	uint64_t tail;
	uint64_t mask;
};

static inline unsigned mring_enq(struct mring *m, const void *e, unsigned n,
				 unsigned esz)
{
	const unsigned char *src = e;
	unsigned i;

	pthread_mutex_lock(&m->lock);
	if (m->tail - m->head + n > m->mask + 1) {
		pthread_mutex_unlock(&m->lock);
		return 0;
	}
	for (i = 0; i < n; i++)
		memcpy(m->buf + ((m->tail + i) & m->mask) * esz, src + i * esz,
		       esz);
	m->tail += n;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static inline unsigned mring_deq(struct mring *m, void *out, unsigned max,
				 unsigned esz)
{
	unsigned char *dst = out;
	unsigned i, n;

	pthread_mutex_lock(&m->lock);
	n = m->tail - m->head < max ? (unsigned)(m->tail - m->head) : max;
	for (i = 0; i < n; i++)
		memcpy(dst + i * esz, m->buf + ((m->head + i) & m->mask) * esz,
		       esz);
	m->head += n;
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* ---- one queue of any kind ----------------------------------------------- */

/* "S" kinds use the least synchronisation a scenario allows: SP/SC with one
 * producer, MP/SC with several. "M" kinds are always MP/MC. lfv_ring has a
 * single MP/MC mode. */
enum kind {
	K_LFV,		/* lfv_ring; across threads a full ring is retried */
	K_LFV_OVF,	/* lfv_ring_enqueue: a full ring overflows instead */
	K_RTE_S,
	K_RTE_M,
	K_CK_S,
	K_CK_M,
	K_MUTEX,
	K_COUNT
};

static const char *const kind_name[K_COUNT] = {
	"lfv", "lfv-ovf", "rte-s", "rte-m", "ck-s", "ck-m", "mutex",
};

struct q {
	struct lfv_ring lfv;
	struct ck_ring ck;
	void *ckbuf;
	struct rte_ring *rte;
	struct mring mr;
};

static void *xalloc(size_t align, size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, align, size)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

static struct q *q_open(enum kind k, unsigned esz)
{
	struct q *q = xalloc(LFV_CACHELINE, sizeof(*q));
	ssize_t sz;

	switch (k) {
	case K_LFV:
	case K_LFV_OVF:
		if (lfv_ring_init(&q->lfv, BENCH_CAPACITY, esz))
			exit(1);
		break;
	case K_RTE_S:
	case K_RTE_M:
		sz = rte_ring_get_memsize_elem(esz, BENCH_CAPACITY);
		q->rte = xalloc(128, (size_t)sz);
		/* No EAL: rte_ring_init only lays out memory we own. The
		 * functions called below pick SP/MP themselves. */
		if (rte_ring_init(q->rte, "bench", BENCH_CAPACITY, 0))
			exit(1);
		break;
	case K_CK_S:
	case K_CK_M:
		q->ckbuf = xalloc(LFV_CACHELINE, (size_t)esz * BENCH_CAPACITY);
		ck_ring_init(&q->ck, BENCH_CAPACITY);
		break;
	case K_MUTEX:
		pthread_mutex_init(&q->mr.lock, NULL);
		q->mr.buf = xalloc(LFV_CACHELINE, (size_t)esz * BENCH_CAPACITY);
		q->mr.mask = BENCH_CAPACITY - 1;
		break;
	default:
		exit(1);
	}
	return q;
}

static void q_close(enum kind k, struct q *q)
{
	if (k == K_LFV || k == K_LFV_OVF)
		lfv_ring_fini(&q->lfv);
	if (k == K_MUTEX)
		pthread_mutex_destroy(&q->mr.lock);
	free(q->rte);
	free(q->ckbuf);
	free(q->mr.buf);
	free(q);
}

#define INLINE static inline __attribute__((always_inline))

/* ck has no batch calls: one at a time until one fails. */
INLINE unsigned ck_enq(enum kind k, struct q *q, const void *e, unsigned n,
		       unsigned esz, bool mp)
{
	const unsigned char *src = e;
	bool sp = k == K_CK_S && !mp;
	unsigned i;
	bool ok;

	for (i = 0; i < n; i++) {
		void *x = (void *)(src + i * esz);

		if (esz == 48)
			ok = sp ? ck_ring_enqueue_spsc_pl48(&q->ck, q->ckbuf, x) :
			     k == K_CK_S ? ck_ring_enqueue_mpsc_pl48(&q->ck, q->ckbuf, x) :
			     ck_ring_enqueue_mpmc_pl48(&q->ck, q->ckbuf, x);
		else
			ok = sp ? ck_ring_enqueue_spsc_pl8(&q->ck, q->ckbuf, x) :
			     k == K_CK_S ? ck_ring_enqueue_mpsc_pl8(&q->ck, q->ckbuf, x) :
			     ck_ring_enqueue_mpmc_pl8(&q->ck, q->ckbuf, x);
		if (!ok)
			break;
	}
	return i;
}

INLINE unsigned ck_deq(enum kind k, struct q *q, void *out, unsigned max,
		       unsigned esz)
{
	unsigned char *dst = out;
	unsigned i;
	bool ok;

	for (i = 0; i < max; i++) {
		void *x = dst + i * esz;

		if (esz == 48)
			ok = k == K_CK_S ? ck_ring_dequeue_spsc_pl48(&q->ck, q->ckbuf, x) :
			     ck_ring_dequeue_mpmc_pl48(&q->ck, q->ckbuf, x);
		else
			ok = k == K_CK_S ? ck_ring_dequeue_spsc_pl8(&q->ck, q->ckbuf, x) :
			     ck_ring_dequeue_mpmc_pl8(&q->ck, q->ckbuf, x);
		if (!ok)
			break;
	}
	return i;
}

INLINE unsigned rte_enq(enum kind k, struct q *q, const void *e, unsigned n,
			unsigned esz, bool mp)
{
	void *x = (void *)e;	/* rte_ring's single-entry calls are not const */
	bool sp = k == K_RTE_S && !mp;

	if (n == 1)
		return (sp ? rte_ring_sp_enqueue_elem(q->rte, x, esz) :
			rte_ring_mp_enqueue_elem(q->rte, x, esz)) == 0;
	return sp ? rte_ring_sp_enqueue_bulk_elem(q->rte, e, esz, n, NULL) :
		    rte_ring_mp_enqueue_bulk_elem(q->rte, e, esz, n, NULL);
}

INLINE unsigned rte_deq(enum kind k, struct q *q, void *out, unsigned max,
			unsigned esz)
{
	bool sc = k == K_RTE_S;

	if (max == 1)
		return (sc ? rte_ring_sc_dequeue_elem(q->rte, out, esz) :
			rte_ring_mc_dequeue_elem(q->rte, out, esz)) == 0;
	return sc ? rte_ring_sc_dequeue_burst_elem(q->rte, out, esz, max, NULL) :
		    rte_ring_mc_dequeue_burst_elem(q->rte, out, esz, max, NULL);
}

/* Returns how many were queued. lfv's public calls never fail, so K_LFV
 * across threads uses lfv_ring_put, the ring-only attempt, to retry a full
 * ring like the others do; K_LFV_OVF measures the public call. mp: several
 * producers, for the S kinds (a constant wherever this is inlined). */
INLINE unsigned q_enq(enum kind k, struct q *q, const void *e, unsigned n,
		      unsigned esz, bool retry_full, bool mp)
{
	switch (k) {
	case K_LFV:
		if (retry_full)
			return (unsigned)lfv_ring_put(&q->lfv, e, n);
		/* fall through */
	case K_LFV_OVF:
		if (n == 1)
			return lfv_ring_enqueue(&q->lfv, e) == 0;
		return (unsigned)lfv_ring_enqueue_batch(&q->lfv, e, n);
	case K_RTE_S:
	case K_RTE_M:
		return rte_enq(k, q, e, n, esz, mp);
	case K_CK_S:
	case K_CK_M:
		return ck_enq(k, q, e, n, esz, mp);
	default:
		return mring_enq(&q->mr, e, n, esz);
	}
}

INLINE unsigned q_deq(enum kind k, struct q *q, void *out, unsigned max,
		      unsigned esz)
{
	switch (k) {
	case K_LFV:
	case K_LFV_OVF:
		if (max == 1)
			return lfv_ring_dequeue_one(&q->lfv, out);
		return (unsigned)lfv_ring_dequeue(&q->lfv, out, max);
	case K_RTE_S:
	case K_RTE_M:
		return rte_deq(k, q, out, max, esz);
	case K_CK_S:
	case K_CK_M:
		return ck_deq(k, q, out, max, esz);
	default:
		return mring_deq(&q->mr, out, max, esz);
	}
}

/* Expands to a switch that calls fn with k and esz as constants, so every
 * (kind, size) pair gets its own fully inlined loop. */
#define BENCH_DISPATCH(fn, k, esz, ...)					\
	do {								\
		switch (k) {						\
		case K_LFV: return esz == 48 ? fn(K_LFV, 48, __VA_ARGS__) : \
					       fn(K_LFV, 8, __VA_ARGS__); \
		case K_LFV_OVF: return esz == 48 ?			\
			fn(K_LFV_OVF, 48, __VA_ARGS__) :		\
			fn(K_LFV_OVF, 8, __VA_ARGS__);			\
		case K_RTE_S: return esz == 48 ? fn(K_RTE_S, 48, __VA_ARGS__) : \
					       fn(K_RTE_S, 8, __VA_ARGS__); \
		case K_RTE_M: return esz == 48 ? fn(K_RTE_M, 48, __VA_ARGS__) : \
					       fn(K_RTE_M, 8, __VA_ARGS__); \
		case K_CK_S: return esz == 48 ? fn(K_CK_S, 48, __VA_ARGS__) : \
					      fn(K_CK_S, 8, __VA_ARGS__); \
		case K_CK_M: return esz == 48 ? fn(K_CK_M, 48, __VA_ARGS__) : \
					      fn(K_CK_M, 8, __VA_ARGS__); \
		default: return esz == 48 ? fn(K_MUTEX, 48, __VA_ARGS__) : \
					    fn(K_MUTEX, 8, __VA_ARGS__); \
		}							\
	} while (0)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t bench_sink;	/* keeps the reads alive; checked */

/* ---- same thread: write B entries, read B entries, repeat ---------------- */

INLINE uint64_t st_loop(enum kind k, unsigned esz, struct q *q,
			unsigned batch, uint64_t rounds)
{
	unsigned char in[BENCH_MAX_BATCH * 48], out[BENCH_MAX_BATCH * 48];
	uint64_t r, sum = 0, v;
	unsigned i;

	memset(in, 0, sizeof(in));
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < batch; i++) {
			v = r + i;
			memcpy(in + i * esz, &v, 8);
		}
		if (q_enq(k, q, in, batch, esz, false, false) != batch)
			abort();
		if (q_deq(k, q, out, batch, esz) != batch)
			abort();
		for (i = 0; i < batch; i++) {
			memcpy(&v, out + i * esz, 8);
			sum += v;
		}
	}
	return sum;
}

static uint64_t st_run(enum kind k, unsigned esz, struct q *q, unsigned batch,
		       uint64_t rounds)
{
	BENCH_DISPATCH(st_loop, k, esz, q, batch, rounds);
}

/* ns per entry of the best of reps runs. */
static double bench_st(enum kind k, unsigned esz, unsigned batch,
		       uint64_t entries, int reps)
{
	uint64_t rounds = entries / batch, want = 0, r;
	double best = 1e30, t;
	struct q *q = q_open(k, esz);
	int i;

	for (r = 0; r < rounds; r++)
		want += batch * r + (uint64_t)batch * (batch - 1) / 2;
	st_run(k, esz, q, batch, rounds / 10 + 1);	/* warm up */
	for (i = 0; i < reps; i++) {
		t = now_ns();
		bench_sink = st_run(k, esz, q, batch, rounds);
		t = now_ns() - t;
		if (bench_sink != want) {
			fprintf(stderr, "%s: wrong data\n", kind_name[k]);
			exit(1);
		}
		if (t < best)
			best = t;
	}
	q_close(k, q);
	return best / (double)(rounds * batch);
}

/* ---- across threads: P producers write single entries, one consumer reads
 * bursts of up to 32 ------------------------------------------------------- */

/* A run stops at this deadline: MP rings that publish in reservation
 * order (rte_ring, ck_ring) make every producer spin while one preempted
 * producer holds the order up, and with 5 threads on 2 cores that can
 * take minutes. The cell then reports the entries read in time. */
#define XT_DEADLINE_NS 2e9

struct xt {
	enum kind k;
	unsigned esz;
	struct q *q;
	int producers;
	uint64_t per_producer;
	pthread_barrier_t start;
	double deadline;
	lfv_atomic32_t stop;
	uint64_t read;		/* entries the consumer got */
	uint64_t sum;
};

struct xt_producer {
	struct xt *x;
	uint64_t id;
};

/* Spin a little, then give the core away: 2 cores, up to 5 threads. */
static inline void backoff(unsigned *spins)
{
	if (++*spins < 64) {
		__builtin_ia32_pause();
		return;
	}
	*spins = 0;
	sched_yield();
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

INLINE void xt_produce_loop(enum kind k, unsigned esz, struct xt *x, bool mp)
{
	unsigned char e[48] = { 0 };
	unsigned spins = 0;
	uint64_t i, v;

	for (i = 0; i < x->per_producer; i++) {
		v = i + 1;
		memcpy(e, &v, 8);
		while (!q_enq(k, x->q, e, 1, esz, true, mp)) {
			/* Relaxed: only ends the run; pairs with nothing. */
			if (lfv_load_relaxed32(&x->stop))
				return;
			backoff(&spins);
		}
	}
}

INLINE int xt_produce(enum kind k, unsigned esz, struct xt_producer *p)
{
	if (p->x->producers == 1)
		xt_produce_loop(k, esz, p->x, false);
	else
		xt_produce_loop(k, esz, p->x, true);
	return 0;
}

static int xt_produce_run(enum kind k, unsigned esz, struct xt_producer *p)
{
	BENCH_DISPATCH(xt_produce, k, esz, p);
}

static void *xt_producer_main(void *arg)
{
	struct xt_producer *p = arg;

	if (p->x->producers == 1)
		pin(0);
	pthread_barrier_wait(&p->x->start);
	xt_produce_run(p->x->k, p->x->esz, p);
	return NULL;
}

INLINE int xt_consume(enum kind k, unsigned esz, struct xt *x)
{
	unsigned char out[BENCH_MAX_BATCH * 48];
	uint64_t left = x->per_producer * x->producers, sum = 0, v;
	unsigned spins = 0, n, i;

	while (left) {
		n = q_deq(k, x->q, out, BENCH_MAX_BATCH, esz);
		if (!n) {
			if (now_ns() > x->deadline) {
				/* Relaxed: producers only need to see it
				 * eventually; nothing is read on its strength. */
				lfv_store_relaxed32(&x->stop, 1);
				break;
			}
			backoff(&spins);
			continue;
		}
		for (i = 0; i < n; i++) {
			memcpy(&v, out + i * esz, 8);
			sum += v;
		}
		left -= n;
	}
	x->read = x->per_producer * x->producers - left;
	x->sum = sum;
	return 0;
}

static int xt_consume_run(enum kind k, unsigned esz, struct xt *x)
{
	BENCH_DISPATCH(xt_consume, k, esz, x);
}

static void *xt_consumer_main(void *arg)
{
	struct xt *x = arg;

	pin(1);
	pthread_barrier_wait(&x->start);
	xt_consume_run(x->k, x->esz, x);
	return NULL;
}

/* ns per entry, from the start barrier to the last entry read (or the
 * deadline: *late is set); *ovf gets the entries that overflowed. */
static double xt_once(enum kind k, unsigned esz, int producers,
		      uint64_t entries, uint64_t *ovf, bool *late)
{
	struct xt_producer prod[BENCH_MAX_PRODUCERS];
	pthread_t pt[BENCH_MAX_PRODUCERS], ct;
	struct xt x = { .k = k, .esz = esz, .producers = producers };
	double t;
	int i;

	x.q = q_open(k, esz);
	x.per_producer = entries / producers;
	pthread_barrier_init(&x.start, NULL, producers + 2);
	pthread_create(&ct, NULL, xt_consumer_main, &x);
	for (i = 0; i < producers; i++) {
		prod[i].x = &x;
		prod[i].id = (uint64_t)i;
		pthread_create(&pt[i], NULL, xt_producer_main, &prod[i]);
	}
	x.deadline = now_ns() + XT_DEADLINE_NS;
	pthread_barrier_wait(&x.start);
	t = now_ns();
	for (i = 0; i < producers; i++)
		pthread_join(pt[i], NULL);
	pthread_join(ct, NULL);
	t = now_ns() - t;
	*late = x.read != x.per_producer * producers;
	if (!*late &&
	    x.sum != producers * (x.per_producer * (x.per_producer + 1) / 2)) {
		fprintf(stderr, "%s: wrong data across threads\n", kind_name[k]);
		exit(1);
	}
	*ovf = (k == K_LFV || k == K_LFV_OVF) ?
	       lfv_ring_overflow_total(&x.q->lfv) : 0;
	pthread_barrier_destroy(&x.start);
	q_close(k, x.q);
	return t / (double)(x.read ? x.read : 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of reps runs: thread start-up and scheduling make the minimum of
 * cross-thread runs a lucky outlier. A run that hit the deadline is the
 * only one made. */
static double bench_xt(enum kind k, unsigned esz, int producers,
		       uint64_t entries, int reps, uint64_t *ovf, bool *late)
{
	double t[16];
	int i;

	if (reps > 16)
		reps = 16;
	for (i = 0; i < reps; i++) {
		t[i] = xt_once(k, esz, producers, entries, ovf, late);
		if (*late)
			return t[i];
	}
	qsort(t, reps, sizeof(t[0]), cmp_double);
	return t[reps / 2];
}

/* ---- driver ---------------------------------------------------------------- */

enum scen { S_ST1, S_ST16, S_ST32, S_XT11, S_XT41, S_COUNT };

static const char *const scen_name[S_COUNT] = {
	"st1", "st16", "st32", "xt1p1c", "xt4p1c",
};

static const char *const scen_doc[S_COUNT] = {
	"same thread: write 1, read 1 (ns per write+read)",
	"same thread: write 16 in one call, read 16 in one call",
	"same thread: write 32 in one call, read 32 in one call",
	"1 producer (cpu 0) -> 1 consumer (cpu 1), single writes, reads of <= 32",
	"4 producers -> 1 consumer (cpu 1), 2 cores shared by 5 threads",
};

static void print_tables(unsigned esz, double ns[K_COUNT][S_COUNT],
			 uint64_t ovf[K_COUNT][S_COUNT],
			 bool late[K_COUNT][S_COUNT])
{
	int k, s;

	printf("\nentry %u bytes, capacity %d: ns per entry (lower is better)\n",
	       esz, BENCH_CAPACITY);
	printf("%-8s", "impl");
	for (s = 0; s < S_COUNT; s++)
		printf(" %9s", scen_name[s]);
	printf("\n");
	for (k = 0; k < K_COUNT; k++) {
		printf("%-8s", kind_name[k]);
		for (s = 0; s < S_COUNT; s++)
			if (ns[k][s] > 0)
				printf(" %8.2f%c", ns[k][s],
				       late[k][s] ? '*' : ' ');
			else
				printf(" %9s", "-");
		printf("\n");
	}
	printf("ratio impl / lfv (above 1: lfv is faster)\n");
	for (k = 0; k < K_COUNT; k++) {
		if (k == K_LFV)
			continue;
		printf("%-8s", kind_name[k]);
		for (s = 0; s < S_COUNT; s++)
			if (ns[k][s] > 0)
				printf(" %9.2f", ns[k][s] / ns[K_LFV][s]);
			else
				printf(" %9s", "-");
		printf("\n");
	}
	printf("lfv-ovf entries that overflowed (last run):");
	for (s = S_XT11; s < S_COUNT; s++)
		printf(" %s %llu", scen_name[s],
		       (unsigned long long)ovf[K_LFV_OVF][s]);
	printf("\n* deadline (%.0f s) hit: ns per entry actually read\n",
	       XT_DEADLINE_NS / 1e9);
}

static const char *bench_only;	/* --only SCEN: run just that scenario */

static bool scen_on(int s)
{
	return !bench_only || !strcmp(bench_only, scen_name[s]);
}

static void bench_all(unsigned esz, uint64_t entries, int reps)
{
	static const unsigned batch[] = { 1, 16, 32 };
	double ns[K_COUNT][S_COUNT] = { { 0 } };
	uint64_t ovf[K_COUNT][S_COUNT] = { { 0 } };
	bool late[K_COUNT][S_COUNT] = { { false } };
	int k, s;

	for (k = 0; k < K_COUNT; k++) {
		for (s = S_ST1; s <= S_ST32; s++)
			if (k != K_LFV_OVF && scen_on(s)) /* lfv in 1 thread */
				ns[k][s] = bench_st(k, esz, batch[s], entries,
						    reps);
		if (scen_on(S_XT11))
			ns[k][S_XT11] = bench_xt(k, esz, 1, entries, reps,
						 &ovf[k][S_XT11],
						 &late[k][S_XT11]);
		if (scen_on(S_XT41))
			ns[k][S_XT41] = bench_xt(k, esz, 4, entries, reps,
						 &ovf[k][S_XT41],
						 &late[k][S_XT41]);
		fprintf(stderr, "bench_ring: %u bytes, %s done\n", esz,
			kind_name[k]);
	}
	print_tables(esz, ns, ovf, late);
}

/* IMPL:SCEN:SIZE, e.g. lfv:st1:48; only same-thread scenarios: callgrind
 * runs threads one at a time, which says nothing about contention. */
static int callgrind_op(const char *spec, uint64_t rounds)
{
	char impl[16], scen[16];
	unsigned esz, batch;
	int k;
	struct q *q;

	if (sscanf(spec, "%15[^:]:%15[^:]:%u", impl, scen, &esz) != 3 ||
	    (esz != 8 && esz != 48))
		return 2;
	for (k = 0; k < K_COUNT && strcmp(impl, kind_name[k]); k++)
		;
	if (k == K_COUNT)
		return 2;
	if (!strcmp(scen, "st1"))
		batch = 1;
	else if (!strcmp(scen, "st16"))
		batch = 16;
	else if (!strcmp(scen, "st32"))
		batch = 32;
	else
		return 2;
	q = q_open(k, esz);
	bench_sink = st_run(k, esz, q, batch, rounds);
	printf("%s: %llu rounds of %u entries, sink %llu\n", spec,
	       (unsigned long long)rounds, batch,
	       (unsigned long long)bench_sink);
	q_close(k, q);
	return 0;
}

static void usage(void)
{
	int s;

	fprintf(stderr, "usage: bench_ring [--reps R] [--entries N] [--only SCEN]\n"
		"       bench_ring --callgrind-op IMPL:SCEN:SIZE ROUNDS\n"
		"IMPL: lfv rte-s rte-m ck-s ck-m mutex; SIZE: 8 or 48\n");
	for (s = 0; s < S_COUNT; s++)
		fprintf(stderr, "  %-7s %s\n", scen_name[s], scen_doc[s]);
}

int main(int argc, char **argv)
{
	uint64_t entries = 2000000;
	int reps = 5, i, s;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--callgrind-op") && i + 2 < argc) {
			if (callgrind_op(argv[i + 1],
					 strtoull(argv[i + 2], NULL, 0))) {
				usage();
				return 2;
			}
			return 0;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			bench_only = argv[++i];
		} else if (!strcmp(argv[i], "--entries") && i + 1 < argc) {
			entries = strtoull(argv[++i], NULL, 0);
		} else {
			usage();
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (reps < 1 || entries < 1000) {
		usage();
		return 2;
	}
	printf("bench_ring: %llu entries per run, %d runs per cell "
	       "(best for st*, median for xt*)\n",
	       (unsigned long long)entries, reps);
	for (s = 0; s < S_COUNT; s++)
		printf("  %-7s %s\n", scen_name[s], scen_doc[s]);
	printf("-s = SP/SC (MP/SC in xt4p1c), -m = MP/MC; lfv is always MP/MC\n");
	bench_all(48, entries, reps);
	bench_all(8, entries, reps);
	return 0;
}
