/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Wait sets (fi_poll(3): fi_wait_open, fi_wait, fi_trywait, fi_control).
 *
 * An EQ, CQ or counter opened with FI_WAIT_SET keeps an FD wait object of
 * its own (so fi_cq_sread, fi_cntr_wait and fi_eq_sread still work on it)
 * and binds that object to the set when its open succeeds: the object's
 * epoll fd joins the set's epoll fd, and the set lists the object. fi_wait
 * then does what fi_trywait does for each member, in order (run its
 * progress hook, then arm it: a member with something to read, or whose
 * hardware CQ holds completions, ends the wait), and sleeps in epoll on the
 * set's fd, which any armed member's signal makes readable. Members whose
 * progress hooks must run for anything to happen (RDM CQs, counters bound
 * to endpoints) bound the sleep to slices, as their own waits do.
 *
 * Sets are FI_WAIT_FD (also for FI_WAIT_UNSPEC) or FI_WAIT_YIELD (fi_wait
 * spins over the members); FI_WAIT_MUTEX_COND and FI_WAIT_POLLFD sets
 * return -FI_ENOSYS. A set with members refuses to close (-FI_EBUSY).
 * Implemented in src/lfv_poll.c next to poll sets, whose member list it
 * shares.
 */
#ifndef LFV_WAIT_SET_H
#define LFV_WAIT_SET_H

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "lfv_atomic.h"
#include "lfv_wait.h"

/* The set holds a reference on *parent_ref (the fabric's count of
 * children) until it closes. */
int lfv_wait_set_open(const struct fi_wait_attr *attr,
		      lfv_atomic32_t *parent_ref, struct fid_wait **waitset);

/* The wait object an EQ, CQ or counter gets for its attr's wait_obj:
 * lfv_wait_resolve, except that FI_WAIT_SET needs wait_set to be an
 * lfverbs wait set (-FI_EINVAL otherwise) and resolves to FI_WAIT_FD. */
int lfv_wait_select(enum fi_wait_obj requested, struct fid_wait *wait_set,
		    enum fi_wait_obj *resolved);

/* Last step of an open with FI_WAIT_SET: member (the object's fid, fully
 * set up) joins wait_set through its FD wait object. Nothing to do when
 * wait_obj was not FI_WAIT_SET (the caller passes NULL then). */
int lfv_wait_set_bind(struct fid_wait *wait_set, struct fid *member,
		      struct lfv_wait *wait);

/* First step of the member's close, once it knows it will close; a no-op
 * for an object in no set. */
void lfv_wait_set_unbind(struct lfv_wait *wait, struct fid *member);

/* fi_trywait on one fid: an EQ, CQ, counter or wait set. 0 when the
 * caller may block on its wait object, -FI_EAGAIN when something is
 * pending, -FI_EINVAL for what cannot be waited on. */
int lfv_trywait_fid(struct fid *fid);

#endif /* LFV_WAIT_SET_H */
