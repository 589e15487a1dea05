/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Passive endpoints and connection requests of MSG endpoints (lfv_pep.c).
 */
#ifndef LFV_PEP_H
#define LFV_PEP_H

#include <stdbool.h>

#include <rdma/rdma_cma.h>
#include <rdma/fi_endpoint.h>

#include "lfv_cm.h"

/* A connection request not yet accepted or rejected (fi_info->handle). */
struct lfv_connreq {
	struct fid fid;			/* FI_CLASS_CONNREQ */
	struct lfv_cm_ctx cm;
	struct rdma_cm_id *id;
	struct lfv_fabric *fabric;
};

struct lfv_pep {
	struct fid_pep pep_fid;
	struct lfv_cm_ctx cm;
	struct lfv_fabric *fabric;
	struct fi_info *info;
	struct rdma_cm_id *id;
	struct lfv_eq *eq;
	int backlog;
	bool bound;
	bool listening;
};


int lfv_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **pep, void *context);

struct lfv_ep;
/* An active endpoint takes over a passive endpoint's (unused) id and with
 * it the address the passive endpoint was given (fi_endpoint with
 * info->handle naming the passive endpoint). */
int lfv_pep_give_id(struct lfv_pep *pep, struct lfv_ep *ep);

#endif /* LFV_PEP_H */
