/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* What lfverbs offers an application beyond libfabric's own headers
 * (fi_lfverbs(7)). Stable: fields are only ever added at the end. */
#ifndef FI_LFVERBS_H
#define FI_LFVERBS_H

#include <stdint.h>

/* fi_control(&fabric->fid, FI_LFVERBS_GET_DROPS, struct fi_lfverbs_drops *):
 * how many messages from the network this fabric dropped because they
 * failed a check, by reason (FI_LFVERBS_DROP_*). */
#define FI_LFVERBS_GET_DROPS 0x4c460001

enum {
	FI_LFVERBS_DROP_CM_DATA,	/* connection data with a bad length */
	FI_LFVERBS_DROP_TRUNCATED,	/* shorter than its header says */
	FI_LFVERBS_DROP_VERSION,	/* another wire version or eager size */
	FI_LFVERBS_DROP_MALFORMED,	/* an unknown type or a bad field */
	FI_LFVERBS_DROP_FORGED,		/* names a sender it did not come from */
	FI_LFVERBS_DROP_LIMIT,		/* over a limit (FI_LFVERBS_*_MAX) */
	FI_LFVERBS_DROP_TOO_LONG,	/* longer than the receiver agreed to */
	FI_LFVERBS_DROP_REASONS		/* the number of reasons so far */
};

struct fi_lfverbs_drops {
	uint64_t count[32];		/* by FI_LFVERBS_DROP_*; rest 0 */
};

/* A reason's short name ("cm_data", "truncated", ...); NULL for a number
 * that is no reason (yet). */
static inline const char *fi_lfverbs_drop_str(unsigned int reason)
{
	static const char *const names[FI_LFVERBS_DROP_REASONS] = {
		[FI_LFVERBS_DROP_CM_DATA] = "cm_data",
		[FI_LFVERBS_DROP_TRUNCATED] = "truncated",
		[FI_LFVERBS_DROP_VERSION] = "version",
		[FI_LFVERBS_DROP_MALFORMED] = "malformed",
		[FI_LFVERBS_DROP_FORGED] = "forged",
		[FI_LFVERBS_DROP_LIMIT] = "limit",
		[FI_LFVERBS_DROP_TOO_LONG] = "too_long",
	};

	return reason < FI_LFVERBS_DROP_REASONS ? names[reason] : NULL;
}

#endif /* FI_LFVERBS_H */
