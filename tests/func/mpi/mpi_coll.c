/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Collectives, each result checked against values computed locally:
 *
 *   MPI_Allreduce  MPI_SUM and MPI_MAX on int and double vectors of 7 and
 *                  256 Ki elements (1 and 2 MiB: the large ones go through
 *                  the provider's large-message path). Every rank's input
 *                  is a formula of (rank, index), so every rank can compute
 *                  the whole result; the doubles are multiples of 1/4 and
 *                  small, so their sums are exact in any order;
 *   MPI_Alltoall   blocks of 1, 100 and 70000 bytes, each with the pattern
 *                  of (sender, receiver, size);
 *   MPI_Bcast      1 B, 4 KiB and 1 MiB from every root;
 *   MPI_Barrier    once per rank, that rank entering late: no rank may
 *                  leave before the last one entered. Entry and exit times
 *                  come from CLOCK_MONOTONIC, which is one clock for all
 *                  processes of a node, so this is checked only when all
 *                  ranks share a node (as in the test bed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mpi_common.h"

#define SMALL_N 7
#define LARGE_N ((size_t)256 * 1024)
#define LATE_NS 20000000L	/* the late rank's delay before a barrier */

static const size_t a2a_sizes[] = { 1, 100, 70000 };
static const size_t bcast_sizes[] = { 1, 4096, (size_t)1 << 20 };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Element i of rank's input vector; integral for the int vectors. */
static double input(int dbl, int rank, size_t i)
{
	if (dbl)
		return (double)((i * 31 + (size_t)rank * 17) % 1999) * 0.25 -
		       200.0;
	return (double)((long)((i * 7919 + (size_t)rank * 104729) % 2001) -
			1000);
}

static double get(const void *v, int dbl, size_t i)
{
	return dbl ? ((const double *)v)[i] : ((const int *)v)[i];
}

static void put(void *v, int dbl, size_t i, double x)
{
	if (dbl)
		((double *)v)[i] = x;
	else
		((int *)v)[i] = (int)x;
}

/* The result every rank must get for element i. */
static double expected(int dbl, MPI_Op op, size_t i)
{
	double acc = input(dbl, 0, i), x;
	int r;

	for (r = 1; r < mt.size; r++) {
		x = input(dbl, r, i);
		acc = op == MPI_SUM ? acc + x : (x > acc ? x : acc);
	}
	return acc;
}

static void allreduce(int dbl, MPI_Op op, size_t n)
{
	size_t esz = dbl ? sizeof(double) : sizeof(int), i;
	void *in = mt_alloc(n * esz), *out = mt_alloc(n * esz);

	mt_step("MPI_Allreduce, %zu %s", n, dbl ? "doubles" : "ints");
	for (i = 0; i < n; i++)
		put(in, dbl, i, input(dbl, mt.rank, i));
	mt_flip(in, n * esz);
	MT(MPI_Allreduce(in, out, (int)n, dbl ? MPI_DOUBLE : MPI_INT, op,
			 MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		if (get(out, dbl, i) != expected(dbl, op, i)) {
			mt_fail("MPI_Allreduce %s %s, %zu elements: element "
				"%zu is %g, expected %g",
				op == MPI_SUM ? "MPI_SUM" : "MPI_MAX",
				dbl ? "double" : "int", n, i,
				get(out, dbl, i), expected(dbl, op, i));
			break;
		}
	free(in);
	free(out);
}

static void alltoall(size_t bs)
{
	unsigned char *in = mt_alloc(bs * (size_t)mt.size);
	unsigned char *out = mt_alloc(bs * (size_t)mt.size);
	char what[80];
	int r;

	mt_step("MPI_Alltoall, %zu bytes", bs);
	for (r = 0; r < mt.size; r++)
		mt_fill(in + (size_t)r * bs, bs,
			mt_seed((uint64_t)mt.rank, (uint64_t)r, bs, 2));
	MT(MPI_Alltoall(in, (int)bs, MPI_BYTE, out, (int)bs, MPI_BYTE,
			MPI_COMM_WORLD));
	for (r = 0; r < mt.size; r++) {
		snprintf(what, sizeof(what), "MPI_Alltoall %zu bytes, block "
			 "from %d", bs, r);
		mt_check(out + (size_t)r * bs, bs,
			 mt_seed((uint64_t)r, (uint64_t)mt.rank, bs, 2), what);
	}
	free(in);
	free(out);
}

static void bcast(int root, size_t len, unsigned char *buf)
{
	uint64_t seed = mt_seed((uint64_t)root, len, 3, 0);
	char what[80];

	mt_step("MPI_Bcast, %zu bytes from %d", len, root);
	if (mt.rank == root)
		mt_fill(buf, len, seed);
	MT(MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
	snprintf(what, sizeof(what), "MPI_Bcast %zu bytes from %d", len, root);
	if (mt.rank != root)
		mt_check(buf, len, seed, what);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One barrier that rank `late` enters LATE_NS late; the times are compared
 * only when one_node (all ranks on one node, one clock). */
static void barrier(int late, int one_node)
{
	struct timespec delay = { 0, LATE_NS };
	double t[2], *all = mt_alloc(sizeof(double) * 2 * (size_t)mt.size);
	double last_in = 0, first_out = 0;
	int r;

	mt_step("MPI_Barrier, rank %d late", late);
	if (mt.rank == late)
		nanosleep(&delay, NULL);
	t[0] = now();
	if (mt.fault != MT_FAULT_NOBARRIER)
		MT(MPI_Barrier(MPI_COMM_WORLD));
	t[1] = now();
	MT(MPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE,
			 MPI_COMM_WORLD));
	for (r = 0; r < mt.size; r++) {
		if (r == 0 || all[2 * r] > last_in)
			last_in = all[2 * r];
		if (r == 0 || all[2 * r + 1] < first_out)
			first_out = all[2 * r + 1];
	}
	/* Every rank sees the same times: the late one reports. */
	if (one_node && mt.rank == late && first_out < last_in)
		mt_fail("MPI_Barrier (rank %d late): a rank left %.6f s "
			"before the last one entered", late,
			last_in - first_out);
	free(all);
}

static int all_on_one_node(void)
{
	MPI_Comm node;
	int n;

	MT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			       MPI_INFO_NULL, &node));
	MT(MPI_Comm_size(node, &n));
	MT(MPI_Comm_free(&node));
	return n == mt.size;
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	char what[256];
	int dbl, r, one_node;
	size_t i;

	mt_init(&argc, &argv, "mpi_coll");
	for (dbl = 0; dbl < 2; dbl++) {
		allreduce(dbl, MPI_SUM, SMALL_N);
		allreduce(dbl, MPI_MAX, SMALL_N);
		allreduce(dbl, MPI_SUM, LARGE_N);
		allreduce(dbl, MPI_MAX, LARGE_N);
	}
	for (i = 0; i < COUNT(a2a_sizes); i++)
		alltoall(a2a_sizes[i]);
	buf = mt_alloc(bcast_sizes[COUNT(bcast_sizes) - 1]);
	for (r = 0; r < mt.size; r++)
		for (i = 0; i < COUNT(bcast_sizes); i++)
			bcast(r, bcast_sizes[i], buf);
	free(buf);
	one_node = all_on_one_node();
	for (r = 0; r < mt.size; r++)
		barrier(r, one_node);
	snprintf(what, sizeof(what), "%d ranks: MPI_Allreduce sum/max int and "
		 "double (%d and %zu elements), MPI_Alltoall, MPI_Bcast from "
		 "every root, MPI_Barrier%s; results checked", mt.size,
		 SMALL_N, LARGE_N, one_node ? " (entry/exit times)" : "");
	return mt_finish(what);
}
