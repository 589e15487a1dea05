/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

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

void lfv_drops_read(const struct lfv_drops *drops,
		    struct fi_lfverbs_drops *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < FI_LFVERBS_DROP_REASONS; i++)
		out->count[i] = lfv_load_relaxed64(&drops->count[i]);
}
