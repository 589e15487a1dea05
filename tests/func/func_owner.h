/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An lfverbs CQ as the owner of peer CQs (fi_peer(3)), shared by
 * func_peer_cq (Debian's shm as the peer) and func_peer_prov (the lfvpeer
 * test provider), and their peer providers' endpoints. Include after
 * <cmocka.h>.
 */
#ifndef FUNC_OWNER_H
#define FUNC_OWNER_H

#include "lfv_fi_compat.h"	/* the peer interfaces of this libfabric */

#include "func_pair.h"

struct owner {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_peer_cq *peer;
};

/* The fid_peer_cq a CQ exports for its peers (FI_CLASS_PEER_CQ). */
static inline struct fid_peer_cq *export_cq(struct fid_cq *cq)
{
	struct fid *fid = NULL;

	assert_int_equal(fi_export_fid(&cq->fid, 0, &fid, NULL), 0);
	assert_non_null(fid);
	assert_int_equal(fid->fclass, FI_CLASS_PEER_CQ);
	return container_of(fid, struct fid_peer_cq, fid);
}

/* An lfverbs domain and CQ (format DATA, waiting on wait) exported as a
 * peer CQ owner. */
static inline void owner_open(struct owner *o, enum fi_wait_obj wait)
{
	struct fi_info *hints = func_hints(FI_EP_MSG);
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_DATA,
				   .wait_obj = wait };

	func_domain_open(hints, &o->info, &o->fabric, &o->domain);
	assert_int_equal(fi_cq_open(o->domain, &attr, &o->cq, NULL), 0);
	o->peer = export_cq(o->cq);
}

static inline void owner_close(struct owner *o)
{
	test_close(o->cq);
	func_domain_close(o->info, o->fabric, o->domain);
}

/* An enabled endpoint of a peer provider's domain bound to cq (both
 * directions) and av; its name in name (*len: its size in, the name's
 * length out). */
static inline struct fid_ep *peer_ep_open(struct fid_domain *domain,
					  struct fi_info *info,
					  struct fid_cq *cq, struct fid_av *av,
					  void *name, size_t *len)
{
	struct fid_ep *ep;

	assert_int_equal(fi_endpoint(domain, info, &ep, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(ep, &av->fid, 0), 0);
	assert_int_equal(fi_enable(ep), 0);
	assert_int_equal(fi_getname(&ep->fid, name, len), 0);
	return ep;
}

#endif /* FUNC_OWNER_H */
