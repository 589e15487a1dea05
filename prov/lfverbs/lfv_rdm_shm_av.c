/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * shm as the RDM endpoint's intra-node peer, the AV's part (see
 * lfv_rdm_shm.h): shm's fabric, domain and AV, opened with the AV, and the
 * shm names of same-host peers inserted into shm's AV with FI_AV_USER_ID
 * = our fi_addr_t, so that shm reports our addresses. Apart from the
 * endpoint's part (lfv_rdm_shm.c) so that the AV needs nothing of RDM's.
 */
#include "config.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fi_domain.h>

#include "lfv_av.h"
#include "lfv_fi_compat.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_rdm_shm_av.h"

/* Logged once per process: why shm is not used. */
static void lfv_rdm_shm_skip(const char *why)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&said))
		LFV_INFO(FI_LOG_CORE, "shm peer not used: %s\n", why);
}

void lfv_rdm_shm_name(const struct lfv_ud_name *n, char *buf,
			     size_t len)
{
	int i, off = snprintf(buf, len, "lfv_");

	for (i = 0; i < 16; i++)
		off += snprintf(buf + off, len - (size_t)off, "%02x", n->gid[i]);
	snprintf(buf + off, len - (size_t)off, "_%08x_%u", n->qpn,
		 (unsigned)getuid());
}

/* ---- the AV's part -------------------------------------------------------------- */

static int lfv_rdm_shm_getinfo(const struct fi_info *ours,
			       struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV;
	hints->domain_attr->caps = FI_LOCAL_COMM | FI_PEER | FI_AV_USER_ID;
	/* Our progress thread drives shm too (lfv_auto_ticked): beside the
	 * application's calls, so shm must lock. */
	hints->domain_attr->threading =
		ours->domain_attr->data_progress == FI_PROGRESS_AUTO ?
		FI_THREAD_SAFE : ours->domain_attr->threading;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR;
	hints->ep_attr->type = FI_EP_RDM;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup("shm");
	ret = hints->fabric_attr->prov_name ? 0 : -FI_ENOMEM;
	if (!ret)
		ret = fi_getinfo(LFV_FI_HEADER_VERSION, NULL, NULL, 0, hints,
				 info);
	fi_freeinfo(hints);
	return ret;
}

static bool lfv_rdm_shm_wanted(const struct lfv_av *av)
{
	const struct fi_info *info = av->domain->info;

	if (!lfv_params.shm)
		return false;
	if (!LFV_SHM_OWNER) {
		lfv_rdm_shm_skip("this libfabric's shm cannot be a CQ peer "
				 "(1.x)");
		return false;
	}
	if (!lfv_peer_allowed()) {
		lfv_rdm_shm_skip("the running core's peer layout differs");
		return false;
	}
	/* Only plain RDM AVs: not shared read-only ones (their entries
	 * come from another process) nor scalable endpoints' names. */
	return info->ep_attr && info->ep_attr->type == FI_EP_RDM &&
	       !av->rx_ctx_bits && !av->read_only;
}

static void lfv_rdm_shm_av_free(struct lfv_rdm_shm_av *s)
{
	if (s->av)
		fi_close(&s->av->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	fi_freeinfo(s->info);
	free(s);
}

void lfv_rdm_shm_av_open(struct lfv_av *av)
{
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct lfv_rdm_shm_av *s;
	int ret;

	if (!lfv_rdm_shm_wanted(av))
		return;
	s = calloc(1, sizeof(*s));
	if (!s)
		return;
	ret = lfv_rdm_shm_getinfo(av->domain->info, &s->info);
	if (ret) {
		/* Absent, or hidden by FI_PROVIDER. */
		lfv_rdm_shm_skip("no shm provider (absent, or FI_PROVIDER)");
		free(s);
		return;
	}
	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (!ret)
		ret = fi_domain(s->fabric, s->info, &s->domain, NULL);
	if (!ret)
		ret = fi_av_open(s->domain, &attr, &s->av, NULL);
	if (ret) {
		LFV_WARN(FI_LOG_AV, "shm peer not used: %s\n", fi_strerror(-ret));
		lfv_rdm_shm_av_free(s);
		return;
	}
	memcpy(s->gid, av->domain->dev->gid.raw, sizeof(s->gid));
	av->rdm_shm = s;
}

void lfv_rdm_shm_av_close(struct lfv_av *av)
{
	if (av->rdm_shm)
		lfv_rdm_shm_av_free(av->rdm_shm);
	av->rdm_shm = NULL;
}

/*
 * Whether a same-host peer has a shm endpoint we may use: a shm region by
 * its name that we can open. One without (shm off there, a build for
 * libfabric 1.x, another user's process: its region is not ours to open,
 * and its name carries its uid, not ours) would swallow our sends, as shm
 * retries a peer it cannot map for good (-FI_EAGAIN): verbs then. An
 * address comes from fi_getname after fi_enable, which made the peer's
 * region (lfv_rdm_shm_ep_open), so a peer with shm on has it by now.
 */
static bool lfv_rdm_shm_peer_there(const char *name)
{
	int fd = shm_open(name, O_RDWR, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void lfv_rdm_shm_av_insert(struct lfv_av *av, struct lfv_av_entry *e,
			   fi_addr_t fi_addr)
{
	struct lfv_rdm_shm_av *s = av->rdm_shm;
	char name[LFV_SHM_NAME_MAX];
	fi_addr_t shm_addr = fi_addr;	/* in: the user id; out: shm's */

	e->via_shm = false;
	/* A GID names one port of one device, and a device is in one host:
	 * the same GID as our port's is a process on this host, over the
	 * same device (a host with two devices sends between them through
	 * verbs: a first cut). */
	if (!s || memcmp(e->name.gid, s->gid, sizeof(s->gid)))
		return;
	lfv_rdm_shm_name(&e->name, name, sizeof(name));
	if (!lfv_rdm_shm_peer_there(name)) {
		LFV_INFO(FI_LOG_AV, "no shm endpoint %s: that peer through "
			 "verbs\n", name);
		return;
	}
	if (fi_av_insert(s->av, name, 1, &shm_addr, FI_AV_USER_ID, NULL) != 1) {
		LFV_WARN(FI_LOG_AV, "shm AV insert of %s failed: through "
			 "verbs\n", name);
		return;
	}
	e->shm_addr = shm_addr;
	e->via_shm = true;
}

void lfv_rdm_shm_av_remove(struct lfv_av *av, struct lfv_av_entry *e)
{
	if (!e->via_shm)
		return;
	e->via_shm = false;
	fi_av_remove(av->rdm_shm->av, &e->shm_addr, 1, 0);
}
