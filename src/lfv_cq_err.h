/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The CQ's error queue (src/lfv_cq_err.c): what lfv_cq_write_err queues
 * until fi_cq_readerr takes it. */
#ifndef LFV_CQ_ERR_H
#define LFV_CQ_ERR_H

#include "lfv_cq.h"

/* The queue empty, its lock made; fini frees what is still queued. */
int lfv_cq_err_init(struct lfv_cq *cq);
void lfv_cq_err_fini(struct lfv_cq *cq);
/* Copies err and its err_data into the queue; the caller wakes waiters. */
int lfv_cq_err_queue(struct lfv_cq *cq, const struct fi_cq_err_entry *err);

/* fi_cq_readerr, fi_cq_strerror (for both lfv_cq_ops and the peer's). */
ssize_t lfv_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
		       uint64_t flags);
const char *lfv_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
			    const void *err_data, char *buf, size_t len);

#endif /* LFV_CQ_ERR_H */
