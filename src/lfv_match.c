/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The tag-matching engine: see include/lfv_match.h for the layout and
 * the ordering argument. */
#include <stddef.h>
#include <stdlib.h>

#include <rdma/fi_errno.h>

#include "lfv_match.h"

#define LFV_MATCH_MIN_BUCKETS 64

/* Multiplicative (Fibonacci) hashing of both key words, bucket from the
 * product's top bits: bit i of the key reaches product bits i and up, so
 * the top ones depend on every key bit and sequential tags (or sources)
 * spread over all buckets. Two multiplies; a posted receive and its
 * message each hash once. */
static uint64_t lfv_match_hash(uint64_t tag, fi_addr_t addr)
{
	return (tag ^ (addr * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;
}

/* ---- tables of chained entries ----------------------------------------- */

static int lfv_match_table_init(struct lfv_match_table *t, size_t node_off,
				bool any_source)
{
	size_t i;

	t->buckets = malloc(LFV_MATCH_MIN_BUCKETS * sizeof(*t->buckets));
	if (!t->buckets)
		return -FI_ENOMEM;
	for (i = 0; i < LFV_MATCH_MIN_BUCKETS; i++)
		lfv_list_init(&t->buckets[i]);
	t->mask = LFV_MATCH_MIN_BUCKETS - 1;
	t->shift = 64 - __builtin_ctzll(LFV_MATCH_MIN_BUCKETS);
	t->entries = 0;
	t->node_off = node_off;
	t->any_source = any_source;
	return 0;
}

static void lfv_match_table_fini(struct lfv_match_table *t)
{
	free(t->buckets);
	t->buckets = NULL;
}

static struct lfv_match_entry *lfv_match_of_node(const struct lfv_match_table *t,
						 struct lfv_list *node)
{
	return (struct lfv_match_entry *)((char *)node - t->node_off);
}

/* The inverse: the list node by which this table chains e. */
static struct lfv_list *lfv_match_node(const struct lfv_match_table *t,
				       struct lfv_match_entry *e)
{
	return (struct lfv_list *)((char *)e + t->node_off);
}

/* The address part of an entry's key in this table. */
static fi_addr_t lfv_match_key_addr(const struct lfv_match_table *t,
				    const struct lfv_match_entry *e)
{
	return t->any_source ? FI_ADDR_UNSPEC : e->addr;
}

static struct lfv_list *lfv_match_bucket(const struct lfv_match_table *t,
					 uint64_t tag, fi_addr_t addr)
{
	return &t->buckets[lfv_match_hash(tag, addr) >> t->shift];
}

/* Doubles the bucket array. Each old bucket is moved in order, so the
 * entries of one key (all in one bucket) keep their order. Best effort:
 * without memory the chains only get longer, matching stays correct. Out
 * of line, so that adding an entry saves no registers for it. */
static __attribute__((noinline)) void
lfv_match_table_grow(struct lfv_match_table *t)
{
	size_t n = (t->mask + 1) * 2, old_n = t->mask + 1, i;
	struct lfv_list *old = t->buckets, *item;
	struct lfv_match_entry *e;

	t->buckets = malloc(n * sizeof(*t->buckets));
	if (!t->buckets) {
		t->buckets = old;
		return;
	}
	for (i = 0; i < n; i++)
		lfv_list_init(&t->buckets[i]);
	t->mask = n - 1;
	t->shift--;
	for (i = 0; i < old_n; i++) {
		while ((item = lfv_list_pop_head(&old[i]))) {
			e = lfv_match_of_node(t, item);
			lfv_list_insert_tail(lfv_match_bucket(t, e->tag,
						lfv_match_key_addr(t, e)),
					     item);
		}
	}
	free(old);
}

/* Chains e (its key already normalised) after every entry before it. */
static void lfv_match_table_add(struct lfv_match_table *t,
				struct lfv_match_entry *e)
{
	if (t->entries > t->mask)
		lfv_match_table_grow(t);
	lfv_list_insert_tail(lfv_match_bucket(t, e->tag,
					      lfv_match_key_addr(t, e)),
			     lfv_match_node(t, e));
	t->entries++;
}

static void lfv_match_table_del(struct lfv_match_table *t,
				struct lfv_match_entry *e)
{
	lfv_list_remove(lfv_match_node(t, e));
	t->entries--;
}

/* The first entry chained with key (tag, addr): the earliest with it. */
static struct lfv_match_entry *lfv_match_table_first(struct lfv_match *m,
						     struct lfv_match_table *t,
						     uint64_t tag,
						     fi_addr_t addr)
{
	struct lfv_list *head, *item;
	struct lfv_match_entry *e;

	if (!t->entries)
		return NULL;
	head = lfv_match_bucket(t, tag, addr);
	lfv_list_foreach(item, head) {
		m->probes++;
		e = lfv_match_of_node(t, item);
		if (e->tag == tag && lfv_match_key_addr(t, e) == addr)
			return e;
	}
	return NULL;
}

/* ---- the engine -------------------------------------------------------- */

/* A side's three tables: receives by (tag, source), messages by tag alone
 * (for receives from any source), messages by (tag, source). */
#define LFV_MATCH_TABLES 3

static void lfv_match_side_tables(struct lfv_match_side *s,
				  struct lfv_match_table *t[LFV_MATCH_TABLES])
{
	t[0] = &s->recvs;
	t[1] = &s->msgs;
	t[2] = &s->srcs;
}

static int lfv_match_side_init(struct lfv_match_side *s)
{
	static const size_t node_off[LFV_MATCH_TABLES] = {
		offsetof(struct lfv_match_entry, key_node),
		offsetof(struct lfv_match_entry, key_node),
		offsetof(struct lfv_match_entry, src_node),
	};
	static const bool any_source[LFV_MATCH_TABLES] = { false, true, false };
	struct lfv_match_table *t[LFV_MATCH_TABLES];
	size_t i;
	int ret;

	lfv_match_side_tables(s, t);
	for (i = 0; i < LFV_MATCH_TABLES; i++) {
		ret = lfv_match_table_init(t[i], node_off[i], any_source[i]);
		if (ret)
			goto fini_tables;
	}
	lfv_list_init(&s->wild_recvs);
	lfv_list_init(&s->arrivals);
	s->nrecvs = 0;
	s->nunspec = 0;
	s->nmsgs = 0;
	return 0;

fini_tables:
	while (i--)
		lfv_match_table_fini(t[i]);
	return ret;
}

static void lfv_match_side_fini(struct lfv_match_side *s)
{
	struct lfv_match_table *t[LFV_MATCH_TABLES];
	size_t i;

	lfv_match_side_tables(s, t);
	for (i = LFV_MATCH_TABLES; i--;)
		lfv_match_table_fini(t[i]);
}

int lfv_match_init(struct lfv_match *m, bool directed)
{
	struct lfv_match tmp = { .directed = directed };
	int ret;

	if (!m)
		return -FI_EINVAL;
	ret = lfv_match_side_init(&tmp.side[LFV_MATCH_MSG]);
	if (ret)
		return ret;
	ret = lfv_match_side_init(&tmp.side[LFV_MATCH_TAG]);
	if (ret) {
		lfv_match_side_fini(&tmp.side[LFV_MATCH_MSG]);
		return ret;
	}
	*m = tmp;
	/* The list heads point at themselves: re-home them in *m. */
	lfv_list_init(&m->side[LFV_MATCH_MSG].wild_recvs);
	lfv_list_init(&m->side[LFV_MATCH_MSG].arrivals);
	lfv_list_init(&m->side[LFV_MATCH_TAG].wild_recvs);
	lfv_list_init(&m->side[LFV_MATCH_TAG].arrivals);
	return 0;
}

void lfv_match_fini(struct lfv_match *m)
{
	lfv_match_side_fini(&m->side[LFV_MATCH_TAG]);
	lfv_match_side_fini(&m->side[LFV_MATCH_MSG]);
}

/* Untagged traffic has no tag; without directed receive no receive has an
 * address. Applied to every key the engine stores or looks up. */
static void lfv_match_normalise(const struct lfv_match *m,
				enum lfv_match_kind kind, fi_addr_t *recv_addr,
				uint64_t *tag, uint64_t *ignore)
{
	if (kind == LFV_MATCH_MSG) {
		*tag = 0;
		*ignore = 0;
	}
	if (recv_addr && !m->directed)
		*recv_addr = FI_ADDR_UNSPEC;
}

/* The entry's place in the one order of receives and messages that
 * lfv_match_earlier compares. */
static void lfv_match_stamp(struct lfv_match *m, enum lfv_match_kind kind,
			    struct lfv_match_entry *e)
{
	e->kind = kind;
	e->seq = m->next_seq++;
}

static struct lfv_match_entry *lfv_match_earlier(struct lfv_match_entry *a,
						 struct lfv_match_entry *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a->seq < b->seq ? a : b;
}

/*
 * The scans behind the tables, in queue order (both lists are in seq
 * order), counting probes: of the wildcard receives (recvs: the first that
 * accepts a message from addr with tag, among those posted no later than
 * seq_limit) or of the arrivals (the oldest message that a receive for
 * addr, tag, ignore accepts). Inline: each caller gets its own loop, as
 * when they were two functions.
 */
static inline __attribute__((always_inline)) struct lfv_match_entry *
lfv_match_scan(struct lfv_match *m, struct lfv_list *list, bool recvs,
	       fi_addr_t addr, uint64_t tag, uint64_t ignore,
	       uint64_t seq_limit)
{
	struct lfv_match_entry *e;
	struct lfv_list *item;

	lfv_list_foreach(item, list) {
		m->probes++;
		e = recvs ? lfv_container_of(item, struct lfv_match_entry,
					     key_node) :
			    lfv_container_of(item, struct lfv_match_entry,
					     arrival_node);
		if (e->seq > seq_limit)
			return NULL;
		if (recvs ? lfv_match_accepts(e, addr, tag) :
			    lfv_match_takes(addr, tag, ignore, e->addr, e->tag))
			return e;
	}
	return NULL;
}

/* ---- posted receives --------------------------------------------------- */

int lfv_match_post_recv(struct lfv_match *m, enum lfv_match_kind kind,
			struct lfv_match_entry *recv)
{
	struct lfv_match_side *s = &m->side[kind];

	lfv_match_normalise(m, kind, &recv->addr, &recv->tag, &recv->ignore);
	recv->wild = recv->ignore != 0;
	if (recv->wild) {
		lfv_list_insert_tail(&s->wild_recvs, &recv->key_node);
	} else {
		lfv_match_table_add(&s->recvs, recv);
		if (recv->addr == FI_ADDR_UNSPEC)
			s->nunspec++;
	}
	recv->by_source = false;
	lfv_match_stamp(m, kind, recv);
	s->nrecvs++;
	return 0;
}

struct lfv_match_entry *lfv_match_find_recv(struct lfv_match *m,
					    enum lfv_match_kind kind,
					    fi_addr_t addr, uint64_t tag)
{
	struct lfv_match_side *s = &m->side[kind];
	struct lfv_match_entry *best = NULL, *any;
	uint64_t ignore = 0;

	lfv_match_normalise(m, kind, NULL, &tag, &ignore);
	if (!s->nrecvs)
		return NULL;
	if (m->directed && addr != FI_ADDR_UNSPEC)
		best = lfv_match_table_first(m, &s->recvs, tag, addr);
	any = s->nunspec ? lfv_match_table_first(m, &s->recvs, tag,
						 FI_ADDR_UNSPEC) : NULL;
	best = lfv_match_earlier(best, any);
	if (!lfv_list_empty(&s->wild_recvs))
		best = lfv_match_earlier(best, lfv_match_scan(m, &s->wild_recvs,
					 true, addr, tag, 0,
					 best ? best->seq : UINT64_MAX));
	return best;
}

void lfv_match_remove_recv(struct lfv_match *m, struct lfv_match_entry *recv)
{
	struct lfv_match_side *s = &m->side[recv->kind];

	if (recv->wild) {
		lfv_list_remove(&recv->key_node);
	} else {
		lfv_match_table_del(&s->recvs, recv);
		if (recv->addr == FI_ADDR_UNSPEC)
			s->nunspec--;
	}
	s->nrecvs--;
}

/* ---- unexpected messages ----------------------------------------------- */

int lfv_match_add_msg(struct lfv_match *m, enum lfv_match_kind kind,
		      struct lfv_match_entry *msg)
{
	struct lfv_match_side *s = &m->side[kind];

	lfv_match_normalise(m, kind, NULL, &msg->tag, &msg->ignore);
	msg->ignore = 0;
	msg->wild = false;
	lfv_match_table_add(&s->msgs, msg);
	msg->by_source = m->directed && msg->addr != FI_ADDR_UNSPEC;
	if (msg->by_source)
		lfv_match_table_add(&s->srcs, msg);
	lfv_list_insert_tail(&s->arrivals, &msg->arrival_node);
	lfv_match_stamp(m, kind, msg);
	s->nmsgs++;
	return 0;
}

/* Chains a message into its (tag, source) bucket after every message that
 * arrived before it (the bucket is in arrival order; the message may have
 * arrived before messages already chained). */
static void lfv_match_srcs_add_in_order(struct lfv_match_table *t,
					struct lfv_match_entry *msg)
{
	struct lfv_list *bucket, *pos;

	if (t->entries > t->mask)
		lfv_match_table_grow(t);
	bucket = lfv_match_bucket(t, msg->tag, msg->addr);
	for (pos = bucket->prev; pos != bucket; pos = pos->prev)
		if (lfv_match_of_node(t, pos)->seq < msg->seq)
			break;
	lfv_list_insert_between(lfv_match_node(t, msg), pos, pos->next);
	t->entries++;
}

int lfv_match_set_msg_source(struct lfv_match *m, struct lfv_match_entry *msg,
			     fi_addr_t addr)
{
	struct lfv_match_side *s = &m->side[msg->kind];

	if (msg->addr != FI_ADDR_UNSPEC || addr == FI_ADDR_UNSPEC)
		return -FI_EINVAL;
	msg->addr = addr;
	msg->by_source = m->directed;
	if (msg->by_source)
		lfv_match_srcs_add_in_order(&s->srcs, msg);
	return 0;
}

struct lfv_match_entry *lfv_match_find_msg(struct lfv_match *m,
					   enum lfv_match_kind kind,
					   fi_addr_t addr, uint64_t tag,
					   uint64_t ignore)
{
	struct lfv_match_side *s = &m->side[kind];

	lfv_match_normalise(m, kind, &addr, &tag, &ignore);
	if (!s->nmsgs)
		return NULL;
	if (ignore)
		return lfv_match_scan(m, &s->arrivals, false, addr, tag,
				      ignore, UINT64_MAX);
	if (addr == FI_ADDR_UNSPEC)
		return lfv_match_table_first(m, &s->msgs, tag, FI_ADDR_UNSPEC);
	return lfv_match_table_first(m, &s->srcs, tag, addr);
}

void lfv_match_remove_msg(struct lfv_match *m, struct lfv_match_entry *msg)
{
	struct lfv_match_side *s = &m->side[msg->kind];

	lfv_match_table_del(&s->msgs, msg);
	if (msg->by_source)
		lfv_match_table_del(&s->srcs, msg);
	lfv_list_remove(&msg->arrival_node);
	s->nmsgs--;
}

static struct lfv_match_entry *lfv_match_arrival(struct lfv_match_side *s,
						 struct lfv_list *item)
{
	if (item == &s->arrivals)
		return NULL;
	return lfv_container_of(item, struct lfv_match_entry, arrival_node);
}

struct lfv_match_entry *lfv_match_first_msg(struct lfv_match *m,
					    enum lfv_match_kind kind)
{
	struct lfv_match_side *s = &m->side[kind];

	return lfv_match_arrival(s, s->arrivals.next);
}

struct lfv_match_entry *lfv_match_next_msg(struct lfv_match *m,
					   const struct lfv_match_entry *msg)
{
	struct lfv_match_side *s = &m->side[msg->kind];

	return lfv_match_arrival(s, msg->arrival_node.next);
}
