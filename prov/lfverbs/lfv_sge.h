/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Scatter-gather lists of MSG and DGRAM requests from the application's
 * iovs and descriptors (struct lfv_mr).
 */
#ifndef LFV_SGE_H
#define LFV_SGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>

#include "lfv_mr.h"

/* The most SGEs one request takes. */
#define LFV_MAX_SGE 32

static inline uint32_t lfv_lkey(void *desc)
{
	return desc ? ((struct lfv_mr *)desc)->ibv_mr->lkey : 0;
}

static inline int lfv_fill_sge_dir(struct ibv_sge *sge,
				   const struct iovec *iov, void **desc,
				   size_t count, bool inject, bool recv,
				   size_t *len)
{
	size_t i, total = 0;
	int n = 0;

	for (i = 0; i < count; i++) {
		/* An empty segment moves nothing: it needs no memory and no
		 * registration, and devices may refuse its key. Nor can a
		 * receive put anything at a NULL base (fabtests' shared_ctx
		 * posts such receives for its zero-byte messages). */
		if (!iov[i].iov_len || (recv && !iov[i].iov_base))
			continue;
		if (!iov[i].iov_base)
			return -FI_EINVAL;
		/* FI_MR_LOCAL: registered memory unless the data goes
		 * inline (copied at post time). */
		if (!inject && (!desc || !desc[i]))
			return -FI_EINVAL;
		sge[n].addr = (uintptr_t)iov[i].iov_base;
		sge[n].length = (uint32_t)iov[i].iov_len;
		sge[n].lkey = inject ? 0 : lfv_lkey(desc[i]);
		total += iov[i].iov_len;
		n++;
	}
	*len = total;
	return n;
}

/* Fills sge from an iov (registered memory unless inject), leaving out
 * empty segments: the number of SGEs, or -FI_EINVAL; total bytes in len. */
static inline int lfv_fill_sge(struct ibv_sge *sge, const struct iovec *iov,
			       void **desc, size_t count, bool inject, size_t *len)
{
	return lfv_fill_sge_dir(sge, iov, desc, count, inject, false, len);
}

/* The same for a receive, where a segment with no base address has no
 * memory for bytes to land in: it is left out like an empty one (and so
 * needs no descriptor). A zero-byte message still completes into such a
 * receive; a longer one completes in error. */
static inline int lfv_fill_recv_sge(struct ibv_sge *sge,
				    const struct iovec *iov, void **desc, size_t count, size_t *len)
{
	return lfv_fill_sge_dir(sge, iov, desc, count, false, true, len);
}

#endif /* LFV_SGE_H */
