/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The owner side of the fi_peer(3) shared receive context: see
 * include/lfv_peer_srx.h for the contract. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "lfv_atomic.h"
#include "lfv_list.h"
#include "lfv_lock.h"
#include "lfv_log.h"
#include "lfv_match.h"
#include "lfv_peer_srx.h"
#include "lfv_pool.h"
#include "lfv_stubs.h"

#define LFV_SRX_MSG_FLAGS (FI_COMPLETION | FI_MULTI_RECV | FI_MORE)
#define LFV_SRX_TAG_FLAGS \
	(FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD | FI_MORE)
/* Flags an entry hands to the peer from the application's request. */
#define LFV_SRX_PASSED_FLAGS (FI_COMPLETION | FI_MULTI_RECV)
#define LFV_SRX_CHUNK_BYTES 65536
#define LFV_SRX_MIN_CHUNK 16

enum lfv_srx_state {
	LFV_SRX_POSTED,		/* an application receive in the engine */
	LFV_SRX_ARRIVED,	/* with a peer after get_* said -FI_ENOENT */
	LFV_SRX_UNEXPECTED,	/* queued by a peer, in the engine */
	LFV_SRX_CLAIMED,	/* reserved by FI_PEEK | FI_CLAIM */
	LFV_SRX_STARTED,	/* with a peer until free_entry */
	LFV_SRX_DISCARDING,	/* the owner discards it, then frees it */
	LFV_SRX_FREE,		/* back in the pool (catches double frees) */
};

struct lfv_srx_export;

struct lfv_srx_entry {
	struct fi_peer_rx_entry peer;	/* what peers see */
	struct lfv_match_entry match;
	struct lfv_list node;		/* posted or claimed list, or a batch */
	struct lfv_peer_srx *srx;
	struct lfv_srx_export *exp;	/* the peer it names, or NULL */
	void *claim_context;
	enum lfv_match_kind kind;
	enum lfv_srx_state state;
	struct iovec iov[];		/* iov_limit iovecs, then descs */
};

/* One fid_peer_srx per attached peer provider. */
struct lfv_srx_export {
	struct fid_peer_srx peer_srx;
	struct fi_ops_srx_peer peer_ops;	/* the peer fills it in */
	lfv_peer_srx_data_fn data_fn;		/* CQ data of a queued entry */
	struct lfv_peer_srx *srx;
	struct lfv_list node;			/* srx->exports */
	size_t entries;				/* entries naming this peer */
};

struct lfv_peer_srx {
	struct fid_ep ep_fid;
	struct lfv_mutex lock;		/* everything below, when locked */
	bool locked;			/* false: callers serialise (the
					 * domain's threading says so) */
	struct lfv_match match;
	struct lfv_pool entries;	/* struct lfv_srx_entry + iov storage */
	struct lfv_list posted;		/* app receives, posting order */
	struct lfv_list claimed;
	struct lfv_list exports;
	size_t nclaimed;
	size_t nexports;
	struct fid_peer_cq *cq;		/* the SRX's own completions */
	uint64_t caps;
	uint64_t op_flags;
	size_t iov_limit;
	size_t min_multi_recv;
};

static inline void lfv_srx_lock(struct lfv_peer_srx *srx)
{
	if (srx->locked)
		lfv_mutex_lock(&srx->lock);
}

static inline void lfv_srx_unlock(struct lfv_peer_srx *srx)
{
	if (srx->locked)
		lfv_mutex_unlock(&srx->lock);
}

/* An application receive as the ops describe it. */
struct lfv_srx_req {
	enum lfv_match_kind kind;
	const struct iovec *iov;
	void **desc;
	size_t count;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;
	void *context;
	uint64_t flags;
};

/* A completion the SRX writes itself. */
struct lfv_srx_report {
	void *context;
	uint64_t flags;
	size_t len;
	uint64_t tag;
	uint64_t data;
	fi_addr_t src;
};

static struct fi_ops lfv_srx_fi_ops;
static struct fi_ops lfv_srx_export_fi_ops;
static struct fi_ops_srx_owner lfv_srx_owner_ops;

/* ---- lookups ----------------------------------------------------------- */

static struct lfv_peer_srx *lfv_srx_of_fid(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_peer_srx, ep_fid.fid);
}

static struct lfv_peer_srx *lfv_srx_of_ep(struct fid_ep *ep)
{
	return lfv_container_of(ep, struct lfv_peer_srx, ep_fid);
}

/* For the entry points that take any fid_ep: NULL unless it is ours. */
static struct lfv_peer_srx *lfv_srx_checked(struct fid_ep *ep)
{
	if (!ep || ep->fid.fclass != FI_CLASS_SRX_CTX ||
	    ep->fid.ops != &lfv_srx_fi_ops)
		return NULL;
	return lfv_srx_of_ep(ep);
}

static struct lfv_srx_export *lfv_srx_export_checked(struct fid_peer_srx *ps)
{
	if (!ps || ps->ep_fid.fid.fclass != FI_CLASS_PEER_SRX ||
	    ps->ep_fid.fid.ops != &lfv_srx_export_fi_ops)
		return NULL;
	return lfv_container_of(ps, struct lfv_srx_export, peer_srx);
}

static struct lfv_srx_entry *lfv_srx_entry_of_match(struct lfv_match_entry *m)
{
	return lfv_container_of(m, struct lfv_srx_entry, match);
}

static struct lfv_srx_entry *lfv_srx_entry_of_peer(struct fi_peer_rx_entry *p)
{
	return lfv_container_of(p, struct lfv_srx_entry, peer);
}

static bool lfv_srx_supports(const struct lfv_peer_srx *srx,
			     enum lfv_match_kind kind)
{
	return srx->caps & (kind == LFV_MATCH_TAG ? FI_TAGGED : FI_MSG);
}

static uint64_t lfv_srx_kind_flags(enum lfv_match_kind kind)
{
	return FI_RECV | (kind == LFV_MATCH_TAG ? FI_TAGGED : FI_MSG);
}

/* ---- entries ----------------------------------------------------------- */

static void **lfv_srx_descs(const struct lfv_peer_srx *srx,
			    struct lfv_srx_entry *e)
{
	return (void **)(e->iov + srx->iov_limit);
}

LFV_ALWAYS_INLINE struct lfv_srx_entry *
lfv_srx_entry_new(struct lfv_peer_srx *srx, enum lfv_match_kind kind)
{
	struct lfv_srx_entry *e;
	void *obj;

	if (lfv_pool_get(&srx->entries, &obj))
		return NULL;
	e = obj;
	/* Field by field, not a memset of the whole entry: this is on every
	 * receive's path. The match fields are the engine's: it sets them
	 * when the entry is posted or added. */
	e->peer = (struct fi_peer_rx_entry){
		.iov = e->iov,
		.desc = lfv_srx_descs(srx, e),
		.addr = FI_ADDR_UNSPEC,
	};
	lfv_list_init(&e->node);
	e->srx = srx;
	e->exp = NULL;
	e->claim_context = NULL;
	e->kind = kind;
	e->state = LFV_SRX_POSTED;
	return e;
}

static void lfv_srx_entry_free(struct lfv_srx_entry *e)
{
	if (e->exp)
		e->exp->entries--;
	e->state = LFV_SRX_FREE;
	lfv_pool_put(&e->srx->entries, e);
}

/* The entry now belongs to (or waits on) this peer. */
static void lfv_srx_name_peer(struct lfv_srx_entry *e,
			      struct lfv_srx_export *exp)
{
	e->exp = exp;
	exp->entries++;
	e->peer.srx = &exp->peer_srx;
}

/* The application's iovecs and descriptors into e. */
LFV_ALWAYS_INLINE void lfv_srx_copy_iov(struct lfv_peer_srx *srx,
					struct lfv_srx_entry *e,
					const struct lfv_srx_req *req)
{
	void **descs = lfv_srx_descs(srx, e);

	if (req->count == 1) {	/* fi_recv, fi_trecv: no library calls */
		e->iov[0] = req->iov[0];
		descs[0] = req->desc ? req->desc[0] : NULL;
	} else if (req->count) {
		memcpy(e->iov, req->iov, req->count * sizeof(*e->iov));
		if (req->desc)
			memcpy(descs, req->desc, req->count * sizeof(*descs));
		else
			memset(descs, 0, req->count * sizeof(*descs));
	}
}

/* The application's buffers, context and completion flags into e. */
LFV_ALWAYS_INLINE void lfv_srx_set_buffers(struct lfv_peer_srx *srx,
					   struct lfv_srx_entry *e,
					   const struct lfv_srx_req *req)
{
	e->peer.context = req->context;
	e->peer.count = req->count;
	lfv_srx_copy_iov(srx, e, req);
	e->peer.flags = lfv_srx_kind_flags(req->kind) |
			(req->flags & LFV_SRX_PASSED_FLAGS);
}

/* A posted receive's buffers into the entry a peer already holds. */
static void lfv_srx_copy_buffers(struct lfv_peer_srx *srx,
				 struct lfv_srx_entry *dst,
				 struct lfv_srx_entry *src)
{
	dst->peer.context = src->peer.context;
	dst->peer.count = src->peer.count;
	memcpy(dst->iov, src->iov, src->peer.count * sizeof(*dst->iov));
	memcpy(lfv_srx_descs(srx, dst), lfv_srx_descs(srx, src),
	       src->peer.count * sizeof(void *));
	dst->peer.flags = src->peer.flags;
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

static void lfv_srx_unpost(struct lfv_peer_srx *srx, struct lfv_srx_entry *recv)
{
	lfv_match_remove_recv(&srx->match, &recv->match);
	lfv_list_remove(&recv->node);
}

/*
 * Carves a message of size bytes from the multi-receive buffer mrecv into
 * dst (one iov: the region). True when the room left has fallen below the
 * minimum: dst then reports the buffer released, and the caller drops it.
 */
static bool lfv_srx_carve(struct lfv_peer_srx *srx, struct lfv_srx_entry *mrecv,
			  size_t size, struct lfv_srx_entry *dst)
{
	struct iovec *room = &mrecv->iov[0];
	size_t len = size < room->iov_len ? size : room->iov_len;

	dst->peer.context = mrecv->peer.context;
	dst->peer.count = 1;
	dst->iov[0].iov_base = room->iov_base;
	dst->iov[0].iov_len = len;
	lfv_srx_descs(srx, dst)[0] = lfv_srx_descs(srx, mrecv)[0];
	dst->peer.flags = mrecv->peer.flags & ~FI_MULTI_RECV;
	room->iov_base = (char *)room->iov_base + len;
	room->iov_len -= len;
	/* An empty buffer is released whatever the minimum (even 0). */
	if (room->iov_len && room->iov_len >= srx->min_multi_recv)
		return false;
	/* fi_msg(3): the release is reported even under selective
	 * completion. */
	dst->peer.flags |= FI_MULTI_RECV | FI_COMPLETION;
	return true;
}

/* The entry a peer receives a message into from the matched receive: the
 * receive itself, or a new entry carved from a multi-receive buffer. */
static struct lfv_srx_entry *lfv_srx_use_recv(struct lfv_peer_srx *srx,
					      struct lfv_srx_entry *recv,
					      size_t size)
{
	struct lfv_srx_entry *e;

	if (!(recv->peer.flags & FI_MULTI_RECV)) {
		lfv_srx_unpost(srx, recv);
		return recv;
	}
	e = lfv_srx_entry_new(srx, LFV_MATCH_MSG);
	if (!e)
		return NULL;
	if (lfv_srx_carve(srx, recv, size, e)) {
		lfv_srx_unpost(srx, recv);
		lfv_srx_entry_free(recv);
	}
	return e;
}

/* As lfv_srx_use_recv, into the entry e a peer queued. */
static void lfv_srx_fill_from_recv(struct lfv_peer_srx *srx,
				   struct lfv_srx_entry *recv,
				   struct lfv_srx_entry *e)
{
	bool drop = true;

	if (recv->peer.flags & FI_MULTI_RECV)
		drop = lfv_srx_carve(srx, recv, e->peer.size, e);
	else
		lfv_srx_copy_buffers(srx, e, recv);
	if (drop) {
		lfv_srx_unpost(srx, recv);
		lfv_srx_entry_free(recv);
	}
}

static struct lfv_srx_entry *lfv_srx_find_posted(struct lfv_peer_srx *srx,
						 void *context)
{
	struct lfv_srx_entry *e;
	struct lfv_list *item;

	lfv_list_foreach(item, &srx->posted) {
		e = lfv_container_of(item, struct lfv_srx_entry, node);
		if (e->peer.context == context)
			return e;
	}
	return NULL;
}

static struct lfv_srx_entry *lfv_srx_find_claimed(struct lfv_peer_srx *srx,
						  void *context)
{
	struct lfv_srx_entry *e;
	struct lfv_list *item;

	lfv_list_foreach(item, &srx->claimed) {
		e = lfv_container_of(item, struct lfv_srx_entry, node);
		if (e->claim_context == context)
			return e;
	}
	return NULL;
}

/* ---- calls out (never under srx->lock) --------------------------------- */

static int lfv_srx_start(struct lfv_srx_entry *e)
{
	struct fi_ops_srx_peer *ops = e->peer.srx->peer_ops;

	/* The peer owns e from here: it may free it before returning. */
	return e->kind == LFV_MATCH_TAG ? ops->start_tag(&e->peer) :
					  ops->start_msg(&e->peer);
}

/* Starts every entry of a batch in order; the first error is returned. */
static ssize_t lfv_srx_start_batch(struct lfv_list *batch)
{
	struct lfv_list *item;
	ssize_t ret = 0;
	int err;

	while ((item = lfv_list_pop_head(batch))) {
		err = lfv_srx_start(lfv_container_of(item, struct lfv_srx_entry,
						     node));
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* The peer drops the message; the owner then frees the entry (as
 * libfabric's own SRX does: the peer must not free_entry it). */
static void lfv_srx_discard(struct lfv_peer_srx *srx, struct lfv_srx_entry *e)
{
	struct fi_ops_srx_peer *ops = e->peer.srx->peer_ops;
	int ret;

	ret = e->kind == LFV_MATCH_TAG ? ops->discard_tag(&e->peer) :
					 ops->discard_msg(&e->peer);
	if (ret)
		LFV_WARN(FI_LOG_EP_DATA, "peer discard failed: %d\n", ret);
	lfv_srx_lock(srx);
	lfv_srx_entry_free(e);
	lfv_srx_unlock(srx);
}

static ssize_t lfv_srx_write(struct fid_peer_cq *cq,
			     const struct lfv_srx_report *r)
{
	ssize_t ret = cq->owner_ops->write(cq, r->context, r->flags, r->len,
					   NULL, r->data, r->tag, r->src);

	return ret < 0 ? ret : 0;
}

static ssize_t lfv_srx_write_err(struct fid_peer_cq *cq,
				 const struct lfv_srx_report *r, int err)
{
	struct fi_cq_err_entry entry = {
		.op_context = r->context,
		.flags = r->flags,
		.len = r->len,
		.tag = r->tag,
		.err = err,
		.prov_errno = -err,
	};
	ssize_t ret = cq->owner_ops->writeerr(cq, &entry);

	return ret < 0 ? ret : 0;
}

static struct lfv_srx_export *lfv_srx_export_checked(struct fid_peer_srx *ps);

/* What a peek (or a discard) reports about a queued message: CQ data too
 * when the peer that queued it can tell (1.17 entries carry none). */
static struct lfv_srx_report lfv_srx_msg_report(const struct lfv_srx_entry *e,
						void *context)
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(e->peer.srx);
	struct lfv_srx_report r = {
		.context = context,
		.flags = lfv_srx_kind_flags(e->kind),
		.len = e->peer.size,
		.tag = e->peer.tag,
		.src = e->peer.addr,
	};

	if (exp && exp->data_fn && exp->data_fn(&e->peer, &r.data))
		r.flags |= FI_REMOTE_CQ_DATA;
	return r;
}

/* ---- owner ops (called by peers) --------------------------------------- */

/* A posted receive for the message, or a fresh entry (-FI_ENOENT). */
static int lfv_srx_match_arrival(struct lfv_peer_srx *srx,
				 enum lfv_match_kind kind, fi_addr_t addr,
				 size_t size, uint64_t tag,
				 struct lfv_srx_entry **out)
{
	struct lfv_match_entry *m;
	struct lfv_srx_entry *e;

	m = lfv_match_find_recv(&srx->match, kind, addr, tag);
	if (m) {
		e = lfv_srx_use_recv(srx, lfv_srx_entry_of_match(m), size);
		if (!e)
			return -FI_ENOMEM;
		e->state = LFV_SRX_STARTED;
	} else {
		e = lfv_srx_entry_new(srx, kind);
		if (!e)
			return -FI_ENOMEM;
		e->peer.flags = lfv_srx_kind_flags(kind);
		e->state = LFV_SRX_ARRIVED;
	}
	e->peer.addr = addr;
	e->peer.size = size;
	e->peer.tag = kind == LFV_MATCH_TAG ? tag : 0;
	*out = e;
	return m ? 0 : -FI_ENOENT;
}

static int lfv_srx_get(struct fid_peer_srx *ps, enum lfv_match_kind kind,
		       fi_addr_t addr, size_t size, uint64_t tag,
		       struct fi_peer_rx_entry **entry)
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(ps);
	struct lfv_peer_srx *srx;
	struct lfv_srx_entry *e;
	int ret;

	if (!exp || !entry)
		return -FI_EINVAL;
	srx = exp->srx;
	if (!lfv_srx_supports(srx, kind))
		return -FI_EOPNOTSUPP;
	lfv_srx_lock(srx);
	ret = lfv_srx_match_arrival(srx, kind, addr, size, tag, &e);
	if (ret == 0 || ret == -FI_ENOENT) {
		lfv_srx_name_peer(e, exp);
		*entry = &e->peer;
	}
	lfv_srx_unlock(srx);
	return ret;
}

static int lfv_srx_get_msg(struct fid_peer_srx *ps, fi_addr_t addr,
			   size_t size, struct fi_peer_rx_entry **entry)
{
	return lfv_srx_get(ps, LFV_MATCH_MSG, addr, size, 0, entry);
}

static int lfv_srx_get_tag(struct fid_peer_srx *ps, fi_addr_t addr,
			   uint64_t tag, struct fi_peer_rx_entry **entry)
{
	/* 1.17's get_tag carries no size: the peer sets entry->size. */
	return lfv_srx_get(ps, LFV_MATCH_TAG, addr, 0, tag, entry);
}

static void lfv_srx_no_entry_op_warn(const char *what)
{
	LFV_WARN(FI_LOG_EP_DATA, "peer SRX: %s called but not filled in\n",
		 what);
}

static int lfv_srx_unset_start_msg(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	lfv_srx_no_entry_op_warn("start_msg");
	return -FI_ENOSYS;
}

static int lfv_srx_unset_start_tag(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	lfv_srx_no_entry_op_warn("start_tag");
	return -FI_ENOSYS;
}

static int lfv_srx_unset_discard_msg(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	lfv_srx_no_entry_op_warn("discard_msg");
	return -FI_ENOSYS;
}

static int lfv_srx_unset_discard_tag(struct fi_peer_rx_entry *entry)
{
	(void)entry;
	lfv_srx_no_entry_op_warn("discard_tag");
	return -FI_ENOSYS;
}

/* A peer whose callbacks can be called for this kind of entry. */
static bool lfv_srx_peer_usable(const struct fid_peer_srx *ps,
				enum lfv_match_kind kind)
{
	const struct fi_ops_srx_peer *ops = ps ? ps->peer_ops : NULL;

	if (!ops)
		return false;
	if (kind == LFV_MATCH_TAG)
		return ops->start_tag && ops->discard_tag &&
		       ops->start_tag != lfv_srx_unset_start_tag &&
		       ops->discard_tag != lfv_srx_unset_discard_tag;
	return ops->start_msg && ops->discard_msg &&
	       ops->start_msg != lfv_srx_unset_start_msg &&
	       ops->discard_msg != lfv_srx_unset_discard_msg;
}

/*
 * Under the lock: starts e with a receive posted since get_* (true), or
 * queues it as unexpected. *ret: 0 or the engine's error.
 */
static bool lfv_srx_queue_locked(struct lfv_peer_srx *srx,
				 struct lfv_srx_entry *e, int *ret)
{
	struct lfv_match_entry *m;

	*ret = 0;
	m = lfv_match_find_recv(&srx->match, e->kind, e->peer.addr,
				e->peer.tag);
	if (m) {
		lfv_srx_fill_from_recv(srx, lfv_srx_entry_of_match(m), e);
		e->state = LFV_SRX_STARTED;
		return true;
	}
	e->match.addr = e->peer.addr;
	e->match.tag = e->peer.tag;
	e->match.ignore = 0;
	*ret = lfv_match_add_msg(&srx->match, e->kind, &e->match);
	if (!*ret)
		e->state = LFV_SRX_UNEXPECTED;
	return false;
}

static int lfv_srx_queue(struct fi_peer_rx_entry *entry,
			 enum lfv_match_kind kind)
{
	struct lfv_peer_srx *srx;
	struct lfv_srx_entry *e;
	bool start;
	int ret;

	if (!entry)
		return -FI_EINVAL;
	e = lfv_srx_entry_of_peer(entry);
	srx = e->srx;
	if (!lfv_srx_peer_usable(entry->srx, kind))
		return -FI_EINVAL;
	lfv_srx_lock(srx);
	if (e->state != LFV_SRX_ARRIVED || e->kind != kind) {
		lfv_srx_unlock(srx);
		return -FI_EINVAL;
	}
	start = lfv_srx_queue_locked(srx, e, &ret);
	lfv_srx_unlock(srx);
	return start ? lfv_srx_start(e) : ret;
}

static int lfv_srx_queue_msg(struct fi_peer_rx_entry *entry)
{
	return lfv_srx_queue(entry, LFV_MATCH_MSG);
}

static int lfv_srx_queue_tag(struct fi_peer_rx_entry *entry)
{
	return lfv_srx_queue(entry, LFV_MATCH_TAG);
}

static void lfv_srx_free_entry(struct fi_peer_rx_entry *entry)
{
	struct lfv_peer_srx *srx;
	struct lfv_srx_entry *e;

	if (!entry)
		return;
	e = lfv_srx_entry_of_peer(entry);
	srx = e->srx;
	lfv_srx_lock(srx);
	if (e->state == LFV_SRX_STARTED || e->state == LFV_SRX_ARRIVED)
		lfv_srx_entry_free(e);
	else
		LFV_WARN(FI_LOG_EP_DATA,
			 "peer SRX: free_entry of an entry the peer does "
			 "not hold (state %d)\n", (int)e->state);
	lfv_srx_unlock(srx);
}

static struct fi_ops_srx_owner lfv_srx_owner_ops = {
	.size = sizeof(struct fi_ops_srx_owner),
	.get_msg = lfv_srx_get_msg,
	.get_tag = lfv_srx_get_tag,
	.queue_msg = lfv_srx_queue_msg,
	.queue_tag = lfv_srx_queue_tag,
	.free_entry = lfv_srx_free_entry,
};

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
		if (lfv_srx_carve(srx, mrecv, msg->peer.size, msg)) {
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
		.context = msg->context, .flags = flags,
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
		.ignore = msg->ignore, .context = msg->context, .flags = flags,
	};
	return lfv_srx_recv_common(lfv_srx_of_ep(ep), &req);
}

static struct fi_ops_msg lfv_srx_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lfv_srx_recv,
	.recvv = lfv_srx_recvv,
	.recvmsg = lfv_srx_recvmsg,
	.send = lfv_no_msg_send,
	.sendv = lfv_no_msg_sendv,
	.sendmsg = lfv_no_msg_sendmsg,
	.inject = lfv_no_msg_inject,
	.senddata = lfv_no_msg_senddata,
	.injectdata = lfv_no_msg_injectdata,
};

static struct fi_ops_tagged lfv_srx_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lfv_srx_trecv,
	.recvv = lfv_srx_trecvv,
	.recvmsg = lfv_srx_trecvmsg,
	.send = lfv_no_tagged_send,
	.sendv = lfv_no_tagged_sendv,
	.sendmsg = lfv_no_tagged_sendmsg,
	.inject = lfv_no_tagged_inject,
	.senddata = lfv_no_tagged_senddata,
	.injectdata = lfv_no_tagged_injectdata,
};

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

/* ---- exports ----------------------------------------------------------- */

static bool lfv_srx_held_by(const struct lfv_srx_entry *e,
			    const struct lfv_srx_export *exp)
{
	return e->exp == exp && (e->state == LFV_SRX_UNEXPECTED ||
				 e->state == LFV_SRX_CLAIMED);
}

/* Moves (batch non-NULL) or counts the queued and claimed messages of
 * one peer. */
static size_t lfv_srx_collect_held(struct lfv_peer_srx *srx,
				   const struct lfv_srx_export *exp,
				   struct lfv_list *batch)
{
	struct lfv_match_entry *m, *next;
	struct lfv_list *item, *next_item;
	struct lfv_srx_entry *e;
	size_t n = 0;
	int kind;

	for (kind = 0; kind < LFV_MATCH_KINDS; kind++) {
		for (m = lfv_match_first_msg(&srx->match, kind); m; m = next) {
			next = lfv_match_next_msg(&srx->match, m);
			e = lfv_srx_entry_of_match(m);
			if (!lfv_srx_held_by(e, exp))
				continue;
			n++;
			if (!batch)
				continue;
			lfv_match_remove_msg(&srx->match, m);
			e->state = LFV_SRX_DISCARDING;
			lfv_list_insert_tail(batch, &e->node);
		}
	}
	for (item = srx->claimed.next; item != &srx->claimed;
	     item = next_item) {
		next_item = item->next;
		e = lfv_container_of(item, struct lfv_srx_entry, node);
		if (!lfv_srx_held_by(e, exp))
			continue;
		n++;
		if (!batch)
			continue;
		lfv_list_remove(&e->node);
		srx->nclaimed--;
		e->state = LFV_SRX_DISCARDING;
		lfv_list_insert_tail(batch, &e->node);
	}
	return n;
}

/* Discards what the peer still has queued; -FI_EBUSY (nothing done) while
 * the peer holds entries it got from get_* or start_*. */
static int lfv_srx_export_close(struct fid *fid)
{
	struct lfv_srx_export *exp = lfv_container_of(fid,
			struct lfv_srx_export, peer_srx.ep_fid.fid);
	struct lfv_peer_srx *srx = exp->srx;
	struct lfv_list batch, *item;

	lfv_list_init(&batch);
	lfv_srx_lock(srx);
	if (exp->entries > lfv_srx_collect_held(srx, exp, NULL)) {
		lfv_srx_unlock(srx);
		return -FI_EBUSY;
	}
	lfv_srx_collect_held(srx, exp, &batch);
	lfv_list_remove(&exp->node);
	srx->nexports--;
	lfv_srx_unlock(srx);
	while ((item = lfv_list_pop_head(&batch)))
		lfv_srx_discard(srx, lfv_container_of(item,
						      struct lfv_srx_entry,
						      node));
	free(exp);
	return 0;
}

static struct fi_ops lfv_srx_export_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_srx_export_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* The peer's table until it fills it in: calls warn and fail. */
static const struct fi_ops_srx_peer lfv_srx_unset_peer_ops = {
	.size = sizeof(struct fi_ops_srx_peer),
	.start_msg = lfv_srx_unset_start_msg,
	.start_tag = lfv_srx_unset_start_tag,
	.discard_msg = lfv_srx_unset_discard_msg,
	.discard_tag = lfv_srx_unset_discard_tag,
};

static void lfv_srx_init_export(struct lfv_srx_export *exp,
				struct lfv_peer_srx *srx)
{
	struct fid_ep *ep = &exp->peer_srx.ep_fid;

	ep->fid.fclass = FI_CLASS_PEER_SRX;
	ep->fid.context = srx->ep_fid.fid.context;
	ep->fid.ops = &lfv_srx_export_fi_ops;
	/* Peers drive the SRX through owner_ops; the endpoint calls of
	 * this fid are not the way in. */
	ep->ops = &lfv_no_ep_ops;
	ep->cm = &lfv_no_cm_ops;
	ep->msg = &lfv_no_msg_ops;
	ep->rma = &lfv_no_rma_ops;
	ep->tagged = &lfv_no_tagged_ops;
	ep->atomic = &lfv_no_atomic_ops;
	ep->collective = &lfv_no_collective_ops;
	exp->peer_ops = lfv_srx_unset_peer_ops;
	exp->peer_srx.owner_ops = &lfv_srx_owner_ops;
	exp->peer_srx.peer_ops = &exp->peer_ops;
	exp->srx = srx;
}

int lfv_peer_srx_set_locking(struct fid_ep *srx_fid, bool locked)
{
	struct lfv_peer_srx *srx = lfv_srx_checked(srx_fid);

	if (!srx)
		return -FI_EINVAL;
	srx->locked = locked;
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
	struct lfv_srx_export *exp;

	if (!srx || !peer_srx)
		return -FI_EINVAL;
	exp = calloc(1, sizeof(*exp));
	if (!exp)
		return -FI_ENOMEM;
	lfv_srx_init_export(exp, srx);
	lfv_srx_lock(srx);
	lfv_list_insert_tail(&srx->exports, &exp->node);
	srx->nexports++;
	lfv_srx_unlock(srx);
	*peer_srx = &exp->peer_srx;
	return 0;
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

/* fi_export_fid: a fid_peer_srx for a peer provider (lfv_peer_srx_export);
 * its context is the caller's. */
static int lfv_srx_control(struct fid *fid, int command, void *arg)
{
	struct fi_fid_export *exp = arg;
	struct fid_peer_srx *peer;
	int ret;

	if (command != FI_EXPORT_FID)
		return -FI_ENOSYS;
	if (!exp || !exp->fid)
		return -FI_EINVAL;
	if (exp->flags)
		return -FI_EBADFLAGS;
	ret = lfv_peer_srx_export(lfv_container_of(fid, struct fid_ep, fid),
				  &peer);
	if (ret)
		return ret;
	peer->ep_fid.fid.context = exp->context;
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
	struct fid_ep *ep = &srx->ep_fid;

	ep->fid.fclass = FI_CLASS_SRX_CTX;
	ep->fid.context = context;
	ep->fid.ops = &lfv_srx_fi_ops;
	ep->ops = &lfv_srx_ep_ops;
	ep->cm = &lfv_no_cm_ops;
	ep->msg = &lfv_srx_msg_ops;
	ep->rma = &lfv_no_rma_ops;
	ep->tagged = &lfv_srx_tagged_ops;
	ep->atomic = &lfv_no_atomic_ops;
	ep->collective = &lfv_no_collective_ops;
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
	srx->op_flags = attr->op_flags;
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
