/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The fixed-size object pool: bad input, LIFO reuse, growth in chunks,
 * the bound, alignment, and fini freeing objects still in use (the leak
 * checkers of the ASan and valgrind runs see the rest). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_errno.h>

#include "lfv_pool.h"

static void test_init_bad_input(void **state)
{
	struct lfv_pool pool, before;

	(void)state;
	memset(&pool, 0x5a, sizeof(pool));
	before = pool;
	assert_int_equal(lfv_pool_init(NULL, 8, 4, 0), -FI_EINVAL);
	assert_int_equal(lfv_pool_init(&pool, 0, 4, 0), -FI_EINVAL);
	assert_int_equal(lfv_pool_init(&pool, 8, 0, 0), -FI_EINVAL);
	assert_int_equal(lfv_pool_init(&pool, SIZE_MAX, 4, 0), -FI_EINVAL);
	assert_int_equal(lfv_pool_init(&pool, SIZE_MAX / 4, 8, 0), -FI_EINVAL);
	/* A failed init leaves the pool untouched. */
	assert_memory_equal(&pool, &before, sizeof(pool));
}

static void test_lazy_growth_in_chunks(void **state)
{
	struct lfv_pool pool;
	void *objs[10];
	int i;

	(void)state;
	assert_int_equal(lfv_pool_init(&pool, 24, 4, 0), 0);
	assert_int_equal(lfv_pool_capacity(&pool), 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(lfv_pool_get(&pool, &objs[i]), 0);
		assert_non_null(objs[i]);
		/* Writable over the whole requested size. */
		memset(objs[i], i, 24);
		/* Chunks of 4: 4, 8, then 12 objects. */
		assert_int_equal(lfv_pool_capacity(&pool),
				 (size_t)((i / 4) + 1) * 4);
	}
	assert_int_equal(lfv_pool_in_use(&pool), 10);
	for (i = 0; i < 10; i++) {
		assert_int_equal(*(unsigned char *)objs[i], i);
		lfv_pool_put(&pool, objs[i]);
	}
	assert_int_equal(lfv_pool_in_use(&pool), 0);
	assert_int_equal(lfv_pool_capacity(&pool), 12);
	lfv_pool_fini(&pool);
	assert_int_equal(lfv_pool_capacity(&pool), 0);
}

static void test_lifo_reuse_and_distinct(void **state)
{
	struct lfv_pool pool;
	void *a, *b, *c, *again;

	(void)state;
	assert_int_equal(lfv_pool_init(&pool, 40, 8, 0), 0);
	assert_int_equal(lfv_pool_get(&pool, &a), 0);
	assert_int_equal(lfv_pool_get(&pool, &b), 0);
	assert_int_equal(lfv_pool_get(&pool, &c), 0);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(b, c);
	/* Objects do not overlap: the stride covers the requested size. */
	assert_true((char *)b - (char *)a >= 40 ||
		    (char *)a - (char *)b >= 40);
	lfv_pool_put(&pool, b);
	/* O(1) reuse: the last object put is the next one handed out, and
	 * the pool did not grow. */
	assert_int_equal(lfv_pool_get(&pool, &again), 0);
	assert_ptr_equal(again, b);
	assert_int_equal(lfv_pool_capacity(&pool), 8);
	lfv_pool_put(&pool, a);
	lfv_pool_put(&pool, again);
	lfv_pool_put(&pool, c);
	lfv_pool_fini(&pool);
}

static void test_bound(void **state)
{
	struct lfv_pool pool;
	void *objs[5], *out = (void *)0x1;
	int i;

	(void)state;
	/* A bound of 5 with chunks of 4: the second chunk holds only 1. */
	assert_int_equal(lfv_pool_init(&pool, 16, 4, 5), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(lfv_pool_get(&pool, &objs[i]), 0);
	assert_int_equal(lfv_pool_capacity(&pool), 5);
	assert_int_equal(lfv_pool_get(&pool, &out), -FI_EAGAIN);
	assert_ptr_equal(out, (void *)0x1);	/* untouched on error */
	lfv_pool_put(&pool, objs[2]);
	assert_int_equal(lfv_pool_get(&pool, &out), 0);
	assert_ptr_equal(out, objs[2]);
	assert_int_equal(lfv_pool_get(&pool, &out), -FI_EAGAIN);
	for (i = 0; i < 5; i++)
		lfv_pool_put(&pool, objs[i]);
	lfv_pool_fini(&pool);
}

static void test_alignment_and_tiny_objects(void **state)
{
	struct lfv_pool pool;
	void *objs[33];
	int i;

	(void)state;
	/* Smaller than the free-list link: rounded up, still distinct. */
	assert_int_equal(lfv_pool_init(&pool, 1, 16, 0), 0);
	for (i = 0; i < 33; i++) {
		assert_int_equal(lfv_pool_get(&pool, &objs[i]), 0);
		assert_int_equal((uintptr_t)objs[i] % _Alignof(max_align_t), 0);
		*(char *)objs[i] = (char)i;
	}
	for (i = 0; i < 33; i++)
		assert_int_equal(*(char *)objs[i], (char)i);
	for (i = 0; i < 33; i++)
		lfv_pool_put(&pool, objs[i]);
	lfv_pool_fini(&pool);
}

static void test_fini_frees_objects_in_use(void **state)
{
	struct lfv_pool pool;
	void *obj;
	int i;

	(void)state;
	assert_int_equal(lfv_pool_init(&pool, 100, 3, 0), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(lfv_pool_get(&pool, &obj), 0);
	assert_int_equal(lfv_pool_in_use(&pool), 10);
	/* No put: fini must still free all four chunks (ASan/valgrind
	 * report a leak otherwise). */
	lfv_pool_fini(&pool);
	assert_int_equal(lfv_pool_in_use(&pool), 0);
	assert_int_equal(lfv_pool_capacity(&pool), 0);
	/* A finished pool can grow again. */
	assert_int_equal(lfv_pool_get(&pool, &obj), 0);
	lfv_pool_fini(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_bad_input),
		cmocka_unit_test(test_lazy_growth_in_chunks),
		cmocka_unit_test(test_lifo_reuse_and_distinct),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_alignment_and_tiny_objects),
		cmocka_unit_test(test_fini_frees_objects_in_use),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
