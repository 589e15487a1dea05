/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Shared by the unit tests of objects that can be waited on (CQ, EQ,
 * counter). Include after libfabric's headers. */
#ifndef UNIT_WAIT_H
#define UNIT_WAIT_H

#include <poll.h>
#include <stdbool.h>

/* Whether fd is readable now (a wait object signalled). */
static inline bool unit_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* check for each wait object a thread can block on: an fd, a mutex and
 * condition, and yielding. */
static inline void unit_each_wait(void (*check)(enum fi_wait_obj))
{
	check(FI_WAIT_FD);
	check(FI_WAIT_MUTEX_COND);
	check(FI_WAIT_YIELD);
}

/* The same and FI_WAIT_UNSPEC (lfverbs' choice). */
static inline void unit_each_wait_unspec(void (*check)(enum fi_wait_obj))
{
	check(FI_WAIT_UNSPEC);
	unit_each_wait(check);
}

#endif /* UNIT_WAIT_H */
