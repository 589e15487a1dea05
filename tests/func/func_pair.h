/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Set-up shared by the functional tests: a fabric and domain on the test
 * device, and MSG endpoints connected on one domain (a client and a server
 * through a listener on the bed's address). The tests' checks stay in the
 * tests: these only open, connect and close, asserting each step. Include
 * after <cmocka.h>.
 */
#ifndef FUNC_PAIR_H
#define FUNC_PAIR_H

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include "func_common.h"
#include "../test_close.h"

#define FUNC_PAIR_TIMEOUT_MS 5000

/* fi_tx_size_left / fi_rx_size_left are deprecated, not gone: lfverbs
 * implements them, so they are tested. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline ssize_t func_tx_left(struct fid_ep *ep)
{
	return fi_tx_size_left(ep);
}

static inline ssize_t func_rx_left(struct fid_ep *ep)
{
	return fi_rx_size_left(ep);
}
#pragma GCC diagnostic pop

/* One side of a connectionless two-endpoint test bed: its endpoint with
 * a CQ and an AV, the other side's address in that AV, its own name and
 * its registered buffers. The first fields of each such test's struct
 * side (its buffers come after them). */
#define FUNC_UD_SIDE_FIELDS						\
	struct fid_ep *ep;						\
	struct fid_cq *cq;						\
	struct fid_av *av;						\
	struct fid_mr *mr;						\
	fi_addr_t peer;							\
	uint8_t name[64];						\
	size_t namelen

/* *ep on info with a CQ of cq_attr for both directions and a table AV,
 * both bound; not enabled yet. */
static inline void func_ud_ep_open(struct fid_domain *domain,
				   struct fi_info *info,
				   struct fi_cq_attr *cq_attr,
				   struct fid_ep **ep, struct fid_cq **cq,
				   struct fid_av **av)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	assert_int_equal(fi_endpoint(domain, info, ep, NULL), 0);
	assert_int_equal(fi_cq_open(domain, cq_attr, cq, NULL), 0);
	assert_int_equal(fi_av_open(domain, &av_attr, av, NULL), 0);
	assert_int_equal(fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV),
			 0);
	assert_int_equal(fi_ep_bind(*ep, &(*av)->fid, 0), 0);
}

/* ep enabled, its name in name (size bytes; *namelen: its length), and
 * buf registered for sends and receives as *mr. */
static inline void func_ep_start(struct fid_domain *domain, struct fid_ep *ep,
				 void *name, size_t size, size_t *namelen,
				 void *buf, size_t len, struct fid_mr **mr)
{
	assert_int_equal(fi_enable(ep), 0);
	*namelen = size;
	assert_int_equal(fi_getname(&ep->fid, name, namelen), 0);
	assert_int_equal(fi_mr_reg(domain, buf, len, FI_SEND | FI_RECV, 0, 0,
				   0, mr, NULL), 0);
}

/* A connectionless bed's two sides b->s[0..1] opened by side_open(b,
 * side); each side knows only the other, as two processes would. */
#define FUNC_OPEN_SIDES(b, side_open)					\
	do {								\
		int side_;						\
									\
		for (side_ = 0; side_ < 2; side_++)			\
			side_open((b), &(b)->s[side_]);			\
		for (side_ = 0; side_ < 2; side_++)			\
			assert_int_equal(fi_av_insert((b)->s[side_].av,	\
					 (b)->s[1 - side_].name, 1,	\
					 &(b)->s[side_].peer, 0, NULL),	\
					 1);				\
	} while (0)

/* An info with its fabric and domain open (func_domain_open); a test's
 * state that begins with one closes with func_domain_teardown. */
struct func_domain {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

/* What every MSG pair of one domain shares: the info it was opened on,
 * fabric, domain, one event queue for all connection events and the
 * listener the clients connect to. */
struct func_listener {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	char addr[128];
};

/* *info for hints (which it frees) at node and service, with *fabric and
 * *domain opened on it. */
static inline void func_open_at(const char *node, const char *service,
				uint64_t flags, struct fi_info *hints,
				struct fi_info **info,
				struct fid_fabric **fabric,
				struct fid_domain **domain)
{
	assert_int_equal(fi_getinfo(FUNC_VERSION, node, service, flags, hints,
				    info), 0);
	fi_freeinfo(hints);
	assert_int_equal(fi_fabric((*info)->fabric_attr, fabric, NULL), 0);
	assert_int_equal(fi_domain(*fabric, *info, domain, NULL), 0);
}

/* The same for the first device that fits hints, any address. */
static inline void func_domain_open(struct fi_info *hints,
				    struct fi_info **info,
				    struct fid_fabric **fabric,
				    struct fid_domain **domain)
{
	func_open_at(NULL, NULL, 0, hints, info, fabric, domain);
}

static inline void func_domain_close(struct fi_info *info,
				     struct fid_fabric *fabric,
				     struct fid_domain *domain)
{
	test_close(domain, fabric);
	fi_freeinfo(info);
}

/* A cmocka teardown for a state allocated with malloc whose first member
 * is a struct func_domain. */
static inline int func_domain_teardown(void **state)
{
	struct func_domain *d = *state;

	func_domain_close(d->info, d->fabric, d->domain);
	free(d);
	return 0;
}

/* A cmocka test whose state setup opens (a struct func_domain first). */
#define FUNC_DOMAIN_TEST(fn, setup) \
	cmocka_unit_test_setup_teardown(fn, setup, func_domain_teardown)

/* Opens all of *l from hints (which it frees) on the bed's address, any
 * port (FI_SOURCE), and listens. */
static inline void func_listener_open(struct func_listener *l,
				      struct fi_info *hints)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	size_t len = sizeof(l->addr);

	memset(l, 0, sizeof(*l));
	func_open_at(func_ip(), "0", FI_SOURCE, hints, &l->info, &l->fabric,
		     &l->domain);
	assert_int_equal(fi_eq_open(l->fabric, &eq_attr, &l->eq, NULL), 0);
	assert_int_equal(fi_passive_ep(l->fabric, l->info, &l->pep, NULL), 0);
	assert_int_equal(fi_pep_bind(l->pep, &l->eq->fid, 0), 0);
	assert_int_equal(fi_listen(l->pep), 0);
	assert_int_equal(fi_getname(&l->pep->fid, l->addr, &len), 0);
}

static inline void func_listener_close(struct func_listener *l)
{
	test_close(l->pep, l->eq);
	func_domain_close(l->info, l->fabric, l->domain);
}

static inline void func_expect_cm(struct fid_eq *eq, uint32_t want)
{
	struct fi_eq_cm_entry entry;

	assert_int_equal(func_cm_event(eq, &entry, FUNC_PAIR_TIMEOUT_MS),
			 (int)want);
}

/* An endpoint on info bound to the listener's event queue and to cq for
 * both directions; the caller binds more before it connects or accepts. */
static inline struct fid_ep *func_msg_ep(struct func_listener *l,
					 struct fi_info *info,
					 struct fid_cq *cq)
{
	struct fid_ep *ep;

	assert_int_equal(fi_endpoint(l->domain, info, &ep, NULL), 0);
	assert_int_equal(fi_ep_bind(ep, &l->eq->fid, 0), 0);
	assert_int_equal(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
	return ep;
}

/* cli connects to the listener; returns the server's endpoint for the
 * request, bound to scq and not yet accepted (func_msg_accept). */
static inline struct fid_ep *func_msg_connect(struct func_listener *l,
					      struct fid_ep *cli,
					      struct fid_cq *scq)
{
	struct fi_eq_cm_entry entry;
	struct fid_ep *srv;

	assert_int_equal(fi_connect(cli, l->addr, NULL, 0), 0);
	assert_int_equal(func_cm_event(l->eq, &entry, FUNC_PAIR_TIMEOUT_MS),
			 FI_CONNREQ);
	srv = func_msg_ep(l, entry.info, scq);
	fi_freeinfo(entry.info);
	return srv;
}

static inline void func_msg_accept(struct func_listener *l,
				   struct fid_ep *srv)
{
	assert_int_equal(fi_accept(srv, NULL, 0), 0);
	/* Both sides report FI_CONNECTED, in either order. */
	func_expect_cm(l->eq, FI_CONNECTED);
	func_expect_cm(l->eq, FI_CONNECTED);
}

#endif /* FUNC_PAIR_H */
