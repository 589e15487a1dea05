/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The libfabric version adapter (include/lfv_fi_compat.h): which peer
 * layout each core version speaks, that configure's findings agree with
 * the headers' version, and the load-time guard that refuses FI_PEER when
 * the running core speaks another layout than the one built for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rdma/fi_errno.h>

#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_fi_compat.h"
#include "lfv_peer_srx.h"

static lfv_atomic32_t parent_ref;

static void test_layout_of_versions(void **state)
{
	static const struct {
		int major, minor;
		enum lfv_peer_layout layout;
	} v[] = {
		{ 1, 17, LFV_PEER_LAYOUT_1_17 }, { 1, 18, LFV_PEER_LAYOUT_1_17 },
		{ 1, 19, LFV_PEER_LAYOUT_1_19 }, { 1, 22, LFV_PEER_LAYOUT_1_19 },
		{ 2, 0, LFV_PEER_LAYOUT_2_0 }, { 2, 2, LFV_PEER_LAYOUT_2_0 },
		{ 2, 3, LFV_PEER_LAYOUT_2_3 }, { 2, 6, LFV_PEER_LAYOUT_2_3 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(lfv_peer_layout_of(FI_VERSION(v[i].major,
							       v[i].minor)),
				 v[i].layout);
}

/* What configure found in the headers is the layout of their version: a
 * detection that went wrong (a member misnamed, a header not found) would
 * make the plugin write one layout and the guard expect another. */
static void test_detected_layout_is_the_headers(void **state)
{
	(void)state;
	assert_int_equal(LFV_PEER_LAYOUT,
			 lfv_peer_layout_of(LFV_FI_HEADER_VERSION));
}

/* A core version whose layout is not the one built for. */
static uint32_t other_core(void)
{
	return LFV_PEER_LAYOUT == LFV_PEER_LAYOUT_1_17 ? FI_VERSION(2, 1) :
							 FI_VERSION(1, 17);
}

/* A core version of another minor number, with the layout built for. */
static uint32_t same_layout_other_core(void)
{
	uint32_t up = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION + 1);

	return lfv_peer_layout_of(up) == LFV_PEER_LAYOUT ?
		up : FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION - 1);
}

static ssize_t owner_write(struct fid_peer_cq *cq, void *context,
			   uint64_t flags, size_t len, void *buf,
			   uint64_t data, uint64_t tag, fi_addr_t src)
{
	(void)cq, (void)context, (void)flags, (void)len, (void)buf;
	(void)data, (void)tag, (void)src;
	return 0;
}

static ssize_t owner_writeerr(struct fid_peer_cq *cq,
			      const struct fi_cq_err_entry *err)
{
	(void)cq, (void)err;
	return 0;
}

static struct fi_ops_cq_owner owner_ops = {
	.size = sizeof(struct fi_ops_cq_owner),
	.write = owner_write,
	.writeerr = owner_writeerr,
};

/* Opens a CQ as a peer of a fake owner: its return code. */
static int open_peer_cq(struct fid_cq **cq)
{
	static struct fid_peer_cq owner = { .owner_ops = &owner_ops };
	struct fi_peer_cq_context pctx = { .size = sizeof(pctx), .cq = &owner };
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .flags = FI_PEER };
	struct lfv_cq_params p = { .api_version = LFV_FI_HEADER_VERSION,
				   .parent_ref = &parent_ref };

	return lfv_cq_open(&attr, &pctx, &p, cq);
}

/* fi_export_fid on fid: its return code. */
static int export(struct fid *fid, struct fid **out)
{
	struct fi_fid_export exp = { .fid = out };

	return fi_control(fid, FI_EXPORT_FID, &exp);
}

/* A counter: lfv_cntr_open's return code. */
static int open_cntr(uint64_t flags, void *context, struct fid_cntr **cntr)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP,
				     .flags = flags };

	return lfv_cntr_open(&attr, context, &parent_ref, cntr);
}

/* A counter exported to a peer, and a peer counter on it; with the peer
 * layout refused (or before 1.19), neither opens. */
static void check_peer_cntrs(bool allowed)
{
	struct fid_cntr *owner = NULL, *peer = NULL;
	struct fi_peer_cntr_context pctx = { .size = sizeof(pctx) };
	struct fid *exported = NULL;
	bool works = allowed && LFV_PEER_CNTR_SUPPORTED;

	assert_int_equal(open_cntr(0, NULL, &owner), 0);
	assert_int_equal(export(&owner->fid, &exported),
			 works ? 0 : !allowed ? -FI_EINVAL : -FI_ENOSYS);
	pctx.cntr = works ? lfv_container_of(exported, struct fid_peer_cntr, fid) :
			    &lfv_cntr_from_fid(owner)->peer_cntr;
	assert_int_equal(open_cntr(FI_PEER, &pctx, &peer),
			 works ? 0 : -FI_EINVAL);
	if (works) {
		assert_int_equal(exported->fclass, LFV_CLASS_PEER_CNTR);
		/* The peer's updates are the owner's count. */
		lfv_cntr_inc(lfv_cntr_from_fid(peer));
		lfv_cntr_inc(lfv_cntr_from_fid(peer));
		lfv_cntr_inc_err(lfv_cntr_from_fid(peer));
		assert_int_equal(fi_cntr_read(owner), 2);
		assert_int_equal(fi_cntr_readerr(owner), 1);
		assert_int_equal(fi_cntr_read(peer), 0);
		assert_int_equal(fi_cntr_add(peer, 1), -FI_ENOSYS);
		assert_int_equal(fi_cntr_wait(peer, 1, 0), -FI_ENOSYS);
		assert_int_equal(fi_cntr_read(owner), 2);
		/* A peer counter has no count to hand out. */
		assert_int_equal(export(&peer->fid, &exported), -FI_EINVAL);
		assert_int_equal(fi_close(&peer->fid), 0);
		/* No owner, or one without ops: refused. */
		pctx.cntr = NULL;
		assert_int_equal(open_cntr(FI_PEER, &pctx, &peer), -FI_EINVAL);
		assert_int_equal(open_cntr(FI_PEER, NULL, &peer), -FI_EINVAL);
	}
	assert_int_equal(fi_close(&owner->fid), 0);
}

/* Every FI_PEER open and export, with whether it is expected to work. */
static void check_peer_opens(bool allowed)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct lfv_cq_params p = { .api_version = LFV_FI_HEADER_VERSION,
				   .parent_ref = &parent_ref };
	struct fi_rx_attr rx = { .iov_limit = 4 };
	struct fid_cq *cq = NULL, *own = NULL;
	struct fid_ep *srx = NULL;
	struct fid *out = NULL;
	int want = allowed ? 0 : -FI_EINVAL;

	assert_int_equal(open_peer_cq(&cq), want);
	if (cq)
		assert_int_equal(fi_close(&cq->fid), 0);
	/* Our CQ as an owner, our SRX as one: opened always (lfverbs uses
	 * them itself), exported to a peer only in the built layout. */
	assert_int_equal(lfv_cq_open(&attr, NULL, &p, &own), 0);
	assert_int_equal(export(&own->fid, &out), want);
	assert_int_equal(lfv_peer_srx_open(&rx, FI_TAGGED, NULL, &srx), 0);
	out = NULL;
	assert_int_equal(export(&srx->fid, &out), want);
	if (out)	/* the export holds the SRX open */
		assert_int_equal(fi_close(out), 0);
	assert_int_equal(fi_close(&srx->fid), 0);
	assert_int_equal(fi_close(&own->fid), 0);
	check_peer_cntrs(allowed);
}

static void test_guard_refuses_peer_on_other_layout(void **state)
{
	(void)state;
	assert_true(lfv_peer_check_core(LFV_FI_HEADER_VERSION));
	assert_true(lfv_peer_allowed());
	check_peer_opens(true);

	assert_false(lfv_peer_check_core(other_core()));
	assert_false(lfv_peer_allowed());
	check_peer_opens(false);

	/* Another minor version of the same layout: allowed again. */
	assert_true(lfv_peer_check_core(same_layout_other_core()));
	check_peer_opens(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_of_versions),
		cmocka_unit_test(test_detected_layout_is_the_headers),
		cmocka_unit_test(test_guard_refuses_peer_on_other_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
