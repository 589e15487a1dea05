/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The transport-independent tag-matching engine: posted receives and
 * unexpected messages, separately for untagged (LFV_MATCH_MSG) and tagged
 * (LFV_MATCH_TAG) traffic. The engine only orders and finds entries; the
 * caller embeds a struct lfv_match_entry in its own objects, owns their
 * memory, and serialises every call (one lock around the engine).
 *
 * Matching rule. A receive (raddr, rtag, ignore) matches a message (maddr,
 * mtag) when
 *   - raddr == FI_ADDR_UNSPEC or raddr == maddr, where directed receive is
 *     enabled (lfv_match_init(directed = true)); without it every receive
 *     is treated as FI_ADDR_UNSPEC;
 *   - (mtag | ignore) == (rtag | ignore); untagged traffic has tag 0 and
 *     ignore 0, so only the address counts.
 * When several receives match a message, the earliest posted wins; when
 * several messages match a receive, the earliest arrived wins.
 *
 * Layout. Receives without ignore bits ("exact") are chained in a hash
 * table keyed (tag, addr): each bucket is one list in posting order, so
 * the entries with one key, which all hash to one bucket, are in posting
 * order there too, and the first entry of the bucket with the key is the
 * earliest posted. No object is made per key: posting is a hash and a
 * list insertion, removal a list removal. Receives with ignore bits
 * ("wildcards") live in one list in posting order. Every receive carries
 * a sequence number from one counter, so posting order is comparable
 * across all of these lists.
 *
 * Unexpected messages are chained the same way in a table keyed by tag
 * (all sources), with directed receive also in one keyed (tag, source),
 * and in one arrival-ordered list.
 *
 * Why the earliest-posted matching receive is found (message maddr, mtag):
 * a receive that can match is either exact with rtag == mtag and raddr in
 * {maddr, FI_ADDR_UNSPEC}, i.e. one of the entries keyed (mtag, maddr) or
 * (mtag, FI_ADDR_UNSPEC), or a wildcard. The first entry with each key in
 * its bucket is the earliest posted with that key (every one of them
 * matches). The wildcard list is in posting order too, so its first
 * matching entry is the earliest matching wildcard, and the scan may stop
 * at the first wildcard posted after the better of the two exact
 * candidates. The answer is the candidate with the smallest sequence
 * number. Exact receives for other keys are only passed over when they
 * share a bucket: the table grows to keep a bucket per entry, so the cost
 * is two short chain walks plus the wildcards posted before the winner.
 *
 * Why the earliest-arrived matching message is found (receive raddr,
 * rtag, ignore): with ignore == 0 the matching messages are exactly those
 * keyed (rtag, raddr) (raddr FI_ADDR_UNSPEC: keyed rtag in the all-sources
 * table), chained in arrival order, so the first with the key is the
 * answer. With ignore bits the arrival list is scanned from its oldest
 * entry and the first match is the answer.
 *
 * Removal is O(1): an entry is unlinked from its lists. The buckets are
 * the only memory the engine holds; they follow the largest number of
 * entries seen.
 *
 * probes counts chained entries examined: a test hook that shows the
 * cost of a match without a timer.
 */
#ifndef LFV_MATCH_H
#define LFV_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>

#include "lfv_list.h"

enum lfv_match_kind {
	LFV_MATCH_MSG,		/* untagged: fi_recv, get_msg */
	LFV_MATCH_TAG,		/* tagged: fi_trecv, get_tag */
	LFV_MATCH_KINDS,
};

/*
 * One receive or one unexpected message. The caller sets addr, tag and
 * ignore (receives) before posting/adding; the engine owns the rest while
 * the entry is queued (and normalises addr, tag and ignore as the kind and
 * the directed setting require).
 */
struct lfv_match_entry {
	struct lfv_list key_node;	/* its bucket by key, or wildcards */
	struct lfv_list src_node;	/* message: its (tag, source) bucket */
	struct lfv_list arrival_node;	/* message: the arrival list */
	bool wild;			/* receive: in the wildcard list */
	bool by_source;			/* message: in the by-source table */
	uint64_t seq;			/* posting (or arrival) order */
	fi_addr_t addr;
	uint64_t tag;
	uint64_t ignore;		/* receives only */
	enum lfv_match_kind kind;
};

/* Entries chained by key: a power of two of buckets, each a list in
 * insertion order, grown to keep a bucket per entry. */
struct lfv_match_table {
	struct lfv_list *buckets;
	size_t mask;			/* number of buckets - 1 */
	unsigned int shift;		/* 64 - log2(number of buckets) */
	size_t entries;			/* entries chained in the table */
	size_t node_off;		/* of the chaining lfv_list in an entry */
	bool any_source;		/* keyed by tag alone (all sources) */
};

struct lfv_match_side {
	struct lfv_match_table recvs;	/* exact receives by (tag, addr) */
	struct lfv_list wild_recvs;	/* receives with ignore bits */
	struct lfv_match_table msgs;	/* messages by tag, all sources */
	struct lfv_match_table srcs;	/* messages by (tag, source) */
	struct lfv_list arrivals;	/* messages in arrival order */
	size_t nrecvs;
	size_t nunspec;			/* exact receives from FI_ADDR_UNSPEC:
					 * none, and a directed lookup is
					 * the only one */
	size_t nmsgs;
};

struct lfv_match {
	struct lfv_match_side side[LFV_MATCH_KINDS];
	uint64_t next_seq;
	bool directed;			/* FI_DIRECTED_RECV semantics */
	uint64_t probes;		/* test hook, see above */
};

/* 0, -FI_EINVAL (m NULL) or -FI_ENOMEM; *m untouched on error. */
int lfv_match_init(struct lfv_match *m, bool directed);
/* Releases the engine's own memory; queued entries are simply forgotten
 * (their memory is the caller's). */
void lfv_match_fini(struct lfv_match *m);

/* Whether a receive for (recv_addr, recv_tag, ignore) accepts a message
 * from addr with tag. */
static inline bool lfv_match_takes(fi_addr_t recv_addr, uint64_t recv_tag,
				   uint64_t ignore, fi_addr_t addr,
				   uint64_t tag)
{
	return (recv_addr == FI_ADDR_UNSPEC || recv_addr == addr) &&
	       (recv_tag | ignore) == (tag | ignore);
}

/* The same for a receive as stored. */
static inline bool lfv_match_accepts(const struct lfv_match_entry *recv,
				     fi_addr_t addr, uint64_t tag)
{
	return lfv_match_takes(recv->addr, recv->tag, recv->ignore, addr, tag);
}

/* ---- posted receives --------------------------------------------------- */

/* Queues a receive after every receive posted before it. Cannot fail
 * (a table that cannot grow keeps longer chains); 0. */
int lfv_match_post_recv(struct lfv_match *m, enum lfv_match_kind kind,
			struct lfv_match_entry *recv);
/* The earliest-posted receive that accepts a message from addr with tag
 * (ignored for LFV_MATCH_MSG), left queued; NULL when none does. */
struct lfv_match_entry *lfv_match_find_recv(struct lfv_match *m,
					    enum lfv_match_kind kind,
					    fi_addr_t addr, uint64_t tag);
void lfv_match_remove_recv(struct lfv_match *m, struct lfv_match_entry *recv);

/* ---- unexpected messages ----------------------------------------------- */

/* Queues a message (addr: its source, or FI_ADDR_UNSPEC when unknown)
 * after every message added before it. 0, as above. */
int lfv_match_add_msg(struct lfv_match *m, enum lfv_match_kind kind,
		      struct lfv_match_entry *msg);
/* Names the source of a queued message that arrived with FI_ADDR_UNSPEC
 * (fi_peer(3) foreach_unspec_addr: the sender's address was inserted into
 * the AV since). It keeps its arrival position; directed receives from
 * addr accept it from now on. -FI_EINVAL when its source is already known
 * or addr is FI_ADDR_UNSPEC. */
int lfv_match_set_msg_source(struct lfv_match *m, struct lfv_match_entry *msg,
			     fi_addr_t addr);
/* The earliest-arrived message a receive (addr, tag, ignore) accepts,
 * left queued; NULL when none. */
struct lfv_match_entry *lfv_match_find_msg(struct lfv_match *m,
					   enum lfv_match_kind kind,
					   fi_addr_t addr, uint64_t tag,
					   uint64_t ignore);
void lfv_match_remove_msg(struct lfv_match *m, struct lfv_match_entry *msg);

/* Arrival-order walk over the queued messages of one kind (e.g. to drop
 * one peer's messages); fetch the next entry before removing the current. */
struct lfv_match_entry *lfv_match_first_msg(struct lfv_match *m,
					    enum lfv_match_kind kind);
struct lfv_match_entry *lfv_match_next_msg(struct lfv_match *m,
					   const struct lfv_match_entry *msg);

static inline size_t lfv_match_recv_count(const struct lfv_match *m,
					  enum lfv_match_kind kind)
{
	return m->side[kind].nrecvs;
}

static inline size_t lfv_match_msg_count(const struct lfv_match *m,
					 enum lfv_match_kind kind)
{
	return m->side[kind].nmsgs;
}

#endif /* LFV_MATCH_H */
