/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The decoders of what peers send (lfv_wire.h), fed what a hostile or
 * buggy peer could send, and the drop counters that record refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_errno.h>

#include "lfv_drop.h"
#include "lfv_ep.h"
#include "lfv_wire.h"

/* rdma_cm's private data sizes: a connect request's and a reply's. */
enum { REQ_PRIV = 56, REP_PRIV = 196 };

static void test_cm_data_fits(void **state)
{
	uint8_t priv[REQ_PRIV] = { 3, 'a', 'b', 'c' };
	const uint8_t *data = NULL;
	size_t len = 99;

	(void)state;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 0);
	assert_int_equal(len, 3);
	assert_ptr_equal(data, priv + 1);
}

static void test_cm_data_none(void **state)
{
	const uint8_t *data = (const uint8_t *)"x";
	size_t len = 99;

	(void)state;
	assert_int_equal(lfv_cm_data_parse(NULL, 0, &data, &len), 0);
	assert_null(data);
	assert_int_equal(len, 0);
}

/* The largest length an lfverbs peer can send fills a request exactly. */
static void test_cm_data_full_request(void **state)
{
	uint8_t priv[REQ_PRIV] = { LFV_CM_DATA_SIZE };
	const uint8_t *data;
	size_t len;

	(void)state;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 0);
	assert_int_equal(len, LFV_CM_DATA_SIZE);
}

/* A reply is 196 bytes: a length byte up to 195 fits what arrived but
 * not what lfverbs hands on (the stack copy of issue 14's defect 1). */
static void test_cm_data_reply_length_lies(void **state)
{
	uint8_t priv[REP_PRIV];
	const uint8_t *data = NULL;
	size_t len = 99;

	(void)state;
	memset(priv, 0xab, sizeof(priv));
	priv[0] = LFV_CM_DATA_SIZE + 1;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 -FI_EMSGSIZE);
	priv[0] = REP_PRIV - 1;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 -FI_EMSGSIZE);
	assert_null(data);		/* outputs untouched on failure */
	assert_int_equal(len, 99);
}

/* A length byte beyond the bytes that arrived. */
static void test_cm_data_truncated(void **state)
{
	uint8_t priv[4] = { 4, 1, 2, 3 };
	const uint8_t *data;
	size_t len;

	(void)state;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 -FI_EMSGSIZE);
	priv[0] = 3;
	assert_int_equal(lfv_cm_data_parse(priv, sizeof(priv), &data, &len),
			 0);
	assert_int_equal(len, 3);
}

static void test_drops_counted_by_reason(void **state)
{
	struct lfv_drops drops;
	struct fi_lfverbs_drops out;
	int i;

	(void)state;
	memset(&drops, 0, sizeof(drops));
	for (i = 0; i < 5; i++)
		lfv_drop(&drops, FI_LFVERBS_DROP_CM_DATA, "test");
	memset(&out, 0xff, sizeof(out));
	lfv_drops_read(&drops, &out);
	assert_int_equal(out.count[FI_LFVERBS_DROP_CM_DATA], 5);
	for (i = FI_LFVERBS_DROP_REASONS; i < 32; i++)
		assert_int_equal(out.count[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_data_fits),
		cmocka_unit_test(test_cm_data_none),
		cmocka_unit_test(test_cm_data_full_request),
		cmocka_unit_test(test_cm_data_reply_length_lies),
		cmocka_unit_test(test_cm_data_truncated),
		cmocka_unit_test(test_drops_counted_by_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
