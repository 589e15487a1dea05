/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The ibverbs transport: devices, getinfo, fabric, domain, MR. */
#ifndef LFV_PROV_H
#define LFV_PROV_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "lfv_atomic.h"
#include "lfv_drop.h"
#include "lfv_list.h"
#include "lfv_mr_cache.h"
#include "lfv_poller.h"
#include "lfv_progress.h"

#define LFV_PROV_NAME "lfverbs"
#define LFV_FI_VERSION FI_VERSION(1, 17)
#define LFV_MAX_ADDRS 16
#define LFV_NAME_MAX 64

/* Capability classes from fi_getinfo(3). */
#define LFV_PRIMARY_CAPS                                                   \
	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST |          \
	 FI_NAMED_RX_CTX | FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_HMEM |  \
	 FI_COLLECTIVE)
#define LFV_CAP_MODIFIERS                                                  \
	(FI_READ | FI_WRITE | FI_RECV | FI_SEND | FI_REMOTE_READ |         \
	 FI_REMOTE_WRITE)
#define LFV_SECONDARY_CAPS                                                 \
	(FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_SHARED_AV |         \
	 FI_TRIGGER | FI_FENCE | FI_LOCAL_COMM | FI_REMOTE_COMM |          \
	 FI_SOURCE_ERR | FI_RMA_PMEM)

/*
 * What each endpoint type can do today. Later work widens these; getinfo
 * never advertises more than is listed here.
 */
#define LFV_MSG_CAPS (FI_MSG | FI_RMA | FI_ATOMIC | FI_SEND | FI_RECV |    \
		      FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | \
		      FI_FENCE | FI_MULTI_RECV | FI_LOCAL_COMM |              \
		      FI_REMOTE_COMM | FI_RMA_EVENT)
/* RDM (lfv_rdm*.c): messages, tagged messages, RMA and atomics;
 * multi-receive buffers are the SRX's (src/lfv_peer_srx.c). */
#define LFV_RDM_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_SOURCE | \
		      FI_DIRECTED_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM |     \
		      FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |               \
		      FI_REMOTE_READ | FI_REMOTE_WRITE | FI_FENCE |           \
		      FI_MULTI_RECV | FI_SOURCE_ERR | FI_SHARED_AV |            \
		      FI_RMA_EVENT)
/* The largest RDM message (within the device's largest registration). */
#define LFV_RDM_MAX_MSG ((size_t)1 << 40)
/* RDM iov limits (payloads are copied through provider buffers). */
#define LFV_RDM_MAX_IOV 4
/* An RDM message: header, then the payload (lfv_rdm_proto.h). */
#define LFV_RDM_HDR_SIZE 24
/* Every bit of an RDM tag is matched (fi_tagged(3)'s generic format). */
#define LFV_RDM_TAG_FORMAT 0xaaaaaaaaaaaaaaaaULL
#define LFV_DGRAM_CAPS (FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | \
			FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV)

/* mr_mode bits lfverbs needs from every application (fi_mr(3)). */
#define LFV_MR_MODE (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
		     FI_MR_PROV_KEY)

/* FI_ADDR_IB_UD name of a UD endpoint: the GID, QP number and Q_Key.
 * qpn 0 in a getinfo src_addr means "any QP on this port". With
 * LFV_UD_NAME_SERVICE in flags it is a service name instead: gid is an IP
 * address and port a port (lfv_svc.h). */
struct lfv_ud_name {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint16_t port;			/* network order; service names */
	uint8_t flags;			/* LFV_UD_NAME_SERVICE */
	uint8_t pad[3];
};
_Static_assert(sizeof(struct lfv_ud_name) == 4 * sizeof(uint64_t),
	       "FI_ADDR_IB_UD is documented as uint64_t[4]");

/*
 * The name of a scalable DGRAM endpoint (lfv_sep.c): every context is a UD
 * QP of its own. base is the name of receive context 0, so its first 32
 * bytes are an ordinary FI_ADDR_IB_UD name that reaches context 0; the rest
 * lists every receive context (fi_rx_addr targets) and every transmit
 * context (to map a sender back to the endpoint for FI_SOURCE). AVs opened
 * with rx_ctx_bits > 0 take addresses of this size.
 */
#define LFV_SEP_MAX_CTX 16
#define LFV_SEP_MAGIC 0x6c667365u	/* "lfse" */

struct lfv_sep_name {
	struct lfv_ud_name base;
	uint32_t magic;			/* LFV_SEP_MAGIC */
	uint16_t nrx, ntx;		/* 1..LFV_SEP_MAX_CTX each */
	uint32_t rx_qpn[LFV_SEP_MAX_CTX];
	uint32_t tx_qpn[LFV_SEP_MAX_CTX];
};

union lfv_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr_storage ss;
};

/* An IP address through which rdma_cm reaches a device port. */
struct lfv_addr {
	union lfv_sockaddr addr;
	uint8_t port_num;
	char fabric_name[LFV_NAME_MAX];	/* its subnet, e.g. 10.0.0.0/24 */
};

struct lfv_device {
	char name[LFV_NAME_MAX];
	struct ibv_device *ibdev;
	struct ibv_device_attr attr;
	uint8_t port_num;		/* first active port */
	struct ibv_port_attr port_attr;
	union ibv_gid gid;		/* GID index 0 of that port */
	uint32_t max_inline;		/* probed: not in ibv_device_attr */
	int locality;			/* 0 nearest to the caller */
	struct lfv_addr addrs[LFV_MAX_ADDRS];
	size_t naddrs;
};

struct lfv_device_table {
	struct ibv_device **list;	/* kept open: lfv_device.ibdev points in */
	struct lfv_device *devs;
	size_t count;
};

/* Discovers devices once (thread-safe) and caches them until cleanup. */
int lfv_devices_get(const struct lfv_device_table **table);
const struct lfv_device *lfv_device_find(const char *name);
void lfv_devices_release(void);

/* Orders devices nearest to the calling thread's CPU set first. */
void lfv_devices_sort_by_locality(struct lfv_device *devs, size_t count);
/* Stable sort by the locality field (0 first); ties keep their order. */
void lfv_devices_sort(struct lfv_device *devs, size_t count);

/* Asks rdma_cm which device and source address route to dst. */
int lfv_route_lookup(const struct sockaddr *dst, char *dev_name,
		     size_t name_len, union lfv_sockaddr *src);

size_t lfv_sockaddr_len(const struct sockaddr *sa);

/* getinfo: templates, hint checks and narrowing. */
int lfv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
struct fi_info *lfv_info_template(const struct lfv_device *dev,
				  enum fi_ep_type type,
				  const struct lfv_addr *addr,
				  uint32_t version);
bool lfv_info_fits(const struct fi_info *prov, const struct fi_info *hints,
		   uint32_t version);

/* Objects. */
struct lfv_fabric {
	struct fid_fabric fabric_fid;
	lfv_atomic32_t ref;		/* 1 + open domains, EQs, PEPs */
	uint32_t api_version;
	char name[LFV_NAME_MAX];
	/* rdma_cm (lfv_cm.c): ids start on this channel, which nobody
	 * reads, and move to their EQ's channel when bound. cm_lock orders
	 * event dispatch against endpoints changing state or closing. */
	pthread_mutex_t cm_lock;
	struct rdma_event_channel *cm_channel;
	/* FI_PROGRESS_AUTO control progress: a thread reads the channels of
	 * EQs that such objects bind to (started on first need). */
	pthread_mutex_t cm_auto_lock;	/* cm_auto_sources */
	struct lfv_list cm_auto_sources;
	struct lfv_poller cm_poller;
	struct lfv_drops drops;		/* what its peers sent that failed */
};

struct lfv_domain {
	struct fid_domain domain_fid;
	lfv_atomic32_t ref;		/* 1 + MRs, CQs, counters, AVs, EPs */
	struct lfv_fabric *fabric;
	const struct lfv_device *dev;
	struct ibv_context **cm_devs;	/* rdma_get_devices: ctx is one */
	struct ibv_context *ctx;	/* rdma_cm's: QPs from rdma_cm ids */
	struct ibv_pd *pd;
	struct fi_info *info;
	bool locked;			/* threading needs internal locks */
	bool poll_all_cqs;		/* not FI_THREAD_COMPLETION: a CQ's
					 * progress polls its endpoints' others */
	pthread_mutex_t vcq_lock;	/* vcqs, rdm_eps */
	struct lfv_list vcqs;		/* every verbs CQ, for counters */
	struct lfv_list rdm_eps;	/* RDM endpoints, for their timers */
	bool progress_auto;		/* FI_PROGRESS_AUTO data progress */
	/* What reading a counter or fi_poll set runs: polls the domain's
	 * verbs CQs (lfv_domain_progress, set by fi_domain). Objects below
	 * the domain's reach it through here, not by name. */
	struct lfv_progress_hook progress;
	/* The progress thread (lfv_auto.c), started on first need. */
	struct lfv_poller auto_poller;
	/* RDM domains: registrations of application memory (lfv_mr.c). */
	struct lfv_mr_cache mr_cache;
	bool mr_cache_on;
	/* FI_RMA_EVENT (lfv_mr.c): the domain's regions by event index,
	 * so that a peer's announcement of an access finds its region. */
	bool rma_event;			/* opened with FI_RMA_EVENT */
	pthread_mutex_t ev_lock;	/* ev_mrs, MR counter bindings */
	struct lfv_mr **ev_mrs;
	uint32_t ev_cap;		/* slots in ev_mrs */
	uint32_t ev_next;		/* where the search for a free one starts */
};

/* A registration of application memory for one transfer: cached, or
 * made for it (lfv_reg_get / lfv_reg_put, lfv_mr.c). */
struct lfv_reg {
	struct ibv_mr *mr;
	struct lfv_mr_entry *ent;	/* the cache's, when cached */
};

/* What a registration of application memory lets happen to it. */
enum lfv_reg_use {
	/* This process's transfers only (receives, read targets, RMA
	 * sources): local write, through the cache when it is on. */
	LFV_REG_LOCAL,
	/* A rendezvous source: the peer reads it. Never cached, so that
	 * the key stops working when the transfer ends. */
	LFV_REG_REMOTE_READ,
};

void lfv_domain_cache_open(struct lfv_domain *domain);
void lfv_domain_cache_close(struct lfv_domain *domain);
int lfv_reg_get(struct lfv_domain *domain, void *addr, size_t len,
		enum lfv_reg_use use, struct lfv_reg *reg);
void lfv_reg_put(struct lfv_domain *domain, struct lfv_reg *reg);

struct lfv_cntr;

struct lfv_mr {
	struct fid_mr mr_fid;
	struct lfv_domain *domain;
	struct ibv_mr *ibv_mr;
	uint64_t access;		/* the application's (fi_mr_reg) */
	/* FI_RMA_EVENT domains: the slot in domain->ev_mrs, and counters
	 * bound with fi_mr_bind (under domain->ev_lock). */
	uint32_t ev_index;
	struct lfv_cntr *rrd_cntr, *rwr_cntr;
};

/*
 * Keys (fi_mr_key) are the verbs rkey, and in FI_RMA_EVENT domains carry
 * LFV_KEY_EVENT and the region's event index above it: an initiator that
 * sees the bit announces each access to the target (lfv_rma.c,
 * lfv_rdm_rma.c); one that does not pays nothing.
 */
#define LFV_KEY_EVENT (1ULL << 63)
#define LFV_KEY_INDEX_BITS 24
#define LFV_KEY_INDEX_MAX ((1U << LFV_KEY_INDEX_BITS) - 1)

static inline bool lfv_key_is_event(uint64_t key)
{
	return (key & LFV_KEY_EVENT) &&
	       !(key & ~(LFV_KEY_EVENT | ((uint64_t)LFV_KEY_INDEX_MAX << 32) |
			 UINT32_MAX));
}

static inline uint32_t lfv_key_index(uint64_t key)
{
	return (uint32_t)(key >> 32) & LFV_KEY_INDEX_MAX;
}

int lfv_domain_events_init(struct lfv_domain *domain);
void lfv_domain_events_fini(struct lfv_domain *domain);
/* A peer announced an access of len bytes (FI_REMOTE_READ or
 * FI_REMOTE_WRITE in flags) to the region in slot index; rkey, when not
 * negative, must be that region's, and so must [addr, addr + len) when
 * addr is not UINT64_MAX. Counts the region's counter: 0; an announcement
 * that fits no region is dropped and counted in the fabric's drops
 * (FI_LFVERBS_DROP_MALFORMED): -FI_EINVAL. */
int lfv_mr_event(struct lfv_domain *domain, uint32_t index, int64_t rkey,
		 uint64_t addr, uint64_t len, uint64_t flags);

int lfv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
int lfv_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);
int lfv_domain_open2(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain, uint64_t flags, void *context);
extern struct fi_ops_mr lfv_mr_ops;

/* The IP TOS / GRH traffic class for a libfabric tclass: DSCP from
 * fi_tc_dscp_set(), 0 (best effort) otherwise. */
static inline uint8_t lfv_tos(uint32_t tclass)
{
	return (uint8_t)(fi_tc_dscp_get(tclass) << 2);
}

/* Translates fi_mr access bits to ibv access flags; -FI_EINVAL on junk. */
int lfv_mr_access_to_ibv(uint64_t access, const struct ibv_device_attr *attr,
			 int *ibv_access);

#endif /* LFV_PROV_H */
