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
#include "lfv_fi_compat.h"
#include "lfv_list.h"
#include "lfv_mr_cache.h"
#include "lfv_poller.h"
#include "lfv_progress.h"

#define LFV_PROV_NAME "lfverbs"
/* The API version of the headers built with: every caller that asks for
 * no more finds lfverbs (lfv_fi_compat.h). */
#define LFV_FI_VERSION LFV_FI_HEADER_VERSION
#define LFV_MAX_ADDRS 16
#define LFV_NAME_MAX 64

/* Capability classes from fi_getinfo(3). */
#define LFV_PRIMARY_CAPS                                                   \
	(FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST |          \
	 FI_NAMED_RX_CTX | FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_HMEM |  \
	 FI_COLLECTIVE | LFV_PEER_CAPS)
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

/* Objects. */
struct lfv_mr;

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
	 * verbs CQs, and its RDM endpoints' timers and shm peers
	 * (lfv_rdm_domain_progress, set by fi_domain). Objects below
	 * the domain's reach it through here, not by name. */
	struct lfv_progress_hook progress;
	/* The progress thread (lfv_auto.c), started on first need. */
	struct lfv_poller auto_poller;
	/* Sources it runs the domain's progress for on its tick, having
	 * no fd to wake it (RDM endpoints with shm peers); vcq_lock. */
	uint32_t auto_ticked;
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

/* The IP TOS / GRH traffic class for a libfabric tclass: DSCP from
 * fi_tc_dscp_set(), 0 (best effort) otherwise. */
static inline uint8_t lfv_tos(uint32_t tclass)
{
	return (uint8_t)(fi_tc_dscp_get(tclass) << 2);
}

#endif /* LFV_PROV_H */
