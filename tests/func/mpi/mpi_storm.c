/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Nonblocking storm: in each round every rank exchanges MSGS messages with
 * every other rank, all at once. Sizes cycle from 0 bytes to 195 KiB
 * (above 64 KiB, where providers switch to rendezvous), tags cycle over
 * TAGS values, and every fourth receive takes MPI_ANY_TAG.
 *
 * A rank posts the receives of the first half of the messages, then all
 * its MPI_Isends, then the receives of the second half (by then most of
 * those messages have arrived unexpected), and waits for everything with
 * MPI_Waitall.
 *
 * Ordering: receives from one source are posted in sending order, and each
 * accepts its own message's tag, so MPI's non-overtaking rule says receive
 * k gets message k. Message k's size and data are derived from k, so a
 * message overtaking another of the same source and tag (or an ANY_TAG
 * receive taking the wrong one) shows as a wrong tag, count or data, or
 * as a truncated receive (a longer message in a shorter slot).
 *
 *   mpi_storm [-m MSGS] [-r ROUNDS]      (defaults 100 and 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi_common.h"

#define TAGS 5
#define TAG_BASE 10

static const size_t sizes[] = { 0, 1, 8, 100, 1000, 4096, 16384, 65537,
				 200000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct storm {
	int msgs, rounds;
	int npeers;		/* mt.size - 1 */
	size_t *off;		/* offset of slot (peer index, k) in an area */
	size_t area;		/* bytes of all slots of one direction */
	unsigned char *sbuf, *rbuf;
	MPI_Request *sreq, *rreq;
	MPI_Status *rst;
};

static size_t msg_size(int from, int to, int k)
{
	return sizes[(size_t)(k + from + 2 * to) % NSIZES];
}

static int msg_tag(int k)
{
	return TAG_BASE + k % TAGS;
}

static uint64_t msg_seed(int round, int from, int to, int k)
{
	return mt_seed((uint64_t)round, (uint64_t)from, (uint64_t)to,
		       (uint64_t)k);
}

/* Peer index p (0..npeers-1) names every rank but this one. */
static int peer_rank(int p)
{
	return p < mt.rank ? p : p + 1;
}

static int slot(const struct storm *s, int p, int k)
{
	return p * s->msgs + k;
}

/* Sizes are symmetric in neither direction, so a slot is as large as the
 * larger of the two messages it serves (send to / receive from peer). */
static void layout(struct storm *s)
{
	size_t n = (size_t)s->npeers * (size_t)s->msgs, a, b;
	int p, k;

	s->off = mt_alloc(sizeof(*s->off) * n);
	s->area = 0;
	for (p = 0; p < s->npeers; p++)
		for (k = 0; k < s->msgs; k++) {
			a = msg_size(mt.rank, peer_rank(p), k);
			b = msg_size(peer_rank(p), mt.rank, k);
			s->off[slot(s, p, k)] = s->area;
			s->area += a > b ? a : b;
		}
	s->sbuf = mt_alloc(s->area);
	s->rbuf = mt_alloc(s->area);
	s->sreq = mt_alloc(sizeof(*s->sreq) * n);
	s->rreq = mt_alloc(sizeof(*s->rreq) * n);
	s->rst = mt_alloc(sizeof(*s->rst) * n);
}

/* Receive k from peer p into a slot of exactly the expected size. */
static void post_recv(struct storm *s, int p, int k)
{
	int from = peer_rank(p), i = slot(s, p, k);
	int tag = k % 4 == 3 ? MPI_ANY_TAG : msg_tag(k);

	MT(MPI_Irecv(s->rbuf + s->off[i], (int)msg_size(from, mt.rank, k),
		     MPI_BYTE, from, tag, MPI_COMM_WORLD, &s->rreq[i]));
}

static void post_send(struct storm *s, int round, int p, int k)
{
	int to = peer_rank(p), i = slot(s, p, k);
	size_t len = msg_size(mt.rank, to, k);

	mt_fill(s->sbuf + s->off[i], len, msg_seed(round, mt.rank, to, k));
	MT(MPI_Isend(s->sbuf + s->off[i], (int)len, MPI_BYTE, to, msg_tag(k),
		     MPI_COMM_WORLD, &s->sreq[i]));
}

/* Waits for all receives. When one failed (a message longer than its
 * slot: one that overtook another), says which, then aborts: after an
 * error Open MPI returns with other receives still pending, and waiting
 * on can hang (a truncated rendezvous may never finish). */
static void wait_recvs(struct storm *s, int round, int n)
{
	char text[MPI_MAX_ERROR_STRING];
	int ret = MPI_Waitall(n, s->rreq, s->rst), i, len;

	for (i = 0; ret == MPI_ERR_IN_STATUS && i < n; i++) {
		if (s->rst[i].MPI_ERROR == MPI_SUCCESS ||
		    s->rst[i].MPI_ERROR == MPI_ERR_PENDING)
			continue;
		if (MPI_Error_string(s->rst[i].MPI_ERROR, text, &len))
			snprintf(text, sizeof(text), "error %d",
				 s->rst[i].MPI_ERROR);
		mt_fail("round %d, message %d from %d: %s", round,
			i % s->msgs, peer_rank(i / s->msgs), text);
	}
	mt_call(ret, "MPI_Waitall of the receives", __LINE__);
}

static void check_round(struct storm *s, int round)
{
	char what[96];
	int p, k, from, i;

	for (p = 0; p < s->npeers; p++)
		for (k = 0; k < s->msgs; k++) {
			from = peer_rank(p);
			i = slot(s, p, k);
			snprintf(what, sizeof(what), "round %d, message %d "
				 "from %d", round, k, from);
			if (mt_check_status(&s->rst[i], from, msg_tag(k),
					    msg_size(from, mt.rank, k),
					    what) == 0)
				mt_check(s->rbuf + s->off[i],
					 msg_size(from, mt.rank, k),
					 msg_seed(round, from, mt.rank, k),
					 what);
		}
}

/* The order fault: to peer 0, messages 0 and TAGS (same tag) go out in
 * swapped order. */
static int swapped(const struct storm *s, int p, int k)
{
	if (mt.fault != MT_FAULT_ORDER || p != 0 || s->msgs <= TAGS)
		return k;
	return k == 0 ? TAGS : k == TAGS ? 0 : k;
}

/* Loops go message by message over all peers, so every peer's traffic is
 * interleaved with every other's. */
static void run_round(struct storm *s, int round)
{
	int n = s->npeers * s->msgs, half = s->msgs / 2, p, k;

	mt_step("round %d", round);
	for (k = 0; k < half; k++)
		for (p = 0; p < s->npeers; p++)
			post_recv(s, p, k);
	for (k = 0; k < s->msgs; k++)
		for (p = 0; p < s->npeers; p++)
			post_send(s, round, p, swapped(s, p, k));
	for (k = half; k < s->msgs; k++)
		for (p = 0; p < s->npeers; p++)
			post_recv(s, p, k);
	wait_recvs(s, round, n);
	MT(MPI_Waitall(n, s->sreq, MPI_STATUSES_IGNORE));
	check_round(s, round);
}

static void parse_args(int argc, char **argv, struct storm *s)
{
	int c;

	s->msgs = 100;
	s->rounds = 2;
	while ((c = getopt(argc, argv, "m:r:")) != -1) {
		if (c == 'm')
			s->msgs = atoi(optarg);
		else if (c == 'r')
			s->rounds = atoi(optarg);
		else
			s->msgs = 0;
	}
	if (s->msgs < 1 || s->rounds < 1 || optind != argc) {
		if (mt.rank == 0)
			fprintf(stderr, "usage: mpi_storm [-m MSGS] "
				"[-r ROUNDS]\n");
		MPI_Finalize();
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct storm s;
	char what[256];
	int r;

	mt_init(&argc, &argv, "mpi_storm");
	parse_args(argc, argv, &s);
	if (mt.size < 2) {
		mt_fail("needs 2 ranks, has %d", mt.size);
		return mt_finish("storm");
	}
	s.npeers = mt.size - 1;
	layout(&s);
	for (r = 0; r < s.rounds; r++)
		run_round(&s, r);
	free(s.off);
	free(s.sbuf);
	free(s.rbuf);
	free(s.sreq);
	free(s.rreq);
	free(s.rst);
	snprintf(what, sizeof(what), "%d ranks, %d rounds of %d Isend + %d "
		 "Irecv per rank (0..%zu bytes, %d tags, every 4th ANY_TAG); "
		 "status, data and same-tag order checked", mt.size, s.rounds,
		 s.npeers * s.msgs, s.npeers * s.msgs, sizes[NSIZES - 1],
		 TAGS);
	return mt_finish(what);
}
