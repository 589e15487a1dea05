/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* A hostile peer of lfverbs (tests/hostile/README.md): it speaks raw
 * rdma_cm and ibverbs, never libfabric, and sends what no lfverbs peer
 * would. Each case says what lfverbs must do about it; lfv_victim and
 * run-hostile.sh check the lfverbs side.
 *
 *   lfv_hostile cm-accept-oversize IP PORT
 *	listens on IP:PORT and accepts one connection with a connect reply
 *	whose length byte claims 195 bytes of connection data (lfverbs can
 *	carry 55): the connecting lfverbs endpoint must abort it.
 *   lfv_hostile cm-connect-oversize IP PORT
 *	connects to an lfverbs passive endpoint with a request whose length
 *	byte claims more than the request holds: lfverbs must reject it.
 *   lfv_hostile rdm-forged VICTIM_HEX OTHER_HEX
 *	sends RDM handshake requests and replies to the victim's control QP
 *	that name OTHER (a peer connected to the victim) as their sender:
 *	lfverbs must drop them as forged and keep OTHER's connection.
 *   lfv_hostile rdm-bad-ctrl VICTIM_HEX
 *	sends truncated handshake datagrams, one of another wire version,
 *	unknown ops and a service name as sender: each dropped and counted.
 *   lfv_hostile rdm-flood VICTIM_HEX N
 *	sends valid requests from N new UD QPs (N new names): lfverbs must
 *	take no more handshakes than FI_LFVERBS_RDM_HANDSHAKES_MAX.
 *   lfv_hostile rdm-oversize VICTIM_HEX N BYTES
 *	N times: connects to the victim as an RDM peer (a real handshake,
 *	then an RC QP) and sends one BYTES-long message, longer than the
 *	victim's receive buffers: each fails at the victim, whose buffer must
 *	go back to its shared receive queue (issue 14, defect 4).
 *   lfv_hostile rdm-fin VICTIM_HEX MS
 *	connects to the victim as an RDM peer and for MS milliseconds sends
 *	FINs with guessed cookies (request 0-7, use 1-1000), to finish the
 *	victim's rendezvous sends to another peer early (issue 14, defect 2):
 *	lfverbs must take a FIN only from the peer its request went to.
 *   lfv_hostile rdm-live VICTIM_HEX OTHER_HEX
 *	connects to the victim as an RDM peer and sends liveness datagrams:
 *	answers nobody asked for, PINGs naming OTHER (forged), PINGs of its
 *	own connection (the victim must answer PONG) and of another
 *	incarnation (GONE).
 *   (VICTIM_HEX, OTHER_HEX: FI_ADDR_IB_UD names as lfv_victim prints.)
 *
 * The RDM cases send and exit: lfv_victim checks the outcome. Exit status
 * 0 when the peer reacted as it must, or the datagrams went out. */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/fi_errno.h>
#include <rdma/rdma_cma.h>

/* lfverbs' wire format: what the hostile peer imitates and corrupts. */
#include "lfv_rdm_proto.h"
#include "lfv_svc.h"

#define TIMEOUT_MS 20000
/* rdma_cm's private data room: a connect request's, a reply's (IB CM). */
#define REQ_PRIV 56
#define REP_PRIV 196

static int fail(const char *what)
{
	fprintf(stderr, "lfv_hostile: %s: %s\n", what, strerror(errno));
	return 1;
}

/* A work request that completed in error: its verbs status, not errno. */
static int fail_wc(const char *what, enum ibv_wc_status st)
{
	fprintf(stderr, "lfv_hostile: %s: %s\n", what, ibv_wc_status_str(st));
	return 1;
}

static int resolve(const char *ip, const char *port, struct addrinfo **ai)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };

	if (getaddrinfo(ip, port, &hints, ai)) {
		fprintf(stderr, "lfv_hostile: cannot resolve %s:%s\n", ip,
			port);
		return -1;
	}
	return 0;
}

/* The next event on the channel, or NULL after TIMEOUT_MS. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	const struct timespec step = { 0, 10 * 1000 * 1000 };
	struct rdma_cm_event *ev = NULL;
	int waited = 0;

	/* Non-blocking reads in 10 ms steps: no thread, no hang. */
	while (rdma_get_cm_event(ch, &ev)) {
		if (errno != EAGAIN || waited >= TIMEOUT_MS)
			return NULL;
		nanosleep(&step, NULL);
		waited += 10;
	}
	return ev;
}

static struct rdma_event_channel *channel_open(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	int flags;

	if (!ch)
		return NULL;
	flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK)) {
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	return ch;
}

/* A QP for the id (rdma_cm makes its CQs): accepting needs one. */
static int qp_for(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return rdma_create_qp(id, NULL, &attr);
}

static int cm_accept_oversize(const char *ip, const char *port)
{
	struct rdma_event_channel *ch = channel_open();
	struct rdma_cm_id *listener = NULL, *id;
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	uint8_t priv[REP_PRIV];
	int ret = 1;

	if (!ch || resolve(ip, port, &ai))
		return fail("setup");
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_addr) || rdma_listen(listener, 4))
		return fail("listen");
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return fail("no connection request");
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (qp_for(id))
		return fail("rdma_create_qp");
	memset(priv, 0x5a, sizeof(priv));
	priv[0] = REP_PRIV - 1;		/* lfverbs carries 55 at most */
	param.private_data = priv;
	param.private_data_len = sizeof(priv);
	if (rdma_accept(id, &param))
		return fail("rdma_accept");
	/* lfverbs must end the connection it cannot trust. */
	while ((ev = next_event(ch))) {
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_DISCONNECTED) {
			ret = 0;
			break;
		}
	}
	if (ret)
		fprintf(stderr, "lfv_hostile: lfverbs kept the connection\n");
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	return ret;
}

static int cm_connect_oversize(const char *ip, const char *port)
{
	struct rdma_event_channel *ch = channel_open();
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .rnr_retry_count = 7 };
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	uint8_t priv[REQ_PRIV];
	enum rdma_cm_event_type type;

	if (!ch || resolve(ip, port, &ai))
		return fail("setup");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, ai->ai_addr, TIMEOUT_MS))
		return fail("rdma_resolve_addr");
	freeaddrinfo(ai);
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return fail("address");
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, TIMEOUT_MS))
		return fail("rdma_resolve_route");
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return fail("route");
	rdma_ack_cm_event(ev);
	if (qp_for(id))
		return fail("rdma_create_qp");
	memset(priv, 0xa5, sizeof(priv));
	priv[0] = 0xff;			/* more than the request holds */
	param.private_data = priv;
	param.private_data_len = sizeof(priv);
	if (rdma_connect(id, &param))
		return fail("rdma_connect");
	ev = next_event(ch);
	if (!ev)
		return fail("no answer");
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	if (type != RDMA_CM_EVENT_REJECTED) {
		fprintf(stderr, "lfv_hostile: wanted a rejection, got %s\n",
			rdma_event_str(type));
		return 1;
	}
	return 0;
}

/* ---- RDM handshakes over UD ---------------------------------------------- */

#define UD_QPS_MAX 64
#define UD_BUF 256
/* Datagrams may be lost (soft-RoCE drops UD packets when busy-polling
 * processes starve it: run-hostile.sh runs the victims niced), so each case
 * sends its datagrams in rounds, 50 ms apart, and the victim checks lower
 * bounds. */
#define ROUNDS 8

static void pause_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000 },
		  NULL);
}

struct ud {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* sends */
	struct ibv_cq *rcq;		/* receives */
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	struct ibv_qp *qp[UD_QPS_MAX];
	int nqp;
	union ibv_gid gid;		/* ours: GID index 0 */
	enum ibv_mtu mtu;		/* our port's active MTU */
	uint8_t buf[UD_BUF];
};

static int hex_name(const char *hex, struct lfv_ud_name *n)
{
	uint8_t *p = (uint8_t *)n;
	size_t i;
	unsigned v;

	if (strlen(hex) != 2 * sizeof(*n))
		return -1;
	for (i = 0; i < sizeof(*n); i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		p[i] = (uint8_t)v;
	}
	return 0;
}

static struct ibv_context *open_device(void)
{
	const char *want = getenv("LFV_BED_DEV");
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i] && !ctx; i++)
		if (!want || !*want ||
		    !strcmp(ibv_get_device_name(list[i]), want))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static int ud_qp_add(struct ud *u)
{
	struct ibv_qp_init_attr init = {
		.send_cq = u->cq, .recv_cq = u->rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qkey = RDMA_UDP_QKEY };
	struct ibv_qp *qp;

	if (u->nqp == UD_QPS_MAX)
		return -1;
	qp = ibv_create_qp(u->pd, &init);
	if (!qp)
		return -1;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	attr.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		return -1;
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	u->qp[u->nqp++] = qp;
	return 0;
}

static int ud_open(struct ud *u, const struct lfv_ud_name *victim)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 0, .hop_limit = 64 } };
	struct ibv_port_attr port;

	memset(u, 0, sizeof(*u));
	u->ctx = open_device();
	if (!u->ctx)
		return fail("no device");
	u->pd = ibv_alloc_pd(u->ctx);
	u->cq = u->pd ? ibv_create_cq(u->ctx, 64, NULL, NULL, 0) : NULL;
	u->rcq = u->cq ? ibv_create_cq(u->ctx, 64, NULL, NULL, 0) : NULL;
	u->mr = u->rcq ? ibv_reg_mr(u->pd, u->buf, sizeof(u->buf),
				   IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!u->mr || ibv_query_gid(u->ctx, 1, 0, &u->gid) ||
	    ibv_query_port(u->ctx, 1, &port))
		return fail("verbs objects");
	u->mtu = port.active_mtu;
	memcpy(ah.grh.dgid.raw, victim->gid, 16);
	u->ah = ibv_create_ah(u->pd, &ah);
	if (!u->ah || ud_qp_add(u))
		return fail("UD QP");
	return 0;
}

/* Sends len bytes of u->buf from QP i to the victim's control QP. */
static int ud_send(struct ud *u, int i, const struct lfv_ud_name *victim,
		   size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)u->buf,
			       .length = (uint32_t)len, .lkey = u->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = u->ah, .remote_qpn = victim->qpn,
			   .remote_qkey = RDMA_UDP_QKEY },
	}, *bad;
	struct ibv_wc wc;
	int n, tries = 0;

	if (ibv_post_send(u->qp[i], &wr, &bad))
		return fail("ibv_post_send");
	while (!(n = ibv_poll_cq(u->cq, 1, &wc)) && tries++ < 1000000)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		return fail("send completion");
	pause_ms(2);	/* rxe drops what its receiver has no buffer for */
	return 0;
}

/* The victim's eager size, which a handshake must announce: its
 * parameter, as the run sets it for both (lfverbs' default otherwise). */
static uint32_t victim_eager(void)
{
	const char *s = getenv("FI_LFVERBS_RDM_EAGER");

	return s ? (uint32_t)strtoul(s, NULL, 0) : 16384;
}

/* A well-formed REQ or REP as QP i of u would send it. */
static struct lfv_rdm_ctrl ctrl_of(const struct ud *u, int i, uint8_t op)
{
	struct lfv_rdm_ctrl m = {
		.op = op, .version = LFV_RDM_WIRE_VERSION,
		.qpn = u->qp[i]->qp_num + 1000, .psn = 1,
		.eager = victim_eager(),
		.incarnation = 0x686f7374696c65ULL + (uint64_t)i,
		.name = { .qpn = u->qp[i]->qp_num, .qkey = RDMA_UDP_QKEY },
		.mtu = (uint8_t)u->mtu,
	};

	memcpy(m.name.gid, u->gid.raw, 16);
	return m;
}

static int send_ctrl(struct ud *u, int i, const struct lfv_ud_name *victim,
		     const struct lfv_rdm_ctrl *m, size_t len)
{
	memcpy(u->buf, m, len < sizeof(*m) ? len : sizeof(*m));
	return ud_send(u, i, victim, len);
}

/* Two truncated datagrams, one of another version, one of another eager
 * size, five malformed (an unknown op twice, a service's name, an MTU
 * of 0 and one past IBV_MTU_4096). */
static int bad_ctrl_round(struct ud *u, const struct lfv_ud_name *victim)
{
	struct lfv_rdm_ctrl m = ctrl_of(u, 0, LFV_RDM_CTRL_REQ);

	if (send_ctrl(u, 0, victim, &m, 1) ||
	    send_ctrl(u, 0, victim, &m, sizeof(m) - 8))
		return 1;
	m.version = LFV_RDM_WIRE_VERSION + 1;
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	m = ctrl_of(u, 0, LFV_RDM_CTRL_REQ);
	m.eager *= 2;
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	m = ctrl_of(u, 0, 0);
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	m = ctrl_of(u, 0, 0xff);
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	m = ctrl_of(u, 0, LFV_RDM_CTRL_REQ);
	m.name.flags = LFV_UD_NAME_SERVICE;
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	/* A REQ must say its MTU, one that verbs knows (1 to 5). */
	m = ctrl_of(u, 0, LFV_RDM_CTRL_REQ);
	m.mtu = 0;
	if (send_ctrl(u, 0, victim, &m, sizeof(m)))
		return 1;
	m.mtu = LFV_RDM_MTU_MAX + 1;
	return send_ctrl(u, 0, victim, &m, sizeof(m));
}

static int rdm_bad_ctrl(const char *victim_hex)
{
	struct lfv_ud_name victim;
	struct ud u;
	int k;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (ud_open(&u, &victim))
		return 1;
	for (k = 0; k < ROUNDS; k++, pause_ms(50))
		if (bad_ctrl_round(&u, &victim))
			return 1;
	printf("sent %d truncated, %d version or eager size, %d malformed\n",
	       2 * ROUNDS, 2 * ROUNDS, 5 * ROUNDS);
	return 0;
}

static int rdm_flood(const char *victim_hex, int n)
{
	struct lfv_ud_name victim;
	struct lfv_rdm_ctrl m;
	struct ud u;
	int i, k;

	if (hex_name(victim_hex, &victim) || n < 1 || n > UD_QPS_MAX)
		return fail("bad arguments");
	if (ud_open(&u, &victim))
		return 1;
	for (i = 1; i < n; i++)
		if (ud_qp_add(&u))
			return fail("UD QPs");
	for (k = 0; k < ROUNDS; k++, pause_ms(50)) {
		for (i = 0; i < n; i++) {
			m = ctrl_of(&u, i, LFV_RDM_CTRL_REQ);
			if (send_ctrl(&u, i, &victim, &m, sizeof(m)))
				return 1;
		}
	}
	printf("sent %d rounds of requests from %d new names\n", ROUNDS, n);
	return 0;
}

/* ---- a hostile RDM peer: a real handshake, then raw RC messages ------------ */

#define RC_BUF (256 * 1024)

struct rc_peer {
	struct ud u;			/* control QP: u.qp[0] */
	struct ibv_qp *qp;		/* RC, connected to the victim's */
	struct ibv_mr *mr;
	uint8_t *buf;
	uint32_t victim_qpn;		/* its RC QP, from its REP */
	};

/* Posts a receive for one datagram on u.qp[0]. */
static int ud_post_recv(struct ud *u, struct ibv_mr *mr, uint8_t *slot,
			size_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)slot,
			       .length = (uint32_t)len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(u->qp[0], &wr, &bad) ? fail("ibv_post_recv") : 0;
}

/* Whether the posted receive completed within ms. */
static bool ud_received(struct ud *u, int ms)
{
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(u->rcq, 1, &wc)) && ms-- > 0)
		pause_ms(1);
	return n == 1 && wc.status == IBV_WC_SUCCESS;
}

static int rc_qp_create(struct rc_peer *p)
{
	struct ibv_qp_init_attr init = {
		.send_cq = p->u.cq, .recv_cq = p->u.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};

	p->qp = ibv_create_qp(p->u.pd, &init);
	if (!p->qp || ibv_modify_qp(p->qp, &attr, IBV_QP_STATE |
				     IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS))
		return fail("RC QP");
	return 0;
}

static int rc_qp_connect(struct rc_peer *p, const struct lfv_ud_name *victim,
			 uint32_t qpn, uint32_t psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.dest_qp_num = qpn, .rq_psn = psn, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = 0, .hop_limit = 64 } },
	};

	/* The MTU our REQ or REP said, which is our port's: lfverbs' QP
	 * takes the smaller of its port's and ours, so this is the same on
	 * one bed (a first or middle packet of a write longer than the
	 * responder QP's MTU is refused). */
	attr.path_mtu = p->u.mtu;
	memcpy(attr.ah_attr.grh.dgid.raw, victim->gid, 16);
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 1;
	/* As lfverbs' own RC QPs: a loaded bed (a victim under ASan, two
	 * busy-polling processes on its two vCPUs) may answer late or have
	 * no receive posted for a moment; a peer that gave up after one
	 * retry would fail for that, not for what the victim did. */
	attr.timeout = 14;
	attr.retry_cnt = 6;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("RTS");
	return 0;
}

/* Sends len bytes of p->buf on the RC QP; waits for its completion (which
 * may be an error: the victim may end the connection). */
/* Posts wr (signaled) on p's RC QP and waits for its completion: its
 * status in *st. what names it in a failure. */
static int rc_post_wait(struct rc_peer *p, struct ibv_send_wr *wr,
			const char *what, enum ibv_wc_status *st)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int waited = 0, n;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(p->qp, wr, &bad))
		return fail(what);
	while (!(n = ibv_poll_cq(p->u.cq, 1, &wc)) && waited < TIMEOUT_MS) {
		pause_ms(1);
		waited++;
	}
	if (n != 1) {
		fprintf(stderr, "lfv_hostile: no completion of the %s\n", what);
		return 1;
	}
	*st = wc.status;
	return 0;
}

static int rc_send(struct rc_peer *p, size_t len, enum ibv_wc_status *st)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf,
			       .length = (uint32_t)len, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };

	return rc_post_wait(p, &wr, "RC send", st);
}

/* An RDMA write of len bytes from p->buf + off to raddr under rkey. */
static int rc_write(struct rc_peer *p, size_t off, size_t len,
		    uint64_t raddr, uint32_t rkey, enum ibv_wc_status *st)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + off,
			       .length = (uint32_t)len, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 4, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { .remote_addr = raddr,
					       .rkey = rkey } };

	return rc_post_wait(p, &wr, "RC write", st);
}

/* A handshake as lfverbs' requester: REQ, REP, RTR/RTS, RTU. */
static int rc_peer_open(struct rc_peer *p, const struct lfv_ud_name *victim)
{
	struct lfv_rdm_ctrl m;
	struct lfv_rdm_hdr rtu = { .op = LFV_RDM_RTU };
	enum ibv_wc_status st;
	int tries;

	memset(p, 0, sizeof(*p));
	if (ud_open(&p->u, victim) || rc_qp_create(p))
		return 1;
	p->buf = calloc(1, RC_BUF);
	p->mr = p->buf ? ibv_reg_mr(p->u.pd, p->buf, RC_BUF,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!p->mr)
		return fail("RC buffer");
	m = ctrl_of(&p->u, 0, LFV_RDM_CTRL_REQ);
	m.qpn = p->qp->qp_num;
	m.psn = 1;
	/* The REP comes to the buffer after the GRH; the REQ is resent
	 * until it does (datagrams may be lost). */
	if (ud_post_recv(&p->u, p->mr, p->buf, 40 + sizeof(m)))
		return 1;
	for (tries = 0; tries < 100; tries++) {
		if (send_ctrl(&p->u, 0, victim, &m, sizeof(m)))
			return 1;
		if (ud_received(&p->u, 100))
			break;
	}
	if (tries == 100) {
		fprintf(stderr, "lfv_hostile: no answer to %d REQs\n", tries);
		return 1;
	}
	memcpy(&m, p->buf + 40, sizeof(m));
	if (m.op != LFV_RDM_CTRL_REP) {
		fprintf(stderr, "lfv_hostile: the answer to a REQ is op %u, "
			"not a REP\n", m.op);
		return 1;
	}
	if (rc_qp_connect(p, victim, m.qpn, m.psn))
		return 1;
	p->victim_qpn = m.qpn;
	memcpy(p->buf, &rtu, sizeof(rtu));
	if (rc_send(p, sizeof(rtu), &st))
		return 1;
	if (st != IBV_WC_SUCCESS)
		return fail_wc("RTU", st);
	return 0;
}

static void rc_peer_close(struct rc_peer *p)
{
	ibv_destroy_qp(p->qp);
	ibv_dereg_mr(p->mr);
	free(p->buf);
	while (p->u.nqp)
		ibv_destroy_qp(p->u.qp[--p->u.nqp]);
	ibv_destroy_ah(p->u.ah);
	ibv_dereg_mr(p->u.mr);
	ibv_destroy_cq(p->u.rcq);
	ibv_destroy_cq(p->u.cq);
	ibv_dealloc_pd(p->u.pd);
	ibv_close_device(p->u.ctx);
}

/* Forged handshake datagrams from a peer whose own handshake went through
 * first (so its datagrams are known to reach the victim: in the test bed
 * the first raw datagrams of a process were seen lost, all of them), each
 * naming OTHER, a connected peer: a REQ of a restarted OTHER, which would
 * tear its connection down, and a REP, which would redirect it. */
static int rdm_forged(const char *victim_hex, const char *other_hex)
{
	struct lfv_ud_name victim, other;
	struct lfv_rdm_ctrl m;
	struct rc_peer p;
	int k;

	if (hex_name(victim_hex, &victim) || hex_name(other_hex, &other))
		return fail("bad names");
	if (rc_peer_open(&p, &victim))
		return 1;
	for (k = 0; k < ROUNDS; k++, pause_ms(50)) {
		m = ctrl_of(&p.u, 0, LFV_RDM_CTRL_REQ);
		m.name = other;
		m.incarnation ^= (uint64_t)k << 32;
		if (send_ctrl(&p.u, 0, &victim, &m, sizeof(m)))
			return 1;
		m.op = LFV_RDM_CTRL_REP;
		if (send_ctrl(&p.u, 0, &victim, &m, sizeof(m)))
			return 1;
	}
	rc_peer_close(&p);
	printf("sent %d forged handshake datagrams\n", 2 * ROUNDS);
	return 0;
}

/* A liveness datagram (wire version 5) of p's connection. */
static struct lfv_rdm_ctrl live_of(const struct rc_peer *p, uint8_t op,
				   uint32_t nonce)
{
	struct lfv_rdm_ctrl m = ctrl_of(&p->u, 0, op);

	m.qpn = p->qp->qp_num;
	m.psn = nonce;
	return m;
}

/* Sends ping until an answer with its nonce comes (datagrams may be
 * lost; REPs the victim repeated are skipped); its op, or 0. */
static uint8_t live_ask(struct rc_peer *p, const struct lfv_ud_name *victim,
			const struct lfv_rdm_ctrl *ping)
{
	uint8_t *slot = p->buf + RC_BUF - 256;
	struct lfv_rdm_ctrl a;
	int tries;

	for (tries = 0; tries < 50; tries++) {
		if (ud_post_recv(&p->u, p->mr, slot, 40 + sizeof(a)) ||
		    send_ctrl(&p->u, 0, victim, ping, sizeof(*ping)))
			return 0;
		while (ud_received(&p->u, 100)) {
			memcpy(&a, slot + 40, sizeof(a));
			if (a.psn == ping->psn &&
			    (a.op == LFV_RDM_CTRL_GONE ||
			     (a.op == LFV_RDM_CTRL_PONG &&
			      a.qpn == p->victim_qpn)))
				return a.op;
			if (ud_post_recv(&p->u, p->mr, slot, 40 + sizeof(a)))
				return 0;
		}
	}
	return 0;
}

/* Liveness datagrams from a peer connected by a real handshake, each
 * round: a PONG and a GONE that nobody asked for (ignored: the victim
 * asked nothing), a PING naming OTHER (a connected peer) as its sender
 * (forged: dropped, counted), then PINGs of our own: for our connection
 * the victim must answer PONG with our nonce, for another incarnation of
 * ours GONE; the unasked GONE did not take our connection down. */
static int rdm_live(const char *victim_hex, const char *other_hex)
{
	struct lfv_ud_name victim, other;
	struct lfv_rdm_ctrl m;
	struct rc_peer p;
	int k, pongs = 0, gones = 0;

	if (hex_name(victim_hex, &victim) || hex_name(other_hex, &other))
		return fail("bad names");
	if (rc_peer_open(&p, &victim))
		return 1;
	for (k = 0; k < ROUNDS; k++, pause_ms(50)) {
		m = live_of(&p, LFV_RDM_CTRL_PONG, 0x5000u + (uint32_t)k);
		if (send_ctrl(&p.u, 0, &victim, &m, sizeof(m)))
			return 1;
		m.op = LFV_RDM_CTRL_GONE;
		if (send_ctrl(&p.u, 0, &victim, &m, sizeof(m)))
			return 1;
		m = live_of(&p, LFV_RDM_CTRL_PING, 0x6000u + (uint32_t)k);
		m.name = other;
		if (send_ctrl(&p.u, 0, &victim, &m, sizeof(m)))
			return 1;
		m = live_of(&p, LFV_RDM_CTRL_PING, 0x7000u + (uint32_t)k);
		pongs += live_ask(&p, &victim, &m) == LFV_RDM_CTRL_PONG;
		m.incarnation ^= 1;
		m.psn = 0x8000u + (uint32_t)k;
		gones += live_ask(&p, &victim, &m) == LFV_RDM_CTRL_GONE;
	}
	rc_peer_close(&p);
	printf("%d rounds: %d PONGs, %d GONEs to our PINGs\n", ROUNDS, pongs,
	       gones);
	return pongs == ROUNDS && gones == ROUNDS ? 0 :
	       fail("a PING was not answered as it must be");
}

static int rdm_oversize(const char *victim_hex, int n, size_t bytes)
{
	struct lfv_ud_name victim;
	struct rc_peer p;
	enum ibv_wc_status st;
	struct lfv_rdm_hdr h = { .op = LFV_RDM_EAGER_MSG };
	int i, failed = 0;

	if (hex_name(victim_hex, &victim) || bytes < sizeof(h) ||
	    bytes > RC_BUF)
		return fail("bad arguments");
	for (i = 0; i < n; i++) {
		if (rc_peer_open(&p, &victim))
			return 1;
		h.len = (uint32_t)(bytes - sizeof(h));
		memcpy(p.buf, &h, sizeof(h));
		if (rc_send(&p, bytes, &st))
			return 1;
		failed += st != IBV_WC_SUCCESS;
		rc_peer_close(&p);
	}
	printf("sent %d oversized messages (%d failed at the victim)\n", n,
	       failed);
	return 0;
}

static int rdm_fin(const char *victim_hex, long ms)
{
	struct lfv_ud_name victim;
	struct lfv_rdm_hdr h = { .op = LFV_RDM_FIN };
	struct rc_peer p;
	enum ibv_wc_status st;
	struct timespec t0, t;
	long sent = 0, elapsed = 0;
	uint64_t idx, gen;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (rc_peer_open(&p, &victim))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed < ms) {
		for (gen = 1; gen <= 1000; gen++) {
			for (idx = 0; idx < 8; idx++) {
				h.tag = idx | gen << 32;
				memcpy(p.buf, &h, sizeof(h));
				if (rc_send(&p, sizeof(h), &st))
					return 1;
				/* The victim may be done and gone. */
				if (st != IBV_WC_SUCCESS)
					goto done;
				sent++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (t.tv_sec - t0.tv_sec) * 1000 +
			  (t.tv_nsec - t0.tv_nsec) / 1000000;
	}
done:
	rc_peer_close(&p);
	printf("sent %ld guessed FINs\n", sent);
	return sent ? 0 : fail("no FIN went out");
}

/* ---- messages on an RDM connection -------------------------------------- */

/* Receive slots for what the victim sends on the RC QP (FIN, RTS, ASK),
 * at the end of p->buf; the rest of it is the hostile's send buffer. */
#define RC_SLOTS 8
#define RC_SLOT 256
#define RC_SLOT_AT(i) (RC_BUF - (size_t)(RC_SLOTS - (i)) * RC_SLOT)

static int rc_post_slot(struct rc_peer *p, int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + RC_SLOT_AT(i),
			       .length = RC_SLOT, .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(p->qp, &wr, &bad) ? fail("RC receive") : 0;
}

static int rc_post_slots(struct rc_peer *p)
{
	int i;

	for (i = 0; i < RC_SLOTS; i++)
		if (rc_post_slot(p, i))
			return 1;
	return 0;
}

/* The next message the victim sent on the RC QP, within ms: its header in
 * *h and its payload (up to 64 bytes) in payload; 1 when none came. */
static int rc_next(struct rc_peer *p, long ms, struct lfv_rdm_hdr *h,
		   uint8_t payload[64])
{
	struct ibv_wc wc;
	const uint8_t *slot;
	int i, n;

	while (!(n = ibv_poll_cq(p->u.rcq, 1, &wc)) && ms-- > 0)
		pause_ms(1);
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id < 100 ||
	    wc.byte_len < sizeof(*h))
		return 1;
	i = (int)(wc.wr_id - 100);
	slot = p->buf + RC_SLOT_AT(i);
	memcpy(h, slot, sizeof(*h));
	memcpy(payload, slot + sizeof(*h), 64);
	return rc_post_slot(p, i) ? -1 : 0;
}

/* An RDMA write with immediate data of no bytes (no key needed): it takes
 * a receive buffer of the victim's SRQ and carries no message. */
static int rc_write_imm(struct rc_peer *p, enum ibv_wc_status *st)
{
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .imm_data = htobe32(0x686f), };

	return rc_post_wait(p, &wr, "RC write with immediate", st);
}

/* Sends a header with len payload bytes (from payload, or zeros); its
 * completion's status in *st. */
static int rc_post_msg(struct rc_peer *p, const struct lfv_rdm_hdr *h,
		       const void *payload, size_t len, enum ibv_wc_status *st)
{
	memcpy(p->buf, h, sizeof(*h));
	if (payload)
		memcpy(p->buf + sizeof(*h), payload, len);
	else
		memset(p->buf + sizeof(*h), 0, len);
	return rc_send(p, sizeof(*h) + len, st);
}

/* The same, which must complete without error. */
static int rc_send_msg(struct rc_peer *p, const struct lfv_rdm_hdr *h,
		       const void *payload, size_t len)
{
	enum ibv_wc_status st;

	if (rc_post_msg(p, h, payload, len, &st))
		return 1;
	return st == IBV_WC_SUCCESS ? 0 : fail_wc("RC send", st);
}

/* A rendezvous request for len bytes at p->buf + 4096 (readable). */
static int rc_send_rts(struct rc_peer *p, uint64_t len, uint64_t cookie)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_RTS_MSG,
				 .len = sizeof(struct lfv_rdm_rts) };
	struct lfv_rdm_rts rts = {
		.len = len, .addr = (uintptr_t)p->buf + 4096,
		.rkey = p->mr->rkey, .cookie = cookie,
	};

	return rc_send_msg(p, &h, &rts, sizeof(rts));
}

/* A segmented message's first segment: total, then n bytes (zeros).
 * Tagged, with a tag the victim never receives: a broken message that
 * took one of its (untagged) receives would fail that receive (FI_EIO),
 * which the victim counts as a failure of its own. */
static int rc_send_sar(struct rc_peer *p, uint64_t total, size_t n)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_SAR_TAG, .tag = 0x5a5a,
				 .len = (uint32_t)(sizeof(struct lfv_rdm_sar) +
						   n) };
	uint8_t body[sizeof(struct lfv_rdm_sar) + 64] = { 0 };
	struct lfv_rdm_sar first = { .total = total };

	memcpy(body, &first, sizeof(first));
	return rc_send_msg(p, &h, body, sizeof(first) + n);
}

/* A segment of n bytes (zeros) at offset off. */
static int rc_send_seg(struct rc_peer *p, uint64_t off, size_t n)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_SEG, .len = (uint32_t)n,
				 .tag = off };

	return rc_send_msg(p, &h, NULL, n);
}

/* Segmented messages that break their rules, five drops (MALFORMED): a
 * segment with no message under way; a first segment whose total is past
 * max_msg_size, and one whose total is its own payload; a first segment
 * while a message is under way (the one under way is dropped), then a
 * segment at the wrong offset (the new one is dropped). None of them
 * reaches a receive: the one first segment that is right waits
 * unexpected, gathered in a copy, until it is dropped. */
static int bad_sar_round(struct rc_peer *p)
{
	return rc_send_seg(p, 0, 16) ||
	       rc_send_sar(p, 1ULL << 50, 16) ||
	       rc_send_sar(p, 16, 16) ||
	       rc_send_sar(p, 64, 16) ||
	       rc_send_sar(p, 64, 16) ||
	       rc_send_seg(p, 0, 16);
}

/* Each round: an RDMA write with immediate data, a message of an unknown
 * op, one whose length field lies, a FIN with a payload, a HELD nobody
 * asked for, the segmented messages of bad_sar_round, and a rendezvous
 * longer than any receive, which the victim must refuse at once (a FIN
 * flagged ERR saying FI_EMSGSIZE). */
static int rdm_bad_msg(const char *victim_hex)
{
	struct lfv_ud_name victim;
	struct lfv_rdm_hdr h, got;
	uint8_t payload[64];
	enum ibv_wc_status st;
	struct rc_peer p;
	int k, refused = 0;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (rc_peer_open(&p, &victim) || rc_post_slots(&p))
		return 1;
	for (k = 0; k < ROUNDS; k++) {
		if (rc_write_imm(&p, &st))
			return 1;
		if (st != IBV_WC_SUCCESS)
			return fail_wc("write with immediate data", st);
		h = (struct lfv_rdm_hdr){ .op = 0x7f };
		if (rc_send_msg(&p, &h, NULL, 0))
			return 1;
		h = (struct lfv_rdm_hdr){ .op = LFV_RDM_EAGER_MSG, .len = 4000 };
		if (rc_send_msg(&p, &h, NULL, 40))
			return 1;
		h = (struct lfv_rdm_hdr){ .op = LFV_RDM_FIN, .len = 8 };
		if (rc_send_msg(&p, &h, NULL, 8))
			return 1;
		h = (struct lfv_rdm_hdr){ .op = LFV_RDM_HELD, .tag = 1ULL << 32 };
		if (rc_send_msg(&p, &h, NULL, 0))
			return 1;
		if (bad_sar_round(&p))
			return 1;
		if (rc_send_rts(&p, 1ULL << 50, 0x5eed + (uint64_t)k))
			return 1;
		if (!rc_next(&p, 5000, &got, payload) &&
		    got.op == LFV_RDM_FIN && (got.flags & LFV_RDM_HDR_ERR) &&
		    got.reserved == FI_EMSGSIZE && got.tag == 0x5eed + (uint64_t)k)
			refused++;
	}
	rc_peer_close(&p);
	printf("sent %d rounds of bad messages; %d oversized rendezvous "
	       "refused\n", ROUNDS, refused);
	return refused == ROUNDS ? 0 : fail("a rendezvous was not refused");
}

/* Opens p and sends a rendezvous the victim server reads and echoes back
 * to us (our name leads the payload), by rendezvous: the victim's FIN and
 * RTS arrive within ms; the cookie of that RTS in *cookie. */
static int rndv_echo_start(struct rc_peer *p, const struct lfv_ud_name *victim,
			   long ms, uint64_t *cookie)
{
	struct lfv_ud_name me;
	struct lfv_rdm_hdr got;
	struct lfv_rdm_rts rts;
	uint8_t payload[64];
	int fins = 0;

	if (rc_peer_open(p, victim) || rc_post_slots(p))
		return 1;
	me = ctrl_of(&p->u, 0, LFV_RDM_CTRL_REQ).name;
	memset(p->buf + 4096, 0x5a, 20000);
	memcpy(p->buf + 4096, &me, sizeof(me));
	if (rc_send_rts(p, 20000, 1))
		return 1;
	for (; ms > 0; ms -= 100) {
		if (rc_next(p, 100, &got, payload))
			continue;
		fins += got.op == LFV_RDM_FIN;
		if (got.op == LFV_RDM_RTS_MSG) {
			memcpy(&rts, payload, sizeof(rts));
			*cookie = rts.cookie;
			return fins == 1 ? 0 : fail("no FIN before the echo");
		}
	}
	return fail("no echo by rendezvous");
}

/* The victim's echo is a rendezvous to us, which we never answer: no FIN,
 * no HELD. The victim must ask (ASK) and then fail that send on its own;
 * we count its questions for ms. */
static int rdm_no_fin(const char *victim_hex, long ms)
{
	struct lfv_ud_name victim;
	struct lfv_rdm_hdr got;
	uint8_t payload[64];
	struct rc_peer p;
	uint64_t cookie;
	int asks = 0;
	long left;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (rndv_echo_start(&p, &victim, 5000, &cookie))
		return 1;
	for (left = ms; left > 0; left -= 100)
		if (!rc_next(&p, 100, &got, payload))
			asks += got.op == LFV_RDM_ASK && got.tag == cookie;
	rc_peer_close(&p);
	printf("the victim asked %d times about its rendezvous, never "
	       "answered\n", asks);
	return asks >= 1 ? 0 : fail("no question");
}

/* The victim's echo is a rendezvous to us, whose cookie we now know: a
 * FIN for it from another connection (a second peer of ours), and a HELD
 * nobody asked for, must both be refused (FORGED); then our real FIN
 * finishes the victim's send, once, though it comes twice. */
static int rdm_fin_forged(const char *victim_hex)
{
	struct lfv_rdm_hdr fin = { .op = LFV_RDM_FIN };
	struct lfv_rdm_hdr held = { .op = LFV_RDM_HELD };
	struct lfv_ud_name victim;
	struct rc_peer p, other;
	uint64_t cookie;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (rndv_echo_start(&p, &victim, 5000, &cookie) ||
	    rc_peer_open(&other, &victim))
		return 1;
	fin.tag = held.tag = cookie;
	if (rc_send_msg(&other, &fin, NULL, 0) ||
	    rc_send_msg(&p, &held, NULL, 0))
		return 1;
	pause_ms(200);
	/* The real FIN, twice: the send must complete once (a second
	 * completion would reach the server's next receive wait). */
	if (rc_send_msg(&p, &fin, NULL, 0) || rc_send_msg(&p, &fin, NULL, 0))
		return 1;
	pause_ms(200);
	rc_peer_close(&other);
	rc_peer_close(&p);
	printf("sent a FIN from another peer and an unasked HELD for cookie "
	       "%llx, then the FIN twice\n", (unsigned long long)cookie);
	return 0;
}

/* Waits up to ms for a completion in error on p's receive side: its QP
 * went to the error state (a read the victim made of it failed) and its
 * receives flushed. */
static bool rc_failed(struct rc_peer *p, long ms)
{
	struct ibv_wc wc;
	int n;

	for (; ms > 0; ms--) {
		while ((n = ibv_poll_cq(p->u.rcq, 1, &wc)) == 1)
			if (wc.status != IBV_WC_SUCCESS)
				return true;
		pause_ms(1);
	}
	return false;
}

/* An RTS header (of body_len bytes, what h.len says) and body. One whose
 * read fails (unreadable) may complete flushed: the victim's read of it
 * puts our QP in the error state, and can come before our device has
 * taken the acknowledgement of this send (seen across the two nodes, in
 * one run of three). */
static int rc_send_rts_body(struct rc_peer *p, const struct lfv_rdm_rts *rts,
			    size_t body_len, bool unreadable)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_RTS_MSG,
				 .len = (uint32_t)body_len };
	uint8_t body[sizeof(*rts) + 8] = { 0 };
	enum ibv_wc_status st;

	memcpy(body, rts, body_len < sizeof(*rts) ? body_len : sizeof(*rts));
	if (rc_post_msg(p, &h, body, body_len, &st))
		return 1;
	if (st == IBV_WC_SUCCESS ||
	    (unreadable && st == IBV_WC_WR_FLUSH_ERR))
		return 0;
	return fail_wc("RC send of an RTS", st);
}

/* A send of round k failed: says which, and what our receive side holds
 * (an error there says why our QP went to the error state). */
static int bad_rts_failed(struct rc_peer *p, int k, const char *what)
{
	struct ibv_wc wc;

	fprintf(stderr, "lfv_hostile: round %d, %s failed\n", k, what);
	while (ibv_poll_cq(p->u.rcq, 1, &wc) == 1)
		fprintf(stderr, "lfv_hostile: received: %s, opcode %d, %u "
			"bytes\n", ibv_wc_status_str(wc.status), wc.opcode,
			wc.byte_len);
	return 1;
}

/* Each round, on a fresh connection: an RTS cut short and one with bytes
 * past it (the header's length disagrees with what an RTS is), one whose
 * buffer wraps past the end of the address space, which the victim must
 * refuse at once (a FIN flagged ERR saying FI_EINVAL), and one naming
 * memory outside our registration (past its end, or with a wrong key),
 * whose read our device refuses: the victim must fail that receive,
 * never complete it with data, and count it. */
static int rdm_bad_rts(const char *victim_hex)
{
	struct lfv_ud_name victim;
	struct lfv_rdm_hdr got;
	struct lfv_rdm_rts rts;
	uint8_t payload[64];
	struct rc_peer p;
	int k, refused = 0, failed = 0;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	for (k = 0; k < ROUNDS; k++) {
		if (rc_peer_open(&p, &victim) || rc_post_slots(&p))
			return 1;
		printf("round %d: UD QP %u, RC QP %u\n", k, p.u.qp[0]->qp_num,
		       p.qp->qp_num);
		memset(p.buf + 4096, 0x5a, 8192);
		rts = (struct lfv_rdm_rts){
			.len = 4096, .addr = (uintptr_t)p.buf + 4096,
			.rkey = p.mr->rkey, .cookie = 0xbad0 + (uint64_t)k,
		};
		if (rc_send_rts_body(&p, &rts, sizeof(rts) - 8, false) ||
		    rc_send_rts_body(&p, &rts, sizeof(rts) + 8, false))
			return bad_rts_failed(&p, k, "a short or long RTS");
		rts.addr = UINT64_MAX - 100;
		if (rc_send_rts_body(&p, &rts, sizeof(rts), false))
			return bad_rts_failed(&p, k, "the wrapping RTS");
		if (!rc_next(&p, 5000, &got, payload) &&
		    got.op == LFV_RDM_FIN && (got.flags & LFV_RDM_HDR_ERR) &&
		    got.reserved == FI_EINVAL && got.tag == rts.cookie)
			refused++;
		/* Past our registration's end, or inside it with another
		 * key: the victim's read fails, our QP with it. */
		rts.addr = (uintptr_t)p.buf + (k % 2 ? 4096 : RC_BUF);
		if (k % 2)
			rts.rkey ^= 0x5a;
		rts.cookie += 0x100;
		if (rc_send_rts_body(&p, &rts, sizeof(rts), true))
			return bad_rts_failed(&p, k, "the unreadable RTS");
		failed += rc_failed(&p, 5000);
		rc_peer_close(&p);
	}
	printf("sent %d rounds of bad rendezvous requests; %d wrapping ones "
	       "refused, %d reads of ours failed\n", ROUNDS, refused,
	       failed);
	return refused == ROUNDS ? 0 :
	       fail("a wrapping rendezvous was not refused");
}

/* ---- rendezvous by write (the victim runs FI_LFVERBS_RDM_RNDV_WRITE=1) --- */

#define CTS_LEN 20000		/* above the eager size: a rendezvous */
#define CTS_ECHO_AT 65536	/* where the victim is told to write its echo */

/* The next message of op the victim sends on p within ms, others skipped:
 * its header in *h, its payload in payload. */
static int rc_wait_op(struct rc_peer *p, uint8_t op, long ms,
		      struct lfv_rdm_hdr *h, uint8_t payload[64])
{
	int ret;

	for (; ms > 0; ms -= 100) {
		ret = rc_next(p, 100, h, payload);
		if (ret < 0)
			return 1;
		if (!ret && h->op == op)
			return 0;
	}
	return 1;
}

/* A rendezvous of CTS_LEN bytes (our name first, then fill) at p->buf +
 * 4096, which the victim must answer with a CTS for all of it: in *cts. */
static int cts_for_rts(struct rc_peer *p, uint64_t cookie, uint8_t fill,
		       struct lfv_rdm_cts *cts)
{
	struct lfv_ud_name me = ctrl_of(&p->u, 0, LFV_RDM_CTRL_REQ).name;
	struct lfv_rdm_hdr got;
	uint8_t payload[64];

	memset(p->buf + 4096, fill, CTS_LEN);
	memcpy(p->buf + 4096, &me, sizeof(me));
	if (rc_send_rts(p, CTS_LEN, cookie))
		return 1;
	if (rc_wait_op(p, LFV_RDM_CTS, 5000, &got, payload))
		return fail("no CTS for our rendezvous (is it read instead?)");
	memcpy(cts, payload, sizeof(*cts));
	if (got.tag != cookie || cts->len != CTS_LEN) {
		fprintf(stderr, "lfv_hostile: a CTS for cookie %llx, %llu "
			"bytes\n", (unsigned long long)got.tag,
			(unsigned long long)cts->len);
		return 1;
	}
	return 0;
}

/* Our write of the rendezvous' CTS_LEN bytes where cts asks for them. */
static int rc_write_cts(struct rc_peer *p, const struct lfv_rdm_cts *cts)
{
	enum ibv_wc_status st;

	if (rc_write(p, 4096, CTS_LEN, cts->addr, cts->rkey, &st))
		return 1;
	return st == IBV_WC_SUCCESS ? 0 :
	       fail_wc("the write the CTS asked for", st);
}

static int rc_send_wdone(struct rc_peer *p, uint64_t rcookie, uint64_t bytes)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_WDONE, .tag = rcookie,
				 .cq_data = bytes };

	return rc_send_msg(p, &h, NULL, 0);
}

/* A CTS for the victim's send of cookie: write len bytes at p->buf + off. */
static int rc_send_cts(struct rc_peer *p, uint64_t cookie, uint64_t len,
		       size_t off, uint64_t rcookie)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_CTS, .tag = cookie,
				 .len = sizeof(struct lfv_rdm_cts) };
	struct lfv_rdm_cts cts = {
		.len = len, .addr = (uintptr_t)p->buf + off,
		.rkey = p->mr->rkey, .rcookie = rcookie,
	};

	return rc_send_msg(p, &h, &cts, sizeof(cts));
}

/* The victim receives our rendezvous (cookie 1) by write. WDONEs from a
 * second connection and for an rcookie it never gave are dropped (2
 * FORGED); a write just past the bytes the CTS offered, from a third
 * connection, fails at the victim's device (its registration is those
 * bytes alone); our write, then a WDONE for one byte less than the CTS
 * offered, fails that receive (FI_EIO, 1 MALFORMED), and the same WDONE
 * again is dropped (1 FORGED). */
static int cts_receive_round(struct rc_peer *p, struct rc_peer *other,
			     struct rc_peer *spare)
{
	struct lfv_rdm_cts cts;
	enum ibv_wc_status st;

	if (cts_for_rts(p, 1, 0x11, &cts) ||
	    rc_send_wdone(other, cts.rcookie, CTS_LEN) ||
	    rc_send_wdone(p, cts.rcookie + 1000, CTS_LEN))
		return 1;
	if (rc_write(spare, 4096, 16, cts.addr + cts.len, cts.rkey, &st))
		return 1;
	if (st == IBV_WC_SUCCESS)
		return fail("a write past the CTS's bytes was taken");
	printf("a write past the CTS's bytes: %s\n", ibv_wc_status_str(st));
	if (rc_write_cts(p, &cts))
		return 1;
	return rc_send_wdone(p, cts.rcookie, CTS_LEN - 1) ||
	       rc_send_wdone(p, cts.rcookie, CTS_LEN);
}

/* The victim receives our rendezvous (cookie 2) by write, whole, and
 * echoes it to us by rendezvous: its RTS's cookie in *cookie. */
static int cts_echo_start(struct rc_peer *p, uint64_t *cookie)
{
	struct lfv_rdm_hdr got;
	struct lfv_rdm_rts rts;
	struct lfv_rdm_cts cts;
	uint8_t payload[64];

	if (cts_for_rts(p, 2, 0x22, &cts) || rc_write_cts(p, &cts) ||
	    rc_send_wdone(p, cts.rcookie, CTS_LEN))
		return 1;
	if (rc_wait_op(p, LFV_RDM_RTS_MSG, 5000, &got, payload))
		return fail("no echo by rendezvous");
	memcpy(&rts, payload, sizeof(rts));
	*cookie = rts.cookie;
	return 0;
}

/* The victim's echo (cookie) waits for our CTS. One from a second
 * connection, one for a byte more than it sends, one naming another use
 * of its request are dropped (3 FORGED); ours has it write the echo at
 * CTS_ECHO_AT, then WDONE (checked: our rcookie, all bytes, the bytes we
 * sent); the same CTS again is dropped (1 FORGED). */
static int cts_send_round(struct rc_peer *p, struct rc_peer *other,
			  uint64_t cookie)
{
	struct lfv_rdm_hdr got;
	uint8_t payload[64];

	if (rc_send_cts(other, cookie, CTS_LEN, CTS_ECHO_AT, 0x77) ||
	    rc_send_cts(p, cookie, CTS_LEN + 1, CTS_ECHO_AT, 0x77) ||
	    rc_send_cts(p, cookie ^ (1ULL << 32), CTS_LEN, CTS_ECHO_AT, 0x77) ||
	    rc_send_cts(p, cookie, CTS_LEN, CTS_ECHO_AT, 0x77))
		return 1;
	if (rc_wait_op(p, LFV_RDM_WDONE, 5000, &got, payload))
		return fail("no WDONE for our CTS");
	if (got.tag != 0x77 || got.cq_data != CTS_LEN)
		return fail("a WDONE for another rcookie or length");
	if (memcmp(p->buf + CTS_ECHO_AT, p->buf + 4096, CTS_LEN))
		return fail("the echo written is not what we sent");
	return rc_send_cts(p, cookie, CTS_LEN, CTS_ECHO_AT, 0x78);
}

/* Rendezvous by write, both ways, against a victim that runs it: its
 * receive's WDONE and its send's CTS are believed only from the
 * connection they belong to, once, for the bytes agreed, and the memory a
 * CTS offers is those bytes alone. The victim counts 7 FORGED and 1
 * MALFORMED, and one receive failed (LFV_VICTIM_RECV_ERRORS). */
static int rdm_cts(const char *victim_hex)
{
	struct lfv_ud_name victim;
	struct rc_peer p, other, spare;
	uint64_t cookie = 0;
	int ret;

	if (hex_name(victim_hex, &victim))
		return fail("bad name");
	if (rc_peer_open(&p, &victim) || rc_post_slots(&p) ||
	    rc_peer_open(&other, &victim) || rc_peer_open(&spare, &victim))
		return 1;
	ret = cts_receive_round(&p, &other, &spare) ||
	      cts_echo_start(&p, &cookie) ||
	      cts_send_round(&p, &other, cookie);
	pause_ms(200);
	rc_peer_close(&spare);
	rc_peer_close(&other);
	rc_peer_close(&p);
	if (!ret)
		printf("rendezvous by write: forged WDONEs and CTSs sent, a "
		       "write past a CTS refused, the echo written whole\n");
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "cm-accept-oversize"))
		return cm_accept_oversize(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "cm-connect-oversize"))
		return cm_connect_oversize(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "rdm-forged"))
		return rdm_forged(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "rdm-live"))
		return rdm_live(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "rdm-bad-ctrl"))
		return rdm_bad_ctrl(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "rdm-flood"))
		return rdm_flood(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "rdm-fin"))
		return rdm_fin(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "rdm-bad-msg"))
		return rdm_bad_msg(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "rdm-no-fin"))
		return rdm_no_fin(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "rdm-fin-forged"))
		return rdm_fin_forged(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "rdm-bad-rts"))
		return rdm_bad_rts(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "rdm-cts"))
		return rdm_cts(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "rdm-oversize"))
		return rdm_oversize(argv[2], atoi(argv[3]),
				    (size_t)atol(argv[4]));
	fprintf(stderr, "usage: lfv_hostile cm-accept-oversize IP PORT | "
		"cm-connect-oversize IP PORT | rdm-forged VICTIM OTHER | "
		"rdm-bad-ctrl VICTIM | rdm-flood VICTIM N | "
		"rdm-oversize VICTIM N BYTES | rdm-fin VICTIM MS | "
		"rdm-bad-msg VICTIM | rdm-no-fin VICTIM MS | "
		"rdm-fin-forged VICTIM | rdm-bad-rts VICTIM | "
		"rdm-cts VICTIM | rdm-live VICTIM OTHER\n");
	return 2;
}
