/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A numbered, checksummed stream of tagged messages over an lfverbs RDM
 * endpoint, for the network fault cases of tests/nodes/faults.sh.
 *
 *   lfv_stream recv [-a IP] [-p PORT] [-n N] [-e FIRST] [-E EPOCHS]
 *                   [-t IDLE_S] [-k K]
 *   lfv_stream send -a PEER_IP [-p PORT] [-n N] [-e FIRST] [-E EPOCHS]
 *                   [-g GAP_S] [-R] [-w WINDOW] [-i INTERVAL_MS]
 *                   [-b BOUND_MS] [-T LIMIT_S] [-x flip|dup|swap|skip]
 *
 * The receiver listens at IP:PORT (a service name, so the sender needs
 * nothing but the address). The sender sends EPOCHS streams ("epochs",
 * numbered from FIRST) of N messages each, sizes cycling through eager
 * and rendezvous ones, at most WINDOW in flight (with -i, INTERVAL_MS
 * between one send and the next), all with one tag: lfverbs
 * promises tagged messages in order per peer (FI_ORDER_SAS), so the
 * receives, posted in order, must match the messages in the order sent.
 * Each message carries {epoch, sequence number, length, checksum of the
 * payload}; the receiver checks every byte (checksum and length), that no
 * message arrives twice, and that the epoch and number grow along the
 * order its receives were posted in.
 *
 * An epoch whose send fails stops posting (the stream is broken) and
 * drains; after GAP_S seconds the next epoch starts (with -R after
 * resolving the peer's address again: a restarted peer has a new one).
 * Each error completion is timed from the last successful one (or the
 * epoch's start), or from its send's post if that came later (a send
 * posted after the connection failed makes a new one, whose handshake has
 * its own bound), and must come within BOUND_MS; nothing may stay pending
 * past LIMIT_S (a hang).
 *
 * Output, one line per epoch on each side (tests/nodes/faults.sh reads
 * them), and the sender's "streaming" once its first message went through:
 *   send epoch E: sent S ok O errors X (first ERR) max_error_delay_ms D ms T ok_seqs RANGES
 *   recv epoch E: got G dups U bad B order R recv_errors X got_seqs RANGES
 * Exit status 0 when every check passed and the last epoch was complete
 * (every message sent and received), 1 otherwise, 2 on a setup failure.
 *
 * -k K (receiver) dies by SIGKILL once it has K messages, with sends of
 * the sender still pending. -x (sender) breaks the stream on purpose, to
 * show the receiver's checks fail: a flipped byte, a message sent twice,
 * two messages swapped, one left out.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
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
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "../test_rdm.h"

#define STREAM_VERSION FI_VERSION(1, 17)
#define STREAM_MAGIC 0x6c667673u	/* "lfvs" */
#define STREAM_TAG 0x5eed
#define STREAM_MAX_N 100000
#define STREAM_MAX_WINDOW 64
#define STREAM_MAX_SIZE (256 * 1024)

/* Eager ones (up to FI_LFVERBS_RDM_EAGER, 16 KiB by default; at least the
 * header) and
 * rendezvous ones past it. */
static const size_t stream_sizes[] = {
	64, 20000, 1500, 65536, 16384, 24, 16385, 4096, 131072, 200000,
};

struct stream_hdr {
	uint32_t magic;
	uint32_t epoch;
	uint32_t seq;
	uint32_t len;		/* the whole message, header included */
	uint64_t sum;		/* FNV-1a of the payload after the header */
};

struct stream_opts {
	bool sender;
	const char *addr;
	const char *port;
	unsigned n, first, epochs, window, idle_s, die_after, gap_s, limit_s;
	unsigned interval_ms;	/* -i: pause before each send but the first */
	unsigned bound_ms;
	bool reresolve;
	const char *fault;
};

struct stream {
	struct test_rdm r;	/* fabric, domain, AV, CQ, endpoint */
	fi_addr_t peer;
	char *bufs[STREAM_MAX_WINDOW];
	int slot_seq[STREAM_MAX_WINDOW];	/* send: seq; recv: post number */
	double slot_t[STREAM_MAX_WINDOW];	/* send: when posted (ms) */
	bool busy[STREAM_MAX_WINDOW];
	bool streaming;		/* send: said "streaming" */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t fnv1a(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static size_t stream_size(unsigned seq)
{
	return stream_sizes[seq % (sizeof(stream_sizes) / sizeof(stream_sizes[0]))];
}

/* Message seq of epoch into buf: header, then a pattern of both. */
static void stream_fill(char *buf, unsigned epoch, unsigned seq)
{
	struct stream_hdr *h = (struct stream_hdr *)buf;
	size_t len = stream_size(seq), i;

	for (i = sizeof(*h); i < len; i++)
		buf[i] = (char)(seq * 7 + epoch * 13 + i * 31 + (i >> 8));
	h->magic = STREAM_MAGIC;
	h->epoch = epoch;
	h->seq = seq;
	h->len = (uint32_t)len;
	h->sum = fnv1a((unsigned char *)buf + sizeof(*h), len - sizeof(*h));
}

/* Prints the set bits of seen[0..n) as ranges "0-9,12" ("-" if none). */
static void print_ranges(const bool *seen, unsigned n)
{
	unsigned i = 0, start;
	bool any = false;

	while (i < n) {
		if (!seen[i]) {
			i++;
			continue;
		}
		for (start = i; i < n && seen[i]; i++)
			;
		printf("%s%u", any ? "," : "", start);
		if (i - 1 > start)
			printf("-%u", i - 1);
		any = true;
	}
	printf("%s\n", any ? "" : "-");
}

static int stream_open(struct stream *s, const struct stream_opts *o)
{
	struct fi_info *hints = fi_allocinfo(), *info;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->fabric_attr->prov_name = strdup("lfverbs");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	/* The receiver listens at its address; the sender keeps dest_addr
	 * for fi_av_insert and takes any source. */
	ret = fi_getinfo(STREAM_VERSION, o->addr, o->port,
			 o->sender ? 0 : FI_SOURCE, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		fprintf(stderr, "lfv_stream: fi_getinfo %s:%s: %s\n", o->addr,
			o->port, fi_strerror(-ret));
		return ret;
	}
	if (o->sender) {
		free(info->src_addr);
		info->src_addr = NULL;
		info->src_addrlen = 0;
	}
	ret = test_rdm_open(&s->r, info, FI_CQ_FORMAT_TAGGED);
	if (ret)
		fprintf(stderr, "lfv_stream: opening the endpoint: %s\n",
			fi_strerror(-ret));
	return ret;
}

static void stream_close(struct stream *s)
{
	unsigned i;

	test_rdm_close(&s->r, NULL);
	for (i = 0; i < STREAM_MAX_WINDOW; i++)
		free(s->bufs[i]);
}

/* The peer's address from its service name (again, with -R). Tried up to
 * 3 times, a second apart, saying so: an application would retry too (a
 * resolution is rdma_cm's route and a SIDR, which loss can defeat). */
static int stream_resolve(struct stream *s)
{
	int ret = 0, try;

	if (s->peer != FI_ADDR_NOTAVAIL)
		fi_av_remove(s->r.av, &s->peer, 1, 0);
	for (try = 0; try < 3; try++) {
		if (try)
			sleep(1);
		s->peer = FI_ADDR_NOTAVAIL;
		ret = fi_av_insert(s->r.av, s->r.info->dest_addr, 1, &s->peer, 0,
				   NULL);
		if (ret == 1)
			return 0;
		printf("send: fi_av_insert of the peer failed (%d), try %d\n",
		       ret, try + 1);
	}
	s->peer = FI_ADDR_NOTAVAIL;
	return ret < 0 ? ret : -FI_EOTHER;
}

/* One completion or error completion: its slot, the error (0 if none)
 * and the received length. 0 when there is one, -FI_EAGAIN if none. */
static int stream_poll(struct stream *s, int *slot, int *err, size_t *len)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee = { 0 };
	ssize_t ret = fi_cq_read(s->r.cq, &e, 1);

	if (ret == 1) {
		*slot = (int)(intptr_t)e.op_context;
		*err = 0;
		*len = e.len;
		return 0;
	}
	if (ret == -FI_EAVAIL && fi_cq_readerr(s->r.cq, &ee, 0) == 1) {
		*slot = (int)(intptr_t)ee.op_context;
		*err = ee.err ? ee.err : FI_EOTHER;
		*len = 0;
		return 0;
	}
	return -FI_EAGAIN;
}

/* ---- sender --------------------------------------------------------- */

struct send_epoch {
	unsigned sent, ok, errors;
	int first_err;
	double last_ok, max_delay;
	bool *ok_seqs;
};

static void send_done(struct stream *s, struct send_epoch *ep, int slot,
		      int err)
{
	double t = now_ms(), since;

	s->busy[slot] = false;
	if (!err) {
		/* The first message through: the connection is up (a fault
		 * case may start its outage now: tests/nodes/faults.sh). */
		if (!ep->ok && !s->streaming) {
			s->streaming = true;
			printf("streaming\n");
			fflush(stdout);
		}
		ep->ok++;
		ep->ok_seqs[s->slot_seq[slot]] = true;
		ep->last_ok = t;
		return;
	}
	if (!ep->errors++)
		ep->first_err = err;
	since = ep->last_ok > s->slot_t[slot] ? ep->last_ok : s->slot_t[slot];
	if (t - since > ep->max_delay)
		ep->max_delay = t - since;
}

/* Takes the send completions there are now. */
static void send_take(struct stream *s, struct send_epoch *ep)
{
	int slot, err;
	size_t len;

	while (stream_poll(s, &slot, &err, &len) == 0)
		send_done(s, ep, slot, err);
}

/* Reaps completions until fewer than `keep` sends are in flight or the
 * limit passes; false on the limit (a hang). */
static bool send_reap(struct stream *s, struct send_epoch *ep,
		      const struct stream_opts *o, unsigned keep, double limit)
{
	unsigned busy, i;

	for (;;) {
		send_take(s, ep);
		for (busy = 0, i = 0; i < o->window; i++)
			busy += s->busy[i];
		if (busy < keep || (keep == 0 && busy == 0))
			return true;
		if (now_ms() > limit) {
			printf("send: %u sends still pending after %u s\n",
			       busy, o->limit_s);
			return false;
		}
		usleep(200);
	}
}

/* The order of sequence numbers, -x swap exchanging 4 and 5. */
static unsigned send_order(const struct stream_opts *o, unsigned i)
{
	if (o->fault && !strcmp(o->fault, "swap") && (i == 4 || i == 5))
		return 9 - i;
	return i;
}

static int send_one(struct stream *s, struct send_epoch *ep,
		    const struct stream_opts *o, unsigned epoch, unsigned seq,
		    double limit)
{
	int slot;
	ssize_t ret;

	if (!send_reap(s, ep, o, o->window, limit))
		return -FI_ETIMEDOUT;
	for (slot = 0; s->busy[slot]; slot++)
		;
	stream_fill(s->bufs[slot], epoch, seq);
	if (o->fault && !strcmp(o->fault, "flip") && seq == 7)
		s->bufs[slot][stream_size(seq) / 2] ^= 0x10;
	s->slot_seq[slot] = (int)seq;
	s->slot_t[slot] = now_ms();
	do {
		ret = fi_tsend(s->r.ep, s->bufs[slot], stream_size(seq), NULL,
			       s->peer, STREAM_TAG, (void *)(intptr_t)slot);
		if (ret == -FI_EAGAIN)
			send_take(s, ep);
	} while (ret == -FI_EAGAIN && now_ms() < limit);
	if (ret) {
		/* Refused at once: counted like an error completion. */
		ep->sent++;
		s->busy[slot] = true;
		send_done(s, ep, slot, (int)-ret);
		return (int)ret;
	}
	ep->sent++;
	s->busy[slot] = true;
	return 0;
}

/* Waits ms, taking the completions that come meanwhile (-i: a stream
 * spread over time, so that a fault starting after its first message
 * still meets sends in flight). */
static void send_pause(struct stream *s, struct send_epoch *ep, unsigned ms)
{
	double until = now_ms() + ms;

	while (now_ms() < until) {
		send_take(s, ep);
		usleep(200);
	}
}

/* One epoch; false on a hang. */
static bool send_epoch(struct stream *s, const struct stream_opts *o,
		       unsigned epoch, struct send_epoch *ep)
{
	double limit = now_ms() + o->limit_s * 1e3;
	unsigned i, seq;

	ep->last_ok = now_ms();
	for (i = 0; i < o->n && !ep->errors; i++) {
		if (i && o->interval_ms)
			send_pause(s, ep, o->interval_ms);
		seq = send_order(o, i);
		if (o->fault && !strcmp(o->fault, "skip") && seq == 9)
			continue;
		if (send_one(s, ep, o, epoch, seq, limit) == -FI_ETIMEDOUT)
			return false;
		if (o->fault && !strcmp(o->fault, "dup") && seq == 3 &&
		    send_one(s, ep, o, epoch, seq, limit) == -FI_ETIMEDOUT)
			return false;
	}
	return send_reap(s, ep, o, 0, limit);
}

static int run_sender(struct stream *s, const struct stream_opts *o)
{
	struct send_epoch ep;
	unsigned e;
	double t0;
	bool hung = false, fail = false;
	int ret;

	ret = stream_resolve(s);
	if (ret)
		return 2;
	for (e = o->first; e < o->first + o->epochs && !hung; e++) {
		if (e > o->first) {
			sleep(o->gap_s);
			if (o->reresolve && stream_resolve(s))
				return 2;
		}
		memset(&ep, 0, sizeof(ep));
		ep.ok_seqs = calloc(o->n, sizeof(bool));
		if (!ep.ok_seqs)
			return 2;
		t0 = now_ms();
		hung = !send_epoch(s, o, e, &ep);
		printf("send epoch %u: sent %u ok %u errors %u (%s) "
		       "max_error_delay_ms %.0f ms %.0f ok_seqs ", e, ep.sent,
		       ep.ok, ep.errors,
		       ep.errors ? fi_strerror(ep.first_err) : "-",
		       ep.max_delay, now_ms() - t0);
		print_ranges(ep.ok_seqs, o->n);
		fflush(stdout);
		free(ep.ok_seqs);
		if (ep.errors && ep.max_delay > o->bound_ms) {
			printf("send: FAIL: an error completion came %.0f ms "
			       "after the last progress (bound %u ms)\n",
			       ep.max_delay, o->bound_ms);
			fail = true;
		}
		/* Only the last epoch must be whole. */
		fail |= e + 1 == o->first + o->epochs &&
			(ep.errors || ep.ok != o->n);
	}
	return hung || fail ? 1 : 0;
}

/* ---- receiver ------------------------------------------------------- */

struct recv_state {
	unsigned epochs_seen;
	unsigned *got, *dups, *bad, *order, *errors;	/* per epoch */
	bool **seen;
	unsigned posted, total;
	uint64_t last_key;	/* (epoch, seq) of the last in post order */
	uint64_t *key_by_post;	/* per post number, 0 if none yet */
	unsigned next_check;	/* post number the order check is at */
};

static int recv_post(struct stream *s, struct recv_state *r, int slot)
{
	ssize_t ret;

	s->slot_seq[slot] = (int)r->posted;
	do {
		ret = fi_trecv(s->r.ep, s->bufs[slot], STREAM_MAX_SIZE, NULL,
			       FI_ADDR_UNSPEC, STREAM_TAG, 0,
			       (void *)(intptr_t)slot);
	} while (ret == -FI_EAGAIN);
	if (ret)
		return (int)ret;
	r->posted++;
	return 0;
}

/* Checks one message; its (epoch, seq) key, or 0 if it is not one of ours. */
static uint64_t recv_check(struct stream *s, struct recv_state *r,
			   const struct stream_opts *o, int slot, size_t len)
{
	struct stream_hdr *h = (struct stream_hdr *)s->bufs[slot];
	unsigned e;

	if (len < sizeof(*h) || h->magic != STREAM_MAGIC ||
	    h->epoch < o->first || h->epoch >= o->first + o->epochs ||
	    h->seq >= o->n) {
		printf("recv: FAIL: a message that is not of the stream (%zu B)\n",
		       len);
		r->bad[0]++;
		return 0;
	}
	e = h->epoch - o->first;
	if (h->len != len || len != stream_size(h->seq) ||
	    h->sum != fnv1a((unsigned char *)h + sizeof(*h), len - sizeof(*h))) {
		printf("recv: FAIL: epoch %u message %u: %zu B, bad length or "
		       "checksum\n", h->epoch, h->seq, len);
		r->bad[e]++;
	}
	if (r->seen[e][h->seq]) {
		printf("recv: FAIL: epoch %u message %u arrived twice\n",
		       h->epoch, h->seq);
		r->dups[e]++;
	} else {
		r->seen[e][h->seq] = true;
		r->got[e]++;
	}
	return ((uint64_t)h->epoch << 32 | h->seq) + 1;
}

/* The messages in the order of the receives they matched must have growing
 * (epoch, seq): checked as far as the receives have completed. */
static void recv_check_order(struct recv_state *r, const struct stream_opts *o)
{
	uint64_t key;

	while (r->next_check < r->posted && r->key_by_post[r->next_check]) {
		key = r->key_by_post[r->next_check++];
		if (key == UINT64_MAX)	/* an error completion */
			continue;
		if (key <= r->last_key) {
			unsigned e = (unsigned)((key - 1) >> 32) - o->first;

			printf("recv: FAIL: epoch %u message %u came after "
			       "epoch %u message %u\n", e + o->first,
			       (unsigned)(key - 1),
			       (unsigned)((r->last_key - 1) >> 32),
			       (unsigned)(r->last_key - 1));
			r->order[e]++;
		}
		r->last_key = key;
	}
}

static bool recv_complete(const struct recv_state *r,
			  const struct stream_opts *o)
{
	return r->got[o->epochs - 1] == o->n;
}

static int recv_alloc(struct recv_state *r, const struct stream_opts *o)
{
	unsigned e;

	r->got = calloc(o->epochs, sizeof(unsigned));
	r->dups = calloc(o->epochs, sizeof(unsigned));
	r->bad = calloc(o->epochs, sizeof(unsigned));
	r->order = calloc(o->epochs, sizeof(unsigned));
	r->errors = calloc(o->epochs, sizeof(unsigned));
	r->seen = calloc(o->epochs, sizeof(bool *));
	/* Room for every message twice over (duplicates) plus the window. */
	r->key_by_post = calloc(2 * (size_t)o->n * o->epochs + o->window,
				sizeof(uint64_t));
	if (!r->got || !r->dups || !r->bad || !r->order || !r->errors ||
	    !r->seen || !r->key_by_post)
		return -FI_ENOMEM;
	for (e = 0; e < o->epochs; e++) {
		r->seen[e] = calloc(o->n, sizeof(bool));
		if (!r->seen[e])
			return -FI_ENOMEM;
	}
	return 0;
}

static void recv_report(const struct recv_state *r, const struct stream_opts *o)
{
	unsigned e;

	for (e = 0; e < o->epochs; e++) {
		printf("recv epoch %u: got %u dups %u bad %u order %u "
		       "recv_errors %u got_seqs ", e + o->first, r->got[e],
		       r->dups[e], r->bad[e], r->order[e], r->errors[e]);
		print_ranges(r->seen[e], o->n);
	}
	fflush(stdout);
}

static int run_receiver(struct stream *s, const struct stream_opts *o)
{
	struct recv_state r = { 0 };
	double idle_since;
	unsigned e, total = 0, cap;
	int slot, err;
	size_t len;
	bool fail = false;

	if (recv_alloc(&r, o))
		return 2;
	cap = 2 * o->n * o->epochs + o->window;
	for (slot = 0; slot < (int)o->window; slot++)
		if (recv_post(s, &r, slot))
			return 2;
	printf("recv: listening at %s:%s\n", o->addr, o->port);
	fflush(stdout);
	idle_since = now_ms();
	while (!recv_complete(&r, o) &&
	       now_ms() - idle_since < o->idle_s * 1e3) {
		if (stream_poll(s, &slot, &err, &len)) {
			usleep(200);
			continue;
		}
		idle_since = now_ms();
		if (err) {
			/* The first error says what failed. */
			if (!r.errors[o->epochs - 1]++) {
				printf("recv: first error: %s\n",
				       fi_strerror(err));
				fflush(stdout);
			}
			r.key_by_post[s->slot_seq[slot]] = UINT64_MAX;
		} else {
			r.key_by_post[s->slot_seq[slot]] =
				recv_check(s, &r, o, slot, len);
			if (!r.key_by_post[s->slot_seq[slot]])
				r.key_by_post[s->slot_seq[slot]] = UINT64_MAX;
			total++;
		}
		recv_check_order(&r, o);
		if (o->die_after && total == o->die_after) {
			printf("recv: dying (SIGKILL) after %u messages\n", total);
			fflush(stdout);
			raise(SIGKILL);
		}
		if (r.posted < cap && recv_post(s, &r, slot))
			return 2;
	}
	recv_report(&r, o);
	for (e = 0; e < o->epochs; e++)
		fail |= r.dups[e] || r.bad[e] || r.order[e];
	if (!recv_complete(&r, o)) {
		printf("recv: FAIL: epoch %u incomplete after %u s idle\n",
		       o->first + o->epochs - 1, o->idle_s);
		fail = true;
	}
	return fail ? 1 : 0;
}

/* ---- main ------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: lfv_stream recv|send [-a IP] [-p PORT] [-n N] "
		"[-e FIRST] [-E EPOCHS] [-w WINDOW] [-t IDLE_S] [-k K] "
		"[-g GAP_S] [-i INTERVAL_MS] [-R] [-b BOUND_MS] [-T LIMIT_S] "
		"[-x flip|dup|swap|skip]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct stream_opts *o)
{
	int c;

	if (argc < 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv")))
		usage();
	o->sender = !strcmp(argv[1], "send");
	optind = 2;
	while ((c = getopt(argc, argv, "a:p:n:e:E:w:t:k:g:i:Rb:T:x:")) != -1) {
		switch (c) {
		case 'a': o->addr = optarg; break;
		case 'p': o->port = optarg; break;
		case 'n': o->n = (unsigned)atoi(optarg); break;
		case 'e': o->first = (unsigned)atoi(optarg); break;
		case 'E': o->epochs = (unsigned)atoi(optarg); break;
		case 'w': o->window = (unsigned)atoi(optarg); break;
		case 't': o->idle_s = (unsigned)atoi(optarg); break;
		case 'k': o->die_after = (unsigned)atoi(optarg); break;
		case 'g': o->gap_s = (unsigned)atoi(optarg); break;
		case 'i': o->interval_ms = (unsigned)atoi(optarg); break;
		case 'R': o->reresolve = true; break;
		case 'b': o->bound_ms = (unsigned)atoi(optarg); break;
		case 'T': o->limit_s = (unsigned)atoi(optarg); break;
		case 'x': o->fault = optarg; break;
		default: usage();
		}
	}
	if (!o->addr || !o->n || o->n > STREAM_MAX_N || !o->epochs ||
	    !o->window || o->window > STREAM_MAX_WINDOW)
		usage();
}

int main(int argc, char **argv)
{
	struct stream_opts o = {
		.port = "7471", .n = 200, .epochs = 1, .window = 16,
		.idle_s = 30, .gap_s = 5, .limit_s = 60, .bound_ms = 9000,
	};
	struct stream s = { .peer = FI_ADDR_NOTAVAIL };
	unsigned i;
	int ret;

	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < o.window; i++) {
		s.bufs[i] = malloc(STREAM_MAX_SIZE);
		if (!s.bufs[i])
			return 2;
	}
	if (stream_open(&s, &o)) {
		stream_close(&s);
		return 2;
	}
	ret = o.sender ? run_sender(&s, &o) : run_receiver(&s, &o);
	stream_close(&s);
	return ret;
}
