/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A fake ibverbs/rdma_cm world for unit tests. Linked with -Wl,--wrap so the
 * provider's calls to ibv_*, rdma_* and getifaddrs land here. Tests describe
 * devices, inject one-shot failures and check that every object opened was
 * closed.
 */
#ifndef FAKE_VERBS_H
#define FAKE_VERBS_H

#include <stdbool.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define FAKE_MAX_DEVS 4

struct fake_dev {
	struct ibv_device ibdev;	/* name is what the provider sees */
	struct ibv_device_attr attr;
	struct ibv_port_attr port;	/* port 1, the only port */
	union ibv_gid gid;
	uint32_t max_inline;		/* largest inline a QP accepts */
	char ip[64];			/* "" for none */
	unsigned prefix;
	struct ibv_context *cm_ctx;	/* what rdma_cm ids point at */
};

enum fake_call {
	FAKE_GET_DEVICE_LIST,
	FAKE_OPEN_DEVICE,
	FAKE_QUERY_DEVICE,
	FAKE_ALLOC_PD,
	FAKE_DEALLOC_PD,
	FAKE_CREATE_QP,
	FAKE_REG_MR,
	FAKE_DEREG_MR,
	FAKE_CREATE_CHANNEL,
	FAKE_CREATE_AH,
	FAKE_DESTROY_AH,
	FAKE_CALL_MAX
};

/* Objects currently open, per kind; all 0 after a clean teardown. */
struct fake_counts {
	int ctx, pd, cq, qp, mr, channel, cm_id, ah, srq;
};

extern struct fake_counts fake_open;
extern unsigned int fake_last_mr_access;
extern struct ibv_ah_attr fake_last_ah_attr;	/* of the last ibv_create_ah */

/* What rdma_connect of a UD id (a service resolution, SIDR) gets: the
 * event (RDMA_CM_EVENT_ESTABLISHED when 0), its status and UD parameters
 * (private_data points at priv when priv_len is set). Reset with the
 * rest; calls and dst record the requests. */
struct fake_sidr {
	enum rdma_cm_event_type event;
	int status;
	struct rdma_ud_param ud;
	uint8_t priv[136];
	uint8_t priv_len;
	int calls;
	struct sockaddr_in6 dst[8];	/* of the first 8 calls */
};
extern struct fake_sidr fake_sidr;

/* Observers of the lifetime of queue pairs, SRQs and CQs, for a fake
 * network behind the objects (tests/unit/fake_net.c): made is called once
 * the object exists, gone before it is freed. NULL (the default, and not
 * touched by fake_verbs_reset): nobody watches. */
struct fake_verbs_hooks {
	void (*qp_made)(struct ibv_qp *qp, const struct ibv_qp_init_attr *init);
	void (*qp_gone)(struct ibv_qp *qp);
	void (*srq_gone)(struct ibv_srq *srq);
	void (*cq_gone)(struct ibv_cq *cq);
};
extern struct fake_verbs_hooks fake_verbs_hooks;

/* Forgets all devices and injected failures (and frees fake objects). */
void fake_verbs_reset(void);

/* Adds an active rxe-like device; ip may be NULL. */
struct fake_dev *fake_verbs_add(const char *name, const char *ip,
				unsigned prefix);

/* The next call of that kind fails with errno err. */
void fake_verbs_fail(enum fake_call call, int err);

#endif /* FAKE_VERBS_H */
