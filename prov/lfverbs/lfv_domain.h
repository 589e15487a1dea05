/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_domain (lfv_domain.c): the domain object and the calls it takes.
 */
#ifndef LFV_DOMAIN_H
#define LFV_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>


int lfv_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int lfv_domain_open2(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain, uint64_t flags, void *context);

#endif /* LFV_DOMAIN_H */
