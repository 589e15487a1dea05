/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo for lfverbs.
 *
 * For each device (nearest first) and endpoint type, a template fi_info is
 * built from the device's real limits: sizes in the template are maxima.
 * The template is checked against every hint field (lfv_info_fits); a hint
 * the provider cannot satisfy drops the template, never widens the answer.
 * A fitting template is then narrowed to what was asked (lfv_info_narrow):
 * requested caps only, hinted modes and sizes, defaults where hints are 0.
 */
#include "lfv_getinfo.h"
#include "config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lfv_brx.h"
#include "lfv_device.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_svc.h"

/* What each direction's attributes may hold (fi_endpoint(3)): the
 * locality caps are the domain's and info's, never tx's or rx's. */
#define LFV_TX_CAP_MASK                                                    \
	((LFV_PRIMARY_CAPS & ~(uint64_t)(FI_DIRECTED_RECV |                 \
					 FI_VARIABLE_MSG)) |                \
	 FI_SEND | FI_READ | FI_WRITE | FI_FENCE | FI_TRIGGER)
#define LFV_RX_CAP_MASK                                                    \
	((LFV_PRIMARY_CAPS & ~(uint64_t)(FI_MULTICAST | FI_NAMED_RX_CTX)) | \
	 FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_MULTI_RECV |       \
	 FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR)
/* Applications that copy info->caps into tx/rx hints bring the locality
 * caps, FI_SHARED_AV (the AVs') and the other direction's along; those
 * say nothing about this direction, so the fit checks pass over them (as
 * libfabric's util does). */
#define LFV_TX_IGNORED_CAPS                                                \
	(FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV | FI_RECV |          \
	 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |              \
	 FI_VARIABLE_MSG | FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT |       \
	 FI_SOURCE_ERR)
#define LFV_RX_IGNORED_CAPS                                                \
	(FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV | FI_SEND | FI_READ | \
	 FI_WRITE | FI_FENCE | FI_MULTICAST | FI_NAMED_RX_CTX)
/* Operation flags an application may make default on an endpoint (the
 * templates' op_flags; answers carry the hinted ones). On RC every send
 * and write completes once the peer acknowledged it, which is each of
 * the completion levels below (an RDM message with FI_DELIVERY_COMPLETE
 * goes by rendezvous, lfv_rdm_tx.c); a buffered MSG endpoint and the RDM
 * SRX take FI_MULTI_RECV receives (asked for with the FI_MULTI_RECV cap).
 * A default FI_INJECT makes every send and write an inject (copied or
 * inlined at the call, larger than inject_size: an error); reads and
 * atomics leave it out (lfv_rma_in_op_flags): a read sends no buffer, an
 * atomic's operand is in the work request already. */
#define LFV_TX_OP_FLAGS (FI_COMPLETION | FI_INJECT)
#define LFV_RX_OP_FLAGS FI_COMPLETION
#define LFV_RC_TX_OP_FLAGS (LFV_TX_OP_FLAGS | FI_INJECT_COMPLETE |          \
			    FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
#define LFV_RC_RX_OP_FLAGS (LFV_RX_OP_FLAGS | FI_MULTI_RECV)

/* What RC orders (the verbs provider advertises the same): everything but
 * operations after an RDMA read (they may pass it; FI_FENCE waits). The
 * 1.17 RMA and atomic order bits name the same orders and are answered
 * alike, since an application may ask in either form. */
#define LFV_RC_ORDER (FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS |          \
		      FI_ORDER_WAW | FI_ORDER_WAS | FI_ORDER_SAW |          \
		      FI_ORDER_SAS | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW |  \
		      FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR |              \
		      FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAW)
/* Counters are software objects; a bound keeps the number honest. */
#define LFV_MAX_CNTRS 65536

/* FI_ATOMIC only where the device does 64-bit atomics. */
static uint64_t lfv_type_caps(const struct lfv_device *dev,
			      enum fi_ep_type type)
{
	uint64_t caps = type == FI_EP_MSG ? LFV_MSG_CAPS :
			type == FI_EP_RDM ? LFV_RDM_CAPS : LFV_DGRAM_CAPS;

	if (dev->attr.atomic_cap == IBV_ATOMIC_NONE)
		caps &= ~(uint64_t)FI_ATOMIC;
	return caps;
}

static bool lfv_mismatch(const char *dev, const char *what)
{
	LFV_INFO(FI_LOG_CORE, "%s: hints ask for unsupported %s\n", dev, what);
	return false;
}

static size_t lfv_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

static size_t lfv_mtu_bytes(enum ibv_mtu mtu)
{
	return (size_t)128 << mtu; /* IBV_MTU_256 == 1 */
}

static bool lfv_is_legacy_mr(uint32_t version)
{
	return version < FI_VERSION(1, 5);
}

static void lfv_template_tx(struct fi_tx_attr *tx, const struct lfv_device *dev,
			    uint64_t caps, enum fi_ep_type type)
{
	tx->caps = caps & LFV_TX_CAP_MASK;
	tx->mode = 0;
	tx->op_flags = type == FI_EP_DGRAM ? LFV_TX_OP_FLAGS : LFV_RC_TX_OP_FLAGS;
	tx->msg_order = type == FI_EP_MSG ? LFV_RC_ORDER :
			type == FI_EP_RDM ? FI_ORDER_SAS : FI_ORDER_NONE;
	tx->comp_order = FI_ORDER_NONE;
	/* RDM sends go through a provider buffer: any eager size injects. */
	tx->inject_size = type == FI_EP_RDM ? lfv_params.rdm_eager :
					      dev->max_inline;
	tx->size = (size_t)dev->attr.max_qp_wr;
	tx->iov_limit = (size_t)dev->attr.max_sge;
	tx->rma_iov_limit = type == FI_EP_DGRAM ? 0 : 1;
}

static void lfv_template_rx(struct fi_rx_attr *rx, const struct lfv_device *dev,
			    uint64_t caps, enum fi_ep_type type)
{
	rx->caps = caps & LFV_RX_CAP_MASK;
	rx->mode = 0;
	rx->op_flags = type == FI_EP_DGRAM ? LFV_RX_OP_FLAGS : LFV_RC_RX_OP_FLAGS;
	rx->msg_order = type == FI_EP_MSG ? LFV_RC_ORDER :
			type == FI_EP_RDM ? FI_ORDER_SAS : FI_ORDER_NONE;
	rx->comp_order = FI_ORDER_NONE;
	rx->total_buffered_recv = 0;
	rx->size = (size_t)dev->attr.max_qp_wr;
	/* A UD receive spends one SGE on the GRH in front of the data. */
	rx->iov_limit = (size_t)dev->attr.max_sge - (type == FI_EP_DGRAM);
}

/* Contexts of a scalable endpoint: each is a QP. */
static size_t lfv_sep_max_ctx(const struct lfv_device *dev)
{
	size_t qps = (size_t)dev->attr.max_qp;

	return qps < LFV_SEP_MAX_CTX ? qps : LFV_SEP_MAX_CTX;
}

static void lfv_template_ep(struct fi_ep_attr *ep, const struct lfv_device *dev,
			    enum fi_ep_type type)
{
	ep->type = type;
	ep->protocol = type == FI_EP_MSG ? FI_PROTO_RDMA_CM_IB_RC :
		       type == FI_EP_RDM ? FI_PROTO_IB_RDM : FI_PROTO_IB_UD;
	ep->protocol_version = 1;
	/* RDM: larger than eager goes by rendezvous, RDMA reads of up to
	 * max_msg_sz each from one registration. */
	ep->max_msg_size = type == FI_EP_DGRAM ?
		lfv_mtu_bytes(dev->port_attr.active_mtu) :
		type == FI_EP_RDM ? lfv_min((size_t)dev->attr.max_mr_size,
					    LFV_RDM_MAX_MSG) :
		dev->port_attr.max_msg_sz;
	ep->msg_prefix_size = 0;
	/* RC keeps reads and writes behind earlier writes whatever their
	 * size; a write may pass a read (no WAR). */
	ep->max_order_raw_size = type == FI_EP_MSG ? ep->max_msg_size : 0;
	ep->max_order_war_size = 0;
	ep->max_order_waw_size = type == FI_EP_MSG ? ep->max_msg_size : 0;
	ep->mem_tag_format = type == FI_EP_RDM ? LFV_RDM_TAG_FORMAT : 0;
	ep->tx_ctx_cnt = 1;
	ep->rx_ctx_cnt = 1;
	ep->auth_key_size = 0;
}

static int lfv_template_domain(struct fi_domain_attr *dom,
			       const struct lfv_device *dev, uint32_t version)
{
	dom->name = strdup(dev->name);
	if (!dom->name)
		return -FI_ENOMEM;
	dom->threading = FI_THREAD_SAFE;
	dom->control_progress = FI_PROGRESS_MANUAL;
	dom->data_progress = FI_PROGRESS_MANUAL;
	dom->resource_mgmt = FI_RM_ENABLED;
	dom->av_type = FI_AV_UNSPEC;
	dom->mr_mode = lfv_is_legacy_mr(version) ? FI_MR_BASIC : LFV_MR_MODE;
	/* The rkey, and in FI_RMA_EVENT domains the event bit and index
	 * above it (lfv_prov.h); narrowed to the rkey without the cap. */
	dom->mr_key_size = sizeof(uint64_t);
	dom->cq_data_size = sizeof(uint32_t);	/* immediate data */
	dom->cq_cnt = (size_t)dev->attr.max_cq;
	dom->ep_cnt = (size_t)dev->attr.max_qp;
	dom->tx_ctx_cnt = (size_t)dev->attr.max_qp;
	dom->rx_ctx_cnt = (size_t)dev->attr.max_qp;
	dom->max_ep_tx_ctx = 1;
	dom->max_ep_rx_ctx = 1;
	dom->max_ep_stx_ctx = 1;
	dom->max_ep_srx_ctx = 1;
	dom->cntr_cnt = LFV_MAX_CNTRS;
	dom->mr_iov_limit = 1;
	dom->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	dom->mode = 0;
	dom->auth_key = NULL;
	dom->auth_key_size = 0;
	dom->max_err_data = 0;
	dom->mr_cnt = (size_t)dev->attr.max_mr;
	dom->tclass = FI_TC_UNSPEC;
	return 0;
}

static void lfv_ib_fabric_name(const struct lfv_device *dev, char *buf,
			       size_t len)
{
	snprintf(buf, len, "IB-0x%016llx",
		 (unsigned long long)be64toh(dev->gid.global.subnet_prefix));
}

static int lfv_template_addr(struct fi_info *info, const struct lfv_device *dev,
			     enum fi_ep_type type, const struct lfv_addr *addr)
{
	struct lfv_ud_name *ud;
	size_t len;

	if (type == FI_EP_MSG) {
		len = lfv_sockaddr_len(&addr->addr.sa);
		info->addr_format = addr->addr.sa.sa_family == AF_INET ?
			FI_SOCKADDR_IN : FI_SOCKADDR_IN6;
		info->src_addr = malloc(len);
		if (!info->src_addr)
			return -FI_ENOMEM;
		memcpy(info->src_addr, &addr->addr, len);
		info->src_addrlen = len;
		return 0;
	}
	info->addr_format = FI_ADDR_IB_UD;
	ud = calloc(1, sizeof(*ud));
	if (!ud)
		return -FI_ENOMEM;
	memcpy(ud->gid, dev->gid.raw, sizeof(ud->gid));
	ud->lid = dev->port_attr.lid;
	info->src_addr = ud;
	info->src_addrlen = sizeof(*ud);
	return 0;
}

struct fi_info *lfv_info_template(const struct lfv_device *dev,
				  enum fi_ep_type type,
				  const struct lfv_addr *addr,
				  uint32_t version)
{
	char ib_name[LFV_NAME_MAX];
	struct fi_info *info;

	info = fi_allocinfo();
	if (!info)
		return NULL;
	info->caps = lfv_type_caps(dev, type);
	info->mode = lfv_is_legacy_mr(version) ? FI_LOCAL_MR : 0;
	lfv_template_tx(info->tx_attr, dev, info->caps, type);
	lfv_template_rx(info->rx_attr, dev, info->caps, type);
	lfv_template_ep(info->ep_attr, dev, type);
	if (lfv_template_domain(info->domain_attr, dev, version))
		goto free_info;
	if (type == FI_EP_DGRAM) {
		info->domain_attr->max_ep_srx_ctx = 0; /* SRQs serve RC only */
		/* Scalable endpoints: one UD QP per context (lfv_sep.c). */
		info->domain_attr->max_ep_tx_ctx = lfv_sep_max_ctx(dev);
		info->domain_attr->max_ep_rx_ctx = lfv_sep_max_ctx(dev);
	}
	if (type == FI_EP_RDM) {
		/* RDM copies or registers what it is given: no local keys,
		 * in either registration form. */
		info->mode &= ~(uint64_t)FI_LOCAL_MR;
		if (!lfv_is_legacy_mr(version))
			info->domain_attr->mr_mode &= ~FI_MR_LOCAL;
		/* The header carries 64 bits of CQ data; the SRX is the
		 * matching engine's (src/lfv_peer_srx.c); a send queue
		 * belongs to a connection, not to a shareable context. */
		info->domain_attr->cq_data_size = sizeof(uint64_t);
		info->domain_attr->max_ep_stx_ctx = 0;
		info->rx_attr->iov_limit = lfv_min(info->rx_attr->iov_limit,
						   LFV_RDM_MAX_IOV);
		info->tx_attr->iov_limit = lfv_min(info->tx_attr->iov_limit,
						   LFV_RDM_MAX_IOV);
	}
	if (lfv_template_addr(info, dev, type, addr))
		goto free_info;
	lfv_ib_fabric_name(dev, ib_name, sizeof(ib_name));
	info->fabric_attr->name = strdup(addr ? addr->fabric_name : ib_name);
	if (!info->fabric_attr->name)
		goto free_info;
	/* prov_name stays NULL: the core fills it (and appends layering). */
	info->fabric_attr->prov_version = FI_VERSION(LFV_VERSION_MAJOR,
						     LFV_VERSION_MINOR);
	info->fabric_attr->api_version = version;
	return info;

free_info:
	fi_freeinfo(info);
	return NULL;
}

/* ---- hint checks -------------------------------------------------------- */

static bool lfv_addr_format_fits(uint32_t prov, uint32_t user)
{
	if (user == FI_FORMAT_UNSPEC || user == prov)
		return true;
	return user == FI_SOCKADDR &&
	       (prov == FI_SOCKADDR_IN || prov == FI_SOCKADDR_IN6);
}

/* mr_mode bits the application accepts, in the >= 1.5 bit form. */
static bool lfv_user_mr_is_legacy(int mr_mode)
{
	return mr_mode == FI_MR_UNSPEC || mr_mode == FI_MR_BASIC ||
	       mr_mode == FI_MR_SCALABLE;
}

/* mr_mode 0 from a 1.5+ application offers no mode bits at all. Such an
 * application is not an RMA target here: peers would need FI_MR_VIRT_ADDR
 * and the provider's keys. Its answer drops the remote-access caps, as
 * libfabric's util providers do, and asking for them finds nothing. */
static bool lfv_mr_unspec(const struct fi_info *hints, uint32_t version)
{
	return hints && hints->domain_attr && !lfv_is_legacy_mr(version) &&
	       hints->domain_attr->mr_mode == FI_MR_UNSPEC;
}

#define LFV_RMA_TARGET_CAPS (FI_REMOTE_READ | FI_REMOTE_WRITE)

/* mr_mode bits that only concern peers reaching into this process's memory
 * (libfabric's OFI_MR_MODE_RMA_TARGET): an application that cannot be an
 * RMA target need not offer them. */
#define LFV_MR_RMA_TARGET_MODES (FI_MR_RAW | FI_MR_VIRT_ADDR |             \
				 FI_MR_PROV_KEY | FI_MR_RMA_EVENT)

/* Whether hinted caps can make an RMA or atomic target: remote access
 * asked for, or RMA/atomics with no access modifier (all of them), or no
 * caps at all (everything the provider has). Messages alone cannot. */
static bool lfv_caps_rma_target(uint64_t caps)
{
	if (!caps)
		return true;
	if (!(caps & (FI_RMA | FI_ATOMIC)))
		return false;
	if (caps & LFV_RMA_TARGET_CAPS)
		return true;
	return !(caps & (FI_READ | FI_WRITE | FI_SEND | FI_RECV));
}

/* The mr_mode bits a request with these caps must accept. */
static int lfv_needed_mr_mode(int prov_mr_mode, uint64_t user_caps)
{
	if (lfv_caps_rma_target(user_caps))
		return prov_mr_mode;
	return prov_mr_mode & ~LFV_MR_RMA_TARGET_MODES;
}

static bool lfv_mr_mode_fits(int prov_mr_mode, int user_mr_mode,
			     uint64_t user_mode, uint32_t version)
{
	if (lfv_is_legacy_mr(version))
		return user_mr_mode == FI_MR_UNSPEC ||
		       user_mr_mode == FI_MR_BASIC;
	if (user_mr_mode == FI_MR_SCALABLE)
		return false;
	/* FI_MR_BASIC (or UNSPEC) means VIRT_ADDR|ALLOCATED|PROV_KEY, with
	 * local registration announced through the FI_LOCAL_MR mode bit. */
	if (lfv_user_mr_is_legacy(user_mr_mode))
		return !(prov_mr_mode & FI_MR_LOCAL) ||
		       (user_mode & FI_LOCAL_MR) != 0;
	return ((uint64_t)prov_mr_mode & ~(uint64_t)user_mr_mode) == 0;
}

static bool lfv_progress_valid(enum fi_progress p)
{
	return p == FI_PROGRESS_UNSPEC || p == FI_PROGRESS_AUTO ||
	       p == FI_PROGRESS_MANUAL;
}

static bool lfv_domain_fits(const char *dev, const struct fi_domain_attr *prov,
			    const struct fi_domain_attr *user, uint64_t user_mode,
			    uint64_t user_caps, uint32_t version)
{
	if (user->name && strcmp(user->name, prov->name))
		return lfv_mismatch(dev, "domain name");
	if (user->threading > FI_THREAD_ENDPOINT)
		return lfv_mismatch(dev, "threading model");
	if (!lfv_progress_valid(user->control_progress) ||
	    !lfv_progress_valid(user->data_progress))
		return lfv_mismatch(dev, "progress model");
	if (user->resource_mgmt > FI_RM_ENABLED)
		return lfv_mismatch(dev, "resource management");
	if (user->av_type > FI_AV_TABLE ||
	    (user->av_type != FI_AV_UNSPEC && prov->av_type != FI_AV_UNSPEC &&
	     user->av_type != prov->av_type))
		return lfv_mismatch(dev, "av_type");
	if (!lfv_mr_mode_fits(lfv_needed_mr_mode(prov->mr_mode, user_caps),
			      user->mr_mode, user_mode, version))
		return lfv_mismatch(dev, "mr_mode");
	if (user->mr_key_size > prov->mr_key_size ||
	    user->cq_data_size > prov->cq_data_size ||
	    user->cq_cnt > prov->cq_cnt || user->ep_cnt > prov->ep_cnt ||
	    user->tx_ctx_cnt > prov->tx_ctx_cnt ||
	    user->rx_ctx_cnt > prov->rx_ctx_cnt ||
	    user->max_ep_tx_ctx > prov->max_ep_tx_ctx ||
	    user->max_ep_rx_ctx > prov->max_ep_rx_ctx ||
	    user->max_ep_stx_ctx > prov->max_ep_stx_ctx ||
	    user->max_ep_srx_ctx > prov->max_ep_srx_ctx ||
	    user->cntr_cnt > prov->cntr_cnt ||
	    user->mr_iov_limit > prov->mr_iov_limit ||
	    user->mr_cnt > prov->mr_cnt)
		return lfv_mismatch(dev, "domain limit");
	if (user->caps & ~prov->caps)
		return lfv_mismatch(dev, "domain caps");
	if (prov->mode & ~user->mode)
		return lfv_mismatch(dev, "domain mode");
	if (user->auth_key_size || user->auth_key)
		return lfv_mismatch(dev, "authorization key");
	return true;
}

static bool lfv_ep_fits(const char *dev, const struct fi_ep_attr *prov,
			const struct fi_domain_attr *dom,
			const struct fi_ep_attr *user)
{
	if (user->type != FI_EP_UNSPEC && user->type != prov->type)
		return lfv_mismatch(dev, "endpoint type");
	if (user->protocol != FI_PROTO_UNSPEC && user->protocol != prov->protocol)
		return lfv_mismatch(dev, "protocol");
	if (user->protocol_version > prov->protocol_version)
		return lfv_mismatch(dev, "protocol version");
	if (user->max_msg_size > prov->max_msg_size)
		return lfv_mismatch(dev, "max_msg_size");
	if (user->max_order_raw_size > prov->max_order_raw_size ||
	    user->max_order_war_size > prov->max_order_war_size ||
	    user->max_order_waw_size > prov->max_order_waw_size)
		return lfv_mismatch(dev, "ordering size");
	if (user->mem_tag_format && !(prov->mem_tag_format))
		return lfv_mismatch(dev, "tag format");
	if ((user->tx_ctx_cnt > dom->max_ep_tx_ctx &&
	     user->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
	    (user->tx_ctx_cnt == FI_SHARED_CONTEXT && !dom->max_ep_stx_ctx) ||
	    (user->rx_ctx_cnt > dom->max_ep_rx_ctx &&
	     !(user->rx_ctx_cnt == FI_SHARED_CONTEXT &&
	       prov->type == FI_EP_MSG)))
		return lfv_mismatch(dev, "context count");
	if (user->auth_key_size || user->auth_key)
		return lfv_mismatch(dev, "authorization key");
	return true;
}

static bool lfv_tx_fits(const char *dev, const struct fi_tx_attr *prov,
			const struct fi_tx_attr *user)
{
	if (user->caps & ~(prov->caps | LFV_TX_IGNORED_CAPS))
		return lfv_mismatch(dev, "tx caps");
	if (prov->mode & ~user->mode)
		return lfv_mismatch(dev, "tx mode");
	if (user->op_flags & ~prov->op_flags)
		return lfv_mismatch(dev, "tx op_flags");
	if ((user->msg_order & ~prov->msg_order) ||
	    (user->comp_order & ~prov->comp_order))
		return lfv_mismatch(dev, "tx ordering");
	if (user->inject_size > prov->inject_size ||
	    user->size > prov->size || user->iov_limit > prov->iov_limit ||
	    user->rma_iov_limit > prov->rma_iov_limit)
		return lfv_mismatch(dev, "tx limit");
	return true;
}

static bool lfv_rx_fits(const char *dev, const struct fi_rx_attr *prov,
			const struct fi_rx_attr *user)
{
	if (user->caps & ~(prov->caps | LFV_RX_IGNORED_CAPS))
		return lfv_mismatch(dev, "rx caps");
	if (prov->mode & ~user->mode)
		return lfv_mismatch(dev, "rx mode");
	if (user->op_flags & ~prov->op_flags)
		return lfv_mismatch(dev, "rx op_flags");
	if ((user->msg_order & ~prov->msg_order) ||
	    (user->comp_order & ~prov->comp_order))
		return lfv_mismatch(dev, "rx ordering");
	if (user->size > prov->size || user->iov_limit > prov->iov_limit)
		return lfv_mismatch(dev, "rx limit");
	return true;
}

static bool lfv_fabric_fits(const char *dev, const struct fi_fabric_attr *prov,
			    const struct fi_fabric_attr *user)
{
	if (user->name && strcmp(user->name, prov->name))
		return lfv_mismatch(dev, "fabric name");
	if (user->prov_name && strcasecmp(user->prov_name, LFV_PROV_NAME))
		return lfv_mismatch(dev, "provider name");
	return true;
}

bool lfv_info_fits(const struct fi_info *prov, const struct fi_info *hints,
		   uint32_t version)
{
	const char *dev = prov->domain_attr->name;
	uint64_t user_mode;

	if (!hints)
		return true;
	user_mode = hints->mode;
	if (hints->caps & ~prov->caps)
		return lfv_mismatch(dev, "caps");
	if (prov->mode & ~hints->mode)
		return lfv_mismatch(dev, "mode");
	if (lfv_mr_unspec(hints, version) &&
	    (hints->caps & LFV_RMA_TARGET_CAPS))
		return lfv_mismatch(dev, "remote access without mr_mode bits");
	if (!lfv_addr_format_fits(prov->addr_format, hints->addr_format))
		return lfv_mismatch(dev, "address format");
	if (hints->ep_attr &&
	    !lfv_ep_fits(dev, prov->ep_attr, prov->domain_attr, hints->ep_attr))
		return false;
	if (hints->domain_attr &&
	    !lfv_domain_fits(dev, prov->domain_attr, hints->domain_attr,
			     user_mode, hints->caps, version))
		return false;
	if (hints->fabric_attr &&
	    !lfv_fabric_fits(dev, prov->fabric_attr, hints->fabric_attr))
		return false;
	if (hints->tx_attr && !lfv_tx_fits(dev, prov->tx_attr, hints->tx_attr))
		return false;
	if (hints->rx_attr && !lfv_rx_fits(dev, prov->rx_attr, hints->rx_attr))
		return false;
	/* Multi-receive buffers need the endpoint that buffers receives. */
	if (hints->rx_attr && (hints->rx_attr->op_flags & FI_MULTI_RECV) &&
	    !(hints->caps & FI_MULTI_RECV))
		return lfv_mismatch(dev, "FI_MULTI_RECV op flag without the cap");
	return true;
}

/* ---- narrowing a fitting template to the request ------------------------ */

static uint64_t lfv_narrow_caps(uint64_t prov, uint64_t user)
{
	uint64_t primary, modifiers, secondary;

	/* No hints: everything but FI_MULTI_RECV, which changes how the
	 * endpoint receives (buffered, lfv_brx.c), FI_SOURCE_ERR, which
	 * turns some completions into errors, and FI_RMA_EVENT, which makes
	 * every RMA announce itself to the target: only had by asking. */
	if (!user)
		return prov & ~(uint64_t)(FI_MULTI_RECV | FI_SOURCE_ERR |
					  FI_RMA_EVENT);
	primary = user & LFV_PRIMARY_CAPS ? user & LFV_PRIMARY_CAPS :
					    prov & LFV_PRIMARY_CAPS;
	modifiers = user & LFV_CAP_MODIFIERS ? user & LFV_CAP_MODIFIERS :
					       prov & LFV_CAP_MODIFIERS;
	secondary = user & LFV_SECONDARY_CAPS;
	/* Reporting both locality caps unasked costs nothing. */
	if (!(user & (FI_LOCAL_COMM | FI_REMOTE_COMM)))
		secondary |= prov & (FI_LOCAL_COMM | FI_REMOTE_COMM);
	return (primary | modifiers | secondary) & prov;
}

static size_t lfv_pick_size(size_t hinted, size_t param, size_t max)
{
	if (hinted)
		return hinted;
	return param ? lfv_min(param, max) : max;
}

static void lfv_info_narrow(struct fi_info *info, const struct fi_info *hints,
			    uint32_t version)
{
	const struct fi_tx_attr *utx = hints ? hints->tx_attr : NULL;
	const struct fi_rx_attr *urx = hints ? hints->rx_attr : NULL;
	const struct fi_domain_attr *udom = hints ? hints->domain_attr : NULL;
	struct fi_domain_attr *dom = info->domain_attr;

	/* fi_getinfo(3): a passive endpoint in hints->handle is copied out,
	 * so fi_endpoint takes over the address it was given (fabtests'
	 * msg_sockets binds the passive endpoint and expects that port). */
	if (hints && hints->handle && hints->handle->fclass == FI_CLASS_PEP &&
	    info->ep_attr->type == FI_EP_MSG)
		info->handle = hints->handle;
	/* Remote CQ data of an RC RDMA write arrives as immediate data,
	 * which consumes a posted receive: FI_RX_CQ_DATA (fi_getinfo(3)).
	 * Answered when offered, so the application knows to post one;
	 * without it, MSG writes with CQ data are refused (lfv_msg_rma.c). */
	if (info->ep_attr->type == FI_EP_MSG &&
	    (!hints || (hints->mode & FI_RX_CQ_DATA) ||
	     (urx && (urx->mode & FI_RX_CQ_DATA)))) {
		info->mode |= FI_RX_CQ_DATA;
		info->rx_attr->mode |= FI_RX_CQ_DATA;
	}
	info->caps = lfv_narrow_caps(info->caps, hints ? hints->caps : 0);
	if (lfv_mr_unspec(hints, version))
		info->caps &= ~(uint64_t)LFV_RMA_TARGET_CAPS;
	info->tx_attr->caps = info->caps & LFV_TX_CAP_MASK;
	info->rx_attr->caps = info->caps & LFV_RX_CAP_MASK;
	if (!(info->caps & FI_RMA_EVENT) &&
	    !(udom && udom->mr_key_size > sizeof(uint32_t)))
		dom->mr_key_size = sizeof(uint32_t);

	info->tx_attr->op_flags = utx ? utx->op_flags : 0;
	info->tx_attr->inject_size = lfv_pick_size(utx ? utx->inject_size : 0,
		lfv_params.inline_size, info->tx_attr->inject_size);
	info->tx_attr->size = lfv_pick_size(utx ? utx->size : 0,
		lfv_params.tx_size, info->tx_attr->size);
	info->tx_attr->iov_limit = lfv_pick_size(utx ? utx->iov_limit : 0,
		lfv_params.tx_iov_limit, info->tx_attr->iov_limit);
	info->rx_attr->op_flags = urx ? urx->op_flags : 0;
	info->rx_attr->size = lfv_pick_size(urx ? urx->size : 0,
		lfv_params.rx_size, info->rx_attr->size);
	info->rx_attr->iov_limit = lfv_pick_size(urx ? urx->iov_limit : 0,
		lfv_params.rx_iov_limit, info->rx_attr->iov_limit);

	/* Buffered receives carry at most one provider buffer. */
	if (lfv_brx_wanted(info) &&
	    info->ep_attr->max_msg_size > lfv_params.bounce_size)
		info->ep_attr->max_msg_size = lfv_params.bounce_size;
	/* Shared contexts, or the contexts of a scalable endpoint (the
	 * fit check kept counts within the domain's limits). */
	if (hints && hints->ep_attr && hints->ep_attr->rx_ctx_cnt)
		info->ep_attr->rx_ctx_cnt = hints->ep_attr->rx_ctx_cnt;
	if (hints && hints->ep_attr && hints->ep_attr->tx_ctx_cnt)
		info->ep_attr->tx_ctx_cnt = hints->ep_attr->tx_ctx_cnt;
	if (!udom)
		return;
	if (udom->threading != FI_THREAD_UNSPEC)
		dom->threading = udom->threading;
	if (udom->control_progress != FI_PROGRESS_UNSPEC)
		dom->control_progress = udom->control_progress;
	if (udom->data_progress != FI_PROGRESS_UNSPEC)
		dom->data_progress = udom->data_progress;
	if (udom->resource_mgmt != FI_RM_UNSPEC)
		dom->resource_mgmt = udom->resource_mgmt;
	if (udom->av_type != FI_AV_UNSPEC)
		dom->av_type = udom->av_type;
	if (!lfv_is_legacy_mr(version) && lfv_user_mr_is_legacy(udom->mr_mode)) {
		/* Answer in the form the application asked in: FI_MR_BASIC
		 * as asked, FI_MR_UNSPEC as 0 (an answer never holds a bit
		 * the hints did not offer), local keys as FI_LOCAL_MR. */
		if (dom->mr_mode & FI_MR_LOCAL)
			info->mode |= FI_LOCAL_MR;
		dom->mr_mode = udom->mr_mode;
	} else if (!lfv_is_legacy_mr(version) &&
		   !lfv_caps_rma_target(hints->caps)) {
		/* Not an RMA target: the target-only bits it did not offer
		 * are not needed (lfv_needed_mr_mode). */
		dom->mr_mode &= udom->mr_mode | ~LFV_MR_RMA_TARGET_MODES;
	}
	dom->caps = lfv_narrow_caps(dom->caps, udom->caps);
}

/* ---- node, service and addresses ---------------------------------------- */

struct lfv_addr_req {
	bool has_src;
	union lfv_sockaddr src;		/* FI_SOURCE node/service, src_addr */
	bool has_dst;
	union lfv_sockaddr dst;		/* node/service, dest_addr */
	char route_dev[LFV_NAME_MAX];	/* device the route to dst takes */
	union lfv_sockaddr route_src;
	const struct lfv_ud_name *ud_src; /* FI_ADDR_IB_UD hints */
	const struct lfv_ud_name *ud_dst;
};

static int lfv_family_for(const struct fi_info *hints)
{
	if (hints && hints->addr_format == FI_SOCKADDR_IN)
		return AF_INET;
	if (hints && hints->addr_format == FI_SOCKADDR_IN6)
		return AF_INET6;
	return AF_UNSPEC;
}

static int lfv_resolve(const char *node, const char *service, uint64_t flags,
		       int family, bool passive, union lfv_sockaddr *out)
{
	struct addrinfo ai_hints = {
		.ai_family = family,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = (passive ? AI_PASSIVE : 0) |
			    ((flags & FI_NUMERICHOST) ? AI_NUMERICHOST : 0),
	};
	struct addrinfo *res;
	int ret;

	ret = getaddrinfo(node, service, &ai_hints, &res);
	if (ret) {
		LFV_INFO(FI_LOG_CORE, "cannot resolve %s:%s: %s\n",
			 node ? node : "", service ? service : "",
			 gai_strerror(ret));
		return -FI_ENODATA;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static bool lfv_is_sockaddr(const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;

	return addr && len >= sizeof(struct sockaddr_in) &&
	       lfv_sockaddr_len(sa) && len >= lfv_sockaddr_len(sa);
}

/* A service name in the hints (one that getinfo returned, say) stands for
 * its address and port, as node and service would; a QP name stays one. */
static void lfv_addr_req_ud(const struct lfv_ud_name *name, bool *has,
			    union lfv_sockaddr *sa,
			    const struct lfv_ud_name **ud)
{
	if (!lfv_ud_name_is_service(name)) {
		*ud = name;
	} else if (!*has) {
		lfv_ud_name_to_sockaddr(name, sa);
		*has = true;
	}
}

static int lfv_addr_req_init(struct lfv_addr_req *req, const char *node,
			     const char *service, uint64_t flags,
			     const struct fi_info *hints)
{
	int family = lfv_family_for(hints);
	int ret;

	memset(req, 0, sizeof(*req));
	if (node || service) {
		if ((flags & FI_SOURCE) || !node) {
			/* A service alone names a local port to listen on. */
			ret = lfv_resolve(node, service, flags, family, true,
					  &req->src);
			req->has_src = true;
		} else {
			ret = lfv_resolve(node, service, flags, family, false,
					  &req->dst);
			req->has_dst = true;
		}
		if (ret)
			return ret;
	}
	if (hints && hints->addr_format == FI_ADDR_IB_UD) {
		if (hints->src_addr && hints->src_addrlen >= sizeof(*req->ud_src))
			lfv_addr_req_ud(hints->src_addr, &req->has_src,
					&req->src, &req->ud_src);
		if (hints->dest_addr &&
		    hints->dest_addrlen >= sizeof(*req->ud_dst))
			lfv_addr_req_ud(hints->dest_addr, &req->has_dst,
					&req->dst, &req->ud_dst);
	} else if (hints) {
		if (!req->has_src &&
		    lfv_is_sockaddr(hints->src_addr, hints->src_addrlen)) {
			memcpy(&req->src, hints->src_addr,
			       lfv_sockaddr_len(hints->src_addr));
			req->has_src = true;
		}
		if (!req->has_dst &&
		    lfv_is_sockaddr(hints->dest_addr, hints->dest_addrlen)) {
			memcpy(&req->dst, hints->dest_addr,
			       lfv_sockaddr_len(hints->dest_addr));
			req->has_dst = true;
		}
	}
	if (req->has_dst &&
	    lfv_route_lookup(&req->dst.sa, req->route_dev,
			     sizeof(req->route_dev), &req->route_src)) {
		LFV_INFO(FI_LOG_CORE, "no RDMA route to the destination\n");
		return -FI_ENODATA;
	}
	return 0;
}

static const void *lfv_ip_bytes(const union lfv_sockaddr *a, size_t *len)
{
	if (a->sa.sa_family == AF_INET) {
		*len = sizeof(a->sin.sin_addr);
		return &a->sin.sin_addr;
	}
	*len = sizeof(a->sin6.sin6_addr);
	return &a->sin6.sin6_addr;
}

static bool lfv_ip_is_any(const union lfv_sockaddr *a)
{
	static const uint8_t zero[16];
	size_t len;
	const void *ip = lfv_ip_bytes(a, &len);

	return !memcmp(ip, zero, len);
}

static bool lfv_ip_equal(const union lfv_sockaddr *a,
			 const union lfv_sockaddr *b)
{
	size_t alen, blen;
	const void *aip, *bip;

	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	aip = lfv_ip_bytes(a, &alen);
	bip = lfv_ip_bytes(b, &blen);
	return !memcmp(aip, bip, alen);
}

static bool lfv_src_matches(const union lfv_sockaddr *want,
			    const union lfv_sockaddr *have)
{
	return want->sa.sa_family == have->sa.sa_family &&
	       (lfv_ip_is_any(want) || lfv_ip_equal(want, have));
}

static bool lfv_msg_addr_wanted(const struct lfv_addr_req *req,
				const struct lfv_device *dev,
				const struct lfv_addr *addr)
{
	if (req->ud_src || req->ud_dst)
		return false;
	if (req->has_src && !lfv_src_matches(&req->src, &addr->addr))
		return false;
	if (req->has_dst && (strcmp(req->route_dev, dev->name) ||
			     !lfv_ip_equal(&req->route_src, &addr->addr)))
		return false;
	return true;
}

static bool lfv_dgram_dev_wanted(const struct lfv_addr_req *req,
				 const struct lfv_device *dev)
{
	size_t i;

	if (req->ud_src && memcmp(req->ud_src->gid, dev->gid.raw, 16))
		return false;
	if (req->has_dst && strcmp(req->route_dev, dev->name))
		return false;
	if (!req->has_src)
		return true;
	for (i = 0; i < dev->naddrs; i++)
		if (lfv_src_matches(&req->src, &dev->addrs[i].addr))
			return true;
	return false;
}

static int lfv_info_set_msg_addrs(struct fi_info *info,
				  const struct lfv_addr_req *req)
{
	union lfv_sockaddr *src = info->src_addr;
	size_t len;

	/* Keep the requested port on the device's own address. */
	if (req->has_src) {
		if (src->sa.sa_family == AF_INET)
			src->sin.sin_port = req->src.sin.sin_port;
		else
			src->sin6.sin6_port = req->src.sin6.sin6_port;
	}
	if (!req->has_dst)
		return 0;
	len = lfv_sockaddr_len(&req->dst.sa);
	info->dest_addr = malloc(len);
	if (!info->dest_addr)
		return -FI_ENOMEM;
	memcpy(info->dest_addr, &req->dst, len);
	info->dest_addrlen = len;
	return 0;
}

static uint16_t lfv_sockaddr_port(const union lfv_sockaddr *sa)
{
	return sa->sa.sa_family == AF_INET ? sa->sin.sin_port :
					     sa->sin6.sin6_port;
}

/* The service name of the device address addr with src's port: where an
 * endpoint opened with this info listens (lfv_svc_listen). */
static void lfv_info_ud_src_service(struct fi_info *info,
				    const struct lfv_addr_req *req,
				    const struct lfv_addr *addr)
{
	union lfv_sockaddr sa = lfv_ip_is_any(&req->src) && addr ?
				addr->addr : req->src;

	if (sa.sa.sa_family == AF_INET)
		sa.sin.sin_port = lfv_sockaddr_port(&req->src);
	else
		sa.sin6.sin6_port = lfv_sockaddr_port(&req->src);
	lfv_ud_name_from_sockaddr(&sa.sa, info->src_addr);
}

/* DGRAM and RDM: names are QP names (struct lfv_ud_name); a node and
 * service make service names (lfv_svc.h), a destination without a port
 * none (nobody listens at port 0). */
static int lfv_info_set_ud_addrs(struct fi_info *info,
				 const struct lfv_addr_req *req,
				 const struct lfv_addr *addr)
{
	struct lfv_ud_name *dst;

	if (req->has_src && lfv_sockaddr_port(&req->src))
		lfv_info_ud_src_service(info, req, addr);
	if (!req->ud_dst &&
	    !(req->has_dst && lfv_sockaddr_port(&req->dst)))
		return 0;
	dst = calloc(1, sizeof(*dst));
	if (!dst)
		return -FI_ENOMEM;
	if (req->ud_dst)
		memcpy(dst, req->ud_dst, sizeof(*dst));
	else
		lfv_ud_name_from_sockaddr(&req->dst.sa, dst);
	info->dest_addr = dst;
	info->dest_addrlen = sizeof(*dst);
	return 0;
}

/* Appends the (device, type, addr) answer if it fits; 0 or -FI_ENOMEM. */
static int lfv_info_offer(const struct lfv_device *dev, enum fi_ep_type type,
			  const struct lfv_addr *addr, uint32_t version,
			  const struct fi_info *hints,
			  const struct lfv_addr_req *req, struct fi_info ***tail)
{
	struct fi_info *info;
	int ret;

	info = lfv_info_template(dev, type, addr, version);
	if (!info)
		return -FI_ENOMEM;
	if (!lfv_info_fits(info, hints, version)) {
		fi_freeinfo(info);
		return 0;
	}
	lfv_info_narrow(info, hints, version);
	ret = type == FI_EP_MSG ? lfv_info_set_msg_addrs(info, req) :
				  lfv_info_set_ud_addrs(info, req, addr);
	if (ret) {
		fi_freeinfo(info);
		return ret;
	}
	**tail = info;
	*tail = &info->next;
	return 0;
}

static bool lfv_type_wanted(const struct fi_info *hints, enum fi_ep_type type)
{
	return !hints || !hints->ep_attr ||
	       hints->ep_attr->type == FI_EP_UNSPEC ||
	       hints->ep_attr->type == type;
}

static int lfv_offer_device(const struct lfv_device *dev, uint32_t version,
			    const struct fi_info *hints,
			    const struct lfv_addr_req *req,
			    struct fi_info ***tail)
{
	size_t i;
	int ret;

	if (lfv_type_wanted(hints, FI_EP_MSG)) {
		for (i = 0; i < dev->naddrs; i++) {
			if (!lfv_msg_addr_wanted(req, dev, &dev->addrs[i]))
				continue;
			ret = lfv_info_offer(dev, FI_EP_MSG, &dev->addrs[i],
					     version, hints, req, tail);
			if (ret)
				return ret;
		}
	}
	if (lfv_type_wanted(hints, FI_EP_DGRAM) &&
	    lfv_dgram_dev_wanted(req, dev)) {
		ret = lfv_info_offer(dev, FI_EP_DGRAM,
				     dev->naddrs ? &dev->addrs[0] : NULL,
				     version, hints, req, tail);
		if (ret)
			return ret;
	}
	/* RDM addresses are UD names too (the control QP's). */
	if (lfv_type_wanted(hints, FI_EP_RDM) && lfv_params.rdm &&
	    lfv_dgram_dev_wanted(req, dev))
		return lfv_info_offer(dev, FI_EP_RDM,
				      dev->naddrs ? &dev->addrs[0] : NULL,
				      version, hints, req, tail);
	return 0;
}

int lfv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	const struct lfv_device_table *table;
	struct fi_info *head = NULL, **tail = &head;
	struct lfv_addr_req req;
	size_t i;
	int ret;

	if (!info)
		return -FI_EINVAL;
	if (lfv_devices_get(&table))
		return -FI_ENODATA;
	ret = lfv_addr_req_init(&req, node, service, flags, hints);
	if (ret)
		return ret;
	for (i = 0; i < table->count; i++) {
		ret = lfv_offer_device(&table->devs[i], version, hints, &req,
				       &tail);
		if (ret) {
			fi_freeinfo(head);
			return ret;
		}
	}
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}
