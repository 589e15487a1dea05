/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Shared by the RDM tests that run peer processes (func_rdm_peers,
 * func_rdm_restart): clocks and payload patterns, a fabric and its
 * endpoints ("nodes"), operations and their completions, the framed
 * messages between a test and its peers, and the peers themselves (this
 * program again, exec'd with --peer ROLE; an echo peer answers pings). */
#ifndef FUNC_RDM_COMMON_H
#define FUNC_RDM_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include "func_common.h"

#define NAME_LEN 32			/* FI_ADDR_IB_UD */
#define MSG_MAX 4096			/* payload of one control message */
#define WAIT_MS 20000			/* one operation */
#define MAX_KIDS 8			/* peer processes alive at once */
#define ECHO_SLOTS 8			/* pongs in flight per echo peer */

/* Tags of the echo protocol (the low 32 bits are a sequence number). */
#define TAG_HELLO (1ULL << 40)
#define TAG_PING (2ULL << 40)
#define TAG_PONG (3ULL << 40)
#define TAG_SINK (4ULL << 40)		/* never received */
#define TAG_SEQ 0xffffffffULL

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static inline int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : dflt;
}

/* Payloads: a byte pattern per seed, so a message in the wrong buffer
 * shows. */
static inline uint8_t pat(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static inline void fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* The offset of the first byte of p that is not the pattern of seed, or
 * len when all len are. */
static inline size_t first_bad(const uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			break;
	return i;
}

static inline bool check(const uint8_t *p, size_t len, uint64_t seed)
{
	return first_bad(p, len, seed) == len;
}

/* How many of the len bytes of p from offset from on are not seed's
 * pattern. */
static inline size_t count_bad(const uint8_t *p, size_t len, uint64_t seed,
			       size_t from)
{
	size_t i, n = 0;

	for (i = from; i < len; i++)
		n += p[i] != pat(seed, i);
	return n;
}

/* ---- fabric, endpoints, completions -------------------------------------- */

struct fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	size_t eager;			/* inject_size: the eager limit */
	size_t rndv;			/* the smallest rendezvous: past the
					 * eager limit and the segmented eager
					 * one (fab_rndv_size) */
};

/* Messages above the eager size go as segmented eager up to
 * FI_LFVERBS_RDM_SAR (lfverbs' default 128 KiB), by rendezvous beyond:
 * the smallest rendezvous, as this process's environment sets it. */
static inline size_t fab_rndv_size(size_t eager)
{
	const char *env = getenv("FI_LFVERBS_RDM_SAR");
	size_t sar = env ? strtoull(env, NULL, 0) : 131072;

	return (sar > eager ? sar : eager) + 1;
}

/* tx_size 0: the provider's default; progress FI_PROGRESS_UNSPEC too. */
static inline int fab_open_progress(struct fab *f, size_t tx_size,
				    enum fi_progress progress)
{
	struct fi_info *hints = func_hints(FI_EP_RDM);
	int ret;

	memset(f, 0, sizeof(*f));
	hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
	hints->tx_attr->size = tx_size;
	hints->domain_attr->data_progress = progress;
	ret = fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &f->info);
	fi_freeinfo(hints);
	if (ret)
		return ret;
	f->eager = f->info->tx_attr->inject_size;
	f->rndv = fab_rndv_size(f->eager);
	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (!ret)
		ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	return ret;
}

static inline int fab_open(struct fab *f, size_t tx_size)
{
	return fab_open_progress(f, tx_size, FI_PROGRESS_UNSPEC);
}

/* Closes fid if open, keeping the first error in *ret. */
static inline void close_fid(struct fid *fid, int *ret)
{
	int r = fid ? fi_close(fid) : 0;

	if (r && !*ret)
		*ret = r;
}

/* Closes what is open; returns the first error. */
static inline int fab_close(struct fab *f)
{
	int ret = 0;

	close_fid(f->domain ? &f->domain->fid : NULL, &ret);
	close_fid(f->fabric ? &f->fabric->fid : NULL, &ret);
	fi_freeinfo(f->info);
	memset(f, 0, sizeof(*f));
	return ret;
}

struct node {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	bool own_av;
	uint8_t name[64];
	size_t namelen;
};

/* An enabled endpoint with its CQ, on the shared AV or one of its own. */
static inline int node_open(struct fab *f, struct fid_av *shared,
			    struct node *n)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 1024 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret = 0;

	memset(n, 0, sizeof(*n));
	n->av = shared;
	if (!shared) {
		ret = fi_av_open(f->domain, &av_attr, &n->av, NULL);
		n->own_av = !ret;
	}
	if (!ret)
		ret = fi_endpoint(f->domain, f->info, &n->ep, NULL);
	if (!ret)
		ret = fi_cq_open(f->domain, &cq_attr, &n->cq, NULL);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->av->fid, 0);
	if (!ret)
		ret = fi_enable(n->ep);
	n->namelen = sizeof(n->name);
	if (!ret)
		ret = fi_getname(&n->ep->fid, n->name, &n->namelen);
	if (!ret && n->namelen != NAME_LEN)
		ret = -FI_EOTHER;
	return ret;
}

static inline int node_close(struct node *n)
{
	int ret = 0;

	close_fid(n->ep ? &n->ep->fid : NULL, &ret);
	close_fid(n->cq ? &n->cq->fid : NULL, &ret);
	close_fid(n->own_av ? &n->av->fid : NULL, &ret);
	memset(n, 0, sizeof(*n));
	return ret;
}

/* What the completion of one operation said; the operation's context. */
struct op {
	int ndone;			/* completions seen: 1 is right */
	int err;			/* FI_E* of an error completion */
	uint64_t flags, tag, data;
	size_t len;
	fi_addr_t src;
	int64_t at;			/* when (now_ms) */
};

static inline bool op_mark(struct op *op, uint64_t flags, size_t len,
			   uint64_t tag, uint64_t data, fi_addr_t src, int err)
{
	if (op->ndone++)
		return false;	/* a second completion: checked later */
	op->flags = flags;
	op->len = len;
	op->tag = tag;
	op->data = data;
	op->src = src;
	op->err = err;
	op->at = now_ms();
	return true;
}

/* Reads what cq has; returns how many operations completed for the first
 * time (completions without a context count in *stray), or an error other
 * than -FI_EAGAIN. */
static inline int drain_cq(struct fid_cq *cq, int *stray)
{
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry err;
	fi_addr_t src[16];
	ssize_t n, i;
	int fresh = 0;
	struct op *op;

	n = fi_cq_readfrom(cq, e, 16, src);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		n = fi_cq_readerr(cq, &err, 0);
		if (n != 1)
			return n < 0 ? (int)n : -FI_EOTHER;
		op = err.op_context;
		if (!op) {
			(*stray)++;
			return 0;
		}
		return op_mark(op, err.flags, err.len, err.tag, err.data,
			       FI_ADDR_NOTAVAIL, err.err ? err.err : FI_EOTHER);
	}
	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++) {
		op = e[i].op_context;
		if (!op)
			(*stray)++;
		else
			fresh += op_mark(op, e[i].flags, e[i].len, e[i].tag,
					 e[i].data, src[i], 0);
	}
	return fresh;
}

/* fi_tsend with op (cleared) as its context, retried while the send queue
 * is full (reading n's CQ meanwhile) for up to WAIT_MS; returns what
 * fi_tsend last said. */
static inline ssize_t tsend(struct node *n, int *stray, const void *buf,
			    size_t len, fi_addr_t to, uint64_t tag,
			    struct op *op)
{
	int64_t deadline = now_ms() + WAIT_MS;
	ssize_t ret;

	memset(op, 0, sizeof(*op));
	while ((ret = fi_tsend(n->ep, buf, len, NULL, to, tag, op)) ==
	       -FI_EAGAIN && now_ms() < deadline)
		if (drain_cq(n->cq, stray) == 0)
			sched_yield();
	return ret;
}

/* Errors a send to a peer that is gone may complete with. */
static inline bool peer_gone_err(int err)
{
	return err == FI_ETIMEDOUT || err == FI_ECANCELED ||
	       err == FI_ECONNRESET || err == FI_EHOSTUNREACH ||
	       err == FI_EIO;
}

/* ---- the test's own endpoint ("A") --------------------------------------- */

struct host {
	struct fab f;
	struct node n;
	int stray;
};

static inline void host_open(struct host *h)
{
	memset(h, 0, sizeof(*h));
	assert_int_equal(fab_open(&h->f, 0), 0);
	assert_int_equal(node_open(&h->f, NULL, &h->n), 0);
}

/* Closing must not hang, whatever the peers did. */
static inline void host_close(struct host *h)
{
	int64_t t0 = now_ms();

	assert_int_equal(node_close(&h->n), 0);
	assert_int_equal(fab_close(&h->f), 0);
	assert_true(now_ms() - t0 < 10000);
	assert_int_equal(h->stray, 0);
}

static inline void host_drain(struct host *h)
{
	if (drain_cq(h->n.cq, &h->stray) == 0)
		sched_yield();
}

static inline void host_send(struct host *h, const void *buf, size_t len,
			     fi_addr_t to, uint64_t tag, struct op *op)
{
	assert_int_equal(tsend(&h->n, &h->stray, buf, len, to, tag, op), 0);
}

/* ---- control messages between the test and its peers --------------------- */

/* Each test numbers its own types from 1. */
struct mhdr {
	uint32_t type, len;
};

/* All n bytes of p to fd; -FI_EIO when the other side is gone. */
static inline int write_full(int fd, const void *p, size_t n)
{
	size_t off = 0;
	ssize_t w;

	while (off < n) {
		w = write(fd, (const char *)p + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -FI_EIO;
		off += (size_t)w;
	}
	return 0;
}

static inline int msg_put(int fd, uint32_t type, const void *p, uint32_t len)
{
	uint8_t buf[sizeof(struct mhdr) + MSG_MAX];
	struct mhdr h = { .type = type, .len = len };

	if (len > MSG_MAX)
		return -FI_EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), p, len);
	return write_full(fd, buf, sizeof(h) + len);
}

static inline int read_full(int fd, void *p, size_t n, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t off = 0;
	int64_t left;
	ssize_t r;

	while (off < n) {
		left = deadline - now_ms();
		if (left < 0)
			return -FI_ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -FI_ETIMEDOUT;
		r = read(fd, (char *)p + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -FI_EIO; /* the other side is gone */
		off += (size_t)r;
	}
	return 0;
}

/* The next message, which must be of type want. */
static inline int msg_get(int fd, uint32_t want, void *p, uint32_t cap,
			  uint32_t *len, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct mhdr h;
	int ret;

	ret = read_full(fd, &h, sizeof(h), deadline);
	if (ret)
		return ret;
	if (h.type != want || h.len > cap)
		return -FI_EOTHER;
	ret = read_full(fd, p, h.len, deadline);
	if (!ret && len)
		*len = h.len;
	return ret;
}

/* Something (or EOF) to read. */
static inline bool msg_waiting(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* ---- the peer processes -------------------------------------------------- */

static const char *peer_role = "?";
static int peer_idx;

static inline _Noreturn void peer_die(int line, const char *what, long val)
{
	fprintf(stderr, "peer %s %d: line %d: %s (%ld)\n", peer_role, peer_idx,
		line, what, val);
	_exit(3);
}

#define PCHECK(cond) \
	do { if (!(cond)) peer_die(__LINE__, #cond, 0); } while (0)
#define PCALL(expr) \
	do { long r_ = (long)(expr); \
	     if (r_) peer_die(__LINE__, #expr, r_); } while (0)

/* A peer started through ssh (kid_start, LFV_PEER_HOST) has ssh's stdin
 * and stdout for its channel, not one socket. A relay process copies
 * between them and a socketpair whose other end the peer uses as it
 * would the local one. EOF on stdin (the test closed its end, or ssh
 * died) kills the peer, as SIGKILL does to a local one; the relay ends
 * when the peer's end closes. Called before anything opens a device. */
static inline _Noreturn void peer_relay(int s, pid_t peer)
{
	struct pollfd pfd[2] = { { .fd = 0, .events = POLLIN },
				 { .fd = s, .events = POLLIN } };
	char buf[MSG_MAX];
	ssize_t r;

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents) {
			r = read(0, buf, sizeof(buf));
			if (r <= 0 || write_full(s, buf, (size_t)r)) {
				kill(peer, SIGKILL);
				break;
			}
		}
		if (pfd[1].revents) {
			r = read(s, buf, sizeof(buf));
			if (r <= 0 || write_full(1, buf, (size_t)r))
				break;
		}
	}
	_exit(0);
}

/* The peer's channel: "-" (stdin and stdout, through a relay) or the
 * number of the socket kid_start left open. */
static inline int peer_channel(const char *arg)
{
	pid_t peer = getpid(), pid;
	int sv[2], nul;

	if (strcmp(arg, "-"))
		return atoi(arg);
	PCHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	PCHECK(pid >= 0);
	if (!pid) {
		close(sv[0]);
		peer_relay(sv[1], peer);
	}
	close(sv[1]);
	/* stdout is the relay's: what the peer prints goes to stderr. */
	nul = open("/dev/null", O_RDONLY);
	PCHECK(nul >= 0 && dup2(nul, 0) == 0 && dup2(2, 1) == 1);
	close(nul);
	return sv[0];
}

/* Waits for op (serving the node meanwhile). */
static inline void peer_wait_op(struct node *n, struct op *op, int *stray)
{
	int64_t deadline = now_ms() + WAIT_MS;

	while (!op->ndone) {
		PCHECK(drain_cq(n->cq, stray) >= 0);
		PCHECK(now_ms() < deadline);
	}
	PCHECK(op->ndone == 1 && !op->err);
}

/* An echo peer: answers each TAG_PING from a with a TAG_PONG of the same
 * payload (up to max bytes), ECHO_SLOTS pongs in flight at most. */
struct echo {
	struct node *n;
	fi_addr_t a;
	size_t max;
	uint8_t *rbuf, *sbuf[ECHO_SLOTS];
	struct op rop, sop[ECHO_SLOTS];
	int slot;
};

static inline void echo_init(struct echo *e, size_t max)
{
	int i;

	memset(e, 0, sizeof(*e));
	e->max = max;
	e->rbuf = malloc(max);
	PCHECK(e->rbuf);
	for (i = 0; i < ECHO_SLOTS; i++) {
		e->sbuf[i] = malloc(max);
		PCHECK(e->sbuf[i]);
		e->sop[i] = (struct op){ .ndone = 1 };
	}
}

/* Posts the first ping's receive. */
static inline void echo_start(struct echo *e, struct node *n, fi_addr_t a)
{
	e->n = n;
	e->a = a;
	PCALL(fi_trecv(n->ep, e->rbuf, e->max, NULL, a, TAG_PING, TAG_SEQ,
		       &e->rop));
}

/* Echoes until the test's next message (or EOF) is waiting on fd; hop,
 * the hello, must not fail nor complete twice, and no completion may
 * come without a context. */
static inline void echo_serve(struct echo *e, int fd, const struct op *hop,
			      int *stray)
{
	ssize_t ret;

	while (!msg_waiting(fd)) {
		if (!drain_cq(e->n->cq, stray))
			sched_yield();
		PCHECK(!*stray && hop->ndone <= 1 && !hop->err);
		if (!e->rop.ndone)
			continue;
		PCHECK(e->rop.ndone == 1 && !e->rop.err);
		/* The slot's last pong must have left before its reuse. */
		peer_wait_op(e->n, &e->sop[e->slot], stray);
		memcpy(e->sbuf[e->slot], e->rbuf, e->rop.len);
		e->sop[e->slot] = (struct op){ 0 };
		while ((ret = fi_tsend(e->n->ep, e->sbuf[e->slot], e->rop.len,
				       NULL, e->a,
				       TAG_PONG | (e->rop.tag & TAG_SEQ),
				       &e->sop[e->slot])) == -FI_EAGAIN)
			PCHECK(drain_cq(e->n->cq, stray) >= 0);
		PCALL(ret);
		e->slot = (e->slot + 1) % ECHO_SLOTS;
		e->rop = (struct op){ 0 };
		PCALL(fi_trecv(e->n->ep, e->rbuf, e->max, NULL, e->a, TAG_PING,
			       TAG_SEQ, &e->rop));
	}
}

/* Every pong sent has completed, successfully. A rendezvous pong completes
 * on the FIN, which may come after the test's EXIT. */
static inline void echo_finish(struct echo *e, int *stray)
{
	int i;

	for (i = 0; i < ECHO_SLOTS; i++)
		peer_wait_op(e->n, &e->sop[i], stray);
}

/* ---- the test's side of the peers ---------------------------------------- */

struct kid {
	pid_t pid;			/* the peer, or the ssh that runs it */
	int fd;
	bool remote;
};

static struct kid kids[MAX_KIDS];

/* Where the peer of index idx runs: NULL here, else the host named by
 * LFV_PEER_HOST, which takes the peers of odd index (so a test with
 * several peers has them on both hosts, and a test with one has it
 * there). */
static inline const char *kid_host(int idx)
{
	const char *host = getenv("LFV_PEER_HOST");

	return host && *host && (idx & 1) ? host : NULL;
}

/* In the child of kid_start: becomes the peer on host through ssh (which
 * passes FI_*, LFV_* and LD_LIBRARY_PATH; this program is at the same
 * path there), s its stdin and stdout. */
static inline _Noreturn void kid_exec_remote(const char *host, int s,
					     const char *role,
					     const char *sidx, const char *arg)
{
	char exe[1024], cmd[1400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || dup2(s, 0) != 0 || dup2(s, 1) != 1)
		_exit(127);
	exe[n] = 0;
	snprintf(cmd, sizeof(cmd), "exec '%s' --peer %s - %s %s", exe, role,
		 sidx, arg ? arg : "");
	execlp("ssh", "ssh", "-o", "BatchMode=yes", host, cmd, (char *)NULL);
	_exit(127);
}

/* Starts this program (argv[0] prog) as a peer: --peer ROLE FD IDX, then
 * arg if not NULL; here, or on kid_host(idx) with "-" for FD. Returns
 * its slot. */
static inline int kid_start(const char *prog, const char *role, int idx,
			    const char *arg)
{
	const char *host = kid_host(idx);
	char sfd[16], sidx[16];
	int sv[2], i;
	pid_t pid;

	for (i = 0; i < MAX_KIDS && kids[i].pid; i++)
		;
	assert_true(i < MAX_KIDS);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				    sv), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(126);
		snprintf(sidx, sizeof(sidx), "%d", idx);
		if (host)
			kid_exec_remote(host, sv[1], role, sidx, arg);
		fcntl(sv[1], F_SETFD, 0);	/* this end survives exec */
		snprintf(sfd, sizeof(sfd), "%d", sv[1]);
		execl("/proc/self/exe", prog, "--peer", role, sfd, sidx, arg,
		      (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	kids[i] = (struct kid){ .pid = pid, .fd = sv[0], .remote = !!host };
	return i;
}

/* The kid's wait status once it ended within timeout_ms; else it is
 * killed and -1 returned. */
static inline int kid_reap(int i, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	int status = -1;
	pid_t r;

	for (;;) {
		r = waitpid(kids[i].pid, &status, WNOHANG);
		if (r == kids[i].pid)
			break;
		if (r < 0 || now_ms() > deadline) {
			kill(kids[i].pid, SIGKILL);
			waitpid(kids[i].pid, NULL, 0);
			status = -1;
			break;
		}
		sleep_ms(10);
	}
	close(kids[i].fd);
	kids[i] = (struct kid){ 0 };
	return status;
}

/* Kills the peer; returns once it is gone. A remote one is killed by its
 * relay when its stdin ends (peer_channel); ssh then exits with 255, as
 * it does for a remote command killed by a signal. */
static inline void kid_kill(int i)
{
	int status;

	if (!kids[i].remote) {
		kill(kids[i].pid, SIGKILL);
		assert_true(WIFSIGNALED(kid_reap(i, WAIT_MS)));
		return;
	}
	shutdown(kids[i].fd, SHUT_WR);
	status = kid_reap(i, WAIT_MS);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 255);
}

/* The kid must end by itself with status 0. */
static inline void kid_expect_exit(int i)
{
	int status = kid_reap(i, WAIT_MS);

	if (!WIFEXITED(status) || WEXITSTATUS(status))
		print_message("peer %d ended with status %#x\n", i, status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* cmocka teardown of a test that starts peers: none outlives it. */
static inline int kids_teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < MAX_KIDS; i++)
		if (kids[i].pid) {
			kill(kids[i].pid, SIGKILL);
			kid_reap(i, WAIT_MS);
		}
	return 0;
}

static inline void kid_put(int i, uint32_t type, const void *p, uint32_t len)
{
	assert_int_equal(msg_put(kids[i].fd, type, p, len), 0);
}

#endif /* FUNC_RDM_COMMON_H */
