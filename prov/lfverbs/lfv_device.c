/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Device discovery. Done once per process under a lock and cached: the
 * attributes come from the device (ibv_query_device/port/gid), the inline
 * limit from probing QP creation (verbs does not report it), and the IP
 * addresses from asking rdma_cm which device each local address binds to.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "lfv_device.h"
#include "lfv_errno.h"
#include "lfv_locality.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_prov.h"

#define LFV_INLINE_PROBE_MAX 2048
#define LFV_ROUTE_TIMEOUT_MS 2000

static pthread_mutex_t lfv_devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfv_device_table lfv_table;
static bool lfv_table_ready;

size_t lfv_sockaddr_len(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

static int lfv_port_pick(struct ibv_context *ctx, struct lfv_device *dev)
{
	struct ibv_port_attr port_attr;
	uint8_t port;

	for (port = 1; port <= dev->attr.phys_port_cnt; port++) {
		if (ibv_query_port(ctx, port, &port_attr) ||
		    port_attr.state != IBV_PORT_ACTIVE)
			continue;
		if (ibv_query_gid(ctx, port, 0, &dev->gid))
			continue;
		dev->port_num = port;
		dev->port_attr = port_attr;
		return 0;
	}
	return -FI_ENODEV;
}

static bool lfv_try_inline(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t size,
			   uint32_t *actual)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = size,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		return false;
	*actual = init.cap.max_inline_data;
	ibv_destroy_qp(qp);
	return true;
}

/* Largest max_inline_data an RC QP accepts: binary search on creation. */
static uint32_t lfv_probe_max_inline(struct ibv_context *ctx)
{
	uint32_t lo = 0, hi = LFV_INLINE_PROBE_MAX, mid, actual = 0;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return 0;
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq)
		goto dealloc_pd;
	if (lfv_try_inline(pd, cq, hi, &actual)) {
		lo = actual;
		goto destroy_cq;
	}
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (lfv_try_inline(pd, cq, mid, &actual))
			lo = actual > mid ? actual : mid;
		else
			hi = mid - 1;
	}
destroy_cq:
	ibv_destroy_cq(cq);
dealloc_pd:
	ibv_dealloc_pd(pd);
	return lo;
}

static int lfv_device_query(struct ibv_device *ibdev, struct lfv_device *dev)
{
	struct ibv_context *ctx;
	int ret;

	ctx = ibv_open_device(ibdev);
	if (!ctx)
		return lfv_verbs_errno();
	ret = lfv_verbs_ret(ibv_query_device(ctx, &dev->attr));
	if (ret)
		goto close_ctx;
	ret = lfv_port_pick(ctx, dev);
	if (ret)
		goto close_ctx;
	dev->max_inline = lfv_probe_max_inline(ctx);
	dev->ibdev = ibdev;
	snprintf(dev->name, sizeof(dev->name), "%s", ibv_get_device_name(ibdev));
close_ctx:
	ibv_close_device(ctx);
	return ret;
}

static struct lfv_device *lfv_table_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < lfv_table.count; i++) {
		if (strlen(lfv_table.devs[i].name) == len &&
		    !strncmp(lfv_table.devs[i].name, name, len))
			return &lfv_table.devs[i];
	}
	return NULL;
}

/* FI_LFVERBS_DEVICE_NAME: keep only the listed devices, in list order. */
static void lfv_apply_device_filter(const char *filter)
{
	struct lfv_device *kept;
	const char *tok = filter, *end;
	struct lfv_device *dev;
	size_t n = 0, i;

	kept = calloc(lfv_table.count ? lfv_table.count : 1, sizeof(*kept));
	if (!kept)
		return;
	while (*tok) {
		end = strchr(tok, ',');
		if (!end)
			end = tok + strlen(tok);
		dev = lfv_table_find(tok, (size_t)(end - tok));
		for (i = 0; dev && i < n; i++)
			if (!strcmp(kept[i].name, dev->name))
				dev = NULL;
		if (dev)
			kept[n++] = *dev;
		tok = *end ? end + 1 : end;
	}
	free(lfv_table.devs);
	lfv_table.devs = kept;
	lfv_table.count = n;
	if (!n)
		LFV_INFO(FI_LOG_FABRIC, "FI_LFVERBS_DEVICE_NAME=%s matches no "
			 "device\n", filter);
}

static unsigned lfv_mask_prefix(const uint8_t *mask, size_t len)
{
	unsigned bits = 0;
	size_t i;

	for (i = 0; i < len; i++)
		bits += (unsigned)__builtin_popcount(mask[i]);
	return bits;
}

/* "a.b.c.d/len" of the subnet addr lives in, for the fabric name. */
static void lfv_subnet_name(const struct sockaddr *sa,
			    const struct sockaddr *mask, char *buf, size_t len)
{
	uint8_t net[16] = { 0 };
	char ip[INET6_ADDRSTRLEN] = "";
	const uint8_t *a, *m;
	size_t i, n;

	if (sa->sa_family == AF_INET) {
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		m = (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr;
		n = 4;
	} else {
		a = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		m = (const uint8_t *)&((const struct sockaddr_in6 *)mask)->sin6_addr;
		n = 16;
	}
	for (i = 0; i < n; i++)
		net[i] = a[i] & m[i];
	inet_ntop(sa->sa_family, net, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, lfv_mask_prefix(m, n));
}

static bool lfv_ifaddr_usable(const struct ifaddrs *ifa)
{
	const struct sockaddr_in6 *sin6;

	if (!ifa->ifa_addr || !ifa->ifa_netmask || !(ifa->ifa_flags & IFF_UP) ||
	    (ifa->ifa_flags & IFF_LOOPBACK))
		return false;
	if (ifa->ifa_addr->sa_family == AF_INET)
		return true;
	if (ifa->ifa_addr->sa_family != AF_INET6)
		return false;
	/* Link-local addresses need a scope id rdma_cm users rarely carry. */
	sin6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
	return !IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr);
}

static void lfv_device_add_addr(struct rdma_cm_id *id,
				const struct ifaddrs *ifa)
{
	const char *name = ibv_get_device_name(id->verbs->device);
	struct lfv_device *dev = lfv_table_find(name, strlen(name));
	struct lfv_addr *addr;

	if (!dev || dev->naddrs == LFV_MAX_ADDRS)
		return;
	addr = &dev->addrs[dev->naddrs++];
	memcpy(&addr->addr, ifa->ifa_addr, lfv_sockaddr_len(ifa->ifa_addr));
	addr->port_num = id->port_num;
	lfv_subnet_name(ifa->ifa_addr, ifa->ifa_netmask, addr->fabric_name,
			sizeof(addr->fabric_name));
}

/* An address belongs to a device when rdma_cm can bind to it there. */
static void lfv_collect_addrs(void)
{
	struct rdma_event_channel *ch;
	struct ifaddrs *ifaddrs, *ifa;
	struct rdma_cm_id *id;

	if (getifaddrs(&ifaddrs))
		return;
	ch = rdma_create_event_channel();
	if (!ch) {
		LFV_INFO(FI_LOG_FABRIC, "rdma_cm unavailable (%s): no IP "
			 "addresses, MSG endpoints not offered\n",
			 strerror(errno));
		goto free_ifaddrs;
	}
	for (ifa = ifaddrs; ifa; ifa = ifa->ifa_next) {
		if (!lfv_ifaddr_usable(ifa))
			continue;
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
			continue;
		if (!rdma_bind_addr(id, ifa->ifa_addr) && id->verbs)
			lfv_device_add_addr(id, ifa);
		rdma_destroy_id(id);
	}
	rdma_destroy_event_channel(ch);
free_ifaddrs:
	freeifaddrs(ifaddrs);
}

static void lfv_devices_discover(void)
{
	struct ibv_device **list;
	int num = 0, i;

	list = ibv_get_device_list(&num);
	if (!list || num <= 0) {
		LFV_INFO(FI_LOG_FABRIC, "no RDMA devices found\n");
		if (list)
			ibv_free_device_list(list);
		return;
	}
	lfv_table.devs = calloc((size_t)num, sizeof(*lfv_table.devs));
	if (!lfv_table.devs) {
		ibv_free_device_list(list);
		return;
	}
	lfv_table.list = list;
	for (i = 0; i < num; i++) {
		if (lfv_device_query(list[i], &lfv_table.devs[lfv_table.count]))
			LFV_INFO(FI_LOG_FABRIC, "skipping %s: no active port\n",
				 ibv_get_device_name(list[i]));
		else
			lfv_table.count++;
	}
	if (lfv_params.device_name && *lfv_params.device_name)
		lfv_apply_device_filter(lfv_params.device_name);
	else
		lfv_devices_sort_by_locality(lfv_table.devs, lfv_table.count);
	if (lfv_table.count)
		lfv_collect_addrs();
	else
		LFV_INFO(FI_LOG_FABRIC, "no usable RDMA device\n");
}

int lfv_devices_get(const struct lfv_device_table **table)
{
	pthread_mutex_lock(&lfv_devices_lock);
	if (!lfv_table_ready) {
		lfv_devices_discover();
		lfv_table_ready = true;
	}
	pthread_mutex_unlock(&lfv_devices_lock);
	*table = &lfv_table;
	return lfv_table.count ? 0 : -FI_ENODATA;
}

const struct lfv_device *lfv_device_find(const char *name)
{
	const struct lfv_device_table *table;

	if (!name || lfv_devices_get(&table))
		return NULL;
	return lfv_table_find(name, strlen(name));
}

void lfv_devices_release(void)
{
	pthread_mutex_lock(&lfv_devices_lock);
	free(lfv_table.devs);
	if (lfv_table.list)
		ibv_free_device_list(lfv_table.list);
	memset(&lfv_table, 0, sizeof(lfv_table));
	lfv_table_ready = false;
	pthread_mutex_unlock(&lfv_devices_lock);
}

int lfv_route_lookup(const struct sockaddr *dst, char *dev_name,
		     size_t name_len, union lfv_sockaddr *src)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	struct pollfd pfd;
	int ret;

	ch = rdma_create_event_channel();
	if (!ch)
		return lfv_verbs_errno();
	ret = lfv_verbs_ret(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	if (ret)
		goto destroy_channel;
	ret = lfv_verbs_ret(rdma_resolve_addr(id, NULL, (struct sockaddr *)dst,
					      LFV_ROUTE_TIMEOUT_MS));
	if (ret)
		goto destroy_id;
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, LFV_ROUTE_TIMEOUT_MS + 1000) != 1) {
		ret = -FI_ETIMEDOUT;
		goto destroy_id;
	}
	ret = lfv_verbs_ret(rdma_get_cm_event(ch, &event));
	if (ret)
		goto destroy_id;
	if (event->event != RDMA_CM_EVENT_ADDR_RESOLVED || !id->verbs)
		ret = -FI_EHOSTUNREACH;
	rdma_ack_cm_event(event);
	if (ret)
		goto destroy_id;
	snprintf(dev_name, name_len, "%s", ibv_get_device_name(id->verbs->device));
	memset(src, 0, sizeof(*src));
	memcpy(src, rdma_get_local_addr(id),
	       lfv_sockaddr_len(rdma_get_local_addr(id)));
destroy_id:
	rdma_destroy_id(id);
destroy_channel:
	rdma_destroy_event_channel(ch);
	return ret;
}
