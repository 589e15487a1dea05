/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The CQ's peer roles (src/lfv_cq_peer.c, fi_peer(3)): a peer CQ's reads;
 * the fid_peer_cq every other CQ exports. */
#ifndef LFV_CQ_PEER_H
#define LFV_CQ_PEER_H

#include <rdma/fi_eq.h>

struct lfv_cq;
struct fid_peer_cq;
struct fi_fid_export;

/* A peer CQ's reads: fi_cq_read(cq, NULL, 0) drives progress, the rest
 * -FI_ENOSYS (its entries are in the owner's CQ). */
extern struct fi_ops_cq lfv_cq_peer_ops;

/* The owner named by an FI_PEER open's context (struct
 * fi_peer_cq_context), checked. */
int lfv_cq_peer_owner(void *context, struct fid_peer_cq **owner);

/* The fid_peer_cq every CQ exports (its fields; set once at open), and
 * fi_export_fid handing it out (FI_EXPORT_FID). */
void lfv_cq_init_export(struct lfv_cq *cq);
int lfv_cq_export(struct lfv_cq *cq, struct fi_fid_export *exp);

#endif /* LFV_CQ_PEER_H */
