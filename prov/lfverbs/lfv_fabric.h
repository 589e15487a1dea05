/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_fabric (lfv_fabric.c).
 */
#ifndef LFV_FABRIC_H
#define LFV_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>


int lfv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);

#endif /* LFV_FABRIC_H */
