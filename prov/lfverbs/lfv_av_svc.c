/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Service names in an AV (lfv_svc.h): resolving them for fi_av_insert, and
 * building them for fi_av_insertsvc and fi_av_insertsym.
 *
 * fi_av_insertsym(node, nodecnt, service, svccnt) inserts nodecnt x svccnt
 * addresses, node by node and for each node service by service: services
 * are service, service + 1, ... (numeric); nodes are node, then the next
 * numeric address (IPv4; the last 32 bits of IPv6), or for a host name
 * ending in digits the same name with the number counted up, its width
 * kept ("n08", "n09", "n10"). More than one node or service when they
 * cannot be counted: -FI_EINVAL. A node that does not resolve fails its
 * addresses as an insert of a bad address does (-FI_EINVAL for each).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_av_svc.h"
#include "lfv_log.h"
#include "lfv_svc.h"

/* The first 32 bytes of an inserted address: a name, or a scalable
 * endpoint's base name. */
static const struct lfv_ud_name *lfv_av_name_at(const struct lfv_av *av,
						const void *addr, size_t i)
{
	return (const void *)((const char *)addr + i * av->addrlen);
}

int lfv_av_resolve(struct lfv_av *av, const void *addr, size_t count,
		   struct lfv_av_resolved **res)
{
	struct lfv_av_resolved *r = NULL;
	struct lfv_ud_name name;
	size_t i;

	*res = NULL;
	for (i = 0; i < count; i++) {
		memcpy(&name, lfv_av_name_at(av, addr, i), sizeof(name));
		if (!lfv_ud_name_is_service(&name))
			continue;
		if (!r) {
			r = calloc(count, sizeof(*r));
			if (!r)
				return -FI_ENOMEM;
		}
		r[i].service = true;
		r[i].err = lfv_svc_resolve(av->domain->dev, &name, &r[i].qp);
	}
	*res = r;
	return 0;
}

const void *lfv_av_resolved_addr(const struct lfv_av *av, const void *addr,
				 size_t i, const struct lfv_av_resolved *res,
				 union lfv_av_addr_buf *buf, int *err)
{
	const void *one = lfv_av_name_at(av, addr, i);

	*err = 0;
	if (!res || !res[i].service)
		return one;
	if (res[i].err) {
		*err = res[i].err;
		return NULL;
	}
	memcpy(buf, one, av->addrlen);
	buf->ud = res[i].qp;
	return buf;
}

/* ---- names from hosts and services ------------------------------------------ */

/* The service name of (node, service), or a service name with port 0 that
 * no resolution accepts when they do not resolve. */
static void lfv_av_svc_name(const char *node, const char *service,
			    struct lfv_ud_name *name)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM };
	struct addrinfo *ai;
	int ret;

	ret = getaddrinfo(node, service, &hints, &ai);
	if (ret || lfv_ud_name_from_sockaddr(ai->ai_addr, name)) {
		LFV_INFO(FI_LOG_AV, "cannot resolve %s:%s: %s\n", node,
			 service, ret ? gai_strerror(ret) : "not IP");
		memset(name, 0, sizeof(*name));
		name->flags = LFV_UD_NAME_SERVICE;
	}
	if (!ret)
		freeaddrinfo(ai);
}

/* Node number k of a symmetric insert, in buf: 0 or -FI_EINVAL. */
static int lfv_av_sym_node(const char *node, size_t k, char *buf,
			   size_t len)
{
	unsigned char ip[16];
	size_t n = strlen(node), digits = 0;
	unsigned long long base;
	uint32_t v;

	if (inet_pton(AF_INET, node, ip) == 1 ||
	    inet_pton(AF_INET6, node, ip) == 1) {
		int af = strchr(node, ':') ? AF_INET6 : AF_INET;
		unsigned char *last = ip + (af == AF_INET ? 0 : 12);

		memcpy(&v, last, 4);
		v = htonl(ntohl(v) + (uint32_t)k);
		memcpy(last, &v, 4);
		return inet_ntop(af, ip, buf, (socklen_t)len) ? 0 :
							       -FI_EINVAL;
	}
	while (digits < n && isdigit((unsigned char)node[n - 1 - digits]))
		digits++;
	if (!digits)
		return k ? -FI_EINVAL : (snprintf(buf, len, "%s", node) <
					 (int)len ? 0 : -FI_EINVAL);
	base = strtoull(node + n - digits, NULL, 10);
	if (snprintf(buf, len, "%.*s%0*llu", (int)(n - digits), node,
		     (int)digits, base + k) >= (int)len)
		return -FI_EINVAL;
	return 0;
}

/* Service number k of a symmetric insert, in buf: 0 or -FI_EINVAL. */
static int lfv_av_sym_service(const char *service, size_t k, char *buf,
			      size_t len)
{
	char *end;
	unsigned long port;

	if (!k)
		return snprintf(buf, len, "%s", service) < (int)len ? 0 :
								    -FI_EINVAL;
	port = strtoul(service, &end, 10);
	if (*end || end == service || port + k > 65535)
		return -FI_EINVAL;
	snprintf(buf, len, "%lu", port + k);
	return 0;
}

int lfv_av_insertsym(struct fid_av *av_fid, const char *node, size_t nodecnt,
		     const char *service, size_t svccnt, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct lfv_av *av = lfv_container_of(av_fid, struct lfv_av, av_fid);
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	union lfv_av_addr_buf *one;
	size_t i, j, count;
	char *names;
	int ret = 0;

	if (!node || !service || !nodecnt || !svccnt ||
	    nodecnt > INT_MAX / svccnt)
		return -FI_EINVAL;
	count = nodecnt * svccnt;
	names = calloc(count, av->addrlen);
	if (!names)
		return -FI_ENOMEM;
	for (i = 0; i < nodecnt && !ret; i++) {
		ret = lfv_av_sym_node(node, i, host, sizeof(host));
		for (j = 0; j < svccnt && !ret; j++) {
			ret = lfv_av_sym_service(service, j, serv,
						 sizeof(serv));
			one = (void *)(names + (i * svccnt + j) * av->addrlen);
			if (!ret)
				lfv_av_svc_name(host, serv, &one->ud);
		}
	}
	if (!ret)
		ret = fi_av_insert(av_fid, names, count, fi_addr, flags,
				   context);
	free(names);
	return ret;
}

int lfv_av_insertsvc(struct fid_av *av, const char *node, const char *service,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return lfv_av_insertsym(av, node, 1, service, 1, fi_addr, flags,
				context);
}
