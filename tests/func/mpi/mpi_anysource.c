/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Wildcard receives from several senders. Every rank takes the receiver's
 * turn once; the others send to it. Three phases per turn:
 *
 *   unexpected  the senders' MPI_Isends start before a barrier, the
 *               receiver posts nothing until after it, so the messages wait
 *               at the receiver; then blocking MPI_Recv(ANY_SOURCE,
 *               ANY_TAG) takes them one at a time;
 *   expected    the receiver posts all its MPI_Irecv(ANY_SOURCE, ANY_TAG)
 *               before a barrier, the senders send after it;
 *   filter      each sender sends tag B, then tag A; the receiver takes
 *               tag A from ANY_SOURCE first (the tag B messages ahead of
 *               them must not match), then ANY_TAG from each source.
 *
 * Every message's status gives its source, tag and count; the tag says
 * which message of that source it is, which fixes the expected count and
 * data, and messages of one source must come in the order sent
 * (MPI's non-overtaking rule holds for wildcard receives too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

#define PER_SENDER 16		/* messages per sender per phase */
#define TAG_STRIDE 64		/* tag = source * TAG_STRIDE + index */
#define TAG_A 30001
#define TAG_B 30002
#define CAP 70000		/* largest message; above 64 KiB */

enum phase { UNEXPECTED = 1, EXPECTED, FILTER };
static const char *const phase_name[] = { "", "unexpected", "expected",
					  "filter" };

static const size_t sizes[] = { 0, 1, 24, 1000, 8192, CAP };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static size_t msg_size(int src, int k)
{
	return sizes[(size_t)(src + k) % NSIZES];
}

static uint64_t msg_seed(int root, enum phase ph, int src, int k)
{
	return mt_seed((uint64_t)root, ph, (uint64_t)src, (uint64_t)k);
}

/* A sender whose sends of one phase have completed locally must not send
 * the next phase's messages while the receiver still has wildcard receives
 * of this phase posted: they would match them. */
static void separate(void)
{
	MT(MPI_Barrier(MPI_COMM_WORLD));
}

/* Sender side of the unexpected and expected phases: PER_SENDER messages
 * to root, nonblocking so that none waits for the receiver. */
static void send_all(int root, enum phase ph, unsigned char *bufs,
		     MPI_Request *reqs)
{
	int k;

	for (k = 0; k < PER_SENDER; k++) {
		unsigned char *b = bufs + (size_t)k * CAP;
		size_t len = msg_size(mt.rank, k);

		mt_fill(b, len, msg_seed(root, ph, mt.rank, k));
		MT(MPI_Isend(b, (int)len, MPI_BYTE, root,
			     mt.rank * TAG_STRIDE + k, MPI_COMM_WORLD,
			     &reqs[k]));
	}
}

/* Receiver side: one wildcard-received message, identified by its status.
 * next[src] is the index the next message from src must have. */
static void check_one(int root, enum phase ph, const MPI_Status *st,
		      const unsigned char *buf, int *next)
{
	int src = st->MPI_SOURCE, k;
	char what[96];

	snprintf(what, sizeof(what), "root %d, %s phase, from %d tag %d",
		 root, phase_name[ph], src, st->MPI_TAG);
	if (src < 0 || src >= mt.size || src == root) {
		mt_fail("%s: no such sender", what);
		return;
	}
	k = st->MPI_TAG - src * TAG_STRIDE;
	if (k != next[src]) {
		mt_fail("%s: message %d of that sender, expected %d (order)",
			what, k, next[src]);
		if (k < 0 || k >= PER_SENDER)
			return;
	}
	next[src] = k + 1;
	if (mt_check_status(st, src, -1, msg_size(src, k), what) == 0)
		mt_check(buf, msg_size(src, k), msg_seed(root, ph, src, k),
			 what);
}

/* Every sender must have delivered all its messages. */
static void check_all_seen(int root, enum phase ph, const int *next)
{
	int s;

	for (s = 0; s < mt.size; s++)
		if (s != root && next[s] != PER_SENDER)
			mt_fail("root %d, %s phase: %d messages from %d, "
				"expected %d", root, phase_name[ph], next[s],
				s, PER_SENDER);
}

static void phase_unexpected(int root, unsigned char *bufs,
			     MPI_Request *reqs, int *next)
{
	int total = (mt.size - 1) * PER_SENDER, i;
	MPI_Status st;

	mt_step("root %d, unexpected phase", root);
	separate();
	if (mt.rank != root)
		send_all(root, UNEXPECTED, bufs, reqs);
	/* The receiver posts nothing before every sender has started its
	 * sends, so (eager) messages arrive unexpected. */
	MT(MPI_Barrier(MPI_COMM_WORLD));
	if (mt.rank != root) {
		MT(MPI_Waitall(PER_SENDER, reqs, MPI_STATUSES_IGNORE));
		return;
	}
	memset(next, 0, sizeof(int) * (size_t)mt.size);
	for (i = 0; i < total; i++) {
		MT(MPI_Recv(bufs, CAP, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
			    MPI_COMM_WORLD, &st));
		check_one(root, UNEXPECTED, &st, bufs, next);
	}
	check_all_seen(root, UNEXPECTED, next);
}

static void phase_expected(int root, unsigned char *bufs, MPI_Request *reqs,
			   MPI_Status *sts, int *next)
{
	int total = (mt.size - 1) * PER_SENDER, i;

	mt_step("root %d, expected phase", root);
	separate();
	if (mt.rank == root)
		for (i = 0; i < total; i++)
			MT(MPI_Irecv(bufs + (size_t)i * CAP, CAP, MPI_BYTE,
				     MPI_ANY_SOURCE, MPI_ANY_TAG,
				     MPI_COMM_WORLD, &reqs[i]));
	/* Every receive is posted before the first message leaves. */
	MT(MPI_Barrier(MPI_COMM_WORLD));
	if (mt.rank != root) {
		send_all(root, EXPECTED, bufs, reqs);
		MT(MPI_Waitall(PER_SENDER, reqs, MPI_STATUSES_IGNORE));
		return;
	}
	MT(MPI_Waitall(total, reqs, sts));
	/* Receives match in the order posted, so statuses in index order
	 * show each sender's messages in its sending order. */
	memset(next, 0, sizeof(int) * (size_t)mt.size);
	for (i = 0; i < total; i++)
		check_one(root, EXPECTED, &sts[i], bufs + (size_t)i * CAP,
			  next);
	check_all_seen(root, EXPECTED, next);
}

/* Receiver side of the filter phase: one receive of (source, tag) that
 * must give a message with tag want_tag; seen[src] counts per source. */
static void filter_recv(int root, int source, int tag, int want_tag,
			unsigned char *buf, int *seen)
{
	MPI_Status st;
	char what[96];

	MT(MPI_Recv(buf, CAP, MPI_BYTE, source, tag, MPI_COMM_WORLD, &st));
	snprintf(what, sizeof(what), "root %d, filter, from %d tag %d", root,
		 st.MPI_SOURCE, st.MPI_TAG);
	if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= mt.size ||
	    st.MPI_SOURCE == root) {
		mt_fail("%s: no such sender", what);
		return;
	}
	seen[st.MPI_SOURCE]++;
	if (source == MPI_ANY_SOURCE)
		source = st.MPI_SOURCE;
	if (mt_check_status(&st, source, want_tag,
			    msg_size(st.MPI_SOURCE, want_tag), what) == 0)
		mt_check(buf, msg_size(st.MPI_SOURCE, want_tag),
			 msg_seed(root, FILTER, st.MPI_SOURCE, want_tag),
			 what);
}

static void phase_filter(int root, unsigned char *bufs, MPI_Request *reqs,
			 int *seen)
{
	int s, i;

	mt_step("root %d, filter phase", root);
	separate();
	if (mt.rank != root) {
		int tags[2] = { TAG_B, TAG_A };

		for (i = 0; i < 2; i++) {
			unsigned char *b = bufs + (size_t)i * CAP;
			size_t len = msg_size(mt.rank, tags[i]);

			mt_fill(b, len, msg_seed(root, FILTER, mt.rank,
						 tags[i]));
			MT(MPI_Isend(b, (int)len, MPI_BYTE, root, tags[i],
				     MPI_COMM_WORLD, &reqs[i]));
		}
	}
	MT(MPI_Barrier(MPI_COMM_WORLD));
	if (mt.rank != root) {
		MT(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
		return;
	}
	memset(seen, 0, sizeof(int) * (size_t)mt.size);
	for (i = 1; i < mt.size; i++)
		filter_recv(root, MPI_ANY_SOURCE, TAG_A, TAG_A, bufs, seen);
	for (s = mt.size - 1; s >= 0; s--)
		if (s != root)
			filter_recv(root, s, MPI_ANY_TAG, TAG_B, bufs, seen);
	for (s = 0; s < mt.size; s++)
		if (s != root && seen[s] != 2)
			mt_fail("root %d, filter: %d messages from %d, "
				"expected 2", root, seen[s], s);
}

int main(int argc, char **argv)
{
	unsigned char *bufs;
	MPI_Request *reqs;
	MPI_Status *sts;
	int *next, root, total;
	char what[256];

	mt_init(&argc, &argv, "mpi_anysource");
	if (mt.size < 3) {
		mt_fail("needs at least 3 ranks (several senders), has %d",
			mt.size);
		return mt_finish("wildcard receives");
	}
	total = (mt.size - 1) * PER_SENDER;
	bufs = mt_alloc((size_t)total * CAP);
	reqs = mt_alloc(sizeof(*reqs) * (size_t)total);
	sts = mt_alloc(sizeof(*sts) * (size_t)total);
	next = mt_alloc(sizeof(*next) * (size_t)mt.size);
	for (root = 0; root < mt.size; root++) {
		phase_unexpected(root, bufs, reqs, next);
		phase_expected(root, bufs, reqs, sts, next);
		phase_filter(root, bufs, reqs, next);
	}
	free(bufs);
	free(reqs);
	free(sts);
	free(next);
	snprintf(what, sizeof(what), "%d receivers x %d senders x %d messages "
		 "(0..%d bytes), ANY_SOURCE/ANY_TAG unexpected and expected, "
		 "tag filtering; source, tag, count, order and data checked",
		 mt.size, mt.size - 1, PER_SENDER, CAP);
	return mt_finish(what);
}
