/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * shm as the RDM endpoint's intra-node peer, the AV's part
 * (lfv_rdm_shm_av.c; the whole design in lfv_rdm_shm.h). Each hook is a
 * no-op when the AV has no shm.
 */
#ifndef LFV_RDM_SHM_AV_H
#define LFV_RDM_SHM_AV_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "lfv_prov.h"

struct lfv_av;
struct lfv_av_entry;

/* "lfv_" + 32 hex digits of the GID + "_" + 8 of the QP number + "_" + the
 * uid: what both sides derive from an lfverbs address (shm_open names). */
#define LFV_SHM_NAME_MAX 64

/* What the AV holds for shm. */
struct lfv_rdm_shm_av {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	uint8_t gid[16];		/* our device's: same GID, same host */
};

/* Called by lfv_av.c / lfv_av_ops.c. */
void lfv_rdm_shm_av_open(struct lfv_av *av);
void lfv_rdm_shm_av_close(struct lfv_av *av);
/* After e was filled and given fi_addr (under av->lock). */
void lfv_rdm_shm_av_insert(struct lfv_av *av, struct lfv_av_entry *e,
			   fi_addr_t fi_addr);
/* When e is removed (under av->lock). */
void lfv_rdm_shm_av_remove(struct lfv_av *av, struct lfv_av_entry *e);

/* The shm endpoint name of the lfverbs endpoint named n: what both sides
 * derive (buf of LFV_SHM_NAME_MAX bytes). */
void lfv_rdm_shm_name(const struct lfv_ud_name *n, char *buf, size_t len);

#endif /* LFV_RDM_SHM_AV_H */
