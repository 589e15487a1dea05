/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_drop.h"
#include "lfv_log.h"

void lfv_drop(struct lfv_drops *drops, unsigned reason, const char *what)
{
	uint64_t n;

	/* Relaxed: a statistic; nothing is published through it. */
	n = lfv_fetch_add64(&drops->count[reason], 1) + 1;
	if (!(n & (n - 1)))
		LFV_WARN(FI_LOG_EP_DATA, "dropped from the network: %s "
			 "(%llu so far)\n", what, (unsigned long long)n);
}

void lfv_drop_err(struct lfv_drops *drops, int err, const char *what)
{
	unsigned reason;

	switch (err) {
	case -FI_EMSGSIZE:
		reason = FI_LFVERBS_DROP_TRUNCATED;
		break;
	case -FI_ENOPROTOOPT:
		reason = FI_LFVERBS_DROP_VERSION;
		break;
	case -FI_EACCES:
		reason = FI_LFVERBS_DROP_FORGED;
		break;
	case -FI_ENOSPC:
		reason = FI_LFVERBS_DROP_LIMIT;
		break;
	default:
		reason = FI_LFVERBS_DROP_MALFORMED;
		break;
	}
	lfv_drop(drops, reason, what);
}

void lfv_drops_read(const struct lfv_drops *drops,
		    struct fi_lfverbs_drops *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < FI_LFVERBS_DROP_REASONS; i++)
		out->count[i] = lfv_load_relaxed64(&drops->count[i]);
}
