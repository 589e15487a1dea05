/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Address vectors through the real libfabric core on a real verbs device
 * (soft-RoCE): real address handles for the device's own UD name. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "func_common.h"

/* FI_ADDR_IB_UD as lfverbs lays it out (fi_lfverbs(7)). */
struct ud_name {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint8_t pad[6];
};

struct objs {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct ud_name self;		/* the port's name, some QP number */
};

static int open_objs(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_DGRAM);
	struct objs *o = calloc(1, sizeof(*o));

	assert_int_equal(fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints,
				    &o->info), 0);
	fi_freeinfo(hints);
	assert_int_equal(o->info->addr_format, FI_ADDR_IB_UD);
	assert_int_equal(o->info->src_addrlen, sizeof(o->self));
	memcpy(&o->self, o->info->src_addr, sizeof(o->self));
	o->self.qpn = 0x123;
	o->self.qkey = 0x11111111;
	assert_int_equal(fi_fabric(o->info->fabric_attr, &o->fabric, NULL), 0);
	assert_int_equal(fi_domain(o->fabric, o->info, &o->domain, NULL), 0);
	*state = o;
	return 0;
}

static int close_objs(void **state)
{
	struct objs *o = *state;

	assert_int_equal(fi_close(&o->domain->fid), 0);
	assert_int_equal(fi_close(&o->fabric->fid), 0);
	fi_freeinfo(o->info);
	free(o);
	return 0;
}

static void test_insert_own_name(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_UNSPEC };
	char want[128], buf[128], gid[INET6_ADDRSTRLEN];
	struct ud_name out;
	struct fid_av *av;
	size_t len = sizeof(out);
	fi_addr_t fa;

	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(attr.type, FI_AV_TABLE);
	assert_int_equal(fi_av_insert(av, &o->self, 1, &fa, 0, NULL), 1);
	assert_int_equal(fa, 0);
	assert_int_equal(fi_av_lookup(av, fa, &out, &len), 0);
	assert_int_equal(len, sizeof(out));
	assert_memory_equal(&out, &o->self, sizeof(out));

	inet_ntop(AF_INET6, o->self.gid, gid, sizeof(gid));
	snprintf(want, sizeof(want), "fi_addr_ib_ud://%s:123/%x/11111111",
		 gid, o->self.lid);
	len = sizeof(buf);
	assert_ptr_equal(fi_av_straddr(av, &out, buf, &len), buf);
	assert_string_equal(buf, want);
	assert_int_equal(len, strlen(want) + 1);

	/* The domain stays open while the AV is. */
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	assert_int_equal(fi_av_remove(av, &fa, 1, 0), 0);
	len = sizeof(out);
	assert_int_equal(fi_av_lookup(av, fa, &out, &len), -FI_EINVAL);
	assert_int_equal(fi_av_insert(av, &o->self, 1, &fa, 0, NULL), 1);
	assert_int_equal(fa, 1);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void test_many_handles_map(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_MAP, .count = 16 };
	struct ud_name names[200];
	fi_addr_t fa[200];
	struct fid_av *av;
	int i, err[200];

	for (i = 0; i < 200; i++) {
		names[i] = o->self;
		names[i].qpn = (uint32_t)(0x100 + i);
	}
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(fi_av_insert(av, names, 200, fa, FI_SYNC_ERR, err),
			 200);
	for (i = 0; i < 200; i++)
		assert_int_equal(err[i], 0);
	assert_int_equal(fi_av_remove(av, fa, 100, 0), 0);
	assert_int_equal(fi_av_insert(av, names, 100, fa, 0, NULL), 100);
	/* fi_close destroys the 200 live handles. */
	assert_int_equal(fi_close(&av->fid), 0);
}

static void test_event_insert(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_FD };
	struct ud_name names[2] = { o->self, o->self };
	struct fi_eq_err_entry err = { 0 };
	struct fi_eq_entry entry;
	struct fid_eq *eq;
	struct fid_av *av;
	uint32_t event;
	fi_addr_t fa[2];
	int ctx;

	assert_int_equal(fi_eq_open(o->fabric, &eq_attr, &eq, NULL), 0);
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(fi_av_insert(av, names, 2, fa, 0, &ctx), -FI_ENOEQ);
	assert_int_equal(fi_av_bind(av, &eq->fid, 0), 0);
	names[0].qpn = 0;	/* not a UD destination */
	assert_int_equal(fi_av_insert(av, names, 2, fa, 0, &ctx), 0);
	assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[1], 0);
	assert_int_equal(fi_eq_sread(eq, &event, &entry, sizeof(entry), 1000,
				     0), -FI_EAVAIL);
	assert_int_equal(fi_eq_readerr(eq, &err, 0), sizeof(err));
	assert_int_equal(err.err, FI_EINVAL);
	assert_int_equal(err.data, 0);
	assert_ptr_equal(err.context, &ctx);
	assert_int_equal(fi_eq_sread(eq, &event, &entry, sizeof(entry), 1000,
				     0), sizeof(entry));
	assert_int_equal(event, FI_AV_COMPLETE);
	assert_int_equal(entry.data, 1);
	assert_ptr_equal(entry.fid, &av->fid);
	assert_int_equal(fi_close(&eq->fid), -FI_EBUSY);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, open_objs, close_objs)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_insert_own_name),
		T(test_many_handles_map),
		T(test_event_insert),
	};

	func_require_device();
	return cmocka_run_group_tests_name("func_av", tests, NULL, NULL);
}
