/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM, what reading its CQs does: the completion handler every work
 * request of the endpoint ends in (sends, receives, handshake datagrams,
 * reads, RMA, probes), the progress each CQ read runs for the endpoints
 * on it (timers, aborted reads), and the hooks that make a CQ read do so.
 * Apart from lfv_rdm.c, which opens, enables and closes the endpoint and
 * only installs these.
 */
#include "config.h"

#include "lfv_ep_base.h"
#include "lfv_log.h"
#include "lfv_queue.h"
#include "lfv_rdm_conn.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_progress.h"
#include "lfv_rdm_rma.h"
#include "lfv_rdm_rx.h"
#include "lfv_rdm_shm.h"
#include "lfv_rdm_tx.h"
#include "lfv_valgrind.h"
#include "lfv_vcq.h"
#include "lfv_wait.h"
#include "lfv_wire.h"

/* ---- the completion handler ---------------------------------------------- */

/* A receive that completed in error while the endpoint runs: a message
 * longer than the buffer (a peer that ignores the eager size), or its QP
 * failing. The buffer goes back to the SRQ: lost, the SRQ would run dry
 * and every peer's sends would wait for receivers for ever. */
static void lfv_rdm_rx_failed(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			      const struct ibv_wc *wc)
{
	/* Said with its status: the QP is in error now, and what it had
	 * posted flushes. Under heavy loss at MTU 1024, soft-RoCE's
	 * responder was seen to fail a receive of a message that fit (a
	 * local QP operation error), and the sends of both sides then
	 * flushed (README, across the link). */
	LFV_WARN(FI_LOG_EP_DATA, "RDM %x: a receive on qp %x failed: %s\n",
		 ep->name.qpn, wc->qp_num, ibv_wc_status_str(wc->status));
	/* Hardware reports a message too long for the buffer as a length
	 * error, soft-RoCE as a local QP operation error. */
	if (wc->status == IBV_WC_LOC_LEN_ERR ||
	    wc->status == IBV_WC_LOC_QP_OP_ERR)
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_TOO_LONG,
			 "an RDM message longer than a receive buffer");
	else
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_MALFORMED,
			 "an RDM receive that failed");
	lfv_rdm_post_rx(ep, r);
}

/* A datagram on the control QP: checked, then handled under ep->lock. */
static void lfv_rdm_ctrl_datagram(struct lfv_rdm_ep *ep,
				  const struct lfv_rdm_ctrl_buf *cb,
				  const struct ibv_wc *wc)
{
	struct lfv_rdm_ctrl m;
	uint8_t src_gid[16];
	int ret = -FI_EMSGSIZE;

	if (wc->byte_len >= LFV_GRH_SIZE)
		ret = lfv_grh_source(cb->grh, src_gid);
	if (!ret)
		ret = lfv_rdm_ctrl_parse(&cb->msg, wc->byte_len - LFV_GRH_SIZE,
					 src_gid, wc->src_qp, &m);
	if (ret) {
		lfv_drop_err(&ep->base.domain->fabric->drops, ret,
			     "an RDM handshake datagram");
		return;
	}
	/* Each side's receive buffers hold the eager size it announces: a
	 * peer with a larger one would send messages ours cannot hold. */
	if (m.eager != ep->eager) {
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_VERSION,
			 "an RDM handshake from a peer with another eager "
			 "size (FI_LFVERBS_RDM_EAGER must be the same)");
		return;
	}
	lfv_spin_lock(&ep->lock);
	lfv_rdm_ctrl_arrived(ep, &m);
	lfv_spin_unlock(&ep->lock);
}

/* Says which work request failed, and how (not those flushed behind it).
 * Out of line: inlined, the test cost every completion 4 instructions. */
static __attribute__((noinline, cold)) void
lfv_rdm_wr_failed(const struct lfv_rdm_ep *ep, const struct lfv_rdm_req *r,
		  const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		LFV_INFO(FI_LOG_CQ, "RDM %x: work request of kind %d failed on "
			 "qp %x: %s\n", ep->name.qpn, (int)r->kind,
			 wc->qp_num, ibv_wc_status_str(wc->status));
}

/* Every completion of the endpoint's requests (its wq's handler). Caller
 * holds the vcq->lock of the verbs CQ it came from (lfv_vcq.c); the cases
 * take ep->lock themselves, and call the SRX and write CQs without it. */
void lfv_rdm_completion(struct lfv_queue *q, struct lfv_op *op,
			const struct ibv_wc *wc)
{
	struct lfv_rdm_ep *ep = lfv_container_of(q, struct lfv_rdm_ep, wq);
	struct lfv_rdm_req *r = lfv_container_of(op, struct lfv_rdm_req, op);
	struct lfv_rdm_ctrl_buf *cb;
	bool ok = wc->status == IBV_WC_SUCCESS;

	if (!LFV_RDM_LIKELY(ok))
		lfv_rdm_wr_failed(ep, r, wc);
	switch (r->kind) {
	case LFV_RDM_K_TX:
		lfv_rdm_tx_completion(ep, r, wc);
		return;
	case LFV_RDM_K_SEG:
		lfv_rdm_seg_completion(ep, r, wc);
		return;
	case LFV_RDM_K_RX:
		if (!ep->rx_live)
			return; /* flushed at close: the SRQ goes with it */
		if (!ok) {
			lfv_rdm_rx_failed(ep, r, wc);
			return;
		}
		if (wc->opcode != IBV_WC_RECV) {
			/* An RDMA write with immediate data: lfverbs' RDM
			 * peers never send one, and the buffer holds only
			 * what was there before (byte_len is the write's). */
			lfv_drop(&ep->base.domain->fabric->drops,
				 FI_LFVERBS_DROP_MALFORMED,
				 "an RDMA write with immediate data into an "
				 "RDM receive queue");
			lfv_rdm_post_rx(ep, r);
			return;
		}
		lfv_mem_written(r->buf, wc->byte_len);
		lfv_rdm_arrived(ep, wc, r->buf);
		lfv_rdm_post_rx(ep, r);
		return;
	case LFV_RDM_K_CTRL_RX:
		if (!ep->rx_live)
			return; /* flushed at close */
		if (!ok) {
			/* A datagram longer than a control buffer, say. */
			lfv_drop(&ep->base.domain->fabric->drops,
				 FI_LFVERBS_DROP_MALFORMED,
				 "an RDM handshake datagram that failed");
			lfv_rdm_post_ctrl_rx(ep, r);
			return;
		}
		cb = (struct lfv_rdm_ctrl_buf *)r->buf;
		lfv_mem_written(cb, wc->byte_len);
		lfv_rdm_ctrl_datagram(ep, cb, wc);
		lfv_rdm_post_ctrl_rx(ep, r);
		return;
	case LFV_RDM_K_CTRL_TX:
		lfv_spin_lock(&ep->lock);
		lfv_list_insert_head(&ep->ctl_free, &r->node);
		lfv_spin_unlock(&ep->lock);
		return;
	case LFV_RDM_K_READ:
		/* The sender's device refused to give what its RTS named:
		 * memory outside its registrations, or a wrong key. The
		 * receive fails (lfv_rdm_read_done), never with data. */
		if (wc->status == IBV_WC_REM_ACCESS_ERR ||
		    wc->status == IBV_WC_REM_INV_REQ_ERR)
			lfv_drop(&ep->base.domain->fabric->drops,
				 FI_LFVERBS_DROP_MALFORMED,
				 "an RDM rendezvous whose buffer its sender's "
				 "device refused to read");
		lfv_rdm_read_chunk_done(ep, r, ok);
		return;
	case LFV_RDM_K_FIN:
		lfv_rdm_sq_done(ep, r->conn, ok);
		lfv_rdm_rreq_free(ep, r);
		return;
	case LFV_RDM_K_CTS:
		lfv_rdm_cts_done(ep, r, ok);
		return;
	case LFV_RDM_K_RMA:
		lfv_rdm_rma_completion(ep, r, wc);
		return;
	case LFV_RDM_K_PUSH:	/* a rendezvous send's writes */
		lfv_rdm_push_completion(ep, r, wc);
		return;
	case LFV_RDM_K_PING:
		lfv_rdm_ping_done(ep, wc);
		return;
	case LFV_RDM_K_RTU:
		lfv_rdm_rtu_failed(ep, wc);
		return;
	}
}

/* What a CQ read's progress has to do besides polling, once its gate
 * (lfv_rdm_ep_due) said there is some: the timers, then the reports of
 * what a failed connection aborted (rendezvous reads, unfinished
 * segmented messages), outside ep->lock: the reports free SRX entries.
 * Rare, so out of line: inlined, it went into every CQ read's prologue.
 * Called with ep->lock held; returns with it released. */
static __attribute__((noinline, cold)) void
lfv_rdm_ep_progress_due(struct lfv_rdm_ep *ep)
{
	bool drain;

	if (ep->handshakes || lfv_rdm_waits_probe(ep) || ep->reap_due ||
	    ep->live_look)
		lfv_rdm_timers(ep);
	/* After the timers: a handshake they gave up on aborts reads. A
	 * report queued after this is drained by the next call. */
	drain = ep->aborts_due;
	ep->aborts_due = false;
	lfv_spin_unlock(&ep->lock);
	if (drain) {
		lfv_rdm_aborted_drain(ep);
		lfv_rdm_sar_drain(ep, true);
	}
}

/* What one CQ read does for one of its RDM endpoints besides polling:
 * asks for the liveness look once in LFV_RDM_LIVE_CALLS calls, and looks
 * whether anything waits on the timers or is to be reported. All of it
 * read under ep->lock (issue 15: these fields change under it on other
 * threads, a send's handshake or a completion on the endpoint's other
 * CQ). */
static void lfv_rdm_ep_progress(struct lfv_rdm_ep *ep)
{
	lfv_spin_lock(&ep->lock);
	/* A count down: one decrement and its flags, the common case. The
	 * look's clock is read here, so that the timers run only when a look
	 * is due. */
	if (!--ep->live_left) {
		ep->live_left = LFV_RDM_LIVE_CALLS;
		if (ep->nconns && lfv_rdm_live_due(ep, lfv_now_coarse_ns()))
			ep->live_look = true;
	}
	if (lfv_rdm_ep_due(ep))
		lfv_rdm_ep_progress_due(ep);
	else
		lfv_spin_unlock(&ep->lock);
	lfv_rdm_shm_progress(ep);
}

/* The domain's progress (counter reads, fi_poll; set by fi_domain): its
 * verbs CQs, then for each RDM endpoint what a CQ read also runs, its
 * timers and its shm peer, so that an application that waits on counters
 * only (fi_rdm_cntr_pingpong) gets what shm delivers. Takes
 * domain->vcq_lock (when locked), then each ep->lock (lfv_lock_order.h). */
void lfv_rdm_domain_progress(void *arg)
{
	struct lfv_domain *domain = arg;
	/* The progress thread runs this too (its tick, lfv_auto.c), beside
	 * an application that opens and closes endpoints unlocked. */
	bool lock = domain->locked || domain->progress_auto;
	struct lfv_list *item;

	lfv_domain_progress(domain);
	if (lock)
		pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->rdm_eps)
		lfv_rdm_ep_progress(lfv_container_of(item, struct lfv_rdm_ep,
						     dnode));
	if (lock)
		pthread_mutex_unlock(&domain->vcq_lock);
}

/* Whether the endpoint waits for a control datagram: a handshake's, or
 * the answer to a liveness PING (ep->lock's). */
static bool lfv_rdm_connecting(struct lfv_rdm_ep *ep)
{
	bool connecting;

	lfv_spin_lock(&ep->lock);
	connecting = ep->handshakes || ep->live_asking;
	lfv_spin_unlock(&ep->lock);
	return connecting;
}

/* The CQs' progress hook (arg: the CQ's verbs CQ). Reading a CQ of an RDM
 * endpoint drives the endpoint: send completions give back the buffers and
 * the per-connection room that later sends (and those queued behind them)
 * need, even when the application only reads its receive CQ (fi_inject
 * makes no completion to read); handshakes that wait for an answer are
 * resent. Under FI_THREAD_COMPLETION another thread may own the endpoint's
 * other CQ: only this one is polled then (sends poll their own when out of
 * buffers), except while the endpoint sets up a connection: a handshake's
 * REQ, REP and RTU arrive on the receive side, and a sender that reads
 * only its transmit CQ (2.x's fi_multi_ep, ft_finalize) would never
 * connect. The endpoint takes no lock under that model either
 * (ep->lock), so its two sides are the application's to serialise
 * already. Takes domain->vcq_lock (when locked), then each endpoint's
 * vcq->lock and ep->lock, one at a time (lfv_lock_order.h). */
static void lfv_rdm_cq_progress(void *arg)
{
	struct lfv_vcq *vcq = arg;
	struct lfv_domain *domain = vcq->domain;
	struct lfv_list *item;
	struct lfv_rdm_ep *ep;
	bool both;

	/* Without locks the application serialises opening and closing
	 * endpoints with reading their CQs. */
	if (domain->locked)
		pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->rdm_eps) {
		ep = lfv_container_of(item, struct lfv_rdm_ep, dnode);
		if (ep->tx_vcq->first != vcq && ep->rx_vcq->first != vcq)
			continue;
		if (ep->rx_vcq == ep->tx_vcq) {
			lfv_vcq_progress(ep->tx_vcq);
		} else {
			both = domain->poll_all_cqs || lfv_rdm_connecting(ep);
			if (both || ep->tx_vcq->first == vcq)
				lfv_vcq_progress(ep->tx_vcq);
			if (both || ep->rx_vcq->first == vcq)
				lfv_vcq_progress(ep->rx_vcq);
		}
		lfv_rdm_ep_progress(ep);
	}
	if (domain->locked)
		pthread_mutex_unlock(&domain->vcq_lock);
}

/* ---- the CQs' hooks ----------------------------------------------------- */

/*
 * Whether something of ep's in flight finishes on the verbs CQ that is not
 * the reader's (ep->lock): a handshake's REQ, REP and RTU and a rendezvous
 * sender's FIN arrive on the receive side, a rendezvous receiver's reads
 * complete on the transmit side; shm's messages only a read of shm's CQ
 * finds. Eager sends and receives, RMA and atomics complete where their
 * reader waits.
 */
static bool lfv_rdm_waits_elsewhere(const struct lfv_rdm_ep *ep)
{
	return ep->shm || ep->handshakes || ep->rndv_out ||
	       !lfv_list_empty(&ep->reading);
}

/*
 * How long a reader blocked on the CQ of vcq may sleep. An endpoint with
 * separate transmit and receive CQs whose work in flight finishes on the
 * other one (lfv_rdm_waits_elsewhere), which the reader's wait does not
 * watch, needs short slices; else only the timers (handshake resends,
 * probes, reaping) need a run now and then. An idle endpoint's reader thus
 * wakes 20 times a second, not 1000 (issue 18: 4 ranks on 2 cores).
 * Takes domain->vcq_lock, then each ep->lock (lfv_lock_order.h).
 */
static int lfv_rdm_cq_wait_ms(void *arg)
{
	struct lfv_vcq *vcq = arg;
	struct lfv_domain *domain = vcq->domain;
	struct lfv_list *item;
	struct lfv_rdm_ep *ep;
	bool elsewhere = false;

	pthread_mutex_lock(&domain->vcq_lock);
	lfv_list_foreach(item, &domain->rdm_eps) {
		ep = lfv_container_of(item, struct lfv_rdm_ep, dnode);
		if (ep->tx_vcq->first != vcq && ep->rx_vcq->first != vcq)
			continue;
		lfv_spin_lock(&ep->lock);
		/* A sleeper polls once a slice: each one looks. */
		ep->live_look = true;
		if (ep->tx_vcq->first != ep->rx_vcq->first || ep->shm)
			elsewhere = lfv_rdm_waits_elsewhere(ep);
		lfv_spin_unlock(&ep->lock);
		if (elsewhere)
			break;
	}
	pthread_mutex_unlock(&domain->vcq_lock);
	return elsewhere ? LFV_RDM_WAIT_SPLIT_MS : LFV_RDM_WAIT_TIMERS_MS;
}

/* Turns the completion handlers on or off (rx_live, tx_live): each side
 * under the lock its handlers run under, taken one after the other. */
void lfv_rdm_set_live(struct lfv_rdm_ep *ep, bool live)
{
	lfv_spin_lock(&ep->rx_vcq->lock);
	ep->rx_live = live;
	lfv_spin_unlock(&ep->rx_vcq->lock);
	lfv_spin_lock(&ep->tx_vcq->lock);
	ep->tx_live = live;
	lfv_spin_unlock(&ep->tx_vcq->lock);
}

/* CQ reads drive the endpoint (lfv_rdm_cq_progress). The hook's vcq is
 * the CQ's first verbs CQ: the endpoints of every verbs CQ chained behind
 * it match it by their vcq's first. */
void lfv_rdm_hook_cq(struct lfv_cq *cq, struct lfv_vcq *vcq)
{
	if (cq && !cq->progress.fn)
		lfv_cq_set_progress_polling(cq, (struct lfv_progress_hook){
			.fn = lfv_rdm_cq_progress, .arg = vcq->first,
			.wait_ms = lfv_rdm_cq_wait_ms });
}
