/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * rdma_cm for lfverbs: event channels, their progress, what their events
 * become on an EQ, and what MSG endpoints (lfv_msg_cm.c) and passive
 * endpoints (lfv_pep.c) share: connection data and names.
 *
 * No thread: an id moves to the event channel of the EQ it is bound to,
 * and reading that EQ takes each rdma_cm event, dispatches it under
 * fabric->cm_lock to the object its id's context points at (passive
 * endpoint, pending connection request, or endpoint), and acks it
 * (FI_PROGRESS_MANUAL control progress, as fi_getinfo says). An object
 * that goes away first clears its id's context under cm_lock, then
 * destroys the id without the lock held (rdma_destroy_id waits for the ack
 * of events already taken).
 *
 * Connection data travels as the verbs provider sends it: one byte of
 * length, then the data, so the two providers interoperate.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lfv_cm.h"
#include "lfv_device.h"
#include "lfv_ep_base.h"
#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_wire.h"

/* ---- event sources: one channel per EQ -------------------------------------- */

struct lfv_cm_source {
	struct lfv_fabric *fabric;
	struct rdma_event_channel *channel;
	pthread_mutex_t lock;		/* one reader at a time, in order */
	struct lfv_list node;		/* in fabric->cm_auto_sources */
	bool auto_on;			/* read by the thread too */
};

static bool lfv_cm_dispatch(struct lfv_fabric *fabric,
			    struct rdma_cm_event *event)
{
	struct lfv_cm_ctx *ctx;
	bool destroy = false;

	pthread_mutex_lock(&fabric->cm_lock);
	ctx = event->id->context;
	if (ctx)
		destroy = ctx->handle(ctx, event);
	pthread_mutex_unlock(&fabric->cm_lock);
	return destroy;
}

/* The EQ's progress hook: takes every pending event (the channel is
 * non-blocking), turns it into EQ entries, and acks it. */
static void lfv_cm_source_progress(void *arg)
{
	struct lfv_cm_source *src = arg;
	struct rdma_cm_event *event;
	struct rdma_cm_id *id;
	bool destroy;

	pthread_mutex_lock(&src->lock);
	while (!rdma_get_cm_event(src->channel, &event)) {
		id = event->id;
		destroy = lfv_cm_dispatch(src->fabric, event);
		rdma_ack_cm_event(event);
		if (destroy)
			rdma_destroy_id(id);
	}
	pthread_mutex_unlock(&src->lock);
}

static void lfv_cm_source_fini(void *arg)
{
	struct lfv_cm_source *src = arg;
	struct lfv_fabric *fabric = src->fabric;

	if (src->auto_on) {
		/* The thread walks the list under this lock only. */
		pthread_mutex_lock(&fabric->cm_auto_lock);
		lfv_poller_del(&fabric->cm_poller, src->channel->fd);
		lfv_list_remove(&src->node);
		pthread_mutex_unlock(&fabric->cm_auto_lock);
	}
	rdma_destroy_event_channel(src->channel);
	pthread_mutex_destroy(&src->lock);
	free(src);
}

static int lfv_cm_source_new(struct lfv_fabric *fabric,
			     struct lfv_cm_source **out)
{
	struct lfv_cm_source *src;
	int ret;

	src = calloc(1, sizeof(*src));
	if (!src)
		return -FI_ENOMEM;
	src->fabric = fabric;
	ret = -pthread_mutex_init(&src->lock, NULL);
	if (ret)
		goto free_src;
	src->channel = rdma_create_event_channel();
	if (!src->channel) {
		ret = lfv_verbs_errno();
		goto destroy_lock;
	}
	ret = lfv_fd_set_nonblock(src->channel->fd);
	if (ret)
		goto destroy_channel;
	*out = src;
	return 0;

destroy_channel:
	rdma_destroy_event_channel(src->channel);
destroy_lock:
	pthread_mutex_destroy(&src->lock);
free_src:
	free(src);
	return ret;
}

/* ---- FI_PROGRESS_AUTO control progress -------------------------------------- */

/* The poller's run: every source under the thread. */
static void lfv_cm_auto_run(void *arg)
{
	struct lfv_fabric *fabric = arg;
	struct lfv_list *item;

	pthread_mutex_lock(&fabric->cm_auto_lock);
	lfv_list_foreach(item, &fabric->cm_auto_sources)
		lfv_cm_source_progress(lfv_container_of(item,
						struct lfv_cm_source, node));
	pthread_mutex_unlock(&fabric->cm_auto_lock);
}

/* Puts a source under the thread (once). */
static int lfv_cm_auto_add(struct lfv_cm_source *src)
{
	struct lfv_fabric *fabric = src->fabric;
	int ret;

	pthread_mutex_lock(&fabric->cm_auto_lock);
	if (src->auto_on) {
		ret = 0;
		goto unlock;
	}
	ret = lfv_poller_start(&fabric->cm_poller, lfv_cm_auto_run, fabric);
	if (ret)
		goto unlock;
	ret = lfv_poller_add(&fabric->cm_poller, src->channel->fd);
	if (ret)
		goto unlock;
	lfv_list_insert_tail(&fabric->cm_auto_sources, &src->node);
	src->auto_on = true;
unlock:
	pthread_mutex_unlock(&fabric->cm_auto_lock);
	return ret;
}

/*
 * Moves an id's events to eq: the EQ gets an event channel (its source)
 * the first time, read whenever the application reads the EQ, as
 * FI_PROGRESS_MANUAL control progress has it. No thread is involved.
 */
int lfv_cm_bind_eq(struct lfv_fabric *fabric, struct lfv_eq *eq,
		   struct rdma_cm_id *id, enum fi_progress progress)
{
	struct lfv_cm_source *src;
	struct lfv_eq_source hook;
	int ret = 0;

	pthread_mutex_lock(&fabric->cm_lock);
	src = lfv_eq_source_arg(eq);
	if (!src) {
		ret = lfv_cm_source_new(fabric, &src);
		if (ret)
			goto unlock;
		hook = (struct lfv_eq_source){
			.progress = { .fn = lfv_cm_source_progress,
				      .arg = src },
			.fini = lfv_cm_source_fini,
			.fd = src->channel->fd,
		};
		ret = lfv_eq_attach_source(eq, &hook);
		if (ret) {
			lfv_cm_source_fini(src);
			goto unlock;
		}
	}
unlock:
	pthread_mutex_unlock(&fabric->cm_lock);
	if (ret)
		return ret;
	if (progress == FI_PROGRESS_AUTO) {
		ret = lfv_cm_auto_add(src);
		if (ret)
			return ret;
	}
	if (id->channel == src->channel)
		return 0;
	return lfv_verbs_ret(rdma_migrate_id(id, src->channel));
}

/* The channel ids start on (until bound to an EQ); nobody reads it. */
int lfv_cm_start(struct lfv_fabric *fabric)
{
	int ret = 0;

	pthread_mutex_lock(&fabric->cm_lock);
	if (!fabric->cm_channel) {
		fabric->cm_channel = rdma_create_event_channel();
		if (!fabric->cm_channel)
			ret = lfv_verbs_errno();
	}
	pthread_mutex_unlock(&fabric->cm_lock);
	return ret;
}

/* At fabric close: every id (and EQ) has gone by then. */
void lfv_cm_stop(struct lfv_fabric *fabric)
{
	lfv_poller_stop(&fabric->cm_poller);
	if (fabric->cm_channel)
		rdma_destroy_event_channel(fabric->cm_channel);
	fabric->cm_channel = NULL;
}

/* ---- connection data ------------------------------------------------------- */

int lfv_cm_data_pack(struct lfv_cm_data *d, const void *param,
		     size_t len)
{
	if (len > LFV_CM_DATA_SIZE || (len && !param))
		return -FI_EINVAL;
	d->buf[0] = (uint8_t)len;
	if (len)
		memcpy(d->buf + 1, param, len);
	d->len = (uint8_t)(len + 1);
	return 0;
}

/* The application's part of an event's private data, or -FI_EMSGSIZE
 * (counted as a drop: the data is not passed on). */
int lfv_cm_data_unpack(struct lfv_fabric *fabric,
		       const struct rdma_conn_param *conn,
		       const uint8_t **data, size_t *len)
{
	int ret = lfv_cm_data_parse(conn->private_data,
				    conn->private_data_len, data, len);

	if (ret)
		lfv_drop(&fabric->drops, FI_LFVERBS_DROP_CM_DATA,
			 "connection data whose length byte overruns it");
	return ret;
}

void lfv_cm_conn_param(const struct lfv_domain *domain,
		       const struct lfv_cm_data *d,
		       struct rdma_conn_param *param)
{
	const struct ibv_device_attr *attr = &domain->dev->attr;

	memset(param, 0, sizeof(*param));
	param->private_data = d->buf;
	param->private_data_len = d->len;
	param->responder_resources = (uint8_t)attr->max_qp_rd_atom;
	param->initiator_depth = (uint8_t)attr->max_qp_init_rd_atom;
	param->flow_control = 1;
	/* 7 is "retry for ever" on soft-RoCE (rxe): a send whose peer is gone
	 * (its ack lost to the peer's fi_shutdown) would never complete.
	 * 6 retries end it with FI_ETIMEDOUT, as for RDM's connections. */
	param->retry_count = 6;
	param->rnr_retry_count = 7;	/* retry forever: never drop a send */
}

/* ---- events to EQ entries ----------------------------------------------- */

void lfv_cm_push(struct lfv_eq *eq, uint32_t event, struct fid *fid,
		 struct fi_info *info, const uint8_t *data, size_t len)
{
	struct {
		struct fi_eq_cm_entry entry;
		uint8_t data[LFV_CM_PRIV_MAX];
	} ev = { .entry = { .fid = fid, .info = info } };

	if (len)
		memcpy(ev.data, data, len);
	if (!eq || lfv_eq_push(eq, event, &ev, sizeof(ev.entry) + len)) {
		LFV_WARN(FI_LOG_EP_CTRL, "lost a connection event %u\n", event);
		fi_freeinfo(info);
	}
}

void lfv_cm_push_err(struct lfv_eq *eq, struct fid *fid, int err,
		     int prov_errno, const uint8_t *data, size_t len)
{
	struct fi_eq_err_entry entry = {
		.fid = fid,
		.err = err,
		.prov_errno = prov_errno,
		.err_data = (void *)data,
		.err_data_size = len,
	};

	if (!eq || lfv_eq_push_err(eq, &entry))
		LFV_WARN(FI_LOG_EP_CTRL, "lost a connection error %d\n", err);
}

int lfv_cm_event_err(const struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
		return FI_ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_ADDR_ERROR:
		return event->status == -ETIMEDOUT ? FI_ETIMEDOUT :
						     FI_EHOSTUNREACH;
	default:
		return FI_ECONNABORTED;
	}
}

/* ---- names ---------------------------------------------------------------- */

bool lfv_id_bound(const struct rdma_cm_id *id)
{
	const struct sockaddr *sa = rdma_get_local_addr((struct rdma_cm_id *)id);

	return sa->sa_family == AF_INET || sa->sa_family == AF_INET6;
}

/* The address an id is (or will be) bound to. */
int lfv_id_name(struct rdma_cm_id *id, const union lfv_sockaddr *preset,
		bool preset_valid, void *addr, size_t *addrlen)
{
	struct sockaddr *sa;

	if (id && lfv_id_bound(id)) {
		sa = rdma_get_local_addr(id);
		return lfv_copy_name(sa, lfv_sockaddr_len(sa), addr, addrlen);
	}
	if (!preset_valid)
		return -FI_EADDRNOTAVAIL;
	return lfv_copy_name(&preset->sa, lfv_sockaddr_len(&preset->sa), addr,
			     addrlen);
}

int lfv_set_sockaddr(union lfv_sockaddr *dst, const void *addr,
		     size_t addrlen)
{
	const struct sockaddr *sa = addr;

	if (!addr || addrlen < sizeof(sa->sa_family))
		return -FI_EINVAL;
	if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    addrlen < lfv_sockaddr_len(sa) || addrlen > sizeof(*dst))
		return -FI_EINVAL;
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, addr, lfv_sockaddr_len(sa));
	return 0;
}
