/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_atomic on RC queue pairs (MSG and RDM endpoints, one table; the
 * transports post through lfv_rma_submit): what verbs does natively, on one 64-bit
 * integer per operation. FI_SUM is fetch-and-add (fi_atomic, fi_fetch_atomic),
 * FI_ATOMIC_READ is fetch-and-add of 0, FI_CSWAP is compare-and-swap
 * (fi_compare_atomic). Everything else is -FI_EOPNOTSUPP, and the valid
 * queries say so. The operand travels in the work request, so fi_inject_atomic
 * needs no inline data; a result nobody asked for lands in the endpoint's
 * registered sink.
 */
#include <string.h>

#include "lfv_amo.h"
#include "lfv_prov.h"
#include "lfv_rma.h"

#define LFV_AMO_FLAGS (FI_COMPLETION | FI_INJECT | FI_FENCE | FI_MORE |     \
		       FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |           \
		       FI_DELIVERY_COMPLETE)

enum lfv_amo_kind { LFV_AMO_WRITE, LFV_AMO_FETCH, LFV_AMO_COMPARE };

static bool lfv_amo_type_ok(enum fi_datatype datatype)
{
	return datatype == FI_INT64 || datatype == FI_UINT64;
}

static bool lfv_amo_op_ok(enum lfv_amo_kind kind, enum fi_op op)
{
	switch (kind) {
	case LFV_AMO_WRITE:
		return op == FI_SUM;
	case LFV_AMO_FETCH:
		return op == FI_SUM || op == FI_ATOMIC_READ;
	default:
		return op == FI_CSWAP;
	}
}

static int lfv_amo_valid(enum lfv_amo_kind kind, enum fi_datatype datatype,
			 enum fi_op op, size_t *count)
{
	if (!lfv_amo_type_ok(datatype) || !lfv_amo_op_ok(kind, op))
		return -FI_EOPNOTSUPP;
	if (count)
		*count = 1;
	return 0;
}

/* One atomic: operand(s) by value, result to (buf, lkey). */
struct lfv_amo {
	enum lfv_amo_kind kind;
	enum fi_datatype datatype;
	enum fi_op op;
	const void *operand;
	const void *compare;
	void *result;
	void *result_desc;
	uint64_t addr;
	uint64_t key;
	size_t count;
};

/* The atomic as a work request; the result (if any) is r's one iov. */
static ssize_t lfv_amo_post(struct fid_ep *ep_fid, const struct lfv_amo *a,
			    struct lfv_tx_req *r)
{
	struct iovec result = { .iov_base = a->result,
				.iov_len = sizeof(uint64_t) };
	void *result_desc = a->result_desc;
	struct lfv_rma_req q = { .key = a->key };
	uint64_t operand = 0, compare = 0;
	int ret;

	ret = lfv_amo_valid(a->kind, a->datatype, a->op, NULL);
	if (ret)
		return ret;
	/* The key is checked with every RMA's (lfv_rma_submit). */
	if (a->count != 1 || (a->addr & 7))
		return -FI_EINVAL;
	if (a->op != FI_ATOMIC_READ) {
		if (!a->operand)
			return -FI_EINVAL;
		memcpy(&operand, a->operand, sizeof(operand));
	}
	if (a->kind == LFV_AMO_COMPARE) {
		if (!a->compare)
			return -FI_EINVAL;
		memcpy(&compare, a->compare, sizeof(compare));
	}
	r->count = 0;
	if (a->kind != LFV_AMO_WRITE) {
		if (!a->result)
			return -FI_EINVAL;
		r->iov = &result;
		r->desc = &result_desc;
		r->count = 1;
	}
	q.wr.wr.atomic.remote_addr = a->addr;
	q.wr.wr.atomic.rkey = (uint32_t)a->key;
	if (a->kind == LFV_AMO_COMPARE) {
		q.wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		q.wr.wr.atomic.compare_add = compare;
		q.wr.wr.atomic.swap = operand;
	} else {
		q.wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		q.wr.wr.atomic.compare_add = operand; /* 0 for FI_ATOMIC_READ */
	}
	/* The operand is in the request already: inject needs no inline. */
	if (r->flags & FI_INJECT) {
		r->flags &= ~(uint64_t)FI_INJECT;
		r->no_report = true;
	}
	r->comp_flags = FI_ATOMIC |
			(a->kind == LFV_AMO_WRITE ? FI_WRITE : FI_READ);
	q.r = *r;
	return lfv_rma_submit(ep_fid, &q);
}

/* The single element of an fi_ioc array (count 1 in total). */
static const void *lfv_ioc_one(const struct fi_ioc *ioc, size_t n,
			       size_t *count)
{
	*count = n == 1 && ioc ? ioc[0].count : 0;
	return *count ? ioc[0].addr : NULL;
}

static int lfv_amo_msg_check(const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)LFV_AMO_FLAGS)
		return -FI_EBADFLAGS;
	return 0;
}

/* What every *msg call takes from msg once it is checked: the operation,
 * its operands (a->count from them), the remote address and r. */
static int lfv_amo_from_msg(const struct fi_msg_atomic *msg, uint64_t flags,
			    struct lfv_amo *a, struct lfv_tx_req *r)
{
	int ret = lfv_amo_msg_check(msg, flags);

	if (ret)
		return ret;
	a->datatype = msg->datatype;
	a->op = msg->op;
	a->operand = lfv_ioc_one(msg->msg_iov, msg->iov_count, &a->count);
	a->addr = msg->rma_iov[0].addr;
	a->key = msg->rma_iov[0].key;
	*r = (struct lfv_tx_req){ .dest = msg->addr, .context = msg->context,
				  .flags = flags };
	return 0;
}

/* fi_atomic and fi_inject_atomic: a write with no result. */
static ssize_t lfv_amo_post_write(struct fid_ep *ep, const void *buf,
				  size_t count, fi_addr_t dest_addr,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context, uint64_t flags)
{
	struct lfv_amo a = { .kind = LFV_AMO_WRITE, .datatype = datatype,
			     .op = op, .operand = buf, .addr = addr,
			     .key = key, .count = count };
	struct lfv_tx_req r = { .dest = dest_addr, .context = context,
				.flags = flags };

	return lfv_amo_post(ep, &a, &r);
}

static ssize_t lfv_amo_write(struct fid_ep *ep, const void *buf, size_t count,
			     void *desc, fi_addr_t dest_addr, uint64_t addr,
			     uint64_t key, enum fi_datatype datatype,
			     enum fi_op op, void *context)
{
	(void)desc;
	return lfv_amo_post_write(ep, buf, count, dest_addr, addr, key,
				  datatype, op, context,
				  lfv_rma_in_op_flags(ep));
}

static ssize_t lfv_amo_writev(struct fid_ep *ep, const struct fi_ioc *iov,
			      void **desc, size_t count, fi_addr_t dest_addr,
			      uint64_t addr, uint64_t key,
			      enum fi_datatype datatype, enum fi_op op,
			      void *context)
{
	size_t n;
	const void *buf = lfv_ioc_one(iov, count, &n);

	return lfv_amo_write(ep, buf, n, desc ? desc[0] : NULL, dest_addr,
			     addr, key, datatype, op, context);
}

static ssize_t lfv_amo_writemsg(struct fid_ep *ep,
				const struct fi_msg_atomic *msg, uint64_t flags)
{
	struct lfv_amo a = { .kind = LFV_AMO_WRITE };
	struct lfv_tx_req r;
	int ret = lfv_amo_from_msg(msg, flags, &a, &r);

	if (ret)
		return ret;
	if (msg->rma_iov[0].count != a.count)
		return -FI_EINVAL;
	return lfv_amo_post(ep, &a, &r);
}

static ssize_t lfv_amo_inject(struct fid_ep *ep, const void *buf, size_t count,
			      fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			      enum fi_datatype datatype, enum fi_op op)
{
	return lfv_amo_post_write(ep, buf, count, dest_addr, addr, key,
				  datatype, op, NULL, FI_INJECT);
}

static ssize_t lfv_amo_readwrite(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct lfv_amo a = { .kind = LFV_AMO_FETCH, .datatype = datatype,
			     .op = op, .operand = buf, .result = result,
			     .result_desc = result_desc, .addr = addr,
			     .key = key, .count = count };
	struct lfv_tx_req r = { .dest = dest_addr, .context = context,
				.flags = lfv_rma_in_op_flags(ep) };

	(void)desc;
	return lfv_amo_post(ep, &a, &r);
}

static ssize_t lfv_amo_readwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				  void **desc, size_t count,
				  struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest_addr,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	size_t n, rn;
	const void *buf = lfv_ioc_one(iov, count, &n);
	void *res = (void *)lfv_ioc_one(resultv, result_count, &rn);

	if (op == FI_ATOMIC_READ)
		n = rn; /* no operand: the result gives the count */
	if (n != rn)
		return -FI_EINVAL;
	return lfv_amo_readwrite(ep, buf, n, desc ? desc[0] : NULL, res,
				 result_desc ? result_desc[0] : NULL,
				 dest_addr, addr, key, datatype, op, context);
}

static ssize_t lfv_amo_readwritemsg(struct fid_ep *ep,
				    const struct fi_msg_atomic *msg,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, uint64_t flags)
{
	struct lfv_amo a = { .kind = LFV_AMO_FETCH };
	struct lfv_tx_req r;
	size_t rn;
	int ret = lfv_amo_from_msg(msg, flags, &a, &r);

	if (ret)
		return ret;
	if (flags & FI_INJECT)
		return -FI_EINVAL; /* the result needs a completion */
	a.result = (void *)lfv_ioc_one(resultv, result_count, &rn);
	a.result_desc = result_desc ? result_desc[0] : NULL;
	if (a.op == FI_ATOMIC_READ)
		a.count = rn;
	if (a.count != rn || msg->rma_iov[0].count != rn)
		return -FI_EINVAL;
	return lfv_amo_post(ep, &a, &r);
}

static ssize_t lfv_amo_compwrite(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, const void *compare,
				 void *compare_desc, void *result,
				 void *result_desc, fi_addr_t dest_addr,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct lfv_amo a = { .kind = LFV_AMO_COMPARE, .datatype = datatype,
			     .op = op, .operand = buf, .compare = compare,
			     .result = result, .result_desc = result_desc,
			     .addr = addr, .key = key, .count = count };
	struct lfv_tx_req r = { .dest = dest_addr, .context = context,
				.flags = lfv_rma_in_op_flags(ep) };

	(void)desc; (void)compare_desc;
	return lfv_amo_post(ep, &a, &r);
}

static ssize_t lfv_amo_compwritev(struct fid_ep *ep, const struct fi_ioc *iov,
				  void **desc, size_t count,
				  const struct fi_ioc *comparev,
				  void **compare_desc, size_t compare_count,
				  struct fi_ioc *resultv, void **result_desc,
				  size_t result_count, fi_addr_t dest_addr,
				  uint64_t addr, uint64_t key,
				  enum fi_datatype datatype, enum fi_op op,
				  void *context)
{
	size_t n, cn, rn;
	const void *buf = lfv_ioc_one(iov, count, &n);
	const void *cmp = lfv_ioc_one(comparev, compare_count, &cn);
	void *res = (void *)lfv_ioc_one(resultv, result_count, &rn);

	if (n != cn || n != rn)
		return -FI_EINVAL;
	return lfv_amo_compwrite(ep, buf, n, desc ? desc[0] : NULL, cmp,
				 compare_desc ? compare_desc[0] : NULL, res,
				 result_desc ? result_desc[0] : NULL,
				 dest_addr, addr, key, datatype, op, context);
}

static ssize_t lfv_amo_compwritemsg(struct fid_ep *ep,
				    const struct fi_msg_atomic *msg,
				    const struct fi_ioc *comparev,
				    void **compare_desc, size_t compare_count,
				    struct fi_ioc *resultv, void **result_desc,
				    size_t result_count, uint64_t flags)
{
	struct lfv_amo a = { .kind = LFV_AMO_COMPARE };
	struct lfv_tx_req r;
	size_t cn, rn;
	int ret = lfv_amo_from_msg(msg, flags, &a, &r);

	(void)compare_desc;
	if (ret)
		return ret;
	if (flags & FI_INJECT)
		return -FI_EINVAL;
	a.compare = lfv_ioc_one(comparev, compare_count, &cn);
	a.result = (void *)lfv_ioc_one(resultv, result_count, &rn);
	a.result_desc = result_desc ? result_desc[0] : NULL;
	if (a.count != cn || a.count != rn || msg->rma_iov[0].count != rn)
		return -FI_EINVAL;
	return lfv_amo_post(ep, &a, &r);
}

static int lfv_amo_writevalid(struct fid_ep *ep, enum fi_datatype datatype,
			      enum fi_op op, size_t *count)
{
	(void)ep;
	return lfv_amo_valid(LFV_AMO_WRITE, datatype, op, count);
}

static int lfv_amo_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				  enum fi_op op, size_t *count)
{
	(void)ep;
	return lfv_amo_valid(LFV_AMO_FETCH, datatype, op, count);
}

static int lfv_amo_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype,
				  enum fi_op op, size_t *count)
{
	(void)ep;
	return lfv_amo_valid(LFV_AMO_COMPARE, datatype, op, count);
}

struct fi_ops_atomic lfv_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = lfv_amo_write,
	.writev = lfv_amo_writev,
	.writemsg = lfv_amo_writemsg,
	.inject = lfv_amo_inject,
	.readwrite = lfv_amo_readwrite,
	.readwritev = lfv_amo_readwritev,
	.readwritemsg = lfv_amo_readwritemsg,
	.compwrite = lfv_amo_compwrite,
	.compwritev = lfv_amo_compwritev,
	.compwritemsg = lfv_amo_compwritemsg,
	.writevalid = lfv_amo_writevalid,
	.readwritevalid = lfv_amo_readwritevalid,
	.compwritevalid = lfv_amo_compwritevalid,
};

/* fi_query_atomic on the domain: the same answers, with sizes. */
int lfv_query_atomic(struct fid_domain *domain, enum fi_datatype datatype,
		     enum fi_op op, struct fi_atomic_attr *attr, uint64_t flags)
{
	struct lfv_domain *d = lfv_container_of(domain, struct lfv_domain,
						domain_fid);
	enum lfv_amo_kind kind = LFV_AMO_WRITE;
	size_t count;
	int ret;

	if (!attr)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC |
				FI_TAGGED))
		return -FI_EBADFLAGS;
	if ((flags & FI_TAGGED) || (flags & FI_FETCH_ATOMIC &&
				     flags & FI_COMPARE_ATOMIC))
		return -FI_EOPNOTSUPP;
	if (d->dev->attr.atomic_cap == IBV_ATOMIC_NONE)
		return -FI_EOPNOTSUPP;
	if (flags & FI_FETCH_ATOMIC)
		kind = LFV_AMO_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = LFV_AMO_COMPARE;
	ret = lfv_amo_valid(kind, datatype, op, &count);
	if (ret)
		return ret;
	attr->count = count;
	attr->size = sizeof(uint64_t);
	return 0;
}
