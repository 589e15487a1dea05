/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory regions (lfv_mr.c): fi_mr_reg, the registrations lfverbs makes
 * of application memory, and FI_RMA_EVENT keys.
 */
#ifndef LFV_MR_H
#define LFV_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfv_prov.h"

/* A registration of application memory for one transfer: cached, or
 * made for it (lfv_reg_get / lfv_reg_put, lfv_mr.c). */
struct lfv_reg {
	struct ibv_mr *mr;
	struct lfv_mr_entry *ent;	/* the cache's, when cached */
};

/* What a registration of application memory lets happen to it. */
enum lfv_reg_use {
	/* This process's transfers only (receives, read targets, RMA
	 * sources): local write, through the cache when it is on. */
	LFV_REG_LOCAL,
	/* A rendezvous source: the peer reads it. Never cached, so that
	 * the key stops working when the transfer ends. */
	LFV_REG_REMOTE_READ,
	/* A rendezvous receive by write: the peer writes it. Never cached
	 * either. */
	LFV_REG_REMOTE_WRITE,
};

void lfv_domain_cache_open(struct lfv_domain *domain);
void lfv_domain_cache_close(struct lfv_domain *domain);
int lfv_reg_get(struct lfv_domain *domain, void *addr, size_t len,
		enum lfv_reg_use use, struct lfv_reg *reg);
void lfv_reg_put(struct lfv_domain *domain, struct lfv_reg *reg);

struct lfv_cntr;

struct lfv_mr {
	struct fid_mr mr_fid;
	struct lfv_domain *domain;
	struct ibv_mr *ibv_mr;
	uint64_t access;		/* the application's (fi_mr_reg) */
	/* FI_RMA_EVENT domains: the slot in domain->ev_mrs, and counters
	 * bound with fi_mr_bind (under domain->ev_lock). */
	uint32_t ev_index;
	struct lfv_cntr *rrd_cntr, *rwr_cntr;
};

/*
 * Keys (fi_mr_key) are the verbs rkey, and in FI_RMA_EVENT domains carry
 * LFV_KEY_EVENT and the region's event index above it: an initiator that
 * sees the bit announces each access to the target (lfv_msg_rma.c,
 * lfv_rdm_rma.c); one that does not pays nothing.
 */
#define LFV_KEY_EVENT (1ULL << 63)
#define LFV_KEY_INDEX_BITS 24
#define LFV_KEY_INDEX_MAX ((1U << LFV_KEY_INDEX_BITS) - 1)

static inline bool lfv_key_is_event(uint64_t key)
{
	return (key & LFV_KEY_EVENT) &&
	       !(key & ~(LFV_KEY_EVENT | ((uint64_t)LFV_KEY_INDEX_MAX << 32) |
			 UINT32_MAX));
}

static inline uint32_t lfv_key_index(uint64_t key)
{
	return (uint32_t)(key >> 32) & LFV_KEY_INDEX_MAX;
}

int lfv_domain_events_init(struct lfv_domain *domain);
void lfv_domain_events_fini(struct lfv_domain *domain);
/* A peer announced an access of len bytes (FI_REMOTE_READ or
 * FI_REMOTE_WRITE in flags) to the region in slot index; rkey, when not
 * negative, must be that region's, and so must [addr, addr + len) when
 * addr is not UINT64_MAX. Counts the region's counter: 0; an announcement
 * that fits no region is dropped and counted in the fabric's drops
 * (FI_LFVERBS_DROP_MALFORMED): -FI_EINVAL. */
int lfv_mr_event(struct lfv_domain *domain, uint32_t index, int64_t rkey,
		 uint64_t addr, uint64_t len, uint64_t flags);

extern struct fi_ops_mr lfv_mr_ops;

/* Translates fi_mr access bits to ibv access flags; -FI_EINVAL on junk. */
int lfv_mr_access_to_ibv(uint64_t access, const struct ibv_device_attr *attr,
			 int *ibv_access);

#endif /* LFV_MR_H */
