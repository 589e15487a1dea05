/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM connections, the tables: finding a connection by address, by the
 * peer's name and by QP number; taking one out of them; and freeing those
 * nothing names any more. Apart from the handshake (lfv_rdm_conn.c),
 * which makes and changes connections, because none of this sends
 * anything: it uses only the endpoint's objects and the AV.
 *
 * Locking: the caller holds ep->lock (the exported lookups assert it in
 * debug builds), but for lfv_rdm_conns_free (closing, quiesced).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lfv_av.h"
#include "lfv_lock_order.h"
#include "lfv_rdm_conn_table.h"
#include "lfv_rdm_ep.h"
#include "lfv_ud.h"

static uint32_t lfv_rdm_hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return (uint32_t)v & (LFV_RDM_BUCKETS - 1);
}

static uint32_t lfv_rdm_name_hash(const struct lfv_ud_name *n)
{
	uint64_t a, b;

	memcpy(&a, n->gid, sizeof(a));
	memcpy(&b, n->gid + sizeof(a), sizeof(b));
	return lfv_rdm_hash64(a ^ (b * 0x9e3779b97f4a7c15ULL) ^ n->qpn);
}

bool lfv_rdm_same_name(const struct lfv_ud_name *a, const struct lfv_ud_name *b)
{
	return a->qpn == b->qpn && !memcmp(a->gid, b->gid, sizeof(a->gid));
}

/* Caller holds ep->lock (or the domain has none: the application
 * serialises). */
struct lfv_rdm_conn *lfv_rdm_conn_by_addr(struct lfv_rdm_ep *ep,
					  fi_addr_t addr)
{
	struct lfv_rdm_conn *c = ep->by_addr[lfv_rdm_hash64(addr)];

	for (; c; c = c->next_addr)
		if (c->addr == addr)
			return c;
	return NULL;
}

/* Caller holds ep->lock. */
struct lfv_rdm_conn *lfv_rdm_conn_by_qpn(struct lfv_rdm_ep *ep, uint32_t qpn)
{
	struct lfv_rdm_conn *c = ep->by_qpn[lfv_rdm_hash64(qpn)];

	lfv_spin_assert_held(&ep->lock);
	for (; c; c = c->next_qpn)
		if (c->qp && c->qp->qp_num == qpn)
			return c;
	return NULL;
}

struct lfv_rdm_conn *lfv_rdm_conn_by_name(struct lfv_rdm_ep *ep,
					  const struct lfv_ud_name *n)
{
	struct lfv_rdm_conn *c = ep->by_name[lfv_rdm_name_hash(n)];

	for (; c; c = c->next_name)
		if (lfv_rdm_same_name(&c->name, n))
			return c;
	return NULL;
}

static void lfv_rdm_link_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_conn **head = &ep->by_addr[lfv_rdm_hash64(c->addr)];

	c->next_addr = *head;
	*head = c;
}

void lfv_rdm_link_qpn(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_conn **head =
		&ep->by_qpn[lfv_rdm_hash64(c->qp->qp_num)];

	c->next_qpn = *head;
	*head = c;
}

static void lfv_rdm_unlink(struct lfv_rdm_conn **head, struct lfv_rdm_conn *c,
			   size_t next_off)
{
	struct lfv_rdm_conn **link = head;

	while (*link && *link != c)
		link = (struct lfv_rdm_conn **)((char *)*link + next_off);
	if (*link)
		*link = *(struct lfv_rdm_conn **)((char *)c + next_off);
}

/* A new connection joins the endpoint: its list, and the tables by
 * address (when the AV has it) and by name; by QP number once it has a
 * QP (lfv_rdm_link_qpn). */
void lfv_rdm_conn_link(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	struct lfv_rdm_conn **head = &ep->by_name[lfv_rdm_name_hash(&c->name)];

	lfv_list_insert_tail(&ep->conns, &c->node);
	ep->nconns++;
	if (c->addr != FI_ADDR_NOTAVAIL)
		lfv_rdm_link_addr(ep, c);
	c->next_name = *head;
	*head = c;
}

/* A connection made by a peer's request before its address was in the AV
 * gets its fi_addr_t now. Caller holds ep->lock. */
void lfv_rdm_conn_learn_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			     fi_addr_t addr)
{
	lfv_spin_assert_held(&ep->lock);
	if (c->addr != FI_ADDR_NOTAVAIL || addr == FI_ADDR_NOTAVAIL)
		return;
	c->addr = addr;
	c->av_seen = 0;
	lfv_rdm_link_addr(ep, c);
}

/* Whether c's address is still in the AV: looked up only when an entry
 * was removed since the last look (the AV counts removals). */
bool lfv_rdm_conn_addr_live(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	uint64_t seen = lfv_av_removals(ep->base.av) + 1;

	if (c->av_seen == seen)
		return true;
	if (!lfv_av_dest(ep->base.av, c->addr))
		return false;
	c->av_seen = seen;
	return true;
}

/* The connection to addr when its address was seen live in the AV at the
 * removal count seen - 1, the current one (the send fast path: no AV
 * lookup), else NULL. */
struct lfv_rdm_conn *lfv_rdm_conn_seen(struct lfv_rdm_ep *ep, fi_addr_t addr,
				       uint64_t seen)
{
	struct lfv_rdm_conn *c = lfv_rdm_conn_by_addr(ep, addr);

	return c && c->av_seen == seen ? c : NULL;
}

/* Forgets an address fi_av_remove took away (false: it is still in the
 * AV): the peer is unknown until it is inserted again. */
bool lfv_rdm_conn_forget_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	if (c->addr == FI_ADDR_NOTAVAIL || lfv_rdm_conn_addr_live(ep, c))
		return false;
	lfv_rdm_unlink(&ep->by_addr[lfv_rdm_hash64(c->addr)], c,
		       offsetof(struct lfv_rdm_conn, next_addr));
	c->addr = FI_ADDR_NOTAVAIL;
	return true;
}

/* For receives: a peer not yet in the AV may have been inserted since, and
 * one that was may have been removed. Caller holds ep->lock (the AV's lock
 * is taken under it). */
void lfv_rdm_conn_lookup_addr(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	union ibv_gid gid;

	lfv_spin_assert_held(&ep->lock);
	lfv_rdm_conn_forget_addr(ep, c);
	if (c->addr != FI_ADDR_NOTAVAIL)
		return;
	memcpy(gid.raw, c->name.gid, sizeof(gid.raw));
	lfv_rdm_conn_learn_addr(ep, c, lfv_av_reverse(ep->base.av, &gid,
						      c->name.qpn));
}

void lfv_rdm_sar_abandon(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	lfv_spin_assert_held(&ep->lock);
	if (!c->sar_rx)
		return;
	lfv_rdm_abort_later(ep, &ep->sar_aborted, &c->sar_rx->node);
	c->sar_rx = NULL;
}

/* Takes a connection out of every table (it stays on ep->conns until the
 * endpoint closes: completions may still name its requests). */
void lfv_rdm_conn_retire(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	if (c->addr != FI_ADDR_NOTAVAIL)
		lfv_rdm_unlink(&ep->by_addr[lfv_rdm_hash64(c->addr)], c,
			       offsetof(struct lfv_rdm_conn, next_addr));
	lfv_rdm_unlink(&ep->by_name[lfv_rdm_name_hash(&c->name)], c,
		       offsetof(struct lfv_rdm_conn, next_name));
	c->retired = true;
	ep->reap_due = true;
	lfv_rdm_sar_abandon(ep, c);
	if (lfv_rdm_in_handshake(c))
		ep->handshakes--;
}

void lfv_rdm_conn_set_failed(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	c->state = LFV_RDM_FAILED;
	ep->reap_due = true;
}

/* Whether anything still names c: work posted on its QP or queued for it,
 * our rendezvous sends waiting on it, its messages we hold, rendezvous
 * receives from it. */
static bool lfv_rdm_conn_in_use(const struct lfv_rdm_conn *c)
{
	return c->posted || !lfv_list_empty(&c->pending) || c->rndv_out ||
	       c->unexp_n || c->rreqs;
}

/* Frees a connection that is down and unused, its QP in error for a
 * while (ep->lock). */
static void lfv_rdm_conn_free(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c)
{
	if (!c->retired)
		lfv_rdm_conn_retire(ep, c);
	lfv_rdm_unlink(&ep->by_qpn[lfv_rdm_hash64(c->qp->qp_num)], c,
		       offsetof(struct lfv_rdm_conn, next_qpn));
	lfv_list_remove(&c->node);
	if (ep->tx_last == c) {
		ep->tx_last = NULL;
		ep->tx_last_seen = 0;	/* never equal: the fast path looks */
	}
	ep->nconns--;
	ep->accepted -= c->inbound;
	ibv_destroy_qp(c->qp);
	if (c->own_ah)
		ibv_destroy_ah(c->own_ah);
	free(c);
}

/* Gives back the QPs and memory of connections that are down (failed, or
 * replaced by a new one to the same peer) once nothing names them: the
 * QP goes to error first, and the connection is freed LFV_RDM_REAP_NS
 * later, so that completions its QP left in the CQs find it (ep->lock). */
void lfv_rdm_conns_reap(struct lfv_rdm_ep *ep, int64_t now)
{
	struct lfv_list *item, *next;
	struct lfv_rdm_conn *c;
	bool more = false;

	for (item = ep->conns.next; item != &ep->conns; item = next) {
		next = item->next;
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (!lfv_rdm_conn_is_down(c))
			continue;
		more = true;
		if (lfv_rdm_conn_in_use(c))
			continue;
		if (!c->reap_at) {
			ibv_modify_qp(c->qp, &(struct ibv_qp_attr){
					.qp_state = IBV_QPS_ERR },
				      IBV_QP_STATE);
			c->reap_at = now + LFV_RDM_REAP_NS;
		} else if (now >= c->reap_at) {
			lfv_rdm_conn_free(ep, c);
		}
	}
	ep->reap_due = more;
}

/* Closing, quiesced (no other thread reaches the endpoint): no lock. */
void lfv_rdm_conns_free(struct lfv_rdm_ep *ep)
{
	struct lfv_list *item;
	struct lfv_rdm_conn *c;

	while ((item = lfv_list_pop_head(&ep->conns))) {
		c = lfv_container_of(item, struct lfv_rdm_conn, node);
		if (c->qp)
			ibv_destroy_qp(c->qp);
		if (c->own_ah)
			ibv_destroy_ah(c->own_ah);
		free(c);
	}
}
