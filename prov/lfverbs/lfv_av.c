/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The table of an address vector (lfv_av.h): entries in doubling segments,
 * the lock-free lookup senders use, the reverse map receivers use for
 * FI_SOURCE, a read-only named AV following its segment, and the AV's
 * lifetime (fi_ops). The application's calls (fi_av_open and fi_ops_av)
 * and the semantics they choose are in lfv_av_ops.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_eq.h>

#include "lfv_av.h"
#include "lfv_eq.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_rdm_shm_av.h"
#include "lfv_stubs.h"

#define LFV_AV_HOP_LIMIT 64

static struct fi_ops lfv_av_fi_ops;

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
struct lfv_av_entry *lfv_av_live_locked(struct lfv_av *av, fi_addr_t addr,
					uint32_t *idx)
{
	struct lfv_av_entry *e;
	uint32_t tag;

	if (!lfv_av_decode(av, addr, idx, &tag) || *idx >= av->next_index)
		return NULL;
	e = lfv_av_entry_locked(av, *idx);
	/* Relaxed: tags are only stored under av->lock, which we hold. */
	return lfv_load_relaxed32(&e->tag) == tag ? e : NULL;
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
		ret = lfv_av_sep_parse(addr, &(*sep)->name);
		if (ret)
			return ret;
		(*sep)->nrx = (*sep)->name.nrx;
		(*sep)->ntx = (*sep)->name.ntx;
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
const void *lfv_av_entry_name(const struct lfv_av_entry *e)
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
	/* The aliases point at the entry's GID: the name goes in first (the
	 * entry is not live, nothing else reads its name). */
	e = lfv_av_entry_locked(av, idx);
	e->name = name;
	if (sep) {
		lfv_av_sep_dests(sep, ah);
		ret = lfv_av_sep_map_add(&av->sep_map, &sep->name, e->name.gid,
					 idx, sep->alias);
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

int lfv_av_insert_one(struct lfv_av *av, const void *addr, fi_addr_t *fi_addr)
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
	lfv_rdm_shm_av_insert(av, e, *fi_addr);
	return 0;
}

int lfv_av_remove_entry(struct lfv_av *av, struct lfv_av_entry *e, uint32_t idx)
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
	lfv_rdm_shm_av_remove(av, e);
	/* Release: pairs with the acquire load in lfv_av_removals. */
	lfv_fetch_add_release64(&av->removals, 1);
	lfv_av_hash_unlink(av, e, idx);
	if (e->sep) {
		lfv_av_sep_map_del(&av->sep_map, &e->sep->name, e->sep->alias,
				   e->sep->ntx);
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
void lfv_av_rollback(struct lfv_av *av, fi_addr_t *fi_addr, size_t tried,
		     size_t count, uint32_t table_start)
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
	lfv_av_sep_map_fini(&av->sep_map);
	lfv_av_shm_close(av->shm);
	lfv_rdm_shm_av_close(av);
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

int lfv_av_table_init(struct lfv_av *av, void *context)
{
	int ret;

	ret = lfv_av_seg_alloc(av, 0);
	if (ret)
		return ret;
	av->nbuckets = LFV_AV_MIN_BUCKETS;
	av->buckets = lfv_av_buckets_new(av->nbuckets);
	if (!av->buckets) {
		free(lfv_av_seg_locked(av, 0));
		return -FI_ENOMEM;
	}
	av->free_head = LFV_AV_NO_INDEX;
	atomic_init(&av->ref, 1);
	lfv_fid_init(&av->av_fid.fid, FI_CLASS_AV, context, &lfv_av_fi_ops);
	return 0;
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
	if (ret == FI_ADDR_NOTAVAIL && lfv_av_sep_map_find(&av->sep_map, gid, qpn,
						    &idx))
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