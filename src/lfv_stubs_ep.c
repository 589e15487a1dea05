/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Endpoint operation sets lfverbs does not implement (yet): every call
 * returns -FI_ENOSYS, as fi_lfverbs(7) says. Every slot is filled, so no
 * table has a NULL slot; slots of one signature share one LFV_STUB. */
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lfv_stubs.h"

LFV_STUB(static ssize_t, lfv_no_rma_read, -FI_ENOSYS, struct fid_ep *ep,
	 void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr,
	 uint64_t key, void *context)
/* readv and writev */
LFV_STUB(static ssize_t, lfv_no_rma_iov, -FI_ENOSYS, struct fid_ep *ep,
	 const struct iovec *iov, void **desc, size_t count, fi_addr_t addr,
	 uint64_t raddr, uint64_t key, void *context)
/* readmsg and writemsg */
LFV_STUB(static ssize_t, lfv_no_rma_msg, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_msg_rma *msg, uint64_t flags)
LFV_STUB(static ssize_t, lfv_no_rma_write, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
	 uint64_t addr, uint64_t key, void *context)
LFV_STUB(static ssize_t, lfv_no_rma_inject, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr,
	 uint64_t key)
LFV_STUB(static ssize_t, lfv_no_rma_writedata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, uint64_t data,
	 fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
LFV_STUB(static ssize_t, lfv_no_rma_injectdata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr,
	 uint64_t addr, uint64_t key)

struct fi_ops_rma lfv_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lfv_no_rma_read,
	.readv = lfv_no_rma_iov,
	.readmsg = lfv_no_rma_msg,
	.write = lfv_no_rma_write,
	.writev = lfv_no_rma_iov,
	.writemsg = lfv_no_rma_msg,
	.inject = lfv_no_rma_inject,
	.writedata = lfv_no_rma_writedata,
	.injectdata = lfv_no_rma_injectdata,
};

LFV_STUB(static ssize_t, lfv_no_tagged_recv, -FI_ENOSYS, struct fid_ep *ep,
	 void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag,
	 uint64_t ignore, void *context)
LFV_STUB(static ssize_t, lfv_no_tagged_recvv, -FI_ENOSYS, struct fid_ep *ep,
	 const struct iovec *iov, void **desc, size_t count,
	 fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
LFV_STUB(ssize_t, lfv_no_tagged_send, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
	 uint64_t tag, void *context)
LFV_STUB(ssize_t, lfv_no_tagged_sendv, -FI_ENOSYS, struct fid_ep *ep,
	 const struct iovec *iov, void **desc, size_t count,
	 fi_addr_t dest_addr, uint64_t tag, void *context)
/* recvmsg and sendmsg */
LFV_STUB(ssize_t, lfv_no_tagged_msg, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_msg_tagged *msg, uint64_t flags)
LFV_STUB(ssize_t, lfv_no_tagged_inject, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag)
LFV_STUB(ssize_t, lfv_no_tagged_senddata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, void *desc, uint64_t data,
	 fi_addr_t dest_addr, uint64_t tag, void *context)
LFV_STUB(ssize_t, lfv_no_tagged_injectdata, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr,
	 uint64_t tag)

struct fi_ops_tagged lfv_no_tagged_ops =
	LFV_RX_ONLY_OPS(fi_ops_tagged, lfv_no_tagged_recv, lfv_no_tagged_recvv,
			lfv_no_tagged_msg, LFV_NO_TAGGED_SEND_SLOTS);

LFV_STUB(static ssize_t, lfv_no_atomic_write, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t count, void *desc, fi_addr_t dest_addr,
	 uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op,
	 void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_writev, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_ioc *iov, void **desc, size_t count,
	 fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	 enum fi_datatype datatype, enum fi_op op, void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_writemsg, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_msg_atomic *msg, uint64_t flags)
LFV_STUB(static ssize_t, lfv_no_atomic_inject, -FI_ENOSYS, struct fid_ep *ep,
	 const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr,
	 uint64_t key, enum fi_datatype datatype, enum fi_op op)
LFV_STUB(static ssize_t, lfv_no_atomic_readwrite, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr,
	 uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_readwritev, -FI_ENOSYS,
	 struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
	 size_t count, struct fi_ioc *resultv, void **result_desc,
	 size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	 enum fi_datatype datatype, enum fi_op op, void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_readwritemsg, -FI_ENOSYS,
	 struct fid_ep *ep, const struct fi_msg_atomic *msg,
	 struct fi_ioc *resultv, void **result_desc, size_t result_count,
	 uint64_t flags)
LFV_STUB(static ssize_t, lfv_no_atomic_compwrite, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 const void *compare, void *compare_desc, void *result,
	 void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	 enum fi_datatype datatype, enum fi_op op, void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_compwritev, -FI_ENOSYS,
	 struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
	 size_t count, const struct fi_ioc *comparev, void **compare_desc,
	 size_t compare_count, struct fi_ioc *resultv, void **result_desc,
	 size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
	 enum fi_datatype datatype, enum fi_op op, void *context)
LFV_STUB(static ssize_t, lfv_no_atomic_compwritemsg, -FI_ENOSYS,
	 struct fid_ep *ep, const struct fi_msg_atomic *msg,
	 const struct fi_ioc *comparev, void **compare_desc,
	 size_t compare_count, struct fi_ioc *resultv, void **result_desc,
	 size_t result_count, uint64_t flags)
/* writevalid, readwritevalid and compwritevalid */
LFV_STUB(static int, lfv_no_atomic_valid, -FI_ENOSYS, struct fid_ep *ep,
	 enum fi_datatype datatype, enum fi_op op, size_t *count)

struct fi_ops_atomic lfv_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = lfv_no_atomic_write,
	.writev = lfv_no_atomic_writev,
	.writemsg = lfv_no_atomic_writemsg,
	.inject = lfv_no_atomic_inject,
	.readwrite = lfv_no_atomic_readwrite,
	.readwritev = lfv_no_atomic_readwritev,
	.readwritemsg = lfv_no_atomic_readwritemsg,
	.compwrite = lfv_no_atomic_compwrite,
	.compwritev = lfv_no_atomic_compwritev,
	.compwritemsg = lfv_no_atomic_compwritemsg,
	.writevalid = lfv_no_atomic_valid,
	.readwritevalid = lfv_no_atomic_valid,
	.compwritevalid = lfv_no_atomic_valid,
};

LFV_STUB(static ssize_t, lfv_no_collective_barrier, -FI_ENOSYS,
	 struct fid_ep *ep, fi_addr_t coll_addr, void *context)
LFV_STUB(static ssize_t, lfv_no_collective_broadcast, -FI_ENOSYS,
	 struct fid_ep *ep, void *buf, size_t count, void *desc,
	 fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype,
	 uint64_t flags, void *context)
/* alltoall and allgather */
LFV_STUB(static ssize_t, lfv_no_collective_all, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 void *result, void *result_desc, fi_addr_t coll_addr,
	 enum fi_datatype datatype, uint64_t flags, void *context)
/* allreduce and reduce_scatter */
LFV_STUB(static ssize_t, lfv_no_collective_reduce_all, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 void *result, void *result_desc, fi_addr_t coll_addr,
	 enum fi_datatype datatype, enum fi_op op, uint64_t flags,
	 void *context)
LFV_STUB(static ssize_t, lfv_no_collective_reduce, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 void *result, void *result_desc, fi_addr_t coll_addr,
	 fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op,
	 uint64_t flags, void *context)
/* scatter and gather */
LFV_STUB(static ssize_t, lfv_no_collective_rooted, -FI_ENOSYS,
	 struct fid_ep *ep, const void *buf, size_t count, void *desc,
	 void *result, void *result_desc, fi_addr_t coll_addr,
	 fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags,
	 void *context)
LFV_STUB(static ssize_t, lfv_no_collective_msg, -FI_ENOSYS, struct fid_ep *ep,
	 const struct fi_msg_collective *msg, struct fi_ioc *resultv,
	 void **result_desc, size_t result_count, uint64_t flags)
LFV_STUB(static ssize_t, lfv_no_collective_barrier2, -FI_ENOSYS,
	 struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)

struct fi_ops_collective lfv_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = lfv_no_collective_barrier,
	.broadcast = lfv_no_collective_broadcast,
	.alltoall = lfv_no_collective_all,
	.allreduce = lfv_no_collective_reduce_all,
	.allgather = lfv_no_collective_all,
	.reduce_scatter = lfv_no_collective_reduce_all,
	.reduce = lfv_no_collective_reduce,
	.scatter = lfv_no_collective_rooted,
	.gather = lfv_no_collective_rooted,
	.msg = lfv_no_collective_msg,
	.barrier2 = lfv_no_collective_barrier2,
};

void lfv_rx_only_fid_init(struct fid_ep *ep, size_t fclass, void *context,
			  const struct lfv_rx_only_ops *ops)
{
	lfv_fid_init(&ep->fid, fclass, context, ops->fi);
	ep->ops = ops->ep;
	ep->cm = &lfv_no_cm_ops;
	ep->msg = ops->msg;
	ep->rma = &lfv_no_rma_ops;
	ep->tagged = ops->tagged;
	ep->atomic = &lfv_no_atomic_ops;
	ep->collective = &lfv_no_collective_ops;
}
