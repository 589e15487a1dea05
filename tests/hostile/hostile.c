/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* A hostile peer of lfverbs (tests/hostile/README.md): it speaks raw
 * rdma_cm and ibverbs, never libfabric, and sends what no lfverbs peer
 * would. Each case says what lfverbs must do about it; lfv_victim and
 * run-hostile.sh check the lfverbs side.
 *
 *   lfv_hostile cm-accept-oversize IP PORT
 *	listens on IP:PORT and accepts one connection with a connect reply
 *	whose length byte claims 195 bytes of connection data (lfverbs can
 *	carry 55): the connecting lfverbs endpoint must abort it.
 *   lfv_hostile cm-connect-oversize IP PORT
 *	connects to an lfverbs passive endpoint with a request whose length
 *	byte claims more than the request holds: lfverbs must reject it.
 *
 * Exit status 0 when the peer reacted as it must. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#define TIMEOUT_MS 20000
/* rdma_cm's private data room: a connect request's, a reply's (IB CM). */
#define REQ_PRIV 56
#define REP_PRIV 196

static int fail(const char *what)
{
	fprintf(stderr, "lfv_hostile: %s: %s\n", what, strerror(errno));
	return 1;
}

static int resolve(const char *ip, const char *port, struct addrinfo **ai)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };

	if (getaddrinfo(ip, port, &hints, ai)) {
		fprintf(stderr, "lfv_hostile: cannot resolve %s:%s\n", ip,
			port);
		return -1;
	}
	return 0;
}

/* The next event on the channel, or NULL after TIMEOUT_MS. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	const struct timespec step = { 0, 10 * 1000 * 1000 };
	struct rdma_cm_event *ev = NULL;
	int waited = 0;

	/* Non-blocking reads in 10 ms steps: no thread, no hang. */
	while (rdma_get_cm_event(ch, &ev)) {
		if (errno != EAGAIN || waited >= TIMEOUT_MS)
			return NULL;
		nanosleep(&step, NULL);
		waited += 10;
	}
	return ev;
}

static struct rdma_event_channel *channel_open(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	int flags;

	if (!ch)
		return NULL;
	flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK)) {
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	return ch;
}

/* A QP for the id (rdma_cm makes its CQs): accepting needs one. */
static int qp_for(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return rdma_create_qp(id, NULL, &attr);
}

static int cm_accept_oversize(const char *ip, const char *port)
{
	struct rdma_event_channel *ch = channel_open();
	struct rdma_cm_id *listener = NULL, *id;
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	uint8_t priv[REP_PRIV];
	int ret = 1;

	if (!ch || resolve(ip, port, &ai))
		return fail("setup");
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_addr) || rdma_listen(listener, 4))
		return fail("listen");
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return fail("no connection request");
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (qp_for(id))
		return fail("rdma_create_qp");
	memset(priv, 0x5a, sizeof(priv));
	priv[0] = REP_PRIV - 1;		/* lfverbs carries 55 at most */
	param.private_data = priv;
	param.private_data_len = sizeof(priv);
	if (rdma_accept(id, &param))
		return fail("rdma_accept");
	/* lfverbs must end the connection it cannot trust. */
	while ((ev = next_event(ch))) {
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_DISCONNECTED) {
			ret = 0;
			break;
		}
	}
	if (ret)
		fprintf(stderr, "lfv_hostile: lfverbs kept the connection\n");
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	return ret;
}

static int cm_connect_oversize(const char *ip, const char *port)
{
	struct rdma_event_channel *ch = channel_open();
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1,
					 .rnr_retry_count = 7 };
	struct rdma_cm_id *id = NULL;
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	uint8_t priv[REQ_PRIV];
	enum rdma_cm_event_type type;

	if (!ch || resolve(ip, port, &ai))
		return fail("setup");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, ai->ai_addr, TIMEOUT_MS))
		return fail("rdma_resolve_addr");
	freeaddrinfo(ai);
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return fail("address");
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, TIMEOUT_MS))
		return fail("rdma_resolve_route");
	ev = next_event(ch);
	if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return fail("route");
	rdma_ack_cm_event(ev);
	if (qp_for(id))
		return fail("rdma_create_qp");
	memset(priv, 0xa5, sizeof(priv));
	priv[0] = 0xff;			/* more than the request holds */
	param.private_data = priv;
	param.private_data_len = sizeof(priv);
	if (rdma_connect(id, &param))
		return fail("rdma_connect");
	ev = next_event(ch);
	if (!ev)
		return fail("no answer");
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_ESTABLISHED)
		rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	if (type != RDMA_CM_EVENT_REJECTED) {
		fprintf(stderr, "lfv_hostile: wanted a rejection, got %s\n",
			rdma_event_str(type));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "cm-accept-oversize"))
		return cm_accept_oversize(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "cm-connect-oversize"))
		return cm_connect_oversize(argv[2], argv[3]);
	fprintf(stderr, "usage: lfv_hostile CASE IP PORT (cases: "
		"cm-accept-oversize, cm-connect-oversize)\n");
	return 2;
}
