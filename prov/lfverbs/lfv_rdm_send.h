/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM send calls (lfv_rdm_send.c): every send of fi_msg and fi_tagged
 * ends here, the one-buffer calls with a fast path for eager messages to
 * a connected peer. The calls' description (struct lfv_rdm_send) and the
 * requests they fill are lfv_rdm_tx.h's.
 */
#ifndef LFV_RDM_SEND_H
#define LFV_RDM_SEND_H

#include "lfv_rdm_tx.h"

ssize_t lfv_rdm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s);

/* The one-buffer sends of fi_msg and fi_tagged (lfv_rdm_ops.c's tables). */
ssize_t lfv_rdm_msg_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, void *context);
ssize_t lfv_rdm_msg_inject(struct fid_ep *ep_fid, const void *buf,
			   size_t len, fi_addr_t dest);
ssize_t lfv_rdm_msg_senddata(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, uint64_t data,
			     fi_addr_t dest, void *context);
ssize_t lfv_rdm_msg_injectdata(struct fid_ep *ep_fid, const void *buf,
			       size_t len, uint64_t data, fi_addr_t dest);
ssize_t lfv_rdm_tsend(struct fid_ep *ep_fid, const void *buf, size_t len,
		      void *desc, fi_addr_t dest, uint64_t tag, void *context);
ssize_t lfv_rdm_tinject(struct fid_ep *ep_fid, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag);
ssize_t lfv_rdm_tsenddata(struct fid_ep *ep_fid, const void *buf,
			  size_t len, void *desc, uint64_t data,
			  fi_addr_t dest, uint64_t tag, void *context);
ssize_t lfv_rdm_tinjectdata(struct fid_ep *ep_fid, const void *buf,
			    size_t len, uint64_t data, fi_addr_t dest,
			    uint64_t tag);

#endif /* LFV_RDM_SEND_H */
