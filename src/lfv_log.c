/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include "lfv_log.h"

/* Before the transport loads (unit tests of the core alone): fi_log only
 * reads the name and the core's flags in context, all zero here. */
static const struct fi_provider lfv_log_placeholder = { .name = "lfverbs" };

const struct fi_provider *lfv_log_prov = &lfv_log_placeholder;

void lfv_log_init(const struct fi_provider *prov)
{
	lfv_log_prov = prov;
}
