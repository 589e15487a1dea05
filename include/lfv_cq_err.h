/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ's error queue (src/lfv_cq_err.c): what lfv_cq_write_err queues
 * until fi_cq_readerr takes it (slow path, one mutex). Included by
 * lfv_cq.h.
 */
#ifndef LFV_CQ_ERR_H
#define LFV_CQ_ERR_H

#include <rdma/fi_eq.h>

struct lfv_cq;

/* Any thread: queues a copy of err and its err_data (or writes it to the
 * owner of a peer CQ). 0, or -FI_ENOMEM. */
int lfv_cq_write_err(struct lfv_cq *cq, const struct fi_cq_err_entry *err);

/* For the CQ's own files: the queue empty and its lock made; fini frees
 * what is still queued. fi_cq_readerr and fi_cq_strerror (for both
 * lfv_cq_ops and the peer's). */
int lfv_cq_err_init(struct lfv_cq *cq);
void lfv_cq_err_fini(struct lfv_cq *cq);
ssize_t lfv_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
		       uint64_t flags);
const char *lfv_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
			    const void *err_data, char *buf, size_t len);

#endif /* LFV_CQ_ERR_H */
