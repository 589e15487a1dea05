/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * shm as the RDM endpoint's intra-node peer (FI_LFVERBS_SHM, fi_peer(3)):
 * lfverbs owns the completion queues, counters and matching; libfabric's
 * shm provider carries the messages between processes of one host.
 *
 * The AV (lfv_av.c) owns shm's fabric, domain and AV: an insert of a
 * same-host address also inserts that peer's shm name into shm's AV, with
 * FI_AV_USER_ID = our fi_addr_t, so shm reports our addresses. The RDM
 * endpoint (lfv_rdm.c) owns shm's endpoint, its CQs and counters (FI_PEER
 * on ours) and its SRX (imported from ours, so both paths match in one
 * order). Sends of fi_msg and fi_tagged to a same-host peer go through shm;
 * RMA, atomics and other hosts through verbs, as without it.
 *
 * The AV's part is lfv_rdm_shm_av.h. Everything here is optional: when
 * shm cannot be had (parameter off, a 1.x core, FI_PROVIDER without shm,
 * a core of another peer layout, any open failing) the AV and endpoint
 * work as before, logged once.
 */
#ifndef LFV_RDM_SHM_H
#define LFV_RDM_SHM_H

#include <stdbool.h>
#include <rdma/fabric.h>

struct lfv_rdm_ep;
struct lfv_rdm_send;

/* Endpoint side (lfv_rdm.c): opened by enable once the endpoint has its
 * name and SRX; a failure is logged and leaves the endpoint on verbs only
 * (ep->shm NULL). Closed before the SRX. */
void lfv_rdm_shm_ep_open(struct lfv_rdm_ep *ep);
void lfv_rdm_shm_ep_close(struct lfv_rdm_ep *ep);
/* Drives shm (a CQ read of the endpoint's). */
void lfv_rdm_shm_progress(struct lfv_rdm_ep *ep);

/* A send to a same-host peer: true and its result in *ret when it went to
 * shm; false when it is verbs' (ep->shm is set). */
bool lfv_rdm_shm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		      ssize_t *ret);

#endif /* LFV_RDM_SHM_H */
