/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The owner side of the fi_peer(3) shared receive context: see
 * include/lfv_peer_srx.h for the contract. This file has what the
 * application calls (the receive calls, with FI_PEEK and FI_CLAIM; cancel
 * and options), the SRX's open and close, and the entry points the
 * contract gives the transport; the owner ops that peers call are in
 * lfv_peer_srx_owner.c, the steps both share in lfv_peer_srx_entry.c.
 * Neither of those names the contract's header, so they sit below this
 * file.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "lfv_log.h"
#include "lfv_peer_srx.h"
#include "lfv_peer_srx_entry.h"
#include "lfv_peer_srx_owner.h"
#include "lfv_stubs.h"

#define LFV_SRX_MSG_FLAGS (FI_COMPLETION | FI_MULTI_RECV | FI_MORE)
#define LFV_SRX_TAG_FLAGS \
	(FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD | FI_MORE)
#define LFV_SRX_CHUNK_BYTES 65536
#define LFV_SRX_MIN_CHUNK 16

static struct fi_ops lfv_srx_fi_ops;

/* For the entry points that take any fid_ep: NULL unless it is ours. */
static struct lfv_peer_srx *lfv_srx_checked(struct fid_ep *ep)
{
	if (!ep || ep->fid.fclass != FI_CLASS_SRX_CTX ||
	    ep->fid.ops != &lfv_srx_fi_ops)
		return NULL;
	return lfv_srx_of_ep(ep);
}

/* ---- posted receives --------------------------------------------------- */

/* A new posted receive for req, returned in *out. */
LFV_ALWAYS_INLINE int lfv_srx_queue_recv(struct lfv_peer_srx *srx,
					 const struct lfv_srx_req *req,
					 struct lfv_srx_entry **out)
{
	struct lfv_srx_entry *e = lfv_srx_entry_new(srx, req->kind);
	int ret;

	if (!e)
		return -FI_ENOMEM;
	e->peer.addr = req->addr;
	e->peer.tag = req->tag;
	lfv_srx_set_buffers(srx, e, req);
	e->match.addr = req->addr;
	e->match.tag = req->tag;
	e->match.ignore = req->ignore;
	ret = lfv_match_post_recv(&srx->match, req->kind, &e->match);
	if (ret) {
		lfv_srx_entry_free(e);
		return ret;
	}
	lfv_list_insert_tail(&srx->posted, &e->node);
	*out = e;
	return 0;
}

/* ---- application receives ---------------------------------------------- */

static __attribute__((noinline)) int
lfv_srx_check_req_full(const struct lfv_peer_srx *srx,
		       const struct lfv_srx_req *req)
{
	uint64_t allowed = req->kind == LFV_MATCH_TAG ? LFV_SRX_TAG_FLAGS :
						       LFV_SRX_MSG_FLAGS;
	size_t i;

	if (!lfv_srx_supports(srx, req->kind))
		return -FI_EOPNOTSUPP;
	if (req->flags & ~allowed)
		return -FI_EBADFLAGS;
	if ((req->flags & FI_DISCARD) && !(req->flags & (FI_PEEK | FI_CLAIM)))
		return -FI_EINVAL;
	if ((req->flags & FI_CLAIM) && !req->context)
		return -FI_EINVAL;
	if (req->flags & FI_DISCARD)
		return 0;	/* fi_tagged(3): buffers are ignored */
	if (req->count > srx->iov_limit || (req->count && !req->iov))
		return -FI_EINVAL;
	for (i = 0; i < req->count; i++)
		if (req->iov[i].iov_len && !req->iov[i].iov_base)
			return -FI_EINVAL;
	/* A multi-receive buffer is one region to carve from. */
	if ((req->flags & FI_MULTI_RECV) &&
	    (req->count != 1 || !req->iov[0].iov_base || !req->iov[0].iov_len))
		return -FI_EINVAL;
	return 0;
}

/* fi_recv's and fi_trecv's case (one buffer, no special flag) checked
 * in a few instructions; everything else by the full check. */
LFV_ALWAYS_INLINE int lfv_srx_check_req(const struct lfv_peer_srx *srx,
					const struct lfv_srx_req *req)
{
	if (req->count == 1 && req->iov &&
	    !(req->flags & ~(uint64_t)(FI_COMPLETION | FI_MORE)) &&
	    lfv_srx_supports(srx, req->kind))
		return req->iov[0].iov_len && !req->iov[0].iov_base ?
		       -FI_EINVAL : 0;
	return lfv_srx_check_req_full(srx, req);
}

/* An ordinary receive: the oldest matching queued message, or posted. */
LFV_ALWAYS_INLINE ssize_t lfv_srx_post(struct lfv_peer_srx *srx,
				       const struct lfv_srx_req *req)
{
	struct lfv_match_entry *m;
	struct lfv_srx_entry *e;
	int ret;

	lfv_srx_lock(srx);
	m = !lfv_match_msg_count(&srx->match, req->kind) ? NULL :
	    lfv_match_find_msg(&srx->match, req->kind, req->addr, req->tag,
			       req->ignore);
	if (!m) {
		ret = lfv_srx_queue_recv(srx, req, &e);
		lfv_srx_unlock(srx);
		return ret;
	}
	e = lfv_srx_entry_of_match(m);
	lfv_match_remove_msg(&srx->match, m);
	lfv_srx_set_buffers(srx, e, req);
	e->state = LFV_SRX_STARTED;
	lfv_srx_unlock(srx);
	return lfv_srx_start(e);
}

/* A multi-receive buffer: posted, then fed the queued messages it
 * accepts, oldest first, until they run out or it is released. */
static __attribute__((noinline)) ssize_t
lfv_srx_post_multi(struct lfv_peer_srx *srx, const struct lfv_srx_req *req)
{
	struct lfv_srx_entry *mrecv, *msg;
	struct lfv_match_entry *m;
	struct lfv_list batch;
	int ret;

	lfv_list_init(&batch);
	lfv_srx_lock(srx);
	ret = lfv_srx_queue_recv(srx, req, &mrecv);
	if (ret) {
		lfv_srx_unlock(srx);
		return ret;
	}
	while ((m = lfv_match_find_msg(&srx->match, LFV_MATCH_MSG, req->addr,
				       0, 0))) {
		msg = lfv_srx_entry_of_match(m);
		lfv_match_remove_msg(&srx->match, m);
		msg->state = LFV_SRX_STARTED;
		lfv_list_insert_tail(&batch, &msg->node);
		if (lfv_srx_carve(srx, mrecv, lfv_peer_entry_size(&msg->peer), msg)) {
			lfv_srx_unpost(srx, mrecv);
			lfv_srx_entry_free(mrecv);
			break;
		}
	}
	lfv_srx_unlock(srx);
	return lfv_srx_start_batch(&batch);
}

/* FI_PEEK, with FI_CLAIM or FI_DISCARD. */
static __attribute__((noinline)) ssize_t
lfv_srx_peek(struct lfv_peer_srx *srx, const struct lfv_srx_req *req)
{
	struct lfv_srx_report report = {
		.context = req->context,
		.flags = lfv_srx_kind_flags(LFV_MATCH_TAG),
		.tag = req->tag,
	};
	struct lfv_match_entry *m;
	struct fid_peer_cq *cq;
	struct lfv_srx_entry *e;
	ssize_t ret = 0;

	lfv_srx_lock(srx);
	cq = srx->cq;
	if (!cq)
		ret = -FI_ENOCQ;
	else if ((req->flags & (FI_CLAIM | FI_DISCARD)) == FI_CLAIM &&
		 lfv_srx_find_claimed(srx, req->context))
		ret = -FI_EALREADY;	/* one claim per context */
	if (ret) {
		lfv_srx_unlock(srx);
		return ret;
	}
	m = lfv_match_find_msg(&srx->match, LFV_MATCH_TAG, req->addr, req->tag,
			       req->ignore);
	if (!m) {
		lfv_srx_unlock(srx);
		return lfv_srx_write_err(cq, &report, FI_ENOMSG);
	}
	e = lfv_srx_entry_of_match(m);
	report = lfv_srx_msg_report(e, req->context);
	if (req->flags & (FI_CLAIM | FI_DISCARD))
		lfv_match_remove_msg(&srx->match, m);
	if (req->flags & FI_DISCARD) {
		e->state = LFV_SRX_DISCARDING;
	} else if (req->flags & FI_CLAIM) {
		e->state = LFV_SRX_CLAIMED;
		e->claim_context = req->context;
		lfv_list_insert_tail(&srx->claimed, &e->node);
		srx->nclaimed++;
	}
	lfv_srx_unlock(srx);
	if (req->flags & FI_DISCARD)
		lfv_srx_discard(srx, e);
	return lfv_srx_write(cq, &report);
}

/* FI_CLAIM without FI_PEEK: receive (or discard) the claimed message. */
static __attribute__((noinline)) ssize_t
lfv_srx_claim(struct lfv_peer_srx *srx, const struct lfv_srx_req *req)
{
	bool discard = req->flags & FI_DISCARD;
	struct lfv_srx_report report;
	struct fid_peer_cq *cq;
	struct lfv_srx_entry *e;

	lfv_srx_lock(srx);
	cq = srx->cq;
	if (discard && !cq) {
		lfv_srx_unlock(srx);
		return -FI_ENOCQ;
	}
	e = lfv_srx_find_claimed(srx, req->context);
	if (!e) {
		lfv_srx_unlock(srx);
		return -FI_ENOENT;
	}
	lfv_list_remove(&e->node);
	srx->nclaimed--;
	e->claim_context = NULL;
	if (discard) {
		report = lfv_srx_msg_report(e, req->context);
		e->state = LFV_SRX_DISCARDING;
		lfv_srx_unlock(srx);
		lfv_srx_discard(srx, e);
		return lfv_srx_write(cq, &report);
	}
	lfv_srx_set_buffers(srx, e, req);
	e->state = LFV_SRX_STARTED;
	lfv_srx_unlock(srx);
	return lfv_srx_start(e);
}

LFV_ALWAYS_INLINE ssize_t lfv_srx_recv_common(struct lfv_peer_srx *srx,
					      const struct lfv_srx_req *req)
{
	int ret = lfv_srx_check_req(srx, req);

	if (ret)
		return ret;
	if (req->flags & FI_MULTI_RECV)
		return lfv_srx_post_multi(srx, req);
	if (req->flags & FI_PEEK)
		return lfv_srx_peek(srx, req);
	if (req->flags & FI_CLAIM)
		return lfv_srx_claim(srx, req);
	return lfv_srx_post(srx, req);
}

static ssize_t lfv_srx_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	struct lfv_peer_srx *srx = lfv_srx_of_ep(ep);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_srx_req req = {
		.kind = LFV_MATCH_MSG, .iov = &iov, .desc = &desc, .count = 1,
		.addr = src_addr, .context = context, .flags = srx->op_flags,
	};

	return lfv_srx_recv_common(srx, &req);
}

static ssize_t lfv_srx_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	struct lfv_peer_srx *srx = lfv_srx_of_ep(ep);
	struct lfv_srx_req req = {
		.kind = LFV_MATCH_MSG, .iov = iov, .desc = desc, .count = count,
		.addr = src_addr, .context = context, .flags = srx->op_flags,
	};

	return lfv_srx_recv_common(srx, &req);
}

static ssize_t lfv_srx_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	struct lfv_srx_req req;

	if (!msg)
		return -FI_EINVAL;
	req = (struct lfv_srx_req){
		.kind = LFV_MATCH_MSG, .iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .addr = msg->addr,
		.context = msg->context,
		.flags = flags | lfv_srx_of_ep(ep)->every_recv,
	};
	return lfv_srx_recv_common(lfv_srx_of_ep(ep), &req);
}

static ssize_t lfv_srx_trecv(struct fid_ep *ep, void *buf, size_t len,
			     void *desc, fi_addr_t src_addr, uint64_t tag,
			     uint64_t ignore, void *context)
{
	struct lfv_peer_srx *srx = lfv_srx_of_ep(ep);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct lfv_srx_req req = {
		.kind = LFV_MATCH_TAG, .iov = &iov, .desc = &desc, .count = 1,
		.addr = src_addr, .tag = tag, .ignore = ignore,
		.context = context, .flags = srx->op_flags & FI_COMPLETION,
	};

	return lfv_srx_recv_common(srx, &req);
}

static ssize_t lfv_srx_trecvv(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t src_addr,
			      uint64_t tag, uint64_t ignore, void *context)
{
	struct lfv_peer_srx *srx = lfv_srx_of_ep(ep);
	struct lfv_srx_req req = {
		.kind = LFV_MATCH_TAG, .iov = iov, .desc = desc, .count = count,
		.addr = src_addr, .tag = tag, .ignore = ignore,
		.context = context, .flags = srx->op_flags & FI_COMPLETION,
	};

	return lfv_srx_recv_common(srx, &req);
}

static ssize_t lfv_srx_trecvmsg(struct fid_ep *ep,
				const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct lfv_srx_req req;

	if (!msg)
		return -FI_EINVAL;
	req = (struct lfv_srx_req){
		.kind = LFV_MATCH_TAG, .iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .addr = msg->addr, .tag = msg->tag,
		.ignore = msg->ignore, .context = msg->context,
		.flags = flags | lfv_srx_of_ep(ep)->every_recv,
	};
	return lfv_srx_recv_common(lfv_srx_of_ep(ep), &req);
}

static struct fi_ops_msg lfv_srx_msg_ops =
	LFV_RX_ONLY_OPS(fi_ops_msg, lfv_srx_recv, lfv_srx_recvv,
			lfv_srx_recvmsg, LFV_NO_MSG_SEND_SLOTS);

static struct fi_ops_tagged lfv_srx_tagged_ops =
	LFV_RX_ONLY_OPS(fi_ops_tagged, lfv_srx_trecv, lfv_srx_trecvv,
			lfv_srx_trecvmsg, LFV_NO_TAGGED_SEND_SLOTS);

/* ---- fi_ops_ep --------------------------------------------------------- */

static ssize_t lfv_srx_cancel(fid_t fid, void *context)
{
	struct lfv_peer_srx *srx = lfv_srx_of_fid(fid);
	struct lfv_srx_report report;
	struct fid_peer_cq *cq;
	struct lfv_srx_entry *e;

	/* fi_cancel(3): operations without a context cannot be canceled. */
	if (!context)
		return -FI_EINVAL;
	lfv_srx_lock(srx);
	cq = srx->cq;
	if (!cq) {
		lfv_srx_unlock(srx);
		return -FI_ENOCQ;
	}
	e = lfv_srx_find_posted(srx, context);
	if (!e) {
		lfv_srx_unlock(srx);
		return -FI_ENOENT;
	}
	/* FI_MULTI_RECV stays in the flags: a canceled buffer is released. */
	report = (struct lfv_srx_report){
		.context = context,
		.flags = e->peer.flags & (FI_RECV | FI_MSG | FI_TAGGED |
					  FI_MULTI_RECV),
		.tag = e->peer.tag,
		.src = FI_ADDR_NOTAVAIL,
	};
	lfv_srx_unpost(srx, e);
	lfv_srx_entry_free(e);
	lfv_srx_unlock(srx);
	return lfv_srx_write_err(cq, &report, FI_ECANCELED);
}

static bool lfv_srx_is_min_multi_recv(int level, int optname)
{
	return level == FI_OPT_ENDPOINT && optname == FI_OPT_MIN_MULTI_RECV;
}

static int lfv_srx_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	struct lfv_peer_srx *srx = lfv_srx_of_fid(fid);
	size_t value;

	if (!lfv_srx_is_min_multi_recv(level, optname))
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(value))
		return -FI_ETOOSMALL;
	lfv_srx_lock(srx);
	value = srx->min_multi_recv;
	lfv_srx_unlock(srx);
	memcpy(optval, &value, sizeof(value));
	*optlen = sizeof(value);
	return 0;
}

static int lfv_srx_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	struct lfv_peer_srx *srx = lfv_srx_of_fid(fid);
	size_t value;

	if (!lfv_srx_is_min_multi_recv(level, optname))
		return -FI_ENOPROTOOPT;
	if (!optval || optlen != sizeof(value))
		return -FI_EINVAL;
	memcpy(&value, optval, sizeof(value));
	lfv_srx_lock(srx);
	srx->min_multi_recv = value;
	lfv_srx_unlock(srx);
	return 0;
}

static struct fi_ops_ep lfv_srx_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfv_srx_cancel,
	.getopt = lfv_srx_getopt,
	.setopt = lfv_srx_setopt,
	.tx_ctx = lfv_no_tx_ctx,
	.rx_ctx = lfv_no_rx_ctx,
	.rx_size_left = lfv_no_size_left,
	.tx_size_left = lfv_no_size_left,
};

int lfv_peer_srx_set_locking(struct fid_ep *srx_fid, bool locked)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx)
		return -FI_EINVAL;
	srx->locked = locked;
	return 0;
}

int lfv_peer_srx_set_selective(struct fid_ep *srx_fid, bool selective)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx)
		return -FI_EINVAL;
	lfv_srx_lock(srx);
	srx->every_recv = selective ? 0 : FI_COMPLETION;
	srx->op_flags = srx->attr_op_flags | srx->every_recv;
	lfv_srx_unlock(srx);
	return 0;
}

int lfv_peer_srx_set_data_fn(struct fid_peer_srx *peer_srx,
			     lfv_peer_srx_data_fn fn)
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(peer_srx);

	if (!exp)
		return -FI_EINVAL;
	lfv_srx_lock(exp->srx);
	exp->data_fn = fn;
	lfv_srx_unlock(exp->srx);
	return 0;
}

int lfv_peer_srx_export(struct fid_ep *srx_fid, struct fid_peer_srx **peer_srx)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx || !peer_srx)
		return -FI_EINVAL;
	return lfv_srx_export_new(srx, peer_srx);
}

int lfv_peer_srx_bind_cq(struct fid_ep *srx_fid, struct fid_peer_cq *cq)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx)
		return -FI_EINVAL;
	if (cq && (!cq->owner_ops || !cq->owner_ops->write ||
		   !cq->owner_ops->writeerr))
		return -FI_EINVAL;
	lfv_srx_lock(srx);
	srx->cq = cq;
	lfv_srx_unlock(srx);
	return 0;
}

int lfv_peer_srx_counts(struct fid_ep *srx_fid,
			struct lfv_peer_srx_counts *counts)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx || !counts)
		return -FI_EINVAL;
	lfv_srx_lock(srx);
	*counts = (struct lfv_peer_srx_counts){
		.posted = lfv_match_recv_count(&srx->match, LFV_MATCH_MSG) +
			  lfv_match_recv_count(&srx->match, LFV_MATCH_TAG),
		.unexpected = lfv_match_msg_count(&srx->match, LFV_MATCH_MSG) +
			      lfv_match_msg_count(&srx->match, LFV_MATCH_TAG),
		.claimed = srx->nclaimed,
		.entries = lfv_pool_in_use(&srx->entries),
		.exports = srx->nexports,
	};
	lfv_srx_unlock(srx);
	return 0;
}

/* ---- open and close ---------------------------------------------------- */

/* Every entry that is not a posted receive names a peer, and each open
 * export keeps the SRX open: with none left, only posted receives
 * remain, and they go with the pool. */
static int lfv_srx_close(struct fid *fid)
{
	struct lfv_peer_srx *srx = lfv_srx_of_fid(fid);
	size_t exports;

	lfv_srx_lock(srx);
	exports = srx->nexports;
	lfv_srx_unlock(srx);
	if (exports)
		return -FI_EBUSY;
	lfv_match_fini(&srx->match);
	lfv_pool_fini(&srx->entries);
	lfv_mutex_destroy(&srx->lock);
	free(srx);
	return 0;
}

/* fi_export_fid: a fid_peer_srx for a peer provider (lfv_peer_srx_export).
 * Its fid.context stays lfverbs' own, not the caller's: shm of 1.18 to
 * 1.22 binds an SRX by copying its owner ops and fid.context, and finds
 * the owner's state through that context. */
static int lfv_srx_control(struct fid *fid, int command, void *arg)
{
	struct fi_fid_export *exp = arg;
	struct fid_peer_srx *peer;
	int ret;

	if (command != FI_EXPORT_FID)
		return -FI_ENOSYS;
	if (!exp || !exp->fid || !lfv_peer_allowed())
		return -FI_EINVAL;
	if (exp->flags)
		return -FI_EBADFLAGS;
	ret = lfv_peer_srx_export(lfv_container_of(fid, struct fid_ep, fid),
				  &peer);
	if (ret)
		return ret;
	/* A peer provider calls in from threads of its own. */
	lfv_srx_checked(lfv_container_of(fid, struct fid_ep, fid))->locked =
		true;
	*exp->fid = &peer->ep_fid.fid;
	return 0;
}

static struct fi_ops lfv_srx_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_srx_close,
	.bind = lfv_no_bind,
	.control = lfv_srx_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

bool lfv_peer_srx_is(const struct fid *fid)
{
	return fid && fid->fclass == FI_CLASS_SRX_CTX &&
	       fid->ops == &lfv_srx_fi_ops;
}

static int lfv_srx_check_open(const struct fi_rx_attr *attr, uint64_t caps,
			      struct fid_ep **srx)
{
	if (!attr || !srx)
		return -FI_EINVAL;
	if (caps & ~(uint64_t)LFV_PEER_SRX_CAPS)
		return -FI_EINVAL;
	if (attr->iov_limit > LFV_PEER_SRX_MAX_IOV_LIMIT)
		return -FI_EINVAL;
	if (attr->op_flags & ~(uint64_t)LFV_PEER_SRX_OP_FLAGS)
		return -FI_EBADFLAGS;
	return 0;
}

static void lfv_srx_init_fid(struct lfv_peer_srx *srx, void *context)
{
	lfv_rx_only_fid_init(&srx->ep_fid, FI_CLASS_SRX_CTX, context,
			     &(struct lfv_rx_only_ops){
				     .fi = &lfv_srx_fi_ops,
				     .ep = &lfv_srx_ep_ops,
				     .msg = &lfv_srx_msg_ops,
				     .tagged = &lfv_srx_tagged_ops });
}

static size_t lfv_srx_entry_size(size_t iov_limit)
{
	return sizeof(struct lfv_srx_entry) +
	       iov_limit * (sizeof(struct iovec) + sizeof(void *));
}

int lfv_peer_srx_open(const struct fi_rx_attr *attr, uint64_t caps,
		      void *context, struct fid_ep **srx_fid)
{
	struct lfv_peer_srx *srx;
	size_t entry_size, chunk;
	int ret;

	ret = lfv_srx_check_open(attr, caps, srx_fid);
	if (ret)
		return ret;
	srx = calloc(1, sizeof(*srx));
	if (!srx)
		return -FI_ENOMEM;
	srx->caps = (caps & (FI_MSG | FI_TAGGED)) ? caps :
						    caps | FI_MSG | FI_TAGGED;
	srx->attr_op_flags = attr->op_flags;
	srx->every_recv = FI_COMPLETION;
	srx->op_flags = srx->attr_op_flags | srx->every_recv;
	srx->iov_limit = attr->iov_limit ? attr->iov_limit :
					   LFV_PEER_SRX_DEFAULT_IOV_LIMIT;
	srx->min_multi_recv = LFV_PEER_SRX_DEFAULT_MIN_MULTI_RECV;
	entry_size = lfv_srx_entry_size(srx->iov_limit);
	chunk = LFV_SRX_CHUNK_BYTES / entry_size;
	ret = lfv_pool_init(&srx->entries, entry_size,
			    chunk > LFV_SRX_MIN_CHUNK ? chunk :
							LFV_SRX_MIN_CHUNK, 0);
	if (ret)
		goto free_srx;
	ret = lfv_match_init(&srx->match, caps & FI_DIRECTED_RECV);
	if (ret)
		goto fini_pool;
	srx->locked = true;
	ret = lfv_mutex_init(&srx->lock);
	if (ret)
		goto fini_match;
	lfv_list_init(&srx->posted);
	lfv_list_init(&srx->claimed);
	lfv_list_init(&srx->exports);
	lfv_srx_init_fid(srx, context);
	*srx_fid = &srx->ep_fid;
	return 0;

fini_match:
	lfv_match_fini(&srx->match);
fini_pool:
	lfv_pool_fini(&srx->entries);
free_srx:
	free(srx);
	return ret;
}
