/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Completion queues on the lock-free ring (lfv_ring.h).
 *
 * Successful completions are written once, already in the CQ's format, into
 * ring slots that hold only what the format needs (plus the source address
 * when the domain asked for FI_SOURCE); fi_cq_read copies them out once, and
 * straight into the caller's buffer when no source address is stored. Any
 * thread may write (lfv_cq_write*): the transport's progress engine, peer
 * providers through the exported fid_peer_cq, error reporting. Errors go to
 * a separate queue (slow path, one mutex) and make fi_cq_read return
 * -FI_EAVAIL until fi_cq_readerr takes them.
 *
 * Hardware completions: a transport attaches a struct lfv_cq_hw. When the
 * ring is empty, fi_cq_read lets it translate completions straight into the
 * caller's buffer; otherwise its progress hook moves them into the ring in
 * batches (lfv_cq_write_batch). Its completion-channel fd joins the FD wait
 * object, and arm/ack map to ibv_req_notify_cq / ibv_get_cq_event.
 *
 * Waking: a waiter (sread, or an application blocking on the FD after
 * fi_trywait) sets `armed` and then re-checks the queue; a producer publishes
 * its entry and then reads `armed`. Both sides put a synchronizing step between
 * their store and their load (lfv_handshake: an RMW on one word), so at
 * least one of them sees the other: either
 * the waiter finds the entry, or the producer finds the flag and signals.
 * Producers therefore make no syscall while nobody waits.
 *
 * Peer CQs (fi_peer(3), 1.17): every CQ exports a fid_peer_cq through
 * fi_export_fid; its owner_ops write into this CQ. A CQ opened with FI_PEER
 * (attr->flags) on an lfverbs domain is a peer: lfv_cq_write* forward to the
 * owner, fi_cq_read(cq, NULL, 0) drives progress, other reads -FI_ENOSYS.
 */
#ifndef LFV_CQ_H
#define LFV_CQ_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include "lfv_fi_compat.h"

#include "lfv_atomic.h"
#include "lfv_list.h"
#include "lfv_lock.h"
#include "lfv_progress.h"
#include "lfv_ring.h"
#include "lfv_wait.h"

#define LFV_CQ_DEFAULT_SIZE 1024
/* Completions one read's progress may keep past the caller's buffer
 * (struct lfv_cq's spare): a hardware poll batch, two entries per work
 * completion at most. */
#define LFV_CQ_SPARE 32

/* A hardware completion source (one verbs CQ), provided by the transport. */
struct lfv_cq_hw {
	/*
	 * Translates up to count completions into buf (the CQ's format) and
	 * src (when non-NULL), returning how many (>= 0). Error completions
	 * go to lfv_cq_write_err instead. Called only while the ring looked
	 * empty; the source must re-check lfv_cq_ring_empty() under the lock
	 * that serialises it with its own progress, so older completions it
	 * already moved into the ring are never overtaken.
	 */
	ssize_t (*poll)(void *arg, void *buf, fi_addr_t *src, size_t count);
	/* Requests an event for the next completion; -FI_EAGAIN when
	 * completions are already pending (ibv_req_notify_cq + re-poll). */
	int (*arm)(void *arg);
	/* Consumes the event that made fd readable (ibv_get_cq_event, acks). */
	void (*ack)(void *arg);
	/* Releases the source when the CQ closes (may be NULL). */
	void (*fini)(void *arg);
	int fd;			/* completion channel fd, or -1 */
	void *arg;
};

/* What the opener (the domain) tells the CQ about its surroundings. */
struct lfv_cq_params {
	uint32_t api_version;		/* err_data rules */
	lfv_atomic32_t *parent_ref;	/* the domain's child count */
	bool store_src;			/* FI_SOURCE: keep source addresses */
	/* The application serialises fi_cq_read calls (FI_THREAD_DOMAIN,
	 * FI_THREAD_COMPLETION): lets the CQ keep a spare (see struct
	 * lfv_cq). */
	bool serial_reads;
	/* Text for provider error codes (prov_errno); NULL: fi_strerror. */
	const char *(*prov_strerror)(int prov_errno);
};

/*
 * How fi_cq_read (and fi_cq_readfrom) read a CQ: one mode per CQ, chosen
 * by lfv_cq_update_mode (src/lfv_cq_read.c) whenever a progress hook is set or
 * a hardware source attached or detached. Peer CQs (FI_PEER) have their
 * own ops and hold no entries: their writes go to the owner.
 *
 * | mode   | when                             | a read takes                  |
 * |--------|----------------------------------|-------------------------------|
 * | PLAIN  | no hook, no hardware source, no  | the ring                      |
 * |        | FI_SOURCE                        |                               |
 * | DIRECT | a hardware source, no hook, no   | the ring; when empty, hw.poll |
 * |        | FI_SOURCE                        | translates into the buffer    |
 * | COMMON | any other hook, or FI_SOURCE     | lfv_cq_read_common: the hook  |
 * |        |                                  | (window open when the ring is |
 * |        |                                  | empty), the ring, hw.poll     |
 * | HOOKED | a hook that polls the hardware   | errors; the ring; when empty  |
 * |        | (lfv_cq_set_progress_polling)    | the hook, window open         |
 * | SPARE  | HOOKED, reads serialised         | the spare first, then as      |
 * |        | (serial_reads), FI_WAIT_NONE     | HOOKED                        |
 *
 * Where an entry lands:
 * - lfv_cq_write, lfv_cq_write_batch, lfv_cq_write_err (any thread):
 *   the ring (errors: their queue), or the owner of a peer CQ. Never the
 *   reader's buffer.
 * - lfv_cq_write_to_reader (a transport's completion handler, which the
 *   CQ's own progress hook may be running): on the thread inside a read
 *   whose window is open (lfv_cq_progress_into) with the ring empty, the
 *   reader's buffer (the window); once that is full, the spare in mode
 *   SPARE; else as lfv_cq_write. Called anywhere else, it is
 *   lfv_cq_write.
 * - hw.poll (DIRECT, COMMON): the reader's buffer, passed explicitly.
 * Entries in the window or the spare are older than anything in the ring:
 * both take entries only while the ring is empty, and reads take the
 * spare first (SPARE) or return the window at once.
 */
enum lfv_cq_read_mode {
	LFV_CQ_READ_PLAIN,
	LFV_CQ_READ_DIRECT,
	LFV_CQ_READ_COMMON,
	LFV_CQ_READ_HOOKED,		/* and those after it: the hook's reads */
	LFV_CQ_READ_SPARE,
};

/* One completion as a producer describes it. */
struct lfv_cq_comp {
	void *context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
};

struct lfv_cq {
	struct fid_cq cq_fid;
	struct lfv_ring ring;		/* successful completions */
	enum lfv_cq_read_mode read_mode; /* the table above */
	bool hook_polls_hw;		/* the progress hook polls the hardware
					 * and its handlers write completions */
	bool serial_reads;		/* lfv_cq_params.serial_reads */
	enum fi_cq_format format;
	uint32_t fmt_size;		/* bytes of one entry for the caller */
	bool store_src;			/* slots end with a fi_addr_t */
	lfv_atomic32_t armed;		/* a waiter wants a signal */
	lfv_atomic32_t handshake;	/* see lfv_handshake() */
	lfv_atomic32_t signaled;	/* fi_cq_signal not yet seen by sread */
	lfv_atomic64_t err_count;	/* entries in errors */
	bool cond_threshold;		/* sread's cond is an entry count */
	struct lfv_wait wait;
	struct lfv_progress_hook progress;
	struct lfv_cq_hw hw;		/* hw.poll NULL: none attached */
	struct fid_peer_cq *owner;	/* peer role: where writes go */
	struct fid_peer_cq peer_cq;	/* owner role: exported */

	lfv_atomic32_t ref;		/* 1 + objects bound to this CQ */
	lfv_atomic32_t *parent_ref;
	uint32_t api_version;
	int signaling_vector;		/* FI_AFFINITY, else -1 */
	const char *(*prov_strerror)(int prov_errno);
	struct lfv_mutex err_lock;	/* errors, err_data_held */
	struct lfv_list errors;
	void *err_data_held;

	/*
	 * The spare: what a read's progress found after the caller's buffer
	 * was full, kept in order for the next read instead of going through
	 * the ring (a reader that takes one entry at a time gets its second
	 * one without a ring write and read). Only the thread inside a read
	 * touches it, so only when reads are serialised, no one sleeps on
	 * the CQ (no waiter to wake) and the hook writes through the read
	 * window (LFV_CQ_READ_SPARE). Entries spare[spare_pos..spare_len) are older
	 * than anything in the ring: the spare fills only while the ring is
	 * empty, and reads take it first.
	 */
	uint32_t spare_pos, spare_len;
	struct lfv_cq_comp spare[LFV_CQ_SPARE];
};

static inline struct lfv_cq *lfv_cq_from_fid(struct fid_cq *cq_fid)
{
	return lfv_container_of(cq_fid, struct lfv_cq, cq_fid);
}

/* Writers: any thread. 0, or -FI_ENOMEM if overflow could not allocate.
 * Where their entries land: the table above. lfv_cq_write_to_reader is
 * in lfv_cq_read.h, lfv_cq_write_err in lfv_cq_err.h. */
int lfv_cq_write(struct lfv_cq *cq, const struct lfv_cq_comp *comp);
/* n entries already in the slot layout (lfv_cq_slot_size bytes each). */
ssize_t lfv_cq_write_batch(struct lfv_cq *cq, const void *slots, size_t n);
size_t lfv_cq_slot_size(const struct lfv_cq *cq);
/* Formats one completion into slot layout (for lfv_cq_write_batch). */
void lfv_cq_format_slot(const struct lfv_cq *cq, void *slot,
			const struct lfv_cq_comp *comp);

/* Formats one completion as the caller of fi_cq_read sees it (fmt_size
 * bytes, no source address): for lfv_cq_hw.poll. */
static inline void lfv_cq_format_entry(const struct lfv_cq *cq, void *dst,
				       const struct lfv_cq_comp *c)
{
	struct fi_cq_tagged_entry *e = dst;

	/* The formats are prefixes of fi_cq_tagged_entry: fill what fits. */
	e->op_context = c->context;
	if (cq->format == FI_CQ_FORMAT_CONTEXT)
		return;
	e->flags = c->flags;
	e->len = c->len;
	if (cq->format == FI_CQ_FORMAT_MSG)
		return;
	e->buf = c->buf;
	e->data = c->data;
	if (cq->format == FI_CQ_FORMAT_TAGGED)
		e->tag = c->tag;
}

/* The handshake of waking (above), for the CQ's own files: the producer
 * side (after publishing an entry or an error), the waiter side (0: the
 * caller may sleep) and the condition a waiter waits for. */
void lfv_cq_wake(struct lfv_cq *cq);
int lfv_cq_arm(struct lfv_cq *cq, size_t threshold, bool count_signal);
bool lfv_cq_cond_met(const struct lfv_cq *cq, size_t threshold,
		     bool count_signal);

/* The other parts of the CQ, each declaring what its file defines. */
#include "lfv_cq_err.h"
#include "lfv_cq_open.h"
#include "lfv_cq_read.h"
#include "lfv_cq_wait.h"

#endif /* LFV_CQ_H */
