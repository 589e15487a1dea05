/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM endpoints as the domain opens them (lfv_rdm.c). Their objects are in
 * lfv_rdm_ep.h, their protocol in lfv_rdm_proto.h.
 */
#ifndef LFV_RDM_H
#define LFV_RDM_H

#include <rdma/fi_endpoint.h>

struct lfv_domain;

/* fi_endpoint of an FI_EP_RDM endpoint. */
int lfv_rdm_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context);
/* fi_srx_context on an RDM domain: a matching SRX of lfverbs
 * (lfv_peer_srx), or with FI_PEER an import of the owner's. */
int lfv_rdm_srx_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
			struct fid_ep **rx_ep, void *context);

struct lfv_rdm_ep;
/* Closing, quiesced: what requests still hold (registrations, copies,
 * rendezvous reads), given back without a completion. */
void lfv_rdm_drop_all(struct lfv_rdm_ep *ep);

#endif /* LFV_RDM_H */
