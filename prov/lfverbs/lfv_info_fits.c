/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo's hint checks (lfv_info_fits.h): each hint field against the
 * template built from the device's limits.
 */
#include "lfv_info_fits.h"
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lfv_log.h"
#include "lfv_prov.h"

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

static bool lfv_mismatch(const char *dev, const char *what)
{
	LFV_INFO(FI_LOG_CORE, "%s: hints ask for unsupported %s\n", dev, what);
	return false;
}

static bool lfv_addr_format_fits(uint32_t prov, uint32_t user)
{
	if (user == FI_FORMAT_UNSPEC || user == prov)
		return true;
	return user == FI_SOCKADDR &&
	       (prov == FI_SOCKADDR_IN || prov == FI_SOCKADDR_IN6);
}

/* mr_mode bits the application accepts, in the >= 1.5 bit form. */
bool lfv_user_mr_is_legacy(int mr_mode)
{
	return mr_mode == LFV_MR_UNSPEC || mr_mode == LFV_MR_BASIC ||
	       mr_mode == LFV_MR_SCALABLE;
}

/* mr_mode 0 from a 1.5+ application offers no mode bits at all. Such an
 * application is not an RMA target here: peers would need FI_MR_VIRT_ADDR
 * and the provider's keys. Its answer drops the remote-access caps, as
 * libfabric's util providers do, and asking for them finds nothing. */
bool lfv_mr_unspec(const struct fi_info *hints, uint32_t version)
{
	return hints && hints->domain_attr && !lfv_is_legacy_mr(version) &&
	       hints->domain_attr->mr_mode == LFV_MR_UNSPEC;
}

/* Whether hinted caps can make an RMA or atomic target: remote access
 * asked for, or RMA/atomics with no access modifier (all of them), or no
 * caps at all (everything the provider has). Messages alone cannot. */
bool lfv_caps_rma_target(uint64_t caps)
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
int lfv_needed_mr_mode(int prov_mr_mode, uint64_t user_caps)
{
	if (lfv_caps_rma_target(user_caps))
		return prov_mr_mode;
	return prov_mr_mode & ~LFV_MR_RMA_TARGET_MODES;
}

static bool lfv_mr_mode_fits(int prov_mr_mode, int user_mr_mode,
			     uint64_t user_mode, uint32_t version)
{
	if (lfv_is_legacy_mr(version))
		return user_mr_mode == LFV_MR_UNSPEC ||
		       user_mr_mode == LFV_MR_BASIC;
	if (user_mr_mode == LFV_MR_SCALABLE)
		return false;
	/* FI_MR_BASIC (or UNSPEC) means VIRT_ADDR|ALLOCATED|PROV_KEY, with
	 * local registration announced through the FI_LOCAL_MR mode bit. */
	if (lfv_user_mr_is_legacy(user_mr_mode))
		return !(prov_mr_mode & FI_MR_LOCAL) ||
		       (user_mode & LFV_LOCAL_MR) != 0;
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

/* What fi_tx_attr and fi_rx_attr share, checked alike on both sides. */
struct lfv_side_bits {
	uint64_t caps;
	uint64_t mode;
	uint64_t op_flags;
	uint64_t msg_order;
	uint64_t comp_order;
};

#define LFV_SIDE_BITS(attr)                                                \
	((struct lfv_side_bits){ (attr)->caps, (attr)->mode,               \
				 (attr)->op_flags, (attr)->msg_order,      \
				 (attr)->comp_order })

/* The hints may ask for less of everything but mode, where they must
 * take what the provider needs; caps the side ignores do not count. */
static bool lfv_side_fits(const char *dev, const char *side,
			  struct lfv_side_bits prov, struct lfv_side_bits user,
			  uint64_t ignored_caps)
{
	const char *what = NULL;
	char msg[32];

	if (user.caps & ~(prov.caps | ignored_caps))
		what = "caps";
	else if (prov.mode & ~user.mode)
		what = "mode";
	else if (user.op_flags & ~prov.op_flags)
		what = "op_flags";
	else if ((user.msg_order & ~prov.msg_order) ||
		 (user.comp_order & ~prov.comp_order))
		what = "ordering";
	if (!what)
		return true;
	snprintf(msg, sizeof(msg), "%s %s", side, what);
	return lfv_mismatch(dev, msg);
}

static bool lfv_tx_fits(const char *dev, const struct fi_tx_attr *prov,
			const struct fi_tx_attr *user)
{
	if (!lfv_side_fits(dev, "tx", LFV_SIDE_BITS(prov), LFV_SIDE_BITS(user),
			   LFV_TX_IGNORED_CAPS))
		return false;
	if (user->inject_size > prov->inject_size ||
	    user->size > prov->size || user->iov_limit > prov->iov_limit ||
	    user->rma_iov_limit > prov->rma_iov_limit)
		return lfv_mismatch(dev, "tx limit");
	return true;
}

static bool lfv_rx_fits(const char *dev, const struct fi_rx_attr *prov,
			const struct fi_rx_attr *user)
{
	if (!lfv_side_fits(dev, "rx", LFV_SIDE_BITS(prov), LFV_SIDE_BITS(user),
			   LFV_RX_IGNORED_CAPS))
		return false;
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
