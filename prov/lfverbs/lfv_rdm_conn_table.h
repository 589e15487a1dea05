/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM connections, the tables (lfv_rdm_conn_table.c): lookups by address,
 * peer name and QP number, the AV's view of a connection's address, and
 * retiring and freeing connections. The caller holds ep->lock, but for
 * lfv_rdm_conns_free.
 */
#ifndef LFV_RDM_CONN_TABLE_H
#define LFV_RDM_CONN_TABLE_H

#include "lfv_rdm_ep.h"

struct lfv_rdm_conn *lfv_rdm_conn_by_addr(struct lfv_rdm_ep *ep,
					  fi_addr_t addr);
struct lfv_rdm_conn *lfv_rdm_conn_seen(struct lfv_rdm_ep *ep, fi_addr_t addr,
				       uint64_t seen);
struct lfv_rdm_conn *lfv_rdm_conn_by_qpn(struct lfv_rdm_ep *ep, uint32_t qpn);
struct lfv_rdm_conn *lfv_rdm_conn_by_name(struct lfv_rdm_ep *ep,
					  const struct lfv_ud_name *n);
bool lfv_rdm_same_name(const struct lfv_ud_name *a,
		       const struct lfv_ud_name *b);

void lfv_rdm_conn_link(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_link_qpn(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_conn_learn_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     fi_addr_t addr);
void lfv_rdm_conn_lookup_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
bool lfv_rdm_conn_addr_live(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
bool lfv_rdm_conn_forget_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);

void lfv_rdm_conn_retire(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
/* A connection going down (failed, replaced) hands the segmented message
 * it was receiving, if any, to ep->sar_aborted, for lfv_rdm_sar_drain
 * (lfv_rdm_rx.h) to fail outside the lock (ep->lock held). */
void lfv_rdm_sar_abandon(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_conn_set_failed(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_conns_reap(struct lfv_rdm_ep *ep, int64_t now);
/* Closing, quiesced: every connection and its QP freed. */
void lfv_rdm_conns_free(struct lfv_rdm_ep *ep);

#endif /* LFV_RDM_CONN_TABLE_H */
