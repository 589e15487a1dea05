/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The MPI test programs' common part: see mpi_common.h. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

/* Reports per rank beyond this many would only flood the test log. */
#define MT_MAX_REPORTS 10

struct mt mt;

void mt_init(int *argc, char ***argv, const char *name)
{
	const char *fault = getenv("LFV_MPI_FAULT");

	mt.name = name;
	MT(MPI_Init(argc, argv));
	/* Errors come back as return codes, so mt_call can say which call
	 * failed before aborting. */
	MT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MT(MPI_Comm_rank(MPI_COMM_WORLD, &mt.rank));
	MT(MPI_Comm_size(MPI_COMM_WORLD, &mt.size));
	mt.trace = getenv("LFV_MPI_TRACE") != NULL;
	if (fault && strcmp(fault, "flip") == 0)
		mt.fault = MT_FAULT_FLIP;
	else if (fault && strcmp(fault, "status") == 0)
		mt.fault = MT_FAULT_STATUS;
	else if (fault && strcmp(fault, "nobarrier") == 0)
		mt.fault = MT_FAULT_NOBARRIER;
	else if (fault && strcmp(fault, "order") == 0)
		mt.fault = MT_FAULT_ORDER;
	else if (fault && strcmp(fault, "kill") == 0)
		mt.fault = MT_FAULT_KILL;
}

int mt_finish(const char *what)
{
	long total = 0;

	MT(MPI_Allreduce(&mt.errors, &total, 1, MPI_LONG, MPI_SUM,
			 MPI_COMM_WORLD));
	if (mt.rank == 0) {
		if (total)
			printf("%s: %s: FAILED, %ld failed checks\n", mt.name,
			       what, total);
		else
			printf("%s: %s: ok\n", mt.name, what);
		fflush(stdout);
	}
	MT(MPI_Finalize());
	return total ? 1 : 0;
}

void mt_fail(const char *fmt, ...)
{
	va_list ap;

	if (++mt.errors > MT_MAX_REPORTS)
		return;
	fprintf(stderr, "%s: rank %d: FAIL: ", mt.name, mt.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (mt.errors == MT_MAX_REPORTS)
		fprintf(stderr, "%s: rank %d: further failures not shown\n",
			mt.name, mt.rank);
}

void mt_step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mt.step, sizeof(mt.step), fmt, ap);
	va_end(ap);
	if (mt.trace)
		fprintf(stderr, "%s: rank %d: %s\n", mt.name, mt.rank,
			mt.step);
	if (mt.fault == MT_FAULT_KILL && mt.rank == 1 && ++mt.steps == 50) {
		fprintf(stderr, "%s: rank 1: killing itself at %s\n",
			mt.name, mt.step);
		raise(SIGKILL);
	}
}

void mt_call(int ret, const char *call, int line)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (ret == MPI_SUCCESS)
		return;
	if (MPI_Error_string(ret, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "error %d", ret);
	fprintf(stderr, "%s: rank %d: line %d: %s: %s%s%s\n", mt.name,
		mt.rank, line, call, text, mt.step[0] ? "; during " : "",
		mt.step);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

/* splitmix64: every output bit depends on every input bit, so neighbouring
 * seeds and words give unrelated patterns. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t mt_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}

/* Word i of the pattern of seed; byte k of the buffer is byte k % 8 of
 * word k / 8. Cheaper than a mix per byte: the programs fill and check
 * 64 MiB messages on an emulated CPU. */
static uint64_t word(uint64_t seed, size_t i)
{
	uint64_t x = seed + i * 0x9e3779b97f4a7c15ULL;

	return x ^ (x >> 29) ^ (i << 3);
}

void mt_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	size_t i, words = len / 8;
	uint64_t w;

	for (i = 0; i < words; i++) {
		w = word(seed, i);
		memcpy(p + i * 8, &w, 8);
	}
	w = word(seed, words);
	memcpy(p + words * 8, &w, len % 8);
	mt_flip(buf, len);
}

void mt_flip(void *buf, size_t len)
{
	if (mt.fault == MT_FAULT_FLIP && !mt.flipped && len) {
		((unsigned char *)buf)[len / 2] ^= 0x40;
		mt.flipped = 1;
	}
}

/* Reports the first wrong byte within the word that differs. */
static void report_byte(const unsigned char *got, uint64_t want, size_t base,
			size_t n, const char *what)
{
	const unsigned char *w = (const unsigned char *)&want;
	size_t k;

	for (k = 0; k < n; k++)
		if (got[k] != w[k])
			break;
	mt_fail("%s: byte %zu is 0x%02x, expected 0x%02x", what, base + k,
		got[k], w[k]);
}

int mt_check(const void *buf, size_t len, uint64_t seed, const char *what)
{
	const unsigned char *p = buf;
	size_t i, words = len / 8;
	uint64_t w, got;

	for (i = 0; i < words; i++) {
		w = word(seed, i);
		memcpy(&got, p + i * 8, 8);
		if (got != w) {
			report_byte(p + i * 8, w, i * 8, 8, what);
			return -1;
		}
	}
	w = word(seed, words);
	if (len % 8 && memcmp(p + words * 8, &w, len % 8)) {
		report_byte(p + words * 8, w, words * 8, len % 8, what);
		return -1;
	}
	return 0;
}

int mt_check_count(const MPI_Status *st, MPI_Datatype type, size_t count,
		   const char *what)
{
	int got = -1;

	MT(MPI_Get_count(st, type, &got));
	if (mt.fault == MT_FAULT_STATUS)
		count++;
	if (got < 0 || (size_t)got != count) {
		mt_fail("%s: count %d, expected %zu", what, got, count);
		return -1;
	}
	return 0;
}

int mt_check_status(const MPI_Status *st, int source, int tag, size_t count,
		    const char *what)
{
	int bad = 0;

	/* MPI_ERROR is left out: MPI sets it only in the statuses of calls
	 * that complete several requests, and then the call fails too. */
	if (source >= 0 && st->MPI_SOURCE != source) {
		mt_fail("%s: source %d, expected %d", what, st->MPI_SOURCE,
			source);
		bad = -1;
	}
	if (tag >= 0 && st->MPI_TAG != tag) {
		mt_fail("%s: tag %d, expected %d", what, st->MPI_TAG, tag);
		bad = -1;
	}
	return mt_check_count(st, MPI_BYTE, count, what) ? -1 : bad;
}

void *mt_alloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "%s: rank %d: out of memory (%zu bytes)\n",
			mt.name, mt.rank, len);
		MPI_Abort(MPI_COMM_WORLD, 2);
		exit(2);
	}
	memset(p, 0xa5, len);
	return p;
}
