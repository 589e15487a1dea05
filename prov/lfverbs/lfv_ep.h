/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Endpoints over ibverbs queue pairs: MSG on RC (connected with rdma_cm),
 * DGRAM on UD (address handles from the AV). The queues are in
 * lfv_queue.h, their completions in lfv_vcq.h and lfv_msg_comp.h, posting
 * in lfv_msg.h, connection management in lfv_msg_cm.h and lfv_pep.h, what
 * DGRAM does its own way in lfv_dgram.h.
 */
#ifndef LFV_EP_H
#define LFV_EP_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/fi_endpoint.h>

#include "lfv_atomic.h"
#include "lfv_cm.h"
#include "lfv_ep_base.h"
#include "lfv_queue.h"

struct lfv_brx;
struct lfv_sep;
struct lfv_stx;
struct lfv_svc_listener;

/* FI_OPT_MIN_MULTI_RECV until the application sets it. */
#define LFV_MIN_MULTI_RECV 64

struct lfv_ep;

/*
 * What differs between MSG (RC, lfv_msg_kind) and DGRAM (UD,
 * lfv_dgram_kind) endpoints, chosen once by fi_endpoint (lfv_ep_open) and
 * read through ep->kind: their ops tables (bind in their fi_ops, cancel
 * and getopt their fi_ops_ep's, the send fast path only in MSG's
 * fi_ops_msg), and hooks for what the paths they share do each type's way.
 * Nothing after fi_endpoint asks which type an endpoint is.
 */
struct lfv_ep_kind {
	const struct lfv_ep_type *type;	/* ops tables, binds (lfv_ep_base.h) */
	/* Receive SGEs in front of the application's (DGRAM: the GRH). */
	uint32_t rx_hdr_sges;
	/* The translation of its queues' completions (lfv_msg_comp.h). */
	lfv_translate_fn *translate;
	/* fi_endpoint, once the queues exist: MSG's rdma_cm id. NULL:
	 * nothing more. */
	int (*open)(struct lfv_ep *ep, const struct fi_info *info);
	/* fi_enable: the type's bindings checked, its QP created, and
	 * whatever must come before receives (lfv_msg_ep.c). */
	int (*enable)(struct lfv_ep *ep);
	/* fi_close, before the QP goes: MSG stops its connection events.
	 * NULL: nothing. */
	void (*closing)(struct lfv_ep *ep);
	/* Where a send goes (DGRAM: the AV's address handle; -FI_EINVAL
	 * for an unknown address or a message longer than a datagram).
	 * NULL: the connected peer. */
	int (*tx_dest)(struct lfv_ep *ep, fi_addr_t dest, size_t len,
		       struct ibv_send_wr *wr);
	/* A receive's leading SGE (wr->sg_list[0], rx_hdr_sges of them),
	 * filled for op's slot; wr may point elsewhere after. NULL: none. */
	void (*rx_hdr)(struct lfv_ep *ep, const struct lfv_op *op,
		       struct ibv_recv_wr *wr);
	/* The address a closing send queue's marker goes to (DGRAM: the
	 * endpoint itself; NULL when it has none). NULL: connected. */
	struct ibv_ah *(*marker_ah)(struct lfv_ep *ep, struct ibv_send_wr *wr);
};

enum lfv_ep_state {
	LFV_EP_IDLE,		/* opened, not enabled */
	LFV_EP_ENABLED,		/* QP exists */
	LFV_EP_CONNECTING,
	LFV_EP_ACCEPTING,
	LFV_EP_CONNECTED,
	LFV_EP_SHUTDOWN,
	LFV_EP_ERROR,
};

struct lfv_ep {
	struct lfv_ep_base base;	/* fid, bindings, op flags */
	struct lfv_cm_ctx cm;
	const struct lfv_ep_kind *kind;	/* MSG or DGRAM, from fi_endpoint */
	enum lfv_ep_state state;	/* under fabric->cm_lock */
	struct ibv_qp *qp;
	struct rdma_cm_id *id;		/* MSG */
	struct lfv_eq *eq;
	struct lfv_msg_srq *srq;		/* receives come from here */
	struct lfv_stx *stx;		/* bound transmit context, if any */
	struct lfv_brx *brx;		/* buffered receives (lfv_brx.c) */
	struct lfv_queue tx;
	struct lfv_queue rx;
	struct ibv_mr *grh_mr;		/* DGRAM: one GRH slot per receive */
	uint64_t amo_sink;		/* results nobody asked for */
	struct ibv_mr *amo_mr;		/* registers amo_sink */
	uint8_t *grh;
	/* DGRAM: each receive's SGEs (GRH slot first), kept per op slot so
	 * fi_cancel can post the others again. */
	struct ibv_sge *ud_sge;
	uint8_t *ud_nsge;
	uint32_t ud_sge_stride;
	size_t inject_size;
	size_t min_multi_recv;
	union lfv_sockaddr src;		/* fi_setname before enable */
	bool src_set;
	bool passive;			/* opened on a connection request */
	lfv_atomic32_t tx_ready;	/* sends may be posted: connected once
					 * (MSG) or enabled (DGRAM) */
	bool shutdown_reported;		/* FI_SHUTDOWN queued (cm_lock) */
	bool shut_down;			/* fi_shutdown put the QP in the
					 * error state (cm_lock) */
	/* Set by fi_enable: an RC endpoint whose receives go straight to
	 * its own QP (no shared or buffered receive), lfv_recv_one's case. */
	bool rx_direct;
	struct lfv_sep *sep;		/* a scalable endpoint's context */
	uint32_t sep_index;
	struct lfv_svc_listener *svc;	/* DGRAM opened at a service */
	/* FI_RMA_EVENT (lfv_msg_rma.c): the announcement of a write with remote
	 * CQ data names the region; the data comes next (poll lock). */
	bool ev_data_next;
	uint32_t ev_data_index;
};

/* The endpoint behind an lfverbs MSG or DGRAM fid_ep (or its alias). */
static inline struct lfv_ep *lfv_ep_real(struct fid *fid)
{
	return lfv_container_of(lfv_ep_base_of(fid), struct lfv_ep, base);
}

/* The endpoint whose queue q is (not a shared receive queue's). */
static inline struct lfv_ep *lfv_queue_ep(const struct lfv_queue *q)
{
	return q->owner;
}

static inline struct lfv_ep *lfv_ep_of(struct fid_ep *ep_fid)
{
	return lfv_ep_real(&ep_fid->fid);
}

/* The attributes of a QP of this type for the endpoint's queues. */
void lfv_ep_qp_caps(const struct lfv_ep *ep, enum ibv_qp_type type,
		    struct ibv_qp_init_attr *attr);

#endif /* LFV_EP_H */
