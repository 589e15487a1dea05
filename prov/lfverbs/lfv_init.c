/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Provider registration: the only exported symbol is fi_prov_ini. */
#include "config.h"

#include <rdma/providers/fi_prov.h>

#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_prov.h"

static void lfv_cleanup(void)
{
	lfv_devices_release();
}

struct fi_provider lfv_prov = {
	.version = FI_VERSION(LFV_VERSION_MAJOR, LFV_VERSION_MINOR),
	.fi_version = LFV_FI_VERSION,
	.name = LFV_PROV_NAME,
	.getinfo = lfv_getinfo,
	.fabric = lfv_fabric_open,
	.cleanup = lfv_cleanup,
};

FI_EXT_INI
{
	lfv_params_init();
	return &lfv_prov;
}
