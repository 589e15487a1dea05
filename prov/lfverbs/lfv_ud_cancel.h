/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_cancel of a receive on a DGRAM endpoint (lfv_ud_cancel.c).
 */
#ifndef LFV_UD_CANCEL_H
#define LFV_UD_CANCEL_H

#include <sys/types.h>

struct lfv_ep;

ssize_t lfv_ud_cancel(struct lfv_ep *ep, void *context);

#endif /* LFV_UD_CANCEL_H */
