/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Set-up shared by the unit tests that open lfverbs objects on the fake
 * verbs (fake_verbs.h). Include after <cmocka.h>, fake_verbs.h and
 * lfv_prov.h.
 */
#ifndef UNIT_FAKE_H
#define UNIT_FAKE_H

/* A fresh fake world: lfverbs' device list dropped, the fakes reset, one
 * device fake0 at 10.1.0.5/24, which it returns. */
static inline struct fake_dev *unit_fake_device(void)
{
	lfv_devices_release();
	fake_verbs_reset();
	return fake_verbs_add("fake0", "10.1.0.5", 24);
}

/* lfverbs' answers to hints (which it frees; NULL: any) in *info and a
 * fabric on the first. */
static inline void unit_fabric_open(struct fi_info *hints,
				    struct fi_info **info,
				    struct fid_fabric **fabric)
{
	assert_int_equal(lfv_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				     info), 0);
	fi_freeinfo(hints);
	assert_int_equal(lfv_fabric_open((*info)->fabric_attr, fabric, NULL),
			 0);
}

/* After the last object is closed: lfverbs gives the devices back, and
 * every fake verbs object it opened (context, PD, MR, AH) is closed; then
 * the fakes are reset for the next test. */
static inline void unit_fake_release(void)
{
	lfv_devices_release();
	assert_int_equal(fake_open.ctx, 0);
	assert_int_equal(fake_open.pd, 0);
	assert_int_equal(fake_open.mr, 0);
	assert_int_equal(fake_open.ah, 0);
	fake_verbs_reset();
}

#endif /* UNIT_FAKE_H */
