/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * FI_EP_RDM: reliable unconnected endpoints, natively over ibverbs (no
 * MSG endpoints underneath, no rdma_cm). DESIGN (issue 5), in build:
 *
 * Address. An RDM endpoint owns one UD QP, its "control QP"; its name is
 * that QP's FI_ADDR_IB_UD name (struct lfv_ud_name), so the AV of lfv_av.c
 * serves RDM unchanged: inserting a name creates the address handle that
 * the control messages use.
 *
 * Connections. One RC QP per peer, created on the first send to it (or on
 * its first request), with a handshake over the control QPs:
 *
 *   REQ {my RC QPN, my PSN, my incarnation, my name}  A -> B
 *   REP {my RC QPN, my PSN, my incarnation, tag}      B -> A
 *
 * B creates its QP, takes it to RTS against A's QPN and answers; A takes
 * its QP to RTR/RTS on the REP. Control datagrams may be lost: A resends
 * REQ until a REP comes (timer checked by progress while handshakes are
 * pending), and B answers a duplicate REQ of a connected peer with the
 * same REP. Simultaneous first sends: both sides sent REQ; the side whose
 * name compares lower ignores the other's REQ, and the higher side adopts
 * the lower side's REQ (connects the QP it already created to the lower
 * side's QPN and answers REP), so a pair always ends with one QP each. An
 * incarnation (random 64 bits per endpoint) in REQ tells a restarted peer
 * at the same address from a duplicate: a REQ with a new incarnation tears
 * the old connection down (its requests complete in error) and connects
 * afresh. The REP's tag (in reserved) names the REQ it answers (15 bits
 * of A's incarnation and RC QPN, never 0): A takes only a REP for its
 * current QP, not a late one for a handshake it gave up or for its
 * previous incarnation (0: an older peer, taken unchecked).
 *
 * Receives. Every RC QP of the endpoint receives through one SRQ of
 * provider-owned bounce buffers (registered once), so thousands of peers
 * cost no receive memory each. A completion on the SRQ names the QP; the
 * QP number maps to the connection and so to the peer's fi_addr_t (looked
 * up in the AV once, when the connection is made; FI_ADDR_NOTAVAIL when
 * the peer is not in the AV, which FI_SOURCE_ERR reports).
 *
 * Wire. Each message starts with struct lfv_rdm_hdr (op, flags, tag, CQ
 * data, length). Eager: the payload follows the header in the same send,
 * up to the eager size (FI_LFVERBS_RDM_EAGER, a parameter). Rendezvous for
 * larger ones: RTS {tag, data, length, address, rkey} -> the receiver
 * matches it, RDMA-reads the payload into the posted buffer, and sends FIN;
 * the sender completes on FIN. Memory regions of RDM domains are
 * registered with remote read access for this. A receiver that cannot
 * take an RTS (too long, past its unexpected-message limits, no memory)
 * answers at once with a FIN flagged ERR, its reason in `reserved`. A
 * sender still without a FIN after FI_LFVERBS_RDM_RNDV_TIMEOUT asks
 * (ASK {tag: cookie}) whether the receiver still holds the RTS (waiting
 * for a receive, or being read): HELD {tag: cookie} says yes and restarts
 * the wait, HELD flagged ERR says no and fails the send; no answer within
 * another timeout fails it with FI_ETIMEDOUT.
 *
 * Rendezvous by write (FI_LFVERBS_RDM_RNDV_WRITE=1, the receiver's
 * choice; a sender takes either answer). A receiver that matched an RTS
 * into one buffer registers it for remote write (for this message alone,
 * or the application's region if it has FI_REMOTE_WRITE) and answers
 *
 *   CTS {tag: the sender's cookie; struct lfv_rdm_cts {len, addr, rkey,
 *        rcookie}}                                     receiver -> sender
 *
 * The sender RDMA-writes min(len, its length) bytes there in chunks and
 * sends behind them WDONE {tag: rcookie, cq_data: the bytes written}; its
 * send completes when WDONE has (RC: the writes are in place before it is
 * acknowledged). The receiver reports the receive on WDONE: no FIN. Why:
 * under loss soft-RoCE (Linux 6.1) puts QPs whose reads lost packets in
 * error (README: one path is rxe_req.c's req_retry restarting a read
 * mid-message, which rxe_comp.c's check_ack takes for an error), while
 * writes retry like sends: a read breaks its connection, a write does not.
 * A CTS is believed only from the connection the RTS went to, for a send
 * that waits for its FIN, once, and only for at most the send's length; a
 * WDONE only from the connection the CTS went to, for a receive that
 * waits for it, with at most the bytes the CTS offered. A connection that
 * fails fails its receives waiting for WDONE; they are probed like sends
 * waiting for a FIN.
 *
 * Matching. The receive side is a peer of an lfv_peer_srx (src/): of the
 * endpoint's own, or of the one the application bound with
 * fi_srx_context, or of an owner's imported with FI_PEER. A message that
 * arrives asks get_msg/get_tag; a match is copied (eager) or read
 * (rendezvous) at once, otherwise the bounce buffer (or RTS) is queued
 * with queue_msg/queue_tag and started by start_msg/start_tag when the
 * application posts a receive.
 *
 * RMA and atomics. fi_rma and fi_atomic post RDMA reads, writes and the
 * 64-bit atomics of verbs on the connection to the peer, as MSG endpoints
 * do on theirs. Remote CQ data (64 bits; an immediate has 32) follows the
 * write as a WDATA message {tag: the write's length, cq_data}; the QP's
 * order puts the data in place before the target reports it.
 *
 * RMA events. An RMA to a key with LFV_KEY_EVENT (a region of an
 * FI_RMA_EVENT domain, lfv_prov.h) is followed on the same QP by an EVENT
 * message {tag: length, cq_data if any; payload: key, remote address}
 * instead of WDATA; the responder executes requests in order, so the
 * access is done when it arrives. The target checks key, address and
 * length against its region (lfv_mr_event) before counting anything.
 *
 * Order. One RC QP per peer delivers in order and sends are posted in call
 * order (queued behind a connection still being made), so FI_ORDER_SAS
 * holds per peer for tagged and untagged messages alike.
 *
 * Segmented eager (SAR). A message above the eager size and up to
 * FI_LFVERBS_RDM_SAR goes as eager segments through the same provider
 * buffers, no registration and no round trip: the first {op SAR_MSG or
 * SAR_TAG, tag, data; struct lfv_rdm_sar {total}; payload}, then SEG
 * {tag: the offset; payload} for the rest, each segment the eager size
 * (the first 8 bytes less). A sender posts a message's segments together
 * and in call order behind anything queued on the connection, so they
 * arrive back to back, with no other data message of that peer between
 * them. The receiver matches on the first: a receive found takes every
 * segment at its offset; none, the message gathers in a copy (counted
 * against the unexpected limits) that is matched, or queued, when its
 * last segment is in. A segment that is not the next one of the
 * message under way (no message, another offset, past the total) is
 * dropped, and so is the rest of that message: its receive completes in
 * error (FI_EIO). The sender's completion is its last segment's.
 *
 * Failure. A QP in error fails the connection: the request that saw it
 * completes with the verbs status as error, those flushed behind it with
 * FI_ECANCELED, those still queued and rendezvous sends waiting for their
 * FIN with FI_ECONNRESET; the next send to that peer connects again. A
 * FIN names its request and the use of it (a generation), so a late one
 * cannot complete a later send.
 *
 * Liveness. The RC QPs retry without end where the device allows it
 * (retry_cnt 7: soft-RoCE resends for ever; a device that counts tries
 * stops after 7): a peer that is alive behind a lossy link is waited for,
 * not given up after 7 unlucky tries. Whether the peer is alive is asked
 * over the control QPs instead. A connection with work on its QP and no
 * completion for LFV_RDM_LIVE_QUIET_NS sends, once a look (every
 * LFV_RDM_LIVE_LOOK_NS),
 *
 *   PING {my RC QPN, psn: a nonce, my incarnation, my name}  A -> B
 *
 * and B answers PONG {its RC QPN, the nonce, its incarnation} when it
 * holds the connection PING names (the sender's RC QPN and incarnation,
 * connected or accepted), GONE otherwise (a connection from that name,
 * but another one: B failed it, or A is a stale incarnation; no
 * connection from that name at all: no answer, we hold no address for
 * it). A takes an answer only for its connection to B, with the nonce of
 * its current PING and B's incarnation (and, PONG, B's QPN): PONG starts
 * the quiet time again, GONE fails the connection at once, and
 * FI_LFVERBS_RDM_LIVE_TIMEOUT seconds of quiet without a PONG (30 by
 * default: a peer that does not read its CQ for a while answers nothing,
 * and its full receive queue stops our sends, RNR, meanwhile) fail it with
 * FI_ETIMEDOUT: its QP goes to the error state, and what it flushes
 * completes with FI_ETIMEDOUT too.
 */
#ifndef LFV_RDM_PROTO_H
#define LFV_RDM_PROTO_H

#include <stdint.h>

#include "lfv_prov.h"

/* Control datagrams on the UD QP. */
enum lfv_rdm_ctrl_op {
	LFV_RDM_CTRL_REQ = 1,
	LFV_RDM_CTRL_REP = 2,
	LFV_RDM_CTRL_PING = 3,		/* liveness: do you hold this? */
	LFV_RDM_CTRL_PONG = 4,		/* yes */
	LFV_RDM_CTRL_GONE = 5,		/* no */
};

struct lfv_rdm_ctrl {
	uint8_t op;			/* enum lfv_rdm_ctrl_op */
	uint8_t version;		/* LFV_RDM_WIRE_VERSION */
	uint16_t reserved;		/* REP: the tag of the REQ it
					 * answers; REQ: 0 */
	uint32_t qpn;			/* the sender's RC QP (GONE: 0) */
	uint32_t psn;			/* PING, PONG, GONE: the nonce */
	uint32_t eager;			/* the sender's FI_LFVERBS_RDM_EAGER:
					 * both sides must have the same */
	uint64_t incarnation;
	struct lfv_ud_name name;	/* the sender's control QP */
	uint8_t mtu;			/* the sender's port's active MTU
					 * (enum ibv_mtu); REQ and REP must
					 * hold one (LFV_RDM_MTU_OK) */
	uint8_t pad[7];
};

/* The MTUs a REQ or REP may carry: IBV_MTU_256 (1) to IBV_MTU_4096 (5).
 * Both ends of a connection take the smaller of their two: a responder
 * refuses a packet longer than its own QP's MTU, and a link at a smaller
 * MTU drops a longer frame (issue 17). */
#define LFV_RDM_MTU_MIN 1
#define LFV_RDM_MTU_MAX 5
#define LFV_RDM_MTU_OK(m) ((m) >= LFV_RDM_MTU_MIN && (m) <= LFV_RDM_MTU_MAX)
/* The control datagrams that must carry one: the handshake's. */
#define LFV_RDM_CTRL_HAS_MTU(op) \
	((op) == LFV_RDM_CTRL_REQ || (op) == LFV_RDM_CTRL_REP)

/* 3: the eager size in the handshake, the service QKEY, ASK and HELD;
 * 4: segmented eager (SAR_MSG, SAR_TAG, SEG); 5: liveness (PING, PONG,
 * GONE) and RC QPs that retry without end; 6: rendezvous by write (CTS,
 * WDONE); 7: the MTU in the handshake. */
#define LFV_RDM_WIRE_VERSION 7

/* Data messages on RC QPs. */
enum lfv_rdm_op {
	LFV_RDM_EAGER_MSG = 1,
	LFV_RDM_EAGER_TAG = 2,
	LFV_RDM_RTS_MSG = 3,		/* rendezvous request */
	LFV_RDM_RTS_TAG = 4,
	LFV_RDM_FIN = 5,		/* rendezvous read done */
	LFV_RDM_WDATA = 6,		/* an RDMA write's remote CQ data */
	LFV_RDM_RTU = 7,		/* the requester's QP is ready */
	LFV_RDM_EVENT = 8,		/* an RMA to an FI_RMA_EVENT region */
	LFV_RDM_ASK = 9,		/* rendezvous: do you hold my RTS? */
	LFV_RDM_HELD = 10,		/* the answer: yes, or (ERR) no */
	LFV_RDM_SAR_MSG = 11,		/* segmented eager: the first */
	LFV_RDM_SAR_TAG = 12,
	LFV_RDM_SEG = 13,		/* the next one (tag: its offset) */
	LFV_RDM_CTS = 14,		/* rendezvous: write it here */
	LFV_RDM_WDONE = 15,		/* rendezvous: written */
};

#define LFV_RDM_HDR_DATA 0x1		/* cq_data is valid */
#define LFV_RDM_HDR_ERR 0x2		/* FIN: the read failed, or the RTS
					 * was refused (reserved: why, an
					 * FI_E* code); HELD: not held */
#define LFV_RDM_HDR_READ 0x4		/* EVENT: a read or fetching atomic */

struct lfv_rdm_hdr {
	uint8_t op;			/* enum lfv_rdm_op */
	uint8_t flags;			/* LFV_RDM_HDR_* */
	uint16_t reserved;
	uint32_t len;			/* eager: payload bytes after this */
	uint64_t tag;
	uint64_t cq_data;
};

/* Follows the header of an RTS. */
struct lfv_rdm_rts {
	uint64_t len;
	uint64_t addr;
	uint64_t cookie;		/* the sender's request, echoed in FIN */
	uint32_t rkey;
	uint32_t pad;
};

/* Follows the header of a CTS (tag: the sender's cookie). */
struct lfv_rdm_cts {
	uint64_t len;			/* bytes the receiver takes */
	uint64_t addr;			/* where, under rkey */
	uint64_t rcookie;		/* the receive, echoed in WDONE */
	uint32_t rkey;
	uint32_t pad;
};

/* Follows the header of a SAR_MSG or SAR_TAG, before its payload. */
struct lfv_rdm_sar {
	uint64_t total;			/* the message's bytes */
};

/* Follows the header of an EVENT. */
struct lfv_rdm_event {
	uint64_t key;			/* as the initiator was given it */
	uint64_t addr;			/* the target address */
};

#endif /* LFV_RDM_PROTO_H */
