/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM connections (lfv_rdm_conn.c): the handshake over the control QPs,
 * probes, timers and restarts. The tables that find a connection are
 * lfv_rdm_conn_table.h's.
 */
#ifndef LFV_RDM_CONN_H
#define LFV_RDM_CONN_H

#include "lfv_rdm_ep.h"

struct lfv_rdm_conn *lfv_rdm_conn_get(struct lfv_rdm_ep *ep, fi_addr_t addr,
				      int *err);
void lfv_rdm_ctrl_arrived(struct lfv_rdm_ep *ep, const struct lfv_rdm_ctrl *m);
void lfv_rdm_timers(struct lfv_rdm_ep *ep);
void lfv_rdm_conn_fail(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c, int err);
void lfv_rdm_on_rtu(struct lfv_rdm_ep *ep, uint32_t qpn);
void lfv_rdm_ping_done(struct lfv_rdm_ep *ep, const struct ibv_wc *wc);
void lfv_rdm_rtu_failed(struct lfv_rdm_ep *ep, const struct ibv_wc *wc);
int lfv_rdm_send_ctl(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
		     const struct lfv_rdm_hdr *h);

#endif /* LFV_RDM_CONN_H */
