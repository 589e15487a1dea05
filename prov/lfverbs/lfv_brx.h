/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Buffered receives of MSG and DGRAM endpoints (lfv_brx.c).
 */
#ifndef LFV_BRX_H
#define LFV_BRX_H

#include <stdbool.h>
#include <sys/uio.h>

#include "lfv_queue.h"

struct lfv_ep;

/* FI_MULTI_RECV and fi_cancel. */
struct lfv_brx;
bool lfv_brx_wanted(const struct fi_info *info);
int lfv_brx_init(struct lfv_ep *ep);
int lfv_brx_enable(struct lfv_ep *ep);
void lfv_brx_free(struct lfv_ep *ep);
size_t lfv_brx_arrived(struct lfv_ep *ep, const struct lfv_op *op,
		       const struct ibv_wc *wc, struct lfv_cq_comp comp[2]);
ssize_t lfv_brx_post(struct lfv_ep *ep, const struct iovec *iov, size_t count,
		     void *context, uint64_t flags);
ssize_t lfv_brx_cancel(struct lfv_ep *ep, void *context);
void lfv_brx_flush(struct lfv_ep *ep);
ssize_t lfv_brx_size_left(struct lfv_ep *ep);

#endif /* LFV_BRX_H */
