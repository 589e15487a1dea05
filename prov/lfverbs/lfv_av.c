/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Address vectors (fi_av(3)) of struct lfv_ud_name for DGRAM endpoints. The
 * table layout and the meaning of an fi_addr_t are described in lfv_av.h.
 *
 * Semantics chosen where fi_av(3) leaves room:
 *  - The domain must be a DGRAM one (addr_format FI_ADDR_IB_UD); AVs of
 *    other formats return -FI_ENOSYS. FI_AV_UNSPEC opens the domain's
 *    av_type, else FI_AV_TABLE; a type the domain's av_type excludes is
 *    -FI_EINVAL. attr->count sizes the first segment (0: 256 entries).
 *  - Named (shared) AVs (lfv_av_shm.c): the process that opens a name first
 *    creates it and is its only writer; FI_READ opens an existing one
 *    read-only (insert and remove: -FI_EOPNOTSUPP; no segment:
 *    -FI_ENOENT) and takes its type. A second read-write open of a name
 *    whose creator lives: -FI_ENOSYS. The table holds the segment's
 *    capacity, attr->count rounded as segment 0 (more inserts:
 *    -FI_ENOSPC); fi_addr_t values are the creator's in every process.
 *    attr->map_addr, when 0, is set to the segment's fi_addr_t array
 *    (slot i: table index i, FI_ADDR_NOTAVAIL when free), which
 *    fabtests' rdm_shared_av reads. A reader's entries follow the
 *    segment whenever it uses the AV after the creator changed it
 *    (lfv_av_shm_poll); a malformed slot is skipped and counted.
 *    FI_READ without a name: -FI_EINVAL;
 *    rx_ctx_bits up to LFV_AV_RX_CTX_BITS_MAX (scalable endpoints, see
 *    lfv_av.h; more: -FI_EINVAL); FI_SYMMETRIC is an accepted hint; other
 *    open flags than FI_EVENT: -FI_EINVAL.
 *  - With rx_ctx_bits, every address is a struct lfv_sep_name. One without
 *    LFV_SEP_MAGIC is an ordinary endpoint's name in the first 32 bytes
 *    (one receive context); a bad context count or QP number: -FI_EINVAL.
 *    fi_rx_addr() beyond the entry's receive contexts sends nowhere
 *    (lfv_av_dest: NULL). FI_SOURCE reports the entry's base fi_addr_t.
 *  - Every insert creates its own address handle; inserting a name twice
 *    gives two entries, and lfv_av_reverse finds the newer one.
 *  - Insertion tries every address (no abort after a failure); a failed one
 *    does not use up a table index. A name with QP number 0 or above 2^24
 *    is -FI_EINVAL. FI_MORE is ignored; FI_AV_USER_ID: -FI_EBADFLAGS.
 *    FI_AV_MAP inserts need the fi_addr array (-FI_EINVAL without it).
 *  - FI_EVENT: inserts run synchronously and return 0 once the events are
 *    queued: one error event per failed address (err and prov_errno the
 *    positive error, data its index in the call), then FI_AV_COMPLETE with
 *    data = the number inserted. Without a bound EQ: -FI_ENOEQ. FI_SYNC_ERR
 *    there: -FI_EBADFLAGS. If queueing an event fails (-FI_ENOMEM) the
 *    call's insertions are undone and the error is returned (error events
 *    already queued for it stay, with no FI_AV_COMPLETE after them).
 *  - fi_av_remove removes every live address given and returns -FI_EINVAL
 *    if any was not live; fi_av_lookup of a dead address is -FI_EINVAL.
 *  - fi_av_straddr: "fi_addr_ib_ud://<GID>:<QPN>/<LID>/<Q_Key>", hex, the
 *    scheme of libfabric's ofi_straddr for FI_ADDR_IB_UD up to the LID;
 *    lfverbs' name has a Q_Key where that one has a P_Key and an SL. A
 *    service name: "fi_sockaddr_in://<IPv4>:<port>" (or _in6, [IPv6]).
 *  - A service name (lfv_svc.h: from fi_getinfo(node, service), or
 *    built by fi_av_insertsvc / fi_av_insertsym in lfv_av_svc.c) is
 *    resolved to the QP name of the endpoint listening there before the
 *    lock is taken; the entry holds that QP name (fi_av_lookup returns
 *    it). A resolution that fails fails that address like a bad name,
 *    with its own error (-FI_ECONNREFUSED, -FI_EHOSTUNREACH, ...).
 *  - fi_av_set: -FI_ENOSYS.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_eq.h>

#include "lfv_av.h"
#include "lfv_eq.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_svc.h"

#define LFV_AV_OPEN_FLAGS (FI_EVENT | FI_SYMMETRIC | FI_READ)
#define LFV_AV_INSERT_FLAGS (FI_MORE | FI_SYNC_ERR)
#define LFV_AV_QPN_MAX 0xffffffU
#define LFV_AV_HOP_LIMIT 64
#define LFV_AV_MIN_BUCKETS 64U
#define LFV_AV_MAX_BUCKETS (1U << 30)

static struct fi_ops lfv_av_fi_ops;

static struct lfv_av *lfv_av_of(struct fid_av *av_fid)
{
	return lfv_container_of(av_fid, struct lfv_av, av_fid);
}

/* ---- index <-> (segment, offset) ---------------------------------------- */

/* Segment k covers indexes [(2^k - 1) << shift, (2^(k+1) - 1) << shift);
 * false when k is beyond the last segment (*seg and *off are set anyway). */
static inline bool lfv_av_locate(uint32_t shift, uint32_t idx, uint32_t *seg,
				 size_t *off)
{
	uint64_t v = ((uint64_t)idx >> shift) + 1;
	uint32_t k = 63 - (uint32_t)__builtin_clzll(v);

	*seg = k;
	*off = (size_t)(idx - (((1ULL << k) - 1) << shift));
	return k < LFV_AV_MAX_SEGS;
}

/* The index an fi_addr_t names and the tag its entry must carry; false
 * when the value cannot name an entry at all (FI_ADDR_NOTAVAIL, junk). */
static inline bool lfv_av_decode(const struct lfv_av *av, fi_addr_t addr,
				 uint32_t *idx, uint32_t *tag)
{
	addr &= av->base_mask;		/* fi_rx_addr() bits */
	if (av->type == FI_AV_MAP) {
		*tag = (uint32_t)(addr >> 32);
	} else {
		if (addr >> 32)
			return false;
		*tag = 1;
	}
	*idx = (uint32_t)addr;
	return *tag != 0 && *idx < LFV_AV_MAX_ENTRIES;
}

static inline fi_addr_t lfv_av_encode(const struct lfv_av *av, uint32_t idx,
				      uint32_t tag)
{
	return av->type == FI_AV_MAP ? ((fi_addr_t)tag << 32) | idx : idx;
}

/* The receive context of a scalable endpoint that addr's top bits name. */
static const struct lfv_av_dest *lfv_av_sep_dest(const struct lfv_av *av,
						 const struct lfv_av_entry *e,
						 fi_addr_t addr)
{
	uint32_t rx = (uint32_t)(addr >> (64 - av->rx_ctx_bits));

	return rx < e->sep->nrx ? &e->sep->rx[rx] : NULL;
}

const struct lfv_av_dest *lfv_av_dest(struct lfv_av *av, fi_addr_t addr)
{
	struct lfv_av_entry *seg;
	uint32_t idx, tag, k;
	size_t off;

	if (__builtin_expect(av->read_only, 0))
		lfv_av_shm_poll(av);
	if (!lfv_av_decode(av, addr, &idx, &tag) ||
	    !lfv_av_locate(av->seg0_shift, idx, &k, &off))
		return NULL;
	/* Acquire: pairs with the release store in lfv_av_seg_alloc, so the
	 * zeroed entries of a new segment are seen before the pointer. */
	seg = (struct lfv_av_entry *)(uintptr_t)lfv_load_acquire64(&av->segs[k]);
	if (!seg)
		return NULL;
	/* Acquire: pairs with the release store of the tag in
	 * lfv_av_insert_one, so dest is complete once the tag matches. */
	if (lfv_load_acquire32(&seg[off].tag) != tag)
		return NULL;
	if (av->rx_ctx_bits)
		return lfv_av_sep_dest(av, &seg[off], addr);
	return &seg[off].dest;
}

/* ---- under av->lock ------------------------------------------------------ */

static struct lfv_av_entry *lfv_av_seg_locked(struct lfv_av *av, uint32_t k)
{
	/* Relaxed: segment pointers are only stored under av->lock, which
	 * the caller holds. */
	return (struct lfv_av_entry *)(uintptr_t)lfv_load_relaxed64(&av->segs[k]);
}

static int lfv_av_seg_alloc(struct lfv_av *av, uint32_t k)
{
	size_t n = (size_t)1 << (av->seg0_shift + k);
	struct lfv_av_entry *seg = calloc(n, sizeof(*seg));

	if (!seg)
		return -FI_ENOMEM;
	/* Release: pairs with the acquire load in lfv_av_dest; the zeroed
	 * (free) entries are visible before the segment is. */
	lfv_store_release64(&av->segs[k], (uintptr_t)seg);
	return 0;
}

/* The entry at an index below next_index (its segment exists). */
static struct lfv_av_entry *lfv_av_entry_locked(struct lfv_av *av,
						uint32_t idx)
{
	uint32_t k;
	size_t off;

	lfv_av_locate(av->seg0_shift, idx, &k, &off);
	return lfv_av_seg_locked(av, k) + off;
}

/* The live entry addr names, or NULL. */
static struct lfv_av_entry *lfv_av_live_locked(struct lfv_av *av,
					       fi_addr_t addr, uint32_t *idx)
{
	struct lfv_av_entry *e;
	uint32_t tag;

	if (!lfv_av_decode(av, addr, idx, &tag) || *idx >= av->next_index)
		return NULL;
	e = lfv_av_entry_locked(av, *idx);
	/* Relaxed: tags are only stored under av->lock, which we hold. */
	return lfv_load_relaxed32(&e->tag) == tag ? e : NULL;
}

static uint32_t lfv_av_hash(const uint8_t gid[16], uint32_t qpn)
{
	uint64_t a, b, h;

	memcpy(&a, gid, sizeof(a));
	memcpy(&b, gid + sizeof(a), sizeof(b));
	h = a ^ (b * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)qpn << 17);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (uint32_t)h;
}

static uint32_t *lfv_av_buckets_new(uint32_t n)
{
	uint32_t *b = malloc((size_t)n * sizeof(*b));

	if (b)
		memset(b, 0xff, (size_t)n * sizeof(*b)); /* LFV_AV_NO_INDEX */
	return b;
}

static void lfv_av_hash_link(struct lfv_av *av, uint32_t *buckets,
			     uint32_t nbuckets, uint32_t idx)
{
	struct lfv_av_entry *e = lfv_av_entry_locked(av, idx);
	uint32_t b = lfv_av_hash(e->name.gid, e->name.qpn) & (nbuckets - 1);

	e->next = buckets[b];
	buckets[b] = idx;
}

/* Doubles the buckets when the load passes 1; keeps the old ones (longer
 * chains, still correct) if memory is short. */
static void lfv_av_hash_grow(struct lfv_av *av)
{
	uint32_t n = av->nbuckets * 2, b, idx, next;
	uint32_t *buckets;

	if (av->live < av->nbuckets || n > LFV_AV_MAX_BUCKETS)
		return;
	buckets = lfv_av_buckets_new(n);
	if (!buckets)
		return;
	for (b = 0; b < av->nbuckets; b++) {
		for (idx = av->buckets[b]; idx != LFV_AV_NO_INDEX; idx = next) {
			next = lfv_av_entry_locked(av, idx)->next;
			lfv_av_hash_link(av, buckets, n, idx);
		}
	}
	free(av->buckets);
	av->buckets = buckets;
	av->nbuckets = n;
}

static void lfv_av_hash_unlink(struct lfv_av *av, struct lfv_av_entry *e,
			       uint32_t idx)
{
	uint32_t *link = &av->buckets[lfv_av_hash(e->name.gid, e->name.qpn) &
				      (av->nbuckets - 1)];

	while (*link != idx)
		link = &lfv_av_entry_locked(av, *link)->next;
	*link = e->next;
}

/* ---- reverse map of transmit contexts (rx_ctx_bits AVs) ------------------- */

static const uint8_t *lfv_av_alias_gid(struct lfv_av *av,
				       const struct lfv_av_alias *a)
{
	return lfv_av_entry_locked(av, a->idx)->name.gid;
}

static void lfv_av_alias_link(struct lfv_av *av, struct lfv_av_alias **buckets,
			      uint32_t nbuckets, struct lfv_av_alias *a)
{
	uint32_t b = lfv_av_hash(lfv_av_alias_gid(av, a), a->qpn) &
		     (nbuckets - 1);

	a->next = buckets[b];
	buckets[b] = a;
}

/* Doubles the alias buckets when the load passes 1 (or makes the first
 * ones); keeps the old ones if memory is short. */
static void lfv_av_alias_grow(struct lfv_av *av)
{
	uint32_t n = av->nalias_buckets ? av->nalias_buckets * 2 :
					  LFV_AV_MIN_BUCKETS;
	struct lfv_av_alias **buckets, *a, *next;
	uint32_t b;

	if ((av->aliases && av->naliases < av->nalias_buckets) ||
	    n > LFV_AV_MAX_BUCKETS)
		return;
	buckets = calloc(n, sizeof(*buckets));
	if (!buckets)
		return;
	for (b = 0; b < av->nalias_buckets; b++) {
		for (a = av->aliases[b]; a; a = next) {
			next = a->next;
			lfv_av_alias_link(av, buckets, n, a);
		}
	}
	free(av->aliases);
	av->aliases = buckets;
	av->nalias_buckets = n;
}

static void lfv_av_alias_del(struct lfv_av *av, struct lfv_av_sep *sep,
			     uint32_t linked)
{
	struct lfv_av_alias **link, *a;
	uint32_t i;

	for (i = 0; i < linked; i++) {
		a = &sep->alias[i];
		if (a->qpn == sep->name.base.qpn)
			continue;
		link = &av->aliases[lfv_av_hash(lfv_av_alias_gid(av, a),
						a->qpn) &
				    (av->nalias_buckets - 1)];
		while (*link != a)
			link = &(*link)->next;
		*link = a->next;
		av->naliases--;
	}
}

/* Every transmit context of a new entry that its base QP number does not
 * already map (an ordinary endpoint's name). -FI_ENOMEM only when no
 * bucket array exists at all. */
static int lfv_av_alias_add(struct lfv_av *av, struct lfv_av_sep *sep,
			    uint32_t idx)
{
	uint32_t i;

	for (i = 0; i < sep->ntx; i++) {
		sep->alias[i].idx = idx;
		sep->alias[i].qpn = sep->name.tx_qpn[i];
		if (sep->alias[i].qpn == sep->name.base.qpn)
			continue;
		lfv_av_alias_grow(av);
		if (!av->aliases) {
			lfv_av_alias_del(av, sep, i);
			return -FI_ENOMEM;
		}
		lfv_av_alias_link(av, av->aliases, av->nalias_buckets,
				  &sep->alias[i]);
		av->naliases++;
	}
	return 0;
}

static bool lfv_av_alias_find(struct lfv_av *av, const union ibv_gid *gid,
			      uint32_t qpn, uint32_t *idx)
{
	struct lfv_av_alias *a;

	if (!av->naliases)
		return false;
	a = av->aliases[lfv_av_hash(gid->raw, qpn) & (av->nalias_buckets - 1)];
	for (; a; a = a->next) {
		if (a->qpn == qpn && !memcmp(lfv_av_alias_gid(av, a), gid->raw,
					     sizeof(gid->raw))) {
			*idx = a->idx;
			return true;
		}
	}
	return false;
}

/* A scalable endpoint's address as inserted (rx_ctx_bits AVs): checks it
 * and fills sep's name and counts. */
static int lfv_av_parse_sep(const void *addr, struct lfv_av_sep *sep)
{
	struct lfv_sep_name *n = &sep->name;
	uint32_t i;

	memcpy(n, addr, sizeof(*n));
	if (n->magic != LFV_SEP_MAGIC) {
		/* An ordinary endpoint's name: one context, its own QP. */
		memset((char *)n + sizeof(n->base), 0,
		       sizeof(*n) - sizeof(n->base));
		n->magic = LFV_SEP_MAGIC;
		n->nrx = n->ntx = 1;
		n->rx_qpn[0] = n->tx_qpn[0] = n->base.qpn;
	}
	if (!n->nrx || n->nrx > LFV_SEP_MAX_CTX || !n->ntx ||
	    n->ntx > LFV_SEP_MAX_CTX || n->rx_qpn[0] != n->base.qpn)
		return -FI_EINVAL;
	for (i = 0; i < n->nrx; i++)
		if (!n->rx_qpn[i] || n->rx_qpn[i] > LFV_AV_QPN_MAX)
			return -FI_EINVAL;
	for (i = 0; i < n->ntx; i++)
		if (!n->tx_qpn[i] || n->tx_qpn[i] > LFV_AV_QPN_MAX)
			return -FI_EINVAL;
	sep->nrx = n->nrx;
	sep->ntx = n->ntx;
	return 0;
}

/* The generation after gen: never 0, and within the bits an fi_addr_t
 * leaves it next to rx_ctx_bits. */
static uint32_t lfv_av_next_gen(const struct lfv_av *av, uint32_t gen)
{
	uint32_t max = (uint32_t)(UINT32_MAX >> av->rx_ctx_bits);

	return gen < max ? gen + 1 : 1;
}

/* The index the next insert will use; allocates its segment if needed. */
static int lfv_av_next_slot(struct lfv_av *av, uint32_t *idx)
{
	uint32_t k;
	size_t off;

	if (av->free_head != LFV_AV_NO_INDEX) {
		*idx = av->free_head;
		return 0;
	}
	if (av->next_index >= av->limit)
		return -FI_ENOSPC;
	lfv_av_locate(av->seg0_shift, av->next_index, &k, &off);
	if (!lfv_av_seg_locked(av, k) && lfv_av_seg_alloc(av, k))
		return -FI_ENOMEM;
	*idx = av->next_index;
	return 0;
}

struct ibv_ah *lfv_av_create_ah(struct lfv_av *av,
				const struct lfv_ud_name *name, int *err)
{
	const struct lfv_device *dev = av->domain->dev;
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.port_num = dev->port_num,
		.grh = {
			.sgid_index = 0,
			.hop_limit = LFV_AV_HOP_LIMIT,
		},
	};
	struct ibv_ah *ah;

	memcpy(attr.grh.dgid.raw, name->gid, sizeof(attr.grh.dgid.raw));
	/* fi_tc_dscp_set() in the domain's tx_attr: the GRH traffic class
	 * carries DSCP in its upper six bits. */
	attr.grh.traffic_class = lfv_tos(av->domain->info->tx_attr ?
					 av->domain->info->tx_attr->tclass : 0);
	if (dev->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET)
		attr.dlid = name->lid;
	errno = 0;
	ah = ibv_create_ah(av->domain->pd, &attr);
	if (!ah) {
		*err = lfv_verbs_errno();
		LFV_INFO(FI_LOG_AV, "ibv_create_ah: %s\n", fi_strerror(-*err));
	}
	return ah;
}

/* The name (and for rx_ctx_bits AVs the contexts) of an inserted address;
 * *sep is the caller's to free. */
static int lfv_av_parse(const struct lfv_av *av, const void *addr,
			struct lfv_ud_name *name, struct lfv_av_sep **sep)
{
	int ret;

	*sep = NULL;
	if (av->rx_ctx_bits) {
		*sep = calloc(1, sizeof(**sep));
		if (!*sep)
			return -FI_ENOMEM;
		ret = lfv_av_parse_sep(addr, *sep);
		if (ret)
			return ret;
		*name = (*sep)->name.base;
	} else {
		memcpy(name, addr, sizeof(*name));
	}
	/* A service name reaches here only resolved (lfv_av_resolved_addr). */
	if (!name->qpn || name->qpn > LFV_AV_QPN_MAX || name->flags)
		return -FI_EINVAL;
	return 0;
}

static void lfv_av_sep_dests(struct lfv_av_sep *sep, struct ibv_ah *ah)
{
	uint32_t i;

	for (i = 0; i < sep->nrx; i++) {
		sep->rx[i].ah = ah;
		sep->rx[i].qpn = sep->name.rx_qpn[i];
		sep->rx[i].qkey = sep->name.base.qkey;
	}
}

/* The name fi_av_lookup returns (and a named AV shares) of an entry. */
static const void *lfv_av_entry_name(const struct lfv_av_entry *e)
{
	return e->sep ? (const void *)&e->sep->name : (const void *)&e->name;
}

/* Makes entry idx (free, its segment allocated) live with generation gen
 * for addr: checks it and creates its address handle. Leaves the free
 * list and next_index to the caller. */
static int lfv_av_fill(struct lfv_av *av, const void *addr, uint32_t idx,
		       uint32_t gen)
{
	struct lfv_ud_name name;
	struct lfv_av_entry *e;
	struct lfv_av_sep *sep;
	struct ibv_ah *ah;
	int ret;

	ret = lfv_av_parse(av, addr, &name, &sep);
	if (ret)
		goto free_sep;
	ah = lfv_av_create_ah(av, &name, &ret);
	if (!ah)
		goto free_sep;
	/* The aliases hash with the entry's GID: the name goes in first (the
	 * entry is not live, nothing else reads its name). */
	e = lfv_av_entry_locked(av, idx);
	e->name = name;
	if (sep) {
		lfv_av_sep_dests(sep, ah);
		ret = lfv_av_alias_add(av, sep, idx);
		if (ret)
			goto destroy_ah;
	}
	e->dest.ah = ah;
	e->dest.qpn = name.qpn;
	e->dest.qkey = name.qkey;
	e->sep = sep;
	e->gen = gen;
	lfv_av_hash_grow(av);
	lfv_av_hash_link(av, av->buckets, av->nbuckets, idx);
	av->live++;
	/* Release: pairs with the acquire load in lfv_av_dest; dest is
	 * written before the entry shows as live. */
	lfv_store_release32(&e->tag, e->gen);
	return 0;

destroy_ah:
	ibv_destroy_ah(ah);
free_sep:
	free(sep);
	return ret;
}

static int lfv_av_insert_one(struct lfv_av *av, const void *addr,
			     fi_addr_t *fi_addr)
{
	struct lfv_av_entry *e;
	uint32_t idx, gen, next_free;
	int ret;

	ret = lfv_av_next_slot(av, &idx);
	if (ret)
		return ret;
	e = lfv_av_entry_locked(av, idx);
	next_free = e->next;		/* fill links it into a hash chain */
	gen = av->type == FI_AV_MAP ? lfv_av_next_gen(av, e->gen) : 1;
	ret = lfv_av_fill(av, addr, idx, gen);
	if (ret)
		return ret;
	if (idx == av->free_head)
		av->free_head = next_free;
	else
		av->next_index++;
	*fi_addr = lfv_av_encode(av, idx, gen);
	if (av->shm)
		lfv_av_shm_publish(av->shm, idx, *fi_addr,
				   lfv_av_entry_name(e), av->addrlen);
	return 0;
}

static int lfv_av_remove_entry(struct lfv_av *av, struct lfv_av_entry *e,
			       uint32_t idx)
{
	int ret;

	ret = lfv_verbs_ret(ibv_destroy_ah(e->dest.ah));
	if (ret) {
		LFV_WARN(FI_LOG_AV, "ibv_destroy_ah: %s\n", fi_strerror(-ret));
		return ret;
	}
	/* Relaxed: a reader that sees 0 reads no field of the entry; one
	 * that still sees the live tag is using the address while it is
	 * removed, which fi_av(3) leaves undefined. */
	lfv_store_relaxed32(&e->tag, 0);
	/* Release: pairs with the acquire load in lfv_av_removals. */
	lfv_fetch_add_release64(&av->removals, 1);
	lfv_av_hash_unlink(av, e, idx);
	if (e->sep) {
		lfv_av_alias_del(av, e->sep, e->sep->ntx);
		free(e->sep);
		e->sep = NULL;
	}
	av->live--;
	if (av->type == FI_AV_MAP && !av->read_only) {
		e->next = av->free_head;
		av->free_head = idx;
	}
	if (av->shm && !av->read_only)
		lfv_av_shm_publish(av->shm, idx, FI_ADDR_NOTAVAIL, NULL, 0);
	return 0;
}

/*
 * Undoes one insert call whose events could not be queued: removes what
 * the first `tried` addresses inserted and marks all `count` fi_addr slots
 * FI_ADDR_NOTAVAIL. Table indexes handed out stay used (a handle that
 * cannot be destroyed keeps its entry live until fi_close).
 */
static void lfv_av_rollback(struct lfv_av *av, fi_addr_t *fi_addr,
			    size_t tried, size_t count, uint32_t table_start)
{
	struct lfv_av_entry *e;
	uint32_t idx;
	size_t i;

	if (av->type == FI_AV_TABLE) {
		for (idx = table_start; idx < av->next_index; idx++) {
			e = lfv_av_entry_locked(av, idx);
			/* Relaxed: tags are only stored under av->lock. */
			if (lfv_load_relaxed32(&e->tag))
				lfv_av_remove_entry(av, e, idx);
		}
	} else {
		/* MAP inserts always have fi_addr (lfv_av_check_insert). */
		for (i = 0; i < tried; i++) {
			e = lfv_av_live_locked(av, fi_addr[i], &idx);
			if (e)
				lfv_av_remove_entry(av, e, idx);
		}
	}
	for (i = 0; fi_addr && i < count; i++)
		fi_addr[i] = FI_ADDR_NOTAVAIL;
}

/* ---- read-only named AVs ------------------------------------------------- */

/* This process's fi_addr_t of an index (lfv_av_shm_local_fn; av->lock). */
static fi_addr_t lfv_av_local_addr(void *arg, uint32_t idx)
{
	struct lfv_av *av = arg;
	uint32_t tag;

	if (idx >= av->next_index)
		return FI_ADDR_NOTAVAIL;
	/* Relaxed: tags are only stored under av->lock. */
	tag = lfv_load_relaxed32(&lfv_av_entry_locked(av, idx)->tag);
	return tag ? lfv_av_encode(av, idx, tag) : FI_ADDR_NOTAVAIL;
}

/* The generation a slot's fi_addr_t gives its entry, when that fi_addr_t
 * names this very slot of an AV of this type (0: it does not). */
static uint32_t lfv_av_slot_tag(const struct lfv_av *av,
				const struct lfv_av_shm_slot *slot)
{
	uint32_t idx, tag;

	if ((slot->addr & ~av->base_mask) ||
	    !lfv_av_decode(av, slot->addr, &idx, &tag) || idx != slot->idx)
		return 0;
	return tag;
}

/* One slot the creator changed: the old entry goes, the new one (checked
 * like any insert) comes. */
static void lfv_av_apply_slot(struct lfv_av *av,
			      const struct lfv_av_shm_slot *slot)
{
	struct lfv_av_entry *e = lfv_av_entry_locked(av, slot->idx);
	uint32_t tag;

	/* Relaxed: tags are only stored under av->lock. */
	if (lfv_load_relaxed32(&e->tag) &&
	    lfv_av_remove_entry(av, e, slot->idx))
		return;		/* the handle stays: tried again next time */
	if (slot->addr == FI_ADDR_NOTAVAIL)
		return;
	tag = lfv_av_slot_tag(av, slot);
	if (!tag || lfv_av_fill(av, &slot->name, slot->idx, tag)) {
		av->shm_bad++;
		LFV_WARN(FI_LOG_AV, "named AV: slot %" PRIu32 " dropped (%"
			 PRIu64 " so far)\n", slot->idx, av->shm_bad);
		return;
	}
	if (slot->idx >= av->next_index)
		av->next_index = slot->idx + 1;
}

static void lfv_av_shm_sync_locked(struct lfv_av *av)
{
	struct lfv_av_shm_slot *slots;
	size_t i, n;
	uint64_t seq;

	/* Relaxed: shm_seen is only stored under av->lock. */
	if (lfv_av_shm_seq(av->shm) == lfv_load_relaxed64(&av->shm_seen))
		return;		/* another thread did it */
	if (lfv_av_shm_changes(av->shm, lfv_av_local_addr, av, &slots, &n,
			       &seq))
		return;		/* busy or no memory: next use tries again */
	for (i = 0; i < n; i++)
		lfv_av_apply_slot(av, &slots[i]);
	free(slots);
	/* Release: a thread that sees it sees the entries (lfv_av_dest reads
	 * them with acquire loads of their tags anyway). */
	lfv_store_release64(&av->shm_seen, seq);
}

void lfv_av_shm_poll(struct lfv_av *av)
{
	/* Acquire both: a seq equal to the one applied means nothing new. */
	if (lfv_av_shm_seq(av->shm) == lfv_load_acquire64(&av->shm_seen))
		return;
	lfv_mutex_lock(&av->lock);
	lfv_av_shm_sync_locked(av);
	lfv_mutex_unlock(&av->lock);
}

/* ---- fi_ops_av ------------------------------------------------------------ */

static int lfv_av_check_insert(const struct lfv_av *av, const void *addr,
			       size_t count, const fi_addr_t *fi_addr,
			       uint64_t flags, void *context)
{
	if (av->read_only)
		return -FI_EOPNOTSUPP;
	if (flags & ~(uint64_t)LFV_AV_INSERT_FLAGS)
		return -FI_EBADFLAGS;
	if ((flags & FI_SYNC_ERR) && (av->flags & FI_EVENT))
		return -FI_EBADFLAGS;
	if (count > INT_MAX || (count && !addr))
		return -FI_EINVAL;
	if (count && av->type == FI_AV_MAP && !fi_addr)
		return -FI_EINVAL;
	if (count && (flags & FI_SYNC_ERR) && !context)
		return -FI_EINVAL;
	return 0;
}

static int lfv_av_report_err(struct lfv_av *av, size_t i, int err,
			     void *context)
{
	struct fi_eq_err_entry entry = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = i,
		.err = -err,
		.prov_errno = -err,
	};

	return lfv_eq_push_err(av->eq, &entry);
}

static int lfv_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	bool event = (av->flags & FI_EVENT) != 0;
	int *sync_err = (flags & FI_SYNC_ERR) ? context : NULL;
	struct lfv_av_resolved *res;
	union lfv_av_addr_buf buf;
	struct fi_eq_entry done;
	const void *one;
	uint32_t table_start;
	int ret, inserted = 0;
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	size_t i;

	ret = lfv_av_check_insert(av, addr, count, fi_addr, flags, context);
	if (ret)
		return ret;
	ret = lfv_av_resolve(av, addr, count, &res);
	if (ret)
		return ret;
	lfv_mutex_lock(&av->lock);
	if (event && !av->eq) {
		ret = -FI_ENOEQ;
		goto unlock;
	}
	table_start = av->next_index;
	for (i = 0; i < count; i++) {
		one = lfv_av_resolved_addr(av, addr, i, res, &buf, &ret);
		if (one)
			ret = lfv_av_insert_one(av, one, &fa);
		if (fi_addr)
			fi_addr[i] = ret ? FI_ADDR_NOTAVAIL : fa;
		if (sync_err)
			sync_err[i] = -ret;
		if (!ret) {
			inserted++;
		} else if (event && lfv_av_report_err(av, i, ret, context)) {
			i++;
			goto undo;
		}
	}
	ret = inserted;
	if (event) {
		done = (struct fi_eq_entry){
			.fid = &av->av_fid.fid,
			.context = context,
			.data = (uint64_t)inserted,
		};
		if (lfv_eq_push(av->eq, FI_AV_COMPLETE, &done, sizeof(done)))
			goto undo;
		ret = 0;
	}
unlock:
	lfv_mutex_unlock(&av->lock);
	free(res);
	return ret;

undo:
	/* The first i addresses were attempted. */
	LFV_WARN(FI_LOG_AV, "cannot queue an AV event: insert undone\n");
	lfv_av_rollback(av, fi_addr, i, count, table_start);
	lfv_mutex_unlock(&av->lock);
	free(res);
	return -FI_ENOMEM;
}

static int lfv_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			 size_t count, uint64_t flags)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	struct lfv_av_entry *e;
	int ret = 0, err;
	uint32_t idx;
	size_t i;

	if (av->read_only)
		return -FI_EOPNOTSUPP;
	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	lfv_mutex_lock(&av->lock);
	for (i = 0; i < count; i++) {
		e = lfv_av_live_locked(av, fi_addr[i], &idx);
		err = e ? lfv_av_remove_entry(av, e, idx) : -FI_EINVAL;
		if (err && !ret)
			ret = err;
	}
	lfv_mutex_unlock(&av->lock);
	return ret;
}

static int lfv_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	struct lfv_av_entry *e;
	const void *name;
	uint32_t idx;
	size_t n;

	if (!addrlen || (*addrlen && !addr))
		return -FI_EINVAL;
	if (av->read_only)
		lfv_av_shm_poll(av);
	lfv_mutex_lock(&av->lock);
	e = lfv_av_live_locked(av, fi_addr, &idx);
	if (e) {
		name = lfv_av_entry_name(e);
		n = *addrlen < av->addrlen ? *addrlen : av->addrlen;
		if (n)
			memcpy(addr, name, n);
		*addrlen = av->addrlen;
	}
	lfv_mutex_unlock(&av->lock);
	return e ? 0 : -FI_EINVAL;
}

/* A service name reads as the address it stands for. */
static const char *lfv_av_straddr_service(const struct lfv_ud_name *name,
					  char *buf, size_t *len)
{
	char ip[INET6_ADDRSTRLEN];
	union lfv_sockaddr sa;
	int n;

	lfv_ud_name_to_sockaddr(name, &sa);
	if (sa.sa.sa_family == AF_INET)
		n = snprintf(buf, *len, "fi_sockaddr_in://%s:%u",
			     inet_ntop(AF_INET, &sa.sin.sin_addr, ip,
				       sizeof(ip)), ntohs(sa.sin.sin_port));
	else
		n = snprintf(buf, *len, "fi_sockaddr_in6://[%s]:%u",
			     inet_ntop(AF_INET6, &sa.sin6.sin6_addr, ip,
				       sizeof(ip)), ntohs(sa.sin6.sin6_port));
	if (n < 0)
		return NULL;
	*len = (size_t)n + 1;
	return buf;
}

static const char *lfv_av_straddr(struct fid_av *av_fid, const void *addr,
				  char *buf, size_t *len)
{
	char gid[INET6_ADDRSTRLEN];
	struct lfv_sep_name sep = { .nrx = 0 };
	struct lfv_ud_name name;
	int n;

	if (!av_fid || !addr || !len || (*len && !buf))
		return NULL;
	memcpy(&name, addr, sizeof(name));
	if (lfv_ud_name_is_service(&name))
		return lfv_av_straddr_service(&name, buf, len);
	if (lfv_av_of(av_fid)->rx_ctx_bits)
		memcpy(&sep, addr, sizeof(sep));
	if (!inet_ntop(AF_INET6, name.gid, gid, sizeof(gid)))
		return NULL;
	/* A scalable endpoint's name adds its context counts. */
	if (sep.magic == LFV_SEP_MAGIC)
		n = snprintf(buf, *len, "fi_addr_ib_ud://%s:%" PRIx32 "/%"
			     PRIx16 "/%" PRIx32 "/rx%u/tx%u", gid, name.qpn,
			     name.lid, name.qkey, sep.nrx, sep.ntx);
	else
		n = snprintf(buf, *len, "fi_addr_ib_ud://%s:%" PRIx32 "/%"
			     PRIx16 "/%" PRIx32, gid, name.qpn, name.lid,
			     name.qkey);
	if (n < 0)
		return NULL;
	*len = (size_t)n + 1;
	return buf;
}

static struct fi_ops_av lfv_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = lfv_av_insert,
	.insertsvc = lfv_av_insertsvc,
	.insertsym = lfv_av_insertsym,
	.remove = lfv_av_remove,
	.lookup = lfv_av_lookup,
	.straddr = lfv_av_straddr,
	.av_set = lfv_no_av_set,
};

/* ---- fi_ops ---------------------------------------------------------------- */

static int lfv_av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_av *av = lfv_container_of(fid, struct lfv_av, av_fid.fid);
	struct lfv_eq *eq = lfv_eq_from_bind_fid(bfid);
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (!eq)
		return -FI_EINVAL;
	lfv_mutex_lock(&av->lock);
	if (av->eq) {
		ret = -FI_EINVAL;
	} else {
		lfv_ref_get(&eq->ref);
		av->eq = eq;
	}
	lfv_mutex_unlock(&av->lock);
	return ret;
}

static void lfv_av_free(struct lfv_av *av)
{
	uint32_t k;

	for (k = 0; k < LFV_AV_MAX_SEGS; k++)
		free(lfv_av_seg_locked(av, k));
	free(av->buckets);
	free(av->aliases);
	lfv_av_shm_close(av->shm);
	lfv_mutex_destroy(&av->lock);
	free(av);
}

static int lfv_av_close(struct fid *fid)
{
	struct lfv_av *av = lfv_container_of(fid, struct lfv_av, av_fid.fid);
	struct lfv_av_entry *e;
	uint32_t idx;
	int ret;

	if (lfv_ref_read(&av->ref) > 1)
		return -FI_EBUSY;
	lfv_mutex_lock(&av->lock);
	for (idx = 0; idx < av->next_index; idx++) {
		e = lfv_av_entry_locked(av, idx);
		/* Relaxed: tags are only stored under av->lock. */
		if (!lfv_load_relaxed32(&e->tag))
			continue;
		ret = lfv_av_remove_entry(av, e, idx);
		if (ret) {
			/* Stays open; a retry continues from here. */
			lfv_mutex_unlock(&av->lock);
			return ret;
		}
	}
	lfv_mutex_unlock(&av->lock);
	if (av->eq)
		lfv_ref_put(&av->eq->ref);
	lfv_ref_put(&av->domain->ref);
	lfv_av_free(av);
	return 0;
}

static struct fi_ops lfv_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_av_close,
	.bind = lfv_av_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* ---- open ------------------------------------------------------------------ */

static bool lfv_av_domain_is_ud(const struct lfv_domain *domain)
{
	const struct fi_info *info = domain->info;

	if (info->addr_format == FI_ADDR_IB_UD)
		return true;
	return info->addr_format == FI_FORMAT_UNSPEC && info->ep_attr &&
	       info->ep_attr->type == FI_EP_DGRAM;
}

/* The av_type the domain was opened with (FI_AV_UNSPEC: either). */
static enum fi_av_type lfv_av_dom_type(const struct lfv_domain *domain)
{
	return domain->info->domain_attr ? domain->info->domain_attr->av_type :
					   FI_AV_UNSPEC;
}

static int lfv_av_check_attr(const struct lfv_domain *domain,
			     const struct fi_av_attr *attr,
			     enum fi_av_type *type)
{
	enum fi_av_type dom_type = lfv_av_dom_type(domain);

	if (!lfv_av_domain_is_ud(domain)) {
		LFV_INFO(FI_LOG_AV, "AVs exist only for FI_ADDR_IB_UD domains\n");
		return -FI_ENOSYS;
	}
	if ((attr->flags & ~(uint64_t)LFV_AV_OPEN_FLAGS) ||
	    ((attr->flags & FI_READ) && !attr->name))	/* fi_av(3) */
		return -FI_EINVAL;
	if (attr->rx_ctx_bits < 0 ||
	    attr->rx_ctx_bits > LFV_AV_RX_CTX_BITS_MAX)
		return -FI_EINVAL;
	switch (attr->type) {
	case FI_AV_UNSPEC:
		*type = dom_type == FI_AV_MAP ? FI_AV_MAP : FI_AV_TABLE;
		return 0;
	case FI_AV_MAP:
	case FI_AV_TABLE:
		if (dom_type != FI_AV_UNSPEC && dom_type != attr->type)
			return -FI_EINVAL;
		*type = attr->type;
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* log2 of segment 0's size: count rounded up, within [MIN, MAX]. */
static uint32_t lfv_av_seg0_shift(size_t count)
{
	uint32_t shift = LFV_AV_SEG0_SHIFT_MIN;

	if (!count)
		count = LFV_AV_DEFAULT_COUNT;
	while (shift < LFV_AV_SEG0_SHIFT_MAX && ((size_t)1 << shift) < count)
		shift++;
	return shift;
}

/* A named AV's segment: created with this AV's type and capacity, or
 * (FI_READ) attached, which gives the AV the creator's type and capacity. */
static int lfv_av_open_shm(struct lfv_av *av, const struct fi_av_attr *attr)
{
	struct lfv_av_shm_want want = {
		.type = av->type,
		.rx_ctx_bits = av->rx_ctx_bits,
		.addrlen = av->addrlen,
		.capacity = 1U << av->seg0_shift,
	};
	enum fi_av_type type;
	uint32_t capacity;
	int ret;

	if (!(attr->flags & FI_READ)) {
		ret = lfv_av_shm_create(attr->name, &want, &av->shm);
		if (!ret)
			av->limit = want.capacity;
		return ret;
	}
	want.type = attr->type != FI_AV_UNSPEC ? attr->type :
						 lfv_av_dom_type(av->domain);
	want.capacity = 1U << LFV_AV_SEG0_SHIFT_MAX;
	ret = lfv_av_shm_attach(attr->name, &want, &av->shm, &type, &capacity);
	if (ret)
		return ret;
	av->read_only = true;
	av->type = type;
	/* Every index is in segment 0, which exists from the start. */
	av->seg0_shift = (uint32_t)__builtin_ctz(capacity);
	av->limit = capacity;
	/* Odd, so never a seq the segment settles at: the first use
	 * brings the entries in. */
	atomic_init(&av->shm_seen, UINT64_MAX);
	return 0;
}

int lfv_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		struct fid_av **av_fid, void *context)
{
	struct lfv_domain *domain;
	enum fi_av_type type;
	struct lfv_av *av;
	int ret;

	if (!domain_fid || !attr || !av_fid)
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	ret = lfv_av_check_attr(domain, attr, &type);
	if (ret)
		return ret;

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = lfv_mutex_init(&av->lock);
	if (ret)
		goto free_av;
	av->type = type;
	av->rx_ctx_bits = attr->rx_ctx_bits;
	av->base_mask = ~(fi_addr_t)0 >> attr->rx_ctx_bits;
	av->addrlen = attr->rx_ctx_bits ? sizeof(struct lfv_sep_name) :
					  sizeof(struct lfv_ud_name);
	av->seg0_shift = lfv_av_seg0_shift(attr->count);
	av->limit = LFV_AV_MAX_ENTRIES;
	av->domain = domain;
	if (attr->name) {
		ret = lfv_av_open_shm(av, attr);
		if (ret)
			goto destroy_lock;
	}
	ret = lfv_av_seg_alloc(av, 0);
	if (ret)
		goto close_shm;
	av->nbuckets = LFV_AV_MIN_BUCKETS;
	av->buckets = lfv_av_buckets_new(av->nbuckets);
	if (!av->buckets) {
		ret = -FI_ENOMEM;
		goto free_seg;
	}
	av->flags = attr->flags;
	av->free_head = LFV_AV_NO_INDEX;
	atomic_init(&av->ref, 1);
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &lfv_av_fi_ops;
	av->av_fid.ops = &lfv_av_ops;
	lfv_ref_get(&domain->ref);
	attr->type = av->type;
	if (av->shm && !attr->map_addr)
		attr->map_addr = lfv_av_shm_map_addr(av->shm);
	*av_fid = &av->av_fid;
	return 0;

free_seg:
	free(lfv_av_seg_locked(av, 0));
close_shm:
	lfv_av_shm_close(av->shm);
destroy_lock:
	lfv_mutex_destroy(&av->lock);
free_av:
	free(av);
	return ret;
}

/* ---- for endpoints ---------------------------------------------------------- */

fi_addr_t lfv_av_reverse(struct lfv_av *av, const union ibv_gid *gid,
			 uint32_t qpn)
{
	fi_addr_t ret = FI_ADDR_NOTAVAIL;
	struct lfv_av_entry *e;
	uint32_t idx;

	if (av->read_only)
		lfv_av_shm_poll(av);
	lfv_mutex_lock(&av->lock);
	idx = av->buckets[lfv_av_hash(gid->raw, qpn) & (av->nbuckets - 1)];
	for (; idx != LFV_AV_NO_INDEX; idx = e->next) {
		e = lfv_av_entry_locked(av, idx);
		if (e->name.qpn == qpn &&
		    !memcmp(e->name.gid, gid->raw, sizeof(e->name.gid))) {
			ret = lfv_av_encode(av, idx, e->gen);
			break;
		}
	}
	/* A scalable endpoint's transmit context. */
	if (ret == FI_ADDR_NOTAVAIL && lfv_av_alias_find(av, gid, qpn, &idx))
		ret = lfv_av_encode(av, idx,
				    lfv_av_entry_locked(av, idx)->gen);
	lfv_mutex_unlock(&av->lock);
	return ret;
}

int lfv_av_name(struct lfv_av *av, fi_addr_t addr, struct lfv_ud_name *name)
{
	struct lfv_av_entry *e;
	uint32_t idx;

	if (av->read_only)
		lfv_av_shm_poll(av);
	lfv_mutex_lock(&av->lock);
	e = lfv_av_live_locked(av, addr, &idx);
	if (e)
		*name = e->name;
	lfv_mutex_unlock(&av->lock);
	return e ? 0 : -FI_EINVAL;
}

struct lfv_av *lfv_av_from_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_AV || fid->ops != &lfv_av_fi_ops)
		return NULL;
	return lfv_container_of(fid, struct lfv_av, av_fid.fid);
}

void lfv_av_hold(struct lfv_av *av)
{
	lfv_ref_get(&av->ref);
}

void lfv_av_release(struct lfv_av *av)
{
	lfv_ref_put(&av->ref);
}
