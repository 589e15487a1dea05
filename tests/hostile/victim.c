/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The lfverbs side of the hostile-peer tests (tests/hostile/README.md): an
 * ordinary libfabric application whose peers may be lfv_hostile. It checks
 * that what a hostile peer does ends as lfverbs promises (a refused or
 * aborted connection, a drop counted) and that its traffic with
 * well-behaved peers goes on, every byte checked.
 *
 *   lfv_victim msg-server IP PORT SESSIONS [CM_DATA_DROPS]
 *	serves SESSIONS echo sessions on IP:PORT, then checks the fabric's
 *	FI_LFVERBS_DROP_CM_DATA count.
 *   lfv_victim msg-client [--drops N] TARGET...
 *	TARGET is IP:PORT:EXPECT, EXPECT one of ok (an echo session),
 *	aborted (FI_ECONNABORTED on the EQ) or refused (FI_ECONNREFUSED);
 *	one fabric for all targets, whose CM_DATA drops must end at N.
 *   lfv_victim rdm-server [REASON=N...]
 *	an RDM endpoint that prints "name HEX" (its FI_ADDR_IB_UD name) and
 *	echoes every message back to the name in its first 32 bytes until
 *	one says "bye"; then its fabric's drops by reason (cm_data,
 *	truncated, version, malformed, forged, limit, too_long) must be at
 *	least N. LFV_VICTIM_RECV_ERRORS=N: receives that complete in error
 *	(a rendezvous whose read failed) are counted, not fatal; at least N.
 *   lfv_victim rdm-client SERVER_HEX MS
 *	an RDM endpoint that prints "name HEX", then runs echo sessions with
 *	the server for MS milliseconds, every byte checked, and says bye.
 *	LFV_VICTIM_UNTIL=FILE: past MS, on until FILE exists (the script
 *	makes it when the hostile peer is done, so that the server, which
 *	ends with the client's bye, is there for all the hostile sends);
 *	LFV_VICTIM_SIZE sets the payload (default 4096; up to 65536);
 *	LFV_VICTIM_CLIENT_DROPS=REASON=N what the client must have dropped.
 *
 * Exit status 0 when every expectation held; messages on stderr. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "fi_lfverbs.h"
#include "../test_rdm.h"

#define VICTIM_VERSION FI_VERSION(1, 17)
#define MSG_SIZE 4096
#define TIMEOUT_MS 20000

#define FAIL(...) do { fprintf(stderr, "lfv_victim: " __VA_ARGS__); \
		       return -1; } while (0)

struct conn {
	struct fid_domain *domain;
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_mr *mr;
	uint8_t buf[2][MSG_SIZE];	/* [0] sent, [1] received */
};

static struct fi_info *hints_for(const char *dev)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		abort();
	hints->fabric_attr->prov_name = strdup("lfverbs");
	if (dev)
		hints->domain_attr->name = strdup(dev);
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG;
	return hints;
}

static int getinfo(const char *ip, const char *port, bool source,
		   struct fi_info **info)
{
	struct fi_info *hints = hints_for(getenv("LFV_BED_DEV"));
	int ret;

	ret = fi_getinfo(VICTIM_VERSION, ip, port, source ? FI_SOURCE : 0,
			 hints, info);
	fi_freeinfo(hints);
	if (ret)
		FAIL("fi_getinfo(%s:%s): %s\n", ip, port, fi_strerror(-ret));
	return 0;
}

static uint64_t drops_cm_data(struct fid_fabric *fabric)
{
	struct fi_lfverbs_drops d;
	int ret = fi_control(&fabric->fid, FI_LFVERBS_GET_DROPS, &d);

	if (ret) {
		fprintf(stderr, "lfv_victim: FI_LFVERBS_GET_DROPS: %s\n",
			fi_strerror(-ret));
		return UINT64_MAX;
	}
	return d.count[FI_LFVERBS_DROP_CM_DATA];
}

/* Both sides end by checking that the provider counted exactly the bad
 * connection data the attacker sent: 0, or -1 after saying why not. */
static int check_cm_drops(struct fid_fabric *fabric, uint64_t want_drops)
{
	uint64_t got = drops_cm_data(fabric);

	if (got == want_drops)
		return 0;
	fprintf(stderr, "lfv_victim: %llu connection data drops, wanted %llu\n",
		(unsigned long long)got, (unsigned long long)want_drops);
	return -1;
}

/* One connection event (or error) within TIMEOUT_MS: the event, or the
 * negated error of an error entry, or a negative read error. */
static int cm_event(struct fid_eq *eq, struct fi_eq_cm_entry *entry,
		    int *err)
{
	uint8_t raw[sizeof(*entry) + 256];
	struct fi_eq_err_entry e = { 0 };
	uint32_t event;
	ssize_t ret;

	*err = 0;
	ret = fi_eq_sread(eq, &event, raw, sizeof(raw), TIMEOUT_MS, 0);
	if (ret == -FI_EAVAIL) {
		if (fi_eq_readerr(eq, &e, 0) < 0)
			return -FI_EOTHER;
		*err = e.err;
		return 0;
	}
	if (ret < (ssize_t)sizeof(*entry))
		return ret < 0 ? (int)ret : -FI_EOTHER;
	memcpy(entry, raw, sizeof(*entry));
	return (int)event;
}

static int wait_cq(struct fid_cq *cq, const char *what)
{
	struct fi_cq_entry c;
	struct timespec t0, t;
	ssize_t ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = fi_cq_read(cq, &c, 1);
		if (ret == 1)
			return 0;
		if (ret != -FI_EAGAIN)
			FAIL("%s: fi_cq_read: %s\n", what, fi_strerror((int)-ret));
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > TIMEOUT_MS)
			FAIL("%s: no completion\n", what);
	}
}

static int conn_open(struct fid_fabric *fabric, struct fid_eq *eq,
		     struct fi_info *info, struct conn *c)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	int ret;

	const char *what = "fi_domain";

	memset(c, 0, sizeof(*c));
	ret = fi_domain(fabric, info, &c->domain, NULL);
	if (!ret && (what = "fi_cq_open"))
		ret = fi_cq_open(c->domain, &cq_attr, &c->cq, NULL);
	if (!ret && (what = "fi_endpoint"))
		ret = fi_endpoint(c->domain, info, &c->ep, NULL);
	if (!ret && (what = "fi_ep_bind (EQ)"))
		ret = fi_ep_bind(c->ep, &eq->fid, 0);
	if (!ret && (what = "fi_ep_bind (CQ)"))
		ret = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret && (what = "fi_enable"))
		ret = fi_enable(c->ep);
	if (!ret && (what = "fi_mr_reg"))
		ret = fi_mr_reg(c->domain, c->buf, sizeof(c->buf),
				FI_SEND | FI_RECV, 0, 0, 0, &c->mr, NULL);
	/* Which call failed: one run in many failed here with EINVAL
	 * (2026-11-30, a well-behaved server's accept), not understood. */
	if (ret)
		FAIL("opening a connection's objects: %s: %s\n", what,
		     fi_strerror(-ret));
	return 0;
}

/* Closes an object that may not have been opened. */
static void close_fid(void *obj)
{
	/* Every libfabric object starts with its struct fid. */
	if (obj)
		fi_close((struct fid *)obj);
}

static void conn_close(struct conn *c)
{
	close_fid(c->ep);
	close_fid(c->mr);
	close_fid(c->cq);
	close_fid(c->domain);
}

static void pattern_n(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

static void pattern(uint8_t *p, unsigned seed)
{
	pattern_n(p, MSG_SIZE, seed);
}

/* The client sends a pattern, the server checks it and sends it back, the
 * client checks what came back. */
static int echo(struct conn *c, bool client, unsigned seed)
{
	void *desc = fi_mr_desc(c->mr);
	ssize_t ret;

	ret = fi_recv(c->ep, c->buf[1], MSG_SIZE, desc, 0, NULL);
	if (ret)
		FAIL("fi_recv: %s\n", fi_strerror((int)-ret));
	if (client) {
		pattern(c->buf[0], seed);
		ret = fi_send(c->ep, c->buf[0], MSG_SIZE, desc, 0, NULL);
		if (ret || wait_cq(c->cq, "send") || wait_cq(c->cq, "echo"))
			FAIL("client session %u failed\n", seed);
	} else {
		if (wait_cq(c->cq, "receive"))
			return -1;
		memcpy(c->buf[0], c->buf[1], MSG_SIZE);
		ret = fi_send(c->ep, c->buf[0], MSG_SIZE, desc, 0, NULL);
		if (ret || wait_cq(c->cq, "echo send"))
			FAIL("server session failed\n");
		return 0;
	}
	pattern(c->buf[0], seed);
	if (memcmp(c->buf[0], c->buf[1], MSG_SIZE))
		FAIL("session %u: the echo differs from what was sent\n", seed);
	return 0;
}

static int serve_one(struct fid_fabric *fabric, struct fid_eq *eq,
		     struct fi_info *info)
{
	struct fi_eq_cm_entry entry;
	struct conn c;
	int ret, err;

	ret = conn_open(fabric, eq, info, &c);
	if (!ret)
		ret = fi_accept(c.ep, NULL, 0);
	if (!ret && (cm_event(eq, &entry, &err) != FI_CONNECTED || err))
		ret = -1;
	if (!ret)
		ret = echo(&c, false, 0);
	/* The client closes first; wait for its shutdown before closing. */
	if (!ret)
		(void)cm_event(eq, &entry, &err);
	conn_close(&c);
	if (ret)
		FAIL("a well-behaved session failed\n");
	return 0;
}

static int msg_server(const char *ip, const char *port, int sessions,
		      uint64_t want_drops)
{
	struct fi_info *info = NULL;
	struct fid_fabric *fabric = NULL;
	struct fid_eq *eq = NULL;
	struct fid_pep *pep = NULL;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry entry;
	int ret, err, done = 0;

	if (getinfo(ip, port, true, &info))
		return 1;
	ret = fi_fabric(info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_eq_open(fabric, &eq_attr, &eq, NULL);
	if (!ret)
		ret = fi_passive_ep(fabric, info, &pep, NULL);
	if (!ret)
		ret = fi_pep_bind(pep, &eq->fid, 0);
	if (!ret)
		ret = fi_listen(pep);
	if (ret) {
		fprintf(stderr, "lfv_victim: listening: %s\n", fi_strerror(-ret));
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	while (done < sessions) {
		ret = cm_event(eq, &entry, &err);
		if (ret != FI_CONNREQ) {
			fprintf(stderr, "lfv_victim: wanted a connection "
				"request, got %d (error %d)\n", ret, err);
			ret = -1;
			break;
		}
		ret = serve_one(fabric, eq, entry.info);
		fi_freeinfo(entry.info);
		if (ret)
			break;
		done++;
	}
	if (!ret)
		ret = check_cm_drops(fabric, want_drops);
	fi_close(&pep->fid);
	fi_close(&eq->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	return ret ? 1 : 0;
}

/* One target of msg-client: connect, then what EXPECT says. */
static int client_one(struct fid_fabric *fabric, struct fid_eq *eq,
		      const char *ip, const char *port, const char *expect,
		      unsigned seed)
{
	struct fi_info *info = NULL;
	struct fi_eq_cm_entry entry;
	struct conn c;
	int ret, err = 0, event = 0;

	if (getinfo(ip, port, false, &info))
		return -1;
	ret = conn_open(fabric, eq, info, &c);
	if (!ret)
		ret = fi_connect(c.ep, info->dest_addr, NULL, 0);
	if (!ret)
		event = cm_event(eq, &entry, &err);
	if (!ret && !strcmp(expect, "ok")) {
		ret = event == FI_CONNECTED && !err ? echo(&c, true, seed) : -1;
	} else if (!ret) {
		int want = !strcmp(expect, "aborted") ? FI_ECONNABORTED :
							FI_ECONNREFUSED;

		ret = event == 0 && err == want ? 0 : -1;
	}
	if (ret)
		fprintf(stderr, "lfv_victim: %s:%s: wanted %s, got event %d "
			"error %d (%s)\n", ip, port, expect, event, err,
			fi_strerror(err));
	conn_close(&c);
	fi_freeinfo(info);
	return ret;
}

static int msg_client(int argc, char **argv)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_info *info = NULL;
	struct fid_fabric *fabric = NULL;
	struct fid_eq *eq = NULL;
	uint64_t want_drops = 0;
	int i = 0, ret = 0;

	if (argc > 1 && !strcmp(argv[0], "--drops")) {
		want_drops = strtoull(argv[1], NULL, 0);
		argc -= 2;
		argv += 2;
	}
	if (getinfo(NULL, NULL, false, &info))
		return 1;
	if (fi_fabric(info->fabric_attr, &fabric, NULL) ||
	    fi_eq_open(fabric, &eq_attr, &eq, NULL)) {
		fprintf(stderr, "lfv_victim: no fabric or EQ\n");
		return 1;
	}
	for (i = 0; i < argc && !ret; i++) {
		char ip[64], port[16], expect[16];

		if (sscanf(argv[i], "%63[^:]:%15[^:]:%15s", ip, port,
			   expect) != 3) {
			fprintf(stderr, "lfv_victim: bad target %s\n", argv[i]);
			ret = -1;
			break;
		}
		ret = client_one(fabric, eq, ip, port, expect, (unsigned)i);
	}
	if (!ret)
		ret = check_cm_drops(fabric, want_drops);
	fi_close(&eq->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
	return ret ? 1 : 0;
}

/* ---- RDM ------------------------------------------------------------------ */

#define NAME_LEN 32			/* FI_ADDR_IB_UD */
/* RDM payloads: LFV_VICTIM_SIZE bytes (default MSG_SIZE, eager; above the
 * eager size, 16 KiB, they go by rendezvous), at most RDM_MAX. */
#define RDM_MAX (64 * 1024)

static size_t rdm_size(void)
{
	const char *v = getenv("LFV_VICTIM_SIZE");
	size_t n = v && *v ? strtoul(v, NULL, 0) : MSG_SIZE;

	return n && n <= RDM_MAX ? n : MSG_SIZE;
}

struct rdm {
	struct test_rdm o;		/* endpoint, CQ, AV, domain, fabric */
	struct fid_mr *mr;
	uint8_t buf[2][NAME_LEN + RDM_MAX];	/* [0] sent, [1] received */
	uint8_t name[NAME_LEN];
	/* LFV_VICTIM_TIMEOUTS=N: sends that fail with FI_ETIMEDOUT (to a
	 * peer that never answers) are counted, not fatal; at least N. */
	long timeouts_want, timeouts;
	/* LFV_VICTIM_RECV_ERRORS=N: receives that complete in error are
	 * counted, not fatal; at least N. */
	long recv_errors_want, recv_errors;
};

static void hex_print(const char *label, const uint8_t *p, size_t len)
{
	size_t i;

	printf("%s ", label);
	for (i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n");
	fflush(stdout);
}

static int hex_parse(const char *hex, uint8_t *p, size_t len)
{
	size_t i;
	unsigned v;

	if (strlen(hex) != 2 * len)
		return -1;
	for (i = 0; i < len; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		p[i] = (uint8_t)v;
	}
	return 0;
}

static int rdm_open(struct rdm *r)
{
	struct fi_info *hints = hints_for(getenv("LFV_BED_DEV"));
	struct fi_info *info = NULL;
	size_t len = NAME_LEN;
	int ret;

	memset(r, 0, sizeof(*r));
	if (getenv("LFV_VICTIM_TIMEOUTS"))
		r->timeouts_want = atol(getenv("LFV_VICTIM_TIMEOUTS"));
	if (getenv("LFV_VICTIM_RECV_ERRORS"))
		r->recv_errors_want = atol(getenv("LFV_VICTIM_RECV_ERRORS"));
	hints->ep_attr->type = FI_EP_RDM;
	ret = fi_getinfo(VICTIM_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (!ret)
		ret = test_rdm_open(&r->o, info, FI_CQ_FORMAT_MSG);
	if (!ret)
		ret = fi_getname(&r->o.ep->fid, r->name, &len);
	if (!ret)
		ret = fi_mr_reg(r->o.domain, r->buf, sizeof(r->buf),
				FI_SEND | FI_RECV, 0, 0, 0, &r->mr, NULL);
	if (ret)
		FAIL("opening an RDM endpoint: %s\n", fi_strerror(-ret));
	hex_print("name", r->name, NAME_LEN);
	return 0;
}

static void rdm_close(struct rdm *r)
{
	test_rdm_close(&r->o, r->mr);
}

/* The next completion (its length in *len for a receive); 1: a receive
 * that failed, counted (LFV_VICTIM_RECV_ERRORS). */
static int rdm_wait(struct rdm *r, size_t *len, const char *what)
{
	struct fi_cq_msg_entry c;
	struct fi_cq_err_entry e = { 0 };
	struct timespec t0, t;
	ssize_t ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = fi_cq_read(r->o.cq, &c, 1);
		if (ret == 1) {
			/* One completion per operation: a send completed
			 * twice would show up here as the wrong kind. */
			if (!(c.flags & (len ? FI_RECV : FI_SEND)))
				FAIL("%s: a completion of another kind "
				     "(flags %#llx)\n", what,
				     (unsigned long long)c.flags);
			if (len)
				*len = c.len;
			return 0;
		}
		if (ret == -FI_EAVAIL) {
			fi_cq_readerr(r->o.cq, &e, 0);
			if (e.err == FI_ETIMEDOUT && r->timeouts_want &&
			    !strcmp(what, "send")) {
				r->timeouts++;
				return 0;
			}
			if (len && r->recv_errors_want) {
				fprintf(stderr, "lfv_victim: a receive failed: "
					"%s\n", fi_strerror(e.err));
				r->recv_errors++;
				return 1;
			}
			FAIL("%s: completed in error: %s\n", what,
			     fi_strerror(e.err));
		}
		if (ret != -FI_EAGAIN)
			FAIL("%s: fi_cq_read: %s\n", what,
			     fi_strerror((int)-ret));
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > TIMEOUT_MS)
			FAIL("%s: no completion\n", what);
	}
}

static int rdm_send(struct rdm *r, fi_addr_t to, size_t len)
{
	ssize_t ret;

	while ((ret = fi_send(r->o.ep, r->buf[0], len, fi_mr_desc(r->mr), to,
			      NULL)) == -FI_EAGAIN)
		(void)fi_cq_read(r->o.cq, NULL, 0);	/* progress */
	if (ret)
		FAIL("fi_send: %s\n", fi_strerror((int)-ret));
	return rdm_wait(r, NULL, "send");
}

static int rdm_recv(struct rdm *r, size_t *len)
{
	ssize_t ret = fi_recv(r->o.ep, r->buf[1], sizeof(r->buf[1]),
			      fi_mr_desc(r->mr), FI_ADDR_UNSPEC, NULL);

	if (ret)
		FAIL("fi_recv: %s\n", fi_strerror((int)-ret));
	return rdm_wait(r, len, "receive");
}

/* REASON=N: the fabric must have dropped at least N for that reason. */
static int drops_at_least(struct fid_fabric *fabric, int argc, char **argv)
{
	struct fi_lfverbs_drops d;
	unsigned i, want;
	char name[32];
	int a, ret = 0;

	if (fi_control(&fabric->fid, FI_LFVERBS_GET_DROPS, &d))
		FAIL("FI_LFVERBS_GET_DROPS failed\n");
	for (i = 0; i < FI_LFVERBS_DROP_REASONS; i++)
		fprintf(stderr, "lfv_victim: drops %s: %llu\n",
			fi_lfverbs_drop_str(i), (unsigned long long)d.count[i]);
	for (a = 0; a < argc; a++) {
		if (sscanf(argv[a], "%31[a-z_]=%u", name, &want) != 2)
			FAIL("bad expectation %s\n", argv[a]);
		for (i = 0; i < FI_LFVERBS_DROP_REASONS; i++)
			if (!strcmp(fi_lfverbs_drop_str(i), name))
				break;
		if (i == FI_LFVERBS_DROP_REASONS)
			FAIL("no drop reason %s\n", name);
		if (d.count[i] < want) {
			fprintf(stderr, "lfv_victim: %s drops %llu, wanted at "
				"least %u\n", name,
				(unsigned long long)d.count[i], want);
			ret = -1;
		}
	}
	return ret;
}

static int rdm_server(int argc, char **argv)
{
	struct rdm r;
	fi_addr_t peer = FI_ADDR_NOTAVAIL;
	uint8_t peer_name[NAME_LEN];
	size_t len;
	int ret;

	if (rdm_open(&r))
		return 1;
	for (;;) {
		ret = rdm_recv(&r, &len);
		if (ret == 1)
			continue;	/* counted: nothing to echo */
		if (ret)
			break;
		if (len == 3 && !memcmp(r.buf[1], "bye", 3))
			break;
		if (len < NAME_LEN) {
			fprintf(stderr, "lfv_victim: a %zu-byte message\n", len);
			ret = -1;
			break;
		}
		if (peer == FI_ADDR_NOTAVAIL ||
		    memcmp(peer_name, r.buf[1], NAME_LEN)) {
			memcpy(peer_name, r.buf[1], NAME_LEN);
			if (fi_av_insert(r.o.av, peer_name, 1, &peer, 0, NULL) != 1) {
				fprintf(stderr, "lfv_victim: fi_av_insert\n");
				ret = -1;
				break;
			}
		}
		memcpy(r.buf[0], r.buf[1], len);
		ret = rdm_send(&r, peer, len);
		if (ret)
			break;
	}
	if (!ret)
		ret = drops_at_least(r.o.fabric, argc, argv);
	if (r.timeouts_want) {
		fprintf(stderr, "lfv_victim: %ld sends timed out\n",
			r.timeouts);
		if (r.timeouts < r.timeouts_want)
			ret = -1;
	}
	if (r.recv_errors_want) {
		fprintf(stderr, "lfv_victim: %ld receives failed\n",
			r.recv_errors);
		if (r.recv_errors < r.recv_errors_want)
			ret = -1;
	}
	rdm_close(&r);
	return ret ? 1 : 0;
}

/* Whether the client may say bye: MS have passed since T0 and the file
 * LFV_VICTIM_UNTIL names, if any, exists. */
static bool rdm_client_done(const struct timespec *t0, long ms)
{
	const char *until = getenv("LFV_VICTIM_UNTIL");
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if ((t.tv_sec - t0->tv_sec) * 1000 +
	    (t.tv_nsec - t0->tv_nsec) / 1000000 < ms)
		return false;
	return !until || access(until, F_OK) == 0;
}

static int rdm_client(const char *server_hex, long ms)
{
	size_t size = rdm_size();
	struct rdm r;
	uint8_t server[NAME_LEN];
	struct timespec t0;
	fi_addr_t to;
	unsigned seed = 0;
	size_t len;
	int ret = 0;

	if (hex_parse(server_hex, server, NAME_LEN))
		FAIL("bad server name %s\n", server_hex);
	if (rdm_open(&r))
		return 1;
	if (fi_av_insert(r.o.av, server, 1, &to, 0, NULL) != 1) {
		rdm_close(&r);
		FAIL("fi_av_insert of the server\n");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		memcpy(r.buf[0], r.name, NAME_LEN);
		pattern_n(r.buf[0] + NAME_LEN, size, ++seed);
		ret = rdm_send(&r, to, NAME_LEN + size);
		/* A completed send gives its buffer back: reuse it at once,
		 * so a send completed too early shows in the echo. */
		memset(r.buf[0] + NAME_LEN, 0xee, size);
		if (!ret)
			ret = rdm_recv(&r, &len);
		pattern_n(r.buf[0] + NAME_LEN, size, seed);
		if (!ret && (len != NAME_LEN + size ||
			     memcmp(r.buf[0], r.buf[1], len))) {
			fprintf(stderr, "lfv_victim: echo %u differs\n", seed);
			ret = -1;
		}
	} while (!ret && !rdm_client_done(&t0, ms));
	if (!ret) {
		memcpy(r.buf[0], "bye", 3);
		ret = rdm_send(&r, to, 3);
	}
	fprintf(stderr, "lfv_victim: %u echo sessions\n", seed);
	/* LFV_VICTIM_CLIENT_DROPS=REASON=N: what the client must have
	 * dropped (a hostile peer may aim at it too). */
	if (!ret && getenv("LFV_VICTIM_CLIENT_DROPS")) {
		char *want = getenv("LFV_VICTIM_CLIENT_DROPS");

		ret = drops_at_least(r.o.fabric, 1, &want);
	}
	rdm_close(&r);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "msg-server"))
		return msg_server(argv[2], argv[3], atoi(argv[4]),
				  argc > 5 ? strtoull(argv[5], NULL, 0) : 0);
	if (argc >= 3 && !strcmp(argv[1], "msg-client"))
		return msg_client(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "rdm-server"))
		return rdm_server(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "rdm-client"))
		return rdm_client(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: lfv_victim msg-server IP PORT SESSIONS "
		"[CM_DATA_DROPS] | msg-client [--drops N] IP:PORT:EXPECT... | "
		"rdm-server [REASON=N...] | rdm-client SERVER_HEX MS\n");
	return 2;
}
