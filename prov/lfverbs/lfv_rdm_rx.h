/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM receives (lfv_rdm_rx.c): arrivals, the SRX's peer ops, rendezvous
 * reads.
 */
#ifndef LFV_RDM_RX_H
#define LFV_RDM_RX_H

#include "lfv_fi_compat.h"

#include "lfv_rdm_ep.h"

extern struct fi_ops_srx_peer lfv_rdm_srx_peer_ops;
void lfv_rdm_arrived(struct lfv_rdm_ep *ep, const struct ibv_wc *wc,
		     const uint8_t *buf);
void lfv_rdm_read_chunk_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			     bool ok);
void lfv_rdm_post_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
void lfv_rdm_flush_rx(struct lfv_rdm_ep *ep);
void lfv_rdm_post_ctrl_rx(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
bool lfv_rdm_peek_data(const struct fi_peer_rx_entry *e, uint64_t *data);
struct lfv_av;
/* After an fi_av_insert into av (its lock released): the RDM endpoints
 * bound to it name the senders of the messages they queued from peers
 * the AV did not know, which keep their arrival order (fi_peer(3)
 * foreach_unspec_addr), so directed receives from the new fi_addr_t
 * find them. Takes domain->vcq_lock. */
void lfv_rdm_av_inserted(struct lfv_av *av);

void lfv_rdm_aborted_drain(struct lfv_rdm_ep *ep);
/* Rendezvous by write (lfv_rdm_proto.h), the receiving side. */
void lfv_rdm_cts_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, bool ok);
struct lfv_rdm_rreq *lfv_rdm_first_awaiting(struct lfv_rdm_ep *ep);
/* Segmented (SAR) receives: a connection going down (failed, replaced)
 * hands its unfinished one to ep->sar_aborted (lfv_rdm_sar_abandon,
 * lfv_rdm_conn_table.h), which lfv_rdm_sar_drain completes in error
 * (report), or frees, outside ep->lock; lfv_rdm_sar_close frees them all
 * at close (quiesced, before the SRX closes: they hold its entries). */
void lfv_rdm_sar_drain(struct lfv_rdm_ep *ep, bool report);
void lfv_rdm_sar_close(struct lfv_rdm_ep *ep);
void lfv_rdm_rreq_drop(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
void lfv_rdm_rreq_free(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);

#endif /* LFV_RDM_RX_H */
