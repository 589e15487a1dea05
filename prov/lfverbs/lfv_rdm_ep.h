/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RDM endpoint's objects (lfv_rdm.c, lfv_rdm_progress.c, lfv_rdm_send.c,
 * lfv_rdm_tx.c, lfv_rdm_rx.c, lfv_rdm_rma.c, lfv_rdm_ops.c, lfv_rdm_conn.c,
 * lfv_rdm_conn_table.c); the protocol is described in lfv_rdm_proto.h.
 *
 * Requests: every work request's wr_id is a struct lfv_rdm_req whose op.q
 * is the endpoint's dispatch queue (wq), so the verbs CQ layer hands every
 * completion to lfv_rdm_completion. Transmit requests come from a free list
 * of tx_size, each with a registered buffer of header + eager payload;
 * receive requests are the SRQ's bounce buffers; control requests carry
 * the handshake datagrams.
 *
 * Locking: ep->lock (optional, as lfv_spin) guards the connection tables,
 * the free lists and posting. Completions run under the verbs CQ's poll
 * lock and take ep->lock around those; calls into the SRX and writes to
 * the CQs happen outside ep->lock. Nothing polls a CQ with ep->lock held.
 */
#ifndef LFV_RDM_EP_H
#define LFV_RDM_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

#include <rdma/fi_endpoint.h>
#include "lfv_fi_compat.h"

#include "lfv_atomic.h"
#include "lfv_ep_base.h"
#include "lfv_list.h"
#include "lfv_lock_order.h"
#include "lfv_mr.h"
#include "lfv_queue.h"
#include "lfv_rdm_proto.h"
#include "lfv_rma.h"
#include "lfv_ud.h"

#define LFV_RDM_BUCKETS 1024
#define LFV_RDM_CTRL_SLOTS 32		/* each way */
#define LFV_RDM_SQ_DEPTH 128		/* per connection */
#define LFV_RDM_RETRY_NS (50 * 1000 * 1000LL)
#define LFV_RDM_MAX_TRIES 100		/* 5 s without an answer */
/* Sleep slices of a reader blocked on an RDM CQ (lfv_rdm_cq_wait_ms): the
 * resend period, and 1 ms while work in flight finishes on the other CQ. */
#define LFV_RDM_WAIT_TIMERS_MS 50
#define LFV_RDM_WAIT_SPLIT_MS 1
/* A connection with a rendezvous send waiting for its FIN and nothing
 * else to send is probed this often: a dead peer fails it (the QP's
 * retries run out) instead of leaving the send waiting forever. */
#define LFV_RDM_PING_NS (1000 * 1000 * 1000LL)
/* Liveness (lfv_rdm_proto.h): a look at the connections with work on their
 * QPs this often; one quiet (no completion) for QUIET is asked whether its
 * peer holds it, once a look; quiet for FI_LFVERBS_RDM_LIVE_TIMEOUT
 * seconds without an answer, it fails.
 * Progress asks for a look once in LFV_RDM_LIVE_CALLS calls (counted down
 * by ep->live_left), and at each sleep slice of a blocked reader. Not 64:
 * a reader that polls with usleep(200) between reads made 64 calls in
 * about 4 s in the two-node bed, and its dead peer took 14 s to notice
 * instead of 10. */
#define LFV_RDM_LIVE_LOOK_NS (1000 * 1000 * 1000LL)
#define LFV_RDM_LIVE_QUIET_NS (1000 * 1000 * 1000LL)
#define LFV_RDM_LIVE_CALLS 8
/* How often the endpoint looks at the probes' and reaping's timers while a
 * rendezvous send or a reap waits, by the coarse clock. */
#define LFV_RDM_TICK_NS (10 * 1000 * 1000LL)
/* A connection that is down and that nothing names any more has its QP
 * put in error, and is freed this long after: the completions its QP
 * left in the CQs are polled by then, before a new QP may reuse its
 * number. */
#define LFV_RDM_REAP_NS (1000 * 1000 * 1000LL)

enum lfv_rdm_kind {
	LFV_RDM_K_CTRL_RX = 1,
	LFV_RDM_K_CTRL_TX,
	LFV_RDM_K_TX,
	LFV_RDM_K_RX,
	LFV_RDM_K_READ,			/* rendezvous: reading the payload */
	LFV_RDM_K_FIN,			/* rendezvous: telling the sender */
	LFV_RDM_K_RMA,			/* fi_rma / fi_atomic */
	LFV_RDM_K_PING,			/* a probe of an idle connection */
	LFV_RDM_K_RTU,			/* a requester's RTU: unsignaled, so
					 * only its failure or flush comes */
	LFV_RDM_K_SEG,			/* a segment of a SAR send but its
					 * last: no completion, no count */
	LFV_RDM_K_CTS,			/* rendezvous by write: the receiver
					 * tells the sender where */
	LFV_RDM_K_PUSH,			/* rendezvous by write: the sender's
					 * writes and WDONE, posted and
					 * completed as K_RMA's */
};

/* Local memory of a transfer that may be posted in chunks (an SGE's
 * length has 32 bits; a segment may be longer). */
struct lfv_rdm_seg {
	uint64_t addr;
	size_t len;
	uint32_t lkey;
};

static inline size_t lfv_rdm_iov_len(const struct iovec *iov, size_t count)
{
	size_t i, len = 0;

	for (i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

/* A rendezvous receive in progress (a K_READ/K_FIN request, malloc'd). */
struct lfv_rdm_read {
	struct fi_peer_rx_entry *entry;	/* the receive, until reported */
	uint64_t cookie;		/* the sender's request */
	uint64_t tag, cq_data;
	size_t len, got;		/* message, bytes read */
	fi_addr_t src;
	uint8_t op, flags;
	struct lfv_rdm_hdr fin;		/* sent inline */
	/* The receive's memory the payload goes to (got bytes in all),
	 * read in chunks of at most the port's max_msg_sz. */
	struct lfv_rdm_seg seg[LFV_RDM_MAX_IOV];
	int nseg;
	size_t off;			/* bytes whose read is posted */
	uint32_t inflight;		/* chunks (and the write behind the
					 * last) posted, not completed */
	bool vouched;			/* that write is posted */
	bool failed;
	/* By write (lfv_rdm_proto.h): the CTS sent (counted in inflight
	 * until it completes), then WDONE awaited; seg[0] is the one buffer,
	 * under wkey. */
	bool by_write;
	bool done_seen;			/* WDONE came */
	uint32_t wkey;
	uint64_t rcookie;
	struct {
		struct lfv_rdm_hdr hdr;
		struct lfv_rdm_cts cts;
	} ctsmsg;			/* sent inline */
	uint64_t raddr;
	uint32_t rkey;
	struct lfv_reg regs[LFV_RDM_MAX_IOV];	/* ours, to put back */
	struct lfv_list held;		/* ep->reading, until freed */
};


struct lfv_rdm_conn;

/* An fi_rma / fi_atomic on a connection (K_RMA, a transmit request). The
 * local memory is the application's registration, or ours, or the
 * request's buffer behind the header (small writes are copied there;
 * small reads and atomic results land there and are copied out). */
struct lfv_rdm_rma {
	struct ibv_send_wr wr;		/* opcode and remote side */
	struct lfv_rdm_seg seg[LFV_RDM_MAX_IOV];
	int nseg;
	size_t len, off;		/* bytes in all, bytes posted */
	struct lfv_reg regs[LFV_RDM_MAX_IOV];	/* ours, to put back */
	struct iovec out[LFV_RDM_MAX_IOV];	/* copy a bounced read here */
	size_t nout;
	uint32_t wrs;			/* work requests in all */
	uint32_t posted;		/* work requests posted */
	uint32_t cqes;			/* completions still to come */
	bool notify;			/* a remote CQ data message follows */
	/* A read or an atomic with no message behind it: a zero-byte RDMA
	 * write follows, whose success vouches for theirs (see
	 * lfv_rdm_rma_post_wr). */
	bool vouch;
	bool read;			/* FI_READ counter, else FI_WRITE */
	int err;
	/* Bytes of note sent inline behind the last work request: an
	 * FI_RMA_EVENT key's EVENT message, a rendezvous push's WDONE
	 * (inline, so from here rather than the registered buffer); 0: a
	 * WDATA header in the request's buffer, if notify. */
	uint32_t note_len;
	struct {
		struct lfv_rdm_hdr hdr;
		struct lfv_rdm_event ev;
	} note;
};

struct lfv_rdm_req {
	struct lfv_op op;		/* first: the wr_id; op.q = &ep->wq */
	enum lfv_rdm_kind kind;
	struct lfv_list node;		/* free list, or a conn's pending */
	struct lfv_rdm_conn *conn;
	uint8_t *buf;			/* registered (ep->mr) */
	uint32_t len;			/* bytes on the wire */
	uint64_t cflags;		/* completion flags; 0: none wanted */
	void *context;
	size_t paylen;			/* payload bytes (the completion's) */
	/* Rendezvous sends: the RTS and the FIN both have to be seen before
	 * the request completes and goes back. */
	uint8_t rndv_wait;
	bool rts_done;			/* its RTS completed */
	bool fin_seen;			/* its FIN (or CTS) came: another is
					 * refused */
	bool push;			/* its CTS came: it writes (K_PUSH)
					 * once its RTS has completed */
	uint32_t gen;			/* in the FIN cookie: a late FIN of an
					 * earlier use finds another gen */
	int rndv_err;
	uint32_t rndv_rounds;		/* probe rounds without news */
	bool asked;			/* ASK sent, no HELD yet */
	struct lfv_reg own_reg;		/* the payload, if we registered it */
	uint32_t src_lkey;		/* the payload's, for the writes a CTS
					 * asks for (the RTS has its address) */
	void *own_copy;			/* a gathered multi-iov payload */
	struct lfv_rdm_read *read;	/* K_READ / K_FIN */
	bool rndv;			/* the RTS of a rendezvous send */
	struct lfv_rdm_rma rma;		/* K_RMA */
	/* The send of an eager message or RTS (K_TX), built on the first
	 * use (wr.wr_id is 0 until then): a send sets only sge.length and
	 * the inline flag. */
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

/* Both halves of a rendezvous receive, one allocation. */
struct lfv_rdm_rreq {
	struct lfv_rdm_req req;
	struct lfv_rdm_read rd;
};

/* A control buffer: receives land behind the GRH. */
struct lfv_rdm_ctrl_buf {
	uint8_t grh[LFV_GRH_SIZE];
	struct lfv_rdm_ctrl msg;
};

enum lfv_rdm_state {
	LFV_RDM_IDLE,
	LFV_RDM_REQ_SENT,		/* requester: REQ out, no REP yet */
	LFV_RDM_ACCEPTED,		/* acceptor: REP out, no RTU yet */
	LFV_RDM_CONNECTED,
	LFV_RDM_FAILED,
};

struct lfv_rdm_conn {
	struct lfv_list node;		/* ep->conns */
	struct lfv_rdm_conn *next_addr, *next_qpn, *next_name;
	bool inbound;			/* made by the peer's request */
	fi_addr_t addr;			/* FI_ADDR_NOTAVAIL: not in the AV */
	uint64_t av_seen;		/* 1 + the AV's removal count when addr
					 * was last seen live; 0: never */
	struct lfv_ud_name name;	/* the peer's control QP */
	struct ibv_ah *ah;		/* for control messages */
	struct ibv_ah *own_ah;		/* when the AV has none for it */
	struct ibv_qp *qp;
	enum lfv_rdm_state state;
	bool retired;			/* replaced; kept until close */
	uint32_t my_psn, peer_qpn, peer_psn;
	uint8_t peer_mtu;		/* its port's (REQ, REP): enum ibv_mtu */
	uint64_t peer_inc;
	int64_t retry_at;
	int tries;
	struct lfv_list pending;	/* sends waiting to be posted */
	uint32_t posted;		/* sends on qp not yet completed */
	uint32_t sq_done;		/* of them, completed (wraps) */
	uint32_t reads;			/* of them, rendezvous reads */
	/* Liveness: sq_done at the last look that found it moved (or
	 * nothing posted), when, and the nonce of our PING (0: none). */
	uint32_t live_done;
	int64_t live_since;
	uint32_t live_nonce;
	int down_err;			/* what its flushed requests report
					 * (0: the verbs status's error) */
	uint32_t pinged;		/* ep->ping_round it was last probed */
	uint32_t rndv_out;		/* our rendezvous sends waiting on it */
	size_t unexp_n, unexp_bytes;	/* its messages we hold unexpected */
	uint32_t rreqs;			/* rendezvous receives naming it */
	int64_t reap_at;		/* down and idle: its QP in error since,
					 * freed after LFV_RDM_REAP_NS; 0: not */
	/* The segmented message it is receiving (ep->lock; the receive
	 * handler takes it off while it works on it), or NULL. */
	struct lfv_rdm_sar_rx *sar_rx;
};

/* A segmented (SAR) message being received on a connection
 * (lfv_rdm_proto.h). */
struct lfv_rdm_sar_rx {
	struct lfv_list node;		/* ep->sar_aborted: its connection
					 * went down before its last segment */
	struct lfv_rdm_unexp *m;	/* the message (op as EAGER_*, len its
					 * total); gathered in m->data when
					 * no receive took it */
	struct fi_peer_rx_entry *e;	/* the receive that took it, or NULL */
	bool drop;			/* neither: past the limits */
	size_t got;			/* bytes arrived */
	size_t put;			/* of them, in e's buffer */
};

/* A handshake the endpoint's timers watch (ep->handshakes counts them). */
static inline bool lfv_rdm_in_handshake(const struct lfv_rdm_conn *c)
{
	return c->state == LFV_RDM_REQ_SENT || c->state == LFV_RDM_ACCEPTED;
}

/* Whether a connection no longer serves its peer: failed, or replaced. */
static inline bool lfv_rdm_conn_is_down(const struct lfv_rdm_conn *c)
{
	return c->retired || c->state == LFV_RDM_FAILED;
}

/* A message that came before its receive: a copy (the bounce buffer goes
 * back to the SRQ at once). For a rendezvous, the RTS (no data). */
struct lfv_rdm_unexp {
	struct lfv_rdm_ep *ep;		/* who queued it */
	fi_addr_t src;
	struct lfv_rdm_conn *conn;
	uint8_t op, flags;
	uint64_t tag, cq_data;
	size_t len;
	struct lfv_rdm_rts rts;
	size_t cost;			/* counted against the limits */
	struct lfv_list held;		/* an RTS: ep->held_rts */
	uint8_t data[];
};

/* Receive buffers returned to the SRQ per ibv_post_srq_recv, at most. */
#define LFV_RDM_REPOST_MAX 8

struct lfv_rdm_ep {
	struct lfv_ep_base base;	/* fid, bindings, op flags */
	struct lfv_list dnode;		/* domain->rdm_eps */
	struct lfv_spin lock;
	struct lfv_queue wq;		/* completion dispatch only */
	struct lfv_vcq *tx_vcq, *rx_vcq;
	int tx_reserve, rx_reserve;
	struct ibv_qp *ctl_qp;		/* UD */
	struct ibv_srq *srq;
	/* Receive buffers waiting to go back to the SRQ as one chain (rx
	 * completion handler, under rx_vcq's lock): see lfv_rdm_post_rx. */
	struct ibv_recv_wr repost_wr[LFV_RDM_REPOST_MAX];
	struct ibv_sge repost_sge[LFV_RDM_REPOST_MAX];
	uint32_t nrepost, repost_batch;
	struct ibv_mr *mr;		/* all of mem */
	uint8_t *mem;
	size_t mem_len;
	struct lfv_rdm_req *reqs;	/* tx, then rx, then control */
	size_t ntx, nrx;
	struct lfv_list tx_free, ctl_free;
	/* The send fast path (lfv_rdm_send.c): payloads below tx_small
	 * (0 until the first send found the endpoint enabled), and the
	 * connection of the last send, to tx_last_addr, good while the
	 * AV's removal count is tx_last_seen - 1. */
	size_t tx_small;
	struct lfv_rdm_conn *tx_last;
	fi_addr_t tx_last_addr;
	uint64_t tx_last_seen;
	uint32_t max_inline;
	size_t max_rdma;		/* bytes of one RDMA read */
	size_t eager;			/* payload bytes per buffer */
	size_t buf_size;		/* header + eager */
	struct lfv_ud_name name;
	struct lfv_svc_listener *svc;	/* opened at a service (lfv_svc.h) */
	uint64_t incarnation;
	struct lfv_rdm_conn *by_addr[LFV_RDM_BUCKETS];
	struct lfv_rdm_conn *by_qpn[LFV_RDM_BUCKETS];
	struct lfv_rdm_conn *by_name[LFV_RDM_BUCKETS];
	struct lfv_list conns;
	uint32_t nconns;		/* on conns */
	uint32_t accepted;		/* of them made by a peer's request */
	int64_t reap_next;		/* not before: the next look */
	struct lfv_list aborted;	/* rendezvous reads of failed
					 * connections, to report */
	struct lfv_list sar_aborted;	/* segmented receives of connections
					 * that went down, to report */
	size_t sar_max;			/* SAR: largest payload; 0: none */
	/* What a CQ read's progress looks for besides polling (ep->lock),
	 * side by side so that its test is two loads (lfv_rdm_ep_due). */
	union {
		struct {
			uint32_t handshakes;	/* connections in REQ_SENT,
						 * ACCEPTED */
			uint32_t rndv_out;	/* rendezvous sends not
						 * finished */
			uint32_t cts_out;	/* receives by write not
						 * finished */
			bool reap_due;		/* some may be down: see the
						 * timers */
			bool live_look;		/* for a liveness look */
			bool aborts_due;	/* on aborted or sar_aborted
						 * (lfv_rdm_abort_later) */
			uint8_t due_pad;	/* never written: zero */
		};
		uint64_t due_words[2];
	};
	/* What the receive side holds (ep->lock): unexpected messages
	 * (copies queued in the SRX), and which RTS it may still answer. */
	size_t unexp_n, unexp_bytes;
	/* Of them, queued from a peer the AV did not know: an AV insert
	 * looks for their senders only while some are (lfv_rdm_av_inserted).
	 * Atomic: named under the SRX's lock, which excludes ep->lock. */
	lfv_atomic64_t unexp_unknown;
	struct lfv_list held_rts;	/* unexpected RTS copies */
	struct lfv_list reading;	/* rendezvous receive requests */
	uint64_t rcookie_next;		/* names the next one's CTS */
	int64_t ping_at;		/* next probe of FIN-waiting conns */
	uint32_t ping_round;
	int64_t tick_at;		/* next look at probes and reaping */
	int64_t live_at;		/* next liveness look, not before */
	uint32_t live_left;		/* progress calls before it asks */
	uint32_t live_asking;		/* connections with a PING out */
	struct lfv_rdm_req ping;	/* K_PING: the probes' wr_id */
	struct lfv_rdm_req rtu;		/* K_RTU: the RTUs' wr_id */
	struct fid_ep *srx;		/* where receives match (NULL: an
					 * owner's, imported) */
	bool own_srx;
	/* FI_OPT_MIN_MULTI_RECV set before enable opens our own SRX (then
	 * the SRX holds it). */
	size_t min_multi_recv;
	struct lfv_rdm_isrx *imported;	/* bound FI_PEER SRX, if any */
	struct fid_peer_srx *peer_srx;	/* our handle on it */
	bool enabled;
	/* Whether the completion handlers act on what arrives (receives,
	 * handshakes: rx) and finish rendezvous reads (tx): set by enable,
	 * cleared by close, each under the vcq->lock of its side, which the
	 * handlers hold (lfv_rdm_set_live: a progress thread, or a reader of
	 * a CQ shared with another endpoint, runs them on other threads). */
	bool rx_live, tx_live;
	struct lfv_rdm_shm_ep *shm;	/* same-host peers' path, or NULL */
};

/* The words cover the gate's fields exactly, and its last byte is a field
 * (due_pad, zero), not padding: padding's value is unspecified after a
 * store to a field. */
_Static_assert(offsetof(struct lfv_rdm_ep, due_pad) + 1 ==
	       offsetof(struct lfv_rdm_ep, due_words) +
	       sizeof(((struct lfv_rdm_ep *)0)->due_words),
	       "lfv_rdm_ep's progress gate: the words cover the fields");

/* Whether a CQ read's progress has something to do besides polling:
 * handshakes, probes, reaping or a liveness look for the timers, aborted
 * work to report (ep->lock). */
static inline bool lfv_rdm_ep_due(const struct lfv_rdm_ep *ep)
{
	return (ep->due_words[0] | ep->due_words[1]) != 0;
}

/* Queues on list (ep->aborted, ep->sar_aborted) what a failed connection
 * aborted, for the next progress to report outside ep->lock: the reports
 * free SRX entries. Caller holds ep->lock. */
static inline void lfv_rdm_abort_later(struct lfv_rdm_ep *ep,
				       struct lfv_list *list,
				       struct lfv_list *node)
{
	lfv_spin_assert_held(&ep->lock);
	lfv_list_insert_tail(list, node);
	ep->aborts_due = true;
}

static inline struct lfv_rdm_ep *lfv_rdm_of(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_rdm_ep, base.ep_fid.fid);
}

/* Whether a send, RMA or atomic wants a completion on the transmit CQ:
 * never for an inject (no_report), and under FI_SELECTIVE_COMPLETION only
 * with FI_COMPLETION in its flags. Every transmit path decides here. */
static inline bool lfv_rdm_tx_wanted(const struct lfv_rdm_ep *ep,
				     bool no_report, uint64_t flags)
{
	return !no_report && (!ep->base.tx_selective || (flags & FI_COMPLETION));
}

/* A receive by write whose CTS has completed, waiting for WDONE (nothing of
 * it in flight). Caller holds ep->lock. */
static inline bool lfv_rdm_awaits_wdone(const struct lfv_rdm_read *rd)
{
	return rd->by_write && !rd->inflight && !rd->done_seen && !rd->failed;
}

/* The receive by write after prev (NULL: the first) on ep->reading that
 * waits for WDONE, or NULL. Caller holds ep->lock. Marking prev failed,
 * or moving it to another list by its req.node, keeps the walk. */
static inline struct lfv_rdm_rreq *
lfv_rdm_awaiting_after(struct lfv_rdm_ep *ep, struct lfv_rdm_rreq *prev)
{
	struct lfv_list *item = prev ? prev->rd.held.next : ep->reading.next;
	struct lfv_rdm_rreq *q;

	lfv_spin_assert_held(&ep->lock);
	for (; item != &ep->reading; item = item->next) {
		q = lfv_container_of(item, struct lfv_rdm_rreq, rd.held);
		if (lfv_rdm_awaits_wdone(&q->rd))
			return q;
	}
	return NULL;
}

/* Whether the liveness look's period is over at now (coarse clock;
 * ep->lock). */
static inline bool lfv_rdm_live_due(const struct lfv_rdm_ep *ep, int64_t now)
{
	return now >= ep->live_at;
}

/* Whether something waits on the probes of its connection: a rendezvous
 * send for its FIN, or a receive by write for its WDONE. Caller holds
 * ep->lock. */
static inline bool lfv_rdm_waits_probe(const struct lfv_rdm_ep *ep)
{
	return ep->rndv_out || ep->cts_out;
}

/* A rendezvous receive request goes: it no longer holds the sender's RTS.
 * Caller holds ep->lock. */
static inline void lfv_rdm_rreq_free_locked(struct lfv_rdm_ep *ep,
					    struct lfv_rdm_req *r)
{
	lfv_spin_assert_held(&ep->lock);
	lfv_list_remove(&r->read->held);
	r->conn->rreqs--;
	if (r->read->by_write)
		ep->cts_out--;
	free(lfv_container_of(r, struct lfv_rdm_rreq, req));
}

#endif /* LFV_RDM_EP_H */
