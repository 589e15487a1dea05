/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Address vectors for DGRAM (UD) endpoints. An address is a struct
 * lfv_ud_name (FI_ADDR_IB_UD: GID, QP number, Q_Key); inserting it creates
 * the UD address handle once, and senders find {ah, qpn, qkey} from the
 * fi_addr_t without a lock. Receivers map a completion's source GID + QP
 * number back to an fi_addr_t for FI_SOURCE.
 */
#ifndef LFV_AV_H
#define LFV_AV_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/fi_domain.h>

#include "lfv_prov.h"

/* What a UD send needs. */
struct lfv_av_dest {
	struct ibv_ah *ah;
	uint32_t qpn;
	uint32_t qkey;
};

struct lfv_av;

int lfv_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);

/* The fast path: the destination of addr, or NULL when addr is not a live
 * entry. Lock-free; entries never move once inserted. */
const struct lfv_av_dest *lfv_av_dest(struct lfv_av *av, fi_addr_t addr);

/* FI_SOURCE: the fi_addr_t of the entry with this GID and QP number, or
 * FI_ADDR_NOTAVAIL. */
fi_addr_t lfv_av_reverse(struct lfv_av *av, const union ibv_gid *gid,
			 uint32_t qpn);

/* The AV behind an fid_av of lfverbs (for fi_ep_bind). NULL if the fid is
 * not an lfverbs AV. */
struct lfv_av *lfv_av_from_fid(struct fid *fid);

/* Endpoints bound to the AV keep it open (fi_close -> -FI_EBUSY). */
void lfv_av_hold(struct lfv_av *av);
void lfv_av_release(struct lfv_av *av);

#endif /* LFV_AV_H */
