/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Address vectors for DGRAM (UD) endpoints. An address is a struct
 * lfv_ud_name (FI_ADDR_IB_UD: GID, QP number, Q_Key); inserting it creates
 * the UD address handle once, and senders find {ah, qpn, qkey} from the
 * fi_addr_t without a lock. Receivers map a completion's source GID + QP
 * number back to an fi_addr_t for FI_SOURCE.
 *
 * Layout: entries live in up to LFV_AV_MAX_SEGS segments whose sizes double
 * (segment k holds seg0 << k entries, seg0 a power of two from attr->count).
 * A segment is allocated when the first index in it is handed out and is
 * freed only by fi_close, so entries never move and a pointer returned by
 * lfv_av_dest stays dereferenceable until the AV is closed. The index of an
 * entry maps to (segment, offset) with one count-leading-zeros.
 *
 * fi_addr_t values:
 *  - FI_AV_TABLE: the index, 0, 1, 2, ... in insertion order. Removed
 *    indexes are never handed out again.
 *  - FI_AV_MAP: (generation << 32) | index. A removed slot is reused by a
 *    later insert with the next generation, so a stale fi_addr_t of a
 *    removed entry never aliases the new one (lfv_av_dest returns NULL).
 *    A valid value is never FI_ADDR_NOTAVAIL (indexes stay below 2^31).
 *
 * Scalable endpoints (rx_ctx_bits > 0): addresses are struct lfv_sep_name,
 * the top rx_ctx_bits of an fi_addr_t pick the receive context (fi_rx_addr),
 * and the rest is an fi_addr_t as above (FI_AV_MAP generations shrink to
 * 32 - rx_ctx_bits bits). Each entry then has a struct lfv_av_sep with one
 * destination per receive context and one reverse-map alias per transmit
 * context, so FI_SOURCE finds the endpoint from any of its senders.
 *
 * Each entry has an atomic tag: 0 while free or removed, else the live
 * generation (1 for every live FI_AV_TABLE entry). Insert fills the entry
 * and then release-stores the tag; lfv_av_dest acquire-loads the segment
 * pointer and the tag and compares it with the tag the fi_addr_t expects.
 * Inserts, removes, lookups by name and close are serialised by av->lock.
 */
#ifndef LFV_AV_H
#define LFV_AV_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/fi_domain.h>

#include "lfv_atomic.h"
#include "lfv_lock.h"
#include "lfv_av_shm.h"
#include "lfv_av_sep.h"
#include "lfv_prov.h"

/* What a UD send needs. */
struct lfv_av_dest {
	struct ibv_ah *ah;
	uint32_t qpn;
	uint32_t qkey;
};

/* Receive-context bits an AV takes: 2^16 contexts is plenty, and MAP
 * generations keep 16 bits. */
#define LFV_AV_RX_CTX_BITS_MAX 16

/* Segment 0 holds 1 << shift entries, shift in [MIN, MAX]. */
#define LFV_AV_SEG0_SHIFT_MIN 6
#define LFV_AV_SEG0_SHIFT_MAX 20
#define LFV_AV_DEFAULT_COUNT 256
/* Indexes stay below 2^31; 26 doubling segments cover that for any seg0. */
#define LFV_AV_MAX_ENTRIES (1U << 31)
#define LFV_AV_MAX_SEGS 26
#define LFV_AV_NO_INDEX UINT32_MAX

/* The contexts of a scalable endpoint's entry. */
struct lfv_av_sep {
	uint32_t nrx, ntx;
	struct lfv_av_dest rx[LFV_SEP_MAX_CTX];	/* ah shared with entry */
	struct lfv_av_alias alias[LFV_SEP_MAX_CTX];	/* ntx of them */
	struct lfv_sep_name name;	/* fi_av_lookup */
};

struct lfv_av_entry {
	struct lfv_av_dest dest;	/* first: lfv_av_dest returns &dest */
	struct lfv_av_sep *sep;		/* rx_ctx_bits AVs; freed on removal */
	/* 0: free or removed; else the live generation. Release-stored by
	 * insert after every other field, acquire-loaded by lfv_av_dest. */
	lfv_atomic32_t tag;
	uint32_t gen;			/* last generation used (lock) */
	uint32_t next;			/* hash chain or MAP free list (lock) */
	struct lfv_ud_name name;	/* lookup, reverse (lock) */
	/* A same-host peer reached through shm (lfv_rdm_shm.c): its
	 * address in shm's AV. Set by insert before senders use it. */
	bool via_shm;
	fi_addr_t shm_addr;
};

struct lfv_eq;

struct lfv_av {
	struct fid_av av_fid;
	enum fi_av_type type;		/* FI_AV_MAP or FI_AV_TABLE */
	uint32_t seg0_shift;
	int rx_ctx_bits;		/* 0: no scalable endpoints */
	fi_addr_t base_mask;		/* the bits that are not rx_ctx_bits */
	size_t addrlen;			/* of one inserted address */
	/* struct lfv_av_entry * as uintptr_t: published with a release
	 * store once allocated and zeroed, read with an acquire load by
	 * lfv_av_dest, never changed afterwards. */
	lfv_atomic64_t segs[LFV_AV_MAX_SEGS];

	/* Entries removed so far: a user that checked an address at one
	 * count needs no new lookup while the count stays (RDM). Written
	 * with a release add after the entry is cleared. */
	lfv_atomic64_t removals;
	lfv_atomic32_t ref;		/* 1 + endpoints holding the AV */
	/* Named AVs (lfv_av_shm.c): the segment, or NULL. A read-only
	 * opener's entries follow the segment's: shm_seen is the segment's
	 * seq they were last brought in line with (lfv_av_shm_poll). */
	struct lfv_av_shm *shm;
	bool read_only;
	lfv_atomic64_t shm_seen;
	uint64_t shm_bad;		/* slots dropped as malformed (lock) */
	uint32_t limit;			/* indexes stay below it */
	struct lfv_rdm_shm_av *rdm_shm;	/* shm as RDM's peer, or NULL */
	struct lfv_domain *domain;
	uint64_t flags;			/* FI_EVENT, FI_SYMMETRIC */
	struct lfv_mutex lock;		/* everything below, and inserts */
	struct lfv_eq *eq;		/* fi_av_bind, or NULL */
	uint32_t next_index;		/* first index never handed out */
	uint32_t free_head;		/* FI_AV_MAP: removed slots to reuse */
	uint32_t live;			/* live entries */
	uint32_t *buckets;		/* reverse map: GID+QPN -> chain head */
	uint32_t nbuckets;		/* power of two */
	struct lfv_av_sep_map sep_map;	/* transmit-context QPNs -> entry */
};

/* For lfv_av_ops.c: the table's own steps, each under av->lock. */

/* Makes a new AV's table (segment 0, the reverse map) and its fid, with
 * the AV's fi_ops: 0 or -FI_ENOMEM (nothing left allocated). */
int lfv_av_table_init(struct lfv_av *av, void *context);
/* Inserts one checked address: its fi_addr_t in *fi_addr, or an error
 * (-FI_EINVAL bad name, -FI_ENOSPC, -FI_ENOMEM, a verbs error). */
int lfv_av_insert_one(struct lfv_av *av, const void *addr, fi_addr_t *fi_addr);
/* Removes a live entry: 0, or the error of destroying its handle (the
 * entry then stays live). */
int lfv_av_remove_entry(struct lfv_av *av, struct lfv_av_entry *e,
			uint32_t idx);
/* Undoes one insert call whose events could not be queued (lfv_av.c). */
void lfv_av_rollback(struct lfv_av *av, fi_addr_t *fi_addr, size_t tried,
		     size_t count, uint32_t table_start);
/* The live entry at addr and its index, or NULL. */
struct lfv_av_entry *lfv_av_live_locked(struct lfv_av *av, fi_addr_t addr,
					uint32_t *idx);
/* The name fi_av_lookup returns (and a named AV shares) of an entry. */
const void *lfv_av_entry_name(const struct lfv_av_entry *e);

/* The fast path: the destination of addr, or NULL when addr is not a live
 * entry. Lock-free; entries never move once inserted. */
const struct lfv_av_dest *lfv_av_dest(struct lfv_av *av, fi_addr_t addr);

/* Read-only named AV: brings its entries in line with the segment when
 * the creator changed it (one load when it did not). */
void lfv_av_shm_poll(struct lfv_av *av);

/* How many entries were removed so far (see struct lfv_av). */
static inline uint64_t lfv_av_removals(struct lfv_av *av)
{
	/* A creator's removal counts once this process has applied it. */
	if (__builtin_expect(av->read_only, 0))
		lfv_av_shm_poll(av);
	/* Acquire: pairs with the release add in lfv_av_remove_entry. */
	return lfv_load_acquire64(&av->removals);
}

/* FI_SOURCE: the fi_addr_t of the entry with this GID and QP number, or
 * FI_ADDR_NOTAVAIL. With duplicates, the most recently inserted one. */
fi_addr_t lfv_av_reverse(struct lfv_av *av, const union ibv_gid *gid,
			 uint32_t qpn);

/* The name inserted at addr (its base address for rx_ctx_bits AVs): 0, or
 * -FI_EINVAL when addr is not live. Takes the AV's lock. */
int lfv_av_name(struct lfv_av *av, fi_addr_t addr, struct lfv_ud_name *name);
/* An address handle for name (NULL, *err set, on failure). */
struct ibv_ah *lfv_av_create_ah(struct lfv_av *av,
				const struct lfv_ud_name *name, int *err);

/* The AV behind an fid_av of lfverbs (for fi_ep_bind). NULL if the fid is
 * not an lfverbs AV. */
struct lfv_av *lfv_av_from_fid(struct fid *fid);

/* Endpoints bound to the AV keep it open (fi_close -> -FI_EBUSY). */
void lfv_av_hold(struct lfv_av *av);
void lfv_av_release(struct lfv_av *av);

#endif /* LFV_AV_H */
