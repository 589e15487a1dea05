/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every endpoint has, whatever its type (MSG and DGRAM in lfv_msg_ep.c,
 * RDM in lfv_rdm.c, scalable in lfv_sep.c): the fid_ep and its ops
 * tables, the domain and fi_info it was opened with, the CQs, counters
 * and AV bound to it, its default operation flags, and the aliases
 * (fi_ep_alias) that share it. Each endpoint type embeds a struct
 * lfv_ep_base as its member "base", gives lfv_ep_base_init its own static
 * struct lfv_ep_type (ops tables and what it may bind), and sends
 * fi_ep_bind and fi_control here for what the base holds.
 *
 * Locking: the base's fields are written before fi_enable (binds; each
 * type's bind refuses once enabled) or by fi_control (op flags), and read
 * after; the application serialises set-up calls on an
 * endpoint (fi_endpoint(3)), so none takes a lock.
 */
#ifndef LFV_EP_BASE_H
#define LFV_EP_BASE_H

#include <stdbool.h>
#include <stdint.h>

#include <sys/uio.h>

#include <infiniband/verbs.h>
#include <rdma/fi_endpoint.h>

#include "lfv_atomic.h"
#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_list.h"

struct lfv_domain;
struct lfv_av;

/* What one transmit call asks for. */
struct lfv_tx_req {
	const struct iovec *iov;
	void **desc;
	size_t count;
	uint64_t data;
	fi_addr_t dest;
	void *context;
	uint64_t flags;			/* operation flags (FI_INJECT, ...) */
	uint64_t comp_flags;		/* FI_SEND | FI_MSG, FI_RMA | ... */
	bool no_report;			/* never a CQ entry (atomic inject) */
};

/* The request of fi_inject and its kin (fi_injectdata, fi_inject_write,
 * fi_inject_writedata): one buffer, no descriptor, never a CQ entry. */
static inline struct lfv_tx_req lfv_inject_req(const struct iovec *iov,
					       fi_addr_t dest, uint64_t data,
					       uint64_t flags,
					       uint64_t comp_flags)
{
	return (struct lfv_tx_req){
		.iov = iov, .count = 1, .data = data, .dest = dest,
		.flags = FI_INJECT | flags, .comp_flags = comp_flags,
		.no_report = true,
	};
}

/* One fi_rma or fi_atomic operation, decoded (lfv_rma.c, lfv_amo.c) for
 * the transport that posts it: wr has the opcode and the remote side
 * (address, key, atomic operands); the local memory is r's iovs, the
 * result of an atomic (none: nobody wants it). The transport sets the
 * SGEs, and the immediate data of a write with remote CQ data. */
struct lfv_rma_req {
	struct lfv_tx_req r;
	struct ibv_send_wr wr;
	uint64_t key;			/* as given: checked to fit */
};


/* The counters an endpoint may bind, by fi_ep_bind flag. */
enum lfv_cntr_kind {
	LFV_CNTR_SEND,			/* FI_SEND */
	LFV_CNTR_RECV,			/* FI_RECV */
	LFV_CNTR_READ,			/* FI_READ */
	LFV_CNTR_WRITE,			/* FI_WRITE */
	LFV_CNTR_RREAD,			/* FI_REMOTE_READ */
	LFV_CNTR_RWRITE,		/* FI_REMOTE_WRITE */
	LFV_CNTR_KINDS
};

/* What an endpoint type binds beyond CQs and counters (struct
 * lfv_ep_type.binds). */
#define LFV_EP_BINDS_CQ		(1u << 0)
#define LFV_EP_BINDS_CNTR	(1u << 1)
#define LFV_EP_BINDS_AV		(1u << 2)
/* CQs opened with FI_PEER too: every completion of the type goes through
 * lfv_cq_write*, which forward to the owner (RDM). MSG and DGRAM translate
 * verbs completions straight into the reader's buffer: not there. */
#define LFV_EP_BINDS_PEER_CQ	(1u << 4)
/* fi_ep_alias (FI_ALIAS) makes aliases of it. */
#define LFV_EP_ALIASES		(1u << 3)

/* One endpoint type: its ops tables and what fi_ep_bind takes. MSG's and
 * DGRAM's each come with a struct lfv_ep_kind (lfv_ep.h): the hooks of
 * the paths they share. */
struct lfv_ep_type {
	struct fi_ops *fi;
	struct fi_ops_ep *ep;
	struct fi_ops_cm *cm;
	struct fi_ops_msg *msg;
	struct fi_ops_rma *rma;
	struct fi_ops_tagged *tagged;
	struct fi_ops_atomic *atomic;
	uint32_t binds;			/* LFV_EP_BINDS_*, LFV_EP_ALIASES */
	/* Posts one decoded fi_rma / fi_atomic (lfv_rma.c builds it):
	 * each transport its own way. NULL where rma is lfv_no_rma_ops. */
	ssize_t (*rma_post)(struct fid_ep *ep_fid, struct lfv_rma_req *req);
};

struct lfv_ep_base {
	struct fid_ep ep_fid;
	const struct lfv_ep_type *type;
	struct lfv_domain *domain;	/* a reference */
	struct fi_info *info;		/* ours (a copy) */
	struct lfv_cq *tx_cq, *rx_cq;	/* a reference each */
	bool tx_selective, rx_selective;	/* FI_SELECTIVE_COMPLETION */
	struct lfv_cntr *cntr[LFV_CNTR_KINDS];	/* a reference each */
	struct lfv_av *av;		/* held (lfv_av_hold) */
	uint64_t tx_op_flags, rx_op_flags;	/* fi_control(FI_*OPSFLAG) */
	lfv_atomic32_t ref;		/* 1 + aliases */
};

/*
 * fi_ep_alias: another fid_ep for the same endpoint with its own default
 * operation flags. Every call on it reaches the endpoint's functions,
 * which find the endpoint (and the flags) through lfv_ep_base_of and
 * lfv_ep_op_flags.
 */
struct lfv_alias {
	struct fid_ep ep_fid;
	struct lfv_ep_base *base;
	uint64_t tx_op_flags;
	uint64_t rx_op_flags;
};

extern struct fi_ops lfv_alias_fi_ops;

static inline bool lfv_is_alias(const struct fid *fid)
{
	return fid->ops == &lfv_alias_fi_ops;
}

/* The endpoint behind an lfverbs endpoint fid: its own, or the alias's. */
static inline struct lfv_ep_base *lfv_ep_base_of(struct fid *fid)
{
	if (lfv_is_alias(fid))
		return lfv_container_of(fid, struct lfv_alias,
					ep_fid.fid)->base;
	return lfv_container_of(fid, struct lfv_ep_base, ep_fid.fid);
}

/* The default operation flags of the fid the call came through. */
static inline uint64_t lfv_ep_op_flags(struct fid_ep *ep_fid, bool tx)
{
	const struct lfv_alias *a;
	const struct lfv_ep_base *b;

	if (lfv_is_alias(&ep_fid->fid)) {
		a = lfv_container_of(ep_fid, struct lfv_alias, ep_fid);
		return tx ? a->tx_op_flags : a->rx_op_flags;
	}
	b = lfv_container_of(ep_fid, struct lfv_ep_base, ep_fid);
	return tx ? b->tx_op_flags : b->rx_op_flags;
}

/* Copies info, sets up the fid (class FI_CLASS_EP, the type's tables,
 * no collectives), takes the op flags from info and a reference on the
 * domain. Undone by lfv_ep_base_fini. */
int lfv_ep_base_init(struct lfv_ep_base *base, struct lfv_domain *domain,
		     const struct fi_info *info, const struct lfv_ep_type *type,
		     void *context);
/* Puts back every binding, the domain and the fi_info. */
void lfv_ep_base_fini(struct lfv_ep_base *base);

/* fi_ep_bind of a CQ, a counter or an AV, as the type allows; anything
 * else is -FI_EINVAL (the type's bind handles its own classes first). */
int lfv_ep_base_bind(struct lfv_ep_base *base, struct fid *bfid,
		     uint64_t flags);
/* fi_control's FI_GETOPSFLAG, FI_SETOPSFLAG and (LFV_EP_ALIASES)
 * FI_ALIAS; -FI_ENOSYS for other commands. */
int lfv_ep_base_control(struct lfv_ep_base *base, int command, void *arg);

/* A queue's size: what the application asked for, else the default, at
 * most what the device allows. */
static inline size_t lfv_ep_pick_size(size_t asked, size_t dflt, size_t max)
{
	size_t v = asked ? asked : dflt;

	return v < max ? v : max;
}

/* Copies a name out as fi_getname(3) says (-FI_ETOOSMALL with the size). */
int lfv_copy_name(const void *name, size_t len, void *addr, size_t *addrlen);
/* A size_t option's value, as fi_getopt returns it (optval and optlen
 * checked by the caller). */
int lfv_opt_size(size_t value, void *optval, size_t *optlen);

#endif /* LFV_EP_BASE_H */
