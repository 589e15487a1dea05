/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM connections: one RC QP per peer, made on demand through a handshake
 * over the endpoints' UD control QPs (the protocol is in lfv_rdm_proto.h);
 * the timers that resend it, probe idle connections and reap dead ones.
 * The tables that find a connection are in lfv_rdm_conn_table.c.
 *
 * Locking: everything here runs with the endpoint's lock (ep->lock) held
 * by the caller, but lfv_rdm_ping_done and lfv_rdm_rtu_failed, which take
 * it. The exported entry points
 * assert it (lfv_spin_assert_held, debug builds); lfv_lock_order.h says
 * what may be taken under it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_errno.h"
#include "lfv_lock_order.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_queue.h"
#include "lfv_rdm_conn.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_tx.h"
#include "lfv_ud.h"
#include "lfv_wait.h"

/* Orders names for the simultaneous-connect rule: < 0 when a is lower. */
static int lfv_rdm_name_cmp(const struct lfv_ud_name *a,
			    const struct lfv_ud_name *b)
{
	int c = memcmp(a->gid, b->gid, sizeof(a->gid));

	if (c)
		return c;
	return a->qpn < b->qpn ? -1 : a->qpn > b->qpn;
}

/* ---- queue pairs ------------------------------------------------------------ */

static int lfv_rdm_qp_create(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct ibv_qp_init_attr init = {
		.qp_context = c,
		.send_cq = ep->tx_vcq->ibv_cq,
		.recv_cq = ep->rx_vcq->ibv_cq,
		.srq = ep->srq,
		.cap = {
			/* + the unsignaled RTU of a requester */
			.max_send_wr = LFV_RDM_SQ_DEPTH + 1,
			.max_send_sge = LFV_RDM_MAX_IOV,
			.max_inline_data = ep->max_inline,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = ep->base.domain->dev->port_num,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	if (ep->base.domain->dev->attr.atomic_cap != IBV_ATOMIC_NONE)
		attr.qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;

	c->qp = ibv_create_qp(ep->base.domain->pd, &init);
	if (!c->qp)
		return lfv_verbs_errno();
	ret = lfv_verbs_ret(ibv_modify_qp(c->qp, &attr, IBV_QP_STATE |
					  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS));
	if (ret) {
		ibv_destroy_qp(c->qp);
		c->qp = NULL;
		return ret;
	}
	c->my_psn = (uint32_t)lrand48() & 0xffffff;
	lfv_rdm_link_qpn(ep, c);
	return 0;
}

/* The smaller of our port's MTU and the peer's (enum ibv_mtu). */
static enum ibv_mtu lfv_rdm_path_mtu(enum ibv_mtu own, uint8_t peer)
{
	return (unsigned)peer < (unsigned)own ? (enum ibv_mtu)peer : own;
}

/* INIT -> RTR -> RTS against the peer's QP, at the smaller of the two
 * ports' MTUs (the peer's came in its REQ or REP, checked). */
static int lfv_rdm_qp_connect(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	const struct lfv_device *dev = ep->base.domain->dev;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = lfv_rdm_path_mtu(dev->port_attr.active_mtu,
					     c->peer_mtu),
		.dest_qp_num = c->peer_qpn,
		.rq_psn = c->peer_psn,
		.max_dest_rd_atomic = (uint8_t)dev->attr.max_qp_rd_atom,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.port_num = dev->port_num,
			.grh = { .sgid_index = 0, .hop_limit = 64 },
		},
	};
	int ret;

	memcpy(attr.ah_attr.grh.dgid.raw, c->name.gid, sizeof(c->name.gid));
	if (dev->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET)
		attr.ah_attr.dlid = c->name.lid;
	ret = lfv_verbs_ret(ibv_modify_qp(c->qp, &attr, IBV_QP_STATE |
		IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	if (ret)
		return ret;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = c->my_psn;
	/* Tries about 1 s apart (4.096 us * 2^18): a loaded host's soft-RoCE
	 * responder may not run for a while. 7 retries: soft-RoCE takes it
	 * as "for ever" (rxe_comp.c); a peer that is gone is found by the
	 * liveness probes instead (lfv_rdm_proto.h), not by 7 tries that
	 * each lost a packet on a lossy link (issue 17, fault case 3). */
	attr.timeout = 18;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;		/* wait for receive buffers forever */
	attr.max_rd_atomic = (uint8_t)dev->attr.max_qp_rd_atom;
	return lfv_verbs_ret(ibv_modify_qp(c->qp, &attr, IBV_QP_STATE |
		IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
}

/* ---- control messages ------------------------------------------------------- */

/* The address handle control messages to the peer use: the AV's while the
 * peer is in it, else one of the connection's own. Looked up for every
 * message: fi_av_remove destroys the AV's handle, and a handshake may
 * still be retried after that. */
static int lfv_rdm_conn_ah(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	const struct lfv_av_dest *d;
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.port_num = ep->base.domain->dev->port_num,
		.grh = { .sgid_index = 0, .hop_limit = 64 },
	};

	if (c->addr != FI_ADDR_NOTAVAIL) {
		d = lfv_av_dest(ep->base.av, c->addr);
		if (d) {
			c->ah = d->ah;
			return 0;
		}
	}
	if (c->own_ah) {
		c->ah = c->own_ah;
		return 0;
	}
	memcpy(attr.grh.dgid.raw, c->name.gid, sizeof(c->name.gid));
	if (ep->base.domain->dev->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET)
		attr.dlid = c->name.lid;
	c->own_ah = ibv_create_ah(ep->base.domain->pd, &attr);
	if (!c->own_ah)
		return lfv_verbs_errno();
	c->ah = c->own_ah;
	return 0;
}

/* What a REP carries in reserved to say which REQ it answers: 15 bits of
 * the requester's incarnation and QP number, never 0 (0: a peer from
 * before the tag, whose REP is taken unchecked). */
static uint16_t lfv_rdm_rep_tag(uint64_t incarnation, uint32_t qpn)
{
	/* The top bits of a multiplicative hash depend on every bit. */
	uint64_t v = (incarnation ^ qpn) * 0x9e3779b97f4a7c15ULL;

	return (uint16_t)(0x8000 | (v >> 49));
}

/* A control datagram of ep's to c's peer: op, and what every one says of
 * its sender. */
static struct lfv_rdm_ctrl lfv_rdm_ctrl_of(const struct lfv_rdm_ep *ep,
					   const struct lfv_rdm_conn *c,
					   uint8_t op)
{
	return (struct lfv_rdm_ctrl){
		.op = op, .version = LFV_RDM_WIRE_VERSION,
		.qpn = c->qp->qp_num, .eager = (uint32_t)ep->eager,
		.incarnation = ep->incarnation, .name = ep->name,
		.mtu = (uint8_t)ep->base.domain->dev->port_attr.active_mtu,
	};
}

/* Posts msg to c's peer's control QP; -FI_EAGAIN when there is no room
 * or no address handle (the timers send again). */
static int lfv_rdm_ctrl_post(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     const struct lfv_rdm_ctrl *msg)
{
	struct lfv_rdm_req *r;
	struct lfv_rdm_ctrl *m;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;

	if (lfv_list_empty(&ep->ctl_free) || lfv_rdm_conn_ah(ep, c))
		return -FI_EAGAIN; /* a retry will come */
	r = lfv_container_of(lfv_list_pop_head(&ep->ctl_free),
			     struct lfv_rdm_req, node);
	m = &((struct lfv_rdm_ctrl_buf *)r->buf)->msg;
	*m = *msg;
	sge = (struct ibv_sge){ .addr = (uintptr_t)m,
				.length = (uint32_t)sizeof(*m),
				.lkey = ep->mr->lkey };
	wr.wr_id = (uintptr_t)&r->op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = c->ah;
	wr.wr.ud.remote_qpn = c->name.qpn;
	wr.wr.ud.remote_qkey = LFV_UD_QKEY;
	lfv_tsan_posted(wr.wr_id);
	if (ibv_post_send(ep->ctl_qp, &wr, &bad)) {
		lfv_list_insert_head(&ep->ctl_free, &r->node);
		return -FI_EAGAIN;
	}
	return 0;
}

/* A handshake datagram (REQ, REP) for c. */
static int lfv_rdm_ctrl_send(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     uint8_t op)
{
	struct lfv_rdm_ctrl m = lfv_rdm_ctrl_of(ep, c, op);

	m.psn = c->my_psn;
	if (op == LFV_RDM_CTRL_REP)
		m.reserved = lfv_rdm_rep_tag(c->peer_inc, c->peer_qpn);
	return lfv_rdm_ctrl_post(ep, c, &m);
}

static void lfv_rdm_arm_retry(struct lfv_rdm_conn *c)
{
	c->retry_at = lfv_now_ns() + LFV_RDM_RETRY_NS;
}

/* The requester's first message on its new QP (inline, unsignaled: the
 * QP has a send slot for it). RC delivers it before anything sent after
 * it, and only once the acceptor's QP receives. Unsignaled requests still
 * complete when they fail or are flushed (the QP in error, or closing
 * before the acceptor acknowledged it): its wr_id names ep->rtu. */
static int lfv_rdm_send_rtu(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_RTU };
	struct ibv_sge sge = { .addr = (uintptr_t)&h, .length = sizeof(h) };
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&ep->rtu.op, .sg_list = &sge,
		.num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE,
	}, *bad;

	lfv_tsan_posted(wr.wr_id);
	return lfv_post_ret(ibv_post_send(c->qp, &wr, &bad));
}

static void lfv_rdm_connected(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	c->state = LFV_RDM_CONNECTED;
	LFV_INFO(FI_LOG_EP_CTRL, "RDM %x: connected to %x: qp %x -> %x\n",
		 ep->name.qpn, c->name.qpn, c->qp->qp_num, c->peer_qpn);
	lfv_rdm_flush_pending(ep, c);
}

/*
 * The peer answered (requester: REP) or asked (acceptor: its REQ won):
 * the QP goes to RTS. The requester sends its RTU and its waiting sends
 * at once. The acceptor's QP may be ready before the requester's: what it
 * sent now could reach a QP that drops it, and the retries could run out
 * while the REP is still on its way (a loaded host), failing a healthy
 * connection. So the acceptor waits (ACCEPTED, a handshake still) for the
 * RTU, which proves the requester's QP ready, before its sends go.
 */
static int lfv_rdm_established(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			       const struct lfv_rdm_ctrl *m, bool requester)
{
	int ret;

	c->peer_qpn = m->qpn;
	c->peer_psn = m->psn;
	c->peer_mtu = m->mtu;
	c->peer_inc = m->incarnation;
	ret = lfv_rdm_qp_connect(ep, c);
	if (!ret && requester)
		ret = lfv_rdm_send_rtu(ep, c);
	if (ret) {
		LFV_WARN(FI_LOG_EP_CTRL, "RDM connect: %s\n",
			 fi_strerror(-ret));
		if (lfv_rdm_in_handshake(c))
			ep->handshakes--;
		lfv_rdm_conn_set_failed(ep, c);
		lfv_rdm_fail_pending(ep, c, ret);
		return ret;
	}
	if (requester) {
		ep->handshakes--;	/* it was REQ_SENT */
		lfv_rdm_connected(ep, c);
		return 0;
	}
	/* A send to ourselves: one QP, connected to itself, is ready. */
	if (m->qpn == c->qp->qp_num && lfv_rdm_same_name(&m->name, &ep->name)) {
		if (lfv_rdm_in_handshake(c))
			ep->handshakes--;
		lfv_rdm_connected(ep, c);
		return 0;
	}
	if (!lfv_rdm_in_handshake(c))
		ep->handshakes++;
	c->state = LFV_RDM_ACCEPTED;
	c->tries = 0;
	lfv_rdm_arm_retry(c);
	return 0;
}

/* The RTU on an accepted connection's QP: its sends may go. Caller holds
 * ep->lock. */
void lfv_rdm_on_rtu(struct lfv_rdm_ep *ep, uint32_t qpn)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_qpn(ep, qpn);

	if (!c || c->state != LFV_RDM_ACCEPTED)
		return;
	ep->handshakes--;
	lfv_rdm_connected(ep, c);
}

static struct lfv_rdm_conn *lfv_rdm_conn_new(struct lfv_rdm_ep *ep,
					     fi_addr_t addr,
					     const struct lfv_ud_name *name,
					     int *err)
{
	struct lfv_rdm_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		*err = -FI_ENOMEM;
		return NULL;
	}
	c->addr = addr;
	c->name = *name;
	lfv_list_init(&c->pending);
	*err = lfv_rdm_conn_ah(ep, c);
	if (!*err)
		*err = lfv_rdm_qp_create(ep, c);
	if (*err) {
		if (c->own_ah)
			ibv_destroy_ah(c->own_ah);
		free(c);
		return NULL;
	}
	lfv_rdm_conn_link(ep, c);
	return c;
}

/* The connection to addr, started if there is none (or the last failed).
 * Caller holds ep->lock. */
struct lfv_rdm_conn *lfv_rdm_conn_get(struct lfv_rdm_ep *ep, fi_addr_t addr,
				      int *err)
{
	struct lfv_rdm_conn *c;
	struct lfv_ud_name name;

	lfv_spin_assert_held(&ep->lock);
	/* A removed address still names its connection here: sends to it
	 * fail like sends to any address the AV does not have. */
	c = lfv_rdm_conn_by_addr(ep, addr);
	if (c && c->state != LFV_RDM_FAILED && lfv_rdm_conn_addr_live(ep, c))
		return c;
	if (!lfv_av_dest(ep->base.av, addr)) {
		*err = -FI_EINVAL;
		return NULL;
	}
	if (c && c->state != LFV_RDM_FAILED)
		return c;
	if (c)
		lfv_rdm_conn_retire(ep, c);
	*err = lfv_av_name(ep->base.av, addr, &name);
	if (*err)
		return NULL;
	/* The peer may have connected before it was in the AV. */
	c = lfv_rdm_conn_by_name(ep, &name);
	if (c && c->state != LFV_RDM_FAILED) {
		/* Inserted again after a removal: the new address. */
		lfv_rdm_conn_forget_addr(ep, c);
		lfv_rdm_conn_learn_addr(ep, c, addr);
		return c;
	}
	if (c)
		lfv_rdm_conn_retire(ep, c);
	c = lfv_rdm_conn_new(ep, addr, &name, err);
	if (!c)
		return NULL;
	c->state = LFV_RDM_REQ_SENT;
	ep->handshakes++;
	lfv_rdm_arm_retry(c);
	lfv_rdm_ctrl_send(ep, c, LFV_RDM_CTRL_REQ); /* lost: retried */
	return c;
}

/* A REQ from a peer we know nothing of, or that restarted. */
static void lfv_rdm_accept_new(struct lfv_rdm_ep *ep,
			       const struct lfv_rdm_ctrl *m)
{
	union ibv_gid gid;
	struct lfv_rdm_conn *c;
	fi_addr_t addr;
	int err;

	/* A flood of requests from new names must not take a QP each. */
	if (ep->handshakes >= lfv_params.rdm_handshakes_max) {
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_LIMIT,
			 "an RDM connection request past "
			 "FI_LFVERBS_RDM_HANDSHAKES_MAX");
		return; /* the peer retries */
	}
	if (ep->accepted >= lfv_params.rdm_conns_max) {
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_LIMIT,
			 "an RDM connection request past "
			 "FI_LFVERBS_RDM_CONNS_MAX");
		return; /* the peer retries until its handshake times out */
	}
	memcpy(gid.raw, m->name.gid, sizeof(gid.raw));
	addr = lfv_av_reverse(ep->base.av, &gid, m->name.qpn);
	c = lfv_rdm_conn_new(ep, addr, &m->name, &err);
	if (!c) {
		LFV_WARN(FI_LOG_EP_CTRL, "RDM accept: %s\n", fi_strerror(-err));
		return; /* the peer retries */
	}
	c->inbound = true;
	ep->accepted++;
	if (!lfv_rdm_established(ep, c, m, false))
		lfv_rdm_ctrl_send(ep, c, LFV_RDM_CTRL_REP);
}

static void lfv_rdm_on_req(struct lfv_rdm_ep *ep, const struct lfv_rdm_ctrl *m)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_name(ep, &m->name);

	if (!c) {
		lfv_rdm_accept_new(ep, m);
		return;
	}
	switch (c->state) {
	case LFV_RDM_REQ_SENT:
		/* Both sides asked: the lower name's request wins. */
		if (lfv_rdm_name_cmp(&ep->name, &m->name) < 0)
			return;
		if (!lfv_rdm_established(ep, c, m, false))
			lfv_rdm_ctrl_send(ep, c, LFV_RDM_CTRL_REP);
		return;
	case LFV_RDM_ACCEPTED:
	case LFV_RDM_CONNECTED:
		if (c->peer_inc == m->incarnation && c->peer_qpn == m->qpn) {
			/* Our REP was lost. */
			lfv_rdm_ctrl_send(ep, c, LFV_RDM_CTRL_REP);
			return;
		}
		/* The peer restarted at the same address (another
		 * incarnation), or gave up its side of this connection and
		 * asks again (another QP): said, as what waits on the old
		 * connection fails. */
		LFV_WARN(FI_LOG_EP_CTRL, "RDM %x: peer %x asks to connect "
			 "again (%s): its connection (qp %x) fails\n",
			 ep->name.qpn, c->name.qpn,
			 c->peer_inc != m->incarnation ? "restarted" :
			 "another QP", c->qp->qp_num);
		lfv_rdm_conn_fail(ep, c, -FI_ECONNRESET);
		/* Sends still posted on the old QP would go on being resent
		 * (some 7.5 s) to the old incarnation's RC QP number, which
		 * the new one may own now (rxe hands out numbers in order:
		 * a restart that got the old control QP number gets the
		 * old RC QP number too), where a resend that passes for a
		 * duplicate may be acknowledged: a message that never
		 * arrived would complete as sent. Stop the QP: they flush
		 * now (FI_ECANCELED). */
		ibv_modify_qp(c->qp, &(struct ibv_qp_attr){
				.qp_state = IBV_QPS_ERR }, IBV_QP_STATE);
		lfv_rdm_conn_retire(ep, c);
		lfv_rdm_accept_new(ep, m);
		return;
	default:
		lfv_rdm_conn_retire(ep, c);
		lfv_rdm_accept_new(ep, m);
		return;
	}
}

/* A REP for a connection we asked for, answering the REQ of its QP: one
 * that answers an earlier REQ (of a handshake that timed out, or of our
 * previous incarnation; the acceptor repeats its REP for a while) would
 * connect our QP to a QP of the peer's that is not connected to it. Such
 * REPs, like repeats for a connection already made, are ignored: they
 * are the protocol's, not a peer's fault. */
static void lfv_rdm_on_rep(struct lfv_rdm_ep *ep, const struct lfv_rdm_ctrl *m)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_name(ep, &m->name);

	if (!c || c->state != LFV_RDM_REQ_SENT)
		return;
	if (m->reserved &&
	    m->reserved != lfv_rdm_rep_tag(ep->incarnation, c->qp->qp_num))
		return;
	lfv_rdm_established(ep, c, m, true);
}

/* ---- liveness (lfv_rdm_proto.h) ------------------------------------------- */

/* A liveness datagram (PING, PONG, GONE) for c with nonce. */
static void lfv_rdm_live_send(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			      uint8_t op, uint32_t nonce)
{
	struct lfv_rdm_ctrl m = lfv_rdm_ctrl_of(ep, c, op);

	m.psn = nonce;
	lfv_rdm_ctrl_post(ep, c, &m); /* lost: the next look pings again */
}

/* The peer does not answer for c, or says it is gone: c fails with err,
 * and so does what its QP flushes (c->down_err). */
static void lfv_rdm_live_fail(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			      int err)
{
	LFV_WARN(FI_LOG_EP_CTRL, "RDM %x: peer %x %s (qp %x)\n", ep->name.qpn,
		 c->name.qpn, err == -FI_ETIMEDOUT ? "does not answer" :
		 "no longer holds the connection", c->qp->qp_num);
	c->down_err = err;
	lfv_rdm_conn_fail(ep, c, err);
	ibv_modify_qp(c->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
		      IBV_QP_STATE);
}

/* A PING: PONG if we hold the connection it names, GONE if we hold
 * another one from that name; nothing if none (no address to answer to
 * that is not the sender's word). */
static void lfv_rdm_on_ping(struct lfv_rdm_ep *ep, const struct lfv_rdm_ctrl *m)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_name(ep, &m->name);
	bool held;

	if (!c || c->retired)
		return;
	held = (c->state == LFV_RDM_CONNECTED ||
		c->state == LFV_RDM_ACCEPTED) &&
	       c->peer_qpn == m->qpn && c->peer_inc == m->incarnation;
	lfv_rdm_live_send(ep, c, held ? LFV_RDM_CTRL_PONG : LFV_RDM_CTRL_GONE,
			  m->psn);
}

/* A PONG or GONE: taken only for the connection we are asking about,
 * from its peer's incarnation, with the nonce of our question (and, PONG,
 * from the QP ours is connected to). Anything else is a late answer or a
 * forgery, counted. */
static void lfv_rdm_on_answer(struct lfv_rdm_ep *ep,
			      const struct lfv_rdm_ctrl *m)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_name(ep, &m->name);

	if (!c || c->state != LFV_RDM_CONNECTED || !c->live_nonce)
		return; /* not asking: late */
	if (m->psn != c->live_nonce || m->incarnation != c->peer_inc ||
	    (m->op == LFV_RDM_CTRL_PONG && m->qpn != c->peer_qpn)) {
		lfv_drop(&ep->base.domain->fabric->drops, FI_LFVERBS_DROP_FORGED,
			 "an RDM liveness answer that names another question");
		return;
	}
	if (m->op == LFV_RDM_CTRL_GONE) {
		lfv_rdm_live_fail(ep, c, -FI_ECONNRESET);
		return;
	}
	/* Alive: the quiet time starts again. */
	c->live_since = lfv_now_coarse_ns();
}

/* One look at every connection with work on its QP: quiet since the last
 * look that saw a completion (or a PONG); asked after
 * LFV_RDM_LIVE_QUIET_NS, failed after FI_LFVERBS_RDM_LIVE_TIMEOUT
 * seconds (0: never for silence). */
static void lfv_rdm_live_look(struct lfv_rdm_ep *ep, int64_t now)
{
	int64_t dead = (int64_t)lfv_params.rdm_live_timeout * 1000000000LL;
	struct lfv_list *item;
	struct lfv_rdm_conn *c;
	uint32_t asking = 0;
	int64_t quiet;

	lfv_list_foreach(item, &ep->conns) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (c->state != LFV_RDM_CONNECTED || c->retired || !c->posted ||
		    !c->live_since || c->sq_done != c->live_done) {
			c->live_done = c->sq_done;
			c->live_since = now;
			c->live_nonce = 0;
			continue;
		}
		quiet = now - c->live_since;
		if (dead && quiet >= dead) {
			c->live_nonce = 0;
			lfv_rdm_live_fail(ep, c, -FI_ETIMEDOUT);
		} else if (quiet >= LFV_RDM_LIVE_QUIET_NS) {
			if (!c->live_nonce) {
				c->live_nonce = (uint32_t)lrand48() | 1;
				LFV_INFO(FI_LOG_EP_CTRL, "RDM %x: %u requests "
					 "to %x quiet for %lld ms: asking\n",
					 ep->name.qpn, c->posted, c->name.qpn,
					 (long long)(quiet / 1000000));
			}
			lfv_rdm_live_send(ep, c, LFV_RDM_CTRL_PING,
					  c->live_nonce);
			asking++;
		}
	}
	ep->live_asking = asking;
}

/* A checked control datagram. Caller holds ep->lock. */
void lfv_rdm_ctrl_arrived(struct lfv_rdm_ep *ep, const struct lfv_rdm_ctrl *m)
{
	static const char *const names[] = {
		[LFV_RDM_CTRL_REQ] = "REQ", [LFV_RDM_CTRL_REP] = "REP",
		[LFV_RDM_CTRL_PING] = "PING", [LFV_RDM_CTRL_PONG] = "PONG",
		[LFV_RDM_CTRL_GONE] = "GONE",
	};

	lfv_spin_assert_held(&ep->lock);
	LFV_INFO(FI_LOG_EP_CTRL, "RDM %x: %s from %x (qp %x)\n", ep->name.qpn,
		 names[m->op], m->name.qpn, m->qpn);
	switch (m->op) {
	case LFV_RDM_CTRL_REQ:
		lfv_rdm_on_req(ep, m);
		break;
	case LFV_RDM_CTRL_REP:
		lfv_rdm_on_rep(ep, m);
		break;
	case LFV_RDM_CTRL_PING:
		lfv_rdm_on_ping(ep, m);
		break;
	default:
		lfv_rdm_on_answer(ep, m);
		break;
	}
}

/* Resends requests (and REPs) whose answer is late; gives up after a
 * while. */
static void lfv_rdm_handshake_timers(struct lfv_rdm_ep *ep, int64_t now)
{
	struct lfv_list *item;
	struct lfv_rdm_conn *c;

	lfv_list_foreach(item, &ep->conns) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (c->retired || !lfv_rdm_in_handshake(c) ||
		    now < c->retry_at)
			continue;
		if (++c->tries > LFV_RDM_MAX_TRIES) {
			LFV_WARN(FI_LOG_EP_CTRL, "RDM: no answer from peer\n");
			ep->handshakes--;
			lfv_rdm_conn_set_failed(ep, c);
			lfv_rdm_fail_pending(ep, c, -FI_EHOSTUNREACH);
			continue;
		}
		lfv_rdm_arm_retry(c);
		/* An acceptor repeats its REP: the requester may not have
		 * it (it also asks again). */
		lfv_rdm_ctrl_send(ep, c, c->state == LFV_RDM_REQ_SENT ?
				  LFV_RDM_CTRL_REQ : LFV_RDM_CTRL_REP);
	}
}

/* A zero-byte RDMA write (no receive buffer, no completion at the peer)
 * that the peer's QP has to acknowledge. */
static void lfv_rdm_ping(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&ep->ping.op,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (c->state != LFV_RDM_CONNECTED || c->posted >= LFV_RDM_SQ_DEPTH ||
	    c->pinged == ep->ping_round)
		return;
	c->pinged = ep->ping_round;
	lfv_tsan_posted(wr.wr_id);
	if (!ibv_post_send(c->qp, &wr, &bad))
		c->posted++;
}

/* An RTU that failed or was flushed: its QP is in error, so is the
 * connection (the sends behind it flush too; this covers an RTU with
 * nothing behind it). Not counted in posted: the QP's spare slot. */
void lfv_rdm_rtu_failed(struct lfv_rdm_ep *ep, const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c;

	lfv_spin_lock(&ep->lock);
	c = lfv_rdm_conn_by_qpn(ep, wc->qp_num);
	if (c && c->state == LFV_RDM_CONNECTED)
		lfv_rdm_conn_fail(ep, c, -FI_ECONNRESET);
	lfv_spin_unlock(&ep->lock);
}

/* A header-only message (FIN, ASK, HELD) that needs no request: inline,
 * so from the caller's stack; its completion is a probe's (K_PING gives
 * the room back). -FI_EAGAIN when the connection is not up or has no room.
 * Caller holds ep->lock. */
int lfv_rdm_send_ctl(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
		     const struct lfv_rdm_hdr *h)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h, .length = sizeof(*h) };
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&ep->ping.op, .sg_list = &sge,
		.num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
	}, *bad;
	int ret;

	lfv_spin_assert_held(&ep->lock);
	if (c->state != LFV_RDM_CONNECTED || c->posted >= LFV_RDM_SQ_DEPTH)
		return -FI_EAGAIN;
	lfv_tsan_posted(wr.wr_id);
	ret = lfv_post_ret(ibv_post_send(c->qp, &wr, &bad));
	if (!ret)
		c->posted++;
	return ret;
}

/* Probes, once a round, every connection a rendezvous send waits on for
 * its FIN (the RTS went: the peer holds it). A connection with other
 * traffic needs none, but one probe a second costs nothing. */
static void lfv_rdm_ping_fin_waits(struct lfv_rdm_ep *ep)
{
	struct lfv_rdm_rreq *q = NULL;
	struct lfv_rdm_req *r;
	size_t i;

	ep->ping_round++;
	for (i = 0; i < ep->ntx; i++) {
		r = &ep->reqs[i];
		if (r->rndv && r->rts_done && r->rndv_wait && r->conn) {
			lfv_rdm_ping(ep, r->conn);
			lfv_rdm_rndv_round(ep, r);
		}
	}
	/* And every connection a receive by write waits on for WDONE. */
	while ((q = lfv_rdm_awaiting_after(ep, q)))
		lfv_rdm_ping(ep, q->req.conn);
}

void lfv_rdm_ping_done(struct lfv_rdm_ep *ep, const struct ibv_wc *wc)
{
	struct lfv_rdm_conn *c;

	lfv_spin_lock(&ep->lock);
	c = lfv_rdm_conn_by_qpn(ep, wc->qp_num);
	lfv_spin_unlock(&ep->lock);
	if (c)
		lfv_rdm_sq_done(ep, c, wc->status == IBV_WC_SUCCESS);
}

/* Whether the probes' and reaping's timers are due a look: once a tick by
 * the coarse clock (read from memory, never a system call), however often
 * the endpoint is called. A sender or a spinning reader calls thousands of
 * times a tick; a reader blocked in fi_cq_sread once a sleep slice
 * (LFV_RDM_WAIT_TIMERS_MS): counting calls instead put its probes 256
 * slices (12.8 s) apart. ep->lock held (tick_at is its). */
static bool lfv_rdm_tick_due(struct lfv_rdm_ep *ep)
{
	int64_t now = lfv_now_coarse_ns();

	if (now < ep->tick_at)
		return false;
	ep->tick_at = now + LFV_RDM_TICK_NS;
	return true;
}

/* The liveness look, once LFV_RDM_LIVE_LOOK_NS by the coarse clock
 * (ep->lock held). */
static void lfv_rdm_live_timer(struct lfv_rdm_ep *ep)
{
	int64_t now = lfv_now_coarse_ns();

	if (!lfv_rdm_live_due(ep, now))
		return;
	ep->live_at = now + LFV_RDM_LIVE_LOOK_NS;
	lfv_rdm_live_look(ep, now);
}

/* The endpoint's timers: handshakes (each call while one is on); the
 * liveness look when progress asks for it (ep->live_look); and, once a
 * tick, connections to free and probes of idle connections a rendezvous
 * send waits on. Caller holds ep->lock. */
void lfv_rdm_timers(struct lfv_rdm_ep *ep)
{
	int64_t now = 0;

	lfv_spin_assert_held(&ep->lock);
	if (ep->handshakes) {
		now = lfv_now_ns();
		lfv_rdm_handshake_timers(ep, now);
	}
	if (ep->live_look) {
		ep->live_look = false;
		lfv_rdm_live_timer(ep);
	}
	if ((!lfv_rdm_waits_probe(ep) && !ep->reap_due) ||
	    !lfv_rdm_tick_due(ep))
		return;
	if (!now)
		now = lfv_now_ns();
	if (ep->reap_due && now >= ep->reap_next) {
		ep->reap_next = now + LFV_RDM_REAP_NS / 4;
		lfv_rdm_conns_reap(ep, now);
	}
	if (!lfv_rdm_waits_probe(ep))
		return;
	if (!ep->ping_at) {
		ep->ping_at = now + LFV_RDM_PING_NS;
	} else if (now >= ep->ping_at) {
		ep->ping_at = now + LFV_RDM_PING_NS;
		lfv_rdm_ping_fin_waits(ep);
	}
}

/* The connection c failed: its receives by write that wait for WDONE will
 * have none. Reported by lfv_rdm_aborted_drain (they free SRX entries).
 * Caller holds ep->lock. */
static void lfv_rdm_fail_awaited(struct lfv_rdm_ep *ep,
				 const struct lfv_rdm_conn *c)
{
	struct lfv_rdm_rreq *q = NULL;

	while ((q = lfv_rdm_awaiting_after(ep, q))) {
		if (q->req.conn != c)
			continue;
		q->rd.failed = true;
		lfv_rdm_abort_later(ep, &ep->aborted, &q->req.node);
	}
}

/* A connection whose QP broke: its waiting sends fail; the next send to the
 * peer connects again. Caller holds ep->lock. */
void lfv_rdm_conn_fail(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c, int err)
{
	lfv_spin_assert_held(&ep->lock);
	LFV_INFO(FI_LOG_EP_CTRL, "RDM %x: connection to %x failed (qp %x): "
		 "%s\n", ep->name.qpn, c->name.qpn, c->qp ? c->qp->qp_num : 0,
		 fi_strerror(-err));
	if (lfv_rdm_in_handshake(c))
		ep->handshakes--;
	lfv_rdm_conn_set_failed(ep, c);
	lfv_rdm_sar_abandon(ep, c);
	lfv_rdm_fail_pending(ep, c, err);
	lfv_rdm_fail_rndv(ep, c, err);
	lfv_rdm_fail_awaited(ep, c);
}
