/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* A fake network behind the fake verbs: see fake_net.h for the rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_net.h"

#define FNET_MAX_QPS 64
#define FNET_MAX_SRQS 8
#define FNET_MAX_CQS 16
#define FNET_GRH 40
#define FNET_QPN_FIRST 0x100

/* A receive posted to a QP or an SRQ (one SGE: all lfverbs posts). */
struct fnet_rwr {
	uint64_t wr_id;
	uint64_t addr;
	uint32_t length;
};

/* A first-in first-out queue of fixed-size items. */
struct fnet_fifo {
	void *items;
	size_t item, head, n, cap;
};

struct fnet_qp {
	struct ibv_qp *qp;		/* NULL: a free slot */
	uint8_t gid[16];
	uint32_t dest_qpn;		/* RC: the peer, from RTR */
	enum ibv_mtu path_mtu;		/* RC: from RTR; 0 before */
	struct fnet_fifo rq;		/* without an SRQ */
	bool rq_flush_due;		/* in error, its receives not flushed
					 * yet (fake_net_late_flush) */
};

struct fnet_srq {
	struct ibv_srq *srq;
	struct fnet_fifo rq;
};

struct fnet_cq {
	struct ibv_cq *cq;
	struct fnet_fifo wc;
};

static struct fnet_qp fnet_qps[FNET_MAX_QPS];
static struct fnet_srq fnet_srqs[FNET_MAX_SRQS];
static struct fnet_cq fnet_cqs[FNET_MAX_CQS];
static struct fake_pkt **fnet_wire;
static size_t fnet_nwire, fnet_wire_cap;
static uint32_t fnet_next_qpn = FNET_QPN_FIRST, fnet_forced_qpn;
static unsigned int fnet_rc_made;
static bool fnet_late_flush;
static int64_t fnet_clock = 1000000000000LL;

/* ---- helpers ------------------------------------------------------------- */

static void *fnet_alloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		abort();	/* a test without memory cannot go on */
	return p;
}

static void fnet_fifo_push(struct fnet_fifo *f, size_t item, const void *v)
{
	if (!f->items) {
		f->item = item;
		f->cap = 16;
		f->items = fnet_alloc(f->cap * item);
	}
	if (f->head + f->n == f->cap) {
		if (f->head) {	/* slide to the front first */
			memmove(f->items, (char *)f->items + f->head * item,
				f->n * item);
			f->head = 0;
		}
		if (f->n == f->cap) {
			f->cap *= 2;
			f->items = realloc(f->items, f->cap * item);
			if (!f->items)
				abort();
		}
	}
	memcpy((char *)f->items + (f->head + f->n++) * item, v, item);
}

static bool fnet_fifo_pop(struct fnet_fifo *f, void *v)
{
	if (!f->n)
		return false;
	memcpy(v, (char *)f->items + f->head++ * f->item, f->item);
	if (!--f->n)
		f->head = 0;
	return true;
}

static void fnet_fifo_free(struct fnet_fifo *f)
{
	free(f->items);
	memset(f, 0, sizeof(*f));
}

static struct fnet_qp *fnet_qp_of(const struct ibv_qp *qp)
{
	size_t i;

	for (i = 0; i < FNET_MAX_QPS; i++)
		if (fnet_qps[i].qp == qp)
			return &fnet_qps[i];
	return NULL;
}

static struct fnet_qp *fnet_qp_by_num(uint32_t qpn)
{
	size_t i;

	for (i = 0; i < FNET_MAX_QPS; i++)
		if (fnet_qps[i].qp && fnet_qps[i].qp->qp_num == qpn)
			return &fnet_qps[i];
	return NULL;
}

/* The fake's slot for a verbs SRQ or CQ, claimed the first time the fake
 * meets that object (the library creates them through fake verbs that do
 * not know the fake network); a full table is a bug in the test. */
#define FNET_SLOT_OF(fn, slot, table, key, max)                               \
	static struct slot *fn(const struct ibv_##key *key)                   \
	{                                                                     \
		size_t i;                                                     \
                                                                              \
		for (i = 0; i < (max); i++)                                   \
			if (table[i].key == key)                              \
				return &table[i];                             \
		for (i = 0; i < (max); i++)                                   \
			if (!table[i].key) {                                  \
				table[i].key = (struct ibv_##key *)key;       \
				return &table[i];                             \
			}                                                     \
		abort();                                                      \
	}

FNET_SLOT_OF(fnet_srq_of, fnet_srq, fnet_srqs, srq, FNET_MAX_SRQS)
FNET_SLOT_OF(fnet_cq_of, fnet_cq, fnet_cqs, cq, FNET_MAX_CQS)

static void fnet_complete(struct ibv_cq *cq, const struct ibv_wc *wc)
{
	fnet_fifo_push(&fnet_cq_of(cq)->wc, sizeof(*wc), wc);
}

/* The sender's completion of a request (signaled ones only). */
static void fnet_sender_done(const struct ibv_qp *qp, uint64_t wr_id,
			     enum ibv_wc_opcode opcode,
			     enum ibv_wc_status status, uint32_t len)
{
	struct ibv_wc wc = {
		.wr_id = wr_id, .status = status, .opcode = opcode,
		.byte_len = len, .qp_num = qp->qp_num,
	};

	fnet_complete(qp->send_cq, &wc);
}

static enum ibv_wc_opcode fnet_wc_opcode(enum fake_pkt_kind kind)
{
	switch (kind) {
	case FAKE_PKT_WRITE:
		return IBV_WC_RDMA_WRITE;
	case FAKE_PKT_READ:
		return IBV_WC_RDMA_READ;
	default:
		return IBV_WC_SEND;
	}
}

static void fnet_wire_remove(size_t i)
{
	memmove(&fnet_wire[i], &fnet_wire[i + 1],
		(fnet_nwire - i - 1) * sizeof(*fnet_wire));
	fnet_nwire--;
}

/* ---- queue pair states ------------------------------------------------------ */

/* A QP's posted receives complete, flushed. */
static void fnet_flush_rq(struct fnet_qp *q)
{
	struct fnet_rwr rwr;

	while (fnet_fifo_pop(&q->rq, &rwr))
		fnet_complete(q->qp->recv_cq, &(struct ibv_wc){
			.wr_id = rwr.wr_id, .status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV, .qp_num = q->qp->qp_num });
}

/* The error state: posted receives and requests on the wire flush (the
 * receives only when the QP is destroyed, under fake_net_late_flush). */
static void fnet_qp_error(struct fnet_qp *q)
{
	struct ibv_qp *qp = q->qp;
	struct fake_pkt *p;
	size_t i = 0;

	qp->state = IBV_QPS_ERR;
	q->rq_flush_due = fnet_late_flush;
	if (!q->rq_flush_due)
		fnet_flush_rq(q);
	while (i < fnet_nwire) {
		p = fnet_wire[i];
		if (p->copy || p->src_qpn != qp->qp_num ||
		    p->kind == FAKE_PKT_DGRAM) {
			i++;
			continue;
		}
		fnet_sender_done(qp, p->wr_id, fnet_wc_opcode(p->kind),
				 IBV_WC_WR_FLUSH_ERR, 0);
		fnet_wire_remove(i);
		free(p);
	}
}

enum ibv_mtu fake_net_path_mtu(const struct ibv_qp *qp)
{
	const struct fnet_qp *q = fnet_qp_of(qp);

	return q ? q->path_mtu : (enum ibv_mtu)0;
}

int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int mask)
{
	struct fnet_qp *q = fnet_qp_of(qp);

	if (!q)
		return EINVAL;
	if (mask & IBV_QP_DEST_QPN)
		q->dest_qpn = attr->dest_qp_num;
	if (mask & IBV_QP_PATH_MTU)
		q->path_mtu = attr->path_mtu;
	if (!(mask & IBV_QP_STATE))
		return 0;
	if (attr->qp_state == IBV_QPS_ERR)
		fnet_qp_error(q);
	else
		qp->state = attr->qp_state;
	return 0;
}

/* The plain registration (lfverbs' own buffers): as the fake's iova2. */
struct ibv_mr *__wrap_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
				       size_t length, uint64_t iova,
				       unsigned int access);

struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 int access)
{
	return __wrap_ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
				       (unsigned int)access);
}

int __wrap_ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	cq->cqe = cqe;
	return 0;
}

int64_t __wrap_lfv_now_ns(void)
{
	return fnet_clock += 1000;
}

/* The coarse clock: the same time, without a tick of its own. */
int64_t __wrap_lfv_now_coarse_ns(void)
{
	return fnet_clock;
}

void fake_net_advance(int64_t ns)
{
	fnet_clock += ns;
}

/* ---- posting ------------------------------------------------------------------- */

static size_t fnet_sge_len(const struct ibv_send_wr *wr)
{
	size_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

static struct fake_pkt *fnet_pkt_of(const struct fnet_qp *q,
				    const struct ibv_send_wr *wr)
{
	size_t len = fnet_sge_len(wr), off = 0;
	bool carries = wr->opcode != IBV_WR_RDMA_READ;
	struct fake_pkt *p = fnet_alloc(sizeof(*p) + (carries ? len : 0));
	int i;

	p->src_qpn = q->qp->qp_num;
	memcpy(p->src_gid, q->gid, sizeof(p->src_gid));
	p->wr_id = wr->wr_id;
	p->signaled = wr->send_flags & IBV_SEND_SIGNALED;
	p->len = len;
	for (i = 0; carries && i < wr->num_sge; i++) {
		memcpy(p->data + off, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
	if (q->qp->qp_type == IBV_QPT_UD) {
		p->kind = FAKE_PKT_DGRAM;
		p->dst_qpn = wr->wr.ud.remote_qpn;
		return p;
	}
	p->dst_qpn = q->dest_qpn;
	p->raddr = wr->wr.rdma.remote_addr;
	p->kind = wr->opcode == IBV_WR_SEND ? FAKE_PKT_SEND :
		  wr->opcode == IBV_WR_RDMA_WRITE ? FAKE_PKT_WRITE :
		  FAKE_PKT_READ;
	if (p->kind == FAKE_PKT_READ) {
		p->nlocal = wr->num_sge;
		memcpy(p->local, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(*wr->sg_list));
	}
	return p;
}

static bool fnet_supported(const struct ibv_send_wr *wr)
{
	if (wr->num_sge > FAKE_PKT_SGE)
		return false;
	return wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_RDMA_WRITE ||
	       wr->opcode == IBV_WR_RDMA_READ;
}

static int fnet_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	struct fnet_qp *q = fnet_qp_of(qp);
	struct fake_pkt *p;

	for (; wr; wr = wr->next) {
		if (!q || !fnet_supported(wr) ||
		    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR)) {
			*bad = wr;
			return EINVAL;
		}
		if (qp->state == IBV_QPS_ERR) {
			fnet_sender_done(qp, wr->wr_id, IBV_WC_SEND,
					 IBV_WC_WR_FLUSH_ERR, 0);
			continue;
		}
		p = fnet_pkt_of(q, wr);
		if (p->kind == FAKE_PKT_DGRAM && p->signaled)
			fnet_sender_done(qp, p->wr_id, IBV_WC_SEND,
					 IBV_WC_SUCCESS, 0);
		fake_net_put(p);
	}
	return 0;
}

static int fnet_post_rwr(struct fnet_fifo *rq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad)
{
	struct fnet_rwr rwr;

	for (; wr; wr = wr->next) {
		if (wr->num_sge != 1) {
			*bad = wr;
			return EINVAL;
		}
		rwr = (struct fnet_rwr){ .wr_id = wr->wr_id,
					 .addr = wr->sg_list[0].addr,
					 .length = wr->sg_list[0].length };
		fnet_fifo_push(rq, sizeof(rwr), &rwr);
	}
	return 0;
}

static int fnet_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad)
{
	struct fnet_qp *q = fnet_qp_of(qp);

	if (!q || qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	return fnet_post_rwr(&q->rq, wr, bad);
}

static int fnet_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad)
{
	return fnet_post_rwr(&fnet_srq_of(srq)->rq, wr, bad);
}

static int fnet_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fnet_cq *c = fnet_cq_of(cq);
	int got = 0;

	while (got < n && fnet_fifo_pop(&c->wc, &wc[got]))
		got++;
	return got;
}

static int fnet_req_notify_cq(struct ibv_cq *cq, int solicited)
{
	(void)cq; (void)solicited;
	return 0;
}

/* ---- delivery ------------------------------------------------------------------ */

/* A UD datagram: into the next receive behind a GRH, or lost. */
static void fnet_deliver_dgram(const struct fake_pkt *p)
{
	struct fnet_qp *d = fnet_qp_by_num(p->dst_qpn);
	struct ibv_wc wc = { .opcode = IBV_WC_RECV, .wc_flags = IBV_WC_GRH,
			     .src_qp = p->src_qpn };
	struct fnet_rwr rwr;
	uint8_t *buf;

	if (!d || d->qp->qp_type != IBV_QPT_UD ||
	    (d->qp->state != IBV_QPS_RTR && d->qp->state != IBV_QPS_RTS) ||
	    !fnet_fifo_pop(&d->rq, &rwr))
		return;
	wc.wr_id = rwr.wr_id;
	wc.qp_num = d->qp->qp_num;
	wc.byte_len = (uint32_t)(FNET_GRH + p->len);
	if (wc.byte_len > rwr.length) {
		wc.status = IBV_WC_LOC_LEN_ERR;
	} else {
		buf = (uint8_t *)(uintptr_t)rwr.addr;
		memset(buf, 0, FNET_GRH);
		buf[0] = 0x60;		/* IPv6 / GRH: source GID at 8 */
		memcpy(buf + 8, p->src_gid, 16);
		memcpy(buf + FNET_GRH, p->data, p->len);
	}
	fnet_complete(d->qp->recv_cq, &wc);
}

/* The receiving QP of an RC packet, if it takes packets from the sender:
 * in RTR or RTS and connected to it. */
static struct fnet_qp *fnet_rc_peer(const struct fake_pkt *p)
{
	struct fnet_qp *d = fnet_qp_by_num(p->dst_qpn);

	if (!d || d->qp->qp_type != IBV_QPT_RC || d->dest_qpn != p->src_qpn ||
	    (d->qp->state != IBV_QPS_RTR && d->qp->state != IBV_QPS_RTS))
		return NULL;
	return d;
}

/* A send into the receiver's next receive: false when it has none. */
static bool fnet_deliver_send(struct fnet_qp *d, const struct fake_pkt *p)
{
	struct fnet_fifo *rq = d->qp->srq ? &fnet_srq_of(d->qp->srq)->rq :
					    &d->rq;
	struct ibv_wc wc = { .opcode = IBV_WC_RECV, .src_qp = p->src_qpn,
			     .qp_num = d->qp->qp_num,
			     .byte_len = (uint32_t)p->len };
	struct fnet_rwr rwr;

	if (!fnet_fifo_pop(rq, &rwr))
		return false;
	wc.wr_id = rwr.wr_id;
	if (p->len > rwr.length)
		wc.status = IBV_WC_LOC_LEN_ERR;
	else if (p->len)
		memcpy((void *)(uintptr_t)rwr.addr, p->data, p->len);
	fnet_complete(d->qp->recv_cq, &wc);
	return true;
}

/* An RDMA read: the peer's memory is this process's. */
static void fnet_deliver_read(const struct fake_pkt *p)
{
	const uint8_t *src = (const uint8_t *)(uintptr_t)p->raddr;
	int i;

	for (i = 0; i < p->nlocal; i++) {
		memcpy((void *)(uintptr_t)p->local[i].addr, src,
		       p->local[i].length);
		src += p->local[i].length;
	}
}

/* Ends an RC request at its sender: completed (signaled) or failed (its
 * QP goes to the error state). */
static void fnet_rc_end(const struct fake_pkt *p, enum ibv_wc_status status)
{
	struct fnet_qp *s = p->copy ? NULL : fnet_qp_by_num(p->src_qpn);

	if (!s)
		return;
	if (status != IBV_WC_SUCCESS || p->signaled)
		fnet_sender_done(s->qp, p->wr_id, fnet_wc_opcode(p->kind),
				 status, (uint32_t)p->len);
	if (status != IBV_WC_SUCCESS)
		fnet_qp_error(s);
}

/* Delivers p (off the wire already): false if it must wait. */
static bool fnet_deliver_pkt(const struct fake_pkt *p)
{
	struct fnet_qp *d;

	if (p->kind == FAKE_PKT_DGRAM) {
		fnet_deliver_dgram(p);
		return true;
	}
	d = fnet_rc_peer(p);
	if (!d) {
		fnet_rc_end(p, IBV_WC_RETRY_EXC_ERR);
		return true;
	}
	if (p->fail != IBV_WC_SUCCESS) {
		fnet_rc_end(p, p->fail);
		return true;
	}
	switch (p->kind) {
	case FAKE_PKT_SEND:
		if (!fnet_deliver_send(d, p))
			return false;
		break;
	case FAKE_PKT_WRITE:
		if (p->len)
			memcpy((void *)(uintptr_t)p->raddr, p->data, p->len);
		break;
	default:
		fnet_deliver_read(p);
		break;
	}
	fnet_rc_end(p, IBV_WC_SUCCESS);
	return true;
}

bool fake_net_deliver(size_t i)
{
	struct fake_pkt *p = fnet_wire[i];

	/* Off the wire first: a failure flushes the sender's others. */
	fnet_wire_remove(i);
	if (!fnet_deliver_pkt(p)) {
		memmove(&fnet_wire[i + 1], &fnet_wire[i],
			(fnet_nwire - i) * sizeof(*fnet_wire));
		fnet_wire[i] = p;
		fnet_nwire++;
		return false;
	}
	free(p);
	return true;
}

size_t fake_net_deliver_all(void)
{
	size_t i = 0, n = 0;

	while (i < fnet_nwire) {
		if (fake_net_deliver(i))
			n++;
		else
			i++;
	}
	return n;
}

/* ---- the wire, for tests ------------------------------------------------------- */

size_t fake_net_count(void)
{
	return fnet_nwire;
}

const struct fake_pkt *fake_net_peek(size_t i)
{
	return i < fnet_nwire ? fnet_wire[i] : NULL;
}

static bool fnet_match(const struct fake_pkt *p, enum fake_pkt_kind kind,
		       int op, uint32_t src)
{
	return (!kind || p->kind == kind) && (!src || p->src_qpn == src) &&
	       (op < 0 || (p->kind != FAKE_PKT_READ && p->len &&
			   p->data[0] == op));
}

int fake_net_find(size_t from, enum fake_pkt_kind kind, int op, uint32_t src)
{
	size_t i;

	for (i = from; i < fnet_nwire; i++)
		if (fnet_match(fnet_wire[i], kind, op, src))
			return (int)i;
	return -1;
}

size_t fake_net_count_of(enum fake_pkt_kind kind, int op, uint32_t src)
{
	size_t i, n = 0;

	for (i = 0; i < fnet_nwire; i++)
		n += fnet_match(fnet_wire[i], kind, op, src);
	return n;
}

void fake_net_drop(size_t i)
{
	free(fake_net_take(i));
}

void fake_net_dup(size_t i)
{
	const struct fake_pkt *p = fnet_wire[i];
	size_t size = sizeof(*p) + (p->kind == FAKE_PKT_READ ? 0 : p->len);
	struct fake_pkt *c = fnet_alloc(size);

	memcpy(c, p, size);
	c->copy = true;
	fake_net_put(c);
}

struct fake_pkt *fake_net_take(size_t i)
{
	struct fake_pkt *p = fnet_wire[i];

	fnet_wire_remove(i);
	return p;
}

void fake_net_put(struct fake_pkt *p)
{
	if (fnet_nwire == fnet_wire_cap) {
		fnet_wire_cap = fnet_wire_cap ? 2 * fnet_wire_cap : 64;
		fnet_wire = realloc(fnet_wire,
				    fnet_wire_cap * sizeof(*fnet_wire));
		if (!fnet_wire)
			abort();
	}
	fnet_wire[fnet_nwire++] = p;
}

void fake_net_fail(size_t i, enum ibv_wc_status status)
{
	fnet_wire[i]->fail = status;
}

/* ---- objects --------------------------------------------------------------------- */

static void fnet_qp_made(struct ibv_qp *qp, const struct ibv_qp_init_attr *init)
{
	union ibv_gid gid;
	size_t i;

	for (i = 0; i < FNET_MAX_QPS && fnet_qps[i].qp; i++)
		;
	if (i == FNET_MAX_QPS)
		abort();
	memset(&fnet_qps[i], 0, sizeof(fnet_qps[i]));
	fnet_qps[i].qp = qp;
	qp->qp_num = fnet_forced_qpn ? fnet_forced_qpn : fnet_next_qpn++;
	fnet_forced_qpn = 0;
	qp->qp_type = init->qp_type;
	qp->qp_context = init->qp_context;
	qp->send_cq = init->send_cq;
	qp->recv_cq = init->recv_cq;
	qp->srq = init->srq;
	qp->state = IBV_QPS_RESET;
	if (!ibv_query_gid(qp->context, 1, 0, &gid))
		memcpy(fnet_qps[i].gid, gid.raw, sizeof(gid.raw));
	fnet_rc_made += init->qp_type == IBV_QPT_RC;
}

/* A destroyed QP's requests still on the wire go with it; receives whose
 * flush was due complete now. */
static void fnet_qp_gone(struct ibv_qp *qp)
{
	struct fnet_qp *q = fnet_qp_of(qp);
	size_t i = 0;

	if (!q)
		return;
	/* Before destroy returns, as rxe's (its flush task runs then at
	 * the latest). */
	if (q->rq_flush_due)
		fnet_flush_rq(q);
	while (i < fnet_nwire) {
		if (fnet_wire[i]->src_qpn == qp->qp_num && !fnet_wire[i]->copy)
			fake_net_drop(i);
		else
			i++;
	}
	fnet_fifo_free(&q->rq);
	memset(q, 0, sizeof(*q));
}

static void fnet_srq_gone(struct ibv_srq *srq)
{
	struct fnet_srq *s = fnet_srq_of(srq);

	fnet_fifo_free(&s->rq);
	s->srq = NULL;
}

static void fnet_cq_gone(struct ibv_cq *cq)
{
	struct fnet_cq *c = fnet_cq_of(cq);

	fnet_fifo_free(&c->wc);
	c->cq = NULL;
}

void fake_net_late_flush(bool on)
{
	fnet_late_flush = on;
}

size_t fake_net_stale_wcs(void)
{
	struct fnet_fifo *f;
	struct ibv_wc *wc;
	size_t i, k, n = 0;

	for (i = 0; i < FNET_MAX_CQS; i++) {
		f = &fnet_cqs[i].wc;
		for (k = 0; fnet_cqs[i].cq && k < f->n; k++) {
			wc = (struct ibv_wc *)f->items + f->head + k;
			n += !fnet_qp_by_num(wc->qp_num);
		}
	}
	return n;
}

void fake_net_next_qpn(uint32_t qpn)
{
	fnet_forced_qpn = qpn;
}

unsigned int fake_net_rc_made(void)
{
	return fnet_rc_made;
}

void fake_net_init(struct fake_dev *dev)
{
	struct ibv_context_ops *ops = &dev->cm_ctx->ops;

	ops->post_send = fnet_post_send;
	ops->post_recv = fnet_post_recv;
	ops->post_srq_recv = fnet_post_srq_recv;
	ops->poll_cq = fnet_poll_cq;
	ops->req_notify_cq = fnet_req_notify_cq;
	fake_verbs_hooks = (struct fake_verbs_hooks){
		.qp_made = fnet_qp_made, .qp_gone = fnet_qp_gone,
		.srq_gone = fnet_srq_gone, .cq_gone = fnet_cq_gone,
	};
	fnet_next_qpn = FNET_QPN_FIRST;
	fnet_forced_qpn = 0;
	fnet_rc_made = 0;
	fnet_late_flush = false;
}

void fake_net_fini(void)
{
	size_t i;

	while (fnet_nwire)
		fake_net_drop(fnet_nwire - 1);
	free(fnet_wire);
	fnet_wire = NULL;
	fnet_wire_cap = 0;
	for (i = 0; i < FNET_MAX_QPS; i++)
		fnet_fifo_free(&fnet_qps[i].rq);
	for (i = 0; i < FNET_MAX_SRQS; i++)
		fnet_fifo_free(&fnet_srqs[i].rq);
	for (i = 0; i < FNET_MAX_CQS; i++)
		fnet_fifo_free(&fnet_cqs[i].wc);
	memset(fnet_qps, 0, sizeof(fnet_qps));
	memset(fnet_srqs, 0, sizeof(fnet_srqs));
	memset(fnet_cqs, 0, sizeof(fnet_cqs));
	memset(&fake_verbs_hooks, 0, sizeof(fake_verbs_hooks));
}
