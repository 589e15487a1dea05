/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Completion queues: every format, errors and err_data, wait objects,
 * thresholds, fi_cq_signal, trywait/FD, overflow, multi-threaded stress,
 * both peer roles (fi_peer(3)), a synthetic hardware source, and a hook
 * that polls the hardware itself (the direct window and the spare). */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lfv_cq.h"
#include "unit_peer_cq.h"
#include "unit_wait.h"
#include "../test_with.h"

static lfv_atomic32_t parent_ref;

static struct lfv_cq_params params(bool store_src, uint32_t version)
{
	return (struct lfv_cq_params){
		.api_version = version,
		.parent_ref = &parent_ref,
		.store_src = store_src,
	};
}

static struct fid_cq *cq_open_full(enum fi_cq_format format,
				   enum fi_wait_obj wait, size_t size,
				   bool store_src, uint32_t version)
{
	struct fi_cq_attr attr = { .format = format, .wait_obj = wait,
				   .size = size };
	struct lfv_cq_params p = params(store_src, version);
	struct fid_cq *cq = NULL;

	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), 0);
	return cq;
}

static struct fid_cq *cq_open(enum fi_cq_format format, enum fi_wait_obj wait)
{
	return cq_open_full(format, wait, 0, false, FI_VERSION(1, 17));
}

static void cq_close(struct fid_cq *cq)
{
	assert_int_equal(fi_close(&cq->fid), 0);
}

static struct lfv_cq_comp comp_n(uint64_t n)
{
	return (struct lfv_cq_comp){
		.context = (void *)(uintptr_t)(n + 1), .flags = FI_RECV | FI_MSG,
		.len = n * 10, .buf = (void *)(uintptr_t)(n + 100),
		.data = n + 1000, .tag = n + 2000, .src = n + 3000,
	};
}

static void put(struct fid_cq *cq, uint64_t n)
{
	struct lfv_cq_comp c = comp_n(n);

	assert_int_equal(lfv_cq_write(lfv_cq_from_fid(cq), &c), 0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(lfv_ref_read(&parent_ref), 0);
	return 0;
}

/* ---- open ------------------------------------------------------------------ */

static void test_open_bad_input(void **state)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct lfv_cq_params p = params(false, FI_VERSION(1, 17));
	struct fid_cq *cq;

	(void)state;
	assert_int_equal(lfv_cq_open(NULL, NULL, &p, &cq), -FI_EINVAL);
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, NULL), -FI_EINVAL);
	attr.format = (enum fi_cq_format)42;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.format = FI_CQ_FORMAT_MSG;
	attr.wait_obj = FI_WAIT_SET;	/* without its wait set */
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_POLLFD;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_ENOSYS);
	attr.wait_obj = (enum fi_wait_obj)77;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.wait_obj = FI_WAIT_NONE;
	attr.wait_cond = (enum fi_cq_wait_cond)9;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.wait_cond = FI_CQ_COND_NONE;
	attr.flags = FI_SEND;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.flags = FI_AFFINITY;
	attr.signaling_vector = -1;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.signaling_vector = 1 << 20;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	attr.signaling_vector = 0;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), 0);
	assert_int_equal(lfv_cq_from_fid(cq)->signaling_vector, 0);
	cq_close(cq);
	attr.flags = 0;
	attr.size = (size_t)1 << 40;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
	/* FI_PEER needs a peer context naming the owner. */
	attr.size = 0;
	attr.flags = FI_PEER;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), -FI_EINVAL);
}

static void test_default_size_and_parent(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_UNSPEC, FI_WAIT_NONE);
	struct lfv_cq *lcq = lfv_cq_from_fid(cq);

	(void)state;
	assert_int_equal(lfv_ring_capacity(&lcq->ring), LFV_CQ_DEFAULT_SIZE);
	assert_int_equal(lcq->format, FI_CQ_FORMAT_CONTEXT);
	assert_int_equal(lfv_ref_read(&parent_ref), 1);
	lfv_ref_get(&lcq->ref); /* an endpoint bound to it */
	assert_int_equal(fi_close(&cq->fid), -FI_EBUSY);
	lfv_ref_put(&lcq->ref);
	cq_close(cq);
}

/* ---- formats ------------------------------------------------------------- */

static void test_formats(void **state)
{
	struct fi_cq_tagged_entry t[2];
	struct fi_cq_data_entry d;
	struct fi_cq_msg_entry m;
	struct fi_cq_entry c;
	struct fid_cq *cq;

	(void)state;
	cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	put(cq, 1);
	assert_int_equal(fi_cq_read(cq, &c, 1), 1);
	assert_ptr_equal(c.op_context, (void *)2);
	cq_close(cq);

	cq = cq_open(FI_CQ_FORMAT_MSG, FI_WAIT_NONE);
	put(cq, 2);
	assert_int_equal(fi_cq_read(cq, &m, 1), 1);
	assert_ptr_equal(m.op_context, (void *)3);
	assert_int_equal(m.flags, FI_RECV | FI_MSG);
	assert_int_equal(m.len, 20);
	cq_close(cq);

	cq = cq_open(FI_CQ_FORMAT_DATA, FI_WAIT_NONE);
	put(cq, 3);
	assert_int_equal(fi_cq_read(cq, &d, 1), 1);
	assert_ptr_equal(d.buf, (void *)103);
	assert_int_equal(d.data, 1003);
	assert_int_equal(d.len, 30);
	cq_close(cq);

	/* Two entries in one read land back to back in the caller's array. */
	cq = cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE);
	put(cq, 4);
	put(cq, 5);
	assert_int_equal(fi_cq_read(cq, t, 2), 2);
	assert_int_equal(t[0].tag, 2004);
	assert_int_equal(t[1].tag, 2005);
	assert_int_equal(t[1].data, 1005);
	assert_int_equal(fi_cq_read(cq, t, 2), -FI_EAGAIN);
	cq_close(cq);
}

static void test_read_bad_input_and_count0(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_MSG, FI_WAIT_NONE);
	struct fi_cq_msg_entry m;
	fi_addr_t src;

	(void)state;
	assert_int_equal(fi_cq_read(cq, NULL, 1), -FI_EINVAL);
	assert_int_equal(fi_cq_readfrom(cq, &m, 1, NULL), -FI_EINVAL);
	assert_int_equal(fi_cq_readfrom(cq, NULL, 1, &src), -FI_EINVAL);
	assert_int_equal(fi_cq_readerr(cq, NULL, 0), -FI_EINVAL);
	/* count 0 drives progress and reads nothing. */
	put(cq, 1);
	assert_int_equal(fi_cq_read(cq, NULL, 0), 0);
	assert_int_equal(fi_cq_read(cq, &m, 1), 1);
	/* sread/signal are invalid without a wait object. */
	assert_int_equal(fi_cq_sread(cq, &m, 1, NULL, 0), -FI_EINVAL);
	assert_int_equal(fi_cq_signal(cq), -FI_EINVAL);
	cq_close(cq);
}

static void test_readfrom(void **state)
{
	struct fi_cq_msg_entry m[3];
	fi_addr_t src[3];
	struct fid_cq *cq;

	(void)state;
	/* Without FI_SOURCE no address is kept. */
	cq = cq_open(FI_CQ_FORMAT_MSG, FI_WAIT_NONE);
	put(cq, 1);
	assert_int_equal(fi_cq_readfrom(cq, m, 3, src), 1);
	assert_int_equal(src[0], FI_ADDR_NOTAVAIL);
	cq_close(cq);

	cq = cq_open_full(FI_CQ_FORMAT_MSG, FI_WAIT_NONE, 0, true,
			  FI_VERSION(1, 17));
	put(cq, 1);
	put(cq, 2);
	put(cq, 3);
	assert_int_equal(fi_cq_readfrom(cq, m, 2, src), 2);
	assert_int_equal(src[0], 3001);
	assert_int_equal(src[1], 3002);
	assert_int_equal(m[1].len, 20);
	/* Plain read on a FI_SOURCE CQ drops the address, keeps the entry. */
	assert_int_equal(fi_cq_read(cq, m, 3), 1);
	assert_int_equal(m[0].len, 30);
	cq_close(cq);
}

/* ---- errors ---------------------------------------------------------------- */

static void put_err(struct fid_cq *cq, int err, const char *data, size_t len)
{
	struct fi_cq_err_entry e = {
		.op_context = cq, .flags = FI_SEND, .err = err,
		.prov_errno = 12, .err_data = (void *)data,
		.err_data_size = len,
	};

	assert_int_equal(lfv_cq_write_err(lfv_cq_from_fid(cq), &e), 0);
}

static void test_errors(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_MSG, FI_WAIT_NONE);
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_msg_entry m;
	char user[4];

	(void)state;
	assert_int_equal(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
	put(cq, 1);
	put_err(cq, FI_ECANCELED, "0123456789", 10);
	put_err(cq, FI_EIO, "abcdef", 6);
	/* Errors are out of band: reads fail until they are taken. */
	assert_int_equal(fi_cq_read(cq, &m, 1), -FI_EAVAIL);
	err.err_data = user;
	err.err_data_size = sizeof(user);
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_int_equal(err.err, FI_ECANCELED);
	assert_int_equal(err.prov_errno, 12);
	assert_ptr_equal(err.op_context, cq);
	assert_ptr_equal(err.err_data, user);
	assert_int_equal(err.err_data_size, 4);
	assert_memory_equal(user, "0123", 4);
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_int_equal(err.err, FI_EIO);
	assert_int_equal(err.err_data_size, 6);
	assert_memory_equal(err.err_data, "abcdef", 6);
	assert_int_equal(fi_cq_read(cq, &m, 1), 1);
	cq_close(cq);
}

static void test_errors_v1_4(void **state)
{
	struct fid_cq *cq = cq_open_full(FI_CQ_FORMAT_MSG, FI_WAIT_NONE, 0,
					 false, FI_VERSION(1, 4));
	struct {
		char entry[offsetof(struct fi_cq_err_entry, err_data_size)];
		char guard[8];
	} old;
	struct fi_cq_err_entry err = { 0 };

	(void)state;
	put_err(cq, FI_EIO, "xyz", 3);
	memset(&old, 0x5a, sizeof(old));
	/* A 1.4 caller's struct ends before err_data_size: nothing past it
	 * is written, and err_data is the provider's buffer. */
	/* Through the ops, as 1.4's inline fi_cq_readerr did (2.x's also
	 * writes src_addr, past a 1.4 caller's struct). */
	assert_int_equal(cq->ops->readerr(cq, (struct fi_cq_err_entry *)&old, 0), 1);
	assert_memory_equal(old.guard, "\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a", 8);
	memcpy(&err, old.entry, sizeof(old.entry));
	assert_int_equal(err.err, FI_EIO);
	assert_memory_equal(err.err_data, "xyz", 3);
	cq_close(cq);
}

static const char *fake_strerror(int prov_errno)
{
	return prov_errno == 5 ? "fake status five" : "other";
}

static void test_strerror(void **state)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct lfv_cq_params p = params(false, FI_VERSION(1, 17));
	struct fid_cq *cq;
	char buf[10];

	(void)state;
	p.prov_strerror = fake_strerror;
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), 0);
	assert_string_equal(fi_cq_strerror(cq, 5, NULL, NULL, 0),
			    "fake status five");
	assert_ptr_equal(fi_cq_strerror(cq, 5, NULL, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "fake stat");
	cq_close(cq);
	cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	assert_string_equal(fi_cq_strerror(cq, FI_ETIMEDOUT, NULL, NULL, 0),
			    fi_strerror(FI_ETIMEDOUT));
	cq_close(cq);
}

/* ---- overflow and stress ------------------------------------------------ */

static void test_overflow_keeps_order(void **state)
{
	struct fid_cq *cq = cq_open_full(FI_CQ_FORMAT_DATA, FI_WAIT_NONE, 4,
					 false, FI_VERSION(1, 17));
	struct fi_cq_data_entry d[7];
	uint64_t next = 0;
	ssize_t n;
	int i;

	(void)state;
	for (i = 0; i < 1000; i++)
		put(cq, (uint64_t)i);
	assert_true(lfv_ring_overflow_total(&lfv_cq_from_fid(cq)->ring) > 0);
	while ((n = fi_cq_read(cq, d, 7)) > 0)
		for (i = 0; i < n; i++)
			assert_int_equal(d[i].data, 1000 + next++);
	assert_int_equal(n, -FI_EAGAIN);
	assert_int_equal(next, 1000);
	cq_close(cq);
}

#define STRESS_PRODUCERS 4
#define STRESS_PER_PRODUCER 100000
#define STRESS_CONSUMERS 2

struct stress {
	struct fid_cq *cq;
	lfv_atomic64_t consumed;
	lfv_atomic32_t failed;
	uint8_t *seen; /* one byte per (producer, seq) */
};

struct stress_producer {
	struct stress *s;
	uint64_t id;
};

static void *stress_produce(void *arg)
{
	struct stress_producer *p = arg;
	struct lfv_cq_comp c = { 0 };
	uint64_t i;

	for (i = 0; i < STRESS_PER_PRODUCER; i++) {
		c.context = (void *)(uintptr_t)((p->id << 32) | i);
		if (lfv_cq_write(lfv_cq_from_fid(p->s->cq), &c))
			lfv_store_relaxed32(&p->s->failed, 1);
	}
	return NULL;
}

static void *stress_consume(void *arg)
{
	struct stress *s = arg;
	uint64_t last[STRESS_PRODUCERS], total = (uint64_t)STRESS_PRODUCERS *
						 STRESS_PER_PRODUCER;
	struct fi_cq_entry e[16];
	uint64_t v, id, seq;
	ssize_t n, i;

	memset(last, 0xff, sizeof(last));
	while (lfv_load_relaxed64(&s->consumed) < total) {
		n = fi_cq_read(s->cq, e, 16);
		for (i = 0; i < n; i++) {
			v = (uint64_t)(uintptr_t)e[i].op_context;
			id = v >> 32;
			seq = v & 0xffffffff;
			/* Per producer, this reader sees increasing order. */
			if (id >= STRESS_PRODUCERS ||
			    (last[id] != UINT64_MAX && seq <= last[id]) ||
			    s->seen[id * STRESS_PER_PRODUCER + seq]++)
				lfv_store_relaxed32(&s->failed, 1);
			last[id] = seq;
		}
		if (n > 0)
			lfv_fetch_add64(&s->consumed, (uint64_t)n);
	}
	return NULL;
}

static void test_stress_many_producers(void **state)
{
	struct stress s = { 0 };
	struct stress_producer prod[STRESS_PRODUCERS];
	pthread_t pt[STRESS_PRODUCERS], ct[STRESS_CONSUMERS];
	size_t total = (size_t)STRESS_PRODUCERS * STRESS_PER_PRODUCER, i;

	(void)state;
	/* A small ring so that overflow happens under contention. */
	s.cq = cq_open_full(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE, 64, false,
			    FI_VERSION(1, 17));
	s.seen = calloc(total, 1);
	for (i = 0; i < STRESS_CONSUMERS; i++)
		pthread_create(&ct[i], NULL, stress_consume, &s);
	for (i = 0; i < STRESS_PRODUCERS; i++) {
		prod[i] = (struct stress_producer){ .s = &s, .id = i };
		pthread_create(&pt[i], NULL, stress_produce, &prod[i]);
	}
	for (i = 0; i < STRESS_PRODUCERS; i++)
		pthread_join(pt[i], NULL);
	for (i = 0; i < STRESS_CONSUMERS; i++)
		pthread_join(ct[i], NULL);
	assert_int_equal(lfv_load_relaxed32(&s.failed), 0);
	assert_int_equal(lfv_load_relaxed64(&s.consumed), total);
	for (i = 0; i < total; i++)
		if (s.seen[i] != 1)
			fail_msg("entry %zu seen %u times", i, s.seen[i]);
	free(s.seen);
	cq_close(s.cq);
}

/* ---- waiting -------------------------------------------------------------- */

static void check_sread_timeout(enum fi_wait_obj wait)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, wait);
	struct fi_cq_entry e;
	int64_t start = now_ms();

	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, 50), -FI_EAGAIN);
	assert_true(now_ms() - start >= 49);
	put(cq, 1);
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), 1);
	cq_close(cq);
}

TEST_WITH(test_sread_timeout, unit_each_wait_unspec, check_sread_timeout)

struct delayed {
	struct fid_cq *cq;
	int count;
	int delay_us;
	bool error;
	bool signal;
};

static void *delayed_writer(void *arg)
{
	struct delayed *d = arg;
	int i;

	for (i = 0; i < d->count; i++) {
		usleep((useconds_t)d->delay_us);
		if (d->signal)
			fi_cq_signal(d->cq);
		else if (d->error)
			put_err(d->cq, FI_EIO, NULL, 0);
		else
			put(d->cq, (uint64_t)i);
	}
	return NULL;
}

static void check_sread_wakeup(enum fi_wait_obj wait)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, wait);
	struct delayed d = { .cq = cq, .count = 1, .delay_us = 30000 };
	struct fi_cq_entry e;
	pthread_t t;

	pthread_create(&t, NULL, delayed_writer, &d);
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), 1);
	pthread_join(t, NULL);
	/* An error wakes a sleeper too, and is reported as -FI_EAVAIL. */
	d.error = true;
	pthread_create(&t, NULL, delayed_writer, &d);
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), -FI_EAVAIL);
	pthread_join(t, NULL);
	cq_close(cq);
}

TEST_WITH(test_sread_wakeup, unit_each_wait, check_sread_wakeup)

static void check_signal(enum fi_wait_obj wait)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, wait);
	struct delayed d = { .cq = cq, .count = 1, .delay_us = 30000,
			     .signal = true };
	struct fi_cq_entry e;
	int64_t start = now_ms();
	pthread_t t;

	pthread_create(&t, NULL, delayed_writer, &d);
	/* Blocked forever, but fi_cq_signal from another thread returns it. */
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), -FI_EAGAIN);
	assert_true(now_ms() - start < 5000);
	pthread_join(t, NULL);
	cq_close(cq);
}

TEST_WITH(test_signal, unit_each_wait, check_signal)

static void check_threshold(enum fi_wait_obj wait)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_CONTEXT,
				   .wait_obj = wait,
				   .wait_cond = FI_CQ_COND_THRESHOLD };
	struct lfv_cq_params p = params(false, FI_VERSION(1, 17));
	struct fi_cq_entry e[8];
	struct delayed d = { .count = 5, .delay_us = 10000 };
	struct fid_cq *cq;
	pthread_t t;

	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &cq), 0);
	d.cq = cq;
	pthread_create(&t, NULL, delayed_writer, &d);
	/* Waits for 5 entries, not for the first one. */
	assert_int_equal(fi_cq_sread(cq, e, 8, (void *)(uintptr_t)5, 5000), 5);
	pthread_join(t, NULL);
	/* With a threshold that is never reached, the timeout returns what
	 * is there. */
	put(cq, 1);
	assert_int_equal(fi_cq_sread(cq, e, 8, (void *)(uintptr_t)4, 30), 1);
	cq_close(cq);
}

static void test_threshold(void **state)
{
	(void)state;
	check_threshold(FI_WAIT_FD);
	check_threshold(FI_WAIT_MUTEX_COND);
}

static void test_fd_trywait_poll_epoll(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_FD);
	struct lfv_cq *lcq = lfv_cq_from_fid(cq);
	struct epoll_event ev = { .events = EPOLLIN };
	struct fi_cq_entry e;
	enum fi_wait_obj obj;
	int fd = -1, ep;

	(void)state;
	assert_int_equal(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
	assert_int_equal(obj, FI_WAIT_FD);
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	ep = epoll_create1(0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);

	assert_int_equal(lfv_cq_trywait(lcq), 0);
	assert_false(unit_readable(fd));
	put(cq, 1);
	/* Armed by trywait, so the producer signalled. */
	assert_true(unit_readable(fd));
	assert_int_equal(epoll_wait(ep, &ev, 1, 1000), 1);
	assert_int_equal(lfv_cq_trywait(lcq), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(lfv_cq_trywait(lcq), 0);
	assert_false(unit_readable(fd));
	assert_int_equal(epoll_wait(ep, &ev, 1, 0), 0);
	put_err(cq, FI_EIO, NULL, 0);
	assert_true(unit_readable(fd));
	close(ep);
	cq_close(cq);

	cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_NONE);
	assert_int_equal(lfv_cq_trywait(lfv_cq_from_fid(cq)), -FI_EINVAL);
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
	cq_close(cq);
}

static void test_mutex_cond_object(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_MUTEX_COND);
	struct fi_mutex_cond mc = { 0 };

	(void)state;
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &mc), 0);
	assert_non_null(mc.mutex);
	assert_non_null(mc.cond);
	assert_int_equal(fi_control(&cq->fid, FI_GETOPSFLAG, &mc), -FI_ENOSYS);
	cq_close(cq);
}

/* ---- peer CQ, owner role ---------------------------------------------------- */

struct owner_writer {
	struct fid_peer_cq *peer;
	uint64_t id;
};

static void *owner_write_many(void *arg)
{
	struct owner_writer *w = arg;
	uint64_t i;

	for (i = 0; i < 20000; i++)
		w->peer->owner_ops->write(w->peer,
					  (void *)(uintptr_t)((w->id << 32) | i),
					  FI_RECV, i, NULL, i, 0, w->id);
	return NULL;
}

static void test_owner_role(void **state)
{
	struct fid_cq *cq = cq_open_full(FI_CQ_FORMAT_DATA, FI_WAIT_FD, 256,
					 true, FI_VERSION(1, 17));
	struct owner_writer w[3];
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry d[32];
	uint64_t last[3] = { 0, 0, 0 }, got = 0, id, seq;
	struct fid_peer_cq *peer;
	struct fid *fid = NULL;
	fi_addr_t src[32];
	pthread_t t[3];
	int ctx;
	ssize_t n, i;

	(void)state;
	assert_int_equal(fi_export_fid(&cq->fid, 0, &fid, &ctx), 0);
	assert_int_equal(fid->fclass, FI_CLASS_PEER_CQ);
	assert_ptr_equal(fid->context, &ctx);
	assert_int_equal(fi_export_fid(&cq->fid, 1, &fid, NULL), -FI_EBADFLAGS);
	peer = lfv_container_of(fid, struct fid_peer_cq, fid);

	for (i = 0; i < 3; i++) {
		w[i] = (struct owner_writer){ .peer = peer, .id = (uint64_t)i };
		pthread_create(&t[i], NULL, owner_write_many, &w[i]);
	}
	while (got < 60000) {
		n = fi_cq_readfrom(cq, d, 32, src);
		for (i = 0; i < n; i++) {
			id = (uint64_t)(uintptr_t)d[i].op_context >> 32;
			seq = (uint64_t)(uintptr_t)d[i].op_context & 0xffffffff;
			assert_true(id < 3);
			assert_int_equal(src[i], id); /* FI_SOURCE kept */
			assert_int_equal(d[i].data, seq); /* DATA format kept */
			assert_int_equal(seq, last[id]++);
		}
		if (n > 0)
			got += (uint64_t)n;
	}
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	err.err = FI_EIO;
	assert_int_equal(peer->owner_ops->writeerr(peer, &err), 0);
	assert_int_equal(fi_cq_read(cq, d, 1), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	assert_int_equal(err.err, FI_EIO);
	assert_int_equal(peer->owner_ops->writeerr(peer, NULL), -FI_EINVAL);
	assert_int_equal(fi_close(fid), 0); /* no-op: the CQ owns it */
	cq_close(cq);
}

static void *owner_write_later(void *arg)
{
	struct fid_peer_cq *peer = arg;

	usleep(30000);
	peer->owner_ops->write(peer, (void *)7, FI_SEND, 0, NULL, 0, 0, 0);
	return NULL;
}

static void test_owner_write_wakes_sread(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_CONTEXT, FI_WAIT_MUTEX_COND);
	struct fid *fid;
	struct fi_cq_entry e;
	pthread_t t;

	(void)state;
	assert_int_equal(fi_export_fid(&cq->fid, 0, &fid, NULL), 0);
	pthread_create(&t, NULL, owner_write_later,
		       lfv_container_of(fid, struct fid_peer_cq, fid));
	assert_int_equal(fi_cq_sread(cq, &e, 1, NULL, -1), 1);
	assert_ptr_equal(e.op_context, (void *)7);
	pthread_join(t, NULL);
	cq_close(cq);
}

/* ---- peer CQ, peer role -------------------------------------------------------- */

static int progress_calls;

static void count_progress(void *arg)
{
	(void)arg;
	progress_calls++;
}

static void test_peer_role(void **state)
{
	struct unit_peer_cq owner;
	struct fi_peer_cq_context pctx = { .size = sizeof(pctx),
					   .cq = &owner.cq };
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .flags = FI_PEER };
	struct lfv_cq_params p = params(false, FI_VERSION(1, 17));
	struct fi_cq_err_entry err = { .err = FI_EIO };
	struct lfv_cq_comp c = comp_n(9);
	struct fi_cq_tagged_entry t;
	uint64_t slots[2 * 7];
	struct fid_cq *cq;
	struct fid *fid;
	struct lfv_cq *lcq;

	(void)state;
	unit_peer_cq_init(&owner);
	assert_int_equal(lfv_cq_open(&attr, &pctx, &p, &cq), 0);
	lcq = lfv_cq_from_fid(cq);
	lfv_cq_set_progress(lcq, (struct lfv_progress_hook){ count_progress,
							     NULL });
	/* Our completions go to the owner, with every field. */
	assert_int_equal(lfv_cq_write(lcq, &c), 0);
	assert_int_equal(owner.nwrites, 1);
	assert_int_equal(owner.writes[0].tag, 2009);
	assert_int_equal(owner.writes[0].src, 3009);
	lfv_cq_format_slot(lcq, slots, &c);
	c.tag = 77;
	lfv_cq_format_slot(lcq, (char *)slots + lfv_cq_slot_size(lcq), &c);
	assert_int_equal(lfv_cq_write_batch(lcq, slots, 2), 2);
	assert_int_equal(owner.nwrites, 3);
	assert_int_equal(owner.writes[2].tag, 77);
	assert_int_equal(lfv_cq_write_err(lcq, &err), 0);
	assert_int_equal(owner.nerrs, 1);
	/* fi_cq_read(cq, NULL, 0) drives progress; the rest is the owner's. */
	progress_calls = 0;
	assert_int_equal(fi_cq_read(cq, NULL, 0), 0);
	assert_int_equal(progress_calls, 1);
	assert_int_equal(fi_cq_read(cq, &t, 1), -FI_ENOSYS);
	assert_int_equal(fi_cq_readfrom(cq, &t, 1, NULL), -FI_ENOSYS);
	assert_int_equal(fi_cq_readerr(cq, &err, 0), -FI_ENOSYS);
	assert_int_equal(fi_cq_sread(cq, &t, 1, NULL, 0), -FI_ENOSYS);
	assert_int_equal(fi_cq_sreadfrom(cq, &t, 1, NULL, NULL, 0), -FI_ENOSYS);
	assert_int_equal(fi_cq_signal(cq), -FI_ENOSYS);
	assert_int_equal(fi_export_fid(&cq->fid, 0, &fid, NULL), -FI_EINVAL);
	cq_close(cq);

	pctx.size = 0;
	assert_int_equal(lfv_cq_open(&attr, &pctx, &p, &cq), -FI_EINVAL);
	pctx.size = sizeof(pctx);
	pctx.cq = NULL;
	assert_int_equal(lfv_cq_open(&attr, &pctx, &p, &cq), -FI_EINVAL);
}

/* ---- a synthetic hardware source -------------------------------------------- */

struct fake_hw {
	struct lfv_cq *cq;
	uint64_t next, end;	/* pending completions next..end-1 */
	int evfd;
	int polls;
};

static ssize_t fake_hw_poll(void *arg, void *buf, fi_addr_t *src, size_t count)
{
	struct fake_hw *hw = arg;
	struct lfv_cq_comp c;
	size_t n = 0;

	hw->polls++;
	while (n < count && hw->next < hw->end) {
		c = comp_n(hw->next++);
		/* Translated once, straight into the caller's buffer. */
		lfv_cq_format_slot(hw->cq, (char *)buf + n * hw->cq->fmt_size,
				   &c);
		if (src)
			src[n] = c.src;
		n++;
	}
	return (ssize_t)n;
}

/* Progress: move up to 3 pending completions into the ring. */
static void fake_hw_progress(void *arg)
{
	struct fake_hw *hw = arg;
	uint64_t slots[3 * 7];
	struct lfv_cq_comp c;
	size_t n = 0;

	/* Slots are packed at the CQ's slot size, not at the array's. */
	while (n < 3 && hw->next < hw->end) {
		c = comp_n(hw->next++);
		lfv_cq_format_slot(hw->cq, (char *)slots +
				   n++ * lfv_cq_slot_size(hw->cq), &c);
	}
	if (n)
		assert_int_equal(lfv_cq_write_batch(hw->cq, slots, n), n);
}

static int fake_hw_arm(void *arg)
{
	struct fake_hw *hw = arg;

	return hw->next < hw->end ? -FI_EAGAIN : 0;
}

static void fake_hw_ack(void *arg)
{
	struct fake_hw *hw = arg;
	uint64_t v;

	if (read(hw->evfd, &v, sizeof(v)) < 0)
		(void)v;
}

static void test_hw_source(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_DATA, FI_WAIT_FD);
	struct fake_hw hw = { .cq = lfv_cq_from_fid(cq), .end = 10 };
	struct lfv_cq_hw src = {
		.poll = fake_hw_poll, .arm = fake_hw_arm, .ack = fake_hw_ack,
		.arg = &hw,
	};
	struct fi_cq_data_entry d[16];
	uint64_t one = 1;
	int fd, i;

	(void)state;
	hw.evfd = eventfd(0, EFD_NONBLOCK);
	src.fd = hw.evfd;
	assert_int_equal(lfv_cq_attach_hw(hw.cq, &src), 0);
	assert_int_equal(lfv_cq_attach_hw(hw.cq, &src), -FI_EINVAL);
	lfv_cq_set_progress(hw.cq, (struct lfv_progress_hook){
		fake_hw_progress, &hw });
	/* Progress queues 0..2 in the ring; the direct poll then adds 3..9
	 * behind them, in order. */
	assert_int_equal(fi_cq_read(cq, d, 16), 10);
	for (i = 0; i < 10; i++)
		assert_int_equal(d[i].data, 1000 + i);
	assert_true(hw.polls >= 1);

	/* The channel fd wakes the CQ's FD; trywait refuses while the
	 * source has completions pending. */
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
	assert_int_equal(lfv_cq_trywait(hw.cq), 0);
	assert_false(unit_readable(fd));
	hw.end = 12;
	assert_int_equal(write(hw.evfd, &one, sizeof(one)), sizeof(one));
	assert_true(unit_readable(fd));
	assert_int_equal(lfv_cq_trywait(hw.cq), -FI_EAGAIN);
	assert_int_equal(fi_cq_sread(cq, d, 16, NULL, 1000), 2);
	lfv_cq_detach_hw(hw.cq);
	close(hw.evfd);
	cq_close(cq);
}

/* A source whose request for an event fails (ibv_req_notify_cq returned an
 * error): its next completion raises no event, so neither fi_trywait nor
 * sread may treat the CQ as safe to sleep on. */
static int fake_hw_arm_fails(void *arg)
{
	(void)arg;
	return -FI_EIO;
}

static void test_hw_arm_error_not_safe(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_DATA, FI_WAIT_FD);
	struct fake_hw hw = { .cq = lfv_cq_from_fid(cq) };
	struct lfv_cq_hw src = {
		.poll = fake_hw_poll, .arm = fake_hw_arm_fails,
		.ack = fake_hw_ack, .arg = &hw,
	};
	struct fi_cq_data_entry d;

	(void)state;
	hw.evfd = eventfd(0, EFD_NONBLOCK);
	src.fd = hw.evfd;
	assert_int_equal(lfv_cq_attach_hw(hw.cq, &src), 0);
	assert_int_equal(lfv_cq_trywait(hw.cq), -FI_EIO);
	/* sread keeps polling instead of sleeping on an unarmed source: the
	 * completion that comes without an event is still found. */
	hw.end = 1;
	assert_int_equal(fi_cq_sread(cq, &d, 1, NULL, 2000), 1);
	assert_int_equal(d.data, 1000);
	lfv_cq_detach_hw(hw.cq);
	close(hw.evfd);
	cq_close(cq);
}

/* A transport whose completions only its progress finds, and which says
 * how long a waiter may sleep (lfv_progress_hook.wait_ms), as RDM does. */
struct sliced {
	struct lfv_cq *cq;
	uint64_t next, end;
};

static void sliced_progress(void *arg)
{
	struct sliced *t = arg;
	struct lfv_cq_comp c;

	while (t->next < t->end) {
		c = comp_n(t->next++);
		assert_int_equal(lfv_cq_write(t->cq, &c), 0);
	}
}

static int sliced_wait_ms(void *arg)
{
	(void)arg;
	return 20;
}

static void test_trywait_progress_slice(void **state)
{
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_DATA, FI_WAIT_FD);
	struct sliced t = { .cq = lfv_cq_from_fid(cq) };
	struct pollfd pfd = { .events = POLLIN };
	struct fi_cq_data_entry d;
	int64_t t0;

	(void)state;
	lfv_cq_set_progress(t.cq, (struct lfv_progress_hook){
		.fn = sliced_progress, .arg = &t, .wait_ms = sliced_wait_ms });
	assert_int_equal(fi_control(&cq->fid, FI_GETWAIT, &pfd.fd), 0);
	/* What progress finds at once: trywait runs it and refuses. */
	t.end = 1;
	assert_int_equal(lfv_cq_trywait(t.cq), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, &d, 1), 1);
	/* Nothing yet: safe to wait, but only for a slice. */
	assert_int_equal(lfv_cq_trywait(t.cq), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* A completion that only progress can find (nobody signals it). */
	t.end = 2;
	t0 = now_ms();
	assert_int_equal(poll(&pfd, 1, 3000), 1);
	assert_true(now_ms() - t0 < 2000);
	assert_int_equal(fi_cq_read(cq, &d, 1), 1);
	assert_int_equal(d.data, 1001);
	/* trywait drains the expired slice: the fd blocks again. */
	assert_int_equal(lfv_cq_trywait(t.cq), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	cq_close(cq);
}

/* ---- a hook that polls the hardware itself (RDM): the direct window and
 * the spare ------------------------------------------------------------------ */

/* Writes up to per_call completions per progress call, as a transport's
 * handlers would while fi_cq_read runs the hook. */
struct fake_poller {
	struct lfv_cq *cq;
	uint64_t next, end, per_call;
	int calls;
	bool to_ring;		/* lfv_cq_write, not lfv_cq_write_to_reader */
};

static void fake_poller_run(void *arg)
{
	struct fake_poller *p = arg;
	struct lfv_cq_comp c;
	uint64_t k;

	p->calls++;
	for (k = 0; k < p->per_call && p->next < p->end; k++) {
		c = comp_n(p->next++);
		assert_int_equal(p->to_ring ? lfv_cq_write(p->cq, &c) :
			lfv_cq_write_to_reader(p->cq, &c), 0);
	}
}

static struct fid_cq *cq_open_polled(struct fake_poller *p, bool serial,
				     bool store_src, enum fi_wait_obj wait)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .wait_obj = wait };
	struct lfv_cq_params prm = params(store_src, FI_VERSION(1, 17));
	struct fid_cq *cq = NULL;

	prm.serial_reads = serial;
	assert_int_equal(lfv_cq_open(&attr, NULL, &prm, &cq), 0);
	p->cq = lfv_cq_from_fid(cq);
	lfv_cq_set_progress_polling(p->cq, (struct lfv_progress_hook){
		fake_poller_run, p });
	return cq;
}

/* Reads one entry at a time and checks it is number want. */
static void read_one(struct fid_cq *cq, uint64_t want)
{
	struct fi_cq_tagged_entry e;

	assert_int_equal(fi_cq_read(cq, &e, 1), 1);
	assert_int_equal(e.data, 1000 + want);
	assert_int_equal(e.tag, 2000 + want);
	assert_ptr_equal(e.op_context, (void *)(uintptr_t)(want + 1));
}

/* Serialised reads: what one read's progress finds past the caller's
 * buffer waits in the spare (not the ring), comes back in order, ahead of
 * what was queued in the ring after it; past the spare's room the ring
 * takes the rest, still in order. */
static void test_spare_keeps_order(void **state)
{
	struct fake_poller p = { .end = 5, .per_call = 5 };
	struct fid_cq *cq = cq_open_polled(&p, true, false, FI_WAIT_NONE);
	struct fi_cq_tagged_entry e[4];
	uint64_t i;

	(void)state;
	read_one(cq, 0);
	/* 1..4 are in the spare: the ring is empty. */
	assert_true(lfv_ring_empty(&p.cq->ring));
	assert_false(lfv_cq_ring_empty(p.cq));
	put(cq, 100);		/* a write outside a read: the ring */
	read_one(cq, 1);
	/* A bigger read takes what the spare holds, and only that. */
	assert_int_equal(fi_cq_read(cq, e, 4), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(e[i].data, 1000 + 2 + i);
	read_one(cq, 100);
	assert_int_equal(p.calls, 1);
	assert_int_equal(fi_cq_read(cq, e, 1), -FI_EAGAIN);
	assert_true(lfv_cq_ring_empty(p.cq));

	/* More than the spare holds: the rest goes to the ring behind it. */
	p.next = 10;
	p.end = 10 + 2 + LFV_CQ_SPARE + 7;
	p.per_call = p.end;
	for (i = 10; i < p.end; i++)
		read_one(cq, i);
	assert_int_equal(fi_cq_read(cq, e, 1), -FI_EAGAIN);
	cq_close(cq);
}

/* Errors still come first; fi_cq_readfrom gets the spare's sources. */
static void test_spare_errors_and_sources(void **state)
{
	struct fake_poller p = { .end = 3, .per_call = 3 };
	struct fid_cq *cq = cq_open_polled(&p, true, true, FI_WAIT_NONE);
	struct fi_cq_err_entry ee = { .err = FI_EIO }, got = { 0 };
	struct fi_cq_tagged_entry e;
	fi_addr_t src;

	(void)state;
	assert_int_equal(fi_cq_readfrom(cq, &e, 1, &src), 1);
	assert_int_equal(src, 3000);
	assert_int_equal(lfv_cq_write_err(p.cq, &ee), 0);
	assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAVAIL);
	assert_int_equal(fi_cq_readerr(cq, &got, 0), 1);
	assert_int_equal(got.err, FI_EIO);
	assert_int_equal(fi_cq_readfrom(cq, &e, 1, &src), 1);
	assert_int_equal(e.data, 1001);
	assert_int_equal(src, 3001);
	read_one(cq, 2);
	assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
	cq_close(cq);
}

/* A read that finds an error waiting still runs the hook: a caller that
 * reads errors in a loop (a peek repeated until its message comes, each
 * miss an FI_ENOMSG error written when it is posted) must let the message
 * arrive. What the hook finds comes after the error, in order. */
static void test_error_read_still_progresses(void **state)
{
	struct fi_cq_err_entry ee = { .err = FI_ENOMSG }, got;
	struct fi_cq_tagged_entry e;
	struct fake_poller p;
	struct fid_cq *cq;
	bool serial;
	int miss;

	(void)state;
	for (serial = false; ; serial = true) {
		p = (struct fake_poller){ .end = 0, .per_call = 1 };
		cq = cq_open_polled(&p, serial, false, FI_WAIT_NONE);
		for (miss = 0; miss < 3; miss++) {
			assert_int_equal(lfv_cq_write_err(p.cq, &ee), 0);
			if (miss == 2)
				p.end = 1;	/* the message comes now */
			assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAVAIL);
			assert_int_equal(p.calls, miss + 1);
			got = (struct fi_cq_err_entry){ 0 };
			assert_int_equal(fi_cq_readerr(cq, &got, 0), 1);
			assert_int_equal(got.err, FI_ENOMSG);
		}
		read_one(cq, 0);
		assert_int_equal(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
		cq_close(cq);
		if (serial)
			break;
	}
}

/* No spare where another thread may read, or a waiter may sleep: the
 * ring holds what the buffer could not, in order. */
static void test_no_spare_unless_serial_and_no_wait(void **state)
{
	static const struct {
		bool serial;
		enum fi_wait_obj wait;
	} cases[] = {
		{ false, FI_WAIT_NONE }, { true, FI_WAIT_UNSPEC },
	};
	struct fake_poller p;
	struct fid_cq *cq;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		p = (struct fake_poller){ .end = 4, .per_call = 4 };
		cq = cq_open_polled(&p, cases[k].serial, false, cases[k].wait);
		read_one(cq, 0);
		assert_false(lfv_ring_empty(&p.cq->ring));
		read_one(cq, 1);
		read_one(cq, 2);
		read_one(cq, 3);
		assert_true(lfv_cq_ring_empty(p.cq));
		cq_close(cq);
	}
}

/* The redirect is the writer's choice: lfv_cq_write inside the hook goes
 * to the ring, not into the reader's buffer or the spare, and
 * lfv_cq_write_to_reader outside a read of that CQ is lfv_cq_write. */
static void test_write_lands_where_named(void **state)
{
	struct fake_poller p = { .end = 2, .per_call = 2, .to_ring = true };
	struct fid_cq *cq = cq_open_polled(&p, true, false, FI_WAIT_NONE);
	struct fid_cq *other = cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE);
	struct lfv_cq_comp c = comp_n(7);

	(void)state;
	read_one(cq, 0);		/* through the ring */
	assert_int_equal(p.cq->spare_len, 0);
	assert_false(lfv_ring_empty(&p.cq->ring));
	read_one(cq, 1);
	/* No read runs: the ring. */
	assert_int_equal(lfv_cq_write_to_reader(p.cq, &c), 0);
	assert_false(lfv_ring_empty(&p.cq->ring));
	read_one(cq, 7);
	/* A read of another CQ runs no window of this one. */
	assert_int_equal(lfv_cq_write_to_reader(lfv_cq_from_fid(other), &c),
			 0);
	assert_false(lfv_ring_empty(&lfv_cq_from_fid(other)->ring));
	cq_close(other);
	cq_close(cq);
}

static ssize_t idle_hw_poll(void *arg, void *buf, fi_addr_t *src,
			    size_t count)
{
	(void)arg; (void)buf; (void)src; (void)count;
	return 0;
}

static void no_progress(void *arg)
{
	(void)arg;
}

/* The read-mode table of lfv_cq.h, row by row. */
static void test_read_modes(void **state)
{
	struct lfv_cq_hw hw = { .poll = idle_hw_poll, .fd = -1 };
	struct lfv_progress_hook hook = { .fn = no_progress };
	struct fid_cq *cq = cq_open(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE);
	struct lfv_cq *l = lfv_cq_from_fid(cq);
	struct fake_poller p = { 0 };
	size_t k;
	static const struct {
		bool serial;
		enum fi_wait_obj wait;
		enum lfv_cq_read_mode mode;
	} polled[] = {
		{ true, FI_WAIT_NONE, LFV_CQ_READ_SPARE },
		{ false, FI_WAIT_NONE, LFV_CQ_READ_HOOKED },
		{ true, FI_WAIT_UNSPEC, LFV_CQ_READ_HOOKED },
	};

	(void)state;
	assert_int_equal(l->read_mode, LFV_CQ_READ_PLAIN);
	assert_int_equal(lfv_cq_attach_hw(l, &hw), 0);
	assert_int_equal(l->read_mode, LFV_CQ_READ_DIRECT);
	lfv_cq_set_progress(l, hook);
	assert_int_equal(l->read_mode, LFV_CQ_READ_COMMON);
	lfv_cq_set_progress(l, (struct lfv_progress_hook){ 0 });
	lfv_cq_detach_hw(l);
	assert_int_equal(l->read_mode, LFV_CQ_READ_PLAIN);
	cq_close(cq);

	/* FI_SOURCE: the slots carry addresses to split off. */
	cq = cq_open_full(FI_CQ_FORMAT_TAGGED, FI_WAIT_NONE, 0, true,
			  FI_VERSION(1, 17));
	assert_int_equal(lfv_cq_from_fid(cq)->read_mode, LFV_CQ_READ_COMMON);
	cq_close(cq);

	for (k = 0; k < sizeof(polled) / sizeof(polled[0]); k++) {
		cq = cq_open_polled(&p, polled[k].serial, false,
				    polled[k].wait);
		assert_int_equal(p.cq->read_mode, polled[k].mode);
		cq_close(cq);
	}
}

#define T(fn) cmocka_unit_test_teardown(fn, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_bad_input),
		T(test_default_size_and_parent),
		T(test_formats),
		T(test_read_bad_input_and_count0),
		T(test_readfrom),
		T(test_errors),
		T(test_errors_v1_4),
		T(test_strerror),
		T(test_overflow_keeps_order),
		T(test_stress_many_producers),
		T(test_sread_timeout),
		T(test_sread_wakeup),
		T(test_signal),
		T(test_threshold),
		T(test_fd_trywait_poll_epoll),
		T(test_hw_arm_error_not_safe),
		T(test_trywait_progress_slice),
		T(test_mutex_cond_object),
		T(test_owner_role),
		T(test_owner_write_wakes_sread),
		T(test_peer_role),
		T(test_hw_source),
		T(test_spare_keeps_order),
		T(test_spare_errors_and_sources),
		T(test_error_read_still_progresses),
		T(test_no_spare_unless_serial_and_no_wait),
		T(test_write_lands_where_named),
		T(test_read_modes),
	};

	return cmocka_run_group_tests_name("cq", tests, NULL, NULL);
}
