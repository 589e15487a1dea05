/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What MSG and DGRAM endpoints ask of their queue pairs (lfv_ep.h).
 */
#include <string.h>

#include "lfv_ep.h"
#include "lfv_msg_srq.h"

void lfv_ep_qp_caps(const struct lfv_ep *ep, enum ibv_qp_type type,
		    struct ibv_qp_init_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_context = (void *)ep;
	attr->send_cq = ep->tx.vcq->ibv_cq;
	attr->recv_cq = ep->rx.vcq->ibv_cq;
	attr->cap.max_send_wr = ep->tx.size;
	attr->cap.max_recv_wr = ep->rx.size;
	attr->cap.max_send_sge = (uint32_t)ep->base.info->tx_attr->iov_limit;
	/* A UD receive's first SGE takes the GRH. */
	attr->cap.max_recv_sge = (uint32_t)ep->base.info->rx_attr->iov_limit +
				 ep->kind->rx_hdr_sges;
	attr->cap.max_inline_data = (uint32_t)ep->inject_size;
	if (ep->srq) {
		attr->srq = ep->srq->srq;
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	attr->sq_sig_all = 0;
	attr->qp_type = type;
}
