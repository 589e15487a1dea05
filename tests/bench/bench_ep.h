/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The measurement protocol shared by bench_msg.c (libfabric MSG),
 * bench_rdm.c (libfabric RDM, tagged) and bench_raw.c (ibverbs + rdma_cm),
 * so that all run the very same loops. Not a test: see
 * tests/bench/README.md.
 *
 * The including file defines, before including this header:
 *
 *   struct tp;                                  its connection
 *   static inline void tp_send(struct tp *, void *buf, size_t len, uint32_t id);
 *   static inline void tp_recv(struct tp *, void *buf, size_t len, uint32_t id);
 *   static inline int tp_poll(struct tp *, uint32_t *ids, int max);
 *
 * tp_send/tp_recv post one request on the registered region (BENCH_REGION
 * bytes: sends from tx_base, receives into rx_base) that must complete with
 * id; they exit on any error, a full queue included: the loops keep within
 * BENCH_TXQ sends and BENCH_RXQ receives in flight. tp_poll reads up to max
 * completions (0 when none), storing their ids, and exits on an error
 * completion. An id is below BENCH_TXQ for a send, BENCH_TXQ + slot for a
 * receive.
 *
 * One connection, the client drives. Every phase starts with the server
 * posting its receives for the phase and sending GO; the client keeps
 * BENCH_CLIENT_RXQ small (64-byte) receives posted at all times, and every
 * message the server sends is small. The server never has more receives
 * posted than messages still to come in the phase, so a phase with larger
 * messages never lands in a smaller buffer of the previous one:
 *
 *   config  client -> server: struct bench_cfg (counts for every phase)
 *   lat     ping-pong of 64 B (--lat-size), warm-up + iterations (+ callgrind
 *           segments)
 *   rate    client streams 64 B sends, at most BENCH_RATE_WINDOW
 *           outstanding; the server reposts every receive and returns a
 *           credit message every BENCH_RATE_CREDIT receives (the client
 *           never has more unreceived messages than the server has
 *           receives posted, so there is no RNR retry); the last credit
 *           ends the clock
 *   bw      as rate with 1 MiB messages, window BENCH_BW_WINDOW
 *   big     only when the including file defines BENCH_BIG_SIZE (a power
 *           of two; bench_rdm does, and run-rdm.sh builds bench_raw so):
 *           as rate with messages of that size, window BENCH_BIG_WINDOW
 *   end     one message each way, so neither side tears down early
 *
 * Machine-readable results are printed by the client, one line each:
 *   result impl=NAME test=lat size=64 iters=N median_us=X mean_us=Y min_us=..
 *          p99_us=.. max_us=..        (half round trips)
 *   result impl=NAME test=rate size=64 window=W msgs=M msgs_per_s=X
 *   result impl=NAME test=bw size=1048576 window=W msgs=M MB_per_s=X
 *   result impl=NAME test=bw size=BENCH_BIG_SIZE ...   (big phase)
 *   callgrind impl=NAME n=N k=K empty_idle1=.. empty_idle2=.. empty_lat1=.. empty_lat2=..
 *   (callgrind mode: dumps 1-5 are settle, idle1, idle2, lat1, lat2)
 */
#ifndef BENCH_EP_H
#define BENCH_EP_H

#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#ifndef BENCH_HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#define CALLGRIND_START_INSTRUMENTATION
#endif

#define BENCH_TXQ 128			/* send queue, ids [0, BENCH_TXQ) */
#define BENCH_RXQ 528			/* receive queue, ids from BENCH_TXQ */
#define BENCH_CQ_SIZE 1024
#define BENCH_CLIENT_RXQ 16		/* client: small receives, always */

#define BENCH_SMALL 64
#define BENCH_LAT_SIZE 64
#define BENCH_RATE_SIZE 64
#define BENCH_RATE_WINDOW 64
#define BENCH_RATE_RXQ 512
#define BENCH_RATE_CREDIT 64
#define BENCH_BW_SIZE (1u << 20)
#define BENCH_BW_WINDOW 4
#define BENCH_BW_RXQ 8
#define BENCH_BW_CREDIT 2
#define BENCH_POLL_BATCH 16

/* The big phase: 0 leaves it out (bench_msg). Two messages in flight and
 * a credit for each, so the region holds two of them each way. */
#ifndef BENCH_BIG_SIZE
#define BENCH_BIG_SIZE 0
#endif
#define BENCH_BIG_WINDOW 2
#define BENCH_BIG_RXQ 2
#define BENCH_BIG_CREDIT 1

#define BENCH_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Registered region: sends from the first part, receives into the second,
 * slot i of size s at offset i * s (sizes are powers of two). */
#define BENCH_TX_REGION BENCH_MAX((size_t)BENCH_BW_WINDOW * BENCH_BW_SIZE, \
				  (size_t)BENCH_BIG_WINDOW * BENCH_BIG_SIZE)
#define BENCH_RX_REGION BENCH_MAX((size_t)BENCH_BW_RXQ * BENCH_BW_SIZE, \
				  (size_t)BENCH_BIG_RXQ * BENCH_BIG_SIZE)
#define BENCH_REGION (BENCH_TX_REGION + BENCH_RX_REGION)

#define BENCH_MAGIC 0x6c66762d62656e63ULL

/* --lat-size: the client keeps BENCH_CLIENT_RXQ receives of that size
 * posted, the server two, each side sends from its transmit region. */
#define BENCH_LAT_MAX BENCH_MAX((size_t)BENCH_SMALL,			\
	BENCH_RX_REGION / BENCH_CLIENT_RXQ < BENCH_TX_REGION ?		\
	BENCH_RX_REGION / BENCH_CLIENT_RXQ : BENCH_TX_REGION)

_Static_assert(BENCH_RATE_RXQ * BENCH_RATE_SIZE <= BENCH_RX_REGION, "rx");
_Static_assert(BENCH_RATE_WINDOW * BENCH_RATE_SIZE <= BENCH_TX_REGION, "tx");
_Static_assert(BENCH_RATE_RXQ + BENCH_CLIENT_RXQ <= BENCH_RXQ, "rxq");
_Static_assert(BENCH_RATE_RXQ / BENCH_RATE_CREDIT + 2 <= BENCH_CLIENT_RXQ,
	       "client receives cover every credit in flight and GO");

/* The client's first message: what to run. Fits one small message. */
struct bench_cfg {
	uint64_t magic;
	uint32_t warmup;	/* latency warm-up iterations */
	uint32_t lat_size;	/* ping-pong message size (0: BENCH_LAT_SIZE) */
	uint64_t lat_iters;	/* timed latency iterations (0: skip) */
	uint64_t rate_msgs;	/* multiple of BENCH_RATE_CREDIT (0: skip) */
	uint64_t bw_msgs;	/* multiple of BENCH_BW_CREDIT (0: skip) */
	uint64_t cg_iters;	/* callgrind mode: N (then 2N) iterations */
	uint64_t cg_idle;	/* callgrind mode: K (then 2K) empty polls */
	uint64_t big_msgs;	/* BENCH_BIG_SIZE messages (0: skip) */
};
_Static_assert(sizeof(struct bench_cfg) <= BENCH_SMALL, "cfg");

struct bench {
	struct tp *t;
	const char *impl;
	char *tx_base, *rx_base;
	uint64_t tx_posted, tx_done;
	uint64_t rx_posted, rx_done;
	uint64_t rx_used;	/* client: receive completions accounted for */
	/* Server: receives of the current phase, and how many more it
	 * may post (the phase's messages not yet covered). */
	size_t rx_size, rx_depth;
	uint64_t rx_limit;
	size_t lat_size;	/* the ping-pong's messages */
	uint64_t empty_polls;
	int idle_wait_us;	/* callgrind mode: sleep before each poll */
	int yield;		/* --yield: sched_yield() after an empty poll */
	int first_wait_us;	/* ... before the first poll of a ping */
};

static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline void bench_die(const char *what)
{
	fprintf(stderr, "bench: %s\n", what);
	exit(1);
}

/*
 * Callgrind mode sleeps here before polling, so that a poll rarely comes
 * back empty; run-endpoints.sh passes --toggle-collect=bench_idle_wait, so
 * none of this counts. Not static, never inlined: callgrind needs the name.
 */
__attribute__((noinline)) void bench_idle_wait(int us);
__attribute__((noinline)) void bench_idle_wait(int us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)us * 1000 };

	nanosleep(&ts, NULL);
}

static inline void bench_send(struct bench *b, size_t len)
{
	uint64_t slot = b->tx_posted % (BENCH_TX_REGION / len);

	tp_send(b->t, b->tx_base + slot * len, len,
		(uint32_t)(b->tx_posted % BENCH_TXQ));
	b->tx_posted++;
}

static inline void bench_recv(struct bench *b, size_t len)
{
	uint64_t slot = b->rx_posted % (BENCH_RX_REGION / len);

	tp_recv(b->t, b->rx_base + slot * len, len,
		BENCH_TXQ + (uint32_t)(b->rx_posted % (BENCH_RXQ - 1)));
	b->rx_posted++;
}

/* One poll of up to max completions; counts them. Returns how many. */
static inline int bench_progress(struct bench *b, int max)
{
	uint32_t ids[BENCH_POLL_BATCH];
	int i, n;

	n = tp_poll(b->t, ids, max);
	if (!n) {
		b->empty_polls++;
		if (b->yield)
			sched_yield();
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (ids[i] < BENCH_TXQ)
			b->tx_done++;
		else
			b->rx_done++;
	}
	return n;
}

/* Posts receives up to the depth, and no more than the phase expects. */
static inline void bench_fill_rx(struct bench *b)
{
	while (b->rx_posted - b->rx_done < b->rx_depth && b->rx_limit) {
		bench_recv(b, b->rx_size);
		b->rx_limit--;
	}
}

static inline void bench_wait_rx(struct bench *b, uint64_t until)
{
	while (b->rx_done < until)
		bench_progress(b, BENCH_POLL_BATCH);
}

static inline void bench_wait_tx(struct bench *b)
{
	while (b->tx_done < b->tx_posted)
		bench_progress(b, BENCH_POLL_BATCH);
}

/* Room for one more send (the queue is never full when posting). */
static inline void bench_tx_room(struct bench *b, uint64_t window)
{
	while (b->tx_posted - b->tx_done >= window)
		bench_progress(b, BENCH_POLL_BATCH);
}

/* ---- server ---------------------------------------------------------------- */

/* Posts the phase's receives, then tells the client to go. */
static void bench_srv_phase(struct bench *b, size_t size, size_t depth,
			    uint64_t msgs)
{
	b->rx_size = size;
	b->rx_depth = depth;
	b->rx_limit = msgs;
	bench_fill_rx(b);
	bench_tx_room(b, BENCH_TXQ);
	bench_send(b, BENCH_SMALL);			/* GO */
}

static void bench_srv_pong(struct bench *b, uint64_t iters)
{
	uint64_t i, got = b->rx_done;

	bench_srv_phase(b, b->lat_size, 2, iters);
	for (i = 0; i < iters; i++) {
		while (b->rx_done == got)
			bench_progress(b, 1);
		got++;
		bench_fill_rx(b);
		bench_tx_room(b, BENCH_TXQ);
		bench_send(b, b->lat_size);
	}
	bench_wait_tx(b);
}

static void bench_srv_stream(struct bench *b, size_t size, size_t depth,
			     uint64_t msgs, uint64_t credit)
{
	uint64_t start = b->rx_done, credited = 0;

	bench_srv_phase(b, size, depth, msgs);
	while (credited < msgs) {
		bench_progress(b, BENCH_POLL_BATCH);
		bench_fill_rx(b);
		while (b->rx_done - start >= credited + credit) {
			credited += credit;
			bench_tx_room(b, BENCH_TXQ);
			bench_send(b, BENCH_SMALL);
		}
	}
	bench_wait_tx(b);
}

static void bench_server(struct bench *b)
{
	struct bench_cfg cfg;

	/* The config receive was posted before the connection was accepted
	 * (rx_posted 1, through bench_recv). */
	bench_wait_rx(b, 1);
	memcpy(&cfg, b->rx_base, sizeof(cfg));
	if (cfg.magic != BENCH_MAGIC)
		bench_die("bad config message");
	b->lat_size = cfg.lat_size ? cfg.lat_size : BENCH_LAT_SIZE;

	bench_srv_pong(b, cfg.warmup + cfg.lat_iters +
			  3 * cfg.cg_iters);
	if (cfg.rate_msgs)
		bench_srv_stream(b, BENCH_RATE_SIZE, BENCH_RATE_RXQ,
				 cfg.rate_msgs, BENCH_RATE_CREDIT);
	if (cfg.bw_msgs)
		bench_srv_stream(b, BENCH_BW_SIZE, BENCH_BW_RXQ, cfg.bw_msgs,
				 BENCH_BW_CREDIT);
	if (cfg.big_msgs && !BENCH_BIG_SIZE)
		bench_die("the client asks for a big phase this server lacks");
	if (cfg.big_msgs)
		bench_srv_stream(b, BENCH_BIG_SIZE, BENCH_BIG_RXQ,
				 cfg.big_msgs, BENCH_BIG_CREDIT);
	/* end: one message from the client */
	bench_srv_phase(b, BENCH_SMALL, 1, 1);
	bench_wait_rx(b, b->rx_posted);
	bench_wait_tx(b);
}

/* ---- client ---------------------------------------------------------------- */

/* Completions are counted as they are read, possibly ahead of the phase
 * that expects them (a GO read with the last credit): rx_used says how
 * many receive completions the client has accounted for. */
static void bench_cli_go(struct bench *b)
{
	bench_wait_rx(b, ++b->rx_used);
	bench_fill_rx(b);
}

/* One ping-pong: one send, one receive, both completions (read one at a
 * time), the receive reposted. */
static inline void bench_ping(struct bench *b)
{
	uint64_t want = ++b->rx_used;

	bench_send(b, b->lat_size);
	while (b->tx_done < b->tx_posted || b->rx_done < want)
		bench_progress(b, 1);
	bench_fill_rx(b);
}

static inline void bench_ping_cg(struct bench *b)
{
	uint64_t want = ++b->rx_used;
	int wait = b->first_wait_us;

	bench_send(b, b->lat_size);
	do {
		bench_idle_wait(wait);
		wait = b->idle_wait_us;
		while (b->tx_done < b->tx_posted && bench_progress(b, 1))
			;
		while (b->rx_done < want && bench_progress(b, 1))
			;
	} while (b->tx_done < b->tx_posted || b->rx_done < want);
	bench_fill_rx(b);
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void bench_cli_lat(struct bench *b, const struct bench_cfg *cfg)
{
	uint64_t i, n = cfg->lat_iters;
	double *half = calloc(n ? n : 1, sizeof(*half)), sum = 0, t0, t1;

	if (!half)
		bench_die("out of memory");
	/* Under valgrind --instr-atstart=no (run-rdm.sh), the set-up ran
	 * uninstrumented, and fast; from here on callgrind simulates, so the
	 * warm-up measures the round trip as callgrind slows it down. A
	 * no-op when instrumenting already. */
	if (cfg->cg_iters)
		CALLGRIND_START_INSTRUMENTATION;
	bench_cli_go(b);
	t0 = bench_now_us();
	for (i = 0; i < cfg->warmup; i++)
		bench_ping(b);
	/* Callgrind mode: sleep about one round trip (as slowed down by
	 * callgrind, measured here) before the first poll of a ping, a
	 * quarter of it before the next ones. */
	if (cfg->warmup && !b->idle_wait_us) {
		t1 = (bench_now_us() - t0) / (double)cfg->warmup;
		b->first_wait_us = (int)(t1 * 1.2);
		b->idle_wait_us = (int)(t1 / 4) + 20;
	}
	for (i = 0; i < n; i++) {
		t0 = bench_now_us();
		bench_ping(b);
		t1 = bench_now_us();
		half[i] = (t1 - t0) / 2;
		sum += half[i];
	}
	if (n) {
		qsort(half, n, sizeof(*half), bench_cmp_double);
		printf("result impl=%s test=lat size=%d iters=%llu "
		       "median_us=%.2f mean_us=%.2f min_us=%.2f p99_us=%.2f "
		       "max_us=%.2f\n",
		       b->impl, (int)b->lat_size, (unsigned long long)n,
		       n % 2 ? half[n / 2] : (half[n / 2 - 1] + half[n / 2]) / 2,
		       sum / (double)n, half[0], half[n - 1 - n / 100],
		       half[n - 1]);
		fflush(stdout);
	}
	free(half);

	if (cfg->cg_iters) {
		/*
		 * Callgrind dumps: a first one that absorbs what precedes it
		 * (the first dump after a zeroing does not come out clean),
		 * then K and 2K empty polls (nothing in flight), N and 2N
		 * ping-pongs with a sleep (not counted) before each poll.
		 * run-endpoints.sh takes the differences of dumps 2-5.
		 */
		static const char *const names[] = {
			"settle", "idle1", "idle2", "lat1", "lat2",
		};
		uint64_t k = cfg->cg_idle, e[5], e0, m;
		int seg;

		bench_idle_wait(200000);
		for (seg = 0; seg < 5; seg++) {
			m = seg < 3 ? k * (uint64_t)(seg ? seg : 1) :
				      cfg->cg_iters * (uint64_t)(seg - 2);
			e0 = b->empty_polls;
			CALLGRIND_ZERO_STATS;
			if (seg < 3) {
				for (i = 0; i < m; i++)
					bench_progress(b, 1);
			} else {
				for (i = 0; i < m; i++)
					bench_ping_cg(b);
			}
			CALLGRIND_DUMP_STATS_AT(names[seg]);
			e[seg] = b->empty_polls - e0;
		}
		printf("callgrind impl=%s n=%llu k=%llu empty_idle1=%llu "
		       "empty_idle2=%llu empty_lat1=%llu empty_lat2=%llu\n",
		       b->impl, (unsigned long long)cfg->cg_iters,
		       (unsigned long long)k, (unsigned long long)e[1],
		       (unsigned long long)e[2], (unsigned long long)e[3],
		       (unsigned long long)e[4]);
		fflush(stdout);
	}
}

static double bench_cli_stream(struct bench *b, size_t size, uint64_t window,
			       uint64_t msgs, uint64_t depth, uint64_t credit)
{
	uint64_t sent = 0, allowed = depth, base, seen = 0;
	double t0;

	bench_cli_go(b);
	base = b->rx_used;
	t0 = bench_now_us();
	while (sent < msgs) {
		while (sent < msgs && sent < allowed &&
		       b->tx_posted - b->tx_done < window) {
			bench_send(b, size);
			sent++;
		}
		bench_progress(b, BENCH_POLL_BATCH);
		if (b->rx_done - base != seen) {
			seen = b->rx_done - base;
			allowed = depth + credit * seen;
			bench_fill_rx(b);
		}
	}
	/* The last credit says everything arrived. */
	b->rx_used = base + msgs / credit;
	bench_wait_rx(b, b->rx_used);
	bench_wait_tx(b);
	bench_fill_rx(b);
	return (bench_now_us() - t0) / 1e6;
}

/* A streaming phase of the client: its shape and message count (0: skip)
 * and what its result line reports. */
struct bench_phase {
	const char *test;	/* "rate": messages per s; "bw": MB per s */
	size_t size;
	uint64_t window, msgs, rxq, credit;
};

static void bench_cli_phase(struct bench *b, const struct bench_phase *p)
{
	double s;

	if (!p->msgs)
		return;
	s = bench_cli_stream(b, p->size, p->window, p->msgs, p->rxq,
			     p->credit);
	printf("result impl=%s test=%s size=%zu window=%llu msgs=%llu ",
	       b->impl, p->test, p->size, (unsigned long long)p->window,
	       (unsigned long long)p->msgs);
	if (strcmp(p->test, "rate") == 0)
		printf("msgs_per_s=%.1f\n", (double)p->msgs / s);
	else
		printf("MB_per_s=%.2f\n",
		       (double)p->msgs * (double)p->size / s / 1e6);
	fflush(stdout);
}

static void bench_client(struct bench *b, const struct bench_cfg *cfg)
{
	const struct bench_phase phases[] = {
		{ "rate", BENCH_RATE_SIZE, BENCH_RATE_WINDOW, cfg->rate_msgs,
		  BENCH_RATE_RXQ, BENCH_RATE_CREDIT },
		{ "bw", BENCH_BW_SIZE, BENCH_BW_WINDOW, cfg->bw_msgs,
		  BENCH_BW_RXQ, BENCH_BW_CREDIT },
		{ "bw", BENCH_BIG_SIZE, BENCH_BIG_WINDOW, cfg->big_msgs,
		  BENCH_BIG_RXQ, BENCH_BIG_CREDIT },
	};
	int i;

	/* Receives were posted before connecting (bench_fill_rx). */
	memcpy(b->tx_base, cfg, sizeof(*cfg));
	bench_send(b, BENCH_SMALL);
	bench_wait_tx(b);

	bench_cli_lat(b, cfg);
	for (i = 0; i < 3; i++)
		bench_cli_phase(b, &phases[i]);
	/* end */
	bench_cli_go(b);
	bench_send(b, BENCH_SMALL);
	bench_wait_tx(b);
}

/* ---- command line ------------------------------------------------------------ */

/* bench_parse's flags: which optional options the program takes. */
#define BENCH_OPT_PROV 1	/* -p PROV, required (the libfabric ones) */
#define BENCH_OPT_CHECK 2	/* --check (bench_rdm) */

struct bench_opts {
	const char *prov;	/* bench_msg, bench_rdm */
	int check;		/* --check: verify every payload */
	const char *addr;
	const char *src;	/* --src: bench_rdm client's own address
				 * across nodes (default addr) */
	const char *port;
	const char *dev;
	int server;
	int idle_wait_us;	/* 0: derived from the warm-up */
	int yield;		/* --yield */
	int desc;		/* --desc (bench_rdm) */
	struct bench_cfg cfg;
};

static void bench_usage(const char *argv0, int flags)
{
	fprintf(stderr,
		"usage: %s %s(-s | -c) [-a ADDR] [-P PORT] [-d DEV]\n"
		"          [--warmup W] [--lat N] [--lat-size S] [--rate M] [--bw B]\n"
		"          [--callgrind N,K] [--idle-wait-us US] [--yield]\n"
		"  --yield         sched_yield() after every empty poll (both sides: "
		"for\n"
		"                  server and client sharing one CPU)\n"
		"  -s / -c         server / client (the client prints results)\n"
		"  -a, -d          address and device (default $LFV_BED_IP, "
		"$LFV_BED_DEV)\n"
		"  --src ADDR      the client's own address, when -a is the "
		"server's on\n"
		"                  another node (bench_rdm; default: -a)\n"
		"  --lat N         64 B ping-pong iterations (0: none)\n"
		"  --lat-size S    ping-pong message size instead of 64 B (at "
		"most %zu)\n"
		"  --rate M        64 B messages, window %d (0: none)\n"
		"  --bw B          1 MiB messages, window %d (0: none)\n"
		"  --callgrind N,K only N and 2N ping-pongs and K and 2K empty "
		"polls,\n"
		"                  each between callgrind dumps\n",
		argv0, (flags & BENCH_OPT_PROV) ? "-p PROV " : "",
		(size_t)BENCH_LAT_MAX,
		BENCH_RATE_WINDOW, BENCH_BW_WINDOW);
	if (BENCH_BIG_SIZE)
		fprintf(stderr, "  --big B         %zu MiB messages, window %d "
			"(0: none)\n", (size_t)BENCH_BIG_SIZE >> 20,
			BENCH_BIG_WINDOW);
	if (flags & BENCH_OPT_CHECK)
		fprintf(stderr, "  --check         fill every payload with a "
			"pattern and verify it (both sides)\n"
			"  --desc          pass the region's descriptor even "
			"without FI_MR_LOCAL\n");
	exit(2);
}

static uint64_t bench_round_up(uint64_t v, uint64_t m)
{
	return (v + m - 1) / m * m;
}

static void bench_parse(int argc, char **argv, struct bench_opts *o,
			int flags)
{
	static const struct option longs[] = {
		{ "warmup", required_argument, NULL, 'W' },
		{ "lat", required_argument, NULL, 'L' },
		{ "lat-size", required_argument, NULL, 'S' },
		{ "rate", required_argument, NULL, 'R' },
		{ "bw", required_argument, NULL, 'B' },
		{ "callgrind", required_argument, NULL, 'G' },
		{ "idle-wait-us", required_argument, NULL, 'I' },
		{ "big", required_argument, NULL, 'g' },
		{ "check", no_argument, NULL, 'k' },
		{ "yield", no_argument, NULL, 'y' },
		{ "desc", no_argument, NULL, 'D' },
		{ "src", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	int c, mode = 0;

	memset(o, 0, sizeof(*o));
	o->addr = getenv("LFV_BED_IP");
	o->dev = getenv("LFV_BED_DEV");
	o->port = "47599";
	o->idle_wait_us = 0;
	o->cfg.magic = BENCH_MAGIC;
	o->cfg.warmup = 50;
	o->cfg.lat_iters = 1000;
	o->cfg.rate_msgs = 20000;
	o->cfg.bw_msgs = 64;
	o->cfg.big_msgs = BENCH_BIG_SIZE ? 4 : 0;
	while ((c = getopt_long(argc, argv, "p:sca:P:d:h", longs, NULL)) != -1) {
		switch (c) {
		case 'p': o->prov = optarg; break;
		case 's': mode = 's'; break;
		case 'c': mode = 'c'; break;
		case 'a': o->addr = optarg; break;
		case 'A': o->src = optarg; break;
		case 'P': o->port = optarg; break;
		case 'd': o->dev = optarg; break;
		case 'W': o->cfg.warmup = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S':
			o->cfg.lat_size = (uint32_t)strtoul(optarg, NULL, 0);
			if (!o->cfg.lat_size || o->cfg.lat_size > BENCH_LAT_MAX)
				bench_usage(argv[0], flags);
			break;
		case 'L': o->cfg.lat_iters = strtoull(optarg, NULL, 0); break;
		case 'R': o->cfg.rate_msgs = strtoull(optarg, NULL, 0); break;
		case 'B': o->cfg.bw_msgs = strtoull(optarg, NULL, 0); break;
		case 'I': o->idle_wait_us = atoi(optarg); break;
		case 'y': o->yield = 1; break;
		case 'D':
			if (!(flags & BENCH_OPT_CHECK))
				bench_usage(argv[0], flags);
			o->desc = 1;
			break;
		case 'g':
			if (!BENCH_BIG_SIZE)
				bench_usage(argv[0], flags);
			o->cfg.big_msgs = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			if (!(flags & BENCH_OPT_CHECK))
				bench_usage(argv[0], flags);
			o->check = 1;
			break;
		case 'G': {
			char *end;

			o->cfg.cg_iters = strtoull(optarg, &end, 0);
			o->cfg.cg_idle = *end == ',' ?
				strtoull(end + 1, NULL, 0) : 1000;
			o->cfg.lat_iters = 0;
			o->cfg.rate_msgs = 0;
			o->cfg.bw_msgs = 0;
			o->cfg.big_msgs = 0;
			break;
		}
		default:
			bench_usage(argv[0], flags);
		}
	}
	if (!mode || optind != argc || !o->addr ||
	    ((flags & BENCH_OPT_PROV) && !o->prov))
		bench_usage(argv[0], flags);
	o->server = mode == 's';
	o->cfg.rate_msgs = bench_round_up(o->cfg.rate_msgs, BENCH_RATE_CREDIT);
	o->cfg.bw_msgs = bench_round_up(o->cfg.bw_msgs, BENCH_BW_CREDIT);
	o->cfg.big_msgs = bench_round_up(o->cfg.big_msgs, BENCH_BIG_CREDIT);
}

/* After the connection is set up: run the role. The client's receives and
 * the server's config receive are posted by bench_pre_connect. */
static void bench_pre_connect(struct bench *b, const struct bench_opts *o)
{
	b->idle_wait_us = o->idle_wait_us;
	b->first_wait_us = o->idle_wait_us;
	b->yield = o->yield;
	if (o->server) {
		b->rx_size = BENCH_SMALL;
		b->rx_depth = 1;
		b->rx_limit = 1;
	} else {
		b->lat_size = o->cfg.lat_size ? o->cfg.lat_size :
						BENCH_LAT_SIZE;
		b->rx_size = BENCH_MAX((size_t)BENCH_SMALL, b->lat_size);
		b->rx_depth = BENCH_CLIENT_RXQ;
		b->rx_limit = UINT64_MAX;
	}
	bench_fill_rx(b);
}

static void bench_run(struct bench *b, const struct bench_opts *o)
{
	if (o->server)
		bench_server(b);
	else
		bench_client(b, &o->cfg);
}

#endif /* BENCH_EP_H */
