/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_mpi: MPI ping-pong latency and streaming bandwidth between ranks 0
 * and 1, for run-rdm.sh --mpi (Open MPI over lfverbs, over verbs;ofi_rxm
 * and over its own ob1). Not a test: see tests/bench/README.md.
 *
 *   mpirun -np 2 bench_mpi [-n NAME] [-i ITERS] [-w WARMUP] [-b MSGS]
 *                          [SIZE...]
 *
 * For each SIZE (bytes; default 64 1024 8192 65536 1048576):
 *   lat  ITERS blocking ping-pongs (MPI_Send / MPI_Recv, tag 1) after
 *        WARMUP: half the round trip, median and mean over the iterations
 *   bw   rank 0 streams MSGS messages of SIZE (MPI_Isend, window 4,
 *        MPI_Waitall per window); rank 1 has the window's receives posted
 *        and answers a 4-byte ack at the end; MB/s are 10^6 bytes
 * Rank 0 prints one line per result, as bench_ep.h does:
 *   result impl=NAME test=lat size=S iters=N median_us=X mean_us=Y
 *   result impl=NAME test=bw size=S window=4 msgs=M MB_per_s=X
 * Every received ping-pong payload's first and last bytes are checked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 4

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_mpi: %s\n", what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void lat(int rank, const char *name, char *buf, size_t size, int warm,
		int iters)
{
	double *half = calloc((size_t)iters, sizeof(*half)), sum = 0, t0;
	int i, peer = !rank, n = (int)size;

	if (!half)
		die("out of memory");
	for (i = -warm; i < iters; i++) {
		t0 = MPI_Wtime();
		if (rank == 0) {
			buf[0] = (char)i;
			buf[size - 1] = (char)(i + 1);
			MPI_Send(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
		if (buf[0] != (char)i || buf[size - 1] != (char)(i + 1))
			die("ping-pong payload check failed");
		if (i >= 0) {
			half[i] = (MPI_Wtime() - t0) * 1e6 / 2;
			sum += half[i];
		}
	}
	if (rank == 0) {
		qsort(half, (size_t)iters, sizeof(*half), cmp_double);
		printf("result impl=%s test=lat size=%zu iters=%d median_us=%.2f "
		       "mean_us=%.2f\n", name, size, iters,
		       iters % 2 ? half[iters / 2] :
		       (half[iters / 2 - 1] + half[iters / 2]) / 2,
		       sum / iters);
		fflush(stdout);
	}
	free(half);
}

static void bw(int rank, const char *name, char *buf, size_t size, int msgs)
{
	MPI_Request req[WINDOW];
	int i, k, w, ack = 0, n = (int)size;
	double t0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < msgs; i += w) {
		w = msgs - i < WINDOW ? msgs - i : WINDOW;
		for (k = 0; k < w; k++) {
			char *b = buf + (size_t)k * size;

			if (rank == 0)
				MPI_Isend(b, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
					  &req[k]);
			else
				MPI_Irecv(b, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
					  &req[k]);
		}
		MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
	}
	if (rank == 0)
		MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("result impl=%s test=bw size=%zu window=%d msgs=%d "
		       "MB_per_s=%.2f\n", name, size, WINDOW, msgs,
		       (double)msgs * (double)size / (MPI_Wtime() - t0) / 1e6);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	static const size_t dflt[] = { 64, 1024, 8192, 65536, 1048576 };
	size_t sizes[64], nsizes = 0, max = 0, i;
	const char *name = "mpi";
	int rank, np, c, iters = 1000, warm = 100, msgs = 64;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 2)
		die("needs exactly 2 ranks");
	while ((c = getopt(argc, argv, "n:i:w:b:")) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'i': iters = atoi(optarg); break;
		case 'w': warm = atoi(optarg); break;
		case 'b': msgs = atoi(optarg); break;
		default: die("usage: bench_mpi [-n NAME] [-i ITERS] "
			     "[-w WARMUP] [-b MSGS] [SIZE...]");
		}
	}
	for (; optind < argc && nsizes < 64; optind++)
		sizes[nsizes++] = strtoull(argv[optind], NULL, 0);
	if (!nsizes) {
		memcpy(sizes, dflt, sizeof(dflt));
		nsizes = sizeof(dflt) / sizeof(dflt[0]);
	}
	for (i = 0; i < nsizes; i++) {
		if (!sizes[i] || sizes[i] > (1u << 30))
			die("sizes are 1 B to 1 GiB");
		max = sizes[i] > max ? sizes[i] : max;
	}
	if (iters < 1 || warm < 0 || msgs < 1)
		die("bad counts");
	buf = malloc(WINDOW * max);
	if (!buf)
		die("out of memory");
	memset(buf, 0, WINDOW * max);
	for (i = 0; i < nsizes; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		lat(rank, name, buf, sizes[i], warm, iters);
		bw(rank, name, buf, sizes[i], msgs);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
