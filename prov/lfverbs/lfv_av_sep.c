/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scalable endpoints' names in an AV: their check, and the reverse map of
 * their transmit contexts (lfv_av_sep.h).
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_av_sep.h"

int lfv_av_sep_parse(const void *addr, struct lfv_sep_name *n)
{
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
	return 0;
}

static struct lfv_av_alias **lfv_av_sep_bucket(struct lfv_av_alias **buckets,
					       uint32_t nbuckets,
					       const uint8_t *gid, uint32_t qpn)
{
	return &buckets[lfv_av_hash(gid, qpn) & (nbuckets - 1)];
}

/* Doubles the buckets when the load passes 1 (or makes the first ones);
 * keeps the old ones (longer chains, still correct) if memory is short. */
static void lfv_av_sep_map_grow(struct lfv_av_sep_map *map)
{
	uint32_t n = map->nbuckets ? map->nbuckets * 2 : LFV_AV_MIN_BUCKETS;
	struct lfv_av_alias **buckets, **head, *a, *next;
	uint32_t b;

	if ((map->buckets && map->count < map->nbuckets) ||
	    n > LFV_AV_MAX_BUCKETS)
		return;
	buckets = calloc(n, sizeof(*buckets));
	if (!buckets)
		return;
	for (b = 0; b < map->nbuckets; b++) {
		for (a = map->buckets[b]; a; a = next) {
			next = a->next;
			head = lfv_av_sep_bucket(buckets, n, a->gid, a->qpn);
			a->next = *head;
			*head = a;
		}
	}
	free(map->buckets);
	map->buckets = buckets;
	map->nbuckets = n;
}

void lfv_av_sep_map_del(struct lfv_av_sep_map *map,
			const struct lfv_sep_name *name,
			struct lfv_av_alias *alias, uint32_t linked)
{
	struct lfv_av_alias **link, *a;
	uint32_t i;

	for (i = 0; i < linked; i++) {
		a = &alias[i];
		if (a->qpn == name->base.qpn)
			continue;	/* the table's own map has it */
		link = lfv_av_sep_bucket(map->buckets, map->nbuckets, a->gid,
					 a->qpn);
		while (*link != a)
			link = &(*link)->next;
		*link = a->next;
		map->count--;
	}
}

int lfv_av_sep_map_add(struct lfv_av_sep_map *map,
		       const struct lfv_sep_name *name, const uint8_t *gid,
		       uint32_t idx, struct lfv_av_alias *alias)
{
	struct lfv_av_alias **head;
	uint32_t i;

	for (i = 0; i < name->ntx; i++) {
		alias[i].idx = idx;
		alias[i].gid = gid;
		alias[i].qpn = name->tx_qpn[i];
		if (alias[i].qpn == name->base.qpn)
			continue;	/* the table's own map has it */
		lfv_av_sep_map_grow(map);
		if (!map->buckets) {
			lfv_av_sep_map_del(map, name, alias, i);
			return -FI_ENOMEM;
		}
		head = lfv_av_sep_bucket(map->buckets, map->nbuckets, gid,
					 alias[i].qpn);
		alias[i].next = *head;
		*head = &alias[i];
		map->count++;
	}
	return 0;
}

bool lfv_av_sep_map_find(const struct lfv_av_sep_map *map,
			 const union ibv_gid *gid, uint32_t qpn, uint32_t *idx)
{
	struct lfv_av_alias *a;

	if (!map->count)
		return false;
	a = *lfv_av_sep_bucket(map->buckets, map->nbuckets, gid->raw, qpn);
	for (; a; a = a->next) {
		if (a->qpn == qpn &&
		    !memcmp(a->gid, gid->raw, sizeof(gid->raw))) {
			*idx = a->idx;
			return true;
		}
	}
	return false;
}

void lfv_av_sep_map_fini(struct lfv_av_sep_map *map)
{
	free(map->buckets);
	map->buckets = NULL;
	map->count = map->nbuckets = 0;
}
