/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An RDM endpoint with the objects it needs (fabric, domain, table AV, CQ),
 * for the test programs that talk to a peer through the plain libfabric API
 * without cmocka (tests/hostile/victim.c, tests/func/func_lnx.c).
 * Header-only; include after libfabric's headers.
 */
#ifndef TEST_RDM_H
#define TEST_RDM_H

#include <string.h>

struct test_rdm {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

/* Opens fabric, domain, AV, CQ (of format fmt) and endpoint for info
 * (which r keeps and frees), binds and enables. 0, or the first error:
 * then test_rdm_close undoes what was opened. */
static inline int test_rdm_open(struct test_rdm *r, struct fi_info *info,
				enum fi_cq_format fmt)
{
	struct fi_cq_attr cq_attr = { .format = fmt };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	memset(r, 0, sizeof(*r));
	r->info = info;
	ret = fi_fabric(info->fabric_attr, &r->fabric, NULL);
	if (!ret)
		ret = fi_domain(r->fabric, info, &r->domain, NULL);
	if (!ret)
		ret = fi_av_open(r->domain, &av_attr, &r->av, NULL);
	if (!ret)
		ret = fi_cq_open(r->domain, &cq_attr, &r->cq, NULL);
	if (!ret)
		ret = fi_endpoint(r->domain, info, &r->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(r->ep);
	return ret;
}

/* Closes what is open, children first (every object begins with its
 * struct fid); mr: a registration on the domain, or NULL. */
static inline void test_rdm_close(struct test_rdm *r, struct fid_mr *mr)
{
	void *objs[] = { r->ep, mr, r->av, r->cq, r->domain, r->fabric };
	size_t i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		if (objs[i])
			fi_close((struct fid *)objs[i]);
	fi_freeinfo(r->info);
	memset(r, 0, sizeof(*r));
}

#endif /* TEST_RDM_H */
