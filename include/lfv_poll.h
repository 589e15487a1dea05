/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Poll sets (fi_poll(3)): CQs and counters of one domain checked in one
 * call. fi_poll drives the domain's progress (the opener's hook) and each
 * member's, then returns the contexts of the CQs that hold completions or
 * errors and of the counters whose value or error count changed since
 * fi_poll last reported them.
 */
#ifndef LFV_POLL_H
#define LFV_POLL_H

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "lfv_atomic.h"
#include "lfv_progress.h"

/* attr may be NULL; its flags must be 0. The poll set holds a reference
 * on *parent_ref (the domain's count of children) until it closes. */
int lfv_poll_open(const struct fi_poll_attr *attr,
		  struct lfv_progress_hook progress, lfv_atomic32_t *parent_ref,
		  struct fid_poll **pollset);

#endif /* LFV_POLL_H */
