/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scalable endpoints' names in an AV (rx_ctx_bits > 0, lfv_av_sep.c): the
 * check of an inserted struct lfv_sep_name, and the reverse map from a
 * transmit context's QP number to its entry, so FI_SOURCE finds a scalable
 * endpoint from any of its senders. The map knows entries only by index and
 * GID, which keeps it below the AV's table; like the table it is used
 * under the AV's lock.
 */
#ifndef LFV_AV_SEP_H
#define LFV_AV_SEP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "lfv_prov.h"

/* QP numbers are 24 bits on the wire. */
#define LFV_AV_QPN_MAX 0xffffffU
/* Both reverse maps (the table's and this one) start with this many
 * buckets and double up to the maximum. */
#define LFV_AV_MIN_BUCKETS 64U
#define LFV_AV_MAX_BUCKETS (1U << 30)

/* Both reverse maps hash a GID and a QP number with this. */
static inline uint32_t lfv_av_hash(const uint8_t gid[16], uint32_t qpn)
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

/* Reverse map (FI_SOURCE) of a transmit context's QP number. */
struct lfv_av_alias {
	struct lfv_av_alias *next;	/* chain in the map */
	/* The entry's GID: entries never move while the AV is open. */
	const uint8_t *gid;
	uint32_t qpn;
	uint32_t idx;			/* the entry */
};

struct lfv_av_sep_map {
	struct lfv_av_alias **buckets;	/* NULL until the first alias */
	uint32_t count, nbuckets;	/* aliases; power of two */
};

/* Checks a scalable endpoint's address as inserted and copies it to *name.
 * One without LFV_SEP_MAGIC is an ordinary endpoint's name: one context,
 * its own QP. 0 or -FI_EINVAL. */
int lfv_av_sep_parse(const void *addr, struct lfv_sep_name *name);

/* Maps every transmit context of name (entry idx, GID gid) that its base
 * QP number does not already map, in alias[0..ntx). -FI_ENOMEM (nothing
 * mapped) only when no bucket array exists at all. */
int lfv_av_sep_map_add(struct lfv_av_sep_map *map,
		       const struct lfv_sep_name *name, const uint8_t *gid,
		       uint32_t idx, struct lfv_av_alias *alias);
/* Unmaps what lfv_av_sep_map_add mapped of alias[0..linked). */
void lfv_av_sep_map_del(struct lfv_av_sep_map *map,
			const struct lfv_sep_name *name,
			struct lfv_av_alias *alias, uint32_t linked);
/* The entry whose transmit context is (gid, qpn). */
bool lfv_av_sep_map_find(const struct lfv_av_sep_map *map,
			 const union ibv_gid *gid, uint32_t qpn,
			 uint32_t *idx);
void lfv_av_sep_map_fini(struct lfv_av_sep_map *map);

#endif /* LFV_AV_SEP_H */
