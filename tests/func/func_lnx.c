/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Two processes talk through upstream's lnx provider (libfabric 2.x), which
 * links shm with another provider (FI_LNX_PROV_LINKS=shm+lfverbs) through
 * the peer interfaces of fi_peer(3): lnx owns the receive queue (the peer
 * SRX) and the completion queue, the linked providers are its peers. lnx
 * has no EQ, so this is a program of our own rather than fabtests.
 *
 *   func_lnx [ITERATIONS|open] (FI_LNX_PROV_LINKS chooses the link;
 *                               FI_LNX_DISABLE_SHM=1 sends same-host
 *                               traffic over the other provider)
 *
 * The parent and a forked child each open lnx, swap names over a socket
 * pair and then: tagged ping-pong at several sizes with every byte checked
 * and a receive posted with a tag mask (matching is lnx's); a tagged
 * message that arrives before its receive (lnx queues it); an RMA write
 * into the other's registered buffer and a read back, both checked. With
 * "open", only the set-up: each side's endpoint enabled through lnx (the
 * linked providers import lnx's SRX and CQ) and the names swapped and
 * inserted. TAP on stdout; skips when the core has no lnx or the link has
 * no RDM info.
 *
 * FUNC_RDM_PROV=NAME runs the same cases over another provider (func_shm.sh:
 * lfverbs with shm as its own peer). FUNC_RDM_AUTO=1 asks for
 * FI_PROGRESS_AUTO and adds a case: a large message is sent while its
 * receiver calls nothing of libfabric, so only the provider's own
 * progress can complete it. FUNC_RDM_CHILD_SHM=V sets FI_LFVERBS_SHM=V in
 * the child only.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "../test_rdm.h"

#define MAX_SIZE (1 << 20)
#define TIMEOUT_S 20

struct side {
	struct test_rdm o;	/* endpoint, CQ, AV, domain, fabric */
	struct fid_mr *mr;
	char *buf;		/* MAX_SIZE: messages */
	char *rma;		/* MAX_SIZE: the window the other side writes */
	fi_addr_t peer;
	int sock;		/* to the other process */
	bool parent;
};

static int fail(const char *what, int ret)
{
	fprintf(stderr, "func_lnx(%d): %s: %d (%s)\n", (int)getpid(), what,
		ret, fi_strerror(ret < 0 ? -ret : ret));
	return ret ? ret : -FI_EOTHER;
}

#define TRY(call)						\
	do {							\
		int try_ret_ = (int)(call);			\
		if (try_ret_)					\
			return fail(#call, try_ret_);		\
	} while (0)

static int sock_xfer(struct side *s, const void *out, void *in, size_t len)
{
	if (write(s->sock, out, len) != (ssize_t)len ||
	    read(s->sock, in, len) != (ssize_t)len)
		return -FI_EIO;
	return 0;
}

/* sock_xfer for a side that waits while the other one works on it: its
 * CQ read meanwhile (a provider with manual progress, lfverbs, answers a
 * connection request of the RMA initiator only then). */
static int sock_xfer_progress(struct side *s, const void *out, void *in,
			      size_t len)
{
	struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
	time_t end = time(NULL) + TIMEOUT_S;

	if (write(s->sock, out, len) != (ssize_t)len)
		return -FI_EIO;
	while (poll(&pfd, 1, 1) == 0 && time(NULL) < end)
		(void)fi_cq_read(s->o.cq, NULL, 0);
	return read(s->sock, in, len) == (ssize_t)len ? 0 : -FI_EIO;
}

/* One completion (of anything), or an error after TIMEOUT_S. */
static int wait_comp(struct side *s, struct fi_cq_tagged_entry *e)
{
	struct fi_cq_err_entry err = { 0 };
	time_t end = time(NULL) + TIMEOUT_S;
	ssize_t n;

	do {
		n = fi_cq_read(s->o.cq, e, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(s->o.cq, &err, 0);
			return fail("completion error", err.err);
		}
		if (n != -FI_EAGAIN)
			return fail("fi_cq_read", (int)n);
	} while (time(NULL) < end);
	return fail("no completion", -FI_ETIMEDOUT);
}

/* Posts with `post` until it is not -FI_EAGAIN, driving progress between
 * tries (a provider may need its CQ read to free room or connect). */
#define POST(s, post)							\
	do {								\
		time_t post_end_ = time(NULL) + TIMEOUT_S;		\
		ssize_t post_ret_;					\
		while ((post_ret_ = (post)) == -FI_EAGAIN &&		\
		       time(NULL) < post_end_)				\
			(void)fi_cq_read((s)->o.cq, NULL, 0);		\
		if (post_ret_)						\
			return fail(#post, (int)post_ret_);		\
	} while (0)

static const char *prov_name(void)
{
	const char *name = getenv("FUNC_RDM_PROV");

	return name && *name ? name : "lnx";
}

static bool auto_progress(void)
{
	const char *v = getenv("FUNC_RDM_AUTO");

	return v && *v == '1';
}

static int open_side(struct side *s)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED | FI_RMA;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov_name());
	if (auto_progress())
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL,
			 NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		return ret;	/* -FI_ENODATA: the caller skips */
	TRY(test_rdm_open(&s->o, info, FI_CQ_FORMAT_TAGGED));
	s->buf = calloc(1, MAX_SIZE);
	s->rma = calloc(1, MAX_SIZE);
	if (!s->buf || !s->rma)
		return -FI_ENOMEM;
	/* lnx 2.1 has no fi_mr_reg (-FI_ENOSYS): RMA is then not tried. */
	ret = fi_mr_reg(s->o.domain, s->rma, MAX_SIZE,
			FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
			0, 0, 0, &s->mr, NULL);
	if (ret && ret != -FI_ENOSYS)
		return fail("fi_mr_reg", ret);
	return 0;
}

static int swap_names(struct side *s)
{
	static char mine[4096], theirs[4096];	/* lnx names every link */
	size_t len = sizeof(mine);

	TRY(fi_getname(&s->o.ep->fid, mine, &len));
	TRY(sock_xfer(s, mine, theirs, sizeof(mine)));
	if (fi_av_insert(s->o.av, theirs, 1, &s->peer, 0, NULL) != 1)
		return fail("fi_av_insert", -FI_EINVAL);
	return 0;
}

static void fill(char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed * 31 + i * 7);
}

static bool filled(const char *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (char)(seed * 31 + i * 7))
			return false;
	return true;
}

/* The parent sends first; tag = size, received with the low byte masked. */
static int pingpong(struct side *s, size_t size, int iters)
{
	struct fi_cq_tagged_entry e;
	struct fi_context ctx[2];
	int i, turn;

	for (i = 0; i < iters; i++) {
		for (turn = 0; turn < 2; turn++) {
			if (s->parent == (turn == 0)) {
				fill(s->buf, size, i + turn);
				POST(s, fi_tsend(s->o.ep, s->buf, size, NULL, s->peer,
						 size, &ctx[0]));
				TRY(wait_comp(s, &e));
				continue;
			}
			memset(s->buf, 0, size);
			/* From anyone: the source address of a directed
			 * receive is lnx's, not asked for here. */
			POST(s, fi_trecv(s->o.ep, s->buf, size, NULL,
					 FI_ADDR_UNSPEC, size & ~0xffULL, 0xff,
					 &ctx[1]));
			TRY(wait_comp(s, &e));
			if (e.tag != size || e.len != size ||
			    !filled(s->buf, size, i + turn)) {
				fprintf(stderr, "func_lnx: got tag 0x%" PRIx64
					" len %zu flags 0x%" PRIx64 " byte0 %d"
					" for size %zu, round %d\n", e.tag, e.len,
					e.flags, s->buf[0], size, i);
				return fail("ping-pong data", -FI_EIO);
			}
		}
	}
	return 0;
}

/* The child sends before the parent posts: lnx queues it unexpected. */
static int unexpected(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	char go = 1, ack;

	if (!s->parent) {
		fill(s->buf, 4096, 99);
		POST(s, fi_tsend(s->o.ep, s->buf, 4096, NULL, s->peer, 0x5150,
				 &ctx));
		TRY(wait_comp(s, &e));
		return sock_xfer(s, &go, &ack, 1);
	}
	TRY(sock_xfer(s, &go, &ack, 1));	/* the child's send is done */
	memset(s->buf, 0, 4096);
	POST(s, fi_trecv(s->o.ep, s->buf, 4096, NULL, FI_ADDR_UNSPEC, 0x5150, 0,
			 &ctx));
	TRY(wait_comp(s, &e));
	if (e.tag != 0x5150 || !filled(s->buf, 4096, 99))
		return fail("unexpected message data", -FI_EIO);
	return 0;
}

/* FI_PROGRESS_AUTO: the parent posts a receive of 1 MiB and then calls
 * nothing of libfabric while the child sends it; the child's send must
 * complete all the same. shm moves a message this large only as the
 * receiver's side progresses (its copy, or its segments), so only the
 * receiving provider's own progress can complete it. */
static int while_away(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
	char go = 1, ack, done = 2;

	if (!s->parent) {
		TRY(sock_xfer(s, &go, &ack, 1));	/* the parent is away */
		fill(s->buf, MAX_SIZE, 11);
		POST(s, fi_tsend(s->o.ep, s->buf, MAX_SIZE, NULL, s->peer,
				 0x51, &ctx));
		TRY(wait_comp(s, &e));
		return write(s->sock, &done, 1) == 1 ? 0 : -FI_EIO;
	}
	memset(s->buf, 0, MAX_SIZE);
	POST(s, fi_trecv(s->o.ep, s->buf, MAX_SIZE, NULL, FI_ADDR_UNSPEC, 0x51,
			 0, &ctx));
	TRY(sock_xfer(s, &go, &ack, 1));	/* the child may send */
	if (poll(&pfd, 1, 1000 * (TIMEOUT_S + 5)) != 1 ||
	    read(s->sock, &ack, 1) != 1 || ack != done)
		return fail("the send while its receiver was away", -FI_ETIMEDOUT);
	TRY(wait_comp(s, &e));
	if (e.tag != 0x51 || e.len != MAX_SIZE || !filled(s->buf, MAX_SIZE, 11))
		return fail("the message received while away", -FI_EIO);
	return 0;
}

/* The parent writes into the child's window and reads it back. */
static int rma(struct side *s, size_t size)
{
	struct { uint64_t addr, key; } mine = {
		(uintptr_t)s->rma, fi_mr_key(s->mr) }, theirs;
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	char done = 1, ack;

	TRY(sock_xfer(s, &mine, &theirs, sizeof(mine)));
	if (!s->parent) {
		/* the parent is done */
		TRY(sock_xfer_progress(s, &done, &ack, 1));
		return filled(s->rma, size, 7) ? 0 :
		       fail("RMA write data at the target", -FI_EIO);
	}
	fill(s->rma, size, 7);		/* registered: a valid local buffer */
	POST(s, fi_write(s->o.ep, s->rma, size, fi_mr_desc(s->mr), s->peer,
			 theirs.addr, theirs.key, &ctx));
	TRY(wait_comp(s, &e));
	memset(s->buf, 0, size);
	memset(s->rma, 0, size);
	POST(s, fi_read(s->o.ep, s->rma, size, fi_mr_desc(s->mr), s->peer,
			theirs.addr, theirs.key, &ctx));
	TRY(wait_comp(s, &e));
	if (!filled(s->rma, size, 7))
		return fail("RMA read back", -FI_EIO);
	return sock_xfer(s, &done, &ack, 1);
}

static void close_side(struct side *s)
{
	test_rdm_close(&s->o, s->mr);
	free(s->buf);
	free(s->rma);
}

/* Runs the cases on one side; the TAP lines are the parent's. */
static int run(struct side *s, int iters)
{
	static const size_t sizes[] = { 1, 64, 4096, 65536, MAX_SIZE };
	int ret, n = 0, failed = 0;
	size_t i;

	ret = open_side(s);
	if (ret == -FI_ENODATA) {
		if (s->parent)
			printf("1..0 # SKIP no %s RDM info for FI_LNX_PROV_LINKS=%s\n",
			       prov_name(), getenv("FI_LNX_PROV_LINKS") ?: "(unset)");
		return 77;
	}
	if (ret || swap_names(s))
		return 1;
	if (iters == 0) {	/* "open" */
		if (s->parent)
			printf("1..1\nok 1 - lnx endpoints open, names swapped\n");
		close_side(s);
		return 0;
	}
	if (s->parent)
		printf("1..%zu\n", sizeof(sizes) / sizeof(sizes[0]) + 2 +
		       auto_progress());
/* ok is a call (a whole exchange): evaluated once, on both sides. */
#define REPORT(ok, ...)							\
	do {								\
		bool report_ok_ = (ok);					\
		if (!report_ok_)					\
			failed = 1;					\
		if (s->parent) {					\
			printf("%sok %d - ", report_ok_ ? "" : "not ", ++n); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)
	/* After a failure the two sides are out of step: stop there. */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !failed; i++)
		REPORT(!pingpong(s, sizes[i], iters),
		       "tagged ping-pong, %zu B x %d, data checked", sizes[i],
		       iters);
	if (failed)
		return 1;
	REPORT(!unexpected(s), "a tagged message before its receive");
	if (s->mr)
		REPORT(!rma(s, 65536), "RMA write and read back, 64 KiB, checked");
	else if (s->parent)
		printf("ok %d - # SKIP RMA: this lnx has no fi_mr_reg (-FI_ENOSYS)\n",
		       ++n);
	if (auto_progress())
		REPORT(!while_away(s), "FI_PROGRESS_AUTO: 1 MiB sent while "
		       "its receiver calls nothing");
	fflush(stdout);
	close_side(s);
	return failed;
}

int main(int argc, char **argv)
{
	/* "open" (or 0): only the set-up. */
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	struct side s = { 0 };
	int sv[2], status, ret;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	s.parent = child != 0;
	s.sock = sv[s.parent ? 0 : 1];
	/* The child's own lfverbs setting (read at its first fi_getinfo). */
	if (!s.parent && getenv("FUNC_RDM_CHILD_SHM"))
		setenv("FI_LFVERBS_SHM", getenv("FUNC_RDM_CHILD_SHM"), 1);
	alarm(4 * TIMEOUT_S);
	ret = run(&s, iters);
	if (!s.parent)
		return ret;
	if (ret == 77)	/* skipped, said so */
		ret = 0;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	return ret ? ret : WEXITSTATUS(status) == 77 ? 0 : WEXITSTATUS(status);
}
