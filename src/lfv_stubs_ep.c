/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Endpoint operation sets lfverbs does not implement (yet): every call
 * returns -FI_ENOSYS, as fi_lfverbs(7) says. Written out by hand so that
 * each table has no NULL slot. */
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lfv_stubs.h"

static ssize_t lfv_no_rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)addr; (void)key;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest_addr; (void)addr; (void)key; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr; (void)addr; (void)key;
	return -FI_ENOSYS;
}

struct fi_ops_rma lfv_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lfv_no_rma_read,
	.readv = lfv_no_rma_readv,
	.readmsg = lfv_no_rma_readmsg,
	.write = lfv_no_rma_write,
	.writev = lfv_no_rma_writev,
	.writemsg = lfv_no_rma_writemsg,
	.inject = lfv_no_rma_inject,
	.writedata = lfv_no_rma_writedata,
	.injectdata = lfv_no_rma_injectdata,
};

static ssize_t lfv_no_tagged_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)src_addr; (void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_tagged_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src_addr, uint64_t tag, uint64_t ignore, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)src_addr; (void)tag; (void)ignore; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_tagged_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest_addr, uint64_t tag, void *context)
{
	(void)ep; (void)buf; (void)len; (void)desc; (void)data; (void)dest_addr; (void)tag; (void)context;
	return -FI_ENOSYS;
}

ssize_t lfv_no_tagged_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest_addr, uint64_t tag)
{
	(void)ep; (void)buf; (void)len; (void)data; (void)dest_addr; (void)tag;
	return -FI_ENOSYS;
}

struct fi_ops_tagged lfv_no_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lfv_no_tagged_recv,
	.recvv = lfv_no_tagged_recvv,
	.recvmsg = lfv_no_tagged_recvmsg,
	.send = lfv_no_tagged_send,
	.sendv = lfv_no_tagged_sendv,
	.sendmsg = lfv_no_tagged_sendmsg,
	.inject = lfv_no_tagged_inject,
	.senddata = lfv_no_tagged_senddata,
	.injectdata = lfv_no_tagged_injectdata,
};

static ssize_t lfv_no_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op)
{
	(void)ep; (void)buf; (void)count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)resultv; (void)result_desc; (void)result_count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare, void *compare_desc, void *result, void *result_desc, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)compare; (void)compare_desc; (void)result; (void)result_desc; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest_addr, uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op, void *context)
{
	(void)ep; (void)iov; (void)desc; (void)count; (void)comparev; (void)compare_desc; (void)compare_count; (void)resultv; (void)result_desc; (void)result_count; (void)dest_addr; (void)addr; (void)key; (void)datatype; (void)op; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, const struct fi_ioc *comparev, void **compare_desc, size_t compare_count, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)comparev; (void)compare_desc; (void)compare_count; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static int lfv_no_atomic_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

static int lfv_no_atomic_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

static int lfv_no_atomic_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op, size_t *count)
{
	(void)ep; (void)datatype; (void)op; (void)count;
	return -FI_ENOSYS;
}

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
	.writevalid = lfv_no_atomic_writevalid,
	.readwritevalid = lfv_no_atomic_readwritevalid,
	.compwritevalid = lfv_no_atomic_compwritevalid,
};

static ssize_t lfv_no_collective_barrier(struct fid_ep *ep, fi_addr_t coll_addr, void *context)
{
	(void)ep; (void)coll_addr; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_reduce_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, enum fi_op op, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)op; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result, void *result_desc, fi_addr_t coll_addr, fi_addr_t root_addr, enum fi_datatype datatype, uint64_t flags, void *context)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)result; (void)result_desc; (void)coll_addr; (void)root_addr; (void)datatype; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_msg(struct fid_ep *ep, const struct fi_msg_collective *msg, struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)result_desc; (void)result_count; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t lfv_no_collective_barrier2(struct fid_ep *ep, fi_addr_t coll_addr, uint64_t flags, void *context)
{
	(void)ep; (void)coll_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

struct fi_ops_collective lfv_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = lfv_no_collective_barrier,
	.broadcast = lfv_no_collective_broadcast,
	.alltoall = lfv_no_collective_alltoall,
	.allreduce = lfv_no_collective_allreduce,
	.allgather = lfv_no_collective_allgather,
	.reduce_scatter = lfv_no_collective_reduce_scatter,
	.reduce = lfv_no_collective_reduce,
	.scatter = lfv_no_collective_scatter,
	.gather = lfv_no_collective_gather,
	.msg = lfv_no_collective_msg,
	.barrier2 = lfv_no_collective_barrier2,
};
