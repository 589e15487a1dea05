/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bench_mpi_patterns: the time of common MPI communication patterns, for
 * run-mpi-patterns.sh (Open MPI over lfverbs, over verbs;ofi_rxm and over
 * its own ob1). Not a test: see tests/bench/README.md.
 *
 *   mpirun -np N bench_mpi_patterns [-n NAME] [-p PATTERN,...] [-r REPS]
 *          [-m MINREPS] [-B BYTES] [-w WARMUP] [SIZE...]
 *
 * Patterns (default all, in this order), SIZE bytes per message:
 *   pingpong   ranks 2k and 2k+1 in pairs: one MPI_Send / MPI_Recv round
 *              trip (an odd last rank only joins the barriers)
 *   exchange   the same pairs, both send and receive at once
 *              (MPI_Irecv, MPI_Isend, MPI_Waitall)
 *   ring       every rank exchanges SIZE with both ring neighbours at once
 *              (two receives, two sends, one MPI_Waitall)
 *   allreduce  MPI_Allreduce, SIZE / 4 unsigned ints, MPI_SUM (sizes that
 *              are multiples of 4 only)
 *   alltoall   MPI_Alltoall, SIZE bytes to and from every rank
 *   bcast      MPI_Bcast of SIZE bytes from rank 0
 *   barrier    MPI_Barrier (once, as size 0, whatever the sizes)
 * Sizes: default 0 B and 1 B to 4 MiB by powers of 2.
 *
 * Every repetition: the payloads are filled with a pattern of the
 * repetition, sender and receiver, all ranks meet in MPI_Barrier, each
 * times the operation with MPI_Wtime, and every received byte is checked
 * (a wrong byte aborts with a "check failed" line). A repetition's time
 * is the largest over the ranks (one MPI_Reduce per pattern and size,
 * after the timed loop). Repetitions: REPS (default 50), scaled down to
 * BYTES / SIZE (default 4 MiB) for big sizes but never below MINREPS
 * (default 5), after WARMUP untimed ones (default 2; 1 from 1 MiB).
 * Rank 0 prints one line per pattern and size when it starts, and one
 * when it ends:
 *   begin test=PATTERN size=S
 *   result impl=NAME test=PATTERN size=S ranks=N reps=R median_us=X max_us=Y
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZES 64
#define MAX_SIZE ((size_t)1 << 30)

/* One run's shared state: the communicator's shape and the buffers. */
struct run {
	int rank, np;
	size_t size;	/* bytes per message (per peer for alltoall) */
	int rep;	/* the repetition, warm-up ones negative */
	unsigned seq;	/* repetitions so far, all patterns and sizes */
	unsigned char *sbuf, *rbuf;	/* np x the largest size each */
	const char *pattern;
};

/* The byte i of what rank src sends to rank dst in the repetition
 * numbered seq: differs between senders, receivers, nearby offsets and
 * from every byte of the repetition before (29 is odd), so that a
 * buffer left as it was never passes a check. */
static unsigned char pat(unsigned seq, int src, int dst, size_t i)
{
	return (unsigned char)(seq * 29 + src * 7 + dst * 13 + i + (i >> 8) * 3);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_mpi_patterns: %s\n", what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void fill(unsigned char *b, const struct run *r, int src, int dst)
{
	size_t i;

	for (i = 0; i < r->size; i++)
		b[i] = pat(r->seq, src, dst, i);
}

/* Aborts unless b holds what src sent to dst (this rank, or 0 for
 * bcast's one payload). */
static void check(const unsigned char *b, const struct run *r, int src, int dst)
{
	char msg[200];
	size_t i;

	for (i = 0; i < r->size; i++) {
		if (b[i] == pat(r->seq, src, dst, i))
			continue;
		snprintf(msg, sizeof(msg), "check failed: %s size=%zu rep=%d "
			 "rank %d from %d: byte %zu is 0x%02x, not 0x%02x",
			 r->pattern, r->size, r->rep, r->rank, src, i, b[i],
			 pat(r->seq, src, dst, i));
		die(msg);
	}
}

static int count(const struct run *r)
{
	return (int)r->size;
}

/* The partner of the pair patterns, -1 for an odd last rank. */
static int partner(const struct run *r)
{
	int p = r->rank ^ 1;

	return p < r->np ? p : -1;
}

static void pingpong_prep(struct run *r)
{
	int p = partner(r);

	if (p >= 0 && !(r->rank & 1))
		fill(r->sbuf, r, r->rank, p);
}

static void pingpong_op(struct run *r)
{
	int p = partner(r);

	if (p < 0)
		return;
	if (!(r->rank & 1)) {
		MPI_Send(r->sbuf, count(r), MPI_BYTE, p, 1, MPI_COMM_WORLD);
		MPI_Recv(r->rbuf, count(r), MPI_BYTE, p, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(r->rbuf, count(r), MPI_BYTE, p, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		/* The echo is the received buffer itself, as applications
		 * forward data: its check is the even rank's. */
		MPI_Send(r->rbuf, count(r), MPI_BYTE, p, 1, MPI_COMM_WORLD);
	}
}

static void pingpong_check(struct run *r)
{
	int p = partner(r);

	/* The even rank gets its own bytes back through the odd one. */
	if (p >= 0)
		check(r->rbuf, r, r->rank & 1 ? p : r->rank,
		      r->rank & 1 ? r->rank : p);
}

static void exchange_prep(struct run *r)
{
	int p = partner(r);

	if (p >= 0)
		fill(r->sbuf, r, r->rank, p);
}

static void exchange_op(struct run *r)
{
	MPI_Request req[2];
	int p = partner(r);

	if (p < 0)
		return;
	MPI_Irecv(r->rbuf, count(r), MPI_BYTE, p, 2, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(r->sbuf, count(r), MPI_BYTE, p, 2, MPI_COMM_WORLD, &req[1]);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

static void exchange_check(struct run *r)
{
	int p = partner(r);

	if (p >= 0)
		check(r->rbuf, r, p, r->rank);
}

/* Ring: slot 0 of each buffer is for the left neighbour, slot 1 for the
 * right one. Tag 3 travels rightwards, tag 4 leftwards, so that the two
 * messages between the same two ranks (np = 2) are told apart. */
static int left(const struct run *r)
{
	return (r->rank + r->np - 1) % r->np;
}

static int right(const struct run *r)
{
	return (r->rank + 1) % r->np;
}

static void ring_prep(struct run *r)
{
	fill(r->sbuf, r, r->rank, left(r));
	fill(r->sbuf + r->size, r, r->rank, right(r));
}

static void ring_op(struct run *r)
{
	MPI_Request req[4];

	MPI_Irecv(r->rbuf, count(r), MPI_BYTE, left(r), 3, MPI_COMM_WORLD,
		  &req[0]);
	MPI_Irecv(r->rbuf + r->size, count(r), MPI_BYTE, right(r), 4,
		  MPI_COMM_WORLD, &req[1]);
	MPI_Isend(r->sbuf, count(r), MPI_BYTE, left(r), 4, MPI_COMM_WORLD,
		  &req[2]);
	MPI_Isend(r->sbuf + r->size, count(r), MPI_BYTE, right(r), 3,
		  MPI_COMM_WORLD, &req[3]);
	MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

static void ring_check(struct run *r)
{
	/* From the left: what it sent to its right; and conversely. */
	check(r->rbuf, r, left(r), r->rank);
	check(r->rbuf + r->size, r, right(r), r->rank);
}

/* Allreduce: SIZE / 4 unsigned ints, MPI_SUM (wrapping); every rank
 * contributes words of pat(seq, rank, 0, i), the sums are checked.
 * Not bytes: Debian's Open MPI 4.1.4 sums MPI_UNSIGNED_CHAR with
 * saturation in its op/avx component (README). */
static unsigned word(const struct run *r, int src, size_t i)
{
	return pat(r->seq, src, 0, i) * 0x01010101u + (unsigned)src * 0x10000000u;
}

static void allreduce_prep(struct run *r)
{
	unsigned *w = (unsigned *)r->sbuf;
	size_t i;

	for (i = 0; i < r->size / 4; i++)
		w[i] = word(r, r->rank, i);
}

static void allreduce_op(struct run *r)
{
	MPI_Allreduce(r->sbuf, r->rbuf, count(r) / 4, MPI_UNSIGNED, MPI_SUM,
		      MPI_COMM_WORLD);
}

static void allreduce_check(struct run *r)
{
	const unsigned *got = (const unsigned *)r->rbuf;
	unsigned want;
	char msg[200];
	size_t i;
	int k;

	for (i = 0; i < r->size / 4; i++) {
		want = 0;
		for (k = 0; k < r->np; k++)
			want += word(r, k, i);
		if (got[i] == want)
			continue;
		snprintf(msg, sizeof(msg), "check failed: allreduce size=%zu "
			 "rep=%d rank %d: word %zu is 0x%08x, not 0x%08x",
			 r->size, r->rep, r->rank, i, got[i], want);
		die(msg);
	}
}

static void alltoall_prep(struct run *r)
{
	int k;

	for (k = 0; k < r->np; k++)
		fill(r->sbuf + (size_t)k * r->size, r, r->rank, k);
}

static void alltoall_op(struct run *r)
{
	MPI_Alltoall(r->sbuf, count(r), MPI_BYTE, r->rbuf, count(r), MPI_BYTE,
		     MPI_COMM_WORLD);
}

static void alltoall_check(struct run *r)
{
	int k;

	for (k = 0; k < r->np; k++)
		check(r->rbuf + (size_t)k * r->size, r, k, r->rank);
}

/* Bcast works in place: the root's buffer is the payload, the others'
 * still hold the repetition before, which the check rejects. */
static void bcast_prep(struct run *r)
{
	if (r->rank == 0)
		fill(r->rbuf, r, 0, 0);
}

static void bcast_op(struct run *r)
{
	MPI_Bcast(r->rbuf, count(r), MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void bcast_check(struct run *r)
{
	check(r->rbuf, r, 0, 0);
}

static void nothing(struct run *r)
{
	(void)r;
}

static void barrier_op(struct run *r)
{
	(void)r;
	MPI_Barrier(MPI_COMM_WORLD);
}

static const struct pattern {
	const char *name;
	void (*prep)(struct run *r);	/* fills what this rank sends */
	void (*op)(struct run *r);	/* the timed part */
	void (*check)(struct run *r);	/* checks what it received */
	size_t unit;	/* sizes it runs at: multiples of it; 0: once, at 0 */
} patterns[] = {
	{ "pingpong", pingpong_prep, pingpong_op, pingpong_check, 1 },
	{ "exchange", exchange_prep, exchange_op, exchange_check, 1 },
	{ "ring", ring_prep, ring_op, ring_check, 1 },
	{ "allreduce", allreduce_prep, allreduce_op, allreduce_check, 4 },
	{ "alltoall", alltoall_prep, alltoall_op, alltoall_check, 1 },
	{ "bcast", bcast_prep, bcast_op, bcast_check, 1 },
	{ "barrier", nothing, barrier_op, nothing, 0 },
};
#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Repetition counts of the options. */
struct counts {
	int reps, minreps, warm;
	size_t budget;
};

static int reps_for(const struct counts *c, size_t size)
{
	size_t n = size ? c->budget / size : (size_t)c->reps;

	if (n > (size_t)c->reps)
		n = (size_t)c->reps;
	return (int)n < c->minreps ? c->minreps : (int)n;
}

/* One pattern at one size: warm-up, timed repetitions, checks, and rank
 * 0's result line. t: room for the repetitions' times (both halves). */
static void measure(struct run *r, const struct pattern *p,
		    const struct counts *c, const char *name, double *t)
{
	int reps = reps_for(c, r->size), i;
	int warm = r->size >= ((size_t)1 << 20) && c->warm > 1 ? 1 : c->warm;
	double t0, *tmax = t + reps;

	r->pattern = p->name;
	if (!r->rank) {
		/* Says where a run stopped, when it hangs. */
		printf("begin test=%s size=%zu\n", p->name, r->size);
		fflush(stdout);
	}
	for (i = -warm; i < reps; i++) {
		r->rep = i;
		r->seq++;
		p->prep(r);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		p->op(r);
		if (i >= 0)
			t[i] = (MPI_Wtime() - t0) * 1e6;
		p->check(r);
	}
	MPI_Reduce(t, tmax, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (r->rank)
		return;
	qsort(tmax, (size_t)reps, sizeof(*tmax), cmp_double);
	printf("result impl=%s test=%s size=%zu ranks=%d reps=%d median_us=%.2f "
	       "max_us=%.2f\n", name, p->name, r->size, r->np, reps,
	       reps % 2 ? tmax[reps / 2] :
	       (tmax[reps / 2 - 1] + tmax[reps / 2]) / 2, tmax[reps - 1]);
	fflush(stdout);
}

/* Marks in want[] the patterns named in the comma-separated list. */
static void pick(const char *list, int *want)
{
	char *copy = strdup(list), *tok, *save = NULL;
	size_t k;

	if (!copy)
		die("out of memory");
	memset(want, 0, NPATTERNS * sizeof(*want));
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NPATTERNS; k++)
			if (!strcmp(tok, patterns[k].name))
				break;
		if (k == NPATTERNS)
			die("unknown pattern (pingpong, exchange, ring, allreduce, "
			    "alltoall, bcast, barrier)");
		want[k] = 1;
	}
	free(copy);
}

static void usage(void)
{
	die("usage: bench_mpi_patterns [-n NAME] [-p PATTERN,...] [-r REPS] "
	    "[-m MINREPS] [-B BYTES] [-w WARMUP] [SIZE...]");
}

int main(int argc, char **argv)
{
	struct counts c = { .reps = 50, .minreps = 5, .warm = 2,
			    .budget = (size_t)4 << 20 };
	size_t sizes[MAX_SIZES], nsizes = 0, max = 1, i, k;
	int want[NPATTERNS], opt, all = 1, maxreps;
	const char *name = "mpi";
	struct run r = { 0 };
	double *t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &r.np);
	while ((opt = getopt(argc, argv, "n:p:r:m:B:w:")) != -1) {
		switch (opt) {
		case 'n': name = optarg; break;
		case 'p': pick(optarg, want); all = 0; break;
		case 'r': c.reps = atoi(optarg); break;
		case 'm': c.minreps = atoi(optarg); break;
		case 'B': c.budget = strtoull(optarg, NULL, 0); break;
		case 'w': c.warm = atoi(optarg); break;
		default: usage();
		}
	}
	if (all)
		for (k = 0; k < NPATTERNS; k++)
			want[k] = 1;
	if (c.reps < 1 || c.minreps < 1 || c.warm < 0 || r.np < 2)
		die("needs 2 ranks or more, REPS and MINREPS >= 1, WARMUP >= 0");
	for (; optind < argc && nsizes < MAX_SIZES; optind++) {
		char *end;

		sizes[nsizes] = strtoull(argv[optind], &end, 0);
		if (*end || sizes[nsizes] > MAX_SIZE)
			die("sizes are 0 B to 1 GiB");
		nsizes++;
	}
	if (!nsizes) {
		sizes[nsizes++] = 0;
		for (i = 1; i <= ((size_t)4 << 20); i <<= 1)
			sizes[nsizes++] = i;
	}
	for (i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;
	maxreps = c.reps > c.minreps ? c.reps : c.minreps;
	/* Alltoall needs np blocks each way, the ring two. */
	r.sbuf = malloc((size_t)r.np * max);
	r.rbuf = malloc((size_t)r.np * max);
	t = calloc(2 * (size_t)maxreps, sizeof(*t));
	if (!r.sbuf || !r.rbuf || !t)
		die("out of memory");
	memset(r.sbuf, 0, (size_t)r.np * max);
	memset(r.rbuf, 0, (size_t)r.np * max);
	for (k = 0; k < NPATTERNS; k++) {
		if (!want[k])
			continue;
		for (i = 0; i < (patterns[k].unit ? nsizes : 1); i++) {
			r.size = patterns[k].unit ? sizes[i] : 0;
			if (!patterns[k].unit || !(r.size % patterns[k].unit))
				measure(&r, &patterns[k], &c, name, t);
		}
	}
	free(t);
	free(r.sbuf);
	free(r.rbuf);
	MPI_Finalize();
	return 0;
}
