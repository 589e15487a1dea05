/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The progress thread of FI_PROGRESS_AUTO domains (lfv_auto.c): it
 * watches the channels of the verbs CQs added to it.
 */
#ifndef LFV_AUTO_H
#define LFV_AUTO_H

#include "lfv_queue.h"

int lfv_auto_add(struct lfv_domain *domain, struct lfv_vcq *vcq);
void lfv_auto_del(struct lfv_domain *domain, struct lfv_vcq *vcq);
void lfv_auto_stop(struct lfv_domain *domain);

#endif /* LFV_AUTO_H */
