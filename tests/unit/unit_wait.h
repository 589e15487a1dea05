/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Shared by the unit tests of objects that can be waited on (CQ, EQ,
 * counter). Include after libfabric's headers. */
#ifndef UNIT_WAIT_H
#define UNIT_WAIT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether fd is readable now (a wait object signalled). */
static inline bool unit_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* The wait objects a thread can block on: an fd, a mutex and condition,
 * and yielding. */
static const enum fi_wait_obj unit_blocking_waits[] = {
	FI_WAIT_FD, FI_WAIT_MUTEX_COND, FI_WAIT_YIELD,
};
#define UNIT_N_BLOCKING \
	(sizeof(unit_blocking_waits) / sizeof(unit_blocking_waits[0]))

/* check for each of them. */
static inline void unit_each_wait(void (*check)(enum fi_wait_obj))
{
	size_t i;

	for (i = 0; i < UNIT_N_BLOCKING; i++)
		check(unit_blocking_waits[i]);
}

/* The same and FI_WAIT_UNSPEC (lfverbs' choice). */
static inline void unit_each_wait_unspec(void (*check)(enum fi_wait_obj))
{
	check(FI_WAIT_UNSPEC);
	unit_each_wait(check);
}

#endif /* UNIT_WAIT_H */
