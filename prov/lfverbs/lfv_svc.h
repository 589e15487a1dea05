/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Service names: DGRAM and RDM endpoints reachable by host and port.
 *
 * A UD endpoint's own name (fi_getname) is its QP's: GID, QP number, Q_Key.
 * An application that knows only a host and a port (fi_getinfo(node,
 * service), fi_av_insertsvc) cannot build that, so a struct lfv_ud_name can
 * also be a *service name*: flags has LFV_UD_NAME_SERVICE, gid holds an IP
 * address (IPv6, or IPv4-mapped ::ffff:a.b.c.d), port the port in network
 * order, qpn 0.
 *
 * rdma_cm's UDP port space is exactly "the UD QP behind host:port": an
 * endpoint whose source address is a service name binds an rdma_cm id of
 * that port space to it and listens (lfv_svc_listen); a background thread
 * answers each service ID resolution request (SIDR) with the endpoint's QP
 * name. fi_av_insert of a service name asks that endpoint (lfv_svc_resolve,
 * synchronous: address, route, SIDR) and stores the QP name it learns, so
 * the data path and FI_SOURCE only ever see QP names.
 *
 * Lock order: lfv_svc's lock is a leaf (nothing else is taken under it);
 * the listener thread takes no lock of lfverbs at all.
 */
#ifndef LFV_SVC_H
#define LFV_SVC_H

#include <stdbool.h>
#include <stdint.h>

#include "lfv_prov.h"

#define LFV_UD_NAME_SERVICE 0x1

static inline bool lfv_ud_name_is_service(const struct lfv_ud_name *n)
{
	return (n->flags & LFV_UD_NAME_SERVICE) != 0;
}

/* A service name for an AF_INET or AF_INET6 address and its port:
 * 0, or -FI_EINVAL for another family. */
int lfv_ud_name_from_sockaddr(const struct sockaddr *sa,
			      struct lfv_ud_name *name);

/* The address and port of a service name (IPv4-mapped -> AF_INET). */
void lfv_ud_name_to_sockaddr(const struct lfv_ud_name *name,
			     union lfv_sockaddr *sa);

/*
 * Asks the endpoint listening at a service name for its QP, through the
 * device dev (the address must route there): fills *qp_name (a QP name)
 * and returns 0, or -FI_EHOSTUNREACH (no route, or the route leaves from
 * another device), -FI_ECONNREFUSED (nobody listens there, still after
 * the resolve timeout), -FI_ETIMEDOUT, -FI_EINVAL (not a service name, or
 * a malformed answer).
 */
int lfv_svc_resolve(const struct lfv_device *dev,
		    const struct lfv_ud_name *svc, struct lfv_ud_name *qp_name);

/* The private data of a SIDR reply: "lfsv", version 1, the QP name. The
 * resolver checks all of it, and that the name's QP number and Q_Key are
 * the ones rdma_cm reports. */
#define LFV_SVC_MAGIC 0x6c667376u
#define LFV_SVC_VERSION 1

struct lfv_svc_reply {
	uint32_t magic;
	uint32_t version;
	struct lfv_ud_name name;
};

struct lfv_svc_listener;

/*
 * Listens at an endpoint's source address when it is a service name (else
 * *out = NULL) and answers with the endpoint's QP name (the SIDR reply
 * carries it as private data, so that the resolver stores the very name
 * fi_getname gives: FI_SOURCE then matches). -FI_EADDRINUSE when another
 * endpoint has the port, -FI_EADDRNOTAVAIL when the address is not local.
 */
int lfv_svc_listen(const struct fi_info *info, const struct lfv_ud_name *name,
		   struct lfv_svc_listener **out);
/* Stops answering; NULL is a no-op. */
void lfv_svc_close(struct lfv_svc_listener *l);

#endif /* LFV_SVC_H */
