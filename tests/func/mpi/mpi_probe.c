/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Probing, on a ring: every rank sends to the next one and receives from
 * the previous one, for sizes from 0 bytes to 1 MiB.
 *
 *   probe    MPI_Probe(ANY_SOURCE, ANY_TAG) must give the sender, the tag
 *            and the count; a receive of exactly that count then gets the
 *            message;
 *   iprobe   MPI_Iprobe for a tag nobody sends is false; MPI_Iprobe for
 *            the real tag, in a loop until true, gives the same status;
 *   mprobe   two messages with one tag: MPI_Mprobe takes the first out of
 *            matching, so MPI_Probe now sees the second; MPI_Mrecv gets
 *            the first; MPI_Improbe (loop) and MPI_Mrecv the second.
 *
 * Every status (source, tag, count) and every byte received is checked.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_common.h"

#define TAG_PROBE 1000
#define TAG_IPROBE 2000
#define TAG_MPROBE 3000
#define TAG_NEVER 4000		/* no rank ever sends this tag */
#define DEADLINE 60.0		/* seconds an Iprobe loop may spin */

static const size_t sizes[] = { 0, 5, 4096, 100000, (size_t)1 << 20 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int right, left;		/* ring neighbours: send to, receive from */

static uint64_t seed_of(int part, int i, int n, int from)
{
	return mt_seed((uint64_t)part, (uint64_t)i, (uint64_t)n,
		       (uint64_t)from);
}

/* Starts the send of message n of part/size index i to the right. */
static void send_one(int part, int i, int n, size_t len, unsigned char *buf,
		     MPI_Request *req)
{
	mt_fill(buf, len, seed_of(part, i, n, mt.rank));
	MT(MPI_Isend(buf, (int)len, MPI_BYTE, right, part + i, MPI_COMM_WORLD,
		     req));
}

/* Checks the status of a probed (buf NULL) or received message, and the
 * data of a received one. */
static void check_recv(const MPI_Status *st, const unsigned char *buf,
		       int part, int i, int n, size_t len, const char *how)
{
	char what[96];

	snprintf(what, sizeof(what), "%s, %zu bytes, message %d from %d",
		 how, len, n, left);
	if (mt_check_status(st, left, part + i, len, what) == 0 && buf)
		mt_check(buf, len, seed_of(part, i, n, left), what);
}

/* MPI_Probe with both wildcards, then a receive of the probed count. */
static void part_probe(int i, unsigned char *sbuf)
{
	MPI_Request req;
	MPI_Status st;
	unsigned char *rbuf;
	int count;

	mt_step("probe part, %zu bytes", sizes[i]);
	send_one(TAG_PROBE, i, 0, sizes[i], sbuf, &req);
	MT(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	check_recv(&st, NULL, TAG_PROBE, i, 0, sizes[i], "MPI_Probe");
	/* Receive exactly what the probe announced, as an application
	 * sizing its buffer from the probe would. */
	MT(MPI_Get_count(&st, MPI_BYTE, &count));
	rbuf = mt_alloc((size_t)count);
	MT(MPI_Recv(rbuf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
		    MPI_COMM_WORLD, &st));
	check_recv(&st, rbuf, TAG_PROBE, i, 0, sizes[i], "MPI_Recv after probe");
	free(rbuf);
	MT(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Spins on MPI_Iprobe (or MPI_Improbe when msg is set) until it finds a
 * message or the deadline passes. Returns 0 when found. */
static int probe_loop(int tag, MPI_Message *msg, MPI_Status *st)
{
	double end = MPI_Wtime() + DEADLINE;
	int flag = 0;

	while (!flag && MPI_Wtime() < end) {
		if (msg)
			MT(MPI_Improbe(left, tag, MPI_COMM_WORLD, &flag, msg,
				       st));
		else
			MT(MPI_Iprobe(left, tag, MPI_COMM_WORLD, &flag, st));
	}
	if (!flag)
		mt_fail("%s(tag %d) still false after %.0f s",
			msg ? "MPI_Improbe" : "MPI_Iprobe", tag, DEADLINE);
	return flag ? 0 : -1;
}

static void part_iprobe(int i, unsigned char *sbuf, unsigned char *rbuf)
{
	MPI_Request req;
	MPI_Status st;
	int flag = 1;

	mt_step("iprobe part, %zu bytes", sizes[i]);
	send_one(TAG_IPROBE, i, 0, sizes[i], sbuf, &req);
	MT(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &flag, &st));
	if (flag)
		mt_fail("MPI_Iprobe found tag %d that nobody sends (source "
			"%d, tag %d)", TAG_NEVER, st.MPI_SOURCE, st.MPI_TAG);
	if (probe_loop(TAG_IPROBE + i, NULL, &st) == 0)
		check_recv(&st, NULL, TAG_IPROBE, i, 0, sizes[i],
			   "MPI_Iprobe");
	MT(MPI_Recv(rbuf, (int)sizes[NSIZES - 1], MPI_BYTE, left,
		    TAG_IPROBE + i, MPI_COMM_WORLD, &st));
	check_recv(&st, rbuf, TAG_IPROBE, i, 0, sizes[i],
		   "MPI_Recv after iprobe");
	MT(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* Two messages with one tag, sizes[i] then sizes[j]. */
static void part_mprobe(int i, unsigned char *sbuf, unsigned char *rbuf)
{
	int j = (i + 1) % NSIZES, tag = TAG_MPROBE + i;
	size_t cap = sizes[NSIZES - 1];
	MPI_Request req[2];
	MPI_Message msg;
	MPI_Status st;

	mt_step("mprobe part, %zu then %zu bytes", sizes[i], sizes[j]);
	send_one(TAG_MPROBE, i, 0, sizes[i], sbuf, &req[0]);
	send_one(TAG_MPROBE, i, 1, sizes[j], sbuf + cap, &req[1]);
	MT(MPI_Mprobe(left, tag, MPI_COMM_WORLD, &msg, &st));
	check_recv(&st, NULL, TAG_MPROBE, i, 0, sizes[i], "MPI_Mprobe");
	/* The matched first message is gone from matching: a probe now
	 * sees the second. */
	MT(MPI_Probe(left, tag, MPI_COMM_WORLD, &st));
	check_recv(&st, NULL, TAG_MPROBE, i, 1, sizes[j],
		   "MPI_Probe after MPI_Mprobe");
	MT(MPI_Mrecv(rbuf, (int)cap, MPI_BYTE, &msg, &st));
	check_recv(&st, rbuf, TAG_MPROBE, i, 0, sizes[i], "MPI_Mrecv");
	if (probe_loop(tag, &msg, &st) == 0) {
		check_recv(&st, NULL, TAG_MPROBE, i, 1, sizes[j],
			   "MPI_Improbe");
		MT(MPI_Mrecv(rbuf, (int)cap, MPI_BYTE, &msg, &st));
		check_recv(&st, rbuf, TAG_MPROBE, i, 1, sizes[j],
			   "MPI_Mrecv after MPI_Improbe");
	}
	MT(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
	size_t cap = sizes[NSIZES - 1];
	unsigned char *sbuf, *rbuf;
	char what[256];
	int i;

	mt_init(&argc, &argv, "mpi_probe");
	if (mt.size < 2) {
		mt_fail("needs 2 ranks, has %d", mt.size);
		return mt_finish("probe");
	}
	right = (mt.rank + 1) % mt.size;
	left = (mt.rank + mt.size - 1) % mt.size;
	sbuf = mt_alloc(2 * cap);
	rbuf = mt_alloc(cap);
	for (i = 0; i < NSIZES; i++) {
		part_probe(i, sbuf);
		part_iprobe(i, sbuf, rbuf);
		part_mprobe(i, sbuf, rbuf);
	}
	free(sbuf);
	free(rbuf);
	snprintf(what, sizeof(what), "ring of %d, %d sizes 0..%zu bytes: "
		 "MPI_Probe, MPI_Iprobe loop, MPI_Mprobe/MPI_Improbe + "
		 "MPI_Mrecv; status counts and data checked", mt.size, NSIZES,
		 cap);
	return mt_finish(what);
}
