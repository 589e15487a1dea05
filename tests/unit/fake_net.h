/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A fake network behind the fake verbs (fake_verbs.h): the data path of
 * the fake device contexts (post_send, post_recv, post_srq_recv,
 * poll_cq), ibv_modify_qp and the provider's clock, so that two
 * endpoints in one process talk through queue pairs whose traffic the
 * test holds in its hands.
 *
 * What a QP sends is copied at the post into a packet "on the wire"; it
 * reaches its receiver only when the test delivers it, so the test can
 * drop, duplicate, hold back, reorder or fail any packet, or inject one
 * of its own. The rules follow the hardware where the protocol depends
 * on them:
 *
 *  - UD: a datagram lands behind a 40-byte GRH (source GID at 8) in the
 *    receiver's next posted receive, or is lost (no such QP, no receive);
 *    its send completes at the post.
 *  - RC: a send, an RDMA write or an RDMA read reaches only a QP in RTR
 *    or RTS connected to the sender (its dest_qp_num), else the sender
 *    completes with IBV_WC_RETRY_EXC_ERR (the retries ran out). A send
 *    waits on the wire while the receiver has no receive (RNR). A
 *    signaled request completes at its sender when delivered.
 *  - A request that completes in error puts its QP in the error state;
 *    a QP in the error state flushes its posted receives (not an SRQ's)
 *    and its requests still on the wire (IBV_WC_WR_FLUSH_ERR), and
 *    flushes at once what is posted to it after. Errors and flushes
 *    complete every request, signaled or not, as the hardware does.
 *
 * Linked with LFV_WRAPS plus -Wl,--wrap= ibv_modify_qp, ibv_resize_cq,
 * ibv_reg_mr and lfv_now_ns (tests/unit/rdm_proto.am).
 */
#ifndef FAKE_NET_H
#define FAKE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_verbs.h"

enum fake_pkt_kind {
	FAKE_PKT_DGRAM = 1,	/* UD send */
	FAKE_PKT_SEND,		/* RC send */
	FAKE_PKT_WRITE,		/* RC RDMA write (a probe when empty) */
	FAKE_PKT_READ,		/* RC RDMA read request */
};

#define FAKE_PKT_SGE 8

struct fake_pkt {
	enum fake_pkt_kind kind;
	uint32_t src_qpn, dst_qpn;
	uint8_t src_gid[16];		/* DGRAM: what the GRH shows */
	uint64_t wr_id;
	bool signaled;
	bool copy;			/* a duplicate or a forgery: its
					 * delivery completes nothing at
					 * the sender */
	enum ibv_wc_status fail;	/* not SUCCESS: the delivery fails
					 * with this status at the sender */
	uint64_t raddr;			/* WRITE, READ: remote address */
	struct ibv_sge local[FAKE_PKT_SGE];	/* READ: where it lands */
	int nlocal;
	size_t len;			/* payload (READ: bytes to read) */
	uint8_t data[];			/* DGRAM, SEND, WRITE: payload */
};

/* Watches the fake verbs' objects and fills the data path of dev's
 * context (call after fake_verbs_add, before opening a domain). */
void fake_net_init(struct fake_dev *dev);
/* Frees what is on the wire and forgets every object (after the test
 * closed its endpoints); the hooks go too. */
void fake_net_fini(void);

/* ---- the wire ---- */
size_t fake_net_count(void);
const struct fake_pkt *fake_net_peek(size_t i);
/* The first packet from index from on of kind (0: any) whose payload
 * starts with byte op (-1: any), sent by QP src (0: any); -1 if none. */
int fake_net_find(size_t from, enum fake_pkt_kind kind, int op, uint32_t src);
/* How many packets match, as fake_net_find. */
size_t fake_net_count_of(enum fake_pkt_kind kind, int op, uint32_t src);
void fake_net_drop(size_t i);
/* Appends a copy of packet i (delivering it completes nothing). */
void fake_net_dup(size_t i);
/* Takes packet i off the wire (the caller owns it; free() it, or give it
 * back with fake_net_put, which appends it). */
struct fake_pkt *fake_net_take(size_t i);
void fake_net_put(struct fake_pkt *p);
/* Packet i's delivery fails at its sender with status. */
void fake_net_fail(size_t i, enum ibv_wc_status status);
/* Delivers packet i; false (and it stays) while its receiver has no
 * receive posted. */
bool fake_net_deliver(size_t i);
/* Delivers what it can, in wire order; the number delivered. */
size_t fake_net_deliver_all(void);

/* ---- QPs and time ---- */
/* Whether a QP put in error flushes its posted receives only when it is
 * destroyed, as soft-RoCE may (its flush runs in a task, which destroy
 * waits for), instead of at once. */
void fake_net_late_flush(bool on);
/* Completions waiting in CQs that name a QP destroyed since: what a
 * closed endpoint left for the CQ's next reader. */
size_t fake_net_stale_wcs(void);
/* The next QP made gets number qpn (a restart at the same address). */
void fake_net_next_qpn(uint32_t qpn);
/* The path MTU an RC QP was given at RTR (0 before). */
enum ibv_mtu fake_net_path_mtu(const struct ibv_qp *qp);
/* RC QPs made since fake_net_init. */
unsigned int fake_net_rc_made(void);
/* The provider's clock (lfv_now_ns): moves 1 us per reading, so that
 * its bounded loops end, and by ns here (its timers). */
void fake_net_advance(int64_t ns);

#endif /* FAKE_NET_H */
