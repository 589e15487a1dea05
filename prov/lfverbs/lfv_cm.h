/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rdma_cm for lfverbs (lfv_cm.c): event channels, their progress and what
 * their events become on an EQ.
 */
#ifndef LFV_CM_H
#define LFV_CM_H

#include <stdbool.h>

#include <rdma/rdma_cma.h>
#include <rdma/fi_endpoint.h>

#include "lfv_eq.h"
#include "lfv_prov.h"
#include "lfv_wire.h"

/* What rdma_cm events are dispatched to (id->context points at one). */
struct lfv_cm_ctx {
	/* Returns true when the event's id must be destroyed (after ack). */
	bool (*handle)(struct lfv_cm_ctx *ctx, struct rdma_cm_event *event);
};


/* rdma_cm (lfv_cm.c): the fabric's parking channel (ids live there until
 * bound to an EQ), an MSG endpoint's id (created, or taken from
 * info->handle), and binding an id to an EQ's channel. lfv_cm_detach stops
 * event delivery to an endpoint that is closing. */
int lfv_cm_start(struct lfv_fabric *fabric);
void lfv_cm_stop(struct lfv_fabric *fabric);
int lfv_cm_bind_eq(struct lfv_fabric *fabric, struct lfv_eq *eq,
		   struct rdma_cm_id *id, enum fi_progress progress);

/* The control progress an fi_info asks for (MANUAL when unspecified). */
static inline enum fi_progress lfv_control_progress(const struct fi_info *info)
{
	return info && info->domain_attr ? info->domain_attr->control_progress :
					   FI_PROGRESS_MANUAL;
}

/* Connection data as the verbs provider sends it: a length byte, then the
 * application's bytes (lfv_wire.h). */
struct lfv_cm_data {
	uint8_t buf[LFV_CM_PRIV_MAX];
	uint8_t len;
};

int lfv_cm_data_pack(struct lfv_cm_data *d, const void *param, size_t len);
/* The application's part of an event's private data, or -FI_EMSGSIZE
 * (counted as a drop: the data is not passed on). */
int lfv_cm_data_unpack(struct lfv_fabric *fabric,
		       const struct rdma_conn_param *conn,
		       const uint8_t **data, size_t *len);
/* The connection parameters of a connect or accept carrying d. */
void lfv_cm_conn_param(const struct lfv_domain *domain,
		       const struct lfv_cm_data *d,
		       struct rdma_conn_param *param);

/* Connection events as EQ entries (a lost one is logged). */
void lfv_cm_push(struct lfv_eq *eq, uint32_t event, struct fid *fid,
		 struct fi_info *info, const uint8_t *data, size_t len);
void lfv_cm_push_err(struct lfv_eq *eq, struct fid *fid, int err,
		     int prov_errno, const uint8_t *data, size_t len);
/* The positive FI_E* of a failed connection event. */
int lfv_cm_event_err(const struct rdma_cm_event *event);

/* Names of rdma_cm ids: an id's source (or the one set before it was
 * bound), and an address given to fi_setname / fi_connect checked and
 * copied. */
bool lfv_id_bound(const struct rdma_cm_id *id);
int lfv_id_name(struct rdma_cm_id *id, const union lfv_sockaddr *preset,
		bool preset_valid, void *addr, size_t *addrlen);
int lfv_set_sockaddr(union lfv_sockaddr *dst, const void *addr,
		     size_t addrlen);

#endif /* LFV_CM_H */
