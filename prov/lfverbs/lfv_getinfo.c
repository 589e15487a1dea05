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
#include "lfv_info_fits.h"
#include "lfv_info_template.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_svc.h"

/* ---- narrowing a fitting template to the request ------------------------ */

static uint64_t lfv_narrow_caps(uint64_t prov, uint64_t user)
{
	uint64_t primary, modifiers, secondary;

	/* No hints: everything but FI_MULTI_RECV, which changes how the
	 * endpoint receives (buffered, lfv_brx.c), FI_SOURCE_ERR, which
	 * turns some completions into errors, and FI_RMA_EVENT, which makes
	 * every RMA announce itself to the target, and FI_PEER, which only
	 * a provider linking lfverbs wants: only had by asking. */
	if (!user)
		return prov & ~(uint64_t)(FI_MULTI_RECV | FI_SOURCE_ERR |
					  FI_RMA_EVENT | LFV_PEER_CAPS);
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
	return param && param < max ? param : max;
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
			info->mode |= LFV_LOCAL_MR;
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
	return lfv_info_addr_dup(&req->dst, len, &info->dest_addr,
				 &info->dest_addrlen);
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
