/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Provider registration: the only exported symbol is fi_prov_ini. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include <rdma/providers/fi_prov.h>

#include "lfv_device.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "lfv_log.h"
#include "lfv_memmon.h"
#include "lfv_param.h"
#include "lfv_prov.h"

static void lfv_cleanup(void)
{
	lfv_devices_release();
	lfv_memmon_fini();
}

struct fi_provider lfv_prov = {
	.version = FI_VERSION(LFV_VERSION_MAJOR, LFV_VERSION_MINOR),
	.fi_version = LFV_FI_VERSION,
	.name = LFV_PROV_NAME,
	.getinfo = lfv_getinfo,
	.fabric = lfv_fabric_open,
	.cleanup = lfv_cleanup,
};

/*
 * libfabric's core keeps its own flags about each provider in
 * fi_provider.context (its struct ofi_prov_context, the same layout from
 * 1.13 on). One of them keeps the utility providers (ofi_rxm, ofi_rxd,
 * ofi_mrail) from stacking themselves over a core provider unless the
 * application names the stack; the core sets it for the providers that
 * have their own RDM endpoints (efa, psm3, ucx, cxi, shm). lfverbs is one
 * of those: without the flag, "lfverbs;ofi_rxm" is listed before lfverbs'
 * own RDM answers, and an application that picks by provider name (Open
 * MPI's mtl ofi does) takes the stack. The core only ever sets fields
 * here, after fi_prov_ini returns.
 */
struct lfv_core_prov_ctx {
	int type;			/* the core's enum ofi_prov_type */
	bool disable_logging;
	bool disable_layering;
};

_Static_assert(sizeof(struct lfv_core_prov_ctx) <=
	       sizeof(((struct fi_provider *)0)->context),
	       "the core's flags live in fi_provider.context");

static void lfv_refuse_layering(struct fi_provider *prov)
{
	struct lfv_core_prov_ctx ctx;

	memcpy(&ctx, &prov->context, sizeof(ctx));
	ctx.disable_layering = true;
	memcpy(&prov->context, &ctx, sizeof(ctx));
}

FI_EXT_INI
{
	lfv_log_init(&lfv_prov);
	lfv_params_init(&lfv_prov);
	lfv_refuse_layering(&lfv_prov);
	/* A plugin built on one system may run in another's core: the peer
	 * interfaces are used only in the layout built for. */
	lfv_peer_check_core(fi_version());
	return &lfv_prov;
}
