/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The one place that knows which libfabric lfverbs is built against.
 *
 * lfverbs builds against the headers of libfabric 1.17 through 2.6
 * (configure finds what differs: config.h's HAVE_* below). Everything that
 * differs between them is turned here into one shape, so the rest of the
 * code has no #if on versions:
 *
 *  - where the peer interfaces are declared: rdma/fi_ext.h (1.17),
 *    rdma/providers/fi_peer.h (1.18 on);
 *  - struct fi_peer_rx_entry: the message size is `size` until 1.22 and
 *    `msg_size` from 2.0; `cq_data` exists from 1.19 (before, an entry
 *    carries no CQ data); `next`/`prev` until 2.2 (lfverbs never uses them);
 *  - struct fi_ops_srx_owner: `foreach_unspec_addr` from 1.19; `get_msg` and
 *    `get_tag` take (addr, size) and (addr, tag) until 1.22 and a
 *    struct fi_peer_match_attr from 2.0;
 *  - peer counters (struct fi_peer_cntr_context, FI_CLASS_PEER_CNTR) from
 *    1.19;
 *  - ABI values 2.x marks deprecated with a warning no flag silences
 *    (_Pragma("GCC warning")), which lfverbs still needs to answer
 *    applications of older API versions.
 *
 * Which of these layouts the plugin was built for is LFV_PEER_LAYOUT; at load
 * time lfv_peer_layout_of(fi_version()) says which one the running core
 * speaks (lfv_init.c refuses FI_PEER when they differ).
 */
#ifndef LFV_FI_COMPAT_H
#define LFV_FI_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>
#include "config.h"	/* what configure found in the headers */
#ifdef HAVE_RDMA_PROVIDERS_FI_PEER_H
#include <rdma/providers/fi_peer.h>
#endif

/* The API version of the headers: what the plugin says it speaks, so the
 * core offers it to every caller that asks for no more (fi_getinfo(3)). */
#define LFV_FI_HEADER_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* ---- deprecated ABI values ------------------------------------------------
 * The values are the ABI's and never change; on the headers that still
 * declare them without a warning, the build checks they agree. */
#define LFV_MR_UNSPEC		0
#define LFV_MR_BASIC		(1 << 0)
#define LFV_MR_SCALABLE		(1 << 1)
#define LFV_ORDER_NONE		0ULL
#define LFV_ORDER_STRICT	0x1FFULL
#define LFV_ORDER_DATA		(1ULL << 16)
#define LFV_LOCAL_MR		(1ULL << 55)
#if FI_MAJOR_VERSION < 2
_Static_assert(LFV_MR_BASIC == FI_MR_BASIC && LFV_MR_SCALABLE == FI_MR_SCALABLE &&
	       LFV_MR_UNSPEC == FI_MR_UNSPEC, "FI_MR_* values");
_Static_assert(LFV_ORDER_NONE == FI_ORDER_NONE && LFV_ORDER_STRICT == FI_ORDER_STRICT &&
	       LFV_ORDER_DATA == FI_ORDER_DATA, "FI_ORDER_* values");
_Static_assert(LFV_LOCAL_MR == FI_LOCAL_MR, "FI_LOCAL_MR value");
#endif

/* 1.x's fabric.h defines container_of, 2.x's does not (the test peers use
 * it; lfverbs itself has lfv_container_of). */
#ifndef container_of
#define container_of(ptr, type, field) \
	((type *)((char *)(ptr) - offsetof(type, field)))
#endif

/* ---- peer interface layouts ------------------------------------------------ */
enum lfv_peer_layout {
	LFV_PEER_LAYOUT_1_17 = 1,	/* 1.17-1.18: no cq_data, no foreach */
	LFV_PEER_LAYOUT_1_19,		/* 1.19-1.22: cq_data, foreach */
	LFV_PEER_LAYOUT_2_0,		/* 2.0-2.2: match attr, msg_size */
	LFV_PEER_LAYOUT_2_3,		/* 2.3 on: no next/prev */
};

#if defined(HAVE_STRUCT_FI_PEER_MATCH_ATTR) && !defined(HAVE_STRUCT_FI_PEER_RX_ENTRY_NEXT)
#define LFV_PEER_LAYOUT LFV_PEER_LAYOUT_2_3
#elif defined(HAVE_STRUCT_FI_PEER_MATCH_ATTR)
#define LFV_PEER_LAYOUT LFV_PEER_LAYOUT_2_0
#elif defined(HAVE_STRUCT_FI_PEER_RX_ENTRY_CQ_DATA)
#define LFV_PEER_LAYOUT LFV_PEER_LAYOUT_1_19
#else
#define LFV_PEER_LAYOUT LFV_PEER_LAYOUT_1_17
#endif

/* Which layout a core of API version `version` (fi_version()) speaks. */
static inline enum lfv_peer_layout lfv_peer_layout_of(uint32_t version)
{
	if (version >= FI_VERSION(2, 3))
		return LFV_PEER_LAYOUT_2_3;
	if (version >= FI_VERSION(2, 0))
		return LFV_PEER_LAYOUT_2_0;
	if (version >= FI_VERSION(1, 19))
		return LFV_PEER_LAYOUT_1_19;
	return LFV_PEER_LAYOUT_1_17;
}

/* Load-time guard (lfv_fi_compat.c): records whether the running core,
 * of API version core_version (fi_version()), speaks the peer layout the
 * plugin was built for; logs one warning when not. Returns that. */
bool lfv_peer_check_core(uint32_t core_version);
/* Whether FI_PEER objects may be opened or exported: false after a
 * mismatch, and every FI_PEER open or export is then -FI_EINVAL. */
bool lfv_peer_allowed(void);

/* What a peer asks the owner to match: the one shape of get_msg/get_tag's
 * arguments in every layout (2.x's struct fi_peer_match_attr). */
struct lfv_peer_match {
	fi_addr_t addr;
	size_t msg_size;	/* 0 where the layout's get_tag has no size */
	uint64_t tag;
};

/* FI_PEER is a capability from 2.0 (fi_getinfo(3): the provider imports
 * owner ops when opening a CQ, a counter and an SRX); before, only a flag. */
#if FI_MAJOR_VERSION >= 2
#define LFV_PEER_CAPS FI_PEER
#else
#define LFV_PEER_CAPS 0ULL
#endif

/* shm as the RDM endpoint's intra-node peer (lfv_rdm_shm.c): shm accepts
 * a peer CQ from 2.0 (1.x's shm refuses FI_PEER CQs, and its RDM info
 * offers no FI_PEER). */
#if FI_MAJOR_VERSION >= 2
#define LFV_SHM_OWNER true
#else
#define LFV_SHM_OWNER false
#endif

/* ---- peer counters (1.19 on) ------------------------------------------------
 * Before 1.19 the headers have no peer counters: the same shapes are
 * declared here so the counter code has one form, and lfv_cntr.c refuses
 * FI_PEER counters and their export there (LFV_PEER_CNTR_SUPPORTED). */
#ifdef HAVE_STRUCT_FI_PEER_CNTR_CONTEXT
#define LFV_PEER_CNTR_SUPPORTED true
#define LFV_CLASS_PEER_CNTR FI_CLASS_PEER_CNTR
#else
#define LFV_CLASS_PEER_CNTR FI_CLASS_CNTR	/* never exported there */
#define LFV_PEER_CNTR_SUPPORTED false
struct fid_peer_cntr;
struct fi_ops_cntr_owner {
	size_t size;
	void (*inc)(struct fid_peer_cntr *cntr);
	void (*incerr)(struct fid_peer_cntr *cntr);
};
struct fid_peer_cntr {
	struct fid fid;
	struct fi_ops_cntr_owner *owner_ops;
};
struct fi_peer_cntr_context {
	size_t size;
	struct fid_peer_cntr *cntr;
};
#endif

/* ---- struct fi_peer_rx_entry fields ---------------------------------------- */
static inline size_t lfv_peer_entry_size(const struct fi_peer_rx_entry *e)
{
#ifdef HAVE_STRUCT_FI_PEER_RX_ENTRY_MSG_SIZE
	return e->msg_size;
#else
	return e->size;
#endif
}

static inline void lfv_peer_entry_set_size(struct fi_peer_rx_entry *e, size_t size)
{
#ifdef HAVE_STRUCT_FI_PEER_RX_ENTRY_MSG_SIZE
	e->msg_size = size;
#else
	e->size = size;
#endif
}

/* Whether entries carry the message's CQ data (1.19 on). */
#ifdef HAVE_STRUCT_FI_PEER_RX_ENTRY_CQ_DATA
#define LFV_PEER_ENTRY_HAS_CQ_DATA true
#else
#define LFV_PEER_ENTRY_HAS_CQ_DATA false
#endif

/* The entry's CQ data, or 0 in a layout without it. */
static inline uint64_t lfv_peer_entry_cq_data(const struct fi_peer_rx_entry *e)
{
#ifdef HAVE_STRUCT_FI_PEER_RX_ENTRY_CQ_DATA
	return e->cq_data;
#else
	(void)e;
	return 0;
#endif
}

/* Sets the entry's CQ data where the layout has it (a no-op otherwise). */
static inline void lfv_peer_entry_set_cq_data(struct fi_peer_rx_entry *e, uint64_t data)
{
#ifdef HAVE_STRUCT_FI_PEER_RX_ENTRY_CQ_DATA
	e->cq_data = data;
#else
	(void)e;
	(void)data;
#endif
}

/* ---- struct fi_ops_srx_owner: the peer's calls -----------------------------
 * get_msg/get_tag of the owner ops `ops` on srx, in the one shape. */
static inline int lfv_peer_call_get(const struct fi_ops_srx_owner *ops,
				    bool tagged, struct fid_peer_srx *srx,
				    const struct lfv_peer_match *m,
				    struct fi_peer_rx_entry **entry)
{
#ifdef HAVE_STRUCT_FI_PEER_MATCH_ATTR
	struct fi_peer_match_attr attr = {
		.addr = m->addr, .msg_size = m->msg_size, .tag = m->tag,
	};

	return tagged ? ops->get_tag(srx, &attr, entry) :
			ops->get_msg(srx, &attr, entry);
#else
	return tagged ? ops->get_tag(srx, m->addr, m->tag, entry) :
			ops->get_msg(srx, m->addr, m->msg_size, entry);
#endif
}

static inline int lfv_peer_get_msg(struct fid_peer_srx *srx,
				   const struct lfv_peer_match *m,
				   struct fi_peer_rx_entry **entry)
{
	return lfv_peer_call_get(srx->owner_ops, false, srx, m, entry);
}

static inline int lfv_peer_get_tag(struct fid_peer_srx *srx,
				   const struct lfv_peer_match *m,
				   struct fi_peer_rx_entry **entry)
{
	return lfv_peer_call_get(srx->owner_ops, true, srx, m, entry);
}

/* ---- struct fi_ops_srx_owner: the owner's side ------------------------------
 * LFV_PEER_OWNER_GET(name, impl) defines `name` with the layout's get_msg /
 * get_tag signature, calling impl(srx, &match, entry) with the one shape. */
#ifdef HAVE_STRUCT_FI_PEER_MATCH_ATTR
#define LFV_PEER_OWNER_GET(name, impl)						\
	static int name(struct fid_peer_srx *srx,				\
			struct fi_peer_match_attr *attr,			\
			struct fi_peer_rx_entry **entry)			\
	{									\
		const struct lfv_peer_match m = {				\
			.addr = attr->addr, .msg_size = attr->msg_size,	\
			.tag = attr->tag,					\
		};								\
		return impl(srx, &m, entry);					\
	}
#define LFV_PEER_OWNER_GET_MSG(name, impl) LFV_PEER_OWNER_GET(name, impl)
#define LFV_PEER_OWNER_GET_TAG(name, impl) LFV_PEER_OWNER_GET(name, impl)
#else
/* Before 2.0: get_msg's third argument is the size, get_tag's the tag. */
#define LFV_PEER_OWNER_GET_1X(name, impl, type, field)			\
	static int name(struct fid_peer_srx *srx, fi_addr_t addr, type arg,	\
			struct fi_peer_rx_entry **entry)			\
	{									\
		const struct lfv_peer_match m = { .addr = addr, .field = arg };	\
		return impl(srx, &m, entry);					\
	}
#define LFV_PEER_OWNER_GET_MSG(name, impl)					\
	LFV_PEER_OWNER_GET_1X(name, impl, size_t, msg_size)
#define LFV_PEER_OWNER_GET_TAG(name, impl)					\
	LFV_PEER_OWNER_GET_1X(name, impl, uint64_t, tag)
#endif

/* The owner ops' foreach_unspec_addr slot (1.19 on): a designated
 * initialiser, or nothing where the layout has no such slot. */
#ifdef HAVE_STRUCT_FI_OPS_SRX_OWNER_FOREACH_UNSPEC_ADDR
#define LFV_PEER_OWNER_FOREACH_SLOT(fn) .foreach_unspec_addr = (fn),
#define LFV_PEER_OWNER_HAS_FOREACH true
/* Calls an owner's foreach_unspec_addr, when it has one. */
#define LFV_PEER_OWNER_FOREACH_CALL(ps, fn)					\
	do {									\
		if ((ps)->owner_ops->foreach_unspec_addr)			\
			(ps)->owner_ops->foreach_unspec_addr((ps), (fn));	\
	} while (0)
#else
#define LFV_PEER_OWNER_FOREACH_SLOT(fn)
#define LFV_PEER_OWNER_HAS_FOREACH false
#define LFV_PEER_OWNER_FOREACH_CALL(ps, fn) do { (void)(ps); (void)(fn); } while (0)
#endif

#endif /* LFV_FI_COMPAT_H */
