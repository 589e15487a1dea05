/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fi_getinfo, fabric, domain, MR and EQ through the real libfabric core on a
 * real verbs device (soft-RoCE), including bad input and close order. */
#include <arpa/inet.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>
#include <infiniband/verbs.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "func_common.h"
#include "func_pair.h"
#include "lfv_fi_compat.h"	/* FI_MR_SCALABLE, which 2.x deprecates */

static int open_objs(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_MSG);
	struct func_domain *o = calloc(1, sizeof(*o));

	func_domain_open(hints, &o->info, &o->fabric, &o->domain);
	*state = o;
	return 0;
}

/* The device's own limits, read with ibverbs directly. */
static void query_device(struct ibv_device_attr *attr,
			 struct ibv_port_attr *port)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	assert_non_null(list);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), func_dev()))
			ctx = ibv_open_device(list[i]);
	assert_non_null(ctx);
	assert_int_equal(ibv_query_device(ctx, attr), 0);
	assert_int_equal(ibv_query_port(ctx, 1, port), 0);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static void test_getinfo_device_limits(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_UNSPEC), *info = NULL, *cur;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	int msg = 0, dgram = 0, rdm = 0;

	(void)state;
	query_device(&attr, &port);
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info), 0);
	for (cur = info; cur; cur = cur->next) {
		assert_string_equal(cur->fabric_attr->prov_name, "lfverbs");
		assert_string_equal(cur->domain_attr->name, func_dev());
		assert_int_equal(cur->tx_attr->size,
				 min_size(384, (size_t)attr.max_qp_wr));
		assert_int_equal(cur->rx_attr->iov_limit,
				 min_size(4, (size_t)attr.max_sge));
		assert_int_equal(cur->domain_attr->cq_cnt, attr.max_cq);
		assert_int_equal(cur->domain_attr->mr_cnt, attr.max_mr);
		/* RDM copies or registers what it is given. */
		assert_int_equal(cur->domain_attr->mr_mode,
				 cur->ep_attr->type == FI_EP_RDM ?
				 (FUNC_MR_MODE & ~FI_MR_LOCAL) : FUNC_MR_MODE);
		assert_true(cur->tx_attr->inject_size > 0); /* rxe has inline */
		if (cur->ep_attr->type == FI_EP_MSG) {
			msg++;
			assert_int_equal(cur->ep_attr->max_msg_size,
					 port.max_msg_sz);
			assert_int_equal(cur->addr_format, FI_SOCKADDR_IN);
		} else if (cur->ep_attr->type == FI_EP_RDM) {
			rdm++;
			assert_int_equal(cur->addr_format, FI_ADDR_IB_UD);
			/* Rendezvous: well beyond one RDMA message. */
			assert_true(cur->ep_attr->max_msg_size >
				    port.max_msg_sz);
		} else {
			dgram++;
			assert_int_equal(cur->ep_attr->type, FI_EP_DGRAM);
			assert_int_equal(cur->addr_format, FI_ADDR_IB_UD);
			assert_int_equal(cur->ep_attr->max_msg_size,
					 (size_t)128 << port.active_mtu);
		}
	}
	assert_int_equal(msg, 1);
	assert_int_equal(dgram, 1);
	assert_int_equal(rdm, 1);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

/* An answer's address for the bed's address and service 7471. */
static void assert_bed_port_7471(const struct sockaddr_in *sin)
{
	assert_non_null(sin);
	assert_int_equal(sin->sin_addr.s_addr, inet_addr(func_ip()));
	assert_int_equal(ntohs(sin->sin_port), 7471);
}

static void test_getinfo_source(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_MSG), *info = NULL;

	(void)state;
	assert_int_equal(fi_getinfo(FUNC_VERSION, func_ip(), "7471", FI_SOURCE,
				    hints, &info), 0);
	assert_bed_port_7471(info->src_addr);
	assert_null(info->dest_addr);
	assert_null(info->next);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_getinfo_destination(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_MSG), *info = NULL;

	(void)state;
	/* rdma_cm resolves the route: the device is the one serving it. */
	assert_int_equal(fi_getinfo(FUNC_VERSION, func_ip(), "7471", 0, hints,
				    &info), 0);
	assert_bed_port_7471(info->dest_addr);
	assert_string_equal(info->domain_attr->name, func_dev());
	fi_freeinfo(info);
	fi_freeinfo(hints);
}

static void test_getinfo_no_data(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_MSG), *info = NULL;

	(void)state;
	/* Not reachable over RDMA from here. */
	assert_int_equal(fi_getinfo(FUNC_VERSION, "192.0.2.1", "7471", 0,
				    hints, &info), -FI_ENODATA);
	assert_int_equal(fi_getinfo(FUNC_VERSION, "192.0.2.1", "7471",
				    FI_SOURCE, hints, &info), -FI_ENODATA);
	/* 1.x's FI_EP_SOCK_STREAM (2.x defines the name as FI_EP_UNSPEC). */
	hints->ep_attr->type = (enum fi_ep_type)4;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_TAGGED;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	hints->caps = 0;
	hints->domain_attr->mr_mode = LFV_MR_SCALABLE;
	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info),
			 -FI_ENODATA);
	fi_freeinfo(hints);
}

static void test_close_order(void **state)
{
	struct func_domain *o = *state;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_eq *eq;
	struct fid_mr *mr;
	char *buf = calloc(1, 4096);

	assert_int_equal(fi_mr_reg(o->domain, buf, 4096,
				   FI_SEND | FI_RECV | FI_REMOTE_WRITE, 0, 0, 0,
				   &mr, NULL), 0);
	assert_int_equal(fi_eq_open(o->fabric, &eq_attr, &eq, NULL), 0);
	assert_int_equal(fi_close(&o->fabric->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	test_close(mr, o->domain);
	o->domain = NULL;
	assert_int_equal(fi_close(&o->fabric->fid), -FI_EBUSY); /* the EQ */
	test_close(eq, o->fabric);
	o->fabric = NULL;
	free(buf);
}

static void test_mr_real_registration(void **state)
{
	struct func_domain *o = *state;
	struct fid_mr *mr1, *mr2;
	size_t len = 1 << 20;
	char *buf = calloc(1, len);

	assert_int_equal(fi_mr_reg(o->domain, buf, len,
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   &mr1, buf), 0);
	assert_int_equal(fi_mr_reg(o->domain, buf, 64, FI_SEND, 0, 0, 0, &mr2,
				   NULL), 0);
	assert_non_null(fi_mr_desc(mr1));
	assert_ptr_not_equal(fi_mr_desc(mr1), fi_mr_desc(mr2));
	assert_int_not_equal(fi_mr_key(mr1), fi_mr_key(mr2));
	assert_ptr_equal(mr1->fid.context, buf);
	test_close(mr2, mr1);
	free(buf);
}

static void test_mr_bad_input(void **state)
{
	struct func_domain *o = *state;
	char buf[64] = { 0 };
	struct iovec iov[2] = { { buf, 32 }, { buf + 32, 32 } };
	struct fid_mr *mr;

	assert_int_equal(fi_mr_reg(o->domain, NULL, 64, FI_SEND, 0, 0, 0, &mr,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(o->domain, buf, 64, 1ULL << 61, 0, 0, 0,
				   &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(o->domain, buf, 64, FI_SEND, 0, 0,
				   FI_RMA_EVENT, &mr, NULL), -FI_EBADFLAGS);
	assert_int_equal(fi_mr_regv(o->domain, iov, 2, FI_SEND, 0, 0, 0, &mr,
				    NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_regattr(o->domain, NULL, 0, &mr), -FI_EINVAL);
	/* Memory that is not mapped: verbs refuses, we report it. */
	assert_true(fi_mr_reg(o->domain, (void *)(uintptr_t)0x1000, 4096,
			      FI_SEND, 0, 0, 0, &mr, NULL) < 0);
}

static void test_domain_bad_input(void **state)
{
	struct func_domain *o = *state;
	struct fid_domain *domain;
	struct fi_info *info = fi_dupinfo(o->info);

	assert_int_equal(fi_domain(o->fabric, NULL, &domain, NULL), -FI_EINVAL);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("nosuch0");
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup(func_dev());
	info->rx_attr->size = (size_t)1 << 40;
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	fi_freeinfo(info);
}

static void test_two_domains(void **state)
{
	struct func_domain *o = *state;
	struct fid_domain *second;
	struct fid_mr *mr;
	char buf[64] = { 0 };

	assert_int_equal(fi_domain(o->fabric, o->info, &second, NULL), 0);
	assert_int_equal(fi_mr_reg(second, buf, sizeof(buf), FI_RECV, 0, 0, 0,
				   &mr, NULL), 0);
	assert_int_equal(fi_close(&second->fid), -FI_EBUSY);
	test_close(mr, second);
}

static void test_fabric_bad_input(void **state)
{
	struct func_domain *o = *state;
	struct fi_fabric_attr attr = *o->info->fabric_attr;
	struct fid_fabric *fabric;

	attr.name = "192.0.2.0/24";
	assert_true(fi_fabric(&attr, &fabric, NULL) < 0);
	assert_true(fi_fabric(NULL, &fabric, NULL) < 0);
}

/* fid's wait fd (FI_GETWAIT), nothing pending: fi_trywait says the
 * caller may block on it, and it is not readable. */
static int fd_may_block(struct func_domain *o, struct fid *fid)
{
	struct pollfd pfd = { .events = POLLIN };

	assert_int_equal(fi_control(fid, FI_GETWAIT, &pfd.fd), 0);
	assert_int_equal(fi_trywait(o->fabric, &fid, 1), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	return pfd.fd;
}

static void test_eq_sread_and_fd(void **state)
{
	struct func_domain *o = *state;
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD, .flags = FI_WRITE };
	struct fi_eq_entry entry = { .data = 99 };
	struct pollfd pfd = { .events = POLLIN };
	struct fid *fids[1];
	struct fid_eq *eq;
	uint32_t event;

	assert_int_equal(fi_eq_open(o->fabric, &attr, &eq, NULL), 0);
	pfd.fd = fd_may_block(o, &eq->fid);
	fids[0] = &eq->fid;
	assert_int_equal(fi_eq_sread(eq, &event, &entry, sizeof(entry), 20, 0),
			 -FI_EAGAIN);
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_int_equal(fi_trywait(o->fabric, fids, 1), -FI_EAGAIN);
	memset(&entry, 0, sizeof(entry));
	assert_int_equal(fi_eq_sread(eq, &event, &entry, sizeof(entry), -1, 0),
			 sizeof(entry));
	assert_int_equal(event, FI_NOTIFY);
	assert_int_equal(entry.data, 99);
	assert_int_equal(fi_close(&eq->fid), 0);
}

static void test_cq_through_core(void **state)
{
	struct func_domain *o = *state;
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_DATA,
				   .wait_obj = FI_WAIT_FD };
	struct fi_cq_data_entry d;
	struct fid_cq *cq;

	assert_int_equal(fi_cq_open(o->domain, &attr, &cq, NULL), 0);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	assert_int_equal(fi_cq_read(cq, &d, 1), -FI_EAGAIN);
	assert_int_equal(fi_cq_read(cq, NULL, 0), 0);
	fd_may_block(o, &cq->fid);
	assert_int_equal(fi_cq_sread(cq, &d, 1, NULL, 20), -FI_EAGAIN);
	assert_int_equal(fi_cq_signal(cq), 0);
	assert_int_equal(fi_cq_sread(cq, &d, 1, NULL, -1), -FI_EAGAIN);
	assert_int_equal(fi_close(&cq->fid), 0);
}

/* FI_WAIT_SET without its wait set: no object. */
static void test_wait_set_missing(void **state)
{
	struct func_domain *o = *state;
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_SET,
				      .flags = FI_WRITE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
				      .wait_obj = FI_WAIT_SET };
	struct fid_eq *eq;
	struct fid_cq *cq;

	assert_int_equal(fi_eq_open(o->fabric, &eq_attr, &eq, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_cq_open(o->domain, &cq_attr, &cq, NULL),
			 -FI_EINVAL);
}

static void test_cntr_through_core(void **state)
{
	struct func_domain *o = *state;
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_MUTEX_COND };
	struct fid_cntr *cntr;

	assert_int_equal(fi_cntr_open(o->domain, &attr, &cntr, NULL), 0);
	assert_int_equal(fi_cntr_set(cntr, 5), 0);
	assert_int_equal(fi_cntr_adderr(cntr, 1), 0);
	assert_int_equal(fi_cntr_read(cntr), 5);
	assert_int_equal(fi_cntr_readerr(cntr), 1);
	assert_int_equal(fi_cntr_wait(cntr, 6, 20), -FI_ETIMEDOUT);
	assert_int_equal(fi_close(&cntr->fid), 0);
}

#define T(fn) FUNC_DOMAIN_TEST(fn, open_objs)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getinfo_device_limits),
		cmocka_unit_test(test_getinfo_source),
		cmocka_unit_test(test_getinfo_destination),
		cmocka_unit_test(test_getinfo_no_data),
		T(test_close_order),
		T(test_mr_real_registration),
		T(test_mr_bad_input),
		T(test_domain_bad_input),
		T(test_two_domains),
		T(test_fabric_bad_input),
		T(test_eq_sread_and_fd),
		T(test_cq_through_core),
		T(test_wait_set_missing),
		T(test_cntr_through_core),
	};

	func_require_device();
	return cmocka_run_group_tests_name("func_objects", tests, NULL, NULL);
}
