/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The matching engine (lfv_match) and the peer SRX built on it
 * (lfv_peer_srx): ordering across hash queues and the wildcard list,
 * directed receive, O(1) probes among many unrelated entries, and the
 * fi_peer(3) owner contract against a fake peer provider (records every
 * start/discard) and a fake completion sink (records every write):
 * get/queue/start round trips, peek/claim/discard, multi-receive carving
 * and release, cancel, free_entry, lifetimes, bad input, and peers
 * calling get_tag from four threads while the application posts.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lfv_cq.h"
#include "lfv_match.h"
#include "lfv_peer_srx.h"
#include "unit_peer_cq.h"

/* A peer's get_tag / get_msg through the owner ops `ops` on srx (which may
 * be NULL or not the owner's: the checks are the test), in the layout of
 * the libfabric built against. Before 2.0, get_tag carries no size. */
static int test_get_tag(const struct fi_ops_srx_owner *ops,
			struct fid_peer_srx *srx, fi_addr_t addr, uint64_t tag,
			struct fi_peer_rx_entry **e)
{
	const struct lfv_peer_match m = { .addr = addr, .tag = tag };

	return lfv_peer_call_get(ops, true, srx, &m, e);
}

static int test_get_msg(const struct fi_ops_srx_owner *ops,
			struct fid_peer_srx *srx, fi_addr_t addr, size_t size,
			struct fi_peer_rx_entry **e)
{
	const struct lfv_peer_match m = { .addr = addr, .msg_size = size };

	return lfv_peer_call_get(ops, false, srx, &m, e);
}

/* ==== the engine ======================================================== */

struct item {
	struct lfv_match_entry m;
	int id;
};

static struct item *item_new(int id, fi_addr_t addr, uint64_t tag,
			     uint64_t ignore)
{
	struct item *it = calloc(1, sizeof(*it));

	assert_non_null(it);
	it->id = id;
	it->m.addr = addr;
	it->m.tag = tag;
	it->m.ignore = ignore;
	return it;
}

static struct item *post(struct lfv_match *m, enum lfv_match_kind kind,
			 int id, fi_addr_t addr, uint64_t tag, uint64_t ignore)
{
	struct item *it = item_new(id, addr, tag, ignore);

	assert_int_equal(lfv_match_post_recv(m, kind, &it->m), 0);
	return it;
}

static struct item *arrive(struct lfv_match *m, enum lfv_match_kind kind,
			   int id, fi_addr_t addr, uint64_t tag)
{
	struct item *it = item_new(id, addr, tag, 0);

	assert_int_equal(lfv_match_add_msg(m, kind, &it->m), 0);
	return it;
}

/* The id of the item of entry e (-1 when NULL), which remove takes out
 * of m before it is freed. */
static int take_entry(struct lfv_match *m, struct lfv_match_entry *e,
		      void (*remove)(struct lfv_match *m,
				     struct lfv_match_entry *e))
{
	struct item *it;
	int id;

	if (!e)
		return -1;
	it = lfv_container_of(e, struct item, m);
	id = it->id;
	remove(m, e);
	free(it);
	return id;
}

/* The id of the receive a message (addr, tag) matches, removing and
 * freeing it; -1 when none matches. */
static int take_recv(struct lfv_match *m, enum lfv_match_kind kind,
		     fi_addr_t addr, uint64_t tag)
{
	return take_entry(m, lfv_match_find_recv(m, kind, addr, tag),
			  lfv_match_remove_recv);
}

static int take_msg(struct lfv_match *m, enum lfv_match_kind kind,
		    fi_addr_t addr, uint64_t tag, uint64_t ignore)
{
	return take_entry(m, lfv_match_find_msg(m, kind, addr, tag, ignore),
			  lfv_match_remove_msg);
}

static int peek_msg(struct lfv_match *m, enum lfv_match_kind kind,
		    fi_addr_t addr, uint64_t tag, uint64_t ignore)
{
	struct lfv_match_entry *e = lfv_match_find_msg(m, kind, addr, tag,
						       ignore);

	return e ? lfv_container_of(e, struct item, m)->id : -1;
}

/* Everything removed: nothing may be left chained anywhere. */
static void assert_engine_empty(struct lfv_match *m)
{
	int k;

	for (k = 0; k < LFV_MATCH_KINDS; k++) {
		assert_int_equal(lfv_match_recv_count(m, k), 0);
		assert_int_equal(lfv_match_msg_count(m, k), 0);
		assert_int_equal(m->side[k].recvs.entries, 0);
		assert_int_equal(m->side[k].msgs.entries, 0);
		assert_int_equal(m->side[k].srcs.entries, 0);
		assert_true(lfv_list_empty(&m->side[k].wild_recvs));
		assert_true(lfv_list_empty(&m->side[k].arrivals));
	}
}

/* The engine tests: an engine in *state, which must be empty again at
 * the end; with directed receive when the test's initial state is
 * &engine_directed. */
static bool engine_directed = true;

static int engine_setup(void **state)
{
	struct lfv_match *m = malloc(sizeof(*m));

	assert_non_null(m);
	assert_int_equal(lfv_match_init(m, *state == &engine_directed), 0);
	*state = m;
	return 0;
}

static int engine_teardown(void **state)
{
	struct lfv_match *m = *state;

	assert_engine_empty(m);
	lfv_match_fini(m);
	free(m);
	return 0;
}

static void test_engine_init_bad_input(void **state)
{
	(void)state;
	assert_int_equal(lfv_match_init(NULL, false), -FI_EINVAL);
}

static void test_engine_posted_then_unexpected(void **state)
{
	struct lfv_match *m = *state;

	post(m, LFV_MATCH_TAG, 1, FI_ADDR_UNSPEC, 5, 0);
	post(m, LFV_MATCH_TAG, 2, FI_ADDR_UNSPEC, 5, 0);
	post(m, LFV_MATCH_TAG, 3, FI_ADDR_UNSPEC, 6, 0);
	post(m, LFV_MATCH_MSG, 4, FI_ADDR_UNSPEC, 0, 0);
	post(m, LFV_MATCH_MSG, 5, FI_ADDR_UNSPEC, 0, 0);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 7, 7), -1);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 7, 6), 3);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 7, 5), 1);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 7, 5), 2);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 7, 5), -1);
	/* Untagged receives ignore tags, and the kinds do not mix. */
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 7, 99), 4);
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 7, 0), 5);
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 7, 0), -1);
}

static void test_engine_unexpected_then_posted(void **state)
{
	struct lfv_match *m = *state;

	arrive(m, LFV_MATCH_TAG, 1, 10, 5);
	arrive(m, LFV_MATCH_TAG, 2, 11, 6);
	arrive(m, LFV_MATCH_TAG, 3, 12, 5);
	arrive(m, LFV_MATCH_TAG, 4, 13, 0x15);
	arrive(m, LFV_MATCH_MSG, 5, 14, 0);
	/* Peeking leaves the message queued. */
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 5, 0), 1);
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 5, 0), 1);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 5, 0), 1);
	/* A wildcard takes the earliest arrival it accepts. */
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 0, ~0ULL),
			 2);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 0x10, 0xf),
			 4);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 0x10, 0xf),
			 -1);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 5, 0), 3);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 5, 0), -1);
	assert_int_equal(take_msg(m, LFV_MATCH_MSG, FI_ADDR_UNSPEC, 0, 0), 5);
}

/*
 * Exact receives (hash queues) and wildcards (one list) interleaved: the
 * earliest-posted receive that accepts the message wins every time, from
 * whichever structure it lives in.
 */
static void test_engine_wildcards_interleaved(void **state)
{
	struct lfv_match *m = *state;

	post(m, LFV_MATCH_TAG, 1, FI_ADDR_UNSPEC, 5, 0);	/* exact 5 */
	post(m, LFV_MATCH_TAG, 2, FI_ADDR_UNSPEC, 0x10, 0xf);	/* 0x1? */
	post(m, LFV_MATCH_TAG, 3, FI_ADDR_UNSPEC, 0x12, 0);	/* exact */
	post(m, LFV_MATCH_TAG, 4, FI_ADDR_UNSPEC, 0, ~0ULL);	/* any */
	post(m, LFV_MATCH_TAG, 5, FI_ADDR_UNSPEC, 0x12, 0);	/* exact */
	post(m, LFV_MATCH_TAG, 6, FI_ADDR_UNSPEC, 0x13, 0x1);	/* 0x12/3 */
	/* The wildcard posted between two exact ones wins over both. */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), 2);
	/* Now the exact one posted before the match-all wildcard. */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), 3);
	/* The match-all wildcard before the second exact one. */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), 4);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), 5);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), 6);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 0x12), -1);
	/* The exact receive posted first was never in the way. */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 5), 1);
	assert_engine_empty(m);

	/* An exact receive posted before any wildcard wins over them. */
	post(m, LFV_MATCH_TAG, 7, FI_ADDR_UNSPEC, 9, 0);
	post(m, LFV_MATCH_TAG, 8, FI_ADDR_UNSPEC, 0, ~0ULL);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 9), 7);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 1, 9), 8);
}

/* Directed receive: specific sources, FI_ADDR_UNSPEC and wildcards. */
static void test_engine_directed(void **state)
{
	struct lfv_match *m = *state;

	post(m, LFV_MATCH_TAG, 1, 2, 1, 0);
	post(m, LFV_MATCH_TAG, 2, FI_ADDR_UNSPEC, 1, 0);
	post(m, LFV_MATCH_TAG, 3, 3, 1, 0);
	post(m, LFV_MATCH_TAG, 4, 4, 0, ~0ULL);	/* anything from 4 */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 3, 1), 2);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 3, 1), 3);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 3, 1), -1);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 5, 1), -1);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 4, 1), 4);
	/* An unknown source only meets FI_ADDR_UNSPEC receives. */
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1), -1);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 2, 1), 1);
	/* With no FI_ADDR_UNSPEC receive left a directed lookup is the only
	 * one; a new one is found again, and again after it is taken. */
	post(m, LFV_MATCH_TAG, 21, FI_ADDR_UNSPEC, 7, 0);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 9, 7), 21);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 9, 7), -1);
	post(m, LFV_MATCH_TAG, 22, 9, 7, 0);
	post(m, LFV_MATCH_TAG, 23, FI_ADDR_UNSPEC, 7, 0);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 8, 7), 23);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 9, 7), 22);

	/* Untagged: per-source queues. */
	post(m, LFV_MATCH_MSG, 5, 7, 0, 0);
	post(m, LFV_MATCH_MSG, 6, FI_ADDR_UNSPEC, 0, 0);
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 8, 0), 6);
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 8, 0), -1);
	assert_int_equal(take_recv(m, LFV_MATCH_MSG, 7, 0), 5);

	/* Unexpected messages by source. */
	arrive(m, LFV_MATCH_TAG, 11, 2, 1);
	arrive(m, LFV_MATCH_TAG, 12, 3, 1);
	arrive(m, LFV_MATCH_TAG, 13, FI_ADDR_UNSPEC, 1);
	arrive(m, LFV_MATCH_TAG, 14, 3, 1);
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, 3, 1, 0), 12);
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1, 0), 11);
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, 4, 1, 0), -1);
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, 3, 0, ~0ULL), 12);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1, 0), 11);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1, 0), 12);
	/* Removing through the all-sources queue also left source 3's. */
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 3, 1, 0), 14);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 3, 1, 0), -1);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1, 0), 13);
	arrive(m, LFV_MATCH_MSG, 15, 9, 0);
	arrive(m, LFV_MATCH_MSG, 16, 8, 0);
	assert_int_equal(take_msg(m, LFV_MATCH_MSG, 8, 0, 0), 16);
	assert_int_equal(take_msg(m, LFV_MATCH_MSG, FI_ADDR_UNSPEC, 0, 0), 15);
}

/* Without FI_DIRECTED_RECV semantics receive addresses are ignored. */
static void test_engine_undirected_ignores_addr(void **state)
{
	struct lfv_match *m = *state;

	post(m, LFV_MATCH_TAG, 1, 2, 1, 0);
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 3, 1), 1);
	arrive(m, LFV_MATCH_TAG, 2, 2, 1);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 3, 1, 0), 2);
	arrive(m, LFV_MATCH_TAG, 3, 2, 1);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 3, 0, ~0ULL), 3);
}

#define UNRELATED 10000
#define MAX_PROBES 8

/*
 * 10000 unrelated receives (other tags, other sources) change neither
 * the answer nor the work: a match examines at most a handful of queues
 * and entries (probes), whether the target was posted first or last.
 */
static void test_engine_unrelated_receives_o1(void **state)
{
	struct lfv_match m;
	uint64_t before;
	int i, round;

	(void)state;
	for (round = 0; round < 2; round++) {
		assert_int_equal(lfv_match_init(&m, true), 0);
		if (round == 1)
			post(&m, LFV_MATCH_TAG, 42, FI_ADDR_UNSPEC, 42, 0);
		for (i = 0; i < UNRELATED; i++)
			post(&m, LFV_MATCH_TAG, 1000 + i,
			     i % 2 ? (fi_addr_t)i : FI_ADDR_UNSPEC,
			     100000 + i, 0);
		if (round == 0)
			post(&m, LFV_MATCH_TAG, 42, FI_ADDR_UNSPEC, 42, 0);
		/* Wildcards posted after the target are not scanned past
		 * the first. */
		post(&m, LFV_MATCH_TAG, 43, FI_ADDR_UNSPEC, 0, ~0ULL);
		before = m.probes;
		assert_int_equal(take_recv(&m, LFV_MATCH_TAG, 7, 42), 42);
		assert_in_range(m.probes - before, 1, MAX_PROBES);
		/* A message nobody posted for costs as little. */
		before = m.probes;
		assert_int_equal(take_recv(&m, LFV_MATCH_TAG, 7, 77), 43);
		assert_in_range(m.probes - before, 1, MAX_PROBES);
		before = m.probes;
		assert_int_equal(take_recv(&m, LFV_MATCH_TAG, 7, 77), -1);
		assert_in_range(m.probes - before, 0, MAX_PROBES);
		/* Each unrelated one is still found, by its own key. */
		for (i = UNRELATED; i-- > 0;) {
			assert_int_equal(take_recv(&m, LFV_MATCH_TAG,
						   i % 2 ? (fi_addr_t)i : 5,
						   100000 + i), 1000 + i);
		}
		assert_engine_empty(&m);
		lfv_match_fini(&m);
	}
}

static void test_engine_unrelated_messages_o1(void **state)
{
	struct lfv_match *m = *state;
	uint64_t before;
	int i;

	for (i = 0; i < UNRELATED / 2; i++)
		arrive(m, LFV_MATCH_TAG, 1000 + i, (fi_addr_t)i, 100000 + i);
	arrive(m, LFV_MATCH_TAG, 42, 3, 42);
	arrive(m, LFV_MATCH_TAG, 44, 4, 42);
	for (i = UNRELATED / 2; i < UNRELATED; i++)
		arrive(m, LFV_MATCH_TAG, 1000 + i, (fi_addr_t)i, 100000 + i);
	before = m->probes;
	assert_int_equal(peek_msg(m, LFV_MATCH_TAG, 4, 42, 0), 44);
	assert_in_range(m->probes - before, 1, MAX_PROBES);
	before = m->probes;
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 42, 0),
			 42);
	assert_in_range(m->probes - before, 1, MAX_PROBES);
	before = m->probes;
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 4, 42, 0), 44);
	assert_in_range(m->probes - before, 1, MAX_PROBES);
	/* A wildcard receive scans arrivals: the cost is its position. */
	for (i = 0; i < UNRELATED; i++)
		assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 0,
					  ~0ULL), 1000 + i);
}

/*
 * The entries of one key stay in posting (arrival) order while the table
 * grows under them (64 buckets to 2048): 1000 receives and 1000 messages,
 * every other one with one shared key, the rest each with its own.
 */
static void test_engine_order_across_growth(void **state)
{
	struct lfv_match *m = *state;
	int i;

	for (i = 0; i < 1000; i++) {
		post(m, LFV_MATCH_TAG, i, 5, i % 2 ? 7 : 1000 + (uint64_t)i, 0);
		arrive(m, LFV_MATCH_TAG, i, i % 2 ? 5 : 6,
		       i % 2 ? 7 : 1000 + (uint64_t)i);
	}
	assert_true(m->side[LFV_MATCH_TAG].recvs.mask + 1 >= 1000);
	for (i = 1; i < 1000; i += 2) {
		assert_int_equal(take_recv(m, LFV_MATCH_TAG, 5, 7), i);
		assert_int_equal(take_msg(m, LFV_MATCH_TAG, 5, 7, 0), i);
	}
	assert_int_equal(take_recv(m, LFV_MATCH_TAG, 5, 7), -1);
	for (i = 0; i < 1000; i += 2) {
		assert_int_equal(take_recv(m, LFV_MATCH_TAG, 5,
					   1000 + (uint64_t)i), i);
		assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC,
					  1000 + (uint64_t)i, 0), i);
	}
}

/*
 * The hash spreads the key shapes MPI over libfabric produces: sequential
 * tags, a field high in the tag (a communicator's context id), the source
 * rank inside the tag, many sources with one tag. 4096 exact receives of
 * each shape, taken newest first so that each take walks its whole chain:
 * no chain is long and the average is near one.
 */
static void test_engine_hash_spreads_mpi_keys(void **state)
{
	enum { N = 4096 };
	struct lfv_match m;
	uint64_t before, probes, total, worst, tag;
	fi_addr_t addr;
	int shape, i;

	(void)state;
	for (shape = 0; shape < 4; shape++) {
		assert_int_equal(lfv_match_init(&m, true), 0);
		for (i = 0; i < N; i++) {
			tag = shape == 0 ? (uint64_t)i :
			      shape == 1 ? (uint64_t)i << 48 | 5 :
			      shape == 2 ? (uint64_t)i << 32 | 77 : 77;
			addr = shape == 3 ? (fi_addr_t)i : FI_ADDR_UNSPEC;
			post(&m, LFV_MATCH_TAG, i, addr, tag, 0);
		}
		total = worst = 0;
		for (i = N; i-- > 0;) {
			tag = shape == 0 ? (uint64_t)i :
			      shape == 1 ? (uint64_t)i << 48 | 5 :
			      shape == 2 ? (uint64_t)i << 32 | 77 : 77;
			before = m.probes;
			assert_int_equal(take_recv(&m, LFV_MATCH_TAG,
						   (fi_addr_t)i, tag), i);
			probes = m.probes - before;
			total += probes;
			worst = probes > worst ? probes : worst;
		}
		assert_in_range(worst, 1, MAX_PROBES);
		assert_in_range(total, N, N * 2);
		assert_engine_empty(&m);
		lfv_match_fini(&m);
	}
}

/* Removal out of order through the arrival walk. */
static void test_engine_arrival_walk(void **state)
{
	struct lfv_match_entry *e, *next;
	struct lfv_match *m = *state;
	int ids[4], n = 0;

	arrive(m, LFV_MATCH_TAG, 1, 1, 1);
	arrive(m, LFV_MATCH_TAG, 2, 2, 2);
	arrive(m, LFV_MATCH_TAG, 3, 1, 3);
	arrive(m, LFV_MATCH_TAG, 4, 2, 1);
	for (e = lfv_match_first_msg(m, LFV_MATCH_TAG); e; e = next) {
		struct item *it = lfv_container_of(e, struct item, m);

		next = lfv_match_next_msg(m, e);
		ids[n++] = it->id;
		if (e->addr == 1) {
			lfv_match_remove_msg(m, e);
			free(it);
		}
	}
	assert_int_equal(n, 4);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[3], 4);
	assert_int_equal(lfv_match_msg_count(m, LFV_MATCH_TAG), 2);
	assert_null(lfv_match_first_msg(m, LFV_MATCH_MSG));
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, FI_ADDR_UNSPEC, 1, 0), 4);
	assert_int_equal(take_msg(m, LFV_MATCH_TAG, 2, 2, 0), 2);
}

/* ==== the peer SRX: fakes =============================================== */

#define MAX_CALLS 32

struct call {
	struct fi_peer_rx_entry *entry;
	void *context;
	uint64_t flags;
	size_t count;
	void *base;
	size_t len;
	void *desc0;
	void *peer_context;
	uint64_t tag;
	fi_addr_t addr;
	size_t size;
};

/* A peer provider: records every start and discard. */
struct fake_peer {
	struct fi_ops_srx_peer ops;
	struct fid_peer_srx *ps;
	int start_ret;
	bool free_on_start;		/* free_entry from inside start */
	int nstarts;
	int ndiscards;
	struct call starts[MAX_CALLS];
	struct call discards[MAX_CALLS];
	atomic_int *matched;		/* concurrency test: by context */
	void *contexts;			/* base of the contexts array */
};

static struct fake_peer *fake_peer_of(struct fi_peer_rx_entry *entry)
{
	return lfv_container_of(entry->srx->peer_ops, struct fake_peer, ops);
}

static struct call record(struct fi_peer_rx_entry *e)
{
	return (struct call){
		.entry = e, .context = e->context, .flags = e->flags,
		.count = e->count,
		.base = e->count ? e->iov[0].iov_base : NULL,
		.len = e->count ? e->iov[0].iov_len : 0,
		.desc0 = e->count ? e->desc[0] : NULL,
		.peer_context = e->peer_context, .tag = e->tag,
		.addr = e->addr, .size = lfv_peer_entry_size(e),
	};
}

static int fake_start(struct fi_peer_rx_entry *entry)
{
	struct fake_peer *p = fake_peer_of(entry);
	struct fid_peer_srx *ps = entry->srx;

	if (p->matched) {
		atomic_fetch_add(&p->matched[(struct fi_context *)
					     entry->context -
					     (struct fi_context *)p->contexts],
				 1);
		ps->owner_ops->free_entry(entry);
		return 0;
	}
	assert_true(p->nstarts < MAX_CALLS);
	p->starts[p->nstarts++] = record(entry);
	/* Re-entering the owner from start must not deadlock. */
	if (p->free_on_start)
		ps->owner_ops->free_entry(entry);
	return p->start_ret;
}

static int fake_discard(struct fi_peer_rx_entry *entry)
{
	struct fake_peer *p = fake_peer_of(entry);

	assert_true(p->ndiscards < MAX_CALLS);
	p->discards[p->ndiscards++] = record(entry);
	return 0;
}

static void fake_peer_attach(struct fake_peer *p, struct fid_ep *srx)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(lfv_peer_srx_export(srx, &p->ps), 0);
	assert_int_equal(p->ps->ep_fid.fid.fclass, FI_CLASS_SRX_CTX);
	assert_non_null(p->ps->owner_ops);
	/* What a peer's fi_srx_context(FI_PEER) does. */
	p->ops = (struct fi_ops_srx_peer){
		.size = sizeof(p->ops),
		.start_msg = fake_start,
		.start_tag = fake_start,
		.discard_msg = fake_discard,
		.discard_tag = fake_discard,
	};
	p->ps->peer_ops = &p->ops;
}

/* ==== the peer SRX: helpers ============================================= */

static struct fid_ep *srx_open_caps(uint64_t caps)
{
	struct fi_rx_attr attr = { .iov_limit = 4 };
	struct fid_ep *srx = NULL;

	assert_int_equal(lfv_peer_srx_open(&attr, caps, NULL, &srx), 0);
	assert_non_null(srx);
	/* The cases check the flags a receive passes to the peer as given:
	 * selective (the default adds FI_COMPLETION: test_srx_every_recv). */
	assert_int_equal(lfv_peer_srx_set_selective(srx, true), 0);
	return srx;
}

static struct fid_ep *srx_open(void)
{
	return srx_open_caps(FI_MSG | FI_TAGGED);
}

static struct lfv_peer_srx_counts counts(struct fid_ep *srx)
{
	struct lfv_peer_srx_counts c;

	assert_int_equal(lfv_peer_srx_counts(srx, &c), 0);
	return c;
}

/* Closes the exports and the SRX; everything must have been freed. */
static void srx_close(struct fid_ep *srx, struct fake_peer *peers, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(fi_close(&peers[i].ps->ep_fid.fid), 0);
	assert_int_equal(counts(srx).exports, 0);
	assert_int_equal(fi_close(&srx->fid), 0);
}

/* A message arrives at the peer with no receive posted: get, fill,
 * queue. Returns the entry (owned by the SRX while queued). */
static struct fi_peer_rx_entry *arrive_tag(struct fake_peer *p, fi_addr_t addr,
					   uint64_t tag, size_t size,
					   void *peer_context)
{
	struct fi_peer_rx_entry *e = NULL;

	assert_int_equal(test_get_tag(p->ps->owner_ops, p->ps, addr, tag, &e),
			 -FI_ENOENT);
	assert_non_null(e);
	assert_int_equal(e->addr, addr);
	assert_int_equal(e->tag, tag);
	assert_ptr_equal(e->srx, p->ps);
	lfv_peer_entry_set_size(e, size);
	e->peer_context = peer_context;
	assert_int_equal(p->ps->owner_ops->queue_tag(e), 0);
	return e;
}

static struct fi_peer_rx_entry *arrive_msg(struct fake_peer *p, fi_addr_t addr,
					   size_t size, void *peer_context)
{
	struct fi_peer_rx_entry *e = NULL;

	assert_int_equal(test_get_msg(p->ps->owner_ops, p->ps, addr, size, &e),
			 -FI_ENOENT);
	assert_non_null(e);
	assert_int_equal(lfv_peer_entry_size(e), size);
	e->peer_context = peer_context;
	assert_int_equal(p->ps->owner_ops->queue_msg(e), 0);
	return e;
}

/* The peer finished an entry it was started with. */
static void peer_done(struct fake_peer *p, int start)
{
	p->ps->owner_ops->free_entry(p->starts[start].entry);
}

static ssize_t trecvmsg(struct fid_ep *srx, void *buf, size_t len,
			fi_addr_t addr, uint64_t tag, uint64_t ignore,
			void *context, uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = buf ? 1 : 0, .addr = addr,
		.tag = tag, .ignore = ignore, .context = context,
	};

	return fi_trecvmsg(srx, &msg, flags);
}

static ssize_t mrecv(struct fid_ep *srx, void *buf, size_t len, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.context = context,
	};

	return fi_recvmsg(srx, &msg, FI_MULTI_RECV);
}

/* ==== the peer SRX: tests =============================================== */

static void test_srx_open_bad_input(void **state)
{
	struct fi_rx_attr attr = { 0 };
	struct fid_ep *srx = (struct fid_ep *)0x1, *good;
	struct fid_peer_srx *ps = (struct fid_peer_srx *)0x1;
	struct lfv_peer_srx_counts c = { .posted = 77 };
	struct fid_ep foreign = { .fid = { .fclass = FI_CLASS_SRX_CTX } };
	struct unit_peer_cq cq;

	(void)state;
	assert_int_equal(lfv_peer_srx_open(NULL, FI_TAGGED, NULL, &srx),
			 -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_open(&attr, FI_TAGGED, NULL, NULL),
			 -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_open(&attr, FI_RMA, NULL, &srx),
			 -FI_EINVAL);
	attr.iov_limit = LFV_PEER_SRX_MAX_IOV_LIMIT + 1;
	assert_int_equal(lfv_peer_srx_open(&attr, FI_TAGGED, NULL, &srx),
			 -FI_EINVAL);
	attr.iov_limit = 0;
	attr.op_flags = FI_INJECT;
	assert_int_equal(lfv_peer_srx_open(&attr, FI_TAGGED, NULL, &srx),
			 -FI_EBADFLAGS);
	assert_ptr_equal(srx, (struct fid_ep *)0x1);

	attr.op_flags = FI_COMPLETION;
	assert_int_equal(lfv_peer_srx_open(&attr, 0, &attr, &good), 0);
	assert_int_equal(good->fid.fclass, FI_CLASS_SRX_CTX);
	assert_ptr_equal(good->fid.context, &attr);
	/* The helpers refuse objects that are not one of ours. */
	assert_int_equal(lfv_peer_srx_export(NULL, &ps), -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_export(&foreign, &ps), -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_export(good, NULL), -FI_EINVAL);
	assert_ptr_equal(ps, (struct fid_peer_srx *)0x1);
	assert_int_equal(lfv_peer_srx_bind_cq(&foreign, NULL), -FI_EINVAL);
	unit_peer_cq_init(&cq);
	cq.ops.writeerr = NULL;
	assert_int_equal(lfv_peer_srx_bind_cq(good, &cq.cq), -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_counts(&foreign, &c), -FI_EINVAL);
	assert_int_equal(lfv_peer_srx_counts(good, NULL), -FI_EINVAL);
	assert_int_equal(c.posted, 77);
	assert_int_equal(fi_close(&good->fid), 0);
}

static void test_srx_send_side_enosys(void **state)
{
	struct fid_ep *srx = srx_open();
	char buf[8];

	(void)state;
	assert_int_equal(fi_send(srx, buf, 8, NULL, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_inject(srx, buf, 8, 0), -FI_ENOSYS);
	assert_int_equal(fi_tsend(srx, buf, 8, NULL, 0, 1, NULL), -FI_ENOSYS);
	assert_int_equal(fi_tinjectdata(srx, buf, 8, 1, 0, 1), -FI_ENOSYS);
	assert_int_equal(fi_write(srx, buf, 8, NULL, 0, 0, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_ep_bind(srx, &srx->fid, 0), -FI_ENOSYS);
	assert_int_equal(srx->ops->rx_size_left(srx), -FI_ENOSYS);
	srx_close(srx, NULL, 0);
}

/* Flow 1 of fi_peer(3): the receive waits, get_tag returns it. */
static void test_srx_posted_then_get(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e = NULL;
	struct fake_peer p;
	char buf[64];
	void *desc = (void *)0xd35c;

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), desc, FI_ADDR_UNSPEC,
				  7, 0, (void *)0xc1), 0);
	assert_int_equal(counts(srx).posted, 1);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 3, 8, &e), -FI_ENOENT);
	p.ps->owner_ops->free_entry(e);
	e = NULL;
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 3, 7, &e), 0);
	assert_non_null(e);
	assert_ptr_equal(e->context, (void *)0xc1);
	assert_int_equal(e->count, 1);
	assert_ptr_equal(e->iov[0].iov_base, buf);
	assert_int_equal(e->iov[0].iov_len, sizeof(buf));
	assert_ptr_equal(e->desc[0], desc);
	assert_int_equal(e->tag, 7);
	assert_int_equal(e->addr, 3);
	assert_int_equal(e->flags, FI_TAGGED | FI_RECV);
	assert_ptr_equal(e->srx, p.ps);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).entries, 1);
	/* The exported SRX cannot close while its peer holds an entry. */
	assert_int_equal(fi_close(&p.ps->ep_fid.fid), -FI_EBUSY);
	assert_int_equal(fi_close(&srx->fid), -FI_EBUSY);
	p.ps->owner_ops->free_entry(e);
	assert_int_equal(counts(srx).entries, 0);
	assert_int_equal(p.nstarts, 0);
	srx_close(srx, &p, 1);
}

/* The owner's own lookup (lfv_peer_srx_export_get, an RDM endpoint on its
 * own SRX): what get_tag and get_msg give, without the owner ops. A
 * posted receive is found, with the message's source, tag and size; one
 * that does not match gives a fresh entry; a kind the SRX lacks is
 * refused. */
static void test_srx_export_get_direct(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fid_ep *tag_only = srx_open_caps(FI_TAGGED);
	struct lfv_peer_match m = { .addr = 3, .msg_size = 40, .tag = 7 };
	struct fi_peer_rx_entry *e = NULL;
	struct fake_peer p, q;
	char buf[64];

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				  7, 0, (void *)0xc1), 0);
	m.tag = 8;
	assert_int_equal(lfv_peer_srx_export_get(p.ps, true, &m, &e),
			 -FI_ENOENT);
	assert_non_null(e);
	assert_ptr_equal(e->srx, p.ps);
	p.ps->owner_ops->free_entry(e);
	e = NULL;
	m.tag = 7;
	assert_int_equal(lfv_peer_srx_export_get(p.ps, true, &m, &e), 0);
	assert_non_null(e);
	assert_ptr_equal(e->context, (void *)0xc1);
	assert_ptr_equal(e->iov[0].iov_base, buf);
	assert_int_equal(e->addr, 3);
	assert_int_equal(e->tag, 7);
	assert_int_equal(lfv_peer_entry_size(e), 40);
	assert_int_equal(e->flags, FI_TAGGED | FI_RECV);
	assert_ptr_equal(e->srx, p.ps);
	assert_int_equal(counts(srx).posted, 0);
	p.ps->owner_ops->free_entry(e);
	/* A message receive on the same SRX: get_msg's kind. */
	assert_int_equal(fi_recv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				 (void *)0xc2), 0);
	e = NULL;
	assert_int_equal(lfv_peer_srx_export_get(p.ps, false, &m, &e), 0);
	assert_ptr_equal(e->context, (void *)0xc2);
	assert_int_equal(e->flags, FI_MSG | FI_RECV);
	p.ps->owner_ops->free_entry(e);
	/* An SRX of tagged receives only has no message kind. */
	fake_peer_attach(&q, tag_only);
	e = NULL;
	assert_int_equal(lfv_peer_srx_export_get(q.ps, false, &m, &e),
			 -FI_EOPNOTSUPP);
	assert_null(e);
	srx_close(tag_only, &q, 1);
	srx_close(srx, &p, 1);
}

/* Flow 2: the message waits, the application's receive starts it. */
static void test_srx_get_queue_start(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e;
	struct fake_peer p;
	char buf[256];
	struct fi_context ctx;

	(void)state;
	fake_peer_attach(&p, srx);
	p.free_on_start = true;
	e = arrive_tag(&p, 5, 0x77, 100, (void *)0xbee);
	assert_int_equal(counts(srx).unexpected, 1);
	assert_int_equal(p.nstarts, 0);
	/* Another tag is not it. */
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 0x78, 0,
				  NULL), 0);
	assert_int_equal(p.nstarts, 0);
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				  0x70, 0xf, &ctx), 0);
	assert_int_equal(p.nstarts, 1);
	assert_ptr_equal(p.starts[0].entry, e);
	assert_ptr_equal(p.starts[0].context, &ctx);
	assert_ptr_equal(p.starts[0].base, buf);
	assert_int_equal(p.starts[0].len, sizeof(buf));
	assert_null(p.starts[0].desc0);
	assert_ptr_equal(p.starts[0].peer_context, (void *)0xbee);
	assert_int_equal(p.starts[0].tag, 0x77);	/* the message's */
	assert_int_equal(p.starts[0].addr, 5);
	assert_int_equal(p.starts[0].size, 100);
	assert_int_equal(p.starts[0].flags, FI_TAGGED | FI_RECV);
	/* free_on_start freed it from inside start_tag. */
	assert_int_equal(counts(srx).unexpected, 0);
	assert_int_equal(counts(srx).posted, 1);
	assert_int_equal(counts(srx).entries, 1);
	srx_close(srx, &p, 1);
}

/* shm of 1.18 to 1.22 binds our fid_peer_srx by copying its owner_ops and
 * fid.context into one of its own (no fid ops, its own peer ops) and calls
 * the owner with the copy: the owner finds its SRX through the context,
 * and starts the entry with the copy's peer ops, never the export's. */
/* fi_export_fid with a context of the caller's: the fid keeps lfverbs' own
 * context, which a peer's copy (shm 1.18-1.22) follows back to the SRX. */
static void test_srx_export_fid_copy_finds_owner(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fid_peer_srx copy = { 0 }, *ps;
	struct fi_peer_rx_entry *e = NULL;
	struct fid *fid = NULL;
	int user_ctx;

	(void)state;
	assert_int_equal(fi_export_fid(&srx->fid, 0, &fid, &user_ctx), 0);
	ps = lfv_container_of(fid, struct fid_peer_srx, ep_fid.fid);
	copy.owner_ops = ps->owner_ops;
	copy.ep_fid.fid.context = ps->ep_fid.fid.context;
	assert_int_equal(test_get_tag(copy.owner_ops, &copy, 4, 0x21, &e),
			 -FI_ENOENT);
	assert_non_null(e);
	copy.owner_ops->free_entry(e);
	assert_int_equal(fi_close(fid), 0);
	assert_int_equal(fi_close(&srx->fid), 0);
}

static void test_srx_peer_calls_through_a_copy(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fid_peer_srx copy = { 0 };
	struct fi_peer_rx_entry *e = NULL;
	struct fake_peer p, q;
	struct fi_context ctx[2];
	char buf[64];

	(void)state;
	fake_peer_attach(&p, srx);
	memset(&q, 0, sizeof(q));
	q.ops = p.ops;
	q.free_on_start = true;
	copy.owner_ops = p.ps->owner_ops;
	copy.peer_ops = &q.ops;
	copy.ep_fid.fid.context = p.ps->ep_fid.fid.context;

	/* Unexpected: queued through the copy, started with its ops. */
	assert_int_equal(test_get_tag(copy.owner_ops, &copy, 4, 0x11, &e),
			 -FI_ENOENT);
	assert_non_null(e);
	assert_ptr_equal(e->srx, &copy);
	lfv_peer_entry_set_size(e, 10);
	assert_int_equal(copy.owner_ops->queue_tag(e), 0);
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				  0x11, 0, &ctx[0]), 0);
	assert_int_equal(q.nstarts, 1);
	assert_int_equal(p.nstarts, 0);
	assert_ptr_equal(q.starts[0].context, &ctx[0]);

	/* Posted first: the copy's get finds it. */
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				  0x12, 0, &ctx[1]), 0);
	e = NULL;
	assert_int_equal(test_get_tag(copy.owner_ops, &copy, 4, 0x12, &e), 0);
	assert_ptr_equal(e->context, &ctx[1]);
	copy.owner_ops->free_entry(e);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, &p, 1);
}

/* An SRX no selective endpoint receives through completes every receive:
 * its entries say FI_COMPLETION to the peer (shm goes by it), fi_trecv's
 * and fi_trecvmsg's alike; selective, only those that ask. */
static void test_srx_every_recv_completes(void **state)
{
	struct fi_rx_attr attr = { .iov_limit = 4 };
	struct fi_peer_rx_entry *e;
	struct fid_ep *srx = NULL;
	struct fi_context ctx[4];
	struct fake_peer p;
	char buf[8];
	int i;

	(void)state;
	assert_int_equal(lfv_peer_srx_open(&attr, FI_TAGGED, NULL, &srx), 0);
	fake_peer_attach(&p, srx);
	for (i = 0; i < 4; i++) {
		if (i == 2)
			assert_int_equal(lfv_peer_srx_set_selective(srx, true),
					 0);
		if (i % 2)
			assert_int_equal(trecvmsg(srx, buf, sizeof(buf),
						  FI_ADDR_UNSPEC, i, 0,
						  &ctx[i], 0), 0);
		else
			assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL,
						  FI_ADDR_UNSPEC, i, 0,
						  &ctx[i]), 0);
		e = NULL;
		assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 1, i, &e),
				 0);
		assert_ptr_equal(e->context, &ctx[i]);
		assert_int_equal(!!(e->flags & FI_COMPLETION), i < 2);
		p.ps->owner_ops->free_entry(e);
	}
	assert_int_equal(lfv_peer_srx_set_selective(NULL, true), -FI_EINVAL);
	srx_close(srx, &p, 1);
}

/* Untagged, through fi_recvv with several iovs and descriptors, and
 * FI_COMPLETION passed through. */
static void test_srx_msg_round_trip(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e = NULL;
	char a[16], b[32];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	void *desc[2] = { (void *)0xd1, (void *)0xd2 };
	struct fi_msg msg = {
		.msg_iov = iov, .desc = desc, .iov_count = 2,
		.addr = FI_ADDR_UNSPEC, .context = (void *)0xc2,
	};
	struct fake_peer p;

	(void)state;
	fake_peer_attach(&p, srx);
	arrive_msg(&p, 9, 40, (void *)0x9);
	assert_int_equal(fi_recvmsg(srx, &msg, FI_COMPLETION), 0);
	assert_int_equal(p.nstarts, 1);
	e = p.starts[0].entry;
	assert_int_equal(e->count, 2);
	assert_ptr_equal(e->iov[1].iov_base, b);
	assert_ptr_equal(e->desc[1], (void *)0xd2);
	assert_int_equal(p.starts[0].flags, FI_MSG | FI_RECV | FI_COMPLETION);
	assert_int_equal(p.starts[0].size, 40);
	peer_done(&p, 0);
	/* Now the receive first, through fi_recvv. */
	assert_int_equal(fi_recvv(srx, iov, desc, 2, FI_ADDR_UNSPEC,
				  (void *)0xc3), 0);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 4, 10, &e), 0);
	assert_ptr_equal(e->context, (void *)0xc3);
	assert_int_equal(e->count, 2);
	assert_int_equal(lfv_peer_entry_size(e), 10);
	assert_int_equal(e->addr, 4);
	assert_int_equal(e->flags, FI_MSG | FI_RECV);
	p.ps->owner_ops->free_entry(e);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, &p, 1);
}

/* A receive posted between get_tag's -FI_ENOENT and queue_tag is started
 * by queue_tag itself, which returns what start returned. */
static void test_srx_queue_meets_late_receive(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e = NULL;
	struct fake_peer p;
	char buf[32];

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 1, 3, &e), -FI_ENOENT);
	lfv_peer_entry_set_size(e, 20);
	assert_int_equal(fi_trecv(srx, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
				  3, 0, (void *)0xc4), 0);
	p.start_ret = -FI_EIO;
	assert_int_equal(p.ps->owner_ops->queue_tag(e), -FI_EIO);
	assert_int_equal(p.nstarts, 1);
	assert_ptr_equal(p.starts[0].entry, e);
	assert_ptr_equal(p.starts[0].context, (void *)0xc4);
	assert_ptr_equal(p.starts[0].base, buf);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).unexpected, 0);
	/* Started: queueing it again is refused. */
	assert_int_equal(p.ps->owner_ops->queue_tag(e), -FI_EINVAL);
	peer_done(&p, 0);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, &p, 1);
}

/* Messages from two peers start in arrival order, each through the
 * peer_ops of the peer that queued it. */
static void test_srx_two_peers_in_order(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fake_peer p[2];
	char buf[8];

	(void)state;
	fake_peer_attach(&p[0], srx);
	fake_peer_attach(&p[1], srx);
	assert_int_equal(counts(srx).exports, 2);
	arrive_tag(&p[1], 2, 1, 8, (void *)0xb1);
	arrive_tag(&p[0], 1, 1, 8, (void *)0xa1);
	arrive_tag(&p[1], 2, 1, 8, (void *)0xb2);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  NULL), 0);
	assert_int_equal(p[1].nstarts, 1);
	assert_int_equal(p[0].nstarts, 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  NULL), 0);
	assert_int_equal(p[0].nstarts, 1);
	assert_ptr_equal(p[0].starts[0].peer_context, (void *)0xa1);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  NULL), 0);
	assert_int_equal(p[1].nstarts, 2);
	assert_ptr_equal(p[1].starts[1].peer_context, (void *)0xb2);
	peer_done(&p[0], 0);
	peer_done(&p[1], 0);
	peer_done(&p[1], 1);
	srx_close(srx, p, 2);
}

/* Through the SRX: exact and wildcard receives interleaved. */
static void test_srx_earliest_posted_wins(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e;
	struct fake_peer p;
	char buf[8];
	int i;
	const struct {
		uint64_t tag;
		void *context;
	} expect[] = {
		{ 5, (void *)1 }, { 9, (void *)2 }, { 5, (void *)3 },
		{ 5, (void *)4 }, { 0x25, (void *)5 },
	};

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 0, 5, 0, (void *)1), 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 0, 0, ~0ULL, (void *)2),
			 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 0, 5, 0, (void *)3), 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 0, 0x5, 0xf0, (void *)4),
			 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 0, 0x25, 0, (void *)5),
			 0);
	for (i = 0; i < 5; i++) {
		e = NULL;
		assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 1,
							  expect[i].tag, &e),
				 0);
		assert_ptr_equal(e->context, expect[i].context);
		assert_int_equal(e->tag, expect[i].tag);
		p.ps->owner_ops->free_entry(e);
	}
	assert_int_equal(counts(srx).posted, 0);
	srx_close(srx, &p, 1);
}

static void test_srx_directed(void **state)
{
	struct fi_peer_rx_entry *e = NULL;
	struct fid_ep *srx;
	struct fake_peer p;
	char buf[8];

	(void)state;
	srx = srx_open_caps(FI_TAGGED | FI_MSG | FI_DIRECTED_RECV);
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 2, 1, 0, (void *)1), 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  (void *)2), 0);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 3, 1, &e), 0);
	assert_ptr_equal(e->context, (void *)2);
	p.ps->owner_ops->free_entry(e);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 3, 1, &e), -FI_ENOENT);
	p.ps->owner_ops->free_entry(e);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 2, 1, &e), 0);
	assert_ptr_equal(e->context, (void *)1);
	p.ps->owner_ops->free_entry(e);
	/* Untagged: a message from 4 waits for a receive from 4. */
	arrive_msg(&p, 4, 1, NULL);
	assert_int_equal(fi_recv(srx, buf, 8, NULL, 5, (void *)3), 0);
	assert_int_equal(p.nstarts, 0);
	assert_int_equal(fi_recv(srx, buf, 8, NULL, 4, (void *)4), 0);
	assert_int_equal(p.nstarts, 1);
	assert_ptr_equal(p.starts[0].context, (void *)4);
	peer_done(&p, 0);
	srx_close(srx, &p, 1);

	/* Without FI_DIRECTED_RECV the address of a receive is ignored. */
	srx = srx_open();
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 2, 1, 0, (void *)1), 0);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 3, 1, &e), 0);
	assert_ptr_equal(e->context, (void *)1);
	p.ps->owner_ops->free_entry(e);
	srx_close(srx, &p, 1);
}

/* The peer's address book: peer_context 1 is address 2 once known. */
static int named_calls;

static fi_addr_t name_by_context(struct fi_peer_rx_entry *e)
{
	named_calls++;
	return e->peer_context == (void *)1 ? 2 : FI_ADDR_UNSPEC;
}

/* foreach_unspec_addr: a message queued from FI_ADDR_UNSPEC is named by
 * the peer that queued it, keeps its arrival order, and directed receives
 * accept it from then on; another peer's messages are not its to name. */
static void test_srx_foreach_unspec_addr(void **state)
{
	struct fid_ep *srx = srx_open_caps(FI_TAGGED | FI_MSG | FI_DIRECTED_RECV);
	struct fi_peer_rx_entry *first, *second;
	struct fake_peer p[2];
	char buf[8];

	(void)state;
	fake_peer_attach(&p[0], srx);
	fake_peer_attach(&p[1], srx);
	p[0].free_on_start = true;
	first = arrive_tag(&p[0], FI_ADDR_UNSPEC, 1, 4, (void *)1);
	second = arrive_tag(&p[0], 2, 1, 4, (void *)3);
	arrive_tag(&p[1], FI_ADDR_UNSPEC, 1, 4, (void *)1);
	/* The other peer's entry is not offered to this peer's get_addr. */
	named_calls = 0;
	lfv_peer_srx_foreach_unspec_addr(p[0].ps, name_by_context);
	assert_int_equal(named_calls, 1);
	assert_int_equal(first->addr, 2);
	/* From 2, the first to arrive is the one just named. */
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 2, 1, 0, (void *)1), 0);
	assert_int_equal(p[0].nstarts, 1);
	assert_ptr_equal(p[0].starts[0].entry, first);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 2, 1, 0, (void *)2), 0);
	assert_int_equal(p[0].nstarts, 2);
	assert_ptr_equal(p[0].starts[1].entry, second);
	/* The other peer's message is still from nobody known. */
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, 2, 1, 0, (void *)3), 0);
	assert_int_equal(p[1].nstarts, 0);
	assert_int_equal(counts(srx).unexpected, 1);
	lfv_peer_srx_foreach_unspec_addr(NULL, name_by_context);	/* ignored */
	srx_close(srx, p, 2);
}

static void test_srx_peek(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fake_peer p;
	struct unit_peer_cq cq;
	char buf[8];

	(void)state;
	fake_peer_attach(&p, srx);
	unit_peer_cq_init(&cq);
	/* No sink: nothing can report the result. */
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0,
				  (void *)1, FI_PEEK), -FI_ENOCQ);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, &cq.cq), 0);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0,
				  (void *)1, FI_PEEK), 0);
	assert_int_equal(cq.nwrites, 0);
	assert_int_equal(cq.nerrs, 1);
	assert_int_equal(cq.errs[0].err, FI_ENOMSG);
	assert_ptr_equal(cq.errs[0].op_context, (void *)1);
	assert_int_equal(cq.errs[0].tag, 4);
	assert_int_equal(cq.errs[0].flags, FI_TAGGED | FI_RECV);

	arrive_tag(&p, 9, 0x44, 50, NULL);
	assert_int_equal(trecvmsg(srx, buf, 8, FI_ADDR_UNSPEC, 0x40, 0xf,
				  (void *)2, FI_PEEK), 0);
	assert_int_equal(cq.nwrites, 1);
	assert_ptr_equal(cq.writes[0].context, (void *)2);
	assert_int_equal(cq.writes[0].len, 50);
	assert_int_equal(cq.writes[0].tag, 0x44);
	assert_int_equal(cq.writes[0].src, 9);
	assert_int_equal(cq.writes[0].data, 0);
	assert_null(cq.writes[0].buf);
	assert_int_equal(cq.writes[0].flags, FI_TAGGED | FI_RECV);
	/* Still queued: a peek again finds it, a receive takes it. */
	assert_int_equal(counts(srx).unexpected, 1);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 0x44, 0,
				  (void *)3, FI_PEEK), 0);
	assert_int_equal(cq.nwrites, 2);
	assert_int_equal(p.nstarts, 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 0x44, 0,
				  NULL), 0);
	assert_int_equal(p.nstarts, 1);
	peer_done(&p, 0);
	srx_close(srx, &p, 1);
}

static void test_srx_peek_claim(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_context ctx, other;
	struct fake_peer p;
	struct unit_peer_cq cq;
	char buf[64];

	(void)state;
	fake_peer_attach(&p, srx);
	unit_peer_cq_init(&cq);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, &cq.cq), 0);
	arrive_tag(&p, 9, 4, 30, (void *)0x4);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, NULL,
				  FI_PEEK | FI_CLAIM), -FI_EINVAL);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, &ctx,
				  FI_PEEK | FI_CLAIM), 0);
	assert_int_equal(cq.nwrites, 1);
	assert_ptr_equal(cq.writes[0].context, &ctx);
	assert_int_equal(cq.writes[0].len, 30);
	assert_int_equal(counts(srx).unexpected, 0);
	assert_int_equal(counts(srx).claimed, 1);
	/* Claimed: invisible to ordinary receives and peeks. */
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, &other,
				  FI_PEEK), 0);
	assert_int_equal(cq.nerrs, 1);
	assert_int_equal(cq.errs[0].err, FI_ENOMSG);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 4, 0,
				  &other), 0);
	assert_int_equal(p.nstarts, 0);
	assert_int_equal(fi_cancel(&srx->fid, &other), 0);
	/* One claim per context. */
	arrive_tag(&p, 9, 4, 31, NULL);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, &ctx,
				  FI_PEEK | FI_CLAIM), -FI_EALREADY);
	/* The claiming receive gets it, with its own buffers. */
	assert_int_equal(trecvmsg(srx, buf, sizeof(buf), FI_ADDR_UNSPEC, 0, 0,
				  &other, FI_CLAIM), -FI_ENOENT);
	assert_int_equal(trecvmsg(srx, buf, sizeof(buf), FI_ADDR_UNSPEC, 0, 0,
				  &ctx, FI_CLAIM | FI_COMPLETION), 0);
	assert_int_equal(p.nstarts, 1);
	assert_ptr_equal(p.starts[0].context, &ctx);
	assert_ptr_equal(p.starts[0].peer_context, (void *)0x4);
	assert_ptr_equal(p.starts[0].base, buf);
	assert_int_equal(p.starts[0].flags,
			 FI_TAGGED | FI_RECV | FI_COMPLETION);
	assert_int_equal(counts(srx).claimed, 0);
	assert_int_equal(trecvmsg(srx, buf, 8, FI_ADDR_UNSPEC, 0, 0, &ctx,
				  FI_CLAIM), -FI_ENOENT);
	peer_done(&p, 0);
	/* The second message is still there for someone else. */
	assert_int_equal(counts(srx).unexpected, 1);
	srx_close(srx, &p, 1);	/* discards it */
	assert_int_equal(p.ndiscards, 1);
	assert_int_equal(p.discards[0].size, 31);
}

/* A message discarded: the peer's n-th discard, for its peer_context,
 * and the CQ's nwrites-th completion, len bytes of tag. */
static void expect_discard(const struct fake_peer *p, int n,
			   void *peer_context, const struct unit_peer_cq *cq,
			   int nwrites, size_t len, uint64_t tag)
{
	assert_int_equal(p->ndiscards, n);
	assert_ptr_equal(p->discards[n - 1].peer_context, peer_context);
	assert_int_equal(cq->nwrites, nwrites);
	assert_int_equal(cq->writes[nwrites - 1].len, len);
	assert_int_equal(cq->writes[nwrites - 1].tag, tag);
}

static void test_srx_discard(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_context ctx;
	struct fake_peer p;
	struct unit_peer_cq cq;

	(void)state;
	fake_peer_attach(&p, srx);
	unit_peer_cq_init(&cq);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, &ctx,
				  FI_DISCARD), -FI_EINVAL);
	arrive_tag(&p, 9, 4, 30, (void *)0x4);
	arrive_tag(&p, 8, 5, 40, (void *)0x5);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 4, 0, &ctx,
				  FI_PEEK | FI_DISCARD), -FI_ENOCQ);
	assert_int_equal(counts(srx).unexpected, 2);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, &cq.cq), 0);
	/* Buffers are ignored with FI_DISCARD, even impossible ones. */
	assert_int_equal(fi_trecvmsg(srx, &(struct fi_msg_tagged){
					.iov_count = 99, .tag = 4,
					.addr = FI_ADDR_UNSPEC,
					.context = &ctx },
				     FI_PEEK | FI_DISCARD), 0);
	expect_discard(&p, 1, (void *)0x4, &cq, 1, 30, 4);
	assert_int_equal(p.nstarts, 0);
	assert_ptr_equal(cq.writes[0].context, &ctx);
	/* The owner freed the discarded entry. */
	assert_int_equal(counts(srx).unexpected, 1);
	assert_int_equal(counts(srx).entries, 1);

	/* Claim, then discard the claimed message. */
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 5, 0, &ctx,
				  FI_PEEK | FI_CLAIM), 0);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 0, 0, &ctx,
				  FI_CLAIM | FI_DISCARD), 0);
	expect_discard(&p, 2, (void *)0x5, &cq, 3, 40, 5);
	assert_int_equal(counts(srx).entries, 0);
	assert_int_equal(counts(srx).claimed, 0);
	/* Nothing left to discard. */
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 5, 0, &ctx,
				  FI_PEEK | FI_DISCARD), 0);
	assert_int_equal(cq.nerrs, 1);
	assert_int_equal(cq.errs[0].err, FI_ENOMSG);
	assert_int_equal(p.nstarts, 0);
	srx_close(srx, &p, 1);
}

static void test_srx_multi_recv_get(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e[4];
	size_t min = 100, got = 0;
	struct fake_peer p;
	char buf[1000];
	int i;
	const size_t sizes[] = { 300, 300, 300, 50 };

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	got = sizeof(got);
	min = 0;
	assert_int_equal(fi_getopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, &got), 0);
	assert_int_equal(min, 100);
	assert_int_equal(got, sizeof(size_t));
	assert_int_equal(mrecv(srx, buf, sizeof(buf), (void *)0x3c), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, sizes[i],
							  &e[i]), 0);
		assert_ptr_equal(e[i]->context, (void *)0x3c);
		assert_int_equal(e[i]->count, 1);
		assert_ptr_equal(e[i]->iov[0].iov_base, buf + 300 * i);
		assert_int_equal(e[i]->iov[0].iov_len, sizes[i]);
		assert_int_equal(lfv_peer_entry_size(e[i]), sizes[i]);
	}
	/* 100 left after three carves is not below the minimum; 50 is. */
	for (i = 0; i < 3; i++)
		assert_int_equal(e[i]->flags, FI_MSG | FI_RECV);
	assert_int_equal(e[3]->flags,
			 FI_MSG | FI_RECV | FI_MULTI_RECV | FI_COMPLETION);
	assert_int_equal(counts(srx).posted, 0);
	for (i = 0; i < 4; i++)
		p.ps->owner_ops->free_entry(e[i]);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 10, &e[0]),
			 -FI_ENOENT);
	p.ps->owner_ops->free_entry(e[0]);
	assert_int_equal(counts(srx).entries, 0);

	/* A message larger than the room left gets the room left. */
	min = 10;
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	assert_int_equal(mrecv(srx, buf, 100, NULL), 0);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 500, &e[0]), 0);
	assert_int_equal(e[0]->iov[0].iov_len, 100);
	assert_true(e[0]->flags & FI_MULTI_RECV);
	p.ps->owner_ops->free_entry(e[0]);
	srx_close(srx, &p, 1);
}

/* Queued messages meet a newly posted buffer: carved in arrival order,
 * the buffer released by the carve that leaves too little room. */
static void test_srx_multi_recv_unexpected(void **state)
{
	struct fid_ep *srx = srx_open();
	size_t min = 300;
	struct fake_peer p;
	char buf[1000];

	(void)state;
	fake_peer_attach(&p, srx);
	p.free_on_start = true;
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	arrive_msg(&p, 1, 400, (void *)1);
	arrive_msg(&p, 2, 400, (void *)2);
	arrive_msg(&p, 3, 400, (void *)3);
	assert_int_equal(mrecv(srx, buf, sizeof(buf), (void *)0x3c), 0);
	assert_int_equal(p.nstarts, 2);
	assert_ptr_equal(p.starts[0].peer_context, (void *)1);
	assert_ptr_equal(p.starts[0].base, buf);
	assert_int_equal(p.starts[0].len, 400);
	assert_int_equal(p.starts[0].flags, FI_MSG | FI_RECV);
	assert_ptr_equal(p.starts[1].peer_context, (void *)2);
	assert_ptr_equal(p.starts[1].base, buf + 400);
	assert_int_equal(p.starts[1].flags,
			 FI_MSG | FI_RECV | FI_MULTI_RECV | FI_COMPLETION);
	assert_ptr_equal(p.starts[1].context, (void *)0x3c);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).unexpected, 1);
	/* With room to spare the buffer stays posted for later messages. */
	assert_int_equal(mrecv(srx, buf, sizeof(buf), (void *)0x3d), 0);
	assert_int_equal(p.nstarts, 3);
	assert_int_equal(p.starts[2].flags, FI_MSG | FI_RECV);
	assert_int_equal(counts(srx).posted, 1);
	assert_int_equal(counts(srx).unexpected, 0);
	srx_close(srx, &p, 1);
}

static void test_srx_options_and_multi_recv_input(void **state)
{
	struct fid_ep *srx = srx_open();
	size_t value = 5, len = 1;
	char buf[16];
	struct iovec iov[2] = { { buf, 8 }, { buf + 8, 8 } };
	struct fi_msg msg = { .msg_iov = iov, .iov_count = 2,
			      .addr = FI_ADDR_UNSPEC };

	(void)state;
	assert_int_equal(fi_getopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &value, &len),
			 -FI_ETOOSMALL);
	assert_int_equal(len, 1);
	assert_int_equal(fi_getopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_CM_DATA_SIZE, &value, &len),
			 -FI_ENOPROTOOPT);
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &value, 4),
			 -FI_EINVAL);
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, NULL, sizeof(value)),
			 -FI_EINVAL);
	len = sizeof(value);
	assert_int_equal(fi_getopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &value, &len), 0);
	assert_int_equal(value, LFV_PEER_SRX_DEFAULT_MIN_MULTI_RECV);
	/* A multi-receive buffer is one non-empty region. */
	assert_int_equal(fi_recvmsg(srx, &msg, FI_MULTI_RECV), -FI_EINVAL);
	assert_int_equal(mrecv(srx, buf, 0, NULL), -FI_EINVAL);
	assert_int_equal(mrecv(srx, NULL, 8, NULL), -FI_EINVAL);
	assert_int_equal(trecvmsg(srx, buf, 8, FI_ADDR_UNSPEC, 0, 0, NULL,
				  FI_MULTI_RECV), -FI_EBADFLAGS);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, NULL, 0);
}

static void test_srx_cancel(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e = NULL;
	struct fi_context ctx[3];
	struct fake_peer p;
	struct unit_peer_cq cq;
	size_t min = 0;		/* buffers stay until they are full */
	char buf[64];

	(void)state;
	fake_peer_attach(&p, srx);
	unit_peer_cq_init(&cq);
	assert_int_equal(fi_setopt(&srx->fid, FI_OPT_ENDPOINT,
				   FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
			 0);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  &ctx[0]), 0);
	assert_int_equal(fi_recv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, &ctx[1]),
			 0);
	assert_int_equal(mrecv(srx, buf, sizeof(buf), &ctx[2]), 0);
	assert_int_equal(fi_cancel(&srx->fid, &ctx[0]), -FI_ENOCQ);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, &cq.cq), 0);
	assert_int_equal(fi_cancel(&srx->fid, NULL), -FI_EINVAL);
	assert_int_equal(fi_cancel(&srx->fid, (void *)0x999), -FI_ENOENT);
	assert_int_equal(fi_cancel(&srx->fid, &ctx[0]), 0);
	assert_int_equal(cq.nerrs, 1);
	assert_int_equal(cq.errs[0].err, FI_ECANCELED);
	assert_ptr_equal(cq.errs[0].op_context, &ctx[0]);
	assert_int_equal(cq.errs[0].flags, FI_TAGGED | FI_RECV);
	assert_int_equal(cq.errs[0].tag, 1);
	assert_int_equal(cq.nwrites, 0);
	assert_int_equal(fi_cancel(&srx->fid, &ctx[0]), -FI_ENOENT);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 1, 1, &e), -FI_ENOENT);
	p.ps->owner_ops->free_entry(e);
	/* The plain receive goes; the buffer behind it is next in line. */
	assert_int_equal(fi_cancel(&srx->fid, &ctx[1]), 0);
	assert_int_equal(cq.errs[1].flags, FI_MSG | FI_RECV);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 8, &e), 0);
	assert_ptr_equal(e->context, &ctx[2]);
	p.ps->owner_ops->free_entry(e);
	/* A canceled multi-receive buffer is reported released. */
	assert_int_equal(fi_cancel(&srx->fid, &ctx[2]), 0);
	assert_int_equal(cq.nerrs, 3);
	assert_int_equal(cq.errs[2].flags, FI_MSG | FI_RECV | FI_MULTI_RECV);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).entries, 0);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, NULL), 0);
	assert_int_equal(fi_cancel(&srx->fid, &ctx[0]), -FI_ENOCQ);
	srx_close(srx, &p, 1);
}

static void test_srx_bad_input(void **state)
{
	struct fid_ep *srx = srx_open(), *msg_only;
	struct fi_peer_rx_entry *e = (struct fi_peer_rx_entry *)0x1;
	struct fid_peer_srx foreign = { 0 };
	struct iovec iov[5] = { { 0 } };
	struct fake_peer p;
	char buf[8];

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(fi_recvv(srx, iov, NULL, 5, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_trecvv(srx, iov, NULL, 5, FI_ADDR_UNSPEC, 0, 0,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_recvv(srx, NULL, NULL, 1, FI_ADDR_UNSPEC, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_recvmsg(srx, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_trecvmsg(srx, NULL, 0), -FI_EINVAL);
	assert_int_equal(trecvmsg(srx, buf, 8, 0, 0, 0, NULL, FI_INJECT),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_recvmsg(srx, &(struct fi_msg){ .iov_count = 0 },
				    FI_PEEK), -FI_EBADFLAGS);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).entries, 0);
	/* Zero-length receives are fine. */
	assert_int_equal(fi_recvv(srx, NULL, NULL, 0, FI_ADDR_UNSPEC, NULL), 0);
	assert_int_equal(counts(srx).posted, 1);

	/* Owner ops: NULLs, foreign fids, entries in the wrong state. */
	assert_int_equal(test_get_tag(p.ps->owner_ops, NULL, 0, 0, &e), -FI_EINVAL);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 0, 0, NULL),
			 -FI_EINVAL);
	assert_int_equal(test_get_msg(p.ps->owner_ops, &foreign, 0, 0, &e),
			 -FI_EINVAL);
	assert_ptr_equal(e, (struct fi_peer_rx_entry *)0x1);
	assert_int_equal(p.ps->owner_ops->queue_tag(NULL), -FI_EINVAL);
	p.ps->owner_ops->free_entry(NULL);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 0, 0, &e), -FI_ENOENT);
	/* get_tag's entry queued as untagged. */
	assert_int_equal(p.ps->owner_ops->queue_msg(e), -FI_EINVAL);
	assert_int_equal(p.ps->owner_ops->queue_tag(e), 0);
	/* Already queued. */
	assert_int_equal(p.ps->owner_ops->queue_tag(e), -FI_EINVAL);
	assert_int_equal(counts(srx).unexpected, 1);
	srx_close(srx, &p, 1);

	/* A peer that never filled its callbacks in cannot queue. */
	srx = srx_open();
	assert_int_equal(lfv_peer_srx_export(srx, &p.ps), 0);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 0, 0, &e), -FI_ENOENT);
	assert_int_equal(p.ps->owner_ops->queue_tag(e), -FI_EINVAL);
	p.ps->owner_ops->free_entry(e);
	assert_int_equal(fi_close(&p.ps->ep_fid.fid), 0);
	assert_int_equal(fi_close(&srx->fid), 0);

	/* Classes left out of caps. */
	msg_only = srx_open_caps(FI_MSG);
	fake_peer_attach(&p, msg_only);
	assert_int_equal(fi_trecv(msg_only, buf, 8, NULL, 0, 0, 0, NULL),
			 -FI_EOPNOTSUPP);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 0, 0, &e),
			 -FI_EOPNOTSUPP);
	assert_int_equal(fi_recv(msg_only, buf, 8, NULL, 0, NULL), 0);
	srx_close(msg_only, &p, 1);
}

/* free_entry returns entries from either answer of get_*. */
static void test_srx_free_entry(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_peer_rx_entry *e[3];
	struct fake_peer p;
	char buf[8];

	(void)state;
	fake_peer_attach(&p, srx);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 8, &e[0]),
			 -FI_ENOENT);
	assert_int_equal(test_get_tag(p.ps->owner_ops, p.ps, 1, 1, &e[1]),
			 -FI_ENOENT);
	assert_int_equal(fi_recv(srx, buf, 8, NULL, 0, NULL), 0);
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 8, &e[2]), 0);
	assert_int_equal(counts(srx).entries, 3);
	assert_int_equal(fi_close(&p.ps->ep_fid.fid), -FI_EBUSY);
	p.ps->owner_ops->free_entry(e[1]);
	p.ps->owner_ops->free_entry(e[0]);
	p.ps->owner_ops->free_entry(e[2]);
	assert_int_equal(counts(srx).entries, 0);
	assert_int_equal(counts(srx).unexpected, 0);
	/* The freed entries are reused. */
	assert_int_equal(test_get_msg(p.ps->owner_ops, p.ps, 1, 8, &e[0]),
			 -FI_ENOENT);
	p.ps->owner_ops->free_entry(e[0]);
	srx_close(srx, &p, 1);
}

/* Closing an export discards only that peer's queued messages. */
static void test_srx_export_close_discards(void **state)
{
	struct fid_ep *srx = srx_open();
	struct fi_context ctx;
	struct fake_peer p[2];
	struct unit_peer_cq cq;
	char buf[8];

	(void)state;
	fake_peer_attach(&p[0], srx);
	fake_peer_attach(&p[1], srx);
	unit_peer_cq_init(&cq);
	assert_int_equal(lfv_peer_srx_bind_cq(srx, &cq.cq), 0);
	arrive_tag(&p[0], 1, 1, 8, (void *)0xa1);
	arrive_tag(&p[1], 2, 1, 8, (void *)0xb1);
	arrive_msg(&p[0], 1, 8, (void *)0xa2);
	arrive_tag(&p[0], 1, 2, 8, (void *)0xa3);
	assert_int_equal(trecvmsg(srx, NULL, 0, FI_ADDR_UNSPEC, 2, 0, &ctx,
				  FI_PEEK | FI_CLAIM), 0);
	assert_int_equal(fi_close(&p[0].ps->ep_fid.fid), 0);
	assert_int_equal(p[0].ndiscards, 3);
	assert_int_equal(p[1].ndiscards, 0);
	assert_int_equal(counts(srx).unexpected, 1);
	assert_int_equal(counts(srx).claimed, 0);
	assert_int_equal(counts(srx).exports, 1);
	assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC, 1, 0,
				  NULL), 0);
	assert_int_equal(p[1].nstarts, 1);
	peer_done(&p[1], 0);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, &p[1], 1);
}

/* ---- four peer threads against the application ------------------------- */

#define THREADS 4
#define PER_THREAD 1500
#define MESSAGES (THREADS * PER_THREAD)

struct peer_thread {
	struct fake_peer *peer;
	int index;
	atomic_int *failures;
};

static void *peer_thread_main(void *arg)
{
	struct peer_thread *t = arg;
	struct fid_peer_srx *ps = t->peer->ps;
	struct fi_peer_rx_entry *e;
	uint64_t tag;
	int i, ret;

	for (i = 0; i < PER_THREAD; i++) {
		tag = (uint64_t)i * THREADS + (uint64_t)t->index;
		ret = test_get_tag(ps->owner_ops, ps, (fi_addr_t)t->index, tag, &e);
		if (ret == 0) {
			/* Matched a posted receive: done with it at once. */
			atomic_fetch_add(&t->peer->matched[tag], 1);
			if (e->tag != tag)
				atomic_fetch_add(t->failures, 1);
			ps->owner_ops->free_entry(e);
			continue;
		}
		if (ret != -FI_ENOENT) {
			atomic_fetch_add(t->failures, 1);
			continue;
		}
		lfv_peer_entry_set_size(e, 1);
		/* Started now (a receive came in meanwhile) or later. */
		if (ps->owner_ops->queue_tag(e))
			atomic_fetch_add(t->failures, 1);
	}
	return NULL;
}

static void test_srx_concurrent_get_tag(void **state)
{
	struct fid_ep *srx = srx_open();
	static struct fi_context ctx[MESSAGES];
	static atomic_int matched[MESSAGES];
	struct peer_thread threads[THREADS];
	pthread_t tids[THREADS];
	atomic_int failures = 0;
	struct fake_peer p;
	char buf[8];
	int i;

	(void)state;
	fake_peer_attach(&p, srx);
	p.matched = matched;
	p.contexts = ctx;
	for (i = 0; i < MESSAGES; i++)
		atomic_init(&matched[i], 0);
	for (i = 0; i < THREADS; i++) {
		threads[i] = (struct peer_thread){
			.peer = &p, .index = i, .failures = &failures,
		};
		assert_int_equal(pthread_create(&tids[i], NULL,
						peer_thread_main, &threads[i]),
				 0);
	}
	/* The application posts one receive per tag, in its own order. */
	for (i = 0; i < MESSAGES; i++) {
		int tag = (i * 7919) % MESSAGES;	/* 7919: prime */

		assert_int_equal(fi_trecv(srx, buf, 8, NULL, FI_ADDR_UNSPEC,
					  (uint64_t)tag, 0, &ctx[tag]), 0);
	}
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(tids[i], NULL), 0);
	assert_int_equal(atomic_load(&failures), 0);
	/* Each message met its receive exactly once, one way or another. */
	for (i = 0; i < MESSAGES; i++)
		assert_int_equal(atomic_load(&matched[i]), 1);
	assert_int_equal(counts(srx).posted, 0);
	assert_int_equal(counts(srx).unexpected, 0);
	assert_int_equal(counts(srx).entries, 0);
	srx_close(srx, &p, 1);
}

#define ENGINE(fn)							\
	cmocka_unit_test_setup_teardown(fn, engine_setup, engine_teardown)
#define ENGINE_DIRECTED(fn)						\
	cmocka_unit_test_prestate_setup_teardown(fn, engine_setup,	\
						 engine_teardown,	\
						 &engine_directed)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_init_bad_input),
		ENGINE(test_engine_posted_then_unexpected),
		ENGINE(test_engine_unexpected_then_posted),
		ENGINE(test_engine_wildcards_interleaved),
		ENGINE_DIRECTED(test_engine_directed),
		ENGINE(test_engine_undirected_ignores_addr),
		cmocka_unit_test(test_engine_unrelated_receives_o1),
		ENGINE_DIRECTED(test_engine_unrelated_messages_o1),
		ENGINE_DIRECTED(test_engine_arrival_walk),
		ENGINE_DIRECTED(test_engine_order_across_growth),
		cmocka_unit_test(test_engine_hash_spreads_mpi_keys),
		cmocka_unit_test(test_srx_open_bad_input),
		cmocka_unit_test(test_srx_send_side_enosys),
		cmocka_unit_test(test_srx_posted_then_get),
		cmocka_unit_test(test_srx_export_get_direct),
		cmocka_unit_test(test_srx_get_queue_start),
		cmocka_unit_test(test_srx_peer_calls_through_a_copy),
		cmocka_unit_test(test_srx_export_fid_copy_finds_owner),
		cmocka_unit_test(test_srx_every_recv_completes),
		cmocka_unit_test(test_srx_msg_round_trip),
		cmocka_unit_test(test_srx_queue_meets_late_receive),
		cmocka_unit_test(test_srx_two_peers_in_order),
		cmocka_unit_test(test_srx_earliest_posted_wins),
		cmocka_unit_test(test_srx_directed),
		cmocka_unit_test(test_srx_foreach_unspec_addr),
		cmocka_unit_test(test_srx_peek),
		cmocka_unit_test(test_srx_peek_claim),
		cmocka_unit_test(test_srx_discard),
		cmocka_unit_test(test_srx_multi_recv_get),
		cmocka_unit_test(test_srx_multi_recv_unexpected),
		cmocka_unit_test(test_srx_options_and_multi_recv_input),
		cmocka_unit_test(test_srx_cancel),
		cmocka_unit_test(test_srx_bad_input),
		cmocka_unit_test(test_srx_free_entry),
		cmocka_unit_test(test_srx_export_close_discards),
		cmocka_unit_test(test_srx_concurrent_get_tag),
	};

	return cmocka_run_group_tests_name("match", tests, NULL, NULL);
}
