/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Address vectors (fi_av(3)) of struct lfv_ud_name for DGRAM endpoints: the
 * application's calls, fi_av_open and fi_ops_av. The table they work on
 * (lfv_av.c), its layout and the meaning of an fi_addr_t are in lfv_av.h.
 *
 * Semantics chosen where fi_av(3) leaves room:
 *  - The domain must be a DGRAM one (addr_format FI_ADDR_IB_UD); AVs of
 *    other formats return -FI_ENOSYS. FI_AV_UNSPEC opens the domain's
 *    av_type, else FI_AV_TABLE; a type the domain's av_type excludes is
 *    -FI_EINVAL. attr->count sizes the first segment (0: 256 entries).
 *  - Named (shared) AVs (lfv_av_shm.c): the process that opens a name first
 *    creates it and is its only writer; FI_READ opens an existing one
 *    read-only (insert and remove: -FI_EOPNOTSUPP; no segment:
 *    -FI_ENOENT) and takes its type. A second read-write open of a name
 *    whose creator lives: -FI_ENOSYS. The table holds the segment's
 *    capacity, attr->count rounded as segment 0 (more inserts:
 *    -FI_ENOSPC); fi_addr_t values are the creator's in every process.
 *    attr->map_addr, when 0, is set to the segment's fi_addr_t array
 *    (slot i: table index i, FI_ADDR_NOTAVAIL when free), which
 *    fabtests' rdm_shared_av reads. A reader's entries follow the
 *    segment whenever it uses the AV after the creator changed it
 *    (lfv_av_shm_poll); a malformed slot is skipped and counted.
 *    FI_READ without a name: -FI_EINVAL;
 *    rx_ctx_bits up to LFV_AV_RX_CTX_BITS_MAX (scalable endpoints, see
 *    lfv_av.h; more: -FI_EINVAL); FI_SYMMETRIC is an accepted hint; other
 *    open flags than FI_EVENT: -FI_EINVAL.
 *  - With rx_ctx_bits, every address is a struct lfv_sep_name. One without
 *    LFV_SEP_MAGIC is an ordinary endpoint's name in the first 32 bytes
 *    (one receive context); a bad context count or QP number: -FI_EINVAL.
 *    fi_rx_addr() beyond the entry's receive contexts sends nowhere
 *    (lfv_av_dest: NULL). FI_SOURCE reports the entry's base fi_addr_t.
 *  - Every insert creates its own address handle; inserting a name twice
 *    gives two entries, and lfv_av_reverse finds the newer one.
 *  - Insertion tries every address (no abort after a failure); a failed one
 *    does not use up a table index. A name with QP number 0 or above 2^24
 *    is -FI_EINVAL. FI_MORE is ignored; FI_AV_USER_ID: -FI_EBADFLAGS.
 *    FI_AV_MAP inserts need the fi_addr array (-FI_EINVAL without it).
 *  - FI_EVENT: inserts run synchronously and return 0 once the events are
 *    queued: one error event per failed address (err and prov_errno the
 *    positive error, data its index in the call), then FI_AV_COMPLETE with
 *    data = the number inserted. Without a bound EQ: -FI_ENOEQ. FI_SYNC_ERR
 *    there: -FI_EBADFLAGS. If queueing an event fails (-FI_ENOMEM) the
 *    call's insertions are undone and the error is returned (error events
 *    already queued for it stay, with no FI_AV_COMPLETE after them).
 *  - fi_av_remove removes every live address given and returns -FI_EINVAL
 *    if any was not live; fi_av_lookup of a dead address is -FI_EINVAL.
 *  - fi_av_straddr: "fi_addr_ib_ud://<GID>:<QPN>/<LID>/<Q_Key>", hex, the
 *    scheme of libfabric's ofi_straddr for FI_ADDR_IB_UD up to the LID;
 *    lfverbs' name has a Q_Key where that one has a P_Key and an SL. A
 *    service name: "fi_sockaddr_in://<IPv4>:<port>" (or _in6, [IPv6]).
 *  - A service name (lfv_svc.h: from fi_getinfo(node, service), or
 *    built by fi_av_insertsvc / fi_av_insertsym in lfv_av_svc.c) is
 *    resolved to the QP name of the endpoint listening there before the
 *    lock is taken; the entry holds that QP name (fi_av_lookup returns
 *    it). A resolution that fails fails that address like a bad name,
 *    with its own error (-FI_ECONNREFUSED, -FI_EHOSTUNREACH, ...).
 *  - fi_av_set: -FI_ENOSYS.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_eq.h>

#include "lfv_av_ops.h"
#include "lfv_av_svc.h"
#include "lfv_eq.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_rdm_rx.h"
#include "lfv_rdm_shm_av.h"
#include "lfv_stubs.h"
#include "lfv_svc.h"

#define LFV_AV_OPEN_FLAGS (FI_EVENT | FI_SYMMETRIC | FI_READ)
#define LFV_AV_INSERT_FLAGS (FI_MORE | FI_SYNC_ERR)

static struct lfv_av *lfv_av_of(struct fid_av *av_fid)
{
	return lfv_container_of(av_fid, struct lfv_av, av_fid);
}

/* ---- fi_ops_av ------------------------------------------------------------ */

static int lfv_av_check_insert(const struct lfv_av *av, const void *addr,
			       size_t count, const fi_addr_t *fi_addr,
			       uint64_t flags, void *context)
{
	if (av->read_only)
		return -FI_EOPNOTSUPP;
	if (flags & ~(uint64_t)LFV_AV_INSERT_FLAGS)
		return -FI_EBADFLAGS;
	if ((flags & FI_SYNC_ERR) && (av->flags & FI_EVENT))
		return -FI_EBADFLAGS;
	if (count > INT_MAX || (count && !addr))
		return -FI_EINVAL;
	if (count && av->type == FI_AV_MAP && !fi_addr)
		return -FI_EINVAL;
	if (count && (flags & FI_SYNC_ERR) && !context)
		return -FI_EINVAL;
	return 0;
}

static int lfv_av_report_err(struct lfv_av *av, size_t i, int err,
			     void *context)
{
	struct fi_eq_err_entry entry = {
		.fid = &av->av_fid.fid,
		.context = context,
		.data = i,
		.err = -err,
		.prov_errno = -err,
	};

	return lfv_eq_push_err(av->eq, &entry);
}

static int lfv_av_insert(struct fid_av *av_fid, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	bool event = (av->flags & FI_EVENT) != 0;
	int *sync_err = (flags & FI_SYNC_ERR) ? context : NULL;
	struct lfv_av_resolved *res;
	union lfv_av_addr_buf buf;
	struct fi_eq_entry done;
	const void *one;
	uint32_t table_start;
	int ret, inserted = 0;
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	size_t i;

	ret = lfv_av_check_insert(av, addr, count, fi_addr, flags, context);
	if (ret)
		return ret;
	ret = lfv_av_resolve(av, addr, count, &res);
	if (ret)
		return ret;
	lfv_mutex_lock(&av->lock);
	if (event && !av->eq) {
		ret = -FI_ENOEQ;
		goto unlock;
	}
	table_start = av->next_index;
	for (i = 0; i < count; i++) {
		one = lfv_av_resolved_addr(av, addr, i, res, &buf, &ret);
		if (one)
			ret = lfv_av_insert_one(av, one, &fa);
		if (fi_addr)
			fi_addr[i] = ret ? FI_ADDR_NOTAVAIL : fa;
		if (sync_err)
			sync_err[i] = -ret;
		if (!ret) {
			inserted++;
		} else if (event && lfv_av_report_err(av, i, ret, context)) {
			i++;
			goto undo;
		}
	}
	ret = inserted;
	if (event) {
		done = (struct fi_eq_entry){
			.fid = &av->av_fid.fid,
			.context = context,
			.data = (uint64_t)inserted,
		};
		if (lfv_eq_push(av->eq, FI_AV_COMPLETE, &done, sizeof(done)))
			goto undo;
		ret = 0;
	}
unlock:
	lfv_mutex_unlock(&av->lock);
	free(res);
	if (inserted)
		lfv_rdm_av_inserted(av);
	return ret;

undo:
	/* The first i addresses were attempted. */
	LFV_WARN(FI_LOG_AV, "cannot queue an AV event: insert undone\n");
	lfv_av_rollback(av, fi_addr, i, count, table_start);
	lfv_mutex_unlock(&av->lock);
	free(res);
	return -FI_ENOMEM;
}

static int lfv_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			 size_t count, uint64_t flags)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	struct lfv_av_entry *e;
	int ret = 0, err;
	uint32_t idx;
	size_t i;

	if (av->read_only)
		return -FI_EOPNOTSUPP;
	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	lfv_mutex_lock(&av->lock);
	for (i = 0; i < count; i++) {
		e = lfv_av_live_locked(av, fi_addr[i], &idx);
		err = e ? lfv_av_remove_entry(av, e, idx) : -FI_EINVAL;
		if (err && !ret)
			ret = err;
	}
	lfv_mutex_unlock(&av->lock);
	return ret;
}

static int lfv_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	struct lfv_av *av = lfv_av_of(av_fid);
	struct lfv_av_entry *e;
	const void *name;
	uint32_t idx;
	size_t n;

	if (!addrlen || (*addrlen && !addr))
		return -FI_EINVAL;
	if (av->read_only)
		lfv_av_shm_poll(av);
	lfv_mutex_lock(&av->lock);
	e = lfv_av_live_locked(av, fi_addr, &idx);
	if (e) {
		name = lfv_av_entry_name(e);
		n = *addrlen < av->addrlen ? *addrlen : av->addrlen;
		if (n)
			memcpy(addr, name, n);
		*addrlen = av->addrlen;
	}
	lfv_mutex_unlock(&av->lock);
	return e ? 0 : -FI_EINVAL;
}

/* A service name reads as the address it stands for. */
static const char *lfv_av_straddr_service(const struct lfv_ud_name *name,
					  char *buf, size_t *len)
{
	char ip[INET6_ADDRSTRLEN];
	union lfv_sockaddr sa;
	int n;

	lfv_ud_name_to_sockaddr(name, &sa);
	if (sa.sa.sa_family == AF_INET)
		n = snprintf(buf, *len, "fi_sockaddr_in://%s:%u",
			     inet_ntop(AF_INET, &sa.sin.sin_addr, ip,
				       sizeof(ip)), ntohs(sa.sin.sin_port));
	else
		n = snprintf(buf, *len, "fi_sockaddr_in6://[%s]:%u",
			     inet_ntop(AF_INET6, &sa.sin6.sin6_addr, ip,
				       sizeof(ip)), ntohs(sa.sin6.sin6_port));
	if (n < 0)
		return NULL;
	*len = (size_t)n + 1;
	return buf;
}

static const char *lfv_av_straddr(struct fid_av *av_fid, const void *addr,
				  char *buf, size_t *len)
{
	char gid[INET6_ADDRSTRLEN];
	struct lfv_sep_name sep = { .nrx = 0 };
	struct lfv_ud_name name;
	int n;

	if (!av_fid || !addr || !len || (*len && !buf))
		return NULL;
	memcpy(&name, addr, sizeof(name));
	if (lfv_ud_name_is_service(&name))
		return lfv_av_straddr_service(&name, buf, len);
	if (lfv_av_of(av_fid)->rx_ctx_bits)
		memcpy(&sep, addr, sizeof(sep));
	if (!inet_ntop(AF_INET6, name.gid, gid, sizeof(gid)))
		return NULL;
	/* A scalable endpoint's name adds its context counts. */
	if (sep.magic == LFV_SEP_MAGIC)
		n = snprintf(buf, *len, "fi_addr_ib_ud://%s:%" PRIx32 "/%"
			     PRIx16 "/%" PRIx32 "/rx%u/tx%u", gid, name.qpn,
			     name.lid, name.qkey, sep.nrx, sep.ntx);
	else
		n = snprintf(buf, *len, "fi_addr_ib_ud://%s:%" PRIx32 "/%"
			     PRIx16 "/%" PRIx32, gid, name.qpn, name.lid,
			     name.qkey);
	if (n < 0)
		return NULL;
	*len = (size_t)n + 1;
	return buf;
}

static struct fi_ops_av lfv_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = lfv_av_insert,
	.insertsvc = lfv_av_insertsvc,
	.insertsym = lfv_av_insertsym,
	.remove = lfv_av_remove,
	.lookup = lfv_av_lookup,
	.straddr = lfv_av_straddr,
	.av_set = lfv_no_av_set,
};

/* ---- open ------------------------------------------------------------------ */

static bool lfv_av_domain_is_ud(const struct lfv_domain *domain)
{
	const struct fi_info *info = domain->info;

	if (info->addr_format == FI_ADDR_IB_UD)
		return true;
	return info->addr_format == FI_FORMAT_UNSPEC && info->ep_attr &&
	       info->ep_attr->type == FI_EP_DGRAM;
}

/* The av_type the domain was opened with (FI_AV_UNSPEC: either). */
static enum fi_av_type lfv_av_dom_type(const struct lfv_domain *domain)
{
	return domain->info->domain_attr ? domain->info->domain_attr->av_type :
					   FI_AV_UNSPEC;
}

static int lfv_av_check_attr(const struct lfv_domain *domain,
			     const struct fi_av_attr *attr,
			     enum fi_av_type *type)
{
	enum fi_av_type dom_type = lfv_av_dom_type(domain);

	if (!lfv_av_domain_is_ud(domain)) {
		LFV_INFO(FI_LOG_AV, "AVs exist only for FI_ADDR_IB_UD domains\n");
		return -FI_ENOSYS;
	}
	if ((attr->flags & ~(uint64_t)LFV_AV_OPEN_FLAGS) ||
	    ((attr->flags & FI_READ) && !attr->name))	/* fi_av(3) */
		return -FI_EINVAL;
	if (attr->rx_ctx_bits < 0 ||
	    attr->rx_ctx_bits > LFV_AV_RX_CTX_BITS_MAX)
		return -FI_EINVAL;
	switch (attr->type) {
	case FI_AV_UNSPEC:
		*type = dom_type == FI_AV_MAP ? FI_AV_MAP : FI_AV_TABLE;
		return 0;
	case FI_AV_MAP:
	case FI_AV_TABLE:
		if (dom_type != FI_AV_UNSPEC && dom_type != attr->type)
			return -FI_EINVAL;
		*type = attr->type;
		return 0;
	default:
		return -FI_EINVAL;
	}
}

/* log2 of segment 0's size: count rounded up, within [MIN, MAX]. */
static uint32_t lfv_av_seg0_shift(size_t count)
{
	uint32_t shift = LFV_AV_SEG0_SHIFT_MIN;

	if (!count)
		count = LFV_AV_DEFAULT_COUNT;
	while (shift < LFV_AV_SEG0_SHIFT_MAX && ((size_t)1 << shift) < count)
		shift++;
	return shift;
}

/* A named AV's segment: created with this AV's type and capacity, or
 * (FI_READ) attached, which gives the AV the creator's type and capacity. */
static int lfv_av_open_shm(struct lfv_av *av, const struct fi_av_attr *attr)
{
	struct lfv_av_shm_want want = {
		.type = av->type,
		.rx_ctx_bits = av->rx_ctx_bits,
		.addrlen = av->addrlen,
		.capacity = 1U << av->seg0_shift,
	};
	enum fi_av_type type;
	uint32_t capacity;
	int ret;

	if (!(attr->flags & FI_READ)) {
		ret = lfv_av_shm_create(attr->name, &want, &av->shm);
		if (!ret)
			av->limit = want.capacity;
		return ret;
	}
	want.type = attr->type != FI_AV_UNSPEC ? attr->type :
						 lfv_av_dom_type(av->domain);
	want.capacity = 1U << LFV_AV_SEG0_SHIFT_MAX;
	ret = lfv_av_shm_attach(attr->name, &want, &av->shm, &type, &capacity);
	if (ret)
		return ret;
	av->read_only = true;
	av->type = type;
	/* Every index is in segment 0, which exists from the start. */
	av->seg0_shift = (uint32_t)__builtin_ctz(capacity);
	av->limit = capacity;
	/* Odd, so never a seq the segment settles at: the first use
	 * brings the entries in. */
	atomic_init(&av->shm_seen, UINT64_MAX);
	return 0;
}

int lfv_av_open(struct fid_domain *domain_fid, struct fi_av_attr *attr,
		struct fid_av **av_fid, void *context)
{
	struct lfv_domain *domain;
	enum fi_av_type type;
	struct lfv_av *av;
	int ret;

	if (!domain_fid || !attr || !av_fid)
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	ret = lfv_av_check_attr(domain, attr, &type);
	if (ret)
		return ret;

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = lfv_mutex_init(&av->lock);
	if (ret)
		goto free_av;
	av->type = type;
	av->rx_ctx_bits = attr->rx_ctx_bits;
	av->base_mask = ~(fi_addr_t)0 >> attr->rx_ctx_bits;
	av->addrlen = attr->rx_ctx_bits ? sizeof(struct lfv_sep_name) :
					  sizeof(struct lfv_ud_name);
	av->seg0_shift = lfv_av_seg0_shift(attr->count);
	av->limit = LFV_AV_MAX_ENTRIES;
	av->domain = domain;
	if (attr->name) {
		ret = lfv_av_open_shm(av, attr);
		if (ret)
			goto destroy_lock;
	}
	ret = lfv_av_table_init(av, context);
	if (ret)
		goto close_shm;
	lfv_rdm_shm_av_open(av);
	av->flags = attr->flags;
	av->av_fid.ops = &lfv_av_ops;
	lfv_ref_get(&domain->ref);
	attr->type = av->type;
	if (av->shm && !attr->map_addr)
		attr->map_addr = lfv_av_shm_map_addr(av->shm);
	*av_fid = &av->av_fid;
	return 0;

close_shm:
	lfv_av_shm_close(av->shm);
destroy_lock:
	lfv_mutex_destroy(&av->lock);
free_av:
	free(av);
	return ret;
}

