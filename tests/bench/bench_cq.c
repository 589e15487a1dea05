/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The cost of lfverbs' CQ through the public API (fi_cq_read is libfabric's
 * inline call through the CQ's ops table): an empty read, one completion
 * written and read, batches of 32, and one producer thread feeding one
 * reader. Prints ns per operation; `--callgrind-op NAME N` runs one
 * operation N times so that run-bench.sh can count instructions per
 * operation with callgrind (the difference between N and 2N iterations).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lfv_cq.h"

static lfv_atomic32_t parent_ref;

static struct fid_cq *open_cq(enum fi_cq_format format, size_t size)
{
	struct fi_cq_attr attr = { .format = format, .size = size };
	struct lfv_cq_params params = {
		.api_version = FI_VERSION(1, 17),
		.parent_ref = &parent_ref,
	};
	struct fid_cq *cq;

	if (lfv_cq_open(&attr, NULL, &params, &cq)) {
		fprintf(stderr, "lfv_cq_open failed\n");
		exit(1);
	}
	return cq;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from dropping a result. */
static volatile uint64_t sink;

static void op_empty(struct fid_cq *cq, size_t n)
{
	struct fi_cq_tagged_entry e;
	size_t i;

	for (i = 0; i < n; i++)
		sink += (uint64_t)fi_cq_read(cq, &e, 1);
}

static void op_one(struct fid_cq *cq, size_t n)
{
	struct lfv_cq *lcq = lfv_cq_from_fid(cq);
	struct lfv_cq_comp c = { .flags = FI_RECV, .len = 64 };
	struct fi_cq_tagged_entry e;
	size_t i;

	for (i = 0; i < n; i++) {
		c.context = (void *)(uintptr_t)i;
		lfv_cq_write(lcq, &c);
		sink += (uint64_t)fi_cq_read(cq, &e, 1);
	}
}

#define BATCH 32

static void op_batch32(struct fid_cq *cq, size_t n)
{
	struct lfv_cq *lcq = lfv_cq_from_fid(cq);
	struct fi_cq_tagged_entry slots[BATCH], e[BATCH];
	struct lfv_cq_comp c = { .flags = FI_RECV, .len = 64 };
	size_t i, k;

	for (k = 0; k < BATCH; k++) {
		c.context = (void *)(uintptr_t)k;
		lfv_cq_format_slot(lcq, &slots[k], &c);
	}
	/* n counts entries, as in the other operations. */
	for (i = 0; i < n / BATCH; i++) {
		lfv_cq_write_batch(lcq, slots, BATCH);
		sink += (uint64_t)fi_cq_read(cq, e, BATCH);
	}
}

struct xthread {
	struct fid_cq *cq;
	size_t n;
};

static void *producer(void *arg)
{
	struct xthread *x = arg;
	struct lfv_cq *lcq = lfv_cq_from_fid(x->cq);
	struct lfv_cq_comp c = { .flags = FI_RECV, .len = 64 };
	size_t i;

	for (i = 0; i < x->n; i++) {
		c.context = (void *)(uintptr_t)i;
		lfv_cq_write(lcq, &c);
	}
	return NULL;
}

static void op_xthread(struct fid_cq *cq, size_t n)
{
	struct xthread x = { .cq = cq, .n = n };
	struct fi_cq_tagged_entry e[BATCH];
	size_t got = 0;
	pthread_t t;
	ssize_t r;

	pthread_create(&t, NULL, producer, &x);
	while (got < n) {
		r = fi_cq_read(cq, e, BATCH);
		if (r > 0)
			got += (size_t)r;
	}
	pthread_join(t, NULL);
}

struct op {
	const char *name;
	const char *what;
	void (*fn)(struct fid_cq *cq, size_t n);
	size_t ring;	/* CQ size; small ones overflow on purpose */
};

static const struct op ops[] = {
	{ "empty", "empty fi_cq_read", op_empty, 1024 },
	{ "one", "write + fi_cq_read of 1 (same thread)", op_one, 1024 },
	{ "batch32", "write + read, batches of 32, per entry", op_batch32,
	  1024 },
	{ "xthread", "1 producer thread -> fi_cq_read(32), per entry",
	  op_xthread, 4096 },
};

static const struct op *find_op(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static double run_ns(const struct op *op, size_t n)
{
	struct fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED, op->ring);
	double best = 1e30, t;
	int rep;

	op->fn(cq, n / 10); /* warm up */
	for (rep = 0; rep < 5; rep++) {
		t = now_ns();
		op->fn(cq, n);
		t = (now_ns() - t) / (double)n;
		if (t < best)
			best = t;
	}
	fi_close(&cq->fid);
	return best;
}

int main(int argc, char **argv)
{
	const struct op *op;
	size_t i, n = 2000000;
	struct fid_cq *cq;

	if (argc == 4 && !strcmp(argv[1], "--callgrind-op")) {
		op = find_op(argv[2]);
		if (!op)
			return 2;
		cq = open_cq(FI_CQ_FORMAT_TAGGED, op->ring);
		op->fn(cq, strtoul(argv[3], NULL, 10));
		fi_close(&cq->fid);
		return 0;
	}
	printf("lfverbs CQ through fi_cq_read (FI_CQ_FORMAT_TAGGED, 48-byte "
	       "entries), best of 5 runs of %zu\n", n);
	printf("%-10s %-48s %10s\n", "op", "what", "ns/op");
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		printf("%-10s %-48s %10.2f\n", ops[i].name, ops[i].what,
		       run_ns(&ops[i], n));
	return 0;
}
