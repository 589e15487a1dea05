/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo's templates (lfv_info_template.h): one fi_info per device and
 * endpoint type, built from the device's real limits.
 */
#include "lfv_info_template.h"
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
#include "lfv_info_fits.h"

/* Operation flags an application may make default on an endpoint (the
 * templates' op_flags; answers carry the hinted ones). On RC every send
 * and write completes once the peer acknowledged it, which is each of
 * the completion levels below (an RDM message with FI_DELIVERY_COMPLETE
 * goes by rendezvous, lfv_rdm_send.c); a buffered MSG endpoint and the RDM
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
	/* RDM domains import CQs, counters and SRXs (fi_peer(3)), unless
	 * the running core speaks another peer layout. */
	if (type == FI_EP_RDM && lfv_peer_allowed())
		caps |= LFV_PEER_CAPS;
	return caps;
}

static size_t lfv_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

static size_t lfv_mtu_bytes(enum ibv_mtu mtu)
{
	return (size_t)128 << mtu; /* IBV_MTU_256 == 1 */
}

static void lfv_template_tx(struct fi_tx_attr *tx, const struct lfv_device *dev,
			    uint64_t caps, enum fi_ep_type type)
{
	tx->caps = caps & LFV_TX_CAP_MASK;
	tx->mode = 0;
	tx->op_flags = type == FI_EP_DGRAM ? LFV_TX_OP_FLAGS : LFV_RC_TX_OP_FLAGS;
	tx->msg_order = type == FI_EP_MSG ? LFV_RC_ORDER :
			type == FI_EP_RDM ? FI_ORDER_SAS : LFV_ORDER_NONE;
	tx->comp_order = LFV_ORDER_NONE;
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
			type == FI_EP_RDM ? FI_ORDER_SAS : LFV_ORDER_NONE;
	rx->comp_order = LFV_ORDER_NONE;
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
	dom->mr_mode = lfv_is_legacy_mr(version) ? LFV_MR_BASIC : LFV_MR_MODE;
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
		return lfv_info_addr_dup(&addr->addr, len, &info->src_addr,
					 &info->src_addrlen);
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

int lfv_info_addr_dup(const void *addr, size_t len, void **out,
		      size_t *outlen)
{
	void *copy = malloc(len);

	if (!copy)
		return -FI_ENOMEM;
	memcpy(copy, addr, len);
	*out = copy;
	*outlen = len;
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
	info->mode = lfv_is_legacy_mr(version) ? LFV_LOCAL_MR : 0;
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
		info->mode &= ~(uint64_t)LFV_LOCAL_MR;
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
