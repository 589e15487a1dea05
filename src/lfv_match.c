/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The tag-matching engine: see include/lfv_match.h for the layout and
 * the ordering argument. */
#include <stdlib.h>

#include <rdma/fi_errno.h>

#include "lfv_match.h"

#define LFV_MATCH_MIN_BUCKETS 64
#define LFV_MATCH_QUEUE_CHUNK 64

/* The FIFO of entries with one key. */
struct lfv_match_queue {
	struct lfv_list chain;		/* in its hash bucket */
	struct lfv_list entries;	/* linked by key_node or src_node */
	uint64_t tag;
	fi_addr_t addr;
};

/* splitmix64's finaliser over both key words: every input bit reaches
 * every output bit, so sequential tags spread over all buckets. */
static size_t lfv_match_hash(uint64_t tag, fi_addr_t addr)
{
	uint64_t h = tag ^ (addr * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
}

/* ---- tables of queues -------------------------------------------------- */

static int lfv_match_table_init(struct lfv_match_table *t)
{
	size_t i;

	t->buckets = malloc(LFV_MATCH_MIN_BUCKETS * sizeof(*t->buckets));
	if (!t->buckets)
		return -FI_ENOMEM;
	for (i = 0; i < LFV_MATCH_MIN_BUCKETS; i++)
		lfv_list_init(&t->buckets[i]);
	t->mask = LFV_MATCH_MIN_BUCKETS - 1;
	t->queues = 0;
	return 0;
}

static void lfv_match_table_fini(struct lfv_match_table *t)
{
	free(t->buckets);
	t->buckets = NULL;
}

static struct lfv_list *lfv_match_bucket(const struct lfv_match_table *t,
					 uint64_t tag, fi_addr_t addr)
{
	return &t->buckets[lfv_match_hash(tag, addr) & t->mask];
}

static struct lfv_match_queue *lfv_match_table_find(struct lfv_match *m,
						    struct lfv_match_table *t,
						    uint64_t tag,
						    fi_addr_t addr)
{
	struct lfv_list *head = lfv_match_bucket(t, tag, addr), *item;
	struct lfv_match_queue *q;

	lfv_list_foreach(item, head) {
		m->probes++;
		q = lfv_container_of(item, struct lfv_match_queue, chain);
		if (q->tag == tag && q->addr == addr)
			return q;
	}
	return NULL;
}

/* Doubles the bucket array. Best effort: without memory the chains only
 * get longer, matching stays correct. */
static void lfv_match_table_grow(struct lfv_match_table *t)
{
	size_t n = (t->mask + 1) * 2, i;
	struct lfv_list *old = t->buckets, *item;
	size_t old_n = t->mask + 1;
	struct lfv_match_queue *q;

	t->buckets = malloc(n * sizeof(*t->buckets));
	if (!t->buckets) {
		t->buckets = old;
		return;
	}
	for (i = 0; i < n; i++)
		lfv_list_init(&t->buckets[i]);
	t->mask = n - 1;
	for (i = 0; i < old_n; i++) {
		while ((item = lfv_list_pop_head(&old[i]))) {
			q = lfv_container_of(item, struct lfv_match_queue,
					     chain);
			lfv_list_insert_tail(lfv_match_bucket(t, q->tag,
							      q->addr),
					     &q->chain);
		}
	}
	free(old);
}

/* The queue for a key, created empty when there is none. */
static int lfv_match_table_get(struct lfv_match *m, struct lfv_match_table *t,
			       uint64_t tag, fi_addr_t addr,
			       struct lfv_match_queue **out)
{
	struct lfv_match_queue *q = lfv_match_table_find(m, t, tag, addr);
	void *obj;
	int ret;

	if (!q) {
		ret = lfv_pool_get(&m->queue_pool, &obj);
		if (ret)
			return ret;
		q = obj;
		q->tag = tag;
		q->addr = addr;
		lfv_list_init(&q->entries);
		if (t->queues >= t->mask + 1)
			lfv_match_table_grow(t);
		lfv_list_insert_tail(lfv_match_bucket(t, tag, addr),
				     &q->chain);
		t->queues++;
	}
	*out = q;
	return 0;
}

static void lfv_match_table_release(struct lfv_match *m,
				    struct lfv_match_table *t,
				    struct lfv_match_queue *q)
{
	if (!lfv_list_empty(&q->entries))
		return;
	lfv_list_remove(&q->chain);
	t->queues--;
	lfv_pool_put(&m->queue_pool, q);
}

/* ---- the engine -------------------------------------------------------- */

static int lfv_match_side_init(struct lfv_match_side *s)
{
	int ret;

	ret = lfv_match_table_init(&s->recvs);
	if (ret)
		return ret;
	ret = lfv_match_table_init(&s->msgs);
	if (ret) {
		lfv_match_table_fini(&s->recvs);
		return ret;
	}
	lfv_list_init(&s->wild_recvs);
	lfv_list_init(&s->arrivals);
	s->nrecvs = 0;
	s->nmsgs = 0;
	return 0;
}

static void lfv_match_side_fini(struct lfv_match_side *s)
{
	lfv_match_table_fini(&s->msgs);
	lfv_match_table_fini(&s->recvs);
}

int lfv_match_init(struct lfv_match *m, bool directed)
{
	struct lfv_match tmp = { .directed = directed };
	int ret;

	if (!m)
		return -FI_EINVAL;
	ret = lfv_pool_init(&tmp.queue_pool, sizeof(struct lfv_match_queue),
			    LFV_MATCH_QUEUE_CHUNK, 0);
	if (ret)
		return ret;
	ret = lfv_match_side_init(&tmp.side[LFV_MATCH_MSG]);
	if (ret)
		goto fini_pool;
	ret = lfv_match_side_init(&tmp.side[LFV_MATCH_TAG]);
	if (ret)
		goto fini_msg_side;
	*m = tmp;
	/* The list heads point at themselves: re-home them in *m. */
	lfv_list_init(&m->side[LFV_MATCH_MSG].wild_recvs);
	lfv_list_init(&m->side[LFV_MATCH_MSG].arrivals);
	lfv_list_init(&m->side[LFV_MATCH_TAG].wild_recvs);
	lfv_list_init(&m->side[LFV_MATCH_TAG].arrivals);
	return 0;

fini_msg_side:
	lfv_match_side_fini(&tmp.side[LFV_MATCH_MSG]);
fini_pool:
	lfv_pool_fini(&tmp.queue_pool);
	return ret;
}

void lfv_match_fini(struct lfv_match *m)
{
	lfv_match_side_fini(&m->side[LFV_MATCH_TAG]);
	lfv_match_side_fini(&m->side[LFV_MATCH_MSG]);
	lfv_pool_fini(&m->queue_pool);
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

/* The oldest entry of a queue, linked through key_node or src_node. */
static struct lfv_match_entry *lfv_match_head(struct lfv_match *m,
					      struct lfv_match_queue *q,
					      bool by_source)
{
	struct lfv_list *first;

	if (!q)
		return NULL;
	first = lfv_list_first(&q->entries);
	if (!first)
		return NULL;
	m->probes++;
	return by_source ?
	       lfv_container_of(first, struct lfv_match_entry, src_node) :
	       lfv_container_of(first, struct lfv_match_entry, key_node);
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

/* ---- posted receives --------------------------------------------------- */

int lfv_match_post_recv(struct lfv_match *m, enum lfv_match_kind kind,
			struct lfv_match_entry *recv)
{
	struct lfv_match_side *s = &m->side[kind];
	struct lfv_match_queue *q = NULL;
	int ret;

	lfv_match_normalise(m, kind, &recv->addr, &recv->tag, &recv->ignore);
	if (recv->ignore) {
		lfv_list_insert_tail(&s->wild_recvs, &recv->key_node);
	} else {
		ret = lfv_match_table_get(m, &s->recvs, recv->tag, recv->addr,
					  &q);
		if (ret)
			return ret;
		lfv_list_insert_tail(&q->entries, &recv->key_node);
		if (recv->addr == FI_ADDR_UNSPEC)
			s->nunspec++;
	}
	recv->key_queue = q;
	recv->src_queue = NULL;
	recv->kind = kind;
	recv->seq = m->next_seq++;
	s->nrecvs++;
	return 0;
}

/* The first wildcard that accepts the message, among those posted before
 * seq_limit (the wildcard list is in posting order). */
static struct lfv_match_entry *lfv_match_first_wild(struct lfv_match *m,
						    struct lfv_match_side *s,
						    fi_addr_t addr,
						    uint64_t tag,
						    uint64_t seq_limit)
{
	struct lfv_match_entry *recv;
	struct lfv_list *item;

	lfv_list_foreach(item, &s->wild_recvs) {
		m->probes++;
		recv = lfv_container_of(item, struct lfv_match_entry,
					key_node);
		if (recv->seq > seq_limit)
			return NULL;
		if (lfv_match_accepts(recv, addr, tag))
			return recv;
	}
	return NULL;
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
		best = lfv_match_head(m, lfv_match_table_find(m, &s->recvs,
							      tag, addr),
				      false);
	any = s->nunspec ? lfv_match_head(m, lfv_match_table_find(m,
				&s->recvs, tag, FI_ADDR_UNSPEC), false) : NULL;
	best = lfv_match_earlier(best, any);
	if (!lfv_list_empty(&s->wild_recvs))
		best = lfv_match_earlier(best, lfv_match_first_wild(m, s, addr,
					 tag, best ? best->seq : UINT64_MAX));
	return best;
}

void lfv_match_remove_recv(struct lfv_match *m, struct lfv_match_entry *recv)
{
	struct lfv_match_side *s = &m->side[recv->kind];

	lfv_list_remove(&recv->key_node);
	if (recv->key_queue && recv->addr == FI_ADDR_UNSPEC)
		s->nunspec--;
	if (recv->key_queue)
		lfv_match_table_release(m, &s->recvs, recv->key_queue);
	recv->key_queue = NULL;
	s->nrecvs--;
}

/* ---- unexpected messages ----------------------------------------------- */

int lfv_match_add_msg(struct lfv_match *m, enum lfv_match_kind kind,
		      struct lfv_match_entry *msg)
{
	struct lfv_match_side *s = &m->side[kind];
	struct lfv_match_queue *all, *src = NULL;
	int ret;

	lfv_match_normalise(m, kind, NULL, &msg->tag, &msg->ignore);
	msg->ignore = 0;
	ret = lfv_match_table_get(m, &s->msgs, msg->tag, FI_ADDR_UNSPEC, &all);
	if (ret)
		return ret;
	if (m->directed && msg->addr != FI_ADDR_UNSPEC) {
		ret = lfv_match_table_get(m, &s->msgs, msg->tag, msg->addr,
					  &src);
		if (ret) {
			lfv_match_table_release(m, &s->msgs, all);
			return ret;
		}
		lfv_list_insert_tail(&src->entries, &msg->src_node);
	}
	lfv_list_insert_tail(&all->entries, &msg->key_node);
	lfv_list_insert_tail(&s->arrivals, &msg->arrival_node);
	msg->key_queue = all;
	msg->src_queue = src;
	msg->kind = kind;
	msg->seq = m->next_seq++;
	s->nmsgs++;
	return 0;
}

/* The oldest message a wildcard receive accepts: an arrival-order scan. */
static struct lfv_match_entry *lfv_match_scan_arrivals(struct lfv_match *m,
						       struct lfv_match_side *s,
						       fi_addr_t addr,
						       uint64_t tag,
						       uint64_t ignore)
{
	struct lfv_match_entry *msg;
	struct lfv_list *item;

	lfv_list_foreach(item, &s->arrivals) {
		m->probes++;
		msg = lfv_container_of(item, struct lfv_match_entry,
				       arrival_node);
		if ((addr == FI_ADDR_UNSPEC || addr == msg->addr) &&
		    (msg->tag | ignore) == (tag | ignore))
			return msg;
	}
	return NULL;
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
		return lfv_match_scan_arrivals(m, s, addr, tag, ignore);
	return lfv_match_head(m, lfv_match_table_find(m, &s->msgs, tag, addr),
			      addr != FI_ADDR_UNSPEC);
}

void lfv_match_remove_msg(struct lfv_match *m, struct lfv_match_entry *msg)
{
	struct lfv_match_side *s = &m->side[msg->kind];

	lfv_list_remove(&msg->key_node);
	lfv_match_table_release(m, &s->msgs, msg->key_queue);
	if (msg->src_queue) {
		lfv_list_remove(&msg->src_node);
		lfv_match_table_release(m, &s->msgs, msg->src_queue);
	}
	lfv_list_remove(&msg->arrival_node);
	msg->key_queue = NULL;
	msg->src_queue = NULL;
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
