/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every UD queue pair of lfverbs shares: DGRAM endpoints and RDM
 * control QPs.
 */
#include <string.h>

#include "lfv_errno.h"
#include "lfv_ud.h"

int lfv_ud_qp_ready(struct ibv_qp *qp, uint8_t port_num)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = port_num,
		.qkey = LFV_UD_QKEY,
	};
	int ret;

	ret = lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY));
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTR;
	ret = lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE));
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return lfv_verbs_ret(ibv_modify_qp(qp, &attr, IBV_QP_STATE |
					   IBV_QP_SQ_PSN));
}
