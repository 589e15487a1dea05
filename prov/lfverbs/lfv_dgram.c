/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What DGRAM endpoints do their own way (their struct lfv_ep_kind's
 * hooks, lfv_msg_ep.c): names and queue pairs, where sends go, the GRH in
 * front of every receive, and the sender a receive names.
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_dgram.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_msg_comp.h"
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

/* ---- posting ----------------------------------------------------------------- */

int lfv_dgram_tx_dest(struct lfv_ep *ep, fi_addr_t addr, size_t len,
		      struct ibv_send_wr *wr)
{
	const struct lfv_av_dest *dest;

	if (len > ep->base.info->ep_attr->max_msg_size)
		return -FI_EINVAL;
	dest = lfv_av_dest(ep->base.av, addr);
	if (!dest)
		return -FI_EINVAL;
	wr->wr.ud.ah = dest->ah;
	wr->wr.ud.remote_qpn = dest->qpn;
	wr->wr.ud.remote_qkey = dest->qkey;
	return 0;
}

void lfv_dgram_rx_hdr(struct lfv_ep *ep, const struct lfv_op *op,
		      struct ibv_recv_wr *wr)
{
	size_t slot = (size_t)(op - ep->rx.ops);

	wr->sg_list[0] = (struct ibv_sge){
		.addr = (uintptr_t)(ep->grh + slot * LFV_GRH_SIZE),
		.length = LFV_GRH_SIZE,
		.lkey = ep->grh_mr->lkey,
	};
	/* Kept for fi_cancel, which posts the others again. */
	memcpy(&ep->ud_sge[slot * ep->ud_sge_stride], wr->sg_list,
	       (size_t)wr->num_sge * sizeof(*wr->sg_list));
	wr->sg_list = &ep->ud_sge[slot * ep->ud_sge_stride];
	ep->ud_nsge[slot] = (uint8_t)wr->num_sge;
}

/* ---- completions ----------------------------------------------------------- */

/*
 * The sender of a UD receive, from the GRH in front of the data: with a
 * RoCE v2 IPv4 GID the 40 bytes hold 20 zero bytes and the IPv4 header,
 * otherwise they are the GRH (or IPv6 header) with the source GID at 8.
 */
static fi_addr_t lfv_dgram_source(const struct lfv_queue *q,
				  const struct lfv_op *op,
				  const struct ibv_wc *wc)
{
	static const uint8_t zero[20];
	const uint8_t *grh = lfv_queue_ep(q)->grh +
			     (size_t)(op - q->ops) * LFV_GRH_SIZE;
	union ibv_gid gid;

	if (!lfv_queue_ep(q)->base.av || !(wc->wc_flags & IBV_WC_GRH))
		return FI_ADDR_NOTAVAIL;
	if (!memcmp(grh, zero, sizeof(zero))) {
		memset(&gid, 0, sizeof(gid));
		gid.raw[10] = gid.raw[11] = 0xff;
		memcpy(&gid.raw[12], grh + 20 + 12, 4); /* IPv4 source */
	} else {
		memcpy(gid.raw, grh + 8, sizeof(gid.raw));
	}
	return lfv_av_reverse(lfv_queue_ep(q)->base.av, &gid, wc->src_qp);
}

/* A DGRAM queue's translation: receives land behind their GRH, and name
 * their source. */
void lfv_dgram_translate(struct lfv_vcq *vcq, const struct ibv_wc *wc,
			 struct lfv_vcq_sink *sink)
{
	lfv_ep_translate(vcq, wc, sink, LFV_GRH_SIZE, lfv_dgram_source);
}

/* A UD marker's address: the endpoint itself (the request is flushed,
 * never sent). NULL without an AV: then no send was ever posted. */
struct ibv_ah *lfv_dgram_marker_ah(struct lfv_ep *ep, struct ibv_send_wr *wr)
{
	struct lfv_ud_name self;
	struct ibv_ah *ah;
	int err;

	if (!ep->base.av)
		return NULL;
	lfv_dgram_name(ep, &self);
	ah = lfv_av_create_ah(ep->base.av, &self, &err);
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = self.qpn;
	wr->wr.ud.remote_qkey = self.qkey;
	return ah;
}
