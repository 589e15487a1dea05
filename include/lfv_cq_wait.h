/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Waiting on a CQ (src/lfv_cq_wait.c): fi_cq_sread/sreadfrom and
 * fi_cq_signal, and the CQ's part in fi_trywait and fi_poll. Included by
 * lfv_cq.h.
 */
#ifndef LFV_CQ_WAIT_H
#define LFV_CQ_WAIT_H

#include <stdbool.h>
#include <rdma/fi_eq.h>

struct lfv_cq;

/* fi_trywait for one CQ: 0 when armed and empty, -FI_EAGAIN otherwise. */
int lfv_cq_trywait(struct lfv_cq *cq);
/* fi_poll for one CQ: runs its progress hook, then true if a read would
 * find a completion or an error. Completions still in a hardware CQ are
 * not seen: the poll set runs the domain's progress first, which moves
 * them into the ring. Not concurrent with reads of a CQ whose reads are
 * serialised (the spare is the reader's). */
bool lfv_cq_has_events(struct lfv_cq *cq);

/* For lfv_cq_ops. */
ssize_t lfv_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
		     const void *cond, int timeout);
ssize_t lfv_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			 fi_addr_t *src_addr, const void *cond, int timeout);
int lfv_cq_signal(struct fid_cq *cq_fid);

#endif /* LFV_CQ_WAIT_H */
