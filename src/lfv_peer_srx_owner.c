/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The owner side of the fi_peer(3) shared receive context as peers see it:
 * the owner ops they call (get, queue, free_entry) and the fid_peer_srx
 * exports they call them through (include/lfv_peer_srx.h for the contract,
 * src/lfv_peer_srx_entry.h for the objects).
 */
#include <stdlib.h>
#include <string.h>

#include "lfv_log.h"
#include "lfv_peer_srx_owner.h"
#include "lfv_stubs.h"

static struct fi_ops lfv_srx_export_fi_ops;

static bool lfv_srx_is_export(const struct fid_peer_srx *ps)
{
	return ps && ps->ep_fid.fid.fclass == FI_CLASS_SRX_CTX &&
	       ps->ep_fid.fid.ops == &lfv_srx_export_fi_ops;
}

/* Peers call the owner ops with the fid_peer_srx we gave them (shm of
 * 1.17 and 2.x) or with a copy of their own (shm of 1.18 to 1.22 binds
 * ours by copying owner_ops and fid.context, which is our export's own
 * fid_peer_srx, into a fid_peer_srx that has no fid ops). */
struct lfv_srx_export *lfv_srx_export_checked(struct fid_peer_srx *ps)
{
	if (ps && !ps->ep_fid.fid.ops)
		ps = ps->ep_fid.fid.context;
	if (!lfv_srx_is_export(ps))
		return NULL;
	return lfv_container_of(ps, struct lfv_srx_export, peer_srx);
}

/* What a peek (or a discard) reports about a queued message: CQ data too
 * when the entry carries it (1.19 on) or the peer that queued it can tell
 * (1.17 entries have no field for it). */
struct lfv_srx_report lfv_srx_msg_report(const struct lfv_srx_entry *e,
					 void *context)
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(e->peer.srx);
	struct lfv_srx_report r = {
		.context = context,
		.flags = lfv_srx_kind_flags(e->kind),
		.len = lfv_peer_entry_size(&e->peer),
		.tag = e->peer.tag,
		.src = e->peer.addr,
	};

	if (LFV_PEER_ENTRY_HAS_CQ_DATA && (e->peer.flags & FI_REMOTE_CQ_DATA)) {
		r.data = lfv_peer_entry_cq_data(&e->peer);
		r.flags |= FI_REMOTE_CQ_DATA;
	} else if (exp && exp->data_fn && exp->data_fn(&e->peer, &r.data)) {
		r.flags |= FI_REMOTE_CQ_DATA;
	}
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
	lfv_peer_entry_set_size(&e->peer, size);
	e->peer.tag = kind == LFV_MATCH_TAG ? tag : 0;
	*out = e;
	return m ? 0 : -FI_ENOENT;
}

/* get_msg and get_tag on exp, known to be ours, for ps (which names the
 * peer in the entry). */
static int lfv_srx_export_get_kind(struct lfv_srx_export *exp,
				   struct fid_peer_srx *ps,
				   enum lfv_match_kind kind,
				   const struct lfv_peer_match *m,
				   struct fi_peer_rx_entry **entry)
{
	struct lfv_peer_srx *srx = exp->srx;
	struct lfv_srx_entry *e;
	int ret;

	if (!lfv_srx_supports(srx, kind))
		return -FI_EOPNOTSUPP;
	lfv_srx_lock(srx);
	ret = lfv_srx_match_arrival(srx, kind, m->addr, m->msg_size, m->tag, &e);
	if (ret == 0 || ret == -FI_ENOENT) {
		lfv_srx_name_peer(e, exp, ps);
		*entry = &e->peer;
	}
	lfv_srx_unlock(srx);
	return ret;
}

/* The owner ops' get_msg and get_tag: a peer's handle is checked first. */
static int lfv_srx_get(struct fid_peer_srx *ps, enum lfv_match_kind kind,
		       const struct lfv_peer_match *m,
		       struct fi_peer_rx_entry **entry)
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(ps);

	if (!exp || !entry)
		return -FI_EINVAL;
	return lfv_srx_export_get_kind(exp, ps, kind, m, entry);
}

int lfv_peer_srx_export_get(struct fid_peer_srx *ps, bool tagged,
			    const struct lfv_peer_match *m,
			    struct fi_peer_rx_entry **entry)
{
	struct lfv_srx_export *exp = lfv_container_of(ps, struct lfv_srx_export,
						      peer_srx);

	return lfv_srx_export_get_kind(exp, ps, tagged ? LFV_MATCH_TAG :
						       LFV_MATCH_MSG,
				       m, entry);
}

static int lfv_srx_get_msg_match(struct fid_peer_srx *ps,
				 const struct lfv_peer_match *m,
				 struct fi_peer_rx_entry **entry)
{
	return lfv_srx_get(ps, LFV_MATCH_MSG, m, entry);
}

/* Before 2.0, get_tag carries no size (0 here): the peer sets the entry's
 * size itself. */
static int lfv_srx_get_tag_match(struct fid_peer_srx *ps,
				 const struct lfv_peer_match *m,
				 struct fi_peer_rx_entry **entry)
{
	return lfv_srx_get(ps, LFV_MATCH_TAG, m, entry);
}

LFV_PEER_OWNER_GET_MSG(lfv_srx_get_msg, lfv_srx_get_msg_match)
LFV_PEER_OWNER_GET_TAG(lfv_srx_get_tag, lfv_srx_get_tag_match)

static void lfv_srx_no_entry_op_warn(const char *what)
{
	LFV_WARN(FI_LOG_EP_DATA, "peer SRX: %s called but not filled in\n",
		 what);
}

/* The peer_ops slots an exported SRX starts with: each warns with its
 * name and says -FI_ENOSYS; lfv_srx_peer_usable knows them by address. */
#define LFV_SRX_UNSET_ENTRY_OP(op)                                       \
	static int lfv_srx_unset_##op(struct fi_peer_rx_entry *entry)    \
	{                                                                \
		(void)entry;                                             \
		lfv_srx_no_entry_op_warn(#op);                           \
		return -FI_ENOSYS;                                       \
	}
LFV_SRX_UNSET_ENTRY_OP(start_msg)
LFV_SRX_UNSET_ENTRY_OP(start_tag)
LFV_SRX_UNSET_ENTRY_OP(discard_msg)
LFV_SRX_UNSET_ENTRY_OP(discard_tag)

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

/* foreach_unspec_addr: see lfv_peer_srx.h. Only this peer's entries:
 * get_addr reads its peer_context. */
void lfv_peer_srx_foreach_unspec_addr(struct fid_peer_srx *ps,
				      fi_addr_t (*get_addr)(struct fi_peer_rx_entry *))
{
	struct lfv_srx_export *exp = lfv_srx_export_checked(ps);
	struct lfv_match_entry *m;
	struct lfv_srx_entry *e;
	struct lfv_peer_srx *srx;
	fi_addr_t addr;
	int kind;

	if (!exp || !get_addr)
		return;
	srx = exp->srx;
	lfv_srx_lock(srx);
	for (kind = 0; kind < LFV_MATCH_KINDS; kind++) {
		for (m = lfv_match_first_msg(&srx->match, kind); m;
		     m = lfv_match_next_msg(&srx->match, m)) {
			e = lfv_srx_entry_of_match(m);
			if (e->exp != exp || m->addr != FI_ADDR_UNSPEC)
				continue;
			addr = get_addr(&e->peer);
			if (addr == FI_ADDR_UNSPEC)
				continue;
			lfv_match_set_msg_source(&srx->match, m, addr);
			e->peer.addr = addr;
		}
	}
	lfv_srx_unlock(srx);
}

void lfv_peer_owner_foreach_unspec(struct fid_peer_srx *ps,
				   fi_addr_t (*get_addr)(struct fi_peer_rx_entry *))
{
	if (lfv_srx_export_checked(ps))
		lfv_peer_srx_foreach_unspec_addr(ps, get_addr);
	else if (ps)
		LFV_PEER_OWNER_FOREACH_CALL(ps, get_addr);
}

static struct fi_ops_srx_owner lfv_srx_owner_ops = {
	.size = sizeof(struct fi_ops_srx_owner),
	.get_msg = lfv_srx_get_msg,
	.get_tag = lfv_srx_get_tag,
	.queue_msg = lfv_srx_queue_msg,
	.queue_tag = lfv_srx_queue_tag,
	LFV_PEER_OWNER_FOREACH_SLOT(lfv_peer_srx_foreach_unspec_addr)
	.free_entry = lfv_srx_free_entry,
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
	/* Peers drive the SRX through owner_ops; the endpoint calls of
	 * this fid are not the way in. */
	/* The class peers bind (fi_ep_bind of an SRX: shm before 2.0 takes
	 * this fid itself), and a context that leads back here from a
	 * peer's copy (lfv_srx_export_checked). */
	lfv_rx_only_fid_init(&exp->peer_srx.ep_fid, FI_CLASS_SRX_CTX,
			     &exp->peer_srx, &(struct lfv_rx_only_ops){
				     .fi = &lfv_srx_export_fi_ops,
				     .ep = &lfv_no_ep_ops,
				     .msg = &lfv_no_msg_ops,
				     .tagged = &lfv_no_tagged_ops });
	exp->peer_ops = lfv_srx_unset_peer_ops;
	exp->peer_srx.owner_ops = &lfv_srx_owner_ops;
	exp->peer_srx.peer_ops = &exp->peer_ops;
	exp->srx = srx;
}

int lfv_srx_export_new(struct lfv_peer_srx *srx,
		       struct fid_peer_srx **peer_srx)
{
	struct lfv_srx_export *exp;

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
