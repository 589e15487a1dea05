/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * libfabric set-up shared by bench_msg.c (FI_EP_MSG) and bench_rdm.c
 * (FI_EP_RDM): error exits, the common hints, the endpoint's bindings and
 * the registered region. Cold paths only; the data path stays in each
 * program. The including file defines BENCH_PROG (its name, for
 * messages) and includes <rdma/fabric.h> and friends first.
 */
#ifndef BENCH_FI_H
#define BENCH_FI_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

static void tp_fail(const char *what, ssize_t ret)
{
	fprintf(stderr, BENCH_PROG ": %s: %s (%zd)\n", what,
		fi_strerror((int)-ret), ret);
	exit(1);
}

static void tp_cq_error(struct fid_cq *cq)
{
	struct fi_cq_err_entry err = { 0 };

	if (fi_cq_readerr(cq, &err, 0) < 0)
		tp_fail("fi_cq_readerr", -FI_EOTHER);
	fprintf(stderr, BENCH_PROG ": completion error: %s (prov %d: %s)\n",
		fi_strerror(err.err), err.prov_errno,
		fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
	exit(1);
}

/* Hints both programs ask with: every operation has its own context (no
 * remote CQ data is used), registered buffers with their descriptors,
 * FI_THREAD_DOMAIN when thread_domain, the provider by its full name,
 * queues of txq sends and rxq receives. NULL when out of memory. */
static struct fi_info *tp_hints_common(const char *prov, enum fi_ep_type type,
				       uint64_t caps, bool thread_domain,
				       size_t txq, size_t rxq)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = type;
	h->caps = caps;
	h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->threading = thread_domain ? FI_THREAD_DOMAIN :
						    FI_THREAD_UNSPEC;
	h->fabric_attr->prov_name = strdup(prov);
	h->tx_attr->size = txq;
	h->rx_attr->size = rxq;
	return h;
}

/* The CQ the data path busy-polls (no wait object): size entries of
 * format. */
static void tp_cq_open(struct fid_domain *domain, enum fi_cq_format format,
		       size_t size, struct fid_cq **cq)
{
	struct fi_cq_attr attr = {
		.format = format,
		.size = size,
		.wait_obj = FI_WAIT_NONE,
	};
	int ret = fi_cq_open(domain, &attr, cq, NULL);

	if (ret)
		tp_fail("fi_cq_open", ret);
}

/* The endpoint: bound to obj (its EQ or AV; what names it in messages)
 * and to cq for sends and receives, then enabled. */
static void tp_ep_start(struct fid_domain *domain, struct fi_info *info,
			struct fid *obj, const char *what, struct fid_cq *cq,
			struct fid_ep **ep)
{
	int ret = fi_endpoint(domain, info, ep, NULL);

	if (ret)
		tp_fail("fi_endpoint", ret);
	ret = fi_ep_bind(*ep, obj, 0);
	if (ret)
		tp_fail(what, ret);
	ret = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		tp_fail("fi_ep_bind(cq)", ret);
	ret = fi_enable(*ep);
	if (ret)
		tp_fail("fi_enable", ret);
}

/* Registers the region for sends and receives; returns its descriptor
 * when the provider wants one (FI_MR_LOCAL), else NULL. */
static void *tp_reg(struct fid_domain *domain, const struct fi_info *info,
		    void *region, size_t len, struct fid_mr **mr)
{
	int ret = fi_mr_reg(domain, region, len, FI_SEND | FI_RECV, 0, 0, 0,
			    mr, NULL);

	if (ret)
		tp_fail("fi_mr_reg", ret);
	return (info->domain_attr->mr_mode & FI_MR_LOCAL) ? fi_mr_desc(*mr) :
							     NULL;
}

/* tp_close(a, b, ...): closes each object that is open (not NULL) in the
 * order given, children before what they were opened on; at exit, so
 * errors are not looked at. The objects (struct fid_ep *, ...) each begin
 * with their struct fid. */
static void tp_close_objs(void *const *objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (objs[i])
			fi_close((struct fid *)objs[i]);
}

#define tp_close(...)							\
	tp_close_objs((void *const[]){ __VA_ARGS__ },			\
		      sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

#endif /* BENCH_FI_H */
