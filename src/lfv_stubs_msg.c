/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fi_ops_msg and fi_ops_ep sets that return -FI_ENOSYS: the send side for
 * receive-only objects, and whole tables for objects that move no data
 * themselves (the fid_peer_srx handed to peer providers). */
#include "lfv_stubs.h"

LFV_STUB(ssize_t, lfv_no_msg_recv, -FI_ENOSYS, struct fid_ep *ep, void *buf,
	 size_t len, void *desc, fi_addr_t src_addr, void *context)
/* recvv and sendv take the same arguments, as do recvmsg and sendmsg:
 * one stub each. */
LFV_STUB(ssize_t, lfv_no_msg_iov, -FI_ENOSYS, struct fid_ep *ep,
	 const struct iovec *iov, void **desc, size_t count, fi_addr_t addr,
	 void *context)
LFV_STUB(ssize_t, lfv_no_msg_msg, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_msg *msg, uint64_t flags)
LFV_STUB(ssize_t, lfv_no_msg_send, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
	 void *context)
LFV_STUB(ssize_t, lfv_no_msg_inject, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, fi_addr_t dest_addr)
LFV_STUB(ssize_t, lfv_no_msg_senddata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, uint64_t data,
	 fi_addr_t dest_addr, void *context)
LFV_STUB(ssize_t, lfv_no_msg_injectdata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr)

struct fi_ops_msg lfv_no_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	LFV_NO_MSG_RECV_SLOTS,
	LFV_NO_MSG_SEND_SLOTS,
};

struct fi_ops_ep lfv_no_ep_ops = LFV_NO_EP_OPS(lfv_no_size_left);
