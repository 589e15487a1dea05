/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory registration. mr_mode is FI_MR_LOCAL | FI_MR_VIRT_ADDR |
 * FI_MR_ALLOCATED | FI_MR_PROV_KEY: one contiguous buffer per region, the
 * rkey is the key, and fi_mr_desc() is the lfv_mr itself (data operations
 * take the lkey from it).
 *
 * FI_RMA_EVENT: an RDMA read or write never reaches the target's CPU. In a
 * domain opened with FI_RMA_EVENT every region takes a slot in the
 * domain's event table, and its key carries LFV_KEY_EVENT and that slot
 * (lfv_prov.h). An initiator that sees the bit follows each access with
 * an announcement on the same RC queue pair (lfv_msg_rma.c for MSG,
 * lfv_rdm_rma.c for RDM); the target's receive path hands it to
 * lfv_mr_event, which finds the region, checks what the peer claims and
 * counts the counters bound with fi_mr_bind.
 */
#include <stdlib.h>

#include "lfv_cntr.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_mr.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_stubs.h"

#define LFV_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
		       FI_REMOTE_READ | FI_REMOTE_WRITE)

int lfv_mr_access_to_ibv(uint64_t access, const struct ibv_device_attr *attr,
			 int *ibv_access)
{
	/* Receives and RDMA read targets write locally; remote write needs
	 * local write too, so LOCAL_WRITE is always on. */
	int flags = IBV_ACCESS_LOCAL_WRITE;

	if (access & ~(uint64_t)LFV_MR_ACCESS)
		return -FI_EINVAL;
	if (access & FI_REMOTE_READ)
		flags |= IBV_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE) {
		flags |= IBV_ACCESS_REMOTE_WRITE;
		if (attr->atomic_cap != IBV_ATOMIC_NONE)
			flags |= IBV_ACCESS_REMOTE_ATOMIC;
	}
	*ibv_access = flags;
	return 0;
}

/* ---- the event table (FI_RMA_EVENT domains) -------------------------------- */

int lfv_domain_events_init(struct lfv_domain *domain)
{
	domain->rma_event = domain->info->caps & FI_RMA_EVENT;
	return -pthread_mutex_init(&domain->ev_lock, NULL);
}

void lfv_domain_events_fini(struct lfv_domain *domain)
{
	free(domain->ev_mrs);
	domain->ev_mrs = NULL;
	domain->ev_cap = 0;
	pthread_mutex_destroy(&domain->ev_lock);
}

/* A free slot for mr, the table doubling when full (ev_lock held). */
static int lfv_ev_slot_take(struct lfv_domain *domain, struct lfv_mr *mr)
{
	struct lfv_mr **grown;
	uint32_t i, cap;

	for (i = 0; i < domain->ev_cap; i++) {
		uint32_t at = (domain->ev_next + i) % domain->ev_cap;

		if (!domain->ev_mrs[at]) {
			domain->ev_mrs[at] = mr;
			mr->ev_index = at;
			domain->ev_next = at + 1;
			return 0;
		}
	}
	cap = domain->ev_cap ? domain->ev_cap * 2 : 64;
	if (cap > LFV_KEY_INDEX_MAX + 1)
		return -FI_ENOSPC;
	grown = realloc(domain->ev_mrs, cap * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	for (i = domain->ev_cap; i < cap; i++)
		grown[i] = NULL;
	domain->ev_next = domain->ev_cap;
	domain->ev_mrs = grown;
	domain->ev_cap = cap;
	return lfv_ev_slot_take(domain, mr);
}

static int lfv_ev_add(struct lfv_mr *mr)
{
	struct lfv_domain *domain = mr->domain;
	int ret;

	pthread_mutex_lock(&domain->ev_lock);
	ret = lfv_ev_slot_take(domain, mr);
	pthread_mutex_unlock(&domain->ev_lock);
	return ret;
}

/* Takes mr out of the table, so that no announcement counts it any more,
 * and lets its counters go. */
static void lfv_ev_remove(struct lfv_mr *mr)
{
	struct lfv_domain *domain = mr->domain;

	pthread_mutex_lock(&domain->ev_lock);
	domain->ev_mrs[mr->ev_index] = NULL;
	pthread_mutex_unlock(&domain->ev_lock);
	if (mr->rrd_cntr)
		lfv_ref_put(&mr->rrd_cntr->ref);
	if (mr->rwr_cntr)
		lfv_ref_put(&mr->rwr_cntr->ref);
	mr->rrd_cntr = mr->rwr_cntr = NULL;
}

static bool lfv_ev_range_ok(const struct ibv_mr *ibv_mr, uint64_t addr,
			    uint64_t len)
{
	uint64_t start = (uintptr_t)ibv_mr->addr;

	if (len > ibv_mr->length)
		return false;
	if (addr == UINT64_MAX)
		return true;
	return addr >= start && addr - start <= ibv_mr->length - len;
}

int lfv_mr_event(struct lfv_domain *domain, uint32_t index, int64_t rkey,
		 uint64_t addr, uint64_t len, uint64_t flags)
{
	struct lfv_mr *mr;
	int ret = -FI_EINVAL;

	pthread_mutex_lock(&domain->ev_lock);
	mr = index < domain->ev_cap ? domain->ev_mrs[index] : NULL;
	if (mr && (rkey < 0 || (uint32_t)rkey == mr->ibv_mr->rkey) &&
	    lfv_ev_range_ok(mr->ibv_mr, addr, len)) {
		lfv_cntr_count((flags & FI_REMOTE_READ) ? mr->rrd_cntr :
			       mr->rwr_cntr, true);
		ret = 0;
	}
	pthread_mutex_unlock(&domain->ev_lock);
	if (ret)
		lfv_drop(&domain->fabric->drops, FI_LFVERBS_DROP_MALFORMED,
			 "an RMA event that names no region of the domain");
	return ret;
}

/* fi_mr_bind of a counter: it counts the region's remote accesses, which
 * only regions of FI_RMA_EVENT domains see. */
static int lfv_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfv_mr *mr = lfv_container_of(fid, struct lfv_mr, mr_fid.fid);
	struct lfv_domain *domain = mr->domain;
	struct lfv_cntr *cntr;
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	/* Endpoints (FI_MR_ENDPOINT) are not lfverbs' mode. */
	if (bfid->fclass != FI_CLASS_CNTR || !domain->rma_event)
		return -FI_ENOSYS;
	if (!flags || (flags & ~(uint64_t)(FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	cntr = lfv_cntr_from_fid(lfv_container_of(bfid, struct fid_cntr, fid));
	pthread_mutex_lock(&domain->ev_lock);
	if (((flags & FI_REMOTE_READ) && mr->rrd_cntr) ||
	    ((flags & FI_REMOTE_WRITE) && mr->rwr_cntr)) {
		ret = -FI_EINVAL;	/* one counter per kind */
	} else {
		if (flags & FI_REMOTE_READ) {
			mr->rrd_cntr = cntr;
			lfv_ref_get(&cntr->ref);
		}
		if (flags & FI_REMOTE_WRITE) {
			mr->rwr_cntr = cntr;
			lfv_ref_get(&cntr->ref);
		}
	}
	pthread_mutex_unlock(&domain->ev_lock);
	if (ret)
		return ret;
	/* Waiting on the counter must poll where announcements arrive. */
	lfv_cntr_set_progress(cntr, domain->progress);
	return 0;
}

static int lfv_mr_close(struct fid *fid)
{
	struct lfv_mr *mr = lfv_container_of(fid, struct lfv_mr, mr_fid.fid);
	int ret;

	ret = lfv_verbs_ret(ibv_dereg_mr(mr->ibv_mr));
	if (ret) {
		LFV_WARN(FI_LOG_MR, "ibv_dereg_mr: %s\n", fi_strerror(-ret));
		return ret;
	}
	if (mr->domain->rma_event)
		lfv_ev_remove(mr);
	lfv_ref_put(&mr->domain->ref);
	free(mr);
	return 0;
}

static struct fi_ops lfv_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_mr_close,
	.bind = lfv_mr_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

/* Every registration lfverbs makes: the access is whatever the caller
 * computed (ibv_reg_mr would pick another entry point when it is a
 * constant). */
static struct ibv_mr *lfv_reg_mr(struct lfv_domain *domain, void *addr,
				 size_t len, int ibv_access)
{
	return ibv_reg_mr_iova2(domain->pd, addr, len, (uintptr_t)addr,
				(unsigned int)ibv_access);
}

static struct lfv_domain *lfv_domain_from(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_DOMAIN)
		return NULL;
	return lfv_container_of(fid, struct lfv_domain, domain_fid.fid);
}

static int lfv_mr_check_attr(const struct lfv_domain *domain,
			     const struct fi_mr_attr *attr, uint64_t flags)
{
	/* FI_RMA_EVENT says a counter will be bound: every region of an
	 * FI_RMA_EVENT domain is ready for that. */
	if (flags & ~(uint64_t)(domain->rma_event ? FI_RMA_EVENT : 0))
		return -FI_EBADFLAGS;
	if (attr->iov_count != 1 || !attr->mr_iov)
		return -FI_EINVAL;
	if (!attr->mr_iov[0].iov_base && attr->mr_iov[0].iov_len)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM || attr->auth_key_size ||
	    attr->auth_key)
		return -FI_EINVAL;
	return 0;
}

static int lfv_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **mr_fid)
{
	struct lfv_domain *domain = lfv_domain_from(fid);
	int ibv_access, ret;
	struct lfv_mr *mr;

	if (!domain || !attr || !mr_fid)
		return -FI_EINVAL;
	ret = lfv_mr_check_attr(domain, attr, flags);
	if (ret)
		return ret;
	/* Remote access only as asked, in RDM domains too: a rendezvous
	 * send from a region without FI_REMOTE_READ registers its buffer
	 * for that send alone (lfv_rdm_rndv_src). */
	ret = lfv_mr_access_to_ibv(attr->access, &domain->dev->attr,
				   &ibv_access);
	if (ret)
		return ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->ibv_mr = lfv_reg_mr(domain, attr->mr_iov[0].iov_base,
				attr->mr_iov[0].iov_len, ibv_access);
	if (!mr->ibv_mr) {
		ret = lfv_verbs_errno();
		LFV_INFO(FI_LOG_MR, "ibv_reg_mr: %s\n", fi_strerror(-ret));
		goto free_mr;
	}
	mr->domain = domain;
	mr->access = attr->access;
	ret = domain->rma_event ? lfv_ev_add(mr) : 0;
	if (ret)
		goto dereg_mr;
	lfv_fid_init(&mr->mr_fid.fid, FI_CLASS_MR,
		     attr->context, &lfv_mr_fi_ops);
	mr->mr_fid.mem_desc = mr;
	mr->mr_fid.key = mr->ibv_mr->rkey;
	if (domain->rma_event)
		mr->mr_fid.key |= LFV_KEY_EVENT |
				  ((uint64_t)mr->ev_index << 32);
	lfv_ref_get(&domain->ref);
	*mr_fid = &mr->mr_fid;
	return 0;

dereg_mr:
	ibv_dereg_mr(mr->ibv_mr);
free_mr:
	free(mr);
	return ret;
}

static int lfv_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return lfv_mr_regattr(fid, &attr, flags, mr);
}

static int lfv_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return lfv_mr_regv(fid, &iov, 1, access, offset, requested_key, flags,
			   mr, context);
}

struct fi_ops_mr lfv_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = lfv_mr_reg,
	.regv = lfv_mr_regv,
	.regattr = lfv_mr_regattr,
};

/* ---- registrations of application memory (RDM) -------------------------- */

/* What each use needs. A read target and a receive are written by the
 * device; a rendezvous source is only read, by the peer (no local write:
 * read-only memory can be sent too). */
static int lfv_reg_access(enum lfv_reg_use use)
{
	if (use == LFV_REG_REMOTE_READ)
		return IBV_ACCESS_REMOTE_READ;
	if (use == LFV_REG_REMOTE_WRITE)	/* verbs wants local write too */
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	return IBV_ACCESS_LOCAL_WRITE;
}

/* The cache's registrations outlive their transfers: local access only,
 * so that no peer can reach cached pages. */
static void *lfv_cache_reg(void *ctx, void *addr, size_t len, int *err)
{
	struct lfv_domain *domain = ctx;
	struct ibv_mr *mr = lfv_reg_mr(domain, addr, len,
				       lfv_reg_access(LFV_REG_LOCAL));

	if (!mr)
		*err = lfv_verbs_errno();
	return mr;
}

static void lfv_cache_dereg(void *ctx, void *handle)
{
	(void)ctx;
	if (ibv_dereg_mr(handle))
		LFV_WARN(FI_LOG_MR, "ibv_dereg_mr of a cached registration "
			 "failed\n");
}

static const struct lfv_mr_cache_ops lfv_cache_ops = {
	.reg = lfv_cache_reg,
	.dereg = lfv_cache_dereg,
};

/* The domain's cache, if the parameter wants one and the kernel can tell
 * when memory goes away (userfaultfd). */
void lfv_domain_cache_open(struct lfv_domain *domain)
{
	domain->mr_cache_on = lfv_params.mr_cache &&
		!lfv_mr_cache_init(&domain->mr_cache, &lfv_cache_ops, domain,
				   lfv_params.mr_cache);
}

void lfv_domain_cache_close(struct lfv_domain *domain)
{
	if (domain->mr_cache_on)
		lfv_mr_cache_fini(&domain->mr_cache);
	domain->mr_cache_on = false;
}

int lfv_reg_get(struct lfv_domain *domain, void *addr, size_t len,
		enum lfv_reg_use use, struct lfv_reg *reg)
{
	struct lfv_mr_entry *ent;
	struct ibv_mr *mr;
	int ret = 0;

	if (use == LFV_REG_LOCAL && domain->mr_cache_on) {
		ent = lfv_mr_cache_get(&domain->mr_cache, addr, len, &ret);
		if (ent) {
			reg->ent = ent;
			reg->mr = ent->handle;
			return 0;
		}
	}
	/* Remote access, no cache, or memory the cache cannot watch: this
	 * transfer's own, deregistered when it ends (lfv_reg_put). */
	mr = lfv_reg_mr(domain, addr, len, lfv_reg_access(use));
	if (!mr)
		return lfv_verbs_errno();
	reg->ent = NULL;
	reg->mr = mr;
	return 0;
}

void lfv_reg_put(struct lfv_domain *domain, struct lfv_reg *reg)
{
	if (reg->ent)
		lfv_mr_cache_put(&domain->mr_cache, reg->ent);
	else if (reg->mr)
		ibv_dereg_mr(reg->mr);
	reg->ent = NULL;
	reg->mr = NULL;
}
