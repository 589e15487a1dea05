/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The locks of lfverbs: the order they are taken in, what each protects,
 * who takes it, and what may be taken under it. This is the one place
 * that says so; a function that expects one of them held says "Caller
 * holds X" in its comment, and the RDM files' entry points assert it
 * with lfv_spin_assert_held (debug builds).
 *
 * The order, outermost first. A thread holding a lock takes only locks
 * further down the list; locks on the same level are never nested.
 *
 *   1. fabric->cm_auto_lock > a cm source's lock > fabric->cm_lock
 *                                           (MSG control path, lfv_cm.c, lfv_msg_cm.c)
 *   2. domain->vcq_lock
 *   3. vcq->lock                            (a verbs CQ's poll lock)
 *   4. an owner's SRX lock                  (FI_PEER: another provider's)
 *   5. RDM ep->lock | MSG/DGRAM q->lock | srq->lock (lfv_msg_srq.c) |
 *      brx->lock | lfv_peer_srx lock
 *   6. av->lock | domain->ev_lock | memmon lock > mr_cache lock
 *   7. cq->err_lock | eq->lock | ring ovf_lock |
 *      a wait object's mutex > cntr follow_lock           (leaves)
 *
 * The locks, one by one.
 *
 * fabric->cm_auto_lock (pthread mutex): the sources the control progress
 *   thread reads; its run holds it while reading them. A cm source's lock
 *   (struct lfv_cm_source): one reader of an EQ's event channel at a time,
 *   in order; events are dispatched under it.
 *
 * fabric->cm_lock (pthread mutex): rdma_cm event dispatch against MSG
 *   endpoints changing state or closing (lfv_msg_cm.c). Under it: the
 *   endpoint's EQ (eq->lock). Never taken on the data path; the EQ runs
 *   its source's progress before taking eq->lock, never under it.
 *
 * domain->vcq_lock (pthread mutex, always on): the domain's lists of
 *   verbs CQs (domain->vcqs) and of RDM endpoints (domain->rdm_eps), and
 *   so the lifetime of what they name. Taken by progress that walks them
 *   (lfv_rdm_cq_progress when the domain is locked, lfv_domain_progress
 *   and then lfv_rdm_domain_progress for counters, the progress thread's lfv_auto_run_all), by vcq
 *   creation and destruction, by RDM enable/close to link and unlink
 *   an endpoint, and by fi_av_insert after it released av->lock, to
 *   have the endpoints' SRXs name senders (lfv_rdm_av_inserted). Under it: vcq->lock and everything below.
 *
 * vcq->lock (lfv_spin, off without internal locking): polling one verbs
 *   CQ and translating its completions; the heads of the queues it serves
 *   (q->head, released for posters), q->closing, q->cancelling,
 *   vcq->unacked, and the rx_live / tx_live of the RDM endpoints it
 *   serves (whether their handlers act: lfv_rdm_set_live; ep->enabled
 *   is the calls', which the application orders against close). Taken by lfv_vcq_progress and the CQ's hardware poll.
 *   Completion handlers (lfv_rdm_completion, the MSG translations) run
 *   under it and take the locks below it: the endpoint's lock, an SRX's,
 *   the CQ's error lock.
 *
 * An owner's SRX lock (FI_PEER, another provider's): its start/discard
 *   calls into the RDM endpoint with it held (lfv_rdm_start takes
 *   ep->lock). Hence no call into an SRX (get_msg, get_tag, queue_*,
 *   free_entry) is made with ep->lock held.
 *
 * RDM ep->lock (lfv_spin, on when the domain is locked or has a progress
 *   thread): the connection tables and ep->conns with every connection's
 *   fields, the free lists (tx_free, ctl_free), posting on the QPs,
 *   ep->handshakes, ep->rndv_out, ep->reap_due and the timers, the
 *   receive side's accounting (unexp_n, unexp_bytes, held_rts, reading,
 *   aborted) and the transmit requests' rendezvous state. Taken by the
 *   calls (send, RMA, tx_size_left), by completion handlers, and by the
 *   timers (lfv_rdm_timers). Under it: av->lock (lfv_av_reverse,
 *   lfv_av_name), the mr cache lock (registrations put back), and the
 *   CQ's error lock and counters (a request failed under it reports at
 *   once; with FI_PEER that is the owner's CQ, the other provider's
 *   locks). Never under it: an SRX call, polling a CQ, domain->vcq_lock.
 *   Progress (lfv_rdm_ep_progress) reads what it has to do (the words
 *   of lfv_rdm_ep_due: handshakes, rndv_out, cts_out, reap_due,
 *   live_look, aborts_due) and its count of calls under it too: they
 *   change on other threads (a send starting a handshake, a completion
 *   on the endpoint's other CQ).
 *
 * MSG/DGRAM q->lock (lfv_spin): posting on one queue (tail, FI_MORE
 *   chains). Under it: nothing but verbs.
 *
 * srq->lock (lfv_msg_srq.c, lfv_spin): an MSG SRQ's free op slots and bound
 *   endpoints.
 *
 * lfv_peer_srx lock (src/lfv_peer_srx.c, lfv_mutex, on when locked):
 *   its match lists and entries. It calls out (start, discard, the
 *   peer's CQ) never with it held, so it nests under nothing of the
 *   peer's.
 *
 * av->lock (lfv_mutex): inserts, removes, the reverse map. Under it: the
 *   AV's EQ (eq->lock). Lookups by fi_addr_t (lfv_av_dest) take no lock.
 *
 * cq->err_lock (lfv_mutex): the CQ's error list. A leaf. Completions go
 *   to the lock-free ring (its overflow list: ovf_lock, a leaf).
 *
 * eq->lock (lfv_mutex): an EQ's events. A leaf.
 *
 * The memory monitor's lock (src/lfv_memmon.c) > a domain's mr cache lock
 *   (src/lfv_mr_cache.c): the monitor thread tells the caches of unmapped
 *   memory with its lock held. A cache calls the monitor (and registers)
 *   with its own lock released; putting a registration back takes only
 *   the cache's lock, so that may happen under ep->lock.
 *
 * A counter's follow_lock nests under its wait object's mutex
 *   (src/lfv_cntr.c).
 *
 * TSan (configure --enable-tsan) checks this order at run time: the RDM
 * functional tests run under it in CI (tests/run-all.sh), where a
 * lock-order inversion is reported like a data race and fails the step.
 */
#ifndef LFV_LOCK_ORDER_H
#define LFV_LOCK_ORDER_H

#include <errno.h>
#include <stdlib.h>

#include "lfv_lock.h"
#include "lfv_queue.h"

/* Debug builds: aborts when s is on and nobody holds it. It cannot tell
 * who holds it; a lock held by another thread passes. ENABLE_DEBUG comes
 * from config.h, which the .c file includes first (a header does not: it
 * would hide which files depend on the configuration); a file without it
 * asserts nothing. */
static inline void lfv_spin_assert_held(struct lfv_spin *s)
{
#if defined(ENABLE_DEBUG) && ENABLE_DEBUG
	if (s->on && pthread_spin_trylock(&s->lock) != EBUSY) {
		pthread_spin_unlock(&s->lock);
		abort();
	}
#else
	(void)s;
#endif
}

#endif /* LFV_LOCK_ORDER_H */
