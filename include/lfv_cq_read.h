/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ's read path (src/lfv_cq_read.c): fi_cq_read in the modes of the
 * table in lfv_cq.h, the read window and the spare, and the transport
 * wiring that picks the mode. Included by lfv_cq.h.
 */
#ifndef LFV_CQ_READ_H
#define LFV_CQ_READ_H

#include <stdbool.h>
#include <rdma/fi_eq.h>

#include "lfv_progress.h"

struct lfv_cq;
struct lfv_cq_comp;
struct lfv_cq_hw;

/* A completion handler's write: into the reading thread's buffer when
 * the CQ's own read runs this handler (the read window), else
 * lfv_cq_write. */
int lfv_cq_write_to_reader(struct lfv_cq *cq, const struct lfv_cq_comp *comp);

/* Transport wiring; each picks the read mode again. */
void lfv_cq_set_progress(struct lfv_cq *cq, struct lfv_progress_hook hook);
/* A progress hook that polls the CQ's hardware itself, its transport
 * writing the completions (RDM): fi_cq_read runs it with the caller's
 * buffer as the place they go, and never polls the hardware source. */
void lfv_cq_set_progress_polling(struct lfv_cq *cq,
				 struct lfv_progress_hook hook);
int lfv_cq_attach_hw(struct lfv_cq *cq, const struct lfv_cq_hw *hw);
void lfv_cq_detach_hw(struct lfv_cq *cq);
bool lfv_cq_ring_empty(const struct lfv_cq *cq);

/* For the CQ's own files: fi_cq_read and fi_cq_readfrom (lfv_cq_ops); the
 * full read in any mode (progress, errors, ring, hardware source), which
 * fi_cq_sread reads with; the mode pick, also at open. */
ssize_t lfv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count);
ssize_t lfv_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			fi_addr_t *src_addr);
ssize_t lfv_cq_read_common(struct lfv_cq *cq, void *buf, size_t count,
			   fi_addr_t *src);
void lfv_cq_update_mode(struct lfv_cq *cq);

#endif /* LFV_CQ_READ_H */
