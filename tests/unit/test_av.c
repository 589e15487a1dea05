/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Address vectors over fake verbs: open attributes, insert / lookup /
 * remove / straddr for both types, address handle failures (FI_SYNC_ERR and
 * FI_EVENT), the reverse map, close order, lfv_av_dest racing inserts, and
 * named AVs shared through their segment (creator and FI_READ opener in one
 * process here; tests/func and fabtests' rdm_shared_av use two). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "fake_verbs.h"
#include "lfv_av.h"
#include "lfv_param.h"
#include "lfv_prov.h"
#include "lfv_svc.h"
#include "lfv_device.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "../test_close.h"
#include "unit_fake.h"

#define V FI_VERSION(1, 17)

/* calloc is wrapped (-Wl,--wrap=calloc): after calloc_ok more successful
 * calls in this program and the core, the next one fails once. */
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
static int calloc_ok = -1;

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_ok == 0) {
		calloc_ok = -1;
		errno = ENOMEM;
		return NULL;
	}
	if (calloc_ok > 0)
		calloc_ok--;
	return __real_calloc(n, size);
}

struct objs {
	struct fake_dev *dev;
	struct fi_info *info;		/* the DGRAM answer */
	struct fi_info *all;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_av *av;		/* setup_table_av's */
};

static void open_objs(struct objs *o, uint8_t link)
{
	struct fi_info *hints = fi_allocinfo();

	o->dev = unit_fake_device();
	o->dev->port.link_layer = link;
	o->dev->port.lid = 0x42;
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->domain_attr->mr_mode = LFV_MR_MODE;
	unit_fabric_open(hints, &o->all, &o->fabric);
	o->info = o->all;
	assert_int_equal(o->info->addr_format, FI_ADDR_IB_UD);
	assert_int_equal(fi_domain(o->fabric, o->info, &o->domain, NULL), 0);
}

static int setup(void **state)
{
	struct objs *o = calloc(1, sizeof(*o));

	open_objs(o, IBV_LINK_LAYER_ETHERNET);
	*state = o;
	return 0;
}

static int teardown(void **state)
{
	struct objs *o = *state;

	test_close(o->av, o->eq, o->domain, o->fabric);
	fi_freeinfo(o->all);
	free(o);
	unit_fake_release();
	return 0;
}

/* Name i: GID fe80::1:<i>, QP number i + 1, Q_Key 0x11111111. */
static struct lfv_ud_name name_of(uint32_t i)
{
	struct lfv_ud_name n;

	memset(&n, 0, sizeof(n));
	n.gid[0] = 0xfe;
	n.gid[1] = 0x80;
	n.gid[11] = 1;
	n.gid[12] = (uint8_t)(i >> 24);
	n.gid[13] = (uint8_t)(i >> 16);
	n.gid[14] = (uint8_t)(i >> 8);
	n.gid[15] = (uint8_t)i;
	n.qpn = i + 1;
	n.qkey = 0x11111111;
	n.lid = (uint16_t)(i & 0xffff);
	return n;
}

static struct fid_av *open_av(struct objs *o, enum fi_av_type type,
			      uint64_t flags)
{
	struct fi_av_attr attr = { .type = type, .flags = flags };
	struct fid_av *av;

	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	return av;
}

/* Most tests: the objects and a table AV (flags 0) in o->av. */
static int setup_table_av(void **state)
{
	struct objs *o;

	setup(state);
	o = *state;
	o->av = open_av(o, FI_AV_TABLE, 0);
	return 0;
}

static struct lfv_av *lav(struct fid_av *av)
{
	struct lfv_av *l = lfv_av_from_fid(&av->fid);

	assert_non_null(l);
	return l;
}

static void test_open_close_types(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_UNSPEC };
	struct fid_av *av;
	int ctx;

	assert_int_equal(fi_av_open(o->domain, &attr, &av, &ctx), 0);
	assert_int_equal(attr.type, FI_AV_TABLE);	/* what UNSPEC opened */
	assert_ptr_equal(av->fid.context, &ctx);
	assert_int_equal(av->fid.fclass, FI_CLASS_AV);
	assert_int_equal(lav(av)->seg0_shift, 8);	/* default 256 */
	assert_int_equal(fi_close(&av->fid), 0);

	attr = (struct fi_av_attr){ .type = FI_AV_MAP, .count = 1000,
				    .flags = FI_SYMMETRIC };
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(attr.type, FI_AV_MAP);
	assert_int_equal(lav(av)->type, FI_AV_MAP);
	assert_int_equal(lav(av)->seg0_shift, 10);	/* 1000 -> 1024 */
	assert_int_equal(fi_close(&av->fid), 0);

	attr = (struct fi_av_attr){ .type = FI_AV_TABLE, .count = 1 };
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(lav(av)->seg0_shift, LFV_AV_SEG0_SHIFT_MIN);
	assert_int_equal(fi_close(&av->fid), 0);

	attr.count = (size_t)1 << 40;		/* a hint, capped */
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(lav(av)->seg0_shift, LFV_AV_SEG0_SHIFT_MAX);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void test_open_bad_attr(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct fid_av *av = NULL;

	assert_int_equal(fi_av_open(o->domain, NULL, &av, NULL), -FI_EINVAL);
	assert_int_equal(fi_av_open(o->domain, &attr, NULL, NULL), -FI_EINVAL);
	attr.type = (enum fi_av_type)99;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_EINVAL);
	assert_int_equal(attr.type, 99);	/* outputs only on success */
	attr.type = FI_AV_UNSPEC;
	attr.rx_ctx_bits = LFV_AV_RX_CTX_BITS_MAX + 1;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_EINVAL);
	assert_int_equal(attr.type, FI_AV_UNSPEC);
	attr.rx_ctx_bits = -1;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_EINVAL);
	attr.rx_ctx_bits = 0;
	attr.flags = FI_READ;		/* read-only needs a name */
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_EINVAL);
	attr.flags = FI_RECV;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_EINVAL);
	/* map_addr is ignored without a name. */
	attr.flags = 0;
	attr.map_addr = (void *)0x1000;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_open_domain_constraints(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_MAP };
	struct fid_domain *domain;
	struct fi_info *info;
	struct fid_av *av;

	/* A domain opened for FI_AV_TABLE takes only TABLE (and UNSPEC). */
	info = fi_dupinfo(o->info);
	info->domain_attr->av_type = FI_AV_TABLE;
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), 0);
	assert_int_equal(fi_av_open(domain, &attr, &av, NULL), -FI_EINVAL);
	attr.type = FI_AV_UNSPEC;
	assert_int_equal(fi_av_open(domain, &attr, &av, NULL), 0);
	assert_int_equal(attr.type, FI_AV_TABLE);
	test_close(av, domain);

	info->domain_attr->av_type = FI_AV_MAP;
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), 0);
	attr.type = FI_AV_UNSPEC;
	assert_int_equal(fi_av_open(domain, &attr, &av, NULL), 0);
	assert_int_equal(attr.type, FI_AV_MAP);
	test_close(av, domain);
	fi_freeinfo(info);
}

static void test_open_on_msg_domain(void **state)
{
	struct objs *o = *state;
	struct fi_info *hints = fi_allocinfo(), *info;
	struct fi_av_attr attr = { .type = FI_AV_TABLE };
	struct fid_domain *domain;
	struct fid_av *av;

	hints->ep_attr->type = FI_EP_MSG;
	hints->domain_attr->mr_mode = LFV_MR_MODE;
	assert_int_equal(lfv_getinfo(V, NULL, NULL, 0, hints, &info), 0);
	fi_freeinfo(hints);
	assert_int_equal(fi_domain(o->fabric, info, &domain, NULL), 0);
	/* Only FI_ADDR_IB_UD addresses: sockaddr AVs do not exist. */
	assert_int_equal(fi_av_open(domain, &attr, &av, NULL), -FI_ENOSYS);
	assert_int_equal(fi_close(&domain->fid), 0);
	fi_freeinfo(info);
}

static void test_insert_lookup_table(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, 0);
	struct lfv_ud_name names[3] = { name_of(7), name_of(8), name_of(9) };
	struct lfv_ud_name out;
	const struct lfv_av_dest *d;
	fi_addr_t fa[3];
	size_t len;
	int i;

	assert_int_equal(fi_av_insert(av, names, 3, fa, 0, NULL), 3);
	assert_int_equal(fake_open.ah, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(fa[i], i);
		len = sizeof(out);
		assert_int_equal(fi_av_lookup(av, fa[i], &out, &len), 0);
		assert_int_equal(len, sizeof(out));
		assert_memory_equal(&out, &names[i], sizeof(out));
		d = lfv_av_dest(lav(av), fa[i]);
		assert_non_null(d);
		assert_non_null(d->ah);
		assert_int_equal(d->qpn, names[i].qpn);
		assert_int_equal(d->qkey, names[i].qkey);
	}
	/* The last handle: global route to the name's GID on port 1. */
	assert_int_equal(fake_last_ah_attr.is_global, 1);
	assert_memory_equal(fake_last_ah_attr.grh.dgid.raw, names[2].gid, 16);
	assert_int_equal(fake_last_ah_attr.grh.sgid_index, 0);
	assert_int_equal(fake_last_ah_attr.grh.hop_limit, 64);
	assert_int_equal(fake_last_ah_attr.port_num, 1);
	assert_int_equal(fake_last_ah_attr.dlid, 0);	/* RoCE: no LID */

	/* Indexes accumulate across calls; FI_MORE is a hint; NULL fi_addr
	 * is fine for a table. */
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_MORE, NULL), 1);
	assert_int_equal(fa[0], 3);
	assert_int_equal(fi_av_insert(av, names, 1, NULL, 0, NULL), 1);
	assert_non_null(lfv_av_dest(lav(av), 4));
	assert_int_equal(fi_av_insert(av, names, 0, NULL, 0, NULL), 0);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_ib_link_layer_sets_dlid(void **state)
{
	struct objs *o = *state;
	struct lfv_ud_name n = name_of(0x1234);
	struct fid_av *av;
	fi_addr_t fa;

	/* Reopen everything on an InfiniBand port. */
	test_close(o->domain, o->fabric);
	fi_freeinfo(o->all);
	open_objs(o, IBV_LINK_LAYER_INFINIBAND);
	av = open_av(o, FI_AV_TABLE, 0);
	assert_int_equal(fi_av_insert(av, &n, 1, &fa, 0, NULL), 1);
	assert_int_equal(fake_last_ah_attr.dlid, 0x1234);
	assert_int_equal(fake_last_ah_attr.is_global, 1);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void test_lookup_truncation(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name n = name_of(3);
	uint8_t buf[sizeof(n) + 8];
	fi_addr_t fa;
	size_t len;

	assert_int_equal(fi_av_insert(av, &n, 1, &fa, 0, NULL), 1);
	memset(buf, 0xee, sizeof(buf));
	len = 8;
	assert_int_equal(fi_av_lookup(av, fa, buf, &len), 0);
	assert_int_equal(len, sizeof(n));	/* the full size */
	assert_memory_equal(buf, &n, 8);
	assert_int_equal(buf[8], 0xee);		/* nothing past addrlen */
	len = 0;
	assert_int_equal(fi_av_lookup(av, fa, NULL, &len), 0);
	assert_int_equal(len, sizeof(n));
	len = sizeof(buf);
	assert_int_equal(fi_av_lookup(av, fa, buf, &len), 0);
	assert_int_equal(len, sizeof(n));
	assert_int_equal(buf[sizeof(n)], 0xee);

	assert_int_equal(fi_av_lookup(av, fa, buf, NULL), -FI_EINVAL);
	len = 8;
	assert_int_equal(fi_av_lookup(av, fa, NULL, &len), -FI_EINVAL);
	assert_int_equal(fi_av_lookup(av, FI_ADDR_NOTAVAIL, buf, &len),
			 -FI_EINVAL);
	assert_int_equal(fi_av_lookup(av, 1, buf, &len), -FI_EINVAL);
	assert_int_equal(len, 8);		/* untouched on failure */
}

static void test_straddr(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	const char *want = "fi_addr_ib_ud://fe80::1:0:5:12/5/11111111";
	struct lfv_ud_name n = name_of(5);
	char buf[128], small[10];
	size_t len = sizeof(buf);

	n.qpn = 0x12;
	assert_ptr_equal(fi_av_straddr(av, &n, buf, &len), buf);
	assert_string_equal(buf, want);
	assert_int_equal(len, strlen(want) + 1);

	/* Truncated, terminated, and the needed size reported. */
	len = sizeof(small);
	assert_ptr_equal(fi_av_straddr(av, &n, small, &len), small);
	assert_int_equal(len, strlen(want) + 1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, want, sizeof(small) - 1);
	len = 0;
	assert_null(fi_av_straddr(av, &n, NULL, &len));
	assert_int_equal(len, strlen(want) + 1);

	/* The address need not be in the AV. */
	memset(&n, 0, sizeof(n));
	n.gid[10] = n.gid[11] = 0xff;
	n.gid[12] = 10; n.gid[13] = 77; n.gid[15] = 1;
	n.qpn = 0xabcdef; n.lid = 0xffff; n.qkey = 0x80010000;
	len = sizeof(buf);
	fi_av_straddr(av, &n, buf, &len);
	assert_string_equal(buf,
		"fi_addr_ib_ud://::ffff:10.77.0.1:abcdef/ffff/80010000");
	assert_null(fi_av_straddr(av, NULL, buf, &len));
	assert_null(fi_av_straddr(av, &n, buf, NULL));
}

static void test_remove_and_reinsert_table(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, 0);
	struct lfv_ud_name names[3] = { name_of(1), name_of(2), name_of(3) };
	struct lfv_ud_name out;
	fi_addr_t fa[3], one;
	size_t len = sizeof(out);

	assert_int_equal(fi_av_insert(av, names, 3, fa, 0, NULL), 3);
	one = fa[1];
	assert_int_equal(fi_av_remove(av, &one, 1, 0), 0);
	assert_int_equal(fake_open.ah, 2);
	assert_null(lfv_av_dest(lav(av), 1));
	assert_non_null(lfv_av_dest(lav(av), 0));
	assert_non_null(lfv_av_dest(lav(av), 2));
	assert_int_equal(fi_av_lookup(av, 1, &out, &len), -FI_EINVAL);
	/* Twice: not live any more. */
	assert_int_equal(fi_av_remove(av, &one, 1, 0), -FI_EINVAL);

	/* Re-inserting the removed name: a new index, never the old one. */
	assert_int_equal(fi_av_insert(av, &names[1], 1, &one, 0, NULL), 1);
	assert_int_equal(one, 3);
	assert_null(lfv_av_dest(lav(av), 1));
	assert_int_equal(lfv_av_dest(lav(av), 3)->qpn, names[1].qpn);

	/* A list with a dead address removes the live ones and fails. */
	fa[1] = 1;
	assert_int_equal(fi_av_remove(av, fa, 3, 0), -FI_EINVAL);
	assert_null(lfv_av_dest(lav(av), 0));
	assert_null(lfv_av_dest(lav(av), 2));
	assert_int_equal(fake_open.ah, 1);
	assert_int_equal(fi_av_remove(av, fa, 1, FI_MORE), -FI_EBADFLAGS);
	assert_int_equal(fi_av_remove(av, NULL, 1, 0), -FI_EINVAL);
	assert_int_equal(fi_av_remove(av, NULL, 0, 0), 0);
	one = FI_ADDR_NOTAVAIL;
	assert_int_equal(fi_av_remove(av, &one, 1, 0), -FI_EINVAL);
	/* Close removes what is left. */
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_map_generations(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_MAP, 0);
	struct lfv_ud_name names[2] = { name_of(1), name_of(2) };
	struct lfv_ud_name c = name_of(3), out;
	fi_addr_t fa[2], fc, old;
	size_t len = sizeof(out);

	assert_int_equal(fi_av_insert(av, names, 2, fa, 0, NULL), 2);
	assert_true(fa[0] != fa[1]);
	assert_true(fa[0] != FI_ADDR_NOTAVAIL);
	assert_int_equal(lfv_av_dest(lav(av), fa[1])->qpn, names[1].qpn);
	old = fa[0];
	assert_int_equal(fi_av_remove(av, &old, 1, 0), 0);
	assert_null(lfv_av_dest(lav(av), old));

	/* The freed slot is reused under a new generation: the stale
	 * fi_addr_t names nothing. */
	assert_int_equal(fi_av_insert(av, &c, 1, &fc, 0, NULL), 1);
	assert_int_equal((uint32_t)fc, (uint32_t)old);
	assert_true(fc != old);
	assert_null(lfv_av_dest(lav(av), old));
	assert_int_equal(lfv_av_dest(lav(av), fc)->qpn, c.qpn);
	assert_int_equal(fi_av_lookup(av, old, &out, &len), -FI_EINVAL);
	assert_int_equal(fi_av_lookup(av, fc, &out, &len), 0);
	assert_memory_equal(&out, &c, sizeof(c));
	assert_int_equal(fi_av_remove(av, &old, 1, 0), -FI_EINVAL);

	/* A MAP insert needs somewhere to put the fi_addr_t. */
	assert_int_equal(fi_av_insert(av, &c, 1, NULL, 0, NULL), -FI_EINVAL);
	/* A table-style index is not a MAP address. */
	assert_null(lfv_av_dest(lav(av), (uint32_t)fc));
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_bad_addresses(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name names[3] = { name_of(1), name_of(2), name_of(3) };
	fi_addr_t fa[3];
	int err[3];

	assert_null(lfv_av_dest(lav(av), 0));		/* nothing inserted */
	assert_null(lfv_av_dest(lav(av), FI_ADDR_NOTAVAIL));
	assert_null(lfv_av_dest(lav(av), FI_ADDR_UNSPEC));
	assert_null(lfv_av_dest(lav(av), 1000000));	/* no segment */
	assert_null(lfv_av_dest(lav(av), 1ULL << 40));
	assert_null(lfv_av_dest(lav(av), LFV_AV_MAX_ENTRIES));

	/* QP number 0 and numbers over 24 bits are not UD destinations. */
	names[0].qpn = 0;
	names[2].qpn = 1U << 24;
	assert_int_equal(fi_av_insert(av, names, 3, fa, FI_SYNC_ERR, err), 1);
	assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[1], 0);
	assert_int_equal(fa[2], FI_ADDR_NOTAVAIL);
	assert_int_equal(err[0], FI_EINVAL);
	assert_int_equal(err[1], 0);
	assert_int_equal(err[2], FI_EINVAL);
	assert_int_equal(fake_open.ah, 1);
	assert_null(lfv_av_dest(lav(av), 1));

	assert_int_equal(fi_av_insert(av, NULL, 1, fa, 0, NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_AV_USER_ID, NULL),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_RECV, NULL),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_SYNC_ERR, NULL),
			 -FI_EINVAL);
}

static void test_ah_failure(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, 0);
	struct lfv_ud_name names[3] = { name_of(1), name_of(2), name_of(3) };
	fi_addr_t fa[3];
	int err[3] = { -1, -1, -1 };

	/* The first handle fails: reported in its slot, and the table index
	 * it would have taken goes to the next address. */
	fake_verbs_fail(FAKE_CREATE_AH, ENOMEM);
	assert_int_equal(fi_av_insert(av, names, 3, fa, FI_SYNC_ERR, err), 2);
	assert_int_equal(err[0], FI_ENOMEM);
	assert_int_equal(err[1], 0);
	assert_int_equal(err[2], 0);
	assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[1], 0);
	assert_int_equal(fa[2], 1);
	assert_int_equal(fake_open.ah, 2);

	/* Without FI_SYNC_ERR the count alone tells; errno passes through. */
	fake_verbs_fail(FAKE_CREATE_AH, EHOSTUNREACH);
	assert_int_equal(fi_av_insert(av, names, 1, fa, 0, NULL), 0);
	assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
	fake_verbs_fail(FAKE_CREATE_AH, EHOSTUNREACH);
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_SYNC_ERR, err), 0);
	assert_int_equal(err[0], EHOSTUNREACH);
	assert_int_equal(fi_av_insert(av, names, 1, fa, 0, NULL), 1);
	assert_int_equal(fa[0], 2);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_destroy_ah_failure(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, 0);
	struct lfv_ud_name n = name_of(1);
	union ibv_gid gid;
	fi_addr_t fa;

	assert_int_equal(fi_av_insert(av, &n, 1, &fa, 0, NULL), 1);
	/* A handle that cannot be destroyed keeps its entry live. */
	fake_verbs_fail(FAKE_DESTROY_AH, EBUSY);
	assert_int_equal(fi_av_remove(av, &fa, 1, 0), -FI_EBUSY);
	assert_non_null(lfv_av_dest(lav(av), fa));
	memcpy(gid.raw, n.gid, 16);
	assert_int_equal(lfv_av_reverse(lav(av), &gid, n.qpn), fa);
	fake_verbs_fail(FAKE_DESTROY_AH, EBUSY);
	assert_int_equal(fi_close(&av->fid), -FI_EBUSY);
	assert_non_null(lfv_av_dest(lav(av), fa));
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

/* Scalable endpoints' names (rx_ctx_bits): one destination per receive
 * context through fi_rx_addr, every transmit context maps back to the
 * entry, MAP generations stay below the context bits. */
static struct lfv_sep_name sep_name_of(uint32_t i, uint16_t nrx, uint16_t ntx)
{
	struct lfv_sep_name n;
	uint32_t k;

	memset(&n, 0, sizeof(n));
	n.base = name_of(i);
	n.magic = LFV_SEP_MAGIC;
	n.nrx = nrx;
	n.ntx = ntx;
	for (k = 0; k < nrx; k++)
		n.rx_qpn[k] = n.base.qpn + 100 * k;
	for (k = 0; k < ntx; k++)
		n.tx_qpn[k] = n.base.qpn + 5000 + k;
	return n;
}

static void test_rx_ctx_bits(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_MAP, .rx_ctx_bits = 4 };
	struct lfv_sep_name names[200], bad, out;
	size_t len = sizeof(out);
	fi_addr_t fa[200], fb, first;
	union ibv_gid gid;
	struct fid_av *av;
	struct lfv_av *l;
	uint32_t i, k;

	for (i = 0; i < 200; i++)
		names[i] = sep_name_of(i, 3, 2);
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	l = lav(av);
	assert_int_equal(fi_av_insert(av, names, 200, fa, 0, NULL), 200);
	for (i = 0; i < 200; i++) {
		assert_int_equal(fa[i] >> 60, 0);
		for (k = 0; k < 3; k++)
			assert_int_equal(lfv_av_dest(l, fi_rx_addr(fa[i], (int)k,
								  4))->qpn,
					 names[i].rx_qpn[k]);
		assert_null(lfv_av_dest(l, fi_rx_addr(fa[i], 3, 4)));
		memcpy(gid.raw, names[i].base.gid, 16);
		for (k = 0; k < 2; k++)
			assert_int_equal(lfv_av_reverse(l, &gid,
							names[i].tx_qpn[k]),
					 fa[i]);
	}
	assert_true(l->sep_map.nbuckets >= 400);
	assert_int_equal(fi_av_lookup(av, fi_rx_addr(fa[7], 2, 4), &out, &len),
			 0);
	assert_int_equal(len, sizeof(out));
	assert_memory_equal(&out, &names[7], sizeof(out));

	/* Removal takes the aliases away too. */
	assert_int_equal(fi_av_remove(av, &fa[7], 1, 0), 0);
	memcpy(gid.raw, names[7].base.gid, 16);
	assert_int_equal(lfv_av_reverse(l, &gid, names[7].tx_qpn[1]),
			 FI_ADDR_NOTAVAIL);
	assert_int_equal(lfv_av_reverse(l, &gid, names[7].base.qpn),
			 FI_ADDR_NOTAVAIL);

	/* Reusing one slot many times: the generation wraps inside its 28
	 * bits and never reaches the context bits. */
	first = fa[8];
	for (i = 0; i < 70; i++) {
		assert_int_equal(fi_av_remove(av, &fa[8], 1, 0), 0);
		assert_int_equal(fi_av_insert(av, &names[8], 1, &fa[8], 0,
					      NULL), 1);
		assert_int_equal(fa[8] >> 60, 0);
		assert_true(fa[8] != first);
	}

	/* Bad counts and QP numbers; an ordinary name is one context. */
	bad = names[9];
	bad.nrx = LFV_SEP_MAX_CTX + 1;
	assert_int_equal(fi_av_insert(av, &bad, 1, &fb, 0, NULL), 0);
	bad = names[9];
	bad.ntx = 0;
	assert_int_equal(fi_av_insert(av, &bad, 1, &fb, 0, NULL), 0);
	bad = names[9];
	bad.rx_qpn[0] = 77;	/* must be the base name's */
	assert_int_equal(fi_av_insert(av, &bad, 1, &fb, 0, NULL), 0);
	bad = names[9];
	bad.tx_qpn[1] = 1U << 24;
	assert_int_equal(fi_av_insert(av, &bad, 1, &fb, 0, NULL), 0);
	memset(&bad, 0, sizeof(bad));
	bad.base = name_of(900);
	assert_int_equal(fi_av_insert(av, &bad, 1, &fb, 0, NULL), 1);
	assert_int_equal(lfv_av_dest(l, fb)->qpn, bad.base.qpn);
	assert_null(lfv_av_dest(l, fi_rx_addr(fb, 1, 4)));
	memcpy(gid.raw, bad.base.gid, 16);
	assert_int_equal(lfv_av_reverse(l, &gid, bad.base.qpn), fb);
	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
}

static void test_reverse(void **state)
{
	struct objs *o = *state;
	enum fi_av_type types[2] = { FI_AV_TABLE, FI_AV_MAP };
	struct lfv_ud_name names[1000], dup;
	fi_addr_t fa[1000], fdup[2];
	union ibv_gid gid;
	struct fid_av *av;
	struct lfv_av *l;
	uint32_t i;
	int t;

	for (i = 0; i < 1000; i++)
		names[i] = name_of(i);
	for (t = 0; t < 2; t++) {
		av = open_av(o, types[t], 0);
		l = lav(av);
		/* Enough entries to grow the buckets several times. */
		assert_int_equal(fi_av_insert(av, names, 1000, fa, 0, NULL),
				 1000);
		assert_true(l->nbuckets >= 1000);
		for (i = 0; i < 1000; i++) {
			memcpy(gid.raw, names[i].gid, 16);
			assert_int_equal(lfv_av_reverse(l, &gid, names[i].qpn),
					 fa[i]);
		}
		/* Same GID, other QP; same QP, other GID. */
		memcpy(gid.raw, names[5].gid, 16);
		assert_int_equal(lfv_av_reverse(l, &gid, 999999),
				 FI_ADDR_NOTAVAIL);
		memcpy(gid.raw, names[6].gid, 16);
		assert_int_equal(lfv_av_reverse(l, &gid, names[5].qpn),
				 FI_ADDR_NOTAVAIL);
		/* Removed: unknown. */
		assert_int_equal(fi_av_remove(av, &fa[5], 1, 0), 0);
		memcpy(gid.raw, names[5].gid, 16);
		assert_int_equal(lfv_av_reverse(l, &gid, names[5].qpn),
				 FI_ADDR_NOTAVAIL);
		/* Duplicates: the newest live one. */
		dup = names[7];
		assert_int_equal(fi_av_insert(av, &dup, 1, &fdup[0], 0, NULL),
				 1);
		assert_int_equal(fi_av_insert(av, &dup, 1, &fdup[1], 0, NULL),
				 1);
		assert_true(fdup[0] != fdup[1] && fdup[0] != fa[7]);
		memcpy(gid.raw, dup.gid, 16);
		assert_int_equal(lfv_av_reverse(l, &gid, dup.qpn), fdup[1]);
		assert_int_equal(fi_av_remove(av, &fdup[1], 1, 0), 0);
		assert_int_equal(lfv_av_reverse(l, &gid, dup.qpn), fdup[0]);
		assert_int_equal(fi_av_remove(av, &fdup[0], 1, 0), 0);
		assert_int_equal(lfv_av_reverse(l, &gid, dup.qpn), fa[7]);
		assert_int_equal(fake_open.ah, 999);
		assert_int_equal(fi_close(&av->fid), 0);
		assert_int_equal(fake_open.ah, 0);
	}
}

static void open_eq(struct objs *o)
{
	struct fi_eq_attr attr = { .wait_obj = FI_WAIT_NONE };

	assert_int_equal(fi_eq_open(o->fabric, &attr, &o->eq, NULL), 0);
}

static void test_event_insert(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, FI_EVENT);
	struct lfv_ud_name names[3] = { name_of(1), name_of(2), name_of(3) };
	struct fi_eq_err_entry err;
	struct fi_eq_entry entry;
	fi_addr_t fa[3];
	uint32_t event;
	int ctx, errs[3];

	/* Before an EQ is bound (fi_av(3)): -FI_ENOEQ, nothing inserted. */
	assert_int_equal(fi_av_insert(av, names, 3, fa, 0, &ctx), -FI_ENOEQ);
	assert_int_equal(fake_open.ah, 0);
	open_eq(o);
	assert_int_equal(fi_av_bind(av, &o->domain->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_av_bind(av, &o->eq->fid, 1), -FI_EBADFLAGS);
	assert_int_equal(fi_av_bind(av, &o->eq->fid, 0), 0);
	assert_int_equal(fi_av_bind(av, &o->eq->fid, 0), -FI_EINVAL);
	assert_int_equal(fi_close(&o->eq->fid), -FI_EBUSY);

	/* One bad address: its error first, then the completion. */
	names[1].qpn = 0;
	assert_int_equal(fi_av_insert(av, names, 3, fa, 0, &ctx), 0);
	assert_int_equal(fa[0], 0);
	assert_int_equal(fa[1], FI_ADDR_NOTAVAIL);
	assert_int_equal(fa[2], 1);
	assert_int_equal(fi_eq_read(o->eq, &event, &entry, sizeof(entry), 0),
			 -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	assert_int_equal(fi_eq_readerr(o->eq, &err, 0), sizeof(err));
	assert_ptr_equal(err.fid, &av->fid);
	assert_ptr_equal(err.context, &ctx);
	assert_int_equal(err.data, 1);
	assert_int_equal(err.err, FI_EINVAL);
	assert_int_equal(fi_eq_read(o->eq, &event, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(event, FI_AV_COMPLETE);
	assert_ptr_equal(entry.fid, &av->fid);
	assert_ptr_equal(entry.context, &ctx);
	assert_int_equal(entry.data, 2);
	assert_int_equal(fi_eq_read(o->eq, &event, &entry, sizeof(entry), 0),
			 -FI_EAGAIN);

	/* An empty insert still completes; FI_SYNC_ERR is for synchronous
	 * AVs only. */
	assert_int_equal(fi_av_insert(av, names, 0, NULL, 0, NULL), 0);
	assert_int_equal(fi_eq_read(o->eq, &event, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(event, FI_AV_COMPLETE);
	assert_int_equal(entry.data, 0);
	assert_null(entry.context);
	assert_int_equal(fi_av_insert(av, names, 1, fa, FI_SYNC_ERR, errs),
			 -FI_EBADFLAGS);

	/* Address handle failure, reported by event. */
	fake_verbs_fail(FAKE_CREATE_AH, EIO);
	assert_int_equal(fi_av_insert(av, &names[2], 1, NULL, 0, &ctx), 0);
	assert_int_equal(fi_eq_readerr(o->eq, &err, 0), sizeof(err));
	assert_int_equal(err.err, EIO);
	assert_int_equal(err.data, 0);
	assert_int_equal(fi_eq_read(o->eq, &event, &entry, sizeof(entry), 0),
			 sizeof(entry));
	assert_int_equal(entry.data, 0);

	assert_int_equal(fi_close(&av->fid), 0);
	assert_int_equal(fake_open.ah, 0);
	/* The EQ is free again (teardown closes it). */
}

static void test_bind_without_event(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name n = name_of(1);
	uint32_t event;
	fi_addr_t fa;
	char buf[64];

	/* Binding a synchronous AV is allowed and changes nothing. */
	open_eq(o);
	assert_int_equal(fi_av_bind(av, &o->eq->fid, 0), 0);
	assert_int_equal(fi_av_insert(av, &n, 1, &fa, 0, NULL), 1);
	assert_int_equal(fi_eq_read(o->eq, &event, buf, sizeof(buf), 0),
			 -FI_EAGAIN);
}

static void test_close_busy(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = open_av(o, FI_AV_TABLE, 0);
	struct lfv_av *l;

	assert_null(lfv_av_from_fid(NULL));
	assert_null(lfv_av_from_fid(&o->domain->fid));
	l = lav(av);
	/* Domain stays open while the AV is. */
	assert_int_equal(fi_close(&o->domain->fid), -FI_EBUSY);
	/* An endpoint holding the AV keeps it open. */
	lfv_av_hold(l);
	lfv_av_hold(l);
	assert_int_equal(fi_close(&av->fid), -FI_EBUSY);
	lfv_av_release(l);
	assert_int_equal(fi_close(&av->fid), -FI_EBUSY);
	lfv_av_release(l);
	test_close(av, o->domain);
	o->domain = NULL;
}

/* The fake SIDR answers as an lfverbs endpoint with name qp would. */
static void sidr_answers(const struct lfv_ud_name *qp)
{
	struct lfv_svc_reply r = {
		.magic = LFV_SVC_MAGIC,
		.version = LFV_SVC_VERSION,
		.name = *qp,
	};

	memcpy(fake_sidr.priv, &r, sizeof(r));
	fake_sidr.priv_len = sizeof(fake_sidr.priv);	/* SIDR pads */
	fake_sidr.ud.qp_num = qp->qpn;
	fake_sidr.ud.qkey = qp->qkey;
}

static struct lfv_ud_name service_name(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct lfv_ud_name n;

	sin.sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	assert_int_equal(lfv_ud_name_from_sockaddr((struct sockaddr *)&sin,
						   &n), 0);
	return n;
}

static void assert_sidr_dst(int call, const char *ip, uint16_t port)
{
	const struct sockaddr_in *sin = (const void *)&fake_sidr.dst[call];
	char buf[INET_ADDRSTRLEN];

	assert_int_equal(sin->sin_family, AF_INET);
	assert_string_equal(inet_ntop(AF_INET, &sin->sin_addr, buf,
				      sizeof(buf)), ip);
	assert_int_equal(ntohs(sin->sin_port), port);
}

/* A service name (from getinfo(node, service)) is inserted as the QP name
 * the endpoint listening there answers with: lookup, the reverse map and
 * the destination all see the QP. */
static void test_service_name_insert(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name svc = service_name("10.1.0.7", 7471);
	struct lfv_ud_name qp = name_of(6), got;
	char str[64];
	union ibv_gid gid;
	size_t len = sizeof(got);
	fi_addr_t fa = FI_ADDR_NOTAVAIL;

	sidr_answers(&qp);
	assert_int_equal(fi_av_insert(av, &svc, 1, &fa, 0, NULL), 1);
	assert_int_equal(fa, 0);
	assert_int_equal(fake_sidr.calls, 1);
	assert_sidr_dst(0, "10.1.0.7", 7471);
	assert_int_equal(fi_av_lookup(av, fa, &got, &len), 0);
	assert_memory_equal(&got, &qp, sizeof(qp));
	len = sizeof(str);
	assert_string_equal(fi_av_straddr(av, &svc, str, &len),
			    "fi_sockaddr_in://10.1.0.7:7471");
	assert_int_equal(len, strlen(str) + 1);
	memcpy(gid.raw, qp.gid, sizeof(gid.raw));
	assert_int_equal(lfv_av_reverse(lfv_av_from_fid(&av->fid), &gid,
					qp.qpn), fa);
	assert_int_equal(lfv_av_dest(lfv_av_from_fid(&av->fid), fa)->qpn,
			 qp.qpn);
}

/* Whatever answers a service resolution is checked: an answer that is not
 * an lfverbs endpoint's, or that names another QP or Q_Key than rdma_cm
 * reports, or a name that is itself a service name, fails the address
 * (-FI_EINVAL) and creates no address handle. */
static void test_service_answer_checked(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name svc = service_name("10.1.0.7", 7471);
	struct lfv_ud_name qp = name_of(6);
	struct lfv_svc_reply *r = (void *)fake_sidr.priv;
	fi_addr_t fa;
	int err, i;

	for (i = 0; i < 6; i++) {
		sidr_answers(&qp);
		switch (i) {
		case 0: r->magic++; break;
		case 1: r->version++; break;
		case 2: fake_sidr.ud.qp_num++; break;
		case 3: fake_sidr.ud.qkey++; break;
		case 4: r->name.flags = LFV_UD_NAME_SERVICE; break;
		case 5: fake_sidr.priv_len = sizeof(*r) - 1; break;
		}
		err = 0;
		assert_int_equal(fi_av_insert(av, &svc, 1, &fa, FI_SYNC_ERR,
					      &err), 0);
		assert_int_equal(err, FI_EINVAL);
		assert_int_equal(fa, FI_ADDR_NOTAVAIL);
		assert_int_equal(fake_open.ah, 0);
	}
	/* An unresolved service name is never taken as a QP name. */
	svc.qpn = 42;
	fake_sidr.event = RDMA_CM_EVENT_UNREACHABLE;
	fake_sidr.status = -ETIMEDOUT;
	assert_int_equal(fi_av_insert(av, &svc, 1, &fa, FI_SYNC_ERR, &err), 0);
	assert_int_equal(err, FI_ETIMEDOUT);
}

/* Nobody listens at the port yet: tried again until svc_timeout, then
 * -FI_ECONNREFUSED. An address no device routes to: -FI_EHOSTUNREACH at
 * once. */
static void test_service_refused_unreachable(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name svc = service_name("10.1.0.7", 7471);
	size_t saved = lfv_params.svc_timeout;
	fi_addr_t fa;
	int err = 0;

	lfv_params.svc_timeout = 300;
	fake_sidr.event = RDMA_CM_EVENT_UNREACHABLE;
	fake_sidr.status = 1;		/* IB_SIDR_UNSUPPORTED */
	assert_int_equal(fi_av_insert(av, &svc, 1, &fa, FI_SYNC_ERR, &err), 0);
	assert_int_equal(err, FI_ECONNREFUSED);
	assert_true(fake_sidr.calls > 1);
	assert_true(fake_sidr.calls < 20);

	svc = service_name("192.0.2.1", 7471);
	fake_sidr.calls = 0;
	assert_int_equal(fi_av_insert(av, &svc, 1, &fa, FI_SYNC_ERR, &err), 0);
	assert_int_equal(err, FI_EHOSTUNREACH);
	assert_int_equal(fake_sidr.calls, 0);
	lfv_params.svc_timeout = saved;
	assert_int_equal(fake_open.channel, 0);
}

/* fi_av_insertsvc and fi_av_insertsym resolve hosts and services: nodes
 * by numeric address, services counted up, node by node. */
static void test_insertsvc_insertsym(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct lfv_ud_name qp = name_of(9);
	fi_addr_t fa[4];

	sidr_answers(&qp);
	assert_int_equal(fi_av_insertsvc(av, "10.1.0.7", "7471", fa, 0, NULL),
			 1);
	assert_sidr_dst(0, "10.1.0.7", 7471);
	assert_int_equal(fi_av_insertsym(av, "10.1.0.8", 2, "9000", 2, fa, 0,
					 NULL), 4);
	assert_int_equal(fake_sidr.calls, 5);
	assert_sidr_dst(1, "10.1.0.8", 9000);
	assert_sidr_dst(2, "10.1.0.8", 9001);
	assert_sidr_dst(3, "10.1.0.9", 9000);
	assert_sidr_dst(4, "10.1.0.9", 9001);
	assert_int_equal(fa[3], 4);

	/* What cannot be counted or named. */
	assert_int_equal(fi_av_insertsym(av, "10.1.0.8", 0, "9000", 1, fa, 0,
					 NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insertsym(av, "10.1.0.8", 1, "http", 2, fa, 0,
					 NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insertsym(av, "nodigits", 2, "9000", 1, fa, 0,
					 NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insertsym(av, "10.1.0.8", 1, "65535", 2, fa, 0,
					 NULL), -FI_EINVAL);
	assert_int_equal(fi_av_insertsvc(av, NULL, "9000", fa, 0, NULL),
			 -FI_EINVAL);
	assert_int_equal(fake_sidr.calls, 5);
}

static void test_unimplemented(void **state)
{
	struct objs *o = *state;
	struct fid_av *av = o->av;
	struct fi_av_set_attr set_attr = { 0 };
	struct fid_av_set *set;

	assert_int_equal(fi_av_set(av, &set_attr, &set, NULL), -FI_ENOSYS);
	assert_int_equal(fi_control(&av->fid, FI_GETWAIT, NULL), -FI_ENOSYS);
}

static void test_out_of_memory(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .type = FI_AV_TABLE, .count = 1 };
	struct lfv_ud_name names[65];
	fi_addr_t fa[65];
	struct fid_av *av;
	uint32_t i;
	int err;

	/* fi_av_open: the AV itself, then its first segment. */
	calloc_ok = 0;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_ENOMEM);
	calloc_ok = 1;
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), -FI_ENOMEM);
	assert_int_equal(attr.count, 1);

	/* A new segment: segment 0 holds 64, the 65th needs segment 1. */
	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	for (i = 0; i < 65; i++)
		names[i] = name_of(i);
	assert_int_equal(fi_av_insert(av, names, 64, fa, 0, NULL), 64);
	calloc_ok = 0;
	assert_int_equal(fi_av_insert(av, &names[64], 1, fa, FI_SYNC_ERR,
				      &err), 0);
	assert_int_equal(err, FI_ENOMEM);
	assert_int_equal(fake_open.ah, 64);
	assert_int_equal(fi_av_insert(av, &names[64], 1, fa, 0, NULL), 1);
	assert_int_equal(fa[0], 64);
	assert_int_equal(fi_close(&av->fid), 0);
}

static void test_event_queue_full_undoes(void **state)
{
	struct objs *o = *state;
	enum fi_av_type types[2] = { FI_AV_TABLE, FI_AV_MAP };
	struct lfv_ud_name names[3] = { name_of(1), name_of(2), name_of(3) };
	struct fi_eq_err_entry err;
	struct fi_eq_entry entry;
	struct fid_av *av;
	fi_addr_t fa[3];
	uint32_t event;
	int t;

	open_eq(o);
	for (t = 0; t < 2; t++) {
		av = open_av(o, types[t], FI_EVENT);
		assert_int_equal(fi_av_bind(av, &o->eq->fid, 0), 0);
		/* Two handles, then the completion cannot be queued: the
		 * insert is undone. */
		calloc_ok = 2;
		assert_int_equal(fi_av_insert(av, names, 2, fa, 0, NULL),
				 -FI_ENOMEM);
		assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
		assert_int_equal(fa[1], FI_ADDR_NOTAVAIL);
		assert_int_equal(fake_open.ah, 0);
		assert_int_equal(fi_eq_read(o->eq, &event, &entry,
					    sizeof(entry), 0), -FI_EAGAIN);

		/* The error event of the second address cannot be queued:
		 * the first is undone, the third never tried. */
		names[1].qpn = 0;
		calloc_ok = 1;
		fa[2] = 12345;
		assert_int_equal(fi_av_insert(av, names, 3, fa, 0, NULL),
				 -FI_ENOMEM);
		assert_int_equal(fa[0], FI_ADDR_NOTAVAIL);
		assert_int_equal(fa[2], FI_ADDR_NOTAVAIL);
		assert_int_equal(fake_open.ah, 0);
		assert_int_equal(fi_eq_readerr(o->eq, &err, 0), -FI_EAGAIN);
		names[1].qpn = 3;

		/* And it works again. */
		assert_int_equal(fi_av_insert(av, names, 3, fa, 0, NULL), 0);
		assert_int_equal(fi_eq_read(o->eq, &event, &entry,
					    sizeof(entry), 0), sizeof(entry));
		assert_int_equal(entry.data, 3);
		assert_non_null(lfv_av_dest(lav(av), fa[2]));
		assert_int_equal(fi_close(&av->fid), 0);
		assert_int_equal(fake_open.ah, 0);
	}
}

/* ---- lfv_av_dest racing inserts ------------------------------------------ */

#define RACE_N 20000

struct race {
	struct fid_av *av;
	struct lfv_av *l;
	fi_addr_t fa[RACE_N];		/* written before published moves */
	lfv_atomic32_t published;	/* entries whose fa[] is final */
	lfv_atomic32_t bad;		/* reader failures (no asserts off main) */
	int insert_ret;
};

static void *race_insert(void *arg)
{
	struct race *r = arg;
	struct lfv_ud_name n;
	uint32_t i;

	for (i = 0; i < RACE_N; i++) {
		n = name_of(i);
		if (fi_av_insert(r->av, &n, 1, &r->fa[i], 0, NULL) != 1) {
			r->insert_ret = -1;
			break;
		}
		/* Release: pairs with the reader's acquire of published;
		 * fa[i] is written before it is announced. */
		lfv_store_release32(&r->published, i + 1);
	}
	/* Release: as above, so the reader stops even after a failure. */
	lfv_store_release32(&r->published, RACE_N);
	return NULL;
}

static void *race_read(void *arg)
{
	struct race *r = arg;
	const struct lfv_av_dest *d;
	uint32_t p, j, k, rounds = 0;

	do {
		/* Acquire: pairs with the release in race_insert. */
		p = lfv_load_acquire32(&r->published);
		for (k = 0; k < 64 && p; k++) {
			/* The newest, and a spread of older ones. */
			j = k ? (uint32_t)(((uint64_t)p * k * 2654435761U) % p)
			      : p - 1;
			d = lfv_av_dest(r->l, r->fa[j]);
			if (!d || d->qpn != j + 1 || d->qkey != 0x11111111 ||
			    !d->ah)
				atomic_fetch_add(&r->bad, 1);
		}
		/* Table indexes not yet announced: either not there yet or
		 * already complete, never half-written. */
		if (r->l->type == FI_AV_TABLE) {
			for (j = p; j < p + 8 && j < RACE_N; j++) {
				d = lfv_av_dest(r->l, j);
				if (d && (d->qpn != j + 1 || !d->ah))
					atomic_fetch_add(&r->bad, 1);
			}
		}
		rounds++;
	} while (p < RACE_N);
	(void)rounds;
	return NULL;
}

static void test_concurrent_insert_dest(void **state)
{
	struct objs *o = *state;
	enum fi_av_type types[2] = { FI_AV_TABLE, FI_AV_MAP };
	struct race *r = calloc(1, sizeof(*r));
	pthread_t writer, reader;
	uint32_t i;
	int t;

	assert_non_null(r);
	for (t = 0; t < 2; t++) {
		memset(r, 0, sizeof(*r));
		/* A small first segment: the race crosses many segment
		 * publications. */
		r->av = open_av(o, types[t], 0);
		r->l = lav(r->av);
		assert_int_equal(pthread_create(&reader, NULL, race_read, r), 0);
		assert_int_equal(pthread_create(&writer, NULL, race_insert, r),
				 0);
		pthread_join(writer, NULL);
		pthread_join(reader, NULL);
		assert_int_equal(r->insert_ret, 0);
		assert_int_equal(lfv_load_relaxed32(&r->bad), 0);
		for (i = 0; i < RACE_N; i++)
			assert_int_equal(lfv_av_dest(r->l, r->fa[i])->qpn, i + 1);
		assert_int_equal(fake_open.ah, RACE_N);
		assert_int_equal(fi_close(&r->av->fid), 0);
		assert_int_equal(fake_open.ah, 0);
	}
	free(r);
}


/* ---- named (shared) AVs ------------------------------------------------- */

/* The segment's header as lfv_av_shm.c lays it out (version 1): the
 * offsets the corruption tests write at. */
#define SHM_VERSION_OFF 8
#define SHM_CAPACITY_OFF 20
#define SHM_NAME_SIZE_OFF 24
#define SHM_SEQ_OFF 48
#define SHM_HDR_SIZE 64

static const char *av_name(void)
{
	static char name[64];

	snprintf(name, sizeof(name), "lfv-unit-%d", (int)getpid());
	return name;
}

/* A test that failed half-way leaves its segment (its creator, this
 * process, lives): the next named test starts without it. */
static void drop_segment(void)
{
	char path[LFV_AV_SHM_PATH_MAX];

	assert_int_equal(lfv_av_shm_path(av_name(), path, sizeof(path)), 0);
	shm_unlink(path);
}

static struct fid_av *open_named(struct objs *o, enum fi_av_type type,
				 uint64_t flags, void **map_addr)
{
	struct fi_av_attr attr = { .type = type, .flags = flags,
				   .name = av_name(), .count = 4 };
	struct fid_av *av;

	assert_int_equal(fi_av_open(o->domain, &attr, &av, NULL), 0);
	assert_non_null(attr.map_addr);
	*map_addr = attr.map_addr;
	return av;
}

/* The segment of av_name(), mapped read-write to corrupt it. */
static uint8_t *map_segment(size_t *size)
{
	char path[LFV_AV_SHM_PATH_MAX];
	uint8_t *p;
	off_t end;
	int fd;

	assert_int_equal(lfv_av_shm_path(av_name(), path, sizeof(path)), 0);
	fd = shm_open(path, O_RDWR, 0);
	assert_true(fd >= 0);
	end = lseek(fd, 0, SEEK_END);
	assert_true(end > SHM_HDR_SIZE);
	*size = (size_t)end;
	p = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	return p;
}

static bool segment_exists(void)
{
	char path[LFV_AV_SHM_PATH_MAX];
	int fd;

	assert_int_equal(lfv_av_shm_path(av_name(), path, sizeof(path)), 0);
	fd = shm_open(path, O_RDONLY, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static void test_named_table_shared(void **state)
{
	struct objs *o = *state;
	struct lfv_ud_name names[3] = { name_of(10), name_of(11), name_of(12) };
	struct fi_av_attr attr = { .name = av_name(), .flags = FI_READ };
	fi_addr_t fa[3], *wmap, *rmap;
	const struct lfv_av_dest *d;
	struct lfv_ud_name got;
	size_t len = sizeof(got);
	struct fid_av *w, *r;
	uint64_t removals;
	void *m;

	drop_segment();
	assert_true(o->info->caps & FI_SHARED_AV);
	/* No segment yet: nothing to open read-only. */
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_ENOENT);
	assert_null(attr.map_addr);
	w = open_named(o, FI_AV_TABLE, 0, &m);
	wmap = m;
	assert_true(segment_exists());
	assert_int_equal(lav(w)->seg0_shift, LFV_AV_SEG0_SHIFT_MIN);
	/* The reader takes the creator's type (asked: UNSPEC). */
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), 0);
	assert_int_equal(attr.type, FI_AV_TABLE);
	rmap = attr.map_addr;
	assert_non_null(rmap);
	assert_true(lav(r)->read_only);
	assert_int_equal(fi_av_insert(r, names, 1, fa, 0, NULL),
			 -FI_EOPNOTSUPP);
	assert_int_equal(fi_av_remove(r, fa, 1, 0), -FI_EOPNOTSUPP);
	assert_int_equal(rmap[0], FI_ADDR_NOTAVAIL);

	assert_int_equal(fi_av_insert(w, names, 3, fa, 0, NULL), 3);
	assert_int_equal(wmap[0], 0);
	/* Inserted by the creator after the reader opened: the reader's
	 * first use brings them in, at the creator's fi_addr_t values. */
	assert_int_equal(rmap[0], 0);
	assert_int_equal(rmap[2], 2);
	d = lfv_av_dest(lav(r), rmap[1]);
	assert_non_null(d);
	assert_int_equal(d->qpn, names[1].qpn);
	assert_ptr_not_equal(d->ah, lfv_av_dest(lav(w), fa[1])->ah);
	assert_int_equal(fi_av_lookup(r, 2, &got, &len), 0);
	assert_memory_equal(&got, &names[2], sizeof(got));
	assert_int_equal(lfv_av_reverse(lav(r), (union ibv_gid *)names[0].gid,
					names[0].qpn), 0);
	assert_int_equal(fake_open.ah, 6);	/* 3 per process */

	/* A removal reaches the reader at its next use. */
	removals = lfv_av_removals(lav(r));
	assert_int_equal(fi_av_remove(w, &fa[1], 1, 0), 0);
	assert_int_equal(rmap[1], FI_ADDR_NOTAVAIL);
	assert_int_equal(lfv_av_removals(lav(r)), removals + 1);
	assert_null(lfv_av_dest(lav(r), 1));
	assert_non_null(lfv_av_dest(lav(r), 2));
	assert_int_equal(fake_open.ah, 4);

	assert_int_equal(fi_close(&r->fid), 0);
	assert_true(segment_exists());
	assert_int_equal(fi_close(&w->fid), 0);
	assert_false(segment_exists());		/* the creator unlinks */
	assert_int_equal(fake_open.ah, 0);
}

static void test_named_map_generations(void **state)
{
	struct objs *o = *state;
	struct lfv_ud_name n1 = name_of(1), n2 = name_of(2);
	fi_addr_t a1, a2, *rmap;
	struct fid_av *w, *r;
	void *m;

	drop_segment();
	w = open_named(o, FI_AV_MAP, 0, &m);
	r = open_named(o, FI_AV_UNSPEC, FI_READ, &m);
	rmap = m;
	assert_int_equal(lav(r)->type, FI_AV_MAP);
	assert_int_equal(fi_av_insert(w, &n1, 1, &a1, 0, NULL), 1);
	assert_non_null(lfv_av_dest(lav(r), a1));
	/* The slot reused with the next generation: the old value is dead
	 * in the reader too, the new one names the new entry. */
	assert_int_equal(fi_av_remove(w, &a1, 1, 0), 0);
	assert_int_equal(fi_av_insert(w, &n2, 1, &a2, 0, NULL), 1);
	assert_int_equal((uint32_t)a2, (uint32_t)a1);
	assert_int_not_equal(a2, a1);
	assert_int_equal(rmap[(uint32_t)a2], a2);
	assert_null(lfv_av_dest(lav(r), a1));
	assert_int_equal(lfv_av_dest(lav(r), a2)->qpn, n2.qpn);
	/* A reader asking for the other type finds none. */
	{
		struct fi_av_attr attr = { .name = av_name(), .flags = FI_READ,
					   .type = FI_AV_TABLE };
		struct fid_av *t;

		assert_int_equal(fi_av_open(o->domain, &attr, &t, NULL),
				 -FI_EINVAL);
	}
	test_close(r, w);
}

/* One writer per name; names that cannot be a segment's. */
static void test_named_open_limits(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .name = av_name() };
	struct lfv_ud_name names[65];
	fi_addr_t fa[65];
	char long_name[300];
	struct fid_av *w, *w2;
	uint32_t i;
	void *m;

	drop_segment();
	w = open_named(o, FI_AV_TABLE, 0, &m);
	assert_int_equal(fi_av_open(o->domain, &attr, &w2, NULL), -FI_ENOSYS);
	/* Capacity: count 4 rounds to segment 0's 64 entries. */
	for (i = 0; i < 65; i++)
		names[i] = name_of(i);
	assert_int_equal(fi_av_insert(w, names, 65, fa, 0, NULL), 64);
	assert_int_equal(fa[64], FI_ADDR_NOTAVAIL);
	assert_int_equal(fi_close(&w->fid), 0);

	attr.name = "";
	assert_int_equal(fi_av_open(o->domain, &attr, &w2, NULL), -FI_EINVAL);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	attr.name = long_name;
	assert_int_equal(fi_av_open(o->domain, &attr, &w2, NULL), -FI_EINVAL);
	/* Other bytes are escaped, not refused. */
	attr.name = "a/b c";
	assert_int_equal(fi_av_open(o->domain, &attr, &w2, NULL), 0);
	assert_int_equal(fi_close(&w2->fid), 0);
}

/* A segment is another process's memory: a header that does not fit is
 * refused, a slot that does not check out is dropped and counted. */
static void test_named_bad_segment(void **state)
{
	struct objs *o = *state;
	struct fi_av_attr attr = { .name = av_name(), .flags = FI_READ };
	struct lfv_ud_name names[2] = { name_of(1), name_of(2) };
	struct lfv_ud_name bad = name_of(3);
	uint32_t *version, *capacity, *name_size, saved;
	uint64_t *seq, *addrs;
	fi_addr_t fa[2];
	struct fid_av *w, *r;
	size_t size;
	uint8_t *seg;
	void *m;

	drop_segment();
	w = open_named(o, FI_AV_TABLE, 0, &m);
	seg = map_segment(&size);
	version = (uint32_t *)(seg + SHM_VERSION_OFF);
	capacity = (uint32_t *)(seg + SHM_CAPACITY_OFF);
	name_size = (uint32_t *)(seg + SHM_NAME_SIZE_OFF);
	seq = (uint64_t *)(seg + SHM_SEQ_OFF);
	addrs = (uint64_t *)(seg + SHM_HDR_SIZE);

	saved = *version;
	*version = saved + 1;
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_EINVAL);
	*version = saved;
	saved = *capacity;
	*capacity = saved * 2;		/* beyond the file */
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_EINVAL);
	*capacity = 3;			/* not a power of two */
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_EINVAL);
	*capacity = saved;
	saved = *name_size;
	*name_size = 8;
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_EINVAL);
	*name_size = saved;
	attr.rx_ctx_bits = 4;		/* scalable names: other slots */
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), -FI_EINVAL);
	attr.rx_ctx_bits = 0;
	assert_int_equal(fi_av_open(o->domain, &attr, &r, NULL), 0);

	assert_int_equal(fi_av_insert(w, names, 2, fa, 0, NULL), 2);
	/* Slot 0 claims index 5; slot 1's name gets QP number 0. */
	addrs[0] = 5;
	bad.qpn = 0;
	memcpy(seg + SHM_HDR_SIZE + 64 * sizeof(uint64_t) + saved, &bad,
	       sizeof(bad));
	*seq += 2;
	assert_null(lfv_av_dest(lav(r), 5));
	assert_null(lfv_av_dest(lav(r), 0));
	assert_null(lfv_av_dest(lav(r), 1));
	assert_int_equal(lav(r)->shm_bad, 2);
	assert_int_equal(fake_open.ah, 2);	/* the creator's only */

	munmap(seg, size);
	test_close(r, w);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TA(fn) cmocka_unit_test_setup_teardown(fn, setup_table_av, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_close_types),
		T(test_open_bad_attr),
		T(test_open_domain_constraints),
		T(test_open_on_msg_domain),
		T(test_insert_lookup_table),
		T(test_ib_link_layer_sets_dlid),
		TA(test_lookup_truncation),
		TA(test_straddr),
		T(test_remove_and_reinsert_table),
		T(test_map_generations),
		TA(test_bad_addresses),
		T(test_ah_failure),
		T(test_destroy_ah_failure),
		T(test_reverse),
		T(test_rx_ctx_bits),
		T(test_event_insert),
		TA(test_bind_without_event),
		T(test_close_busy),
		TA(test_service_name_insert),
		TA(test_service_answer_checked),
		TA(test_service_refused_unreachable),
		TA(test_insertsvc_insertsym),
		TA(test_unimplemented),
		T(test_out_of_memory),
		T(test_event_queue_full_undoes),
		T(test_concurrent_insert_dest),
		T(test_named_table_shared),
		T(test_named_map_generations),
		T(test_named_open_limits),
		T(test_named_bad_segment),
	};

	return cmocka_run_group_tests_name("av", tests, NULL, NULL);
}
