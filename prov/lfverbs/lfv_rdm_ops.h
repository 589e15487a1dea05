/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The fi_msg and fi_tagged tables of RDM endpoints (lfv_rdm_ops.c).
 */
#ifndef LFV_RDM_OPS_H
#define LFV_RDM_OPS_H

#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

extern struct fi_ops_msg lfv_rdm_msg_ops;
extern struct fi_ops_tagged lfv_rdm_tagged_ops;

#endif /* LFV_RDM_OPS_H */
