/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared by the MPI test programs (tests/func/func_mpi.sh runs them): start
 * and end, data patterns, status checks, and error counting.
 *
 * A failed check is counted and reported (the first few per rank) and the
 * program goes on, so one run shows every kind of failure; at the end the
 * counts are summed over all ranks and rank 0 prints the one summary line.
 * A failed MPI call aborts the job instead: the ranks are then out of step
 * and would only hang.
 *
 * LFV_MPI_FAULT makes the checks themselves show that they can fail:
 *   flip    every rank flips one byte of the first non-empty message it
 *           sends (after filling it), so the receiver's data check (or a
 *           collective's result check) fails;
 *   status  every count check expects one element more than was sent;
 *   nobarrier  mpi_coll leaves out the MPI_Barrier calls it checks;
 *   order   mpi_storm sends two messages of one tag to its first peer in
 *           swapped order, as a provider that lets one overtake would;
 *   kill    rank 1 kills itself (SIGKILL) at its 50th step, for
 *           tests/nodes/faults.sh: the job must end in an error, not hang.
 *
 * LFV_MPI_TRACE=1 prints every step (mt_step) to stderr as it starts, to
 * find where a run hangs.
 */
#ifndef MPI_COMMON_H
#define MPI_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

enum mt_fault {
	MT_FAULT_NONE, MT_FAULT_FLIP, MT_FAULT_STATUS, MT_FAULT_NOBARRIER,
	MT_FAULT_ORDER, MT_FAULT_KILL
};

struct mt {
	const char *name;	/* program name in every message */
	int rank, size;
	long errors;		/* failed checks on this rank */
	enum mt_fault fault;
	int flipped;		/* the flip fault has been applied */
	int steps;		/* mt_step calls, for the kill fault */
	char step[128];		/* what the program is doing (mt_step) */
	int trace;		/* LFV_MPI_TRACE set: print every step */
};

extern struct mt mt;

/* MPI_Init, errors returned instead of fatal, LFV_MPI_FAULT read. */
void mt_init(int *argc, char ***argv, const char *name);
/* Sums the errors over all ranks; rank 0 prints "NAME: WHAT: ok" or the
 * failure count; MPI_Finalize. Returns the exit status for main. */
int mt_finish(const char *what);

/* Counts one failed check and reports it (the first few per rank). */
void mt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says what the program is doing now; a failed MPI call reports it. */
void mt_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Aborts the job when an MPI call returned an error. */
void mt_call(int ret, const char *call, int line);
#define MT(call) mt_call((call), #call, __LINE__)

/* A 64-bit seed from up to four numbers (size, iteration, rank, ...), so
 * that a message left over from another step never matches. */
uint64_t mt_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d);
/* Fills len bytes with the pattern of seed, then applies the flip fault. */
void mt_fill(void *buf, size_t len, uint64_t seed);
/* The flip fault: flips a bit of byte len / 2 when LFV_MPI_FAULT=flip and
 * this rank has flipped nothing yet. Call it on data about to be sent. */
void mt_flip(void *buf, size_t len);
/* Checks len bytes against the pattern of seed; reports the first wrong
 * byte with WHAT. Returns 0 when the data is right. */
int mt_check(const void *buf, size_t len, uint64_t seed, const char *what);

/* Checks a receive's status: source, tag (either < 0: not checked) and
 * the count of bytes (MPI_BYTE). Returns 0 when all are right. */
int mt_check_status(const MPI_Status *st, int source, int tag, size_t count,
		    const char *what);
/* Checks only the count, in elements of type. */
int mt_check_count(const MPI_Status *st, MPI_Datatype type, size_t count,
		   const char *what);

/* Allocates or aborts; the buffer is filled with 0xa5 so that unwritten
 * bytes never look like a pattern. */
void *mt_alloc(size_t len);

#endif /* MPI_COMMON_H */
