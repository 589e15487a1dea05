/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stdlib.h>
#include <string.h>

#include "lfv_amo.h"
#include "lfv_auto.h"
#include "lfv_av.h"
#include "lfv_av_ops.h"
#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_device.h"
#include "lfv_domain.h"
#include "lfv_ep.h"
#include "lfv_errno.h"
#include "lfv_info_fits.h"
#include "lfv_info_template.h"
#include "lfv_log.h"
#include "lfv_mr.h"
#include "lfv_msg_ep.h"
#include "lfv_poll.h"
#include "lfv_prov.h"
#include "lfv_rdm.h"
#include "lfv_rdm_progress.h"
#include "lfv_sep.h"
#include "lfv_msg_srq.h"
#include "lfv_stubs.h"
#include "lfv_stx.h"
#include "lfv_vcq.h"

static int lfv_domain_close(struct fid *fid)
{
	struct lfv_domain *domain =
		lfv_container_of(fid, struct lfv_domain, domain_fid.fid);
	int ret;

	if (lfv_ref_read(&domain->ref) > 1)
		return -FI_EBUSY;
	/* Cached registrations hold the PD. */
	lfv_domain_cache_close(domain);
	ret = lfv_verbs_ret(ibv_dealloc_pd(domain->pd));
	if (ret) {
		LFV_WARN(FI_LOG_DOMAIN, "ibv_dealloc_pd: %s\n", fi_strerror(-ret));
		return ret;
	}
	lfv_auto_stop(domain);
	rdma_free_devices(domain->cm_devs);
	pthread_mutex_destroy(&domain->vcq_lock);
	lfv_domain_events_fini(domain);
	lfv_ref_put(&domain->fabric->ref);
	fi_freeinfo(domain->info);
	free(domain);
	return 0;
}

/* prov_errno of a verbs completion is its ibv_wc_status; anything else is
 * a negative (or positive) libfabric error code. */
static const char *lfv_prov_strerror(int prov_errno)
{
	if (prov_errno > IBV_WC_SUCCESS && prov_errno <= IBV_WC_GENERAL_ERR)
		return ibv_wc_status_str((enum ibv_wc_status)prov_errno);
	return fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
}

static int lfv_domain_cq_open(struct fid_domain *domain_fid,
			      struct fi_cq_attr *attr, struct fid_cq **cq,
			      void *context)
{
	struct lfv_domain *domain =
		lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	struct lfv_cq_params params = {
		.api_version = domain->fabric->api_version,
		.parent_ref = &domain->ref,
		.store_src = (domain->info->caps & FI_SOURCE) != 0,
		.serial_reads = !domain->locked,
		.prov_strerror = lfv_prov_strerror,
	};

	return lfv_cq_open(attr, context, &params, cq);
}

static int lfv_domain_cntr_open(struct fid_domain *domain_fid,
				struct fi_cntr_attr *attr,
				struct fid_cntr **cntr, void *context)
{
	struct lfv_domain *domain =
		lfv_container_of(domain_fid, struct lfv_domain, domain_fid);

	return lfv_cntr_open(attr, context, &domain->ref, cntr);
}

static int lfv_domain_poll_open(struct fid_domain *domain_fid,
				struct fi_poll_attr *attr,
				struct fid_poll **pollset)
{
	struct lfv_domain *domain =
		lfv_container_of(domain_fid, struct lfv_domain, domain_fid);

	/* fi_poll moves what the domain's verbs CQs hold into their rings,
	 * so a CQ read only through its hardware is seen too. */
	return lfv_poll_open(attr, domain->progress, &domain->ref, pollset);
}

/* One context each way; more make a scalable endpoint (lfv_sep.c). */
static bool lfv_ep_one_context(const struct fi_ep_attr *attr)
{
	return (attr->tx_ctx_cnt <= 1 || attr->tx_ctx_cnt == FI_SHARED_CONTEXT) &&
	       (attr->rx_ctx_cnt <= 1 || attr->rx_ctx_cnt == FI_SHARED_CONTEXT);
}

/* fi_endpoint: each endpoint type opens its own (lfv_msg_ep.c, lfv_rdm.c). */
static int lfv_domain_endpoint(struct fid_domain *domain_fid,
			       struct fi_info *info, struct fid_ep **ep_fid,
			       void *context)
{
	struct lfv_domain *domain;

	if (!domain_fid || !info || !ep_fid)
		return -FI_EINVAL;
	if (info->ep_attr && !lfv_ep_one_context(info->ep_attr))
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	if (info->ep_attr && info->ep_attr->type == FI_EP_RDM)
		return lfv_rdm_endpoint(domain, info, ep_fid, context);
	return lfv_msg_endpoint(domain, info, ep_fid, context);
}

static int lfv_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
				struct fid_ep **ep, uint64_t flags,
				void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return lfv_domain_endpoint(domain, info, ep, context);
}

/* fi_srx_context: an SRQ on a MSG domain (lfv_msg_srq.c); RDM receives match
 * in software, in the matching SRX (lfv_rdm.c). */
static int lfv_domain_srx_context(struct fid_domain *domain_fid,
				  struct fi_rx_attr *attr,
				  struct fid_ep **rx_ep, void *context)
{
	struct lfv_domain *domain;

	if (!domain_fid || !rx_ep)
		return -FI_EINVAL;
	domain = lfv_container_of(domain_fid, struct lfv_domain, domain_fid);
	if (domain->info->ep_attr && domain->info->ep_attr->type == FI_EP_RDM)
		return lfv_rdm_srx_context(domain, attr, rx_ep, context);
	return lfv_msg_srq_context(domain, attr, rx_ep, context);
}

static struct fi_ops lfv_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_domain_close,
	.bind = lfv_no_bind,
	.control = lfv_no_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_domain lfv_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = lfv_av_open,
	.cq_open = lfv_domain_cq_open,
	.endpoint = lfv_domain_endpoint,
	.scalable_ep = lfv_scalable_ep,
	.cntr_open = lfv_domain_cntr_open,
	.poll_open = lfv_domain_poll_open,
	.stx_ctx = lfv_stx_context,
	.srx_ctx = lfv_domain_srx_context,
	.query_atomic = lfv_query_atomic,
	.query_collective = lfv_no_query_collective,
	.endpoint2 = lfv_domain_endpoint2,
};

/* The info must be one lfverbs could have returned for this device. */
static int lfv_domain_check_info(const struct lfv_device *dev,
				 const struct fi_info *info, uint32_t version)
{
	enum fi_ep_type type = info->ep_attr ? info->ep_attr->type : FI_EP_UNSPEC;
	struct fi_info *tmpl;
	bool fits;

	if (type == FI_EP_UNSPEC)
		type = FI_EP_MSG;
	if (type != FI_EP_MSG && type != FI_EP_DGRAM && type != FI_EP_RDM)
		return -FI_EINVAL;
	tmpl = lfv_info_template(dev, type, dev->naddrs ? &dev->addrs[0] : NULL,
				 version);
	if (!tmpl)
		return -FI_ENOMEM;
	/* Addresses and fabric names were checked by getinfo/fi_fabric. */
	free(tmpl->fabric_attr->name);
	tmpl->fabric_attr->name = NULL;
	fits = lfv_info_fits(tmpl, &(struct fi_info){
		.caps = info->caps,
		.mode = info->mode,
		.ep_attr = info->ep_attr,
		.domain_attr = info->domain_attr,
		.tx_attr = info->tx_attr,
		.rx_attr = info->rx_attr,
	}, version);
	fi_freeinfo(tmpl);
	return fits ? 0 : -FI_EINVAL;
}

/*
 * The domain uses rdma_cm's own context for the device: queue pairs of
 * connected endpoints are created on rdma_cm ids, and those check that the
 * protection domain belongs to the id's context.
 */
static int lfv_domain_find_ctx(const struct lfv_device *dev,
			       struct lfv_domain *domain)
{
	struct ibv_context **list;
	int i, n;

	list = rdma_get_devices(&n);
	if (!list)
		return lfv_verbs_errno();
	for (i = 0; i < n; i++) {
		if (!strcmp(ibv_get_device_name(list[i]->device), dev->name)) {
			domain->cm_devs = list;
			domain->ctx = list[i];
			return 0;
		}
	}
	rdma_free_devices(list);
	LFV_INFO(FI_LOG_DOMAIN, "rdma_cm does not know %s\n", dev->name);
	return -FI_ENODEV;
}

/* FI_THREAD_DOMAIN and FI_THREAD_COMPLETION leave serialisation of data
 * calls to the application; lfverbs then takes no lock on the data path. */
static bool lfv_domain_needs_locks(const struct fi_info *info)
{
	enum fi_threading t = info->domain_attr->threading;

	return !(t == FI_THREAD_DOMAIN || t == FI_THREAD_COMPLETION);
}

int lfv_domain_open(struct fid_fabric *fabric_fid, struct fi_info *info,
		    struct fid_domain **domain_fid, void *context)
{
	struct lfv_fabric *fabric;
	const struct lfv_device *dev;
	struct lfv_domain *domain;
	int ret;

	if (!fabric_fid || !info || !domain_fid || !info->domain_attr ||
	    !info->domain_attr->name)
		return -FI_EINVAL;
	fabric = lfv_container_of(fabric_fid, struct lfv_fabric, fabric_fid);
	dev = lfv_device_find(info->domain_attr->name);
	if (!dev) {
		LFV_INFO(FI_LOG_DOMAIN, "no device %s\n", info->domain_attr->name);
		return -FI_EINVAL;
	}
	ret = lfv_domain_check_info(dev, info, fabric->api_version);
	if (ret)
		return ret;

	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	domain->progress = (struct lfv_progress_hook){
		.fn = lfv_rdm_domain_progress, .arg = domain };
	domain->info = fi_dupinfo(info);
	if (!domain->info) {
		ret = -FI_ENOMEM;
		goto free_domain;
	}
	ret = lfv_domain_find_ctx(dev, domain);
	if (ret)
		goto free_info;
	domain->pd = ibv_alloc_pd(domain->ctx);
	if (!domain->pd) {
		ret = lfv_verbs_errno();
		goto free_devices;
	}
	ret = -pthread_mutex_init(&domain->vcq_lock, NULL);
	if (ret)
		goto dealloc_pd;
	ret = lfv_domain_events_init(domain);
	if (ret)
		goto destroy_vcq_lock;
	lfv_list_init(&domain->vcqs);
	lfv_list_init(&domain->rdm_eps);
	if (info->ep_attr && info->ep_attr->type == FI_EP_RDM)
		lfv_domain_cache_open(domain);
	domain->locked = lfv_domain_needs_locks(info);
	domain->poll_all_cqs =
		info->domain_attr->threading != FI_THREAD_COMPLETION;
	domain->progress_auto =
		info->domain_attr->data_progress == FI_PROGRESS_AUTO;
	domain->dev = dev;
	domain->fabric = fabric;
	atomic_init(&domain->ref, 1);
	lfv_fid_init(&domain->domain_fid.fid, FI_CLASS_DOMAIN,
		     context, &lfv_domain_fi_ops);
	domain->domain_fid.ops = &lfv_domain_ops;
	domain->domain_fid.mr = &lfv_mr_ops;
	lfv_ref_get(&fabric->ref);
	*domain_fid = &domain->domain_fid;
	return 0;

destroy_vcq_lock:
	pthread_mutex_destroy(&domain->vcq_lock);
dealloc_pd:
	ibv_dealloc_pd(domain->pd);
free_devices:
	rdma_free_devices(domain->cm_devs);
free_info:
	fi_freeinfo(domain->info);
free_domain:
	free(domain);
	return ret;
}

int lfv_domain_open2(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return lfv_domain_open(fabric, info, domain, context);
}
