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
/* A source without an fd comes (on) or goes: while there are any, the
 * thread runs the domain's progress every LFV_AUTO_TICK_MS too. */
void lfv_auto_ticked(struct lfv_domain *domain, bool on);

/* Often enough for shm's latency to matter little beside a blocked
 * reader's own wake-up; seldom enough to cost little CPU while idle. */
#define LFV_AUTO_TICK_MS 1

#endif /* LFV_AUTO_H */
