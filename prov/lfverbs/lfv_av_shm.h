/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The shared-memory segment of a named AV (lfv_av_shm.c): the creator
 * publishes each slot's fi_addr_t and name, readers copy the slots that
 * changed. It knows nothing of struct lfv_av: the AV hands it names and
 * fi_addr_t values, and a reader's own view of an index through
 * lfv_av_shm_local_fn, so the segment sits below the AV.
 */
#ifndef LFV_AV_SHM_H
#define LFV_AV_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_domain.h>

#include "lfv_prov.h"

struct lfv_av_shm;

/* Any address big enough for one insert (and so for one slot). */
union lfv_av_addr_buf {
	struct lfv_ud_name ud;
	struct lfv_sep_name sep;
};

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

#endif /* LFV_AV_SHM_H */
