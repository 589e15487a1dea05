/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The CQ's read path (src/lfv_cq_read.c): the read modes of the table in
 * lfv_cq.h, the read window and the spare. */
#ifndef LFV_CQ_READ_H
#define LFV_CQ_READ_H

#include "lfv_cq.h"

/* fi_cq_read and fi_cq_readfrom (lfv_cq_ops). */
ssize_t lfv_cq_read(struct fid_cq *cq_fid, void *buf, size_t count);
ssize_t lfv_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			fi_addr_t *src_addr);
/* The full read in any mode (progress, errors, ring, hardware source):
 * what fi_cq_sread reads with. */
ssize_t lfv_cq_read_common(struct lfv_cq *cq, void *buf, size_t count,
			   fi_addr_t *src);
/* Picks the read mode; again whenever a progress hook is set or a hardware
 * source attached or detached. */
void lfv_cq_update_mode(struct lfv_cq *cq);

#endif /* LFV_CQ_READ_H */
