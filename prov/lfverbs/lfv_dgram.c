/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Names and queue pairs of DGRAM endpoints.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_dgram.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_stubs.h"
#include "lfv_ud.h"

/* ---- DGRAM endpoint names -------------------------------------------------- */

void lfv_dgram_name(const struct lfv_ep *ep, struct lfv_ud_name *name)
{
	memset(name, 0, sizeof(*name));
	memcpy(name->gid, ep->base.domain->dev->gid.raw, sizeof(name->gid));
	name->qpn = ep->qp->qp_num;
	name->qkey = LFV_UD_QKEY;
	name->lid = ep->base.domain->dev->port_attr.lid;
}

static int lfv_dgram_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfv_ep *ep = lfv_ep_real(fid);
	struct lfv_ud_name name;

	if (!ep->qp)
		return -FI_EOPBADSTATE; /* the QP number comes with fi_enable */
	lfv_dgram_name(ep, &name);
	return lfv_copy_name(&name, sizeof(name), addr, addrlen);
}

static int lfv_dgram_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS; /* a UD address is the QP's number */
}

struct fi_ops_cm lfv_dgram_cm_ops =
	LFV_NO_CONN_CM_OPS(lfv_dgram_setname, lfv_dgram_getname);

int lfv_ep_create_ud_qp(struct lfv_ep *ep)
{
	size_t grh_len = (size_t)(ep->rx.mask + 1) * LFV_GRH_SIZE;
	struct ibv_qp_init_attr attr;
	int ret;

	ep->grh = calloc(1, grh_len);
	if (!ep->grh)
		return -FI_ENOMEM;
	ep->ud_sge_stride = (uint32_t)ep->base.info->rx_attr->iov_limit + 1;
	ep->ud_sge = calloc((size_t)(ep->rx.mask + 1) * ep->ud_sge_stride,
			    sizeof(*ep->ud_sge));
	ep->ud_nsge = calloc((size_t)ep->rx.mask + 1, 1);
	if (!ep->ud_sge || !ep->ud_nsge) {
		ret = -FI_ENOMEM;
		goto free_grh;
	}
	ep->grh_mr = ibv_reg_mr(ep->base.domain->pd, ep->grh, grh_len,
				IBV_ACCESS_LOCAL_WRITE);
	if (!ep->grh_mr) {
		ret = lfv_verbs_errno();
		goto free_grh;
	}
	lfv_ep_qp_caps(ep, IBV_QPT_UD, &attr);
	ep->qp = ibv_create_qp(ep->base.domain->pd, &attr);
	if (!ep->qp) {
		ret = lfv_verbs_errno();
		goto dereg;
	}
	ret = lfv_ud_qp_ready(ep->qp, ep->base.domain->dev->port_num);
	if (ret)
		goto destroy_qp;
	return 0;

destroy_qp:
	ibv_destroy_qp(ep->qp);
	ep->qp = NULL;
dereg:
	ibv_dereg_mr(ep->grh_mr);
	ep->grh_mr = NULL;
free_grh:
	free(ep->ud_nsge);
	free(ep->ud_sge);
	free(ep->grh);
	ep->ud_nsge = NULL;
	ep->ud_sge = NULL;
	ep->grh = NULL;
	return ret;
}
