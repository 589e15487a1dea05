/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Ping-pong between ranks 0 and 1 (other ranks wait): for every size,
 * several round trips of blocking MPI_Send/MPI_Recv, each message checked
 * for source, tag, count and every byte. The pattern depends on the size,
 * the iteration and the sender, so stale data from an earlier round or the
 * peer's own message never passes.
 *
 *   mpi_pingpong [-s SIZES] [-n ITERS] [-N BIG_ITERS]
 *
 * SIZES is a comma-separated list of byte counts with an optional k, m or
 * g suffix (KiB, MiB, GiB); the default is 0,1,8,64,4k,64k,1m,16m,64m.
 * Sizes below 1 MiB run ITERS round trips (default 10), the others
 * BIG_ITERS (default 2): a 64 MiB round trip takes seconds on soft-RoCE
 * under an emulated CPU.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_common.h"

#define MAX_SIZES 32
#define BIG ((size_t)1 << 20)
#define TAG_BASE 100

struct opts {
	size_t sizes[MAX_SIZES];
	int nsizes;
	int iters, big_iters;
};

/* Parses "12", "4k", "16m", "1g"; returns 0 or -1. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	switch (*end) {
	case 'k': v <<= 10; end++; break;
	case 'm': v <<= 20; end++; break;
	case 'g': v <<= 30; end++; break;
	default: break;
	}
	/* MPI counts are ints. */
	if ((*end != '\0' && *end != ',') || v > INT_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_sizes(const char *list, struct opts *o)
{
	const char *p = list;

	o->nsizes = 0;
	while (*p) {
		if (o->nsizes == MAX_SIZES ||
		    parse_size(p, &o->sizes[o->nsizes]))
			return -1;
		o->nsizes++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return o->nsizes ? 0 : -1;
}

static void usage_exit(void)
{
	if (mt.rank == 0)
		fprintf(stderr, "usage: mpi_pingpong [-s SIZES] [-n ITERS] "
			"[-N BIG_ITERS]\n");
	MPI_Finalize();
	exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int c;

	parse_sizes("0,1,8,64,4k,64k,1m,16m,64m", o);
	o->iters = 10;
	o->big_iters = 2;
	while ((c = getopt(argc, argv, "s:n:N:")) != -1) {
		switch (c) {
		case 's': if (parse_sizes(optarg, o)) usage_exit(); break;
		case 'n': o->iters = atoi(optarg); break;
		case 'N': o->big_iters = atoi(optarg); break;
		default: usage_exit();
		}
	}
	if (o->iters < 1 || o->big_iters < 1 || optind != argc)
		usage_exit();
}

/* One message of size bytes from rank `from` to rank `to` in round iter;
 * the receiver checks it. The receive buffer is cap bytes, so a message
 * of the wrong length shows as a wrong count, not as a truncation. */
static void transfer(int from, int to, size_t size, int iter, int tag,
		     unsigned char *sbuf, unsigned char *rbuf, size_t cap)
{
	uint64_t seed = mt_seed(size, (uint64_t)iter, (uint64_t)from, 1);
	MPI_Status st;

	mt_step("%zu bytes, round %d, %d->%d", size, iter, from, to);
	if (mt.rank == from) {
		mt_fill(sbuf, size, seed);
		MT(MPI_Send(sbuf, (int)size, MPI_BYTE, to, tag,
			    MPI_COMM_WORLD));
	} else if (mt.rank == to) {
		MT(MPI_Recv(rbuf, (int)cap, MPI_BYTE, from, tag,
			    MPI_COMM_WORLD, &st));
		if (mt_check_status(&st, from, tag, size, mt.step) == 0)
			mt_check(rbuf, size, seed, mt.step);
	}
}

/* The largest (want_max) or smallest size of the list. */
static size_t extreme_size(const struct opts *o, int want_max)
{
	size_t m = o->sizes[0];
	int i;

	for (i = 1; i < o->nsizes; i++)
		if (want_max ? o->sizes[i] > m : o->sizes[i] < m)
			m = o->sizes[i];
	return m;
}

int main(int argc, char **argv)
{
	struct opts o;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	size_t cap;
	char what[256];
	int i, it, iters;

	mt_init(&argc, &argv, "mpi_pingpong");
	parse_args(argc, argv, &o);
	if (mt.size < 2) {
		mt_fail("needs 2 ranks, has %d", mt.size);
		return mt_finish("ping-pong");
	}
	cap = extreme_size(&o, 1);
	if (mt.rank < 2) {
		sbuf = mt_alloc(cap);
		rbuf = mt_alloc(cap);
	}
	for (i = 0; i < o.nsizes; i++) {
		iters = o.sizes[i] < BIG ? o.iters : o.big_iters;
		for (it = 0; it < iters; it++) {
			transfer(0, 1, o.sizes[i], it, TAG_BASE + i, sbuf,
				 rbuf, cap);
			transfer(1, 0, o.sizes[i], it, TAG_BASE + i, sbuf,
				 rbuf, cap);
		}
	}
	free(sbuf);
	free(rbuf);
	snprintf(what, sizeof(what), "ranks 0<->1, %d sizes %zu..%zu bytes, "
		 "round trips per size: %d (%d from 1 MiB); source, tag, count "
		 "and data checked", o.nsizes, extreme_size(&o, 0), cap,
		 o.iters, o.big_iters);
	return mt_finish(what);
}
