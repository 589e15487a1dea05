/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Closing a row of libfabric objects, shared by the unit and functional
 * tests: test_close(a, b, ...) closes each one that is open (not NULL) in
 * the order given, children before what they were opened on, asserting
 * that each close succeeds. Include after <cmocka.h> and libfabric's
 * headers.
 */
#ifndef TEST_CLOSE_H
#define TEST_CLOSE_H

#include <stddef.h>

/* objs: libfabric objects (struct fid_ep *, struct fid_cq *, ...), each
 * beginning with its struct fid, which is how the API closes them all;
 * passing &obj->fid instead would touch a NULL object. */
static inline void test_close_objs(void *const *objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (objs[i])
			assert_int_equal(fi_close((struct fid *)objs[i]), 0);
}

#define test_close(...)							\
	test_close_objs((void *const[]){ __VA_ARGS__ },			\
			sizeof((void *const[]){ __VA_ARGS__ }) /	\
				sizeof(void *))

#endif /* TEST_CLOSE_H */
