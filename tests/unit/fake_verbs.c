/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "fake_verbs.h"

struct fake_counts fake_open;
unsigned int fake_last_mr_access;
struct ibv_ah_attr fake_last_ah_attr;
struct fake_verbs_hooks fake_verbs_hooks;

static struct fake_dev fake_devs[FAKE_MAX_DEVS];
static int fake_ndevs;
static int fake_fail_err[FAKE_CALL_MAX];

struct fake_ctx {
	struct verbs_context vctx;
	struct fake_dev *dev;
};

/* One-shot failure: returns true (and sets errno) if call should fail. */
static bool fake_should_fail(enum fake_call call)
{
	int err = fake_fail_err[call];

	if (!err)
		return false;
	fake_fail_err[call] = 0;
	errno = err;
	return true;
}

void fake_verbs_fail(enum fake_call call, int err)
{
	fake_fail_err[call] = err;
}

/* ibv_context is the last member of verbs_context ("grows up"). */
static struct fake_ctx *fake_ctx_of(struct ibv_context *ctx)
{
	return (struct fake_ctx *)((char *)ctx -
				   offsetof(struct fake_ctx, vctx.context));
}

static struct fake_dev *fake_dev_of(struct ibv_context *ctx)
{
	return fake_ctx_of(ctx)->dev;
}

static int fake_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr, size_t len)
{
	if (port != 1)
		return EINVAL;
	memcpy(attr, &fake_dev_of(ctx)->port, len < sizeof(*attr) ? len : sizeof(*attr));
	return 0;
}

static struct ibv_context *fake_ctx_new(struct fake_dev *dev)
{
	struct fake_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = fake_query_port;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.context.device = &dev->ibdev;
	c->dev = dev;
	return &c->vctx.context;
}

void fake_verbs_reset(void)
{
	int i;

	for (i = 0; i < fake_ndevs; i++)
		if (fake_devs[i].cm_ctx)
			free(fake_ctx_of(fake_devs[i].cm_ctx));
	memset(fake_devs, 0, sizeof(fake_devs));
	memset(fake_fail_err, 0, sizeof(fake_fail_err));
	memset(&fake_open, 0, sizeof(fake_open));
	memset(&fake_sidr, 0, sizeof(fake_sidr));
	fake_ndevs = 0;
}

struct fake_dev *fake_verbs_add(const char *name, const char *ip,
				unsigned prefix)
{
	struct fake_dev *dev = &fake_devs[fake_ndevs++];

	snprintf(dev->ibdev.name, sizeof(dev->ibdev.name), "%s", name);
	snprintf(dev->ibdev.ibdev_path, sizeof(dev->ibdev.ibdev_path),
		 "/nonexistent/%s", name);
	/* Limits of a soft-RoCE device. */
	dev->attr.phys_port_cnt = 1;
	dev->attr.max_qp = 1 << 16;
	dev->attr.max_qp_wr = 1 << 14;
	dev->attr.max_sge = 32;
	dev->attr.max_cq = 1 << 16;
	dev->attr.max_cqe = 32767;
	dev->attr.max_srq = 1 << 10;
	dev->attr.max_srq_wr = 1 << 14;
	dev->attr.max_srq_sge = 27;
	dev->attr.max_mr = 1 << 18;
	dev->attr.max_mr_size = ~0ULL;
	dev->attr.atomic_cap = IBV_ATOMIC_HCA;
	dev->port.state = IBV_PORT_ACTIVE;
	dev->port.active_mtu = IBV_MTU_1024;
	dev->port.max_msg_sz = 1U << 31;
	dev->port.link_layer = IBV_LINK_LAYER_ETHERNET;
	dev->gid.global.subnet_prefix = htobe64(0xfe80000000000000ULL);
	dev->gid.raw[15] = (uint8_t)fake_ndevs;
	dev->max_inline = 160;
	snprintf(dev->ip, sizeof(dev->ip), "%s", ip ? ip : "");
	dev->prefix = prefix;
	dev->cm_ctx = fake_ctx_new(dev);
	return dev;
}

/* What a verbs call that creates an object returns on error. */
static void *fake_refuse(int err)
{
	errno = err;
	return NULL;
}

/* A fake verbs object: zeroed, and counted open in *open (a field of
 * fake_open) until fake_obj_free, so that tests see what is left open. */
static void *fake_obj_new(size_t size, int *open)
{
	void *obj = calloc(1, size);

	if (obj)
		(*open)++;
	else
		errno = ENOMEM;
	return obj;
}

static int fake_obj_free(void *obj, int *open)
{
	free(obj);
	(*open)--;
	return 0;
}

/* obj = a new object of pd (a qp, srq or ah: its context and pd set),
 * counted in fake_open.kind; NULL (errno set) when out of memory. A
 * macro: the three verbs types share the fields, not a type. */
#define FAKE_PD_OBJ_NEW(obj, pd_, kind)					\
	do {								\
		(obj) = fake_obj_new(sizeof(*(obj)), &fake_open.kind);	\
		if (obj) {						\
			(obj)->context = (pd_)->context;		\
			(obj)->pd = (pd_);				\
		}							\
	} while (0)

/* A release the test can make fail (call): then the error number, and
 * the object stays open. */
static int fake_obj_release(enum fake_call call, void *obj, int *open)
{
	if (fake_should_fail(call))
		return errno;
	return fake_obj_free(obj, open);
}

/* __wrap_ibv_destroy_cq, _qp and _srq: the test's hook (kind_gone) sees
 * the object before it goes. */
#define FAKE_DESTROY_HOOKED(kind)					\
	int __wrap_ibv_destroy_##kind(struct ibv_##kind *obj)		\
	{								\
		if (fake_verbs_hooks.kind##_gone)			\
			fake_verbs_hooks.kind##_gone(obj);		\
		return fake_obj_free(obj, &fake_open.kind);		\
	}

/* ---- ibverbs ------------------------------------------------------------ */

/* A NULL-terminated list of one pointer (elem bytes) per fake device,
 * their count in *num; NULL (errno set) when call is made to fail. */
static void *fake_dev_list_new(enum fake_call call, size_t elem, int *num)
{
	void *list;

	if (fake_should_fail(call))
		return NULL;
	list = calloc((size_t)fake_ndevs + 1, elem);
	if (!list)
		return fake_refuse(ENOMEM);
	if (num)
		*num = fake_ndevs;
	return list;
}

struct ibv_device **__wrap_ibv_get_device_list(int *num)
{
	struct ibv_device **list = fake_dev_list_new(FAKE_GET_DEVICE_LIST,
						     sizeof(*list), num);
	int i;

	for (i = 0; list && i < fake_ndevs; i++)
		list[i] = &fake_devs[i].ibdev;
	return list;
}

void __wrap_ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *__wrap_ibv_get_device_name(struct ibv_device *dev)
{
	return dev->name;
}

struct ibv_context *__wrap_ibv_open_device(struct ibv_device *ibdev)
{
	struct ibv_context *ctx;

	if (fake_should_fail(FAKE_OPEN_DEVICE))
		return NULL;
	ctx = fake_ctx_new((struct fake_dev *)ibdev);
	if (ctx)
		fake_open.ctx++;
	return ctx;
}

int __wrap_ibv_close_device(struct ibv_context *ctx)
{
	free(fake_ctx_of(ctx));
	fake_open.ctx--;
	return 0;
}

int __wrap_ibv_query_device(struct ibv_context *ctx,
			    struct ibv_device_attr *attr)
{
	if (fake_should_fail(FAKE_QUERY_DEVICE))
		return errno;
	*attr = fake_dev_of(ctx)->attr;
	return 0;
}

int __wrap_ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index,
			 union ibv_gid *gid)
{
	if (port != 1 || index != 0)
		return -1;
	*gid = fake_dev_of(ctx)->gid;
	return 0;
}

struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (fake_should_fail(FAKE_ALLOC_PD))
		return NULL;
	pd = fake_obj_new(sizeof(*pd), &fake_open.pd);
	if (pd)
		pd->context = ctx;
	return pd;
}

int __wrap_ibv_dealloc_pd(struct ibv_pd *pd)
{
	return fake_obj_release(FAKE_DEALLOC_PD, pd, &fake_open.pd);
}

struct ibv_cq *__wrap_ibv_create_cq(struct ibv_context *ctx, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct ibv_cq *cq = fake_obj_new(sizeof(*cq), &fake_open.cq);

	(void)cqe; (void)cq_context; (void)channel; (void)comp_vector;
	if (cq)
		cq->context = ctx;
	return cq;
}

FAKE_DESTROY_HOOKED(cq)

struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *init)
{
	struct ibv_qp *qp;

	if (fake_should_fail(FAKE_CREATE_QP))
		return NULL;
	if (init->cap.max_inline_data > fake_dev_of(pd->context)->max_inline)
		return fake_refuse(EINVAL);
	FAKE_PD_OBJ_NEW(qp, pd, qp);
	if (qp && fake_verbs_hooks.qp_made)
		fake_verbs_hooks.qp_made(qp, init);
	return qp;
}

FAKE_DESTROY_HOOKED(qp)

struct ibv_srq *__wrap_ibv_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	struct ibv_srq *srq;

	if (attr->attr.max_wr >
	    (uint32_t)fake_dev_of(pd->context)->attr.max_srq_wr)
		return fake_refuse(EINVAL);
	FAKE_PD_OBJ_NEW(srq, pd, srq);
	return srq;
}

FAKE_DESTROY_HOOKED(srq)

struct ibv_mr *__wrap_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
				       size_t length, uint64_t iova,
				       unsigned int access)
{
	static uint32_t next_key = 0x100;
	struct ibv_mr *mr;

	(void)iova;
	fake_last_mr_access = access;
	if (fake_should_fail(FAKE_REG_MR))
		return NULL;
	mr = fake_obj_new(sizeof(*mr), &fake_open.mr);
	if (!mr)
		return NULL;
	mr->pd = pd;
	mr->context = pd->context;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = next_key++;
	mr->rkey = next_key++;
	return mr;
}

int __wrap_ibv_dereg_mr(struct ibv_mr *mr)
{
	return fake_obj_release(FAKE_DEREG_MR, mr, &fake_open.mr);
}

struct ibv_ah *__wrap_ibv_create_ah(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah;

	fake_last_ah_attr = *attr;
	if (fake_should_fail(FAKE_CREATE_AH))
		return NULL;
	if (attr->port_num != 1)
		return fake_refuse(EINVAL);
	FAKE_PD_OBJ_NEW(ah, pd, ah);
	return ah;
}

int __wrap_ibv_destroy_ah(struct ibv_ah *ah)
{
	return fake_obj_release(FAKE_DESTROY_AH, ah, &fake_open.ah);
}

/* ---- rdma_cm -------------------------------------------------------------- */

struct fake_channel {
	struct rdma_event_channel ch;	/* ch.fd: read end of a pipe */
	int wfd;
	struct rdma_cm_event event;
};

static struct fake_dev *fake_dev_by_ip(const struct sockaddr *sa, bool subnet)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	struct in_addr ip;
	uint32_t mask;
	int i;

	if (sa->sa_family != AF_INET)
		return NULL;
	for (i = 0; i < fake_ndevs; i++) {
		if (!fake_devs[i].ip[0] ||
		    inet_pton(AF_INET, fake_devs[i].ip, &ip) != 1)
			continue;
		mask = subnet ? htonl(~0U << (32 - fake_devs[i].prefix)) : ~0U;
		if ((ip.s_addr & mask) == (sin->sin_addr.s_addr & mask))
			return &fake_devs[i];
	}
	return NULL;
}

struct rdma_event_channel *__wrap_rdma_create_event_channel(void)
{
	struct fake_channel *c;
	int fds[2];

	if (fake_should_fail(FAKE_CREATE_CHANNEL))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c || pipe(fds)) {
		free(c);
		return NULL;
	}
	c->ch.fd = fds[0];
	c->wfd = fds[1];
	fake_open.channel++;
	return &c->ch;
}

void __wrap_rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct fake_channel *c = (struct fake_channel *)ch;

	close(c->ch.fd);
	close(c->wfd);
	free(c);
	fake_open.channel--;
}

int __wrap_rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			  void *context, enum rdma_port_space ps)
{
	struct rdma_cm_id *cm_id = fake_obj_new(sizeof(*cm_id),
						&fake_open.cm_id);

	if (!cm_id)
		return -1;
	cm_id->channel = ch;
	cm_id->context = context;
	cm_id->ps = ps;
	*id = cm_id;
	return 0;
}

int __wrap_rdma_destroy_id(struct rdma_cm_id *id)
{
	return fake_obj_free(id, &fake_open.cm_id);
}

int __wrap_rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct fake_dev *dev = fake_dev_by_ip(addr, false);

	if (!dev) {
		errno = EADDRNOTAVAIL;
		return -1;
	}
	id->verbs = dev->cm_ctx;
	id->port_num = 1;
	memcpy(&id->route.addr.src_addr, addr, sizeof(struct sockaddr_in));
	return 0;
}

int __wrap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			     struct sockaddr *dst, int timeout_ms)
{
	struct fake_channel *c = (struct fake_channel *)id->channel;
	struct fake_dev *dev = fake_dev_by_ip(dst, true);
	struct sockaddr_in *sin = (struct sockaddr_in *)&id->route.addr.src_addr;
	char byte = 1;

	(void)src; (void)timeout_ms;
	memset(&c->event, 0, sizeof(c->event));
	c->event.id = id;
	c->event.event = dev ? RDMA_CM_EVENT_ADDR_RESOLVED :
			       RDMA_CM_EVENT_ADDR_ERROR;
	if (dev) {
		id->verbs = dev->cm_ctx;
		id->port_num = 1;
		sin->sin_family = AF_INET;
		inet_pton(AF_INET, dev->ip, &sin->sin_addr);
	}
	memcpy(&id->route.addr.dst_addr, dst, dst->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	return write(c->wfd, &byte, 1) == 1 ? 0 : -1;
}

static int fake_event(struct rdma_cm_id *id, enum rdma_cm_event_type type)
{
	struct fake_channel *c = (struct fake_channel *)id->channel;
	char byte = 1;

	memset(&c->event, 0, sizeof(c->event));
	c->event.id = id;
	c->event.event = type;
	return write(c->wfd, &byte, 1) == 1 ? 0 : -1;
}

int __wrap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	(void)timeout_ms;
	return fake_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

struct fake_sidr fake_sidr;

int __wrap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fake_channel *c = (struct fake_channel *)id->channel;

	(void)param;
	if (fake_sidr.calls < 8)
		memcpy(&fake_sidr.dst[fake_sidr.calls],
		       &id->route.addr.dst_addr, sizeof(fake_sidr.dst[0]));
	fake_sidr.calls++;
	if (fake_event(id, fake_sidr.event ? fake_sidr.event :
			   RDMA_CM_EVENT_ESTABLISHED))
		return -1;
	c->event.status = fake_sidr.status;
	c->event.param.ud = fake_sidr.ud;
	if (fake_sidr.priv_len) {
		c->event.param.ud.private_data = fake_sidr.priv;
		c->event.param.ud.private_data_len = fake_sidr.priv_len;
	}
	return 0;
}

int __wrap_rdma_get_cm_event(struct rdma_event_channel *ch,
			     struct rdma_cm_event **event)
{
	struct fake_channel *c = (struct fake_channel *)ch;
	char byte;

	if (read(c->ch.fd, &byte, 1) != 1)
		return -1;
	*event = &c->event;
	return 0;
}

int __wrap_rdma_ack_cm_event(struct rdma_cm_event *event)
{
	(void)event;
	return 0;
}

/* rdma_cm's device contexts: the domain's context comes from here. One
 * list counts as one open context; FAKE_OPEN_DEVICE makes it fail. */
struct ibv_context **__wrap_rdma_get_devices(int *num)
{
	struct ibv_context **list = fake_dev_list_new(FAKE_OPEN_DEVICE,
						      sizeof(*list), num);
	int i;

	if (!list)
		return NULL;
	for (i = 0; i < fake_ndevs; i++)
		list[i] = fake_devs[i].cm_ctx;
	fake_open.ctx++;
	return list;
}

void __wrap_rdma_free_devices(struct ibv_context **list)
{
	free(list);
	fake_open.ctx--;
}

/* ---- getifaddrs: one interface per device with an IP, plus loopback ----- */

struct fake_ifaddr {
	struct ifaddrs ifa;
	struct sockaddr_in addr, mask;
	char name[IFNAMSIZ];
};

static struct fake_ifaddr *fake_ifaddr_new(const char *name, const char *ip,
					   unsigned prefix, unsigned flags)
{
	struct fake_ifaddr *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->addr.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &f->addr.sin_addr);
	f->mask.sin_family = AF_INET;
	f->mask.sin_addr.s_addr = htonl(prefix ? ~0U << (32 - prefix) : 0);
	f->ifa.ifa_name = f->name;
	f->ifa.ifa_flags = flags;
	f->ifa.ifa_addr = (struct sockaddr *)&f->addr;
	f->ifa.ifa_netmask = (struct sockaddr *)&f->mask;
	return f;
}

int __wrap_getifaddrs(struct ifaddrs **ifap)
{
	struct fake_ifaddr *head, *f;
	char name[IFNAMSIZ];
	int i;

	head = fake_ifaddr_new("lo", "127.0.0.1", 8, IFF_UP | IFF_LOOPBACK);
	if (!head)
		return -1;
	for (i = 0; i < fake_ndevs; i++) {
		if (!fake_devs[i].ip[0])
			continue;
		snprintf(name, sizeof(name), "eth%d", i);
		f = fake_ifaddr_new(name, fake_devs[i].ip, fake_devs[i].prefix,
				    IFF_UP);
		if (!f)
			break;
		f->ifa.ifa_next = head->ifa.ifa_next;
		head->ifa.ifa_next = &f->ifa;
	}
	*ifap = &head->ifa;
	return 0;
}

void __wrap_freeifaddrs(struct ifaddrs *ifa)
{
	struct ifaddrs *next;

	for (; ifa; ifa = next) {
		next = ifa->ifa_next;
		free(ifa); /* ifa is the first member of struct fake_ifaddr */
	}
}
