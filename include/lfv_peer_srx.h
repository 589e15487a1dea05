/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A shared receive context that owns matching for peer providers: the
 * owner side of the fi_peer(3) peer SRX (libfabric 1.17 layout), built on
 * the matching engine (lfv_match.h).
 *
 * Application side: a struct fid_ep of class FI_CLASS_SRX_CTX with the
 * receive half of fi_ops_msg and fi_ops_tagged (send calls -FI_ENOSYS),
 * fi_cancel, fi_getopt/fi_setopt(FI_OPT_MIN_MULTI_RECV) and fi_close.
 * Receive flags (fi_recvmsg/fi_trecvmsg; fi_recv & co. use attr->op_flags):
 *   FI_COMPLETION        passed through in entry->flags for the peer that
 *                        completes the receive; an SRX that is not
 *                        selective (lfv_peer_srx_set_selective) adds it
 *                        to every receive;
 *   FI_MULTI_RECV        untagged, one iov: messages are carved from the
 *                        buffer in order; see "multi-receive" below;
 *   FI_PEEK              tagged: look for an unexpected message. Found: a
 *                        completion (len = message size, tag, source;
 *                        CQ data if the queuing peer set a data
 *                        function, else 0: 1.17 entries carry none),
 *                        the message stays queued. Not found: an error
 *                        completion with err FI_ENOMSG;
 *   FI_PEEK | FI_CLAIM   as FI_PEEK, and the message is reserved for the
 *                        context (a struct fi_context); a later
 *                        fi_trecvmsg with FI_CLAIM and the same context
 *                        receives it (-FI_ENOENT if nothing is claimed);
 *   FI_PEEK | FI_DISCARD, FI_CLAIM | FI_DISCARD
 *                        the message is dropped through the peer's
 *                        discard_tag and the operation completes like a
 *                        peek (len, tag, source); buffers are ignored;
 *   FI_MORE              accepted, ignored.
 * Other flags: -FI_EBADFLAGS. More than iov_limit iovs, a NULL iov with a
 * count, a claim without a context: -FI_EINVAL. Failed calls change
 * nothing.
 *
 * Completions the SRX writes itself (cancel, peek results, discards,
 * FI_ENOMSG) go to the sink set with lfv_peer_srx_bind_cq (the owner CQ's
 * exported fid_peer_cq); without one those calls return -FI_ENOCQ before
 * doing anything. fi_cancel completes the earliest posted receive with
 * that context as FI_ECANCELED in the sink's error queue (FI_MULTI_RECV set
 * for a multi-receive buffer: it is released) or returns -FI_ENOENT.
 *
 * Peer side: lfv_peer_srx_export hands out a fid_peer_srx per peer
 * provider; its owner_ops are:
 *   get_msg/get_tag  the earliest matching posted receive: 0 and the entry
 *                    (context, iov, desc, count, flags; addr, size and tag
 *                    are the message's, size as the peer passed it: the
 *                    buffer's room is the iov lengths; 1.17's get_tag has
 *                    no size: 0 there). No match: -FI_ENOENT and a fresh
 *                    entry with addr, size, tag and flags set; the peer
 *                    sets peer_context (and size after get_tag: peeks
 *                    report it), may set entry->srx (the owner already
 *                    set it to the fid the call came through), and calls
 *                    queue_msg/queue_tag, or free_entry to drop the
 *                    message;
 *   queue_msg/queue_tag  queues the entry as an unexpected message; if a
 *                    matching receive was posted since get_*, the receive
 *                    is started at once instead (start's return is
 *                    returned). Arrival order is queueing order: a peer
 *                    serialises its get and queue calls (fi_peer(3));
 *   free_entry       returns an entry the peer got from get_* or start_*.
 * When an application receive matches a queued message, the owner fills
 * context/iov/desc/count/flags and calls entry->srx->peer_ops->start_msg
 * or start_tag (the application's call returns what start returned); the
 * peer owns the entry until free_entry. After a discard
 * (discard_msg/discard_tag) the owner frees the entry itself: the peer
 * releases its own resources and must not call free_entry for it.
 * The owner never holds its lock while it calls into a peer or into the
 * completion sink, so both may call back in (free_entry from start).
 *
 * Multi-receive: get_msg (or a queued message meeting a newly posted
 * buffer) carves min(size, room left) bytes from the oldest matching
 * buffer into a new entry with one iov describing that region. When the
 * room left falls below FI_OPT_MIN_MULTI_RECV (default
 * LFV_PEER_SRX_DEFAULT_MIN_MULTI_RECV), that entry's flags carry
 * FI_MULTI_RECV | FI_COMPLETION: the peer's completion for it reports the
 * buffer released (and is written even under selective completion).
 *
 * Lifetimes: an exported fid_peer_srx is closed with fi_close, which
 * discards the unexpected and claimed messages that peer queued and fails
 * with -FI_EBUSY while the peer still holds entries. The SRX closes with
 * -FI_EBUSY while exports are open; posted receives are dropped silently.
 *
 * Thread safety: one mutex per SRX around every owner and application
 * op, so a transport's progress thread, peer providers and the
 * application may call concurrently.
 */
#ifndef LFV_PEER_SRX_H
#define LFV_PEER_SRX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include "lfv_fi_compat.h"

/* The capability bits lfv_peer_srx_open understands. No FI_MSG and no
 * FI_TAGGED means both; a class left out makes its receives and its
 * get_* calls -FI_EOPNOTSUPP. */
#define LFV_PEER_SRX_CAPS (FI_MSG | FI_TAGGED | FI_DIRECTED_RECV)
/* attr->op_flags lfv_peer_srx_open accepts (defaults for fi_recv & co.). */
#define LFV_PEER_SRX_OP_FLAGS (FI_COMPLETION | FI_MULTI_RECV)
#define LFV_PEER_SRX_DEFAULT_IOV_LIMIT 4	/* attr->iov_limit 0 */
#define LFV_PEER_SRX_MAX_IOV_LIMIT 64
#define LFV_PEER_SRX_DEFAULT_MIN_MULTI_RECV 16384

/*
 * Opens an SRX. attr: iov_limit (0: the default, at most
 * LFV_PEER_SRX_MAX_IOV_LIMIT), op_flags (within LFV_PEER_SRX_OP_FLAGS);
 * its other fields are not used. caps: within LFV_PEER_SRX_CAPS;
 * FI_DIRECTED_RECV makes receive addresses select the source, otherwise
 * they are ignored. context becomes the fid's context.
 * 0, -FI_EINVAL (NULL attr/srx, bad caps or iov_limit), -FI_EBADFLAGS
 * (op_flags) or -FI_ENOMEM; *srx set only on success.
 */
int lfv_peer_srx_open(const struct fi_rx_attr *attr, uint64_t caps,
		      void *context, struct fid_ep **srx);

/*
 * A new fid_peer_srx (class FI_CLASS_SRX_CTX, as peers bind it) for one peer provider: its
 * owner_ops act on this SRX; its peer_ops point at a table the peer fills
 * in (or the peer points peer_ops at its own table). Pass it in a struct
 * fi_peer_srx_context to the peer's fi_srx_context(FI_PEER); free it with
 * fi_close. 0, -FI_EINVAL (not an SRX from lfv_peer_srx_open, NULL out) or
 * -FI_ENOMEM; *peer_srx set only on success.
 */
/* The owner ops' foreach_unspec_addr (fi_peer(3), 1.19 on; callable in
 * every layout): the peer behind ps has learnt senders' addresses (an AV
 * insert) and names, through get_addr, the source of each message it
 * queued from FI_ADDR_UNSPEC. A named message keeps its arrival order;
 * directed receives from that address accept it from then on. */
void lfv_peer_srx_foreach_unspec_addr(struct fid_peer_srx *ps,
				      fi_addr_t (*get_addr)(struct fi_peer_rx_entry *));
/* A peer's side of the same: asks the owner of ps, whoever it is, to name
 * the sources (ours in every layout; another provider's where the layout
 * has the call, else nothing happens). */
void lfv_peer_owner_foreach_unspec(struct fid_peer_srx *ps,
				   fi_addr_t (*get_addr)(struct fi_peer_rx_entry *));
int lfv_peer_srx_export(struct fid_ep *srx, struct fid_peer_srx **peer_srx);
/* get_tag (tagged) or get_msg of ps, an export of lfv_peer_srx_export that
 * its caller holds (a provider's endpoint on an SRX of ours, which need
 * not go through the owner ops): the same lookup and results, without
 * the owner ops' checks of a handle that a peer provider passes. */
int lfv_peer_srx_export_get(struct fid_peer_srx *ps, bool tagged,
			    const struct lfv_peer_match *m,
			    struct fi_peer_rx_entry **entry);

/*
 * Where the SRX writes its own completions (a CQ's exported fid_peer_cq,
 * whose owner_ops->write and ->writeerr are used); NULL unbinds. The sink
 * must outlive the binding. 0 or -FI_EINVAL.
 */
int lfv_peer_srx_bind_cq(struct fid_ep *srx, struct fid_peer_cq *cq);

/*
 * 1.17's fi_peer_rx_entry has no CQ data, so a peek (or discard) of a
 * queued message would report data 0. A peer of ours can tell it: fn
 * returns true and sets *data for an entry it queued that carries data
 * (the report then has FI_REMOTE_CQ_DATA). 0 or -FI_EINVAL (not an export
 * of lfv_peer_srx_export).
 */
typedef bool (*lfv_peer_srx_data_fn)(const struct fi_peer_rx_entry *entry,
				     uint64_t *data);
/* Before first use: false when every call into the SRX (the application's
 * and its peers') is serialised by the caller (FI_THREAD_DOMAIN without a
 * progress thread), so the SRX takes no lock. Opened locked. */
int lfv_peer_srx_set_locking(struct fid_ep *srx, bool locked);
/* Whether an endpoint with selective completion (fi_cq(3)) receives
 * through the SRX: then only receives that ask for FI_COMPLETION (flags,
 * or attr->op_flags for fi_recv & co.) carry it to the peer that
 * completes them; otherwise every receive does. Opened not selective;
 * any selective endpoint bound makes it selective. 0 or -FI_EINVAL. */
int lfv_peer_srx_set_selective(struct fid_ep *srx, bool selective);
int lfv_peer_srx_set_data_fn(struct fid_peer_srx *peer_srx,
			     lfv_peer_srx_data_fn fn);

/* Whether fid is an SRX of lfv_peer_srx_open. */
bool lfv_peer_srx_is(const struct fid *fid);

/* What an SRX holds (tests, diagnostics). */
struct lfv_peer_srx_counts {
	size_t posted;		/* application receives queued */
	size_t unexpected;	/* messages queued by peers */
	size_t claimed;		/* messages reserved by FI_PEEK | FI_CLAIM */
	size_t entries;		/* all entries allocated, any state */
	size_t exports;		/* open fid_peer_srx objects */
};

/* 0 or -FI_EINVAL; *counts set only on success. */
int lfv_peer_srx_counts(struct fid_ep *srx, struct lfv_peer_srx_counts *counts);

#endif /* LFV_PEER_SRX_H */
