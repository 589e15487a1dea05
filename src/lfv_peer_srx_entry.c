/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The steps on a peer SRX's entries that the application's receive calls
 * and the owner ops share (src/lfv_peer_srx_entry.h). */
#include <stdlib.h>
#include <string.h>

#include "lfv_log.h"
#include "lfv_peer_srx_entry.h"

void lfv_srx_entry_free(struct lfv_srx_entry *e)
{
	if (e->exp)
		e->exp->entries--;
	e->state = LFV_SRX_FREE;
	lfv_pool_put(&e->srx->entries, e);
}

/* The entry now belongs to (or waits on) this peer, which calls through
 * ps: the peer ops of ps are the ones to start the entry with (a peer's
 * own copy of our fid_peer_srx carries its peer ops, ours may not). */
void lfv_srx_name_peer(struct lfv_srx_entry *e, struct lfv_srx_export *exp,
		       struct fid_peer_srx *ps)
{
	e->exp = exp;
	exp->entries++;
	e->peer.srx = ps;
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

void lfv_srx_unpost(struct lfv_peer_srx *srx, struct lfv_srx_entry *recv)
{
	lfv_match_remove_recv(&srx->match, &recv->match);
	lfv_list_remove(&recv->node);
}

/*
 * Carves a message of size bytes from the multi-receive buffer mrecv into
 * dst (one iov: the region). True when the room left has fallen below the
 * minimum: dst then reports the buffer released, and the caller drops it.
 */
bool lfv_srx_carve(struct lfv_peer_srx *srx, struct lfv_srx_entry *mrecv,
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
struct lfv_srx_entry *lfv_srx_use_recv(struct lfv_peer_srx *srx,
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
void lfv_srx_fill_from_recv(struct lfv_peer_srx *srx,
				   struct lfv_srx_entry *recv,
				   struct lfv_srx_entry *e)
{
	bool drop = true;

	if (recv->peer.flags & FI_MULTI_RECV)
		drop = lfv_srx_carve(srx, recv, lfv_peer_entry_size(&e->peer), e);
	else
		lfv_srx_copy_buffers(srx, e, recv);
	if (drop) {
		lfv_srx_unpost(srx, recv);
		lfv_srx_entry_free(recv);
	}
}

/* The entry of list whose context is context: a posted receive's own, or
 * the context the claim of a claimed one was made with. */
static struct lfv_srx_entry *lfv_srx_find(struct lfv_list *list,
					  void *context, bool claimed)
{
	struct lfv_srx_entry *e;
	struct lfv_list *item;

	lfv_list_foreach(item, list) {
		e = lfv_container_of(item, struct lfv_srx_entry, node);
		if ((claimed ? e->claim_context : e->peer.context) == context)
			return e;
	}
	return NULL;
}

struct lfv_srx_entry *lfv_srx_find_posted(struct lfv_peer_srx *srx,
						 void *context)
{
	return lfv_srx_find(&srx->posted, context, false);
}

struct lfv_srx_entry *lfv_srx_find_claimed(struct lfv_peer_srx *srx,
						  void *context)
{
	return lfv_srx_find(&srx->claimed, context, true);
}

/* ---- calls out (never under srx->lock) --------------------------------- */

int lfv_srx_start(struct lfv_srx_entry *e)
{
	struct fi_ops_srx_peer *ops = e->peer.srx->peer_ops;

	/* The peer owns e from here: it may free it before returning. */
	return e->kind == LFV_MATCH_TAG ? ops->start_tag(&e->peer) :
					  ops->start_msg(&e->peer);
}

/* Starts every entry of a batch in order; the first error is returned. */
ssize_t lfv_srx_start_batch(struct lfv_list *batch)
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
void lfv_srx_discard(struct lfv_peer_srx *srx, struct lfv_srx_entry *e)
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

ssize_t lfv_srx_write(struct fid_peer_cq *cq,
			     const struct lfv_srx_report *r)
{
	ssize_t ret = cq->owner_ops->write(cq, r->context, r->flags, r->len,
					   NULL, r->data, r->tag, r->src);

	return ret < 0 ? ret : 0;
}

ssize_t lfv_srx_write_err(struct fid_peer_cq *cq,
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
