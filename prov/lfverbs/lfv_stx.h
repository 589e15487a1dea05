/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Shared transmit contexts: logical (lfv_stx.c).
 */
#ifndef LFV_STX_H
#define LFV_STX_H

#include <rdma/fi_endpoint.h>

#include "lfv_atomic.h"
#include "lfv_prov.h"

struct lfv_stx {
	struct fid_stx stx_fid;
	struct lfv_domain *domain;
	struct fi_tx_attr attr;
	lfv_atomic32_t ref;		/* 1 + bound endpoints */
};

int lfv_stx_context(struct fid_domain *domain, struct fi_tx_attr *attr,
		    struct fid_stx **stx, void *context);

#endif /* LFV_STX_H */
