/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Address vectors through the real libfabric core on a real verbs device
 * (soft-RoCE): real address handles for the device's own UD name, and a
 * named AV that a second process opens read-only. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "func_common.h"
#include "func_pair.h"

/* FI_ADDR_IB_UD as lfverbs lays it out (fi_lfverbs(7)). */
struct ud_name {
	uint8_t gid[16];
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint8_t pad[6];
};

struct objs {
	struct func_domain d;		/* first: func_domain_teardown */
	struct ud_name self;		/* the port's name, some QP number */
};

static int open_objs(void **state)
{
	struct fi_info *hints = func_hints(FI_EP_DGRAM);
	struct objs *o = calloc(1, sizeof(*o));

	func_domain_open(hints, &o->d.info, &o->d.fabric, &o->d.domain);
	assert_int_equal(o->d.info->addr_format, FI_ADDR_IB_UD);
	assert_int_equal(o->d.info->src_addrlen, sizeof(o->self));
	memcpy(&o->self, o->d.info->src_addr, sizeof(o->self));
	o->self.qpn = 0x123;
	o->self.qkey = 0x11111111;
	*state = o;
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

	assert_int_equal(fi_av_open(o->d.domain, &attr, &av, NULL), 0);
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
	assert_int_equal(fi_close(&o->d.domain->fid), -FI_EBUSY);
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
	assert_int_equal(fi_av_open(o->d.domain, &attr, &av, NULL), 0);
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

	assert_int_equal(fi_eq_open(o->d.fabric, &eq_attr, &eq, NULL), 0);
	assert_int_equal(fi_av_open(o->d.domain, &attr, &av, NULL), 0);
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
	test_close(av, eq);
}

/* The other process of test_shared_named: its own fabric and domain, the
 * parent's AV opened read-only by name before the parent inserts; then it
 * must see the parent's entries at the parent's fi_addr_t values. The exit
 * code names the check that failed. */
static int shared_child(const struct objs *o, const char *name, int sock)
{
	struct fi_info *hints = func_hints(FI_EP_DGRAM), *info = NULL;
	struct fi_av_attr attr = { .name = name, .flags = FI_READ };
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct ud_name out;
	size_t len = sizeof(out);
	struct fid_av *av;
	fi_addr_t *map;
	char c = 'r';
	int i;

	hints->caps = FI_MSG | FI_SHARED_AV;
	if (fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info))
		return 10;
	if (fi_fabric(info->fabric_attr, &fabric, NULL) ||
	    fi_domain(fabric, info, &domain, NULL))
		return 11;
	if (fi_av_open(domain, &attr, &av, NULL) || attr.type != FI_AV_MAP)
		return 12;
	map = attr.map_addr;
	if (write(sock, &c, 1) != 1 || read(sock, &c, 1) != 1)
		return 13;		/* the parent inserted */
	for (i = 0; i < 2; i++) {
		len = sizeof(out);
		if (map[i] == FI_ADDR_NOTAVAIL ||
		    fi_av_lookup(av, map[i], &out, &len) ||
		    memcmp(out.gid, o->self.gid, sizeof(out.gid)) ||
		    out.qpn != 0x200U + (uint32_t)i)
			return 14 + i;
	}
	if (fi_av_insert(av, &out, 1, map, 0, NULL) != -FI_EOPNOTSUPP)
		return 16;
	if (fi_close(&av->fid) || fi_close(&domain->fid) ||
	    fi_close(&fabric->fid))
		return 17;
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}

static void test_shared_named(void **state)
{
	struct objs *o = *state;
	char name[64];
	struct fi_av_attr attr = { .type = FI_AV_MAP, .name = name };
	struct ud_name names[2] = { o->self, o->self };
	fi_addr_t fa[2], *map;
	struct fid_av *av;
	int sv[2], status;
	pid_t pid;
	char c;

	snprintf(name, sizeof(name), "lfv-func-%d", (int)getpid());
	names[0].qpn = 0x200;
	names[1].qpn = 0x201;
	assert_true(o->d.info->caps & FI_SHARED_AV);
	assert_int_equal(fi_av_open(o->d.domain, &attr, &av, NULL), 0);
	map = attr.map_addr;
	assert_non_null(map);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(sv[0]);
		_exit(shared_child(o, name, sv[1]));
	}
	close(sv[1]);
	/* Inserted once the child holds the AV open. */
	assert_int_equal(read(sv[0], &c, 1), 1);
	assert_int_equal(fi_av_insert(av, names, 2, fa, 0, NULL), 2);
	assert_int_equal(map[0], fa[0]);
	assert_int_equal(map[1], fa[1]);
	assert_int_equal(write(sv[0], &c, 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(sv[0]);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(fi_close(&av->fid), 0);
	/* Gone with its creator. */
	attr.flags = FI_READ;
	attr.map_addr = NULL;
	assert_int_equal(fi_av_open(o->d.domain, &attr, &av, NULL), -FI_ENOENT);
}

#define T(fn) FUNC_DOMAIN_TEST(fn, open_objs)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_insert_own_name),
		T(test_many_handles_map),
		T(test_event_insert),
		T(test_shared_named),
	};

	func_require_device();
	return cmocka_run_group_tests_name("func_av", tests, NULL, NULL);
}
