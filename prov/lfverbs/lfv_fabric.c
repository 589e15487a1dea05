/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfv_cm.h"
#include "lfv_device.h"
#include "lfv_domain.h"
#include "lfv_eq.h"
#include "lfv_fabric.h"
#include "lfv_info_template.h"
#include "lfv_log.h"
#include "lfv_pep.h"
#include "lfv_prov.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

static struct lfv_fabric *lfv_fabric_from_fid(struct fid_fabric *fabric_fid)
{
	return lfv_container_of(fabric_fid, struct lfv_fabric, fabric_fid);
}

static int lfv_fabric_eq_open(struct fid_fabric *fabric_fid,
			      struct fi_eq_attr *attr, struct fid_eq **eq,
			      void *context)
{
	struct lfv_fabric *fabric = lfv_fabric_from_fid(fabric_fid);

	return lfv_eq_open(attr, context, fabric->api_version, &fabric->ref,
			   eq);
}

/* fi_wait_open: sets of EQs, CQs and counters (lfv_wait_set.h). */
static int lfv_fabric_wait_open(struct fid_fabric *fabric_fid,
				struct fi_wait_attr *attr,
				struct fid_wait **waitset)
{
	return lfv_wait_set_open(attr, &lfv_fabric_from_fid(fabric_fid)->ref,
				 waitset);
}

/* fi_trywait: 0 when every object is empty and armed to wake its waiter. */
static int lfv_fabric_trywait(struct fid_fabric *fabric_fid, struct fid **fids,
			      int count)
{
	int i, ret;

	(void)fabric_fid;
	if (!fids || count < 0)
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		ret = lfv_trywait_fid(fids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int lfv_fabric_close(struct fid *fid)
{
	struct lfv_fabric *fabric =
		lfv_container_of(fid, struct lfv_fabric, fabric_fid.fid);

	if (lfv_ref_read(&fabric->ref) > 1)
		return -FI_EBUSY;
	lfv_cm_stop(fabric);
	pthread_mutex_destroy(&fabric->cm_auto_lock);
	pthread_mutex_destroy(&fabric->cm_lock);
	free(fabric);
	return 0;
}

static int lfv_fabric_control(struct fid *fid, int command, void *arg)
{
	struct lfv_fabric *fabric =
		lfv_container_of(fid, struct lfv_fabric, fabric_fid.fid);

	if (command != FI_LFVERBS_GET_DROPS)
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	lfv_drops_read(&fabric->drops, arg);
	return 0;
}

static struct fi_ops lfv_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_fabric_close,
	.bind = lfv_no_bind,
	.control = lfv_fabric_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_fabric lfv_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = lfv_domain_open,
	.passive_ep = lfv_passive_ep,
	.eq_open = lfv_fabric_eq_open,
	.wait_open = lfv_fabric_wait_open,
	.trywait = lfv_fabric_trywait,
	.domain2 = lfv_domain_open2,
};

/* A fabric name is one getinfo hands out: a device's subnet or IB name. */
static bool lfv_fabric_name_known(const char *name)
{
	const struct lfv_device_table *table;
	struct fi_info *info;
	bool found = false;
	size_t i, a;

	if (lfv_devices_get(&table))
		return false;
	for (i = 0; i < table->count && !found; i++) {
		const struct lfv_device *dev = &table->devs[i];

		for (a = 0; a < dev->naddrs && !found; a++)
			found = !strcmp(dev->addrs[a].fabric_name, name);
		if (found)
			break;
		info = lfv_info_template(dev, FI_EP_DGRAM, NULL, LFV_FI_VERSION);
		if (info)
			found = !strcmp(info->fabric_attr->name, name);
		fi_freeinfo(info);
	}
	return found;
}

int lfv_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric_fid,
		    void *context)
{
	struct lfv_fabric *fabric;

	if (!attr || !fabric_fid || !attr->name)
		return -FI_EINVAL;
	if (!lfv_fabric_name_known(attr->name)) {
		LFV_INFO(FI_LOG_FABRIC, "unknown fabric %s\n", attr->name);
		return -FI_ENODATA;
	}
	fabric = calloc(1, sizeof(*fabric));
	if (!fabric)
		return -FI_ENOMEM;
	snprintf(fabric->name, sizeof(fabric->name), "%s", attr->name);
	fabric->api_version = attr->api_version ? attr->api_version :
						  LFV_FI_VERSION;
	if (pthread_mutex_init(&fabric->cm_lock, NULL)) {
		free(fabric);
		return -FI_ENOMEM;
	}
	if (pthread_mutex_init(&fabric->cm_auto_lock, NULL)) {
		pthread_mutex_destroy(&fabric->cm_lock);
		free(fabric);
		return -FI_ENOMEM;
	}
	lfv_list_init(&fabric->cm_auto_sources);
	atomic_init(&fabric->ref, 1);
	lfv_fid_init(&fabric->fabric_fid.fid, FI_CLASS_FABRIC,
		     context, &lfv_fabric_fi_ops);
	fabric->fabric_fid.ops = &lfv_fabric_ops;
	*fabric_fid = &fabric->fabric_fid;
	return 0;
}
