/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Event queues. Control-path only (connection events, async errors, user
 * events), so one mutex protects the queue; data completions use the CQ.
 *
 * A transport may attach an event source (an rdma_cm event channel): its
 * hook runs, outside the queue's lock, at the start of every read, readerr,
 * sread and trywait (FI_PROGRESS_MANUAL control progress), its fd joins an
 * FD wait object, and a condition-variable sread polls it every
 * LFV_EQ_SOURCE_POLL_MS. The source's fini runs when the EQ closes.
 */
#ifndef LFV_EQ_H
#define LFV_EQ_H

#include <stdint.h>
#include <rdma/fi_eq.h>

#include "lfv_atomic.h"
#include "lfv_list.h"
#include "lfv_lock.h"
#include "lfv_progress.h"
#include "lfv_wait.h"

#define LFV_EQ_DEFAULT_SIZE 1024
#define LFV_EQ_SOURCE_POLL_MS 10

struct lfv_eq_source {
	struct lfv_progress_hook progress;
	void (*fini)(void *arg);	/* arg: progress.arg */
	int fd;
};

struct lfv_eq {
	struct fid_eq eq_fid;
	lfv_atomic32_t ref;		/* 1 + objects bound to this EQ */
	lfv_atomic32_t *parent_ref;	/* the fabric's count of children */
	uint32_t api_version;		/* decides err_data semantics */
	size_t size;
	uint64_t flags;
	struct lfv_mutex lock;		/* protects events and err_data_held */
	struct lfv_list events;
	void *err_data_held;		/* provider-owned err_data, pre-1.5 style */
	struct lfv_wait wait;
	struct lfv_eq_source source;	/* progress.fn NULL: none */
};

/* Opens an EQ whose parent keeps a reference count at *parent_ref. */
int lfv_eq_open(const struct fi_eq_attr *attr, void *context,
		uint32_t api_version, lfv_atomic32_t *parent_ref,
		struct fid_eq **eq_fid);

/* Queues an event or an error; called by the provider's control path. */
int lfv_eq_push(struct lfv_eq *eq, uint32_t event, const void *buf,
		size_t len);
int lfv_eq_push_err(struct lfv_eq *eq, const struct fi_eq_err_entry *err);

/* Attaches the event source (once; -FI_EBUSY after that). */
int lfv_eq_attach_source(struct lfv_eq *eq, const struct lfv_eq_source *src);

/* The attached source's hook argument, or NULL. */
static inline void *lfv_eq_source_arg(const struct lfv_eq *eq)
{
	return eq->source.progress.fn ? eq->source.progress.arg : NULL;
}

/* fi_trywait for one EQ: -FI_EAGAIN when events are pending. */
int lfv_eq_trywait(struct lfv_eq *eq);

/* The lfverbs EQ behind a fid passed to a bind call, or NULL when the fid
 * is not an lfverbs EQ. */
struct lfv_eq *lfv_eq_from_bind_fid(struct fid *fid);

static inline struct lfv_eq *lfv_eq_from_fid(struct fid_eq *eq_fid)
{
	return lfv_container_of(eq_fid, struct lfv_eq, eq_fid);
}

#endif /* LFV_EQ_H */
