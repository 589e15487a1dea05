/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Endpoints over ibverbs queue pairs: MSG on RC (connected with rdma_cm),
 * DGRAM on UD (address handles from the AV).
 *
 * Work requests and completions. Every posted work request has an lfv_op in
 * its queue's array, and wr_id is that op's address. A queue (the send or
 * receive side of one QP) posts at tail and retires at head; tail - head is
 * never more than the queue's size, which is also what it added to its
 * verbs CQ's capacity, so neither the QP nor the hardware CQ can overrun
 * (posting returns -FI_EAGAIN instead). Send queues complete in order: a
 * signaled completion retires every unsignaled request before it.
 *
 * Completions are translated once (lfv_vcq.c): straight into the caller's
 * buffer when fi_cq_read finds the CQ's ring empty, into the ring otherwise
 * (progress run by counters, sread, flow control).
 *
 * Locking: a vcq's poll lock serialises translation and the heads of the
 * queues it serves; a queue's post lock serialises posting. Both are
 * skipped under FI_THREAD_DOMAIN and FI_THREAD_COMPLETION, where the
 * application serialises (lfv_spin), unless a progress thread polls.
 * Posters read head with acquire (pairs with the poller's release store).
 */
#ifndef LFV_EP_H
#define LFV_EP_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "lfv_atomic.h"
#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_ep_base.h"
#include "lfv_eq.h"
#include "lfv_list.h"
#include "lfv_prov.h"

/* Bytes of connection data rdma_cm carries for RC (RDMA_PS_TCP, connect
 * request), less the one-byte length header the verbs provider also uses,
 * so the two interoperate. */
#define LFV_CM_PRIV_MAX 56
#define LFV_CM_DATA_SIZE (LFV_CM_PRIV_MAX - 1)
/* Space a UD receive gets in front of the payload: the GRH. */
#define LFV_GRH_SIZE 40
/* rdma_cm's Q_Key for its UDP port space: a service resolution (lfv_svc.h)
 * answers with it, so every UD QP of lfverbs uses it. */
#define LFV_UD_QKEY RDMA_UDP_QKEY
/* FI_OPT_MIN_MULTI_RECV until the application sets it. */
#define LFV_MIN_MULTI_RECV 64

/* Set on an op that must show up in the CQ (not only in counters). */
#define LFV_OP_REPORT (1ULL << 63)
/* A shared receive without FI_COMPLETION: reported unless the endpoint it
 * lands on bound its CQ with FI_SELECTIVE_COMPLETION. */
#define LFV_OP_SHARED (1ULL << 62)
/* A provider's own send: an RMA event announcement (lfv_rma.c), or the
 * request a closing queue posts to retire its unsignaled sends
 * (lfv_vcq_drain_queue). Neither counted nor reported, in success or
 * error. */
#define LFV_OP_SILENT (1ULL << 61)
#define LFV_OP_FLAGS_INTERNAL (LFV_OP_REPORT | LFV_OP_SHARED | LFV_OP_SILENT)

/* An optional spin lock: not taken when the domain's threading model
 * makes the application serialise access. */
struct lfv_spin {
	pthread_spinlock_t lock;
	bool on;
};

static inline int lfv_spin_init(struct lfv_spin *s, bool on)
{
	s->on = on;
	return on ? -pthread_spin_init(&s->lock, PTHREAD_PROCESS_PRIVATE) : 0;
}

static inline void lfv_spin_fini(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_destroy(&s->lock);
}

static inline void lfv_spin_lock(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_lock(&s->lock);
}

static inline void lfv_spin_unlock(struct lfv_spin *s)
{
	if (s->on)
		pthread_spin_unlock(&s->lock);
}

struct lfv_queue;
struct lfv_ep;

struct lfv_op {
	void *context;
	uint64_t flags;		/* completion flags | LFV_OP_REPORT */
	void *buf;		/* receive buffer start */
	size_t len;
	struct lfv_queue *q;
};

/* One verbs CQ; serves one lfverbs CQ (or none: counters only). */
struct lfv_vcq {
	struct lfv_list node;		/* in domain->vcqs */
	struct lfv_domain *domain;
	struct lfv_cq *cq;		/* NULL: an endpoint's private CQ */
	struct ibv_cq *ibv_cq;
	struct ibv_comp_channel *channel;	/* FD waits only */
	struct lfv_spin lock;		/* polling, queue heads */
	int capacity;			/* cqe of ibv_cq */
	int reserved;			/* sum of bound queue sizes */
	uint32_t unacked;		/* channel events not yet acked (lock) */
	bool auto_on;			/* the progress thread watches it */
	lfv_atomic32_t ref;		/* queues bound */
};

struct lfv_queue {
	struct lfv_op *ops;
	uint32_t mask;			/* ops has mask + 1 entries */
	uint32_t size;			/* most outstanding requests */
	uint64_t tail;			/* next to post; post lock */
	lfv_atomic64_t head;		/* next to retire; poll lock */
	uint32_t unsignaled;		/* sends posted since a signaled one */
	bool is_tx;
	bool selective;			/* FI_SELECTIVE_COMPLETION */
	bool closing;			/* poll lock: drop its completions */
	/* Poll lock: its successful completions need nothing but the CQ
	 * entry (RC, no counters, no buffering; set by fi_enable, cleared
	 * when closing), so lfv_vcq_translate_fast may take them. */
	bool fast;
	/* fi_cancel on a UD endpoint (lfv_ud_cancel.c), poll lock: flushed
	 * sends count as sent, flushed receives wait to be posted again
	 * from cancel_first on. */
	bool cancelling;
	uint64_t cancel_first;
	struct lfv_spin lock;		/* posting */
	/* FI_MORE: requests written but not yet posted, kept per op slot
	 * (send queues only), posted as one chain by the next call without
	 * FI_MORE. */
	struct ibv_send_wr *more_wr;
	struct ibv_sge *more_sge;	/* iov_max per slot */
	uint32_t iov_max;
	struct ibv_send_wr *more_first, *more_last;
	/* fi_send's common case (lfv_msg.c): a request already filled in
	 * but for wr_id and the one SGE (post lock). */
	struct ibv_send_wr one_wr;
	struct ibv_sge one_sge;
	struct lfv_vcq *vcq;
	struct lfv_cntr *cntr;		/* FI_SEND / FI_RECV counter */
	/* Another transport's requests (RDM, lfv_rdm.c): every completion
	 * goes to it instead of the translations here. */
	void (*handler)(struct lfv_queue *q, struct lfv_op *op,
			const struct ibv_wc *wc);
	struct lfv_ep *ep;		/* NULL for a shared receive queue */
	struct lfv_srx *srx;		/* set for a shared receive queue */
};

/* A shared receive context on an SRQ (lfv_srx.c). */
struct lfv_srx {
	struct fid_ep ep_fid;		/* FI_CLASS_SRX_CTX */
	struct lfv_domain *domain;
	struct ibv_srq *srq;
	struct lfv_queue q;		/* ops only: not a ring */
	struct lfv_spin lock;		/* free, eps */
	uint32_t *free;			/* stack of free op slots */
	uint32_t nfree;
	struct lfv_ep **eps;		/* bound endpoints */
	uint32_t neps, maxeps;
	size_t iov_limit;
	uint64_t op_flags;
	lfv_atomic32_t ref;		/* 1 + bound endpoints */
};

/* fi_srx_context on a MSG domain (lfv_domain.c dispatches). */
int lfv_srx_context(struct lfv_domain *domain, struct fi_rx_attr *attr,
		    struct fid_ep **rx_ep, void *context);

/* Buffered receives (lfv_brx.c): FI_MULTI_RECV and fi_cancel. */
struct lfv_brx;
bool lfv_brx_wanted(const struct fi_info *info);
int lfv_brx_init(struct lfv_ep *ep);
int lfv_brx_enable(struct lfv_ep *ep);
void lfv_brx_free(struct lfv_ep *ep);
size_t lfv_brx_arrived(struct lfv_ep *ep, const struct lfv_op *op,
		       const struct ibv_wc *wc, struct lfv_cq_comp comp[2]);
ssize_t lfv_brx_post(struct lfv_ep *ep, const struct iovec *iov, size_t count,
		     void *context, uint64_t flags);
ssize_t lfv_brx_cancel(struct lfv_ep *ep, void *context);
void lfv_brx_flush(struct lfv_ep *ep);
ssize_t lfv_brx_size_left(struct lfv_ep *ep);

/* A shared transmit context: logical (lfv_stx.c). */
struct lfv_stx {
	struct fid_stx stx_fid;
	struct lfv_domain *domain;
	struct fi_tx_attr attr;
	lfv_atomic32_t ref;		/* 1 + bound endpoints */
};

int lfv_stx_context(struct fid_domain *domain, struct fi_tx_attr *attr,
		    struct fid_stx **stx, void *context);
int lfv_srx_attach(struct lfv_srx *srx, struct lfv_ep *ep);
void lfv_srx_detach(struct lfv_srx *srx, struct lfv_ep *ep);
struct lfv_ep *lfv_srx_find_ep(struct lfv_srx *srx, uint32_t qp_num);
void lfv_srx_retire(struct lfv_srx *srx, const struct lfv_op *op);
ssize_t lfv_srx_post(struct lfv_srx *srx, const struct iovec *iov,
		     void **desc, size_t count, void *context, uint64_t flags);

enum lfv_ep_state {
	LFV_EP_IDLE,		/* opened, not enabled */
	LFV_EP_ENABLED,		/* QP exists */
	LFV_EP_CONNECTING,
	LFV_EP_ACCEPTING,
	LFV_EP_CONNECTED,
	LFV_EP_SHUTDOWN,
	LFV_EP_ERROR,
};

/* What rdma_cm events are dispatched to (id->context points at one). */
struct lfv_cm_ctx {
	/* Returns true when the event's id must be destroyed (after ack). */
	bool (*handle)(struct lfv_cm_ctx *ctx, struct rdma_cm_event *event);
};

/* A connection request not yet accepted or rejected (fi_info->handle). */
struct lfv_connreq {
	struct fid fid;			/* FI_CLASS_CONNREQ */
	struct lfv_cm_ctx cm;
	struct rdma_cm_id *id;
	struct lfv_fabric *fabric;
};

struct lfv_pep {
	struct fid_pep pep_fid;
	struct lfv_cm_ctx cm;
	struct lfv_fabric *fabric;
	struct fi_info *info;
	struct rdma_cm_id *id;
	struct lfv_eq *eq;
	int backlog;
	bool bound;
	bool listening;
};

struct lfv_ep {
	struct lfv_ep_base base;	/* fid, bindings, op flags */
	struct lfv_cm_ctx cm;
	enum fi_ep_type type;
	enum lfv_ep_state state;	/* under fabric->cm_lock */
	struct ibv_qp *qp;
	struct rdma_cm_id *id;		/* MSG */
	struct lfv_eq *eq;
	struct lfv_srx *srx;		/* receives come from here */
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
	/* Set by fi_enable: an RC endpoint whose receives go straight to
	 * its own QP (no shared or buffered receive), lfv_recv_one's case. */
	bool rx_direct;
	struct lfv_sep *sep;		/* a scalable endpoint's context */
	uint32_t sep_index;
	struct lfv_svc_listener *svc;	/* DGRAM opened at a service */
	/* FI_RMA_EVENT (lfv_rma.c): the announcement of a write with remote
	 * CQ data names the region; the data comes next (poll lock). */
	bool ev_data_next;
	uint32_t ev_data_index;
};

/* The endpoint behind an lfverbs MSG or DGRAM fid_ep (or its alias). */
static inline struct lfv_ep *lfv_ep_real(struct fid *fid)
{
	return lfv_container_of(lfv_ep_base_of(fid), struct lfv_ep, base);
}

static inline struct lfv_ep *lfv_ep_of(struct fid_ep *ep_fid)
{
	return lfv_ep_real(&ep_fid->fid);
}

/* vcq: the verbs CQ behind a CQ (lfv_vcq.c). */
int lfv_vcq_get(struct lfv_domain *domain, struct lfv_cq *cq, int size,
		struct lfv_vcq **vcq);
void lfv_vcq_put(struct lfv_vcq *vcq, int size);
void lfv_vcq_progress(struct lfv_vcq *vcq);
void lfv_domain_progress(void *domain);
/* The progress thread's work on one vcq: take the channel's events,
 * re-arm, move completions into the ring. */
void lfv_vcq_auto_event(struct lfv_vcq *vcq);
int lfv_auto_add(struct lfv_domain *domain, struct lfv_vcq *vcq);
void lfv_auto_del(struct lfv_domain *domain, struct lfv_vcq *vcq);
void lfv_auto_stop(struct lfv_domain *domain);
/* The libfabric error (positive FI_E*) of a failed work completion. */
int lfv_wc_errno(enum ibv_wc_status status);
/* Waits (bounded) until a queue being closed has no requests left. */
void lfv_vcq_drain_queue(struct lfv_queue *q);
/* Polls q's CQ until q has no requests left or the deadline (ns) passes;
 * true when it emptied. */
bool lfv_vcq_wait_empty(struct lfv_queue *q, int64_t deadline);
/* Sets or clears q->cancelling (and resets cancel_first) under its poll
 * lock. */
void lfv_vcq_set_cancelling(struct lfv_queue *q, bool on);
/* fi_cancel of a receive on a UD endpoint (lfv_ud_cancel.c). */
ssize_t lfv_ud_cancel(struct lfv_ep *ep, void *context);
/* Brings a UD QP from RESET to RTS with lfverbs' Q_Key (lfv_cm.c): DGRAM
 * endpoints and RDM control QPs. */
int lfv_ud_qp_ready(struct ibv_qp *qp, uint8_t port_num);

/* Queues. */
int lfv_queue_init(struct lfv_queue *q, struct lfv_ep *ep, bool is_tx,
		   uint32_t size, bool locked);
void lfv_queue_fini(struct lfv_queue *q);
/* Room to hold FI_MORE requests until the chain is posted. */
int lfv_queue_enable_more(struct lfv_queue *q, uint32_t iov_max);

static inline struct lfv_op *lfv_queue_next(struct lfv_queue *q)
{
	/* Acquire: pairs with the poller's release store of head, so the
	 * op slots it retired are free to reuse. */
	if (q->tail - lfv_load_acquire64(&q->head) >= q->size)
		return NULL;
	return &q->ops[q->tail & q->mask];
}

/* Posting (lfv_msg.c): what one transmit call asks for. */
#define LFV_MAX_SGE 32

struct lfv_tx_req {
	const struct iovec *iov;
	void **desc;
	size_t count;
	uint64_t data;
	fi_addr_t dest;
	void *context;
	uint64_t flags;			/* operation flags (FI_INJECT, ...) */
	uint64_t comp_flags;		/* FI_SEND | FI_MSG, FI_RMA | ... */
	bool no_report;			/* never a CQ entry (atomic inject) */
};

/* One fi_rma or fi_atomic operation, decoded (lfv_rma.c, lfv_amo.c) for
 * the transport that posts it: wr has the opcode and the remote side
 * (address, key, atomic operands); the local memory is r's iovs, the
 * result of an atomic (none: nobody wants it). The transport sets the
 * SGEs, and the immediate data of a write with remote CQ data. */
struct lfv_rma_req {
	struct lfv_tx_req r;
	struct ibv_send_wr wr;
	uint64_t key;			/* as given: checked to fit */
};

ssize_t lfv_rma_submit(struct fid_ep *ep_fid, struct lfv_rma_req *q);
uint64_t lfv_rma_op_flags(struct fid_ep *ep_fid);
/* The same without FI_INJECT, for reads and atomics (lfv_rma.c). */
uint64_t lfv_rma_in_op_flags(struct fid_ep *ep_fid);
bool lfv_wr_is_atomic(const struct ibv_send_wr *wr);
/* Posts it on a MSG endpoint's RC QP (lfv_msg_type's rma_post). */
ssize_t lfv_msg_rma_post(struct fid_ep *ep_fid, struct lfv_rma_req *q);

/* The result of a failed ibv_post_* (a positive errno) for the caller. */
static inline ssize_t lfv_post_ret(int err)
{
	/* A full work queue the credits did not foresee, or a QP that is
	 * not (or no longer) connected. */
	if (err == ENOMEM)
		return -FI_EAGAIN;
	if (err == EINVAL)
		return -FI_EOPBADSTATE;
	return -(ssize_t)err;
}

/* Fills sge from an iov (registered memory unless inject), leaving out
 * empty segments: the number of SGEs, or -FI_EINVAL; total bytes in len. */
int lfv_fill_sge(struct ibv_sge *sge, const struct iovec *iov, void **desc,
		 size_t count, bool inject, size_t *len);
/* The same for a receive, where a segment with no base address has no
 * memory for bytes to land in: it is left out like an empty one (and so
 * needs no descriptor). A zero-byte message still completes into such a
 * receive; a longer one completes in error. */
int lfv_fill_recv_sge(struct ibv_sge *sge, const struct iovec *iov,
		      void **desc, size_t count, size_t *len);
/* Takes a send-queue op and posts wr, whose opcode, sge and remote fields
 * are set; -FI_EAGAIN when the queue is full. */
ssize_t lfv_tx_post(struct lfv_ep *ep, struct ibv_send_wr *wr,
		    const struct lfv_tx_req *r, size_t len);
/* The same for wr and a provider's note (LFV_OP_SILENT) right before or
 * after it on the QP: both are posted, or neither. */
ssize_t lfv_tx_post_noted(struct lfv_ep *ep, struct ibv_send_wr *wr,
			  const struct lfv_tx_req *r, size_t len,
			  struct ibv_send_wr *note, bool note_first);
/* FI_RMA_EVENT on MSG endpoints (lfv_rma.c): a remote write with immediate
 * data landed on a buffered endpoint; fills comp (at most one) and
 * returns how many completions to report. */
size_t lfv_msg_rma_arrived(struct lfv_ep *ep, const struct ibv_wc *wc,
			   struct lfv_cq_comp *comp);

/* Endpoints (lfv_ep.c, lfv_msg.c, lfv_rma.c, lfv_amo.c, lfv_cm.c). */
/* fi_endpoint of a MSG or DGRAM endpoint (lfv_domain.c dispatches). */
int lfv_msg_endpoint(struct lfv_domain *domain, struct fi_info *info,
		     struct fid_ep **ep, void *context);
extern const struct lfv_ep_type lfv_msg_type, lfv_dgram_type;
int lfv_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **pep, void *context);
/* An endpoint object (not yet a context or bound): what fi_endpoint and
 * fi_tx_context / fi_rx_context build on. */
int lfv_ep_open(struct lfv_domain *domain, const struct fi_info *info,
		void *context, struct lfv_ep **ep);
/* Scalable DGRAM endpoints (lfv_sep.c). */
struct lfv_sep;
int lfv_scalable_ep(struct fid_domain *domain, struct fi_info *info,
		    struct fid_ep **sep, void *context);
void lfv_sep_ctx_closed(struct lfv_ep *ep);
extern struct fi_ops_msg lfv_msg_tx_ops;
extern struct fi_ops_msg lfv_msg_rx_ops;
/* A DGRAM endpoint's QP name (its QP exists: enabled). */
void lfv_dgram_name(const struct lfv_ep *ep, struct lfv_ud_name *name);
extern struct fi_ops_msg lfv_msg_ops;
extern struct fi_ops_rma lfv_rma_ops;
extern struct fi_ops_atomic lfv_atomic_ops;
int lfv_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr,
		     uint64_t flags);
extern struct fi_ops_cm lfv_cm_ops;
extern struct fi_ops_cm lfv_dgram_cm_ops;

/* The QP attributes an endpoint's queues ask for. */
void lfv_ep_qp_caps(const struct lfv_ep *ep, struct ibv_qp_init_attr *attr);
int lfv_ep_create_rc_qp(struct lfv_ep *ep);
int lfv_ep_create_ud_qp(struct lfv_ep *ep);

/* rdma_cm (lfv_cm.c): the fabric's parking channel (ids live there until
 * bound to an EQ), an MSG endpoint's id (created, or taken from
 * info->handle), and binding an id to an EQ's channel. lfv_cm_detach stops
 * event delivery to an endpoint that is closing. */
int lfv_cm_start(struct lfv_fabric *fabric);
void lfv_cm_stop(struct lfv_fabric *fabric);
int lfv_cm_ep_open(struct lfv_ep *ep, const struct fi_info *info);
int lfv_cm_bind_eq(struct lfv_fabric *fabric, struct lfv_eq *eq,
		   struct rdma_cm_id *id, enum fi_progress progress);

/* The control progress an fi_info asks for (MANUAL when unspecified). */
static inline enum fi_progress lfv_control_progress(const struct fi_info *info)
{
	return info && info->domain_attr ? info->domain_attr->control_progress :
					   FI_PROGRESS_MANUAL;
}
void lfv_cm_detach(struct lfv_ep *ep);

#endif /* LFV_EP_H */
