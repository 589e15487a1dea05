/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The completion ring: input checks, FIFO order, capacity rounding, the
 * wrap of the free-running counters, batches, overflow order, and
 * multi-threaded no-loss / no-duplicate / per-producer-order stress. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lfv_ring.h"

/* The size of struct fi_cq_tagged_entry, the CQ's common format. */
struct test_entry {
	uint64_t pid;
	uint64_t seq;
	uint64_t check[4];	/* derived from pid and seq: catches torn copies */
};

_Static_assert(sizeof(struct test_entry) == 48, "a tagged CQ entry's size");

static void entry_fill(struct test_entry *e, uint64_t pid, uint64_t seq)
{
	int i;

	e->pid = pid;
	e->seq = seq;
	for (i = 0; i < 4; i++)
		e->check[i] = (seq * 0x9e3779b97f4a7c15ull) ^ (pid << 56) ^ i;
}

static bool entry_valid(const struct test_entry *e)
{
	struct test_entry want;

	entry_fill(&want, e->pid, e->seq);
	return memcmp(&want, e, sizeof(want)) == 0;
}

/* Expects exactly the entries seq first..first+n-1 of producer 0. */
static void expect_run(const struct test_entry *e, size_t n, uint64_t first)
{
	size_t i;

	for (i = 0; i < n; i++) {
		assert_true(entry_valid(&e[i]));
		assert_int_equal(e[i].pid, 0);
		assert_int_equal(e[i].seq, first + i);
	}
}

/* r: a ring of test entries, capacity at least capacity. */
static void init_entry_ring(struct lfv_ring *r, size_t capacity)
{
	assert_int_equal(lfv_ring_init(r, capacity, sizeof(struct test_entry)),
			 0);
}

static void put_one(struct lfv_ring *r, uint64_t seq)
{
	struct test_entry e;

	entry_fill(&e, 0, seq);
	assert_int_equal(lfv_ring_enqueue(r, &e), 0);
}

static void get_one(struct lfv_ring *r, uint64_t seq)
{
	struct test_entry e;

	assert_true(lfv_ring_dequeue_one(r, &e));
	expect_run(&e, 1, seq);
}

/* Entries seq first..first+n-1 in, one at a time; or out, expected in
 * that order. The next seq. */
static uint64_t put_run(struct lfv_ring *r, uint64_t first, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		put_one(r, first + i);
	return first + n;
}

static uint64_t get_run(struct lfv_ring *r, uint64_t first, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		get_one(r, first + i);
	return first + n;
}

/* Nothing to read, by every query. */
static void expect_ring_empty(struct lfv_ring *r)
{
	struct test_entry out[4];

	assert_true(lfv_ring_empty(r));
	assert_false(lfv_ring_readable(r));
	assert_int_equal(lfv_ring_dequeue(r, out, 4), 0);
}

static void test_init_bad_input(void **state)
{
	static const size_t bad_sizes[] = { 0, 4, 12, 57, 60, 64, 128 };
	struct lfv_ring r;
	size_t i;

	(void)state;
	assert_int_equal(lfv_ring_init(NULL, 8, 8), -FI_EINVAL);
	for (i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++)
		assert_int_equal(lfv_ring_init(&r, 8, bad_sizes[i]), -FI_EINVAL);
	assert_int_equal(lfv_ring_init(&r, (size_t)LFV_RING_MAX_CAPACITY + 1,
				       8), -FI_EINVAL);
	for (i = 8; i <= LFV_RING_MAX_ENTRY; i += 8) {
		assert_int_equal(lfv_ring_init(&r, 4, i), 0);
		assert_int_equal(lfv_ring_entry_size(&r), i);
		lfv_ring_fini(&r);
	}
}

static void test_capacity_rounding(void **state)
{
	static const size_t cases[][2] = {
		{ 0, LFV_RING_DEFAULT_CAPACITY }, { 1, 2 }, { 2, 2 }, { 3, 4 },
		{ 64, 64 }, { 65, 128 }, { 1000, 1024 }, { 1025, 2048 },
	};
	struct lfv_ring r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(lfv_ring_init(&r, cases[i][0], 48), 0);
		assert_int_equal(lfv_ring_capacity(&r), cases[i][1]);
		lfv_ring_fini(&r);
	}
}

static void test_fifo_single_thread(void **state)
{
	struct lfv_ring r;

	(void)state;
	init_entry_ring(&r, 16);
	expect_ring_empty(&r);
	put_run(&r, 0, 16);
	assert_false(lfv_ring_empty(&r));
	assert_true(lfv_ring_readable(&r));
	get_run(&r, 0, 16);
	expect_ring_empty(&r);
	assert_int_equal(lfv_ring_overflow_total(&r), 0);
	lfv_ring_fini(&r);
}

/* Every entry size, 8-byte words through 56: contents survive the slot. */
static void test_entry_sizes(void **state)
{
	unsigned char in[LFV_RING_MAX_ENTRY], out[LFV_RING_MAX_ENTRY];
	struct lfv_ring r;
	size_t size, i;

	(void)state;
	for (size = 8; size <= LFV_RING_MAX_ENTRY; size += 8) {
		assert_int_equal(lfv_ring_init(&r, 2, size), 0);
		for (i = 0; i < 5; i++) {	/* 2 in the ring, 3 overflow */
			memset(in, (int)(size + i), sizeof(in));
			assert_int_equal(lfv_ring_enqueue(&r, in), 0);
		}
		for (i = 0; i < 5; i++) {
			memset(in, (int)(size + i), sizeof(in));
			memset(out, 0xff, sizeof(out));
			assert_true(lfv_ring_dequeue_one(&r, out));
			assert_memory_equal(in, out, size);
			if (size < sizeof(out))	/* nothing written past it */
				assert_int_equal(out[size], 0xff);
		}
		lfv_ring_fini(&r);
	}
}

/* Many laps of a tiny ring, from a start position of choice. */
static void run_wraparound(uint64_t start)
{
	struct lfv_ring r;
	uint64_t in = 0, out = 0, lap;

	assert_int_equal(lfv_ring_init_at(&r, 4, sizeof(struct test_entry),
					  start), 0);
	for (lap = 0; lap < 50000; lap++) {
		in = put_run(&r, in, 1 + lap % 4);
		out = get_run(&r, out, 1 + lap % 4);
		assert_true(lfv_ring_empty(&r));
	}
	assert_int_equal(lfv_ring_overflow_total(&r), 0);
	lfv_ring_fini(&r);
}

static void test_wraparound(void **state)
{
	(void)state;
	run_wraparound(0);
	run_wraparound(UINT64_MAX - 37);	/* head and tail cross 2^64 */
	run_wraparound((uint64_t)UINT32_MAX - 37);
}

/* Odd-sized batches through a 16-slot ring, crossing the wrap. */
static void run_batches(uint64_t start)
{
	static const size_t in_sizes[] = { 1, 3, 5, 7, 11, 13, 16 };
	static const size_t out_sizes[] = { 2, 5, 9, 1, 16, 3 };
	struct test_entry buf[16];
	uint64_t next_in = 0, next_out = 0;
	struct lfv_ring r;
	size_t i, n, got;
	int round;

	assert_int_equal(lfv_ring_init_at(&r, 16, sizeof(struct test_entry),
					  start), 0);
	for (round = 0; round < 2000; round++) {
		n = in_sizes[round % 7];
		if (n > 16 - (next_in - next_out))
			n = 16 - (next_in - next_out);
		for (i = 0; i < n; i++)
			entry_fill(&buf[i], 0, next_in + i);
		assert_int_equal(lfv_ring_enqueue_batch(&r, buf, n), n);
		next_in += n;
		got = lfv_ring_dequeue(&r, buf, out_sizes[round % 6]);
		assert_int_equal(got, out_sizes[round % 6] < next_in - next_out ?
				 out_sizes[round % 6] : next_in - next_out);
		expect_run(buf, got, next_out);
		next_out += got;
	}
	got = lfv_ring_dequeue(&r, buf, 16);
	expect_run(buf, got, next_out);
	assert_int_equal(next_out + got, next_in);
	/* Batches that fit never touched the overflow list. */
	assert_int_equal(lfv_ring_overflow_total(&r), 0);
	lfv_ring_fini(&r);
}

static void test_batch_odd_sizes(void **state)
{
	(void)state;
	run_batches(0);
	run_batches(UINT64_MAX - 100);
}

/* Beyond capacity: nothing lost, FIFO across ring and overflow, and writes
 * keep going to overflow while it holds entries even if the ring has room. */
static void test_overflow_fifo(void **state)
{
	struct test_entry buf[40];
	uint64_t next_in = 0, next_out = 0;
	struct lfv_ring r;
	size_t i, got;

	(void)state;
	init_entry_ring(&r, 8);
	next_in = put_run(&r, next_in, 20);	/* 8 ring, 12 overflow */
	assert_int_equal(lfv_ring_overflow_total(&r), 12);
	got = lfv_ring_dequeue(&r, buf, 5);	/* frees 5 ring slots */
	expect_run(buf, got, next_out);
	next_out += got;
	for (i = 0; i < 30; i++)		/* a batch behind overflow */
		entry_fill(&buf[i], 0, next_in + i);
	assert_int_equal(lfv_ring_enqueue_batch(&r, buf, 30), 30);
	next_in += 30;
	assert_int_equal(lfv_ring_overflow_total(&r), 42);
	put_one(&r, next_in++);
	/* Reads of every size drain ring then overflow, in write order. */
	for (i = 1; next_out < next_in; i = i % 7 + 2) {
		got = lfv_ring_dequeue(&r, buf, i);
		assert_true(got > 0);
		expect_run(buf, got, next_out);
		next_out += got;
	}
	assert_true(lfv_ring_empty(&r));
	/* Overflow drained: the ring is used again. */
	put_one(&r, next_in++);
	assert_int_equal(lfv_ring_overflow_total(&r), 43);
	get_one(&r, next_out++);
	/* A batch larger than the ring: one part in, the rest overflows. */
	for (i = 0; i < 40; i++)
		entry_fill(&buf[i], 0, next_in + i);
	assert_int_equal(lfv_ring_enqueue_batch(&r, buf, 40), 40);
	next_in += 40;
	assert_int_equal(lfv_ring_overflow_total(&r), 43 + 32);
	got = lfv_ring_dequeue(&r, buf, 40);
	assert_int_equal(got, 40);
	expect_run(buf, got, next_out);
	lfv_ring_fini(&r);	/* empty here; see test_fini_frees_overflow */
}

/* The race of lfv_ring.h: a slot reserved but not yet published sits before
 * entries that overflowed. The reader must not take the overflow entries
 * until the slot is published and read. */
static void test_overflow_waits_for_ring(void **state)
{
	struct test_entry out[8], first;
	struct lfv_ring_slot *slot;
	struct lfv_ring r;
	uint64_t pos;

	(void)state;
	init_entry_ring(&r, 4);
	/* A stalled producer: position 0 reserved, not written yet. */
	assert_int_equal(lfv_ring_claim(lfv_ring_geom(&r), &r.tail, 1, 0, &pos),
			 1);
	assert_int_equal(pos, 0);
	put_run(&r, 1, 5);			/* 1..3 ring, 4..5 overflow */
	assert_int_equal(lfv_ring_overflow_total(&r), 2);
	assert_false(lfv_ring_empty(&r));
	assert_false(lfv_ring_readable(&r));
	assert_int_equal(lfv_ring_dequeue(&r, out, 8), 0);
	/* The stalled producer finishes: everything comes out in order. */
	slot = lfv_ring_slot(&r, pos);
	entry_fill(&first, 0, 0);
	memcpy(slot->entry, &first, sizeof(first));
	/* Release: publishes the entry, as lfv_ring_write_run does. */
	lfv_store_release64(&slot->seq, pos + 1);
	assert_true(lfv_ring_readable(&r));
	assert_int_equal(lfv_ring_dequeue(&r, out, 8), 6);
	expect_run(out, 6, 0);
	lfv_ring_fini(&r);
}

static void test_fini_frees_overflow(void **state)
{
	struct lfv_ring r;

	(void)state;
	init_entry_ring(&r, 2);
	put_run(&r, 0, 10);
	lfv_ring_fini(&r);	/* ASan / valgrind report a leak if not */
}

/* A count whose size wraps cannot be allocated: what fitted stays queued
 * and the caller learns how much; nothing fitted: -FI_ENOMEM. */
static void test_enomem(void **state)
{
	struct test_entry buf[4];
	struct lfv_ring r;
	uint64_t i;

	(void)state;
	init_entry_ring(&r, 4);
	put_run(&r, 0, 2);
	for (i = 0; i < 4; i++)
		entry_fill(&buf[i], 0, 2 + i);
	assert_int_equal(lfv_ring_enqueue_batch(&r, buf, SIZE_MAX / 8), 2);
	assert_int_equal(lfv_ring_enqueue_batch(&r, buf, SIZE_MAX / 8),
			 -FI_ENOMEM);
	assert_int_equal(lfv_ring_dequeue(&r, buf, 4), 4);
	expect_run(buf, 4, 0);
	lfv_ring_fini(&r);
}

/* ---- multi-threaded stress ---------------------------------------------- */

#define STRESS_MAX_PRODUCERS 4
#define STRESS_MAX_CONSUMERS 2
#define STRESS_MAX_BATCH 32

struct stress;

struct stress_consumer {
	struct stress *st;
	uint64_t *seen;		/* bitmap, producers x per_producer */
	uint64_t next[STRESS_MAX_PRODUCERS];	/* lowest seq still allowed */
	uint64_t got;
	uint64_t errors;	/* torn, out of range, or out of order */
};

struct stress_producer {
	struct stress *st;
	uint64_t pid;
	uint64_t errors;	/* enqueue failures */
};

struct stress {
	struct lfv_ring ring;
	int producers;
	int consumers;
	uint64_t per_producer;
	lfv_atomic32_t producers_done;
	struct stress_producer prod[STRESS_MAX_PRODUCERS];
	struct stress_consumer cons[STRESS_MAX_CONSUMERS];
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Half the writes are single entries, half batches of 2..32. */
static void *stress_produce(void *arg)
{
	struct stress_producer *p = arg;
	struct test_entry batch[STRESS_MAX_BATCH];
	uint64_t rnd = 0x2545f4914f6cdd1dull + p->pid, seq = 0;
	size_t n, i;

	while (seq < p->st->per_producer) {
		n = xorshift(&rnd) % (2 * STRESS_MAX_BATCH);
		n = n < STRESS_MAX_BATCH ? 1 : n - STRESS_MAX_BATCH + 1;
		if (n > p->st->per_producer - seq)
			n = p->st->per_producer - seq;
		for (i = 0; i < n; i++)
			entry_fill(&batch[i], p->pid, seq + i);
		if (n == 1 ? lfv_ring_enqueue(&p->st->ring, batch) != 0 :
		    lfv_ring_enqueue_batch(&p->st->ring, batch, n) != (ssize_t)n)
			p->errors++;
		seq += n;
		/* Back off while the reader is behind, as an application
		 * waiting for completions would: keeps the ring in use and
		 * the overflow list short, while still crossing between. */
		if (lfv_ring_ovf_active(&p->st->ring))
			sched_yield();
	}
	return NULL;
}

static void stress_check(struct stress_consumer *c, const struct test_entry *e)
{
	struct stress *st = c->st;
	uint64_t bit;

	if (!entry_valid(e) || e->pid >= (uint64_t)st->producers ||
	    e->seq >= st->per_producer || e->seq < c->next[e->pid]) {
		c->errors++;
		return;
	}
	/* One reader sees each producer's entries in order: with a single
	 * reader that is every entry, so each must be the very next one. */
	if (st->consumers == 1 && e->seq != c->next[e->pid])
		c->errors++;
	c->next[e->pid] = e->seq + 1;
	bit = e->pid * st->per_producer + e->seq;
	c->seen[bit / 64] |= 1ull << (bit % 64);
	c->got++;
}

static void *stress_consume(void *arg)
{
	struct stress_consumer *c = arg;
	struct test_entry buf[STRESS_MAX_BATCH];
	uint64_t rnd = 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)c;
	size_t n, i;

	for (;;) {
		n = lfv_ring_dequeue(&c->st->ring, buf,
				     1 + xorshift(&rnd) % STRESS_MAX_BATCH);
		for (i = 0; i < n; i++)
			stress_check(c, &buf[i]);
		if (n)
			continue;
		/* Acquire: pairs with the release after joining producers, so
		 * every entry is queued and its reservation visible. */
		if (lfv_load_acquire32(&c->st->producers_done) &&
		    lfv_ring_empty(&c->st->ring))
			break;
		sched_yield();	/* 2 cores, up to 6 threads: let writers run */
	}
	return NULL;
}

/* Merges the consumers' bitmaps: every entry exactly once. */
static void stress_verify(struct stress *st)
{
	uint64_t words = (st->producers * st->per_producer + 63) / 64;
	uint64_t w, all, total = 0;
	int c;

	for (c = 0; c < st->consumers; c++) {
		assert_int_equal(st->cons[c].errors, 0);
		total += st->cons[c].got;
	}
	assert_int_equal(total, st->producers * st->per_producer);
	for (w = 0; w < words; w++) {
		all = 0;
		for (c = 0; c < st->consumers; c++) {
			assert_int_equal(all & st->cons[c].seen[w], 0);
			all |= st->cons[c].seen[w];
		}
		if (w + 1 < words || (st->producers * st->per_producer) % 64 == 0)
			assert_true(all == UINT64_MAX);
	}
}

static void run_stress(int producers, int consumers, uint64_t total,
		       size_t capacity)
{
	pthread_t pt[STRESS_MAX_PRODUCERS], ct[STRESS_MAX_CONSUMERS];
	struct stress *st = calloc(1, sizeof(*st));
	uint64_t words;
	int i;

	assert_non_null(st);
	st->producers = producers;
	st->consumers = consumers;
	st->per_producer = total / producers;
	words = (producers * st->per_producer + 63) / 64;
	init_entry_ring(&st->ring, capacity);
	for (i = 0; i < consumers; i++) {
		st->cons[i].st = st;
		st->cons[i].seen = calloc(words, sizeof(uint64_t));
		assert_non_null(st->cons[i].seen);
		assert_int_equal(pthread_create(&ct[i], NULL, stress_consume,
						&st->cons[i]), 0);
	}
	for (i = 0; i < producers; i++) {
		st->prod[i].st = st;
		st->prod[i].pid = (uint64_t)i;
		assert_int_equal(pthread_create(&pt[i], NULL, stress_produce,
						&st->prod[i]), 0);
	}
	for (i = 0; i < producers; i++) {
		pthread_join(pt[i], NULL);
		assert_int_equal(st->prod[i].errors, 0);
	}
	/* Release: pairs with the consumers' acquire load of producers_done. */
	lfv_store_release32(&st->producers_done, 1);
	for (i = 0; i < consumers; i++)
		pthread_join(ct[i], NULL);
	stress_verify(st);
	assert_true(lfv_ring_empty(&st->ring));
	printf("# %dP x %dC ring %zu: %llu entries, %llu via overflow\n",
	       producers, consumers, capacity,
	       (unsigned long long)(producers * st->per_producer),
	       (unsigned long long)lfv_ring_overflow_total(&st->ring));
	for (i = 0; i < consumers; i++)
		free(st->cons[i].seen);
	lfv_ring_fini(&st->ring);
	free(st);
}

/* Entries per stress case; sanitizer builds are 5-20x slower. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STRESS_ENTRIES 1000000ull
#else
#define STRESS_ENTRIES 2000000ull
#endif

static void test_stress_1p1c(void **state)
{
	(void)state;
	run_stress(1, 1, STRESS_ENTRIES, 64);
	run_stress(1, 1, STRESS_ENTRIES, 4096);
}

static void test_stress_4p1c(void **state)
{
	(void)state;
	run_stress(4, 1, STRESS_ENTRIES, 64);
	run_stress(4, 1, STRESS_ENTRIES, 4096);
}

static void test_stress_4p2c(void **state)
{
	(void)state;
	run_stress(4, 2, STRESS_ENTRIES, 64);
	run_stress(4, 2, STRESS_ENTRIES, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_bad_input),
		cmocka_unit_test(test_capacity_rounding),
		cmocka_unit_test(test_fifo_single_thread),
		cmocka_unit_test(test_entry_sizes),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_batch_odd_sizes),
		cmocka_unit_test(test_overflow_fifo),
		cmocka_unit_test(test_overflow_waits_for_ring),
		cmocka_unit_test(test_fini_frees_overflow),
		cmocka_unit_test(test_enomem),
		cmocka_unit_test(test_stress_1p1c),
		cmocka_unit_test(test_stress_4p1c),
		cmocka_unit_test(test_stress_4p2c),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
