/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fi_getinfo against fake devices: attributes from device limits, every
 * hint field filtering, node/service resolution and verbs failures. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_verbs.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_svc.h"
#include "lfv_device.h"
#include "lfv_getinfo.h"
#include "lfv_locality.h"

#define V FI_VERSION(1, 17)

static int setup(void **state)
{
	(void)state;
	lfv_devices_release();
	fake_verbs_reset();
	lfv_params.device_name = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfv_devices_release();
	/* Discovery and getinfo must close everything they opened. */
	assert_int_equal(fake_open.ctx, 0);
	assert_int_equal(fake_open.pd, 0);
	assert_int_equal(fake_open.cq, 0);
	assert_int_equal(fake_open.qp, 0);
	assert_int_equal(fake_open.channel, 0);
	assert_int_equal(fake_open.cm_id, 0);
	fake_verbs_reset();
	return 0;
}

static size_t count_infos(const struct fi_info *info)
{
	size_t n = 0;

	for (; info; info = info->next)
		n++;
	return n;
}

static struct fi_info *hints_new(void)
{
	struct fi_info *hints = fi_allocinfo();

	assert_non_null(hints);
	hints->domain_attr->mr_mode = LFV_MR_MODE;
	return hints;
}

/* Most hint tests: device fake0 on 10.1.0.0/24, fresh hints in *state. */
static int setup_fake0_hints(void **state)
{
	setup(state);
	fake_verbs_add("fake0", "10.1.0.5", 24);
	*state = hints_new();
	return 0;
}

static int teardown_hints(void **state)
{
	fi_freeinfo(*state);
	return teardown(state);
}

/* Devices fake0 on 10.1.0.0/24 and fake1 on 10.2.0.0/24; hints for MSG. */
static struct fi_info *two_devices_msg_hints(void)
{
	struct fi_info *hints = hints_new();

	fake_verbs_add("fake0", "10.1.0.5", 24);
	fake_verbs_add("fake1", "10.2.0.5", 24);
	hints->ep_attr->type = FI_EP_MSG;
	return hints;
}

/* A copy of addr (len bytes) in a hints address field, which
 * fi_freeinfo frees. */
static void hints_set_addr(void **field, size_t *field_len, const void *addr,
			   size_t len)
{
	*field = malloc(len);
	assert_non_null(*field);
	memcpy(*field, addr, len);
	*field_len = len;
}

static int setup_two_devices(void **state)
{
	setup(state);
	*state = two_devices_msg_hints();
	return 0;
}

/* getinfo whose one answer is MSG. */
static struct fi_info *getinfo_one_msg(const struct fi_info *hints)
{
	struct fi_info *info = NULL;

	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_int_equal(info->ep_attr->type, FI_EP_MSG);
	return info;
}

/* hints with field past what the device offers find nothing; the field
 * is left unset again (0) for the next check. */
#define assert_nodata_unset(hints, field, value) \
	do { \
		(hints)->field = (value); \
		assert_nodata(V, NULL, NULL, 0, (hints)); \
		(hints)->field = 0; \
	} while (0)

/* Answers without MSG (no IP address, no rdma_cm, a UD address format):
 * DGRAM, then RDM. */
static void assert_ud_only(const struct fi_info *info)
{
	assert_int_equal(count_infos(info), 2);
	assert_int_equal(info->ep_attr->type, FI_EP_DGRAM);
	assert_int_equal(info->next->ep_attr->type, FI_EP_RDM);
}

/* getinfo that must find nothing. */
static void assert_nodata(uint32_t version, const char *node,
			  const char *service, uint64_t flags,
			  const struct fi_info *hints)
{
	struct fi_info *info = NULL;

	assert_int_equal(lfv_getinfo(version, node, service, flags, hints,
				     &info), -FI_ENODATA);
	assert_null(info);
}

static void test_no_device(void **state)
{
	(void)state;
	assert_nodata(V, NULL, NULL, 0, NULL);
}

static void test_device_list_failure(void **state)
{
	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	fake_verbs_fail(FAKE_GET_DEVICE_LIST, ENOSYS);
	assert_nodata(V, NULL, NULL, 0, NULL);
}

/* What an RDM answer says: tagged messages, RMA and atomics,
 * send-after-send order, 64-bit
 * CQ data, rendezvous-sized messages, eager-sized injects, no shared
 * transmit contexts; the control QP's UD name as address. */
static void check_rdm_defaults(const struct fi_info *rdm,
			       const struct fake_dev *dev)
{
	assert_non_null(rdm);
	assert_int_equal(rdm->ep_attr->type, FI_EP_RDM);
	assert_int_equal(rdm->ep_attr->protocol, FI_PROTO_IB_RDM);
	assert_true(rdm->caps & FI_TAGGED);
	assert_true(rdm->caps & FI_MSG);
	/* The fake device does 64-bit atomics. */
	assert_int_equal(rdm->caps & (FI_RMA | FI_ATOMIC | FI_READ |
				      FI_WRITE | FI_REMOTE_READ |
				      FI_REMOTE_WRITE),
			 FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |
			 FI_REMOTE_READ | FI_REMOTE_WRITE);
	assert_int_equal(rdm->tx_attr->rma_iov_limit, 1);
	/* Offered, but only had by asking (no hints here). */
	assert_false(rdm->caps & (FI_MULTI_RECV | FI_SOURCE_ERR));
	assert_true(rdm->ep_attr->mem_tag_format != 0);
	assert_int_equal(rdm->tx_attr->msg_order, FI_ORDER_SAS);
	assert_int_equal(rdm->domain_attr->cq_data_size, 8);
	assert_int_equal(rdm->domain_attr->max_ep_stx_ctx, 0);
	assert_int_equal(rdm->domain_attr->max_ep_srx_ctx, 1);
	assert_int_equal(rdm->tx_attr->inject_size, lfv_params.rdm_eager);
	assert_true(rdm->ep_attr->max_msg_size >= ((size_t)1 << 30) ||
		    rdm->ep_attr->max_msg_size == dev->attr.max_mr_size);
	assert_int_equal(rdm->addr_format, FI_ADDR_IB_UD);
}

static void test_defaults_from_device(void **state)
{
	struct fake_dev *dev;
	struct fi_info *info = NULL, *msg, *dgram;
	struct sockaddr_in *sin;

	(void)state;
	dev = fake_verbs_add("fake0", "10.1.0.5", 24);
	dev->attr.max_qp_wr = 200;	/* below the 384 default */
	dev->attr.max_sge = 3;
	dev->max_inline = 96;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(count_infos(info), 3);
	msg = info;
	dgram = info->next;
	check_rdm_defaults(dgram->next, dev);

	assert_int_equal(msg->ep_attr->type, FI_EP_MSG);
	assert_int_equal(msg->ep_attr->protocol, FI_PROTO_RDMA_CM_IB_RC);
	assert_string_equal(msg->domain_attr->name, "fake0");
	assert_string_equal(msg->fabric_attr->name, "10.1.0.0/24");
	assert_null(msg->fabric_attr->prov_name); /* the core fills it */
	assert_int_equal(msg->addr_format, FI_SOCKADDR_IN);
	sin = msg->src_addr;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.1.0.5"));
	/* Sizes: defaults capped by the device. */
	assert_int_equal(msg->tx_attr->size, 200);
	assert_int_equal(msg->rx_attr->size, 200);
	assert_int_equal(msg->tx_attr->iov_limit, 3);
	assert_int_equal(msg->rx_attr->iov_limit, 3);
	assert_int_equal(msg->tx_attr->inject_size, 96); /* probed */
	assert_int_equal(msg->ep_attr->max_msg_size, 1U << 31);
	assert_int_equal(msg->domain_attr->cq_cnt, dev->attr.max_cq);
	assert_int_equal(msg->domain_attr->ep_cnt, dev->attr.max_qp);
	assert_int_equal(msg->domain_attr->mr_cnt, dev->attr.max_mr);
	assert_int_equal(msg->domain_attr->mr_mode, LFV_MR_MODE);
	assert_int_equal(msg->domain_attr->mr_key_size, 4);
	assert_int_equal(msg->domain_attr->threading, FI_THREAD_SAFE);
	/* Everything but FI_MULTI_RECV, which only asking gets. */
	assert_int_equal(msg->caps, LFV_MSG_CAPS &
			 ~(uint64_t)(FI_MULTI_RECV | FI_RMA_EVENT));
	/* No hints: an RC write's CQ data takes a posted receive. */
	assert_int_equal(msg->mode, FI_RX_CQ_DATA);

	assert_int_equal(dgram->ep_attr->type, FI_EP_DGRAM);
	/* Shared receive contexts are SRQs of RC endpoints only. */
	assert_int_equal(dgram->domain_attr->max_ep_srx_ctx, 0);
	assert_int_equal(msg->domain_attr->max_ep_srx_ctx, 1);
	assert_int_equal(dgram->ep_attr->protocol, FI_PROTO_IB_UD);
	assert_int_equal(dgram->addr_format, FI_ADDR_IB_UD);
	assert_int_equal(dgram->src_addrlen, sizeof(struct lfv_ud_name));
	assert_memory_equal(((struct lfv_ud_name *)dgram->src_addr)->gid,
			    dev->gid.raw, 16);
	assert_int_equal(dgram->ep_attr->max_msg_size, 1024); /* the MTU */
	fi_freeinfo(info);
}

static void test_params_shape_defaults(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	lfv_params.tx_size = 64;
	lfv_params.inline_size = 32;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(info->tx_attr->size, 64);
	assert_int_equal(info->tx_attr->inject_size, 32);
	fi_freeinfo(info);
	lfv_params.tx_size = 384;
	lfv_params.inline_size = 0;
}

static void test_device_without_ip_has_no_msg(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	fake_verbs_add("fake0", NULL, 0);
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_ud_only(info);
	assert_string_equal(info->fabric_attr->name, "IB-0xfe80000000000000");
	fi_freeinfo(info);
}

static void test_inactive_port_skipped(void **state)
{
	struct fake_dev *dev;

	(void)state;
	dev = fake_verbs_add("fake0", "10.1.0.5", 24);
	dev->port.state = IBV_PORT_DOWN;
	assert_nodata(V, NULL, NULL, 0, NULL);
}

static void test_open_failure_skips_device(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	fake_verbs_add("bad0", "10.1.0.5", 24);
	fake_verbs_add("good0", "10.2.0.5", 24);
	fake_verbs_fail(FAKE_OPEN_DEVICE, EPERM);
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_string_equal(info->domain_attr->name, "good0");
	assert_string_equal(info->next->domain_attr->name, "good0");
	assert_string_equal(info->next->next->domain_attr->name, "good0");
	assert_null(info->next->next->next);
	fi_freeinfo(info);
}

static void test_inline_probe_failure_gives_zero(void **state)
{
	struct fake_dev *dev;
	struct fi_info *info = NULL;

	(void)state;
	dev = fake_verbs_add("fake0", "10.1.0.5", 24);
	dev->max_inline = 0;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(info->tx_attr->inject_size, 0);
	fi_freeinfo(info);
}

static void test_no_rdma_cm_no_msg(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	fake_verbs_fail(FAKE_CREATE_CHANNEL, ENODEV);
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_ud_only(info);
	fi_freeinfo(info);
}

static void test_device_name_param(void **state)
{
	struct fi_info *info = NULL;

	(void)state;
	fake_verbs_add("a0", "10.1.0.5", 24);
	fake_verbs_add("b0", "10.2.0.5", 24);
	fake_verbs_add("c0", "10.3.0.5", 24);
	lfv_params.device_name = "c0,a0,nosuch";
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_int_equal(count_infos(info), 6);
	assert_string_equal(info->domain_attr->name, "c0");
	assert_string_equal(info->next->next->next->domain_attr->name, "a0");
	fi_freeinfo(info);

	lfv_devices_release();
	lfv_params.device_name = "nosuch";
	assert_nodata(V, NULL, NULL, 0, NULL);
	lfv_params.device_name = NULL;
}

static void test_locality_order(void **state)
{
	struct lfv_device devs[5] = { 0 };
	const int locality[5] = { 2, 0, 1, 0, 2 };
	const char *expect[5] = { "d1", "d3", "d2", "d0", "d4" };
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(devs[i].name, sizeof(devs[i].name), "d%zu", i);
		devs[i].locality = locality[i];
	}
	lfv_devices_sort(devs, 5);
	for (i = 0; i < 5; i++)
		assert_string_equal(devs[i].name, expect[i]);
}

static void test_hint_ep_type(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->ep_attr->type = FI_EP_MSG;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_int_equal(info->ep_attr->type, FI_EP_MSG);
	fi_freeinfo(info);

	hints->ep_attr->type = FI_EP_RDM;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_int_equal(info->ep_attr->type, FI_EP_RDM);
	fi_freeinfo(info);

	/* FI_LFVERBS_RDM=0 hides it. */
	lfv_params.rdm = 0;
	assert_nodata(V, NULL, NULL, 0, hints);
	lfv_params.rdm = 1;
	/* A type lfverbs has no endpoint of: 1.x's FI_EP_SOCK_STREAM (2.x
	 * defines the name as FI_EP_UNSPEC). */
	hints->ep_attr->type = (enum fi_ep_type)4;
	assert_nodata(V, NULL, NULL, 0, hints);
}

static void test_hint_caps(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_SEND;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	/* Only the asked direction, plus unasked locality caps. */
	assert_true(info->caps & FI_SEND);
	assert_false(info->caps & FI_RECV);
	assert_true(info->caps & FI_REMOTE_COMM);
	assert_false(info->rx_attr->caps & FI_RECV);
	fi_freeinfo(info);

	hints->caps = FI_MSG | FI_RMA | FI_ATOMIC; /* RC does both */
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_true(info->caps & FI_RMA);
	assert_int_equal(info->tx_attr->rma_iov_limit, 1);
	fi_freeinfo(info);
	hints->ep_attr->type = FI_EP_DGRAM; /* UD does neither */
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_TAGGED;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->caps = FI_MSG | FI_SOURCE; /* secondary cap not supported */
	assert_nodata(V, NULL, NULL, 0, hints);
}

static void test_hint_mode(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->mode = 0; /* lfverbs needs no mode bits */
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->mode, 0);
	fi_freeinfo(info);
}

static void test_hint_mr_mode(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	/* MSG (and DGRAM) post the application's buffers: local keys. */
	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->domain_attr->mr_mode = LFV_MR_MODE | FI_MR_ENDPOINT;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, LFV_MR_MODE);
	fi_freeinfo(info);

	/* FI_MR_BASIC in 1.5+ needs FI_LOCAL_MR mode for local keys. */
	hints->domain_attr->mr_mode = LFV_MR_BASIC;
	hints->mode = 0;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->mode = LFV_LOCAL_MR;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, LFV_MR_BASIC);
	assert_true(info->mode & LFV_LOCAL_MR);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = LFV_MR_SCALABLE;
	assert_nodata(V, NULL, NULL, 0, hints);

	/* API 1.4: legacy MR, FI_LOCAL_MR mode required. */
	hints->domain_attr->mr_mode = LFV_MR_BASIC;
	hints->mode = 0;
	assert_nodata(FI_VERSION(1, 4), NULL, NULL, 0, hints);
	hints->mode = LFV_LOCAL_MR;
	info = NULL;
	assert_int_equal(lfv_getinfo(FI_VERSION(1, 4), NULL, NULL, 0, hints,
				     &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, LFV_MR_BASIC);
	fi_freeinfo(info);

	/* RDM copies or registers what it is given: no local keys, in
	 * either form (Open MPI's mtl ofi offers neither). */
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->mode = 0;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_false(info->domain_attr->mr_mode & FI_MR_LOCAL);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = LFV_MR_UNSPEC;
	info = NULL;
	assert_int_equal(lfv_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, hints,
				     &info), 0);
	assert_false(info->mode & LFV_LOCAL_MR);
	fi_freeinfo(info);
	/* 1.5+: mr_mode 0 offers no bits, so the answer holds none, and
	 * without FI_MR_VIRT_ADDR and FI_MR_PROV_KEY it is no RMA target. */
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, 0);
	assert_false(info->mode & LFV_LOCAL_MR);
	assert_true(info->caps & FI_RMA);
	assert_false(info->caps & (FI_REMOTE_READ | FI_REMOTE_WRITE));
	assert_false(info->rx_attr->caps & (FI_REMOTE_READ | FI_REMOTE_WRITE));
	fi_freeinfo(info);
	hints->caps = FI_RMA | FI_REMOTE_WRITE;
	assert_nodata(V, NULL, NULL, 0, hints);
	/* MSG needs local keys: FI_LOCAL_MR, answered as it was offered. */
	hints->caps = 0;
	hints->ep_attr->type = FI_EP_MSG;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->mode = LFV_LOCAL_MR;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode, 0);
	assert_true(info->mode & LFV_LOCAL_MR);
	fi_freeinfo(info);
}

static void test_hint_names(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	fake_verbs_add("fake1", "10.2.0.5", 24);
	hints->domain_attr->name = strdup("fake1");
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 3);
	assert_string_equal(info->domain_attr->name, "fake1");
	fi_freeinfo(info);

	hints->fabric_attr->name = strdup("10.1.0.0/24");
	assert_nodata(V, NULL, NULL, 0, hints); /* fake1 is on 10.2 */
	free(hints->fabric_attr->name);
	hints->fabric_attr->name = strdup("10.2.0.0/24");
	hints->fabric_attr->prov_name = strdup("verbs");
	assert_nodata(V, NULL, NULL, 0, hints);
	free(hints->fabric_attr->prov_name);
	hints->fabric_attr->prov_name = strdup("lfverbs");
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 3); /* fake1: MSG, DGRAM, RDM */
	fi_freeinfo(info);
}

static void test_hint_domain_attrs(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	hints->domain_attr->resource_mgmt = FI_RM_DISABLED;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->threading, FI_THREAD_DOMAIN);
	assert_int_equal(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	assert_int_equal(info->domain_attr->control_progress,
			 FI_PROGRESS_MANUAL);
	assert_int_equal(info->domain_attr->resource_mgmt, FI_RM_DISABLED);
	fi_freeinfo(info);

	hints->domain_attr->cq_data_size = 4; /* immediate data */
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->cq_data_size, 4);
	fi_freeinfo(info);
	assert_nodata_unset(hints, domain_attr->cq_data_size, 8);
	assert_nodata_unset(hints, domain_attr->mr_iov_limit, 2);
	assert_nodata_unset(hints, domain_attr->auth_key_size, 8);
	assert_nodata_unset(hints, domain_attr->cq_cnt, (1 << 16) + 1);
	/* One SRQ, one shared transmit context per endpoint. */
	assert_nodata_unset(hints, domain_attr->max_ep_srx_ctx, 2);
	assert_nodata_unset(hints, domain_attr->max_ep_stx_ctx, 2);
	hints->domain_attr->av_type = FI_AV_MAP;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	fi_freeinfo(info);
}

static void test_hint_tx_rx_attrs(void **state)
{
	const enum fi_ep_type types[] = { FI_EP_MSG, FI_EP_RDM, FI_EP_DGRAM };
	struct fi_info *hints = *state, *info = NULL;
	size_t i;

	hints->ep_attr->type = FI_EP_MSG;
	hints->tx_attr->size = 1 << 14;		/* exactly max_qp_wr */
	hints->rx_attr->iov_limit = 32;
	hints->tx_attr->inject_size = 160;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->tx_attr->size, 1 << 14);
	assert_int_equal(info->rx_attr->iov_limit, 32);
	assert_int_equal(info->tx_attr->inject_size, 160);
	fi_freeinfo(info);

	assert_nodata_unset(hints, tx_attr->size, (1 << 14) + 1);
	assert_nodata_unset(hints, tx_attr->inject_size, 161);
	assert_nodata_unset(hints, rx_attr->iov_limit, 33);
	hints->tx_attr->msg_order = FI_ORDER_RAW; /* RC orders it */
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	fi_freeinfo(info);
	/* Reads may be passed. */
	assert_nodata_unset(hints, tx_attr->msg_order, FI_ORDER_WAR);
	/* Default completion levels: RC completes at the peer's ack, which
	 * is each of them, on MSG; RDM sends with delivery complete go by
	 * rendezvous; DGRAM takes FI_COMPLETION only. */
	hints->tx_attr->op_flags = FI_INJECT_COMPLETE;
	info = getinfo_one_msg(hints);
	assert_int_equal(info->tx_attr->op_flags, FI_INJECT_COMPLETE);
	fi_freeinfo(info);
	hints->ep_attr->type = FI_EP_RDM;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->tx_attr->op_flags, FI_DELIVERY_COMPLETE);
	fi_freeinfo(info);
	hints->ep_attr->type = FI_EP_DGRAM;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->ep_attr->type = FI_EP_MSG;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	fi_freeinfo(info);
	/* fabtests' msg_inject -A inject: FI_INJECT by default, on every
	 * endpoint type (reads and atomics leave it out, lfv_rma.c). */
	hints->tx_attr->op_flags = FI_INJECT;
	for (i = 0; i < 3; i++) {
		hints->ep_attr->type = types[i];
		info = NULL;
		assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info),
				 0);
		assert_int_equal(info->tx_attr->op_flags, FI_INJECT);
		fi_freeinfo(info);
	}
	hints->ep_attr->type = FI_EP_MSG;
	hints->tx_attr->op_flags = 0;
	/* fabtests' multi_recv: FI_MULTI_RECV receives by default, with the
	 * cap that makes the endpoint buffer them. */
	hints->rx_attr->op_flags = FI_MULTI_RECV;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->caps = FI_MSG | FI_MULTI_RECV;
	info = getinfo_one_msg(hints);
	assert_int_equal(info->rx_attr->op_flags, FI_MULTI_RECV);
	fi_freeinfo(info);
	hints->caps = 0;
	hints->rx_attr->op_flags = 0;
	assert_nodata_unset(hints, ep_attr->max_msg_size,
			    (size_t)(1U << 31) + 1);
	assert_nodata_unset(hints, ep_attr->protocol, FI_PROTO_IB_UD);
	hints->ep_attr->tx_ctx_cnt = 2; /* no scalable endpoints */
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT; /* fi_stx_context */
	hints->ep_attr->type = FI_EP_RDM;	/* has none: max_ep_stx_ctx 0 */
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; /* fi_srx_context */
	hints->ep_attr->type = FI_EP_MSG;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->ep_attr->tx_ctx_cnt, FI_SHARED_CONTEXT);
	assert_int_equal(info->ep_attr->rx_ctx_cnt, FI_SHARED_CONTEXT);
	assert_int_equal(info->domain_attr->max_ep_srx_ctx, 1);
	fi_freeinfo(info);
}

static void test_addr_format(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->addr_format = FI_SOCKADDR_IN6;
	assert_nodata(V, NULL, NULL, 0, hints);
	hints->addr_format = FI_SOCKADDR;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_int_equal(info->addr_format, FI_SOCKADDR_IN);
	fi_freeinfo(info);
	hints->addr_format = FI_ADDR_IB_UD;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_ud_only(info);
	fi_freeinfo(info);
}

static void test_node_service_source(void **state)
{
	struct fi_info *hints = *state, *info = NULL;
	struct sockaddr_in *sin;

	assert_int_equal(lfv_getinfo(V, "10.2.0.5", "7471", FI_SOURCE, hints,
				     &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_string_equal(info->domain_attr->name, "fake1");
	sin = info->src_addr;
	assert_int_equal(ntohs(sin->sin_port), 7471);
	assert_null(info->dest_addr);
	fi_freeinfo(info);

	/* A service alone: every device, listening on that port. */
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, "7472", FI_SOURCE, hints, &info), 0);
	assert_int_equal(count_infos(info), 2);
	sin = info->next->src_addr;
	assert_int_equal(ntohs(sin->sin_port), 7472);
	fi_freeinfo(info);

	assert_nodata(V, "10.9.9.9", "7471", FI_SOURCE, hints);
	assert_nodata(V, "not a host name!", NULL, FI_SOURCE | FI_NUMERICHOST,
		      hints);
}

static void test_node_destination(void **state)
{
	struct fi_info *hints = *state, *info = NULL;
	struct sockaddr_in *sin;

	assert_int_equal(lfv_getinfo(V, "10.2.0.77", "9000", 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_string_equal(info->domain_attr->name, "fake1");
	sin = info->dest_addr;
	assert_non_null(sin);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.2.0.77"));
	assert_int_equal(ntohs(sin->sin_port), 9000);
	sin = info->src_addr;
	assert_int_equal(sin->sin_addr.s_addr, inet_addr("10.2.0.5"));
	fi_freeinfo(info);

	/* No route through any RDMA device. */
	assert_nodata(V, "192.0.2.1", "9000", 0, hints);
}

static void test_hint_addresses(void **state)
{
	struct fi_info *hints = *state, *info = NULL;
	struct sockaddr_in src = { .sin_family = AF_INET };

	hints->addr_format = FI_SOCKADDR_IN;
	src.sin_addr.s_addr = inet_addr("10.1.0.5");
	src.sin_port = htons(1234);
	hints_set_addr(&hints->src_addr, &hints->src_addrlen,
		       &src, sizeof(src));
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_string_equal(info->domain_attr->name, "fake0");
	assert_int_equal(((struct sockaddr_in *)info->src_addr)->sin_port,
			 htons(1234));
	fi_freeinfo(info);
}

static void test_ud_hint_addresses(void **state)
{
	struct fi_info *hints = *state, *info = NULL;
	struct lfv_ud_name name = { 0 };
	struct fake_dev *dev1;

	dev1 = fake_verbs_add("fake1", "10.2.0.5", 24);
	hints->addr_format = FI_ADDR_IB_UD;
	memcpy(name.gid, dev1->gid.raw, 16);
	hints_set_addr(&hints->src_addr, &hints->src_addrlen,
		       &name, sizeof(name));
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 2);
	assert_string_equal(info->domain_attr->name, "fake1");
	assert_string_equal(info->next->domain_attr->name, "fake1");
	fi_freeinfo(info);
}

/* The service name (lfv_svc.h) of ip:port. */
static void assert_service_name(const void *addr, size_t len, const char *ip,
				uint16_t port)
{
	const struct lfv_ud_name *n = addr;
	union lfv_sockaddr sa;

	assert_non_null(addr);
	assert_int_equal(len, sizeof(*n));
	assert_true(lfv_ud_name_is_service(n));
	assert_int_equal(n->qpn, 0);
	lfv_ud_name_to_sockaddr(n, &sa);
	assert_int_equal(sa.sa.sa_family, AF_INET);
	assert_int_equal(sa.sin.sin_addr.s_addr, inet_addr(ip));
	assert_int_equal(ntohs(sa.sin.sin_port), port);
}

/* DGRAM and RDM answers to a node and service carry service names: the
 * destination's, and with FI_SOURCE (or a service alone) the local
 * device's address with the port, where an endpoint will listen. A node
 * without a service gives no destination (nothing listens at port 0). */
static void test_ud_node_service(void **state)
{
	enum fi_ep_type types[] = { FI_EP_DGRAM, FI_EP_RDM };
	struct fi_info *hints = *state, *info = NULL;
	size_t i;

	for (i = 0; i < 2; i++) {
		hints->ep_attr->type = types[i];
		assert_int_equal(lfv_getinfo(V, "10.2.0.77", "9000", 0, hints,
					     &info), 0);
		assert_int_equal(count_infos(info), 1);
		assert_string_equal(info->domain_attr->name, "fake1");
		assert_int_equal(info->addr_format, FI_ADDR_IB_UD);
		assert_service_name(info->dest_addr, info->dest_addrlen,
				    "10.2.0.77", 9000);
		assert_false(lfv_ud_name_is_service(info->src_addr));
		fi_freeinfo(info);

		info = NULL;
		assert_int_equal(lfv_getinfo(V, NULL, "7472", FI_SOURCE, hints,
					     &info), 0);
		assert_int_equal(count_infos(info), 2);
		assert_service_name(info->src_addr, info->src_addrlen,
				    "10.1.0.5", 7472);
		assert_service_name(info->next->src_addr,
				    info->next->src_addrlen, "10.2.0.5", 7472);
		assert_null(info->dest_addr);
		fi_freeinfo(info);

		info = NULL;
		assert_int_equal(lfv_getinfo(V, "10.2.0.77", NULL, 0, hints,
					     &info), 0);
		assert_null(info->dest_addr);
		fi_freeinfo(info);
		assert_nodata(V, "192.0.2.1", "9000", 0, hints);
	}
}

/* A service name given back in the hints stands for its address. */
static void test_ud_service_name_hints(void **state)
{
	struct fi_info *hints = *state, *info = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct lfv_ud_name dst;

	sin.sin_addr.s_addr = inet_addr("10.2.0.9");
	sin.sin_port = htons(9100);
	assert_int_equal(lfv_ud_name_from_sockaddr((void *)&sin, &dst), 0);
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_ADDR_IB_UD;
	hints_set_addr(&hints->dest_addr, &hints->dest_addrlen,
		       &dst, sizeof(dst));
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(count_infos(info), 1);
	assert_string_equal(info->domain_attr->name, "fake1");
	assert_service_name(info->dest_addr, info->dest_addrlen, "10.2.0.9",
			    9100);
	fi_freeinfo(info);
}

/* fi_getinfo(3): a passive endpoint in hints->handle comes back in the
 * MSG answers' handle (fi_endpoint then takes over its address). */
static void test_hint_pep_handle(void **state)
{
	struct fi_info *hints = *state, *info = NULL, *fi;
	struct fid pep = { .fclass = FI_CLASS_PEP };
	size_t msg = 0;

	hints->handle = &pep;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	for (fi = info; fi; fi = fi->next) {
		if (fi->ep_attr->type != FI_EP_MSG)
			continue;
		assert_ptr_equal(fi->handle, &pep);
		msg++;
	}
	assert_int_equal(msg, 1);
	fi_freeinfo(info);
	hints->handle = NULL;
}

/* FI_RX_CQ_DATA: an RC write's remote CQ data consumes a posted receive,
 * so MSG answers carry the mode bit when the hints offer it (in mode or
 * rx_attr->mode) or there are no hints; never otherwise, never for
 * DGRAM and RDM (RDM's data travels in a provider message). */
static void test_rx_cq_data_mode(void **state)
{
	struct fi_info *hints = *state, *info = NULL, *fi;

	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	for (fi = info; fi; fi = fi->next) {
		assert_int_equal(fi->ep_attr->type == FI_EP_MSG,
				 !!(fi->mode & FI_RX_CQ_DATA));
		assert_int_equal(fi->ep_attr->type == FI_EP_MSG,
				 !!(fi->rx_attr->mode & FI_RX_CQ_DATA));
	}
	fi_freeinfo(info);

	hints->mode = FI_CONTEXT | FI_RX_CQ_DATA;	/* fabtests' writedata */
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	for (fi = info; fi; fi = fi->next)
		assert_int_equal(fi->ep_attr->type == FI_EP_MSG,
				 !!(fi->mode & FI_RX_CQ_DATA));
	fi_freeinfo(info);

	hints->mode = 0;
	hints->rx_attr->mode = FI_RX_CQ_DATA;
	hints->ep_attr->type = FI_EP_MSG;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_true(info->rx_attr->mode & FI_RX_CQ_DATA);
	fi_freeinfo(info);

	hints->rx_attr->mode = 0;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_false(info->mode & FI_RX_CQ_DATA);
	assert_false(info->rx_attr->mode & FI_RX_CQ_DATA);
	fi_freeinfo(info);
}

/* fabtests' hints: every mode bit, its default mr_mode (fi_getinfo_test). */
static struct fi_info *fabtests_hints(void)
{
	struct fi_info *hints = hints_new();

	hints->mode = ~(uint64_t)0;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT |
				      FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	return hints;
}

/* fi_endpoint(3): the capabilities each direction's attributes may have
 * (no domain caps such as FI_LOCAL_COMM in either). */
#define TX_APPLICABLE (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | \
		       FI_WRITE | FI_SEND | FI_HMEM | FI_TRIGGER | FI_FENCE | \
		       FI_MULTICAST | FI_RMA_PMEM | FI_NAMED_RX_CTX |       \
		       FI_COLLECTIVE)
#define RX_APPLICABLE (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC |          \
		       FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | FI_HMEM | \
		       FI_TRIGGER | FI_RMA_PMEM | FI_DIRECTED_RECV |         \
		       FI_VARIABLE_MSG | FI_MULTI_RECV | FI_SOURCE |         \
		       FI_RMA_EVENT | FI_SOURCE_ERR | FI_COLLECTIVE)

static void assert_dir_caps(const struct fi_info *info)
{
	for (; info; info = info->next) {
		assert_int_equal(info->tx_attr->caps & ~TX_APPLICABLE, 0);
		assert_int_equal(info->rx_attr->caps & ~RX_APPLICABLE, 0);
		assert_int_equal(info->tx_attr->caps & ~info->caps, 0);
		assert_int_equal(info->rx_attr->caps & ~info->caps, 0);
	}
}

/* The OR of the bits[] that combo selects: bit i of combo for bits[i]. */
static uint64_t combo_bits(const uint64_t *bits, size_t nbits, size_t combo)
{
	uint64_t or = 0;
	size_t i;

	for (i = 0; i < nbits; i++)
		if (combo & ((size_t)1 << i))
			or |= bits[i];
	return or;
}

/* getinfo over hints that may find nothing: the answers, or NULL. */
static struct fi_info *getinfo_or_none(const struct fi_info *hints)
{
	struct fi_info *info = NULL;
	int ret = lfv_getinfo(V, NULL, NULL, 0, hints, &info);

	if (ret == -FI_ENODATA)
		return NULL;
	assert_int_equal(ret, 0);
	return info;
}

/* fi_getinfo_test caps2 and caps1: tx/rx caps hold only what applies to
 * that direction, with and without hints, for every primary-cap combo. */
static void test_dir_caps(void **state)
{
	const uint64_t bits[] = { FI_MSG, FI_RMA, FI_TAGGED, FI_ATOMIC,
				  FI_MULTICAST, FI_NAMED_RX_CTX, FI_HMEM,
				  FI_COLLECTIVE, FI_DIRECTED_RECV,
				  FI_VARIABLE_MSG };
	const size_t nbits = sizeof(bits) / sizeof(bits[0]);
	struct fi_info *hints, *info = NULL, *fi;
	uint64_t caps, tx_want, rx_want;
	size_t combo, answered = 0;

	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, NULL, &info), 0);
	assert_dir_caps(info);
	fi_freeinfo(info);

	hints = fabtests_hints();
	for (combo = 0; combo < ((size_t)1 << nbits); combo++) {
		caps = combo_bits(bits, nbits, combo);
		hints->caps = caps;
		info = getinfo_or_none(hints);
		if (!info)
			continue;
		answered++;
		assert_dir_caps(info);
		tx_want = caps & TX_APPLICABLE;
		rx_want = caps & RX_APPLICABLE;
		for (fi = info; fi; fi = fi->next) {
			assert_int_equal(fi->caps & caps, caps);
			assert_int_equal(fi->tx_attr->caps & tx_want, tx_want);
			assert_int_equal(fi->rx_attr->caps & rx_want, rx_want);
		}
		fi_freeinfo(info);
	}
	assert_true(answered > 1);

	/* A hint that copies the locality caps into tx/rx still fits. */
	hints->caps = FI_MSG | FI_LOCAL_COMM | FI_REMOTE_COMM;
	hints->tx_attr->caps = hints->caps;
	hints->rx_attr->caps = hints->caps;
	hints->ep_attr->type = FI_EP_MSG;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_dir_caps(info);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* fi_getinfo_test raw/waw_ordering: RC orders RMA writes after writes and
 * reads after writes, so the answers say how large such a write may be;
 * the RMA order bits (fi_getinfo(3), 1.17) are answered like the old ones. */
static void test_rma_ordering_sizes(void **state)
{
	const uint64_t orders[] = { FI_ORDER_RAW, FI_ORDER_WAW,
				    FI_ORDER_RMA_RAW, FI_ORDER_RMA_WAW };
	struct fi_info *hints, *info = NULL;
	size_t i, max;

	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	hints = fabtests_hints();
	hints->caps = FI_RMA;
	for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		hints->tx_attr->msg_order = orders[i];
		hints->rx_attr->msg_order = orders[i];
		info = NULL;
		assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info),
				 0);
		assert_int_equal(count_infos(info), 1);
		assert_int_equal(info->ep_attr->type, FI_EP_MSG);
		max = info->ep_attr->max_msg_size;
		assert_int_equal(info->ep_attr->max_order_raw_size, max);
		assert_int_equal(info->ep_attr->max_order_waw_size, max);
		/* RC does not order a write after a read. */
		assert_int_equal(info->ep_attr->max_order_war_size, 0);
		fi_freeinfo(info);
	}
	hints->tx_attr->msg_order = FI_ORDER_WAW;
	hints->rx_attr->msg_order = FI_ORDER_WAW;
	hints->ep_attr->max_order_waw_size = max - 1;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_true(info->ep_attr->max_order_waw_size >= max - 1);
	fi_freeinfo(info);
	assert_nodata_unset(hints, ep_attr->max_order_waw_size, max + 1);
	hints->tx_attr->msg_order = FI_ORDER_WAR;
	hints->rx_attr->msg_order = FI_ORDER_WAR;
	assert_nodata(V, NULL, NULL, 0, hints);
	fi_freeinfo(hints);
}

/* fabtests' unexpected_msg -e rdm: FI_TAGGED only, mr_mode FI_MR_LOCAL |
 * FI_MR_ALLOCATED. Without RMA there is no target, so FI_MR_VIRT_ADDR and
 * FI_MR_PROV_KEY need not be offered (libfabric's util providers agree);
 * asking to be a target brings them back. */
#define LFV_RMA_TARGET (FI_REMOTE_READ | FI_REMOTE_WRITE)

static void test_mr_mode_not_rma_target(void **state)
{
	struct fi_info *hints = *state, *info = NULL;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->ep_attr->type, FI_EP_RDM);
	assert_int_equal(info->domain_attr->mr_mode, FI_MR_ALLOCATED);
	assert_false(info->caps & (FI_RMA | FI_ATOMIC));
	fi_freeinfo(info);
	/* Initiating RMA only: still no target. */
	hints->caps = FI_TAGGED | FI_RMA | FI_WRITE;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_false(info->caps & LFV_RMA_TARGET);
	fi_freeinfo(info);
	hints->caps = FI_TAGGED | FI_RMA | FI_REMOTE_WRITE;
	assert_nodata(V, NULL, NULL, 0, hints);
	assert_nodata_unset(hints, caps, FI_TAGGED | FI_ATOMIC);
	assert_nodata(V, NULL, NULL, 0, hints);
	/* Offered, the target bits stay in the answer as before. */
	hints->caps = FI_TAGGED;
	hints->domain_attr->mr_mode = LFV_MR_MODE;
	info = NULL;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	assert_int_equal(info->domain_attr->mr_mode,
			 LFV_MR_MODE & ~FI_MR_LOCAL);
	fi_freeinfo(info);
}

/* fi_getinfo_test mr_mode6: an answer's mr_mode holds only bits the hints
 * offered, for every combination of the eight mode bits. */
static void test_mr_mode_subset(void **state)
{
	const uint64_t bits[] = { FI_MR_LOCAL, FI_MR_RAW, FI_MR_VIRT_ADDR,
				  FI_MR_ALLOCATED, FI_MR_PROV_KEY,
				  FI_MR_MMU_NOTIFY, FI_MR_RMA_EVENT,
				  FI_MR_ENDPOINT };
	struct fi_info *hints, *info = NULL, *fi;
	size_t combo, answered = 0;
	uint64_t mode;

	(void)state;
	fake_verbs_add("fake0", "10.1.0.5", 24);
	hints = fabtests_hints();
	for (combo = 0; combo < 256; combo++) {
		mode = combo_bits(bits, 8, combo);
		hints->domain_attr->mr_mode = (int)mode;
		info = getinfo_or_none(hints);
		if (!info)
			continue;
		answered++;
		for (fi = info; fi; fi = fi->next)
			assert_int_equal(fi->domain_attr->mr_mode & ~mode, 0);
		fi_freeinfo(info);
	}
	assert_true(answered > 1);
	fi_freeinfo(hints);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TH(fn) cmocka_unit_test_setup_teardown(fn, setup_fake0_hints, \
						teardown_hints)
#define T2(fn) cmocka_unit_test_setup_teardown(fn, setup_two_devices, \
						teardown_hints)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_no_device),
		T2(test_ud_node_service),
		T2(test_ud_service_name_hints),
		T(test_device_list_failure),
		T(test_defaults_from_device),
		T(test_params_shape_defaults),
		T(test_device_without_ip_has_no_msg),
		T(test_inactive_port_skipped),
		T(test_open_failure_skips_device),
		T(test_inline_probe_failure_gives_zero),
		T(test_no_rdma_cm_no_msg),
		T(test_device_name_param),
		T(test_locality_order),
		TH(test_hint_ep_type),
		TH(test_hint_caps),
		TH(test_hint_mode),
		TH(test_hint_mr_mode),
		TH(test_hint_names),
		TH(test_hint_domain_attrs),
		TH(test_hint_tx_rx_attrs),
		TH(test_addr_format),
		T2(test_node_service_source),
		T2(test_node_destination),
		T2(test_hint_addresses),
		TH(test_ud_hint_addresses),
		TH(test_hint_pep_handle),
		TH(test_rx_cq_data_mode),
		T(test_dir_caps),
		T(test_rma_ordering_sizes),
		T(test_mr_mode_subset),
		TH(test_mr_mode_not_rma_target),
	};

	return cmocka_run_group_tests_name("getinfo", tests, NULL, NULL);
}
