/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The load-time check of the running core against the headers lfverbs was
 * built with (lfv_fi_compat.h). */
#include <stdbool.h>
#include <stdint.h>

#include "lfv_fi_compat.h"
#include "lfv_log.h"

/* Written once by fi_prov_ini (lfv_peer_check_core), before the core hands
 * out any object of ours; only read after. */
static bool lfv_peer_refused;

bool lfv_peer_check_core(uint32_t core_version)
{
	enum lfv_peer_layout running = lfv_peer_layout_of(core_version);

	lfv_peer_refused = running != LFV_PEER_LAYOUT;
	if (lfv_peer_refused)
		LFV_WARN(FI_LOG_CORE,
			 "built with libfabric %u.%u headers, running in a %u.%u "
			 "core whose peer interfaces (fi_peer(3)) have another "
			 "layout: FI_PEER refused\n",
			 FI_MAJOR_VERSION, FI_MINOR_VERSION,
			 FI_MAJOR(core_version), FI_MINOR(core_version));
	return !lfv_peer_refused;
}

bool lfv_peer_allowed(void)
{
	return !lfv_peer_refused;
}
