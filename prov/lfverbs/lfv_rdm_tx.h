/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDM sends (lfv_rdm_tx.c): eager and rendezvous messages, the transmit
 * requests and the per-connection send queues they wait in.
 */
#ifndef LFV_RDM_TX_H
#define LFV_RDM_TX_H

#include "lfv_rdm_ep.h"

/* One send call, whichever API it came through. */
struct lfv_rdm_send {
	const struct iovec *iov;
	void **desc;			/* may be NULL */
	size_t count;
	fi_addr_t dest;
	uint64_t tag, data;
	uint64_t flags;			/* operation flags */
	void *context;
	bool tagged;
	bool inject;			/* fi_inject*: never a completion */
};


ssize_t lfv_rdm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s);

/* Where the receiver reads a rendezvous payload from: the application's
 * registration when it gave one with FI_REMOTE_READ, else one of ours
 * for this send alone (never the cache's: the peer's key must die with
 * the send), over a gathered copy when there are several iovs. The
 * request keeps own_reg and own_copy until the send finishes, fails or
 * is dropped; lfv_rdm_src_free gives them back. */
struct lfv_rdm_src {
	uint64_t addr;
	uint32_t rkey;
	struct lfv_reg own_reg;
	void *own_copy;
};

int lfv_rdm_rndv_src(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		     size_t len, struct lfv_rdm_src *src);
void lfv_rdm_src_free(struct lfv_rdm_ep *ep, struct lfv_reg *reg, void *copy);

/* The one-buffer sends of fi_msg and fi_tagged, with a fast path for
 * eager messages to a connected peer (lfv_rdm_ops.c's tables). */
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
struct lfv_rdm_req *lfv_rdm_take_tx(struct lfv_rdm_ep *ep, fi_addr_t dest,
				    int *err);
void lfv_rdm_tx_done(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r, int err,
		     int prov_errno);
void lfv_rdm_req_abort(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
		       int err);
void lfv_rdm_post_or_queue(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
void lfv_rdm_sq_done(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c, bool ok);
void lfv_rdm_flush_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c);
void lfv_rdm_fail_pending(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
			  int err);
void lfv_rdm_on_fin(struct lfv_rdm_ep *ep, const struct lfv_rdm_conn *c,
		    const struct lfv_rdm_hdr *h);
void lfv_rdm_fail_rndv(struct lfv_rdm_ep *ep, struct lfv_rdm_conn *c,
		       int err);
void lfv_rdm_rndv_round(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
/* A rendezvous send that will not finish: its source given back, and no
 * longer counted as waiting for a FIN. */
void lfv_rdm_rndv_drop(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r);
int lfv_rdm_segs(struct lfv_rdm_ep *ep, const struct iovec *iov, void **desc,
		 size_t count, size_t want, struct lfv_rdm_seg *seg,
		 int *nseg, struct lfv_reg *regs, size_t *got);
void lfv_rdm_regs_put(struct lfv_rdm_ep *ep, struct lfv_reg *regs);
void lfv_rdm_tx_completion(struct lfv_rdm_ep *ep, struct lfv_rdm_req *r,
			   const struct ibv_wc *wc);


int lfv_rdm_slice(const struct lfv_rdm_seg *seg, int nseg, size_t off,
		  size_t n, struct ibv_sge *sge);

#endif /* LFV_RDM_TX_H */
