/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The peers' side of a peer SRX (lfv_peer_srx_owner.c): what the
 * application's side needs of it. Private to src/.
 */
#ifndef LFV_PEER_SRX_OWNER_H
#define LFV_PEER_SRX_OWNER_H

#include "lfv_peer_srx_entry.h"

/* The export behind a fid_peer_srx of ours, or NULL. */
struct lfv_srx_export *lfv_srx_export_checked(struct fid_peer_srx *ps);
/* What a peek (or a discard) reports about a queued message: CQ data too
 * when the peer that queued it can tell (1.17 entries carry none). */
struct lfv_srx_report lfv_srx_msg_report(const struct lfv_srx_entry *e,
					 void *context);
/* A new export of srx for a peer provider: 0 or -FI_ENOMEM. */
int lfv_srx_export_new(struct lfv_peer_srx *srx,
		       struct fid_peer_srx **peer_srx);

#endif /* LFV_PEER_SRX_OWNER_H */
