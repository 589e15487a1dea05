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

/* Reverse map (FI_SOURCE) of a transmit context's QP number. */
struct lfv_av_alias {
	struct lfv_av_alias *next;	/* chain in av->aliases (lock) */
	uint32_t qpn;
	uint32_t idx;			/* the entry; its name has the GID */
};

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
};

struct lfv_eq;
struct lfv_av_shm;

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
	struct lfv_domain *domain;
	uint64_t flags;			/* FI_EVENT, FI_SYMMETRIC */
	struct lfv_mutex lock;		/* everything below, and inserts */
	struct lfv_eq *eq;		/* fi_av_bind, or NULL */
	uint32_t next_index;		/* first index never handed out */
	uint32_t free_head;		/* FI_AV_MAP: removed slots to reuse */
	uint32_t live;			/* live entries */
	uint32_t *buckets;		/* reverse map: GID+QPN -> chain head */
	uint32_t nbuckets;		/* power of two */
	struct lfv_av_alias **aliases;	/* transmit-context QPNs -> entry */
	uint32_t naliases, nalias_buckets;	/* count; power of two */
};

/* lfv_av_svc.c: service names (lfv_svc.h) in inserts. */

/* One inserted address that was a service name, and what it resolved to. */
struct lfv_av_resolved {
	bool service;
	int err;			/* of the resolution */
	struct lfv_ud_name qp;		/* the QP name, when err is 0 */
};

/* Any address big enough for one insert. */
union lfv_av_addr_buf {
	struct lfv_ud_name ud;
	struct lfv_sep_name sep;
};

/* Resolves the service names among count addresses, before the AV's lock is
 * taken (each may wait for the network): *res is NULL when there are none,
 * else an array to free. 0 or -FI_ENOMEM. */
int lfv_av_resolve(struct lfv_av *av, const void *addr, size_t count,
		   struct lfv_av_resolved **res);
/* Address i of an insert as lfv_av_insert_one takes it: the caller's, or
 * for a service name a copy in buf with its QP name (NULL, *err set, when
 * the resolution failed). */
const void *lfv_av_resolved_addr(const struct lfv_av *av, const void *addr,
				 size_t i, const struct lfv_av_resolved *res,
				 union lfv_av_addr_buf *buf, int *err);
int lfv_av_insertsvc(struct fid_av *av, const char *node, const char *service,
		     fi_addr_t *fi_addr, uint64_t flags, void *context);
int lfv_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
		     const char *service, size_t svccnt, fi_addr_t *fi_addr,
		     uint64_t flags, void *context);

int lfv_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);

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

/* lfv_av_shm.c: the shared-memory segment of a named AV. */

/* "/lfverbs-av-" and the name, bytes outside [A-Za-z0-9._-] as %XX. */
#define LFV_AV_SHM_PATH_MAX 256

/* What an AV needs of its segment. Creating: the segment's type and
 * capacity (slots); attaching: the type asked for (FI_AV_UNSPEC: any) and
 * the largest capacity accepted. */
struct lfv_av_shm_want {
	enum fi_av_type type;
	int rx_ctx_bits;
	size_t addrlen;
	uint32_t capacity;
};

/* A slot a reader found different from its own entry. */
struct lfv_av_shm_slot {
	uint32_t idx;
	fi_addr_t addr;			/* FI_ADDR_NOTAVAIL: now free */
	union lfv_av_addr_buf name;
};

/* A reader's own fi_addr_t of an index (FI_ADDR_NOTAVAIL when free). */
typedef fi_addr_t (*lfv_av_shm_local_fn)(void *arg, uint32_t idx);

/* The segment's name for an AV name: 0 or -FI_EINVAL (empty, too long). */
int lfv_av_shm_path(const char *name, char *path, size_t len);
/* Creates the segment, every slot free. -FI_ENOSYS when the name is held
 * by a live creator (one writer per name). */
int lfv_av_shm_create(const char *name, const struct lfv_av_shm_want *want,
		      struct lfv_av_shm **shm);
/* Maps an existing segment read-only after checking its header:
 * -FI_ENOENT when there is none, -FI_EINVAL when it does not fit want. */
int lfv_av_shm_attach(const char *name, const struct lfv_av_shm_want *want,
		      struct lfv_av_shm **shm, enum fi_av_type *type,
		      uint32_t *capacity);
/* Creator, under the AV's lock: slot idx now holds addr and name (len
 * bytes), or is free (addr FI_ADDR_NOTAVAIL, name NULL). */
void lfv_av_shm_publish(struct lfv_av_shm *shm, uint32_t idx, fi_addr_t addr,
			const void *name, size_t len);
uint64_t lfv_av_shm_seq(const struct lfv_av_shm *shm);
/* Reader: a consistent copy of the slots whose fi_addr_t differs from
 * local's (*slots to free), and the seq it was taken at. -FI_EAGAIN when
 * the creator kept writing. */
int lfv_av_shm_changes(const struct lfv_av_shm *shm, lfv_av_shm_local_fn local,
		       void *arg, struct lfv_av_shm_slot **slots,
		       size_t *count, uint64_t *seq);
/* The slots' fi_addr_t array (attr->map_addr). */
void *lfv_av_shm_map_addr(const struct lfv_av_shm *shm);
/* Unmaps; the creator also removes the name. NULL: nothing. */
void lfv_av_shm_close(struct lfv_av_shm *shm);

#endif /* LFV_AV_H */
