/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Inside the owner side of the fi_peer(3) shared receive context (the
 * contract is include/lfv_peer_srx.h): the objects, and the steps on
 * entries that both of its halves take. lfv_peer_srx.c has the
 * application's receive calls (with peek and claim) and the SRX's open and
 * close; lfv_peer_srx_owner.c has the owner ops peers call and the exports
 * they call them through; lfv_peer_srx_entry.c has the steps below. Private
 * to src/: prov/ sees only include/lfv_peer_srx.h, which this layer does
 * not include (it sits below the contract's entry points).
 */
#ifndef LFV_PEER_SRX_ENTRY_H
#define LFV_PEER_SRX_ENTRY_H

#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include "lfv_fi_compat.h"
#include <rdma/fi_tagged.h>

#include "lfv_atomic.h"
#include "lfv_list.h"
#include "lfv_lock.h"
#include "lfv_match.h"
#include "lfv_pool.h"

/* Flags an entry hands to the peer from the application's request. */
#define LFV_SRX_PASSED_FLAGS (FI_COMPLETION | FI_MULTI_RECV)

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
	/* CQ data of a queued entry: an lfv_peer_srx_data_fn, spelled out
	 * so this layer needs nothing of the contract's header (the
	 * assignment in lfv_peer_srx_set_data_fn checks the type). */
	bool (*data_fn)(const struct fi_peer_rx_entry *entry, uint64_t *data);
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
	uint64_t op_flags;		/* fi_recv & co.: attr's | every_recv */
	uint64_t attr_op_flags;		/* as opened */
	uint64_t every_recv;		/* FI_COMPLETION unless selective */
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

/* ---- lookups ----------------------------------------------------------- */

static inline struct lfv_peer_srx *lfv_srx_of_fid(struct fid *fid)
{
	return lfv_container_of(fid, struct lfv_peer_srx, ep_fid.fid);
}

static inline struct lfv_peer_srx *lfv_srx_of_ep(struct fid_ep *ep)
{
	return lfv_container_of(ep, struct lfv_peer_srx, ep_fid);
}

static inline struct lfv_srx_entry *
lfv_srx_entry_of_match(struct lfv_match_entry *m)
{
	return lfv_container_of(m, struct lfv_srx_entry, match);
}

static inline struct lfv_srx_entry *
lfv_srx_entry_of_peer(struct fi_peer_rx_entry *p)
{
	return lfv_container_of(p, struct lfv_srx_entry, peer);
}

static inline bool lfv_srx_supports(const struct lfv_peer_srx *srx,
				    enum lfv_match_kind kind)
{
	return srx->caps & (kind == LFV_MATCH_TAG ? FI_TAGGED : FI_MSG);
}

static inline uint64_t lfv_srx_kind_flags(enum lfv_match_kind kind)
{
	return FI_RECV | (kind == LFV_MATCH_TAG ? FI_TAGGED : FI_MSG);
}

/* ---- entries (under srx->lock) ------------------------------------------ */

static inline void **lfv_srx_descs(const struct lfv_peer_srx *srx,
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

void lfv_srx_entry_free(struct lfv_srx_entry *e);
/* The entry now belongs to (or waits on) this peer. */
void lfv_srx_name_peer(struct lfv_srx_entry *e, struct lfv_srx_export *exp,
		       struct fid_peer_srx *ps);

/* ---- posted receives (under srx->lock) ---------------------------------- */

void lfv_srx_unpost(struct lfv_peer_srx *srx, struct lfv_srx_entry *recv);
/* Carves a message of size bytes from the multi-receive buffer mrecv into
 * dst. True when mrecv is used up: the caller drops it. */
bool lfv_srx_carve(struct lfv_peer_srx *srx, struct lfv_srx_entry *mrecv,
		   size_t size, struct lfv_srx_entry *dst);
/* The entry a peer receives a message into from the matched receive: the
 * receive itself, or a new entry carved from a multi-receive buffer. */
struct lfv_srx_entry *lfv_srx_use_recv(struct lfv_peer_srx *srx,
				       struct lfv_srx_entry *recv,
				       size_t size);
/* As lfv_srx_use_recv, into the entry e a peer queued. */
void lfv_srx_fill_from_recv(struct lfv_peer_srx *srx,
			    struct lfv_srx_entry *recv,
			    struct lfv_srx_entry *e);
/* The posted (claimed) receive of this context, or NULL. */
struct lfv_srx_entry *lfv_srx_find_posted(struct lfv_peer_srx *srx,
					  void *context);
struct lfv_srx_entry *lfv_srx_find_claimed(struct lfv_peer_srx *srx,
					   void *context);

/* ---- calls out (never under srx->lock) --------------------------------- */

/* Hands e to its peer (start_msg or start_tag): the peer owns it then. */
int lfv_srx_start(struct lfv_srx_entry *e);
/* Starts every entry of a batch in order; the first error is returned. */
ssize_t lfv_srx_start_batch(struct lfv_list *batch);
/* The peer drops the message; the owner then frees the entry. */
void lfv_srx_discard(struct lfv_peer_srx *srx, struct lfv_srx_entry *e);
/* Completions the SRX writes itself to its own CQ: 0 or the CQ's error. */
ssize_t lfv_srx_write(struct fid_peer_cq *cq, const struct lfv_srx_report *r);
ssize_t lfv_srx_write_err(struct fid_peer_cq *cq,
			  const struct lfv_srx_report *r, int err);

#endif /* LFV_PEER_SRX_ENTRY_H */
