/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Service names of UD endpoints: see lfv_svc.h. */
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lfv_errno.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_poller.h"
#include "lfv_svc.h"

/* Each rdma_cm step of a resolution (address, route) waits this long. */
#define LFV_SVC_STEP_MS 2000
/* Pause between SIDR tries while nobody listens at the port yet. */
#define LFV_SVC_RETRY_MS 50
#define LFV_SVC_QPN_MAX 0xffffffU

static const uint8_t lfv_v4_mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

int lfv_ud_name_from_sockaddr(const struct sockaddr *sa,
			      struct lfv_ud_name *name)
{
	const struct sockaddr_in *sin = (const void *)sa;
	const struct sockaddr_in6 *sin6 = (const void *)sa;

	memset(name, 0, sizeof(*name));
	if (sa->sa_family == AF_INET) {
		memcpy(name->gid, lfv_v4_mapped, sizeof(lfv_v4_mapped));
		memcpy(name->gid + 12, &sin->sin_addr, 4);
		name->port = sin->sin_port;
	} else if (sa->sa_family == AF_INET6) {
		memcpy(name->gid, &sin6->sin6_addr, 16);
		name->port = sin6->sin6_port;
	} else {
		return -FI_EINVAL;
	}
	name->flags = LFV_UD_NAME_SERVICE;
	return 0;
}

void lfv_ud_name_to_sockaddr(const struct lfv_ud_name *name,
			     union lfv_sockaddr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if (!memcmp(name->gid, lfv_v4_mapped, sizeof(lfv_v4_mapped))) {
		sa->sin.sin_family = AF_INET;
		memcpy(&sa->sin.sin_addr, name->gid + 12, 4);
		sa->sin.sin_port = name->port;
	} else {
		sa->sin6.sin6_family = AF_INET6;
		memcpy(&sa->sin6.sin6_addr, name->gid, 16);
		sa->sin6.sin6_port = name->port;
	}
}

/* ---- resolution (the AV's side) ------------------------------------------- */

static int64_t lfv_svc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What an unexpected rdma_cm event means for a resolution. */
static int lfv_svc_event_err(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_UNREACHABLE:
		/* A SIDR reply with a status (positive: IB_SIDR_UNSUPPORTED
		 * when no id listens at the port), or no reply at all. */
		return ev->status > 0 ? -FI_ECONNREFUSED :
		       ev->status == -ETIMEDOUT ? -FI_ETIMEDOUT :
						  -FI_EHOSTUNREACH;
	case RDMA_CM_EVENT_REJECTED:
		return -FI_ECONNREFUSED;
	default:
		return -FI_EHOSTUNREACH;
	}
}

/* Waits for the next event of the channel: 0 with *ev when it is `want`
 * (the caller acks it), else a negative error (the event is acked). */
static int lfv_svc_wait(struct rdma_event_channel *ch,
			enum rdma_cm_event_type want, int timeout_ms,
			struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int n, ret;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		return -FI_ETIMEDOUT;
	if (n < 0 || rdma_get_cm_event(ch, ev))
		return lfv_verbs_ret(-1);
	if ((*ev)->event == want)
		return 0;
	ret = lfv_svc_event_err(*ev);
	LFV_INFO(FI_LOG_AV, "service resolution: %s (status %d)\n",
		 rdma_event_str((*ev)->event), (*ev)->status);
	rdma_ack_cm_event(*ev);
	return ret;
}

/* One rdma_cm step: rc is what starting it returned; then its event. */
static int lfv_svc_step(struct rdma_event_channel *ch, int rc,
			enum rdma_cm_event_type want, int timeout_ms,
			struct rdma_cm_event **ev)
{
	int ret = lfv_verbs_ret(rc);

	return ret ? ret : lfv_svc_wait(ch, want, timeout_ms, ev);
}

/* The QP name in the SIDR reply (an ESTABLISHED event of a UD id): 0, or
 * -FI_EINVAL when the listener is not an lfverbs endpoint or says a QP
 * other than the one rdma_cm reports. */
static int lfv_svc_answer(const struct rdma_ud_param *ud,
			  struct lfv_ud_name *qp_name)
{
	struct lfv_svc_reply r;

	if (!ud->private_data || ud->private_data_len < sizeof(r))
		return -FI_EINVAL;
	memcpy(&r, ud->private_data, sizeof(r));
	if (r.magic != LFV_SVC_MAGIC || r.version != LFV_SVC_VERSION ||
	    r.name.flags || r.name.qpn != ud->qp_num || !ud->qp_num ||
	    ud->qp_num > LFV_SVC_QPN_MAX || r.name.qkey != ud->qkey)
		return -FI_EINVAL;
	*qp_name = r.name;
	return 0;
}

/* One try: address, route, SIDR. */
static int lfv_svc_try(struct rdma_event_channel *ch,
		       const struct lfv_device *dev,
		       const union lfv_sockaddr *dst, int sidr_ms,
		       struct lfv_ud_name *qp_name)
{
	struct rdma_conn_param param = { .qp_num = 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int ret;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_UDP))
		return lfv_verbs_ret(-1);
	ret = lfv_svc_step(ch, rdma_resolve_addr(id, NULL,
						 (struct sockaddr *)&dst->sa,
						 LFV_SVC_STEP_MS),
			   RDMA_CM_EVENT_ADDR_RESOLVED, LFV_SVC_STEP_MS + 500,
			   &ev);
	if (ret)
		goto destroy;
	rdma_ack_cm_event(ev);
	if (!id->verbs ||
	    strcmp(ibv_get_device_name(id->verbs->device), dev->name)) {
		ret = -FI_EHOSTUNREACH;	/* another device's address */
		goto destroy;
	}
	ret = lfv_svc_step(ch, rdma_resolve_route(id, LFV_SVC_STEP_MS),
			   RDMA_CM_EVENT_ROUTE_RESOLVED, LFV_SVC_STEP_MS + 500,
			   &ev);
	if (ret)
		goto destroy;
	rdma_ack_cm_event(ev);
	ret = lfv_svc_step(ch, rdma_connect(id, &param),
			   RDMA_CM_EVENT_ESTABLISHED, sidr_ms, &ev);
	if (ret)
		goto destroy;
	ret = lfv_svc_answer(&ev->param.ud, qp_name);
	rdma_ack_cm_event(ev);
destroy:
	rdma_destroy_id(id);
	return ret;
}

int lfv_svc_resolve(const struct lfv_device *dev,
		    const struct lfv_ud_name *svc, struct lfv_ud_name *qp_name)
{
	int64_t deadline = lfv_svc_now_ms() + (int64_t)lfv_params.svc_timeout;
	struct rdma_event_channel *ch;
	union lfv_sockaddr dst;
	int64_t left;
	int ret;

	if (!lfv_ud_name_is_service(svc) || !svc->port)
		return -FI_EINVAL;
	lfv_ud_name_to_sockaddr(svc, &dst);
	ch = rdma_create_event_channel();
	if (!ch)
		return lfv_verbs_errno();
	/* A peer that is still starting refuses: try again until the
	 * timeout, as a TCP client would reconnect. */
	for (;;) {
		left = deadline - lfv_svc_now_ms();
		ret = lfv_svc_try(ch, dev, &dst,
				  (int)(left > LFV_SVC_STEP_MS ? left :
					LFV_SVC_STEP_MS), qp_name);
		if (ret != -FI_ECONNREFUSED ||
		    lfv_svc_now_ms() + LFV_SVC_RETRY_MS >= deadline)
			break;
		poll(NULL, 0, LFV_SVC_RETRY_MS);
	}
	rdma_destroy_event_channel(ch);
	return ret;
}

/* ---- listening (the endpoint's side) ---------------------------------------- */

struct lfv_svc_listener {
	struct rdma_cm_id *id;
	struct lfv_svc_reply reply;
};

/* One thread and one rdma_cm channel serve every listening endpoint of the
 * process; both exist while at least one endpoint listens. */
static struct {
	pthread_mutex_t lock;		/* users, ch, poller */
	unsigned int users;
	struct rdma_event_channel *ch;
	struct lfv_poller poller;
} lfv_svc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Answers a SIDR request with the listener's QP. The listener stays valid
 * until the event is acked: lfv_svc_close's rdma_destroy_id waits for it. */
static void lfv_svc_answer_req(struct rdma_cm_event *ev)
{
	const struct lfv_svc_listener *l = ev->listen_id->context;
	struct rdma_conn_param param = {
		.qp_num = l->reply.name.qpn,
		.private_data = &l->reply,
		.private_data_len = sizeof(l->reply),
	};
	struct rdma_cm_id *id = ev->id;

	if (rdma_accept(id, &param)) {
		LFV_INFO(FI_LOG_EP_CTRL, "service answer: rdma_accept: %d\n",
			 errno);
		rdma_reject(id, NULL, 0);
	}
	rdma_ack_cm_event(ev);
	/* The answer is sent: a SIDR has nothing more to say. */
	rdma_destroy_id(id);
}

static void lfv_svc_run(void *arg)
{
	struct rdma_event_channel *ch = arg;
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(ch, &ev)) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			lfv_svc_answer_req(ev);
		else
			rdma_ack_cm_event(ev);
	}
}

/* Holds the channel and its thread. Caller holds lfv_svc.lock. */
static int lfv_svc_get_locked(void)
{
	int ret;

	if (lfv_svc.users) {
		lfv_svc.users++;
		return 0;
	}
	lfv_svc.ch = rdma_create_event_channel();
	if (!lfv_svc.ch)
		return lfv_verbs_errno();
	ret = lfv_fd_set_nonblock(lfv_svc.ch->fd);
	if (ret)
		goto destroy_ch;
	ret = lfv_poller_start(&lfv_svc.poller, lfv_svc_run, lfv_svc.ch);
	if (ret)
		goto destroy_ch;
	ret = lfv_poller_add(&lfv_svc.poller, lfv_svc.ch->fd);
	if (ret)
		goto stop_poller;
	lfv_svc.users = 1;
	return 0;

stop_poller:
	lfv_poller_stop(&lfv_svc.poller);
destroy_ch:
	rdma_destroy_event_channel(lfv_svc.ch);
	lfv_svc.ch = NULL;
	return ret;
}

/* Caller holds lfv_svc.lock. */
static void lfv_svc_put_locked(void)
{
	if (--lfv_svc.users)
		return;
	lfv_poller_stop(&lfv_svc.poller);
	rdma_destroy_event_channel(lfv_svc.ch);
	lfv_svc.ch = NULL;
}

static int lfv_svc_bind_err(void)
{
	if (errno == EADDRINUSE)
		return -FI_EADDRINUSE;
	if (errno == EADDRNOTAVAIL || errno == ENODEV)
		return -FI_EADDRNOTAVAIL;
	return lfv_verbs_ret(-1);
}

int lfv_svc_listen(const struct fi_info *info, const struct lfv_ud_name *name,
		   struct lfv_svc_listener **out)
{
	const struct lfv_ud_name *svc = info->src_addr;
	struct lfv_svc_listener *l;
	union lfv_sockaddr sa;
	int ret;

	if (info->addr_format != FI_ADDR_IB_UD || !svc ||
	    info->src_addrlen < sizeof(*svc) ||
	    !lfv_ud_name_is_service(svc) || !svc->port) {
		*out = NULL;
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -FI_ENOMEM;
	l->reply = (struct lfv_svc_reply){
		.magic = LFV_SVC_MAGIC,
		.version = LFV_SVC_VERSION,
		.name = *name,
	};
	lfv_ud_name_to_sockaddr(svc, &sa);
	pthread_mutex_lock(&lfv_svc.lock);
	ret = lfv_svc_get_locked();
	if (ret)
		goto unlock;
	if (rdma_create_id(lfv_svc.ch, &l->id, l, RDMA_PS_UDP)) {
		ret = lfv_verbs_ret(-1);
		goto put;
	}
	if (rdma_bind_addr(l->id, &sa.sa)) {
		ret = lfv_svc_bind_err();
		goto destroy_id;
	}
	ret = lfv_verbs_ret(rdma_listen(l->id, 128));
	if (ret)
		goto destroy_id;
	pthread_mutex_unlock(&lfv_svc.lock);
	*out = l;
	return 0;

destroy_id:
	rdma_destroy_id(l->id);
put:
	lfv_svc_put_locked();
unlock:
	pthread_mutex_unlock(&lfv_svc.lock);
	free(l);
	LFV_INFO(FI_LOG_EP_CTRL, "cannot listen at the service: %s\n",
		 fi_strerror(-ret));
	return ret;
}

void lfv_svc_close(struct lfv_svc_listener *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&lfv_svc.lock);
	/* Waits until the thread acked every event of the id it read. */
	rdma_destroy_id(l->id);
	lfv_svc_put_locked();
	pthread_mutex_unlock(&lfv_svc.lock);
	free(l);
}
