/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fabric, domain and MR objects over fake verbs: lifecycles, close order,
 * bad input, verbs failures, and no leaked verbs objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fake_verbs.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_device.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "lfv_mr.h"
#include "lfv_stubs.h"
#include "../test_close.h"
#include "unit_fake.h"

struct objs {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
};

static int setup(void **state)
{
	struct objs *o = calloc(1, sizeof(*o));

	unit_fake_device();
	unit_fabric_open(NULL, &o->info, &o->fabric);
	assert_int_equal(fi_domain(o->fabric, o->info, &o->domain, NULL), 0);
	*state = o;
	return 0;
}

static int teardown(void **state)
{
	struct objs *o = *state;

	test_close(o->domain, o->fabric);
	fi_freeinfo(o->info);
	free(o);
	unit_fake_release();
	return 0;
}

static void test_fabric_bad_input(void **state)
{
	struct objs *o = *state;
	struct fi_fabric_attr attr = *o->info->fabric_attr;
	struct fid_fabric *fabric;

	assert_int_equal(lfv_fabric_open(NULL, &fabric, NULL), -FI_EINVAL);
	assert_int_equal(lfv_fabric_open(&attr, NULL, NULL), -FI_EINVAL);
	attr.name = NULL;
	assert_int_equal(lfv_fabric_open(&attr, &fabric, NULL), -FI_EINVAL);
	attr.name = "192.0.2.0/24";
	assert_int_equal(lfv_fabric_open(&attr, &fabric, NULL), -FI_ENODATA);
	/* The DGRAM-only IB name of a device is a fabric too. */
	attr.name = "IB-0xfe80000000000000";
	assert_int_equal(lfv_fabric_open(&attr, &fabric, NULL), 0);
	assert_int_equal(fi_close(&fabric->fid), 0);
}

static void test_close_order(void **state)
{
	struct objs *o = *state;
	struct fid_mr *mr;
	char buf[64] = { 0 };

	assert_int_equal(fi_close(&o->fabric->fid), -FI_EBUSY);
	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), FI_SEND, 0, 0,
				   0, &mr, NULL), 0);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	test_close(mr, o->domain);
	o->domain = NULL;
	assert_int_equal(fi_close(&o->fabric->fid), 0);
	o->fabric = NULL;
}

static void test_domain_bad_input(void **state)
{
	struct objs *o = *state;
	struct fid_domain *domain;
	struct fi_info *info;

	assert_int_equal(fi_domain(o->fabric, NULL, &domain, NULL), -FI_EINVAL);
	assert_int_equal(fi_domain(o->fabric, o->info, NULL, NULL), -FI_EINVAL);
	assert_int_equal(fi_domain2(o->fabric, o->info, &domain, 1ULL << 40,
				    NULL), -FI_EBADFLAGS);

	info = fi_dupinfo(o->info);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("nosuch0");
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup("fake0");
	info->tx_attr->size = 1 << 20; /* beyond max_qp_wr */
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	info->tx_attr->size = 16;
	info->ep_attr->type = FI_EP_RDM;
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	info->ep_attr->type = FI_EP_MSG;
	info->caps |= FI_TAGGED;
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), -FI_EINVAL);
	fi_freeinfo(info);
	assert_int_equal(fake_open.ctx, 1); /* only the fixture's domain */
}

static void test_domain_verbs_failures(void **state)
{
	struct objs *o = *state;
	struct fid_domain *domain;

	fake_verbs_fail(FAKE_OPEN_DEVICE, ENODEV);
	assert_int_equal(fi_domain(o->fabric, o->info, &domain, NULL), -ENODEV);
	fake_verbs_fail(FAKE_ALLOC_PD, ENOMEM);
	assert_int_equal(fi_domain(o->fabric, o->info, &domain, NULL), -FI_ENOMEM);
	assert_int_equal(fake_open.ctx, 1);
	assert_int_equal(fake_open.pd, 1);

	/* A failing dealloc keeps the domain open; a retry closes it. */
	assert_int_equal(fi_domain(o->fabric, o->info, &domain, NULL), 0);
	fake_verbs_fail(FAKE_DEALLOC_PD, EBUSY);
	assert_int_equal(fi_close(&domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&domain->fid), 0);
}

static void test_domain_unimplemented_ops(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr av_attr = { 0 };
	struct fi_rx_attr attr_big = { 0 };
	struct fid_av *av;
	struct fid_ep *ep;

	assert_int_equal(fi_av_open(o->domain, &av_attr, &av, NULL), -FI_ENOSYS);
	/* An MSG endpoint opens (an rdma_cm id) and closes. */
	assert_int_equal(fi_endpoint(o->domain, o->info, &ep, NULL), 0);
	assert_int_equal(fake_open.cm_id, 1);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->fid), 0);
	assert_int_equal(fake_open.cm_id, 0);
	assert_int_equal(fi_endpoint(o->domain, NULL, &ep, NULL), -FI_EINVAL);
	/* A shared receive context is an SRQ; the domain waits for it. */
	assert_int_equal(fi_srx_context(o->domain, o->info->rx_attr, &ep, NULL),
			 0);
	assert_int_equal(fake_open.srq, 1);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&ep->fid), 0);
	assert_int_equal(fake_open.srq, 0);
	attr_big.size = (1 << 14) + 1;
	assert_int_equal(fi_srx_context(o->domain, &attr_big, &ep, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_srx_context(o->domain, NULL, NULL, NULL),
			 -FI_EINVAL);
	assert_int_equal(fi_domain_bind(o->domain, &o->fabric->fid, 0),
			 -FI_ENOSYS);
}

static void test_domain_cq(void **state)
{
	struct objs *o = *state;
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_MSG,
				   .wait_obj = FI_WAIT_FD };
	struct fi_cq_err_entry err = { 0 };
	struct fid *fids[1];
	struct fid_cq *cq;
	char text[64];

	assert_int_equal(fi_cq_open(o->domain, &attr, &cq, NULL), 0);
	/* The domain stays open while its CQ is. */
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	fids[0] = &cq->fid;
	assert_int_equal(fi_trywait(o->fabric, fids, 1), 0);
	/* prov_errno of a verbs completion is its ibv_wc_status. */
	err.prov_errno = IBV_WC_RETRY_EXC_ERR;
	assert_string_equal(fi_cq_strerror(cq, err.prov_errno, NULL, text,
					   sizeof(text)),
			    ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	assert_string_equal(fi_cq_strerror(cq, -FI_ENOMEM, NULL, NULL, 0),
			    fi_strerror(FI_ENOMEM));
	assert_int_equal(fi_close(&cq->fid), 0);
	attr.format = (enum fi_cq_format)99;
	assert_int_equal(fi_cq_open(o->domain, &attr, &cq, NULL), -FI_EINVAL);
}

static void test_domain_cntr(void **state)
{
	struct objs *o = *state;
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .wait_obj = FI_WAIT_FD };
	struct fid *fids[1];
	struct fid_cntr *cntr;

	assert_int_equal(fi_cntr_open(o->domain, &attr, &cntr, NULL), 0);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	fids[0] = &cntr->fid;
	assert_int_equal(fi_trywait(o->fabric, fids, 1), 0);
	assert_int_equal(fi_cntr_add(cntr, 3), 0);
	assert_int_equal(fi_trywait(o->fabric, fids, 1), -FI_EAGAIN);
	assert_int_equal(fi_cntr_read(cntr), 3);
	assert_int_equal(fi_cntr_wait(cntr, 3, 0), 0);
	assert_int_equal(fi_close(&cntr->fid), 0);
	attr.flags = 1;
	assert_int_equal(fi_cntr_open(o->domain, &attr, &cntr, NULL),
			 -FI_EINVAL);
}

static void test_mr_reg(void **state)
{
	struct objs *o = *state;
	struct fid_mr *mr;
	char buf[128] = { 0 };

	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf),
				   FI_SEND | FI_RECV, 0, 42, 0, &mr, buf), 0);
	assert_ptr_equal(mr->fid.context, buf);
	assert_non_null(fi_mr_desc(mr));
	/* The key is the verbs rkey; requested_key is ignored (PROV_KEY). */
	assert_int_equal(fi_mr_key(mr),
			 ((struct lfv_mr *)fi_mr_desc(mr))->ibv_mr->rkey);
	assert_int_equal(fake_last_mr_access, IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(fi_close(&mr->fid), 0);

	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf),
				   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0,
				   &mr, NULL), 0);
	assert_int_equal(fake_last_mr_access,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	assert_int_equal(fi_close(&mr->fid), 0);
}

static void test_mr_regv_regattr(void **state)
{
	struct objs *o = *state;
	char a[64] = { 0 }, b[64] = { 0 };
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct fi_mr_attr attr = {
		.mr_iov = iov, .iov_count = 1, .access = FI_READ,
		.context = a, .iface = FI_HMEM_SYSTEM,
	};
	struct fid_mr *mr;

	assert_int_equal(fi_mr_regv(o->domain, iov, 1, FI_WRITE, 0, 0, 0, &mr,
				    NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);
	assert_int_equal(fi_mr_regv(o->domain, iov, 2, FI_WRITE, 0, 0, 0, &mr,
				    NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_regv(o->domain, iov, 0, FI_WRITE, 0, 0, 0, &mr,
				    NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_regattr(o->domain, &attr, 0, &mr), 0);
	assert_ptr_equal(mr->fid.context, a);
	assert_int_equal(fi_close(&mr->fid), 0);
	attr.iface = FI_HMEM_CUDA;
	assert_int_equal(fi_mr_regattr(o->domain, &attr, 0, &mr), -FI_EINVAL);
	attr.iface = FI_HMEM_SYSTEM;
	attr.auth_key_size = 4;
	assert_int_equal(fi_mr_regattr(o->domain, &attr, 0, &mr), -FI_EINVAL);
	attr.auth_key_size = 0;
	assert_int_equal(fi_mr_regattr(o->domain, NULL, 0, &mr), -FI_EINVAL);
	assert_int_equal(fi_mr_regattr(o->domain, &attr, 0, NULL), -FI_EINVAL);
}

static void test_mr_bad_input(void **state)
{
	struct objs *o = *state;
	struct fid_mr *mr;
	char buf[64] = { 0 };

	assert_int_equal(fi_mr_reg(o->domain, NULL, 64, FI_SEND, 0, 0, 0, &mr,
				   NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), 1ULL << 62, 0,
				   0, 0, &mr, NULL), -FI_EINVAL);
	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), FI_SEND, 0, 0,
				   FI_RMA_EVENT, &mr, NULL), -FI_EBADFLAGS);
	/* Registration through a fid that is not a domain. */
	assert_int_equal(o->domain->mr->reg(&o->fabric->fid, buf, sizeof(buf),
					    FI_SEND, 0, 0, 0, &mr, NULL),
			 -FI_EINVAL);
	assert_int_equal(fake_open.mr, 0);
}

static void test_mr_verbs_failures(void **state)
{
	struct objs *o = *state;
	struct fid_mr *mr;
	char buf[64] = { 0 };

	fake_verbs_fail(FAKE_REG_MR, EFAULT);
	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), FI_SEND, 0, 0,
				   0, &mr, NULL), -FI_EFAULT);
	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), FI_SEND, 0, 0,
				   0, &mr, NULL), 0);
	fake_verbs_fail(FAKE_DEREG_MR, EBUSY);
	assert_int_equal(fi_close(&mr->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&mr->fid), 0);
}

static void test_mr_unimplemented_ops(void **state)
{
	struct objs *o = *state;
	struct fid_mr *mr;
	char buf[64] = { 0 };

	assert_int_equal(fi_mr_reg(o->domain, buf, sizeof(buf), FI_SEND, 0, 0,
				   0, &mr, NULL), 0);
	assert_int_equal(fi_mr_bind(mr, &o->domain->fid, 0), -FI_ENOSYS);
	assert_int_equal(fi_mr_refresh(mr, NULL, 0, 0), -FI_ENOSYS);
	assert_int_equal(fi_close(&mr->fid), 0);
}

static void test_eq_through_fabric(void **state)
{
	struct objs *o = *state;
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_FD };
	struct fid_eq *eq;
	struct fid *fids[1];
	uint32_t event;
	char data[8] = "abc";

	assert_int_equal(fi_eq_open(o->fabric, &attr, &eq, NULL), 0);
	assert_int_equal(fi_close(&o->fabric->fid), -FI_EBUSY);
	fids[0] = &eq->fid;
	assert_int_equal(fi_trywait(o->fabric, fids, 1), 0);
	assert_int_equal(fi_eq_write(eq, FI_NOTIFY, data, sizeof(data), 0),
			 sizeof(data));
	assert_int_equal(fi_trywait(o->fabric, fids, 1), -FI_EAGAIN);
	assert_int_equal(fi_eq_read(eq, &event, data, sizeof(data), 0),
			 sizeof(data));
	assert_int_equal(fi_trywait(o->fabric, fids, 1), 0);
	/* trywait rejects objects that are not ours to wait on. */
	fids[0] = &o->domain->fid;
	assert_int_equal(fi_trywait(o->fabric, fids, 1), -FI_EINVAL);
	assert_int_equal(fi_trywait(o->fabric, NULL, 1), -FI_EINVAL);
	assert_int_equal(fi_close(&eq->fid), 0);

	attr.wait_obj = FI_WAIT_SET;	/* without its wait set */
	assert_int_equal(fi_eq_open(o->fabric, &attr, &eq, NULL), -FI_EINVAL);
	assert_int_equal(fi_wait_open(o->fabric, NULL, NULL), -FI_EINVAL);
	assert_int_equal(fi_passive_ep(o->fabric, o->info, NULL, NULL),
			 -FI_EINVAL);
}

/* The endpoint stub sets (lfv_stubs_ep.c) fill every slot, the slots
 * that share a signature with one stub: each answers -FI_ENOSYS. */
static void test_endpoint_stub_sets(void **state)
{
	struct fid_ep ep = { .rma = &lfv_no_rma_ops,
			     .tagged = &lfv_no_tagged_ops,
			     .atomic = &lfv_no_atomic_ops,
			     .collective = &lfv_no_collective_ops };
	struct iovec iov = { 0 };
	struct fi_msg_rma rmsg = { 0 };
	struct fi_msg_tagged tmsg = { 0 };
	char buf[8], res[8];
	size_t count;

	(void)state;
	assert_int_equal(fi_readv(&ep, &iov, NULL, 1, 0, 0, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_writev(&ep, &iov, NULL, 1, 0, 0, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_readmsg(&ep, &rmsg, 0), -FI_ENOSYS);
	assert_int_equal(fi_writemsg(&ep, &rmsg, 0), -FI_ENOSYS);
	assert_int_equal(fi_trecvmsg(&ep, &tmsg, 0), -FI_ENOSYS);
	assert_int_equal(fi_tsendmsg(&ep, &tmsg, 0), -FI_ENOSYS);
	assert_int_equal(fi_atomicvalid(&ep, FI_UINT64, FI_SUM, &count),
			 -FI_ENOSYS);
	assert_int_equal(fi_fetch_atomicvalid(&ep, FI_UINT64, FI_SUM, &count),
			 -FI_ENOSYS);
	assert_int_equal(fi_compare_atomicvalid(&ep, FI_UINT64, FI_CSWAP,
						&count), -FI_ENOSYS);
	assert_int_equal(fi_alltoall(&ep, buf, 1, NULL, res, NULL, 0,
				     FI_UINT64, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_allgather(&ep, buf, 1, NULL, res, NULL, 0,
				      FI_UINT64, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_allreduce(&ep, buf, 1, NULL, res, NULL, 0,
				      FI_UINT64, FI_SUM, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_reduce_scatter(&ep, buf, 1, NULL, res, NULL, 0,
					   FI_UINT64, FI_SUM, 0, NULL),
			 -FI_ENOSYS);
	assert_int_equal(fi_scatter(&ep, buf, 1, NULL, res, NULL, 0, 0,
				    FI_UINT64, 0, NULL), -FI_ENOSYS);
	assert_int_equal(fi_gather(&ep, buf, 1, NULL, res, NULL, 0, 0,
				   FI_UINT64, 0, NULL), -FI_ENOSYS);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_fabric_bad_input),
		T(test_close_order),
		T(test_domain_bad_input),
		T(test_domain_verbs_failures),
		T(test_domain_unimplemented_ops),
		T(test_domain_cq),
		T(test_domain_cntr),
		T(test_mr_reg),
		T(test_mr_regv_regattr),
		T(test_mr_bad_input),
		T(test_mr_verbs_failures),
		T(test_mr_unimplemented_ops),
		T(test_eq_through_fabric),
		cmocka_unit_test(test_endpoint_stub_sets),
	};

	return cmocka_run_group_tests_name("objects", tests, NULL, NULL);
}
