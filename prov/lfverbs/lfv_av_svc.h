/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Service names (lfv_svc.h) in an AV's inserts (lfv_av_svc.c): resolved
 * before the AV's lock is taken, and built for fi_av_insertsvc and
 * fi_av_insertsym, which insert through fi_av_insert like the application.
 */
#ifndef LFV_AV_SVC_H
#define LFV_AV_SVC_H

#include <stdbool.h>
#include <stddef.h>
#include <rdma/fi_domain.h>

#include "lfv_av.h"

/* One inserted address that was a service name, and what it resolved to. */
struct lfv_av_resolved {
	bool service;
	int err;			/* of the resolution */
	struct lfv_ud_name qp;		/* the QP name, when err is 0 */
};

/* Resolves the service names among count addresses, before the AV's lock is
 * taken (each may wait for the network): *res is NULL when there are none,
 * else an array to free. 0 or -FI_ENOMEM. */
int lfv_av_resolve(struct lfv_av *av, const void *addr, size_t count,
		   struct lfv_av_resolved **res);
/* Address i of an insert as lfv_av_insert_one takes it: the caller's, or
 * for a service name a copy in buf with its QP name (NULL, *err set, when
 * the resolution failed). */
const void *lfv_av_resolved_addr(const struct lfv_av *av, const void *addr,
				 size_t i, const struct lfv_av_resolved *res,
				 union lfv_av_addr_buf *buf, int *err);
int lfv_av_insertsvc(struct fid_av *av, const char *node, const char *service,
		     fi_addr_t *fi_addr, uint64_t flags, void *context);
int lfv_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
		     const char *service, size_t svccnt, fi_addr_t *fi_addr,
		     uint64_t flags, void *context);

#endif /* LFV_AV_SVC_H */
