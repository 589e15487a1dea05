/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* FI_EP_RDM: fi_ops_msg and fi_ops_tagged. Sends go to lfv_rdm_send (the
 * one-buffer calls are lfv_rdm_send.c's, with their fast path); receives to
 * the SRX the endpoint matches with. */
#include "config.h"

#include <rdma/fi_tagged.h>

#include "lfv_rdm_ep.h"
#include "lfv_rdm_ops.h"
#include "lfv_rdm_send.h"

#define LFV_RDM_TX_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |        \
			  FI_DELIVERY_COMPLETE | FI_MORE)

/* fi_ops_msg and fi_ops_tagged have the same calls, with and without a
 * tag, and the endpoint's functions for them the same names after their
 * prefix (lfv_rdm_msg_send, lfv_rdm_tsend, ...): one table for both. */
#define LFV_RDM_CALLS(type, prefix)                                          \
	{                                                                    \
		.size = sizeof(struct type),                                 \
		.recv = prefix##recv,                                        \
		.recvv = prefix##recvv,                                      \
		.recvmsg = prefix##recvmsg,                                  \
		.send = prefix##send,                                        \
		.sendv = prefix##sendv,                                      \
		.sendmsg = prefix##sendmsg,                                  \
		.inject = prefix##inject,                                    \
		.senddata = prefix##senddata,                                \
		.injectdata = prefix##injectdata,                            \
	}

static uint64_t lfv_rdm_tx_flags(const struct lfv_rdm_ep *ep)
{
	return ep->base.tx_op_flags;
}

/* fi_sendmsg and fi_tsendmsg: the call's own flags, checked once here,
 * instead of the endpoint's. */
static ssize_t lfv_rdm_send_msg(struct fid_ep *ep_fid, uint64_t flags,
				struct lfv_rdm_send *s)
{
	if (flags & ~(uint64_t)LFV_RDM_TX_FLAGS)
		return -FI_EBADFLAGS;
	s->flags = flags;
	return lfv_rdm_send(lfv_rdm_of(&ep_fid->fid), s);
}

static ssize_t lfv_rdm_msg_sendv(struct fid_ep *ep_fid,
				 const struct iovec *iov, void **desc,
				 size_t count, fi_addr_t dest, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = iov, .desc = desc, .count = count, .dest = dest,
		.context = context,
		.flags = lfv_rdm_tx_flags(ep) });
}

static ssize_t lfv_rdm_msg_sendmsg(struct fid_ep *ep_fid,
				   const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return lfv_rdm_send_msg(ep_fid, flags, &(struct lfv_rdm_send){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .dest = msg->addr,
		.context = msg->context, .data = msg->data });
}

/* Where receives are posted: the SRX the endpoint matches with (its own
 * or the bound one); an owner's imported SRX takes them itself. */
static ssize_t lfv_rdm_rx_srx(struct fid_ep *ep_fid, struct fid_ep **srx)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!ep->srx)
		return -FI_EOPNOTSUPP;
	*srx = ep->srx;
	return 0;
}

/* Receives are the SRX's (the endpoint's own or the bound one): each
 * receive call of the endpoint is the same call on that SRX. */
#define LFV_RDM_RX_CALL(name, call, params, ...)                             \
	static ssize_t name params                                           \
	{                                                                    \
		struct fid_ep *srx;                                          \
		ssize_t ret = lfv_rdm_rx_srx(ep_fid, &srx);                  \
									     \
		return ret ? ret : call(srx, __VA_ARGS__);                   \
	}

LFV_RDM_RX_CALL(lfv_rdm_msg_recv, fi_recv,
		(struct fid_ep *ep_fid, void *buf, size_t len, void *desc,
		 fi_addr_t src, void *context),
		buf, len, desc, src, context)

LFV_RDM_RX_CALL(lfv_rdm_msg_recvv, fi_recvv,
		(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
		 size_t count, fi_addr_t src, void *context),
		iov, desc, count, src, context)

LFV_RDM_RX_CALL(lfv_rdm_msg_recvmsg, fi_recvmsg,
		(struct fid_ep *ep_fid, const struct fi_msg *msg,
		 uint64_t flags),
		msg, flags)

struct fi_ops_msg lfv_rdm_msg_ops = LFV_RDM_CALLS(fi_ops_msg, lfv_rdm_msg_);

static ssize_t lfv_rdm_tsendv(struct fid_ep *ep_fid, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      uint64_t tag, void *context)
{
	struct lfv_rdm_ep *ep = lfv_rdm_of(&ep_fid->fid);

	return lfv_rdm_send(ep, &(struct lfv_rdm_send){
		.iov = iov, .desc = desc, .count = count, .dest = dest, .tag = tag,
		.context = context, .flags = lfv_rdm_tx_flags(ep),
		.tagged = true });
}

static ssize_t lfv_rdm_tsendmsg(struct fid_ep *ep_fid,
				const struct fi_msg_tagged *msg,
				uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return lfv_rdm_send_msg(ep_fid, flags, &(struct lfv_rdm_send){
		.iov = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count, .dest = msg->addr, .tag = msg->tag,
		.context = msg->context, .data = msg->data, .tagged = true });
}

LFV_RDM_RX_CALL(lfv_rdm_trecv, fi_trecv,
		(struct fid_ep *ep_fid, void *buf, size_t len, void *desc,
		 fi_addr_t src, uint64_t tag, uint64_t ignore, void *context),
		buf, len, desc, src, tag, ignore, context)

LFV_RDM_RX_CALL(lfv_rdm_trecvv, fi_trecvv,
		(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
		 size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore,
		 void *context),
		iov, desc, count, src, tag, ignore, context)

LFV_RDM_RX_CALL(lfv_rdm_trecvmsg, fi_trecvmsg,
		(struct fid_ep *ep_fid, const struct fi_msg_tagged *msg,
		 uint64_t flags),
		msg, flags)

struct fi_ops_tagged lfv_rdm_tagged_ops = LFV_RDM_CALLS(fi_ops_tagged,
						     lfv_rdm_t);
