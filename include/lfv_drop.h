/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Input from the network that failed a check is dropped, never followed:
 * each drop is counted by reason and warned about at a falling rate, so a
 * hostile or buggy peer cannot flood the log. */
#ifndef LFV_DROP_H
#define LFV_DROP_H

#include "fi_lfverbs.h"
#include "lfv_atomic.h"

_Static_assert(FI_LFVERBS_DROP_REASONS <=
	       sizeof(((struct fi_lfverbs_drops *)0)->count) /
	       sizeof(uint64_t), "too many drop reasons");

struct lfv_drops {
	lfv_atomic64_t count[FI_LFVERBS_DROP_REASONS];
};

/* Counts a drop; warns on the 1st, 2nd, 4th, 8th... of each reason.
 * `what` says what was dropped and why, for the log. Any thread. */
void lfv_drop(struct lfv_drops *drops, unsigned reason, const char *what);

/* Counts a drop by the error a decoder (lfv_wire.h) returned:
 * -FI_EMSGSIZE truncated, -FI_ENOPROTOOPT another wire version, -FI_EACCES
 * forged, -FI_ENOSPC over a limit, anything else malformed. */
void lfv_drop_err(struct lfv_drops *drops, int err, const char *what);

/* A snapshot for fi_control(FI_LFVERBS_GET_DROPS). Any thread. */
void lfv_drops_read(const struct lfv_drops *drops,
		    struct fi_lfverbs_drops *out);

#endif /* LFV_DROP_H */
