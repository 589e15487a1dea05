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
#include "lfv_svc.h"
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

/* ---- the source of a UD datagram ---- */

static void test_grh_source_ipv6(void **state)
{
	uint8_t grh[40] = { 0x60 }, gid[16], want[16];
	int i;

	(void)state;
	for (i = 0; i < 16; i++)
		want[i] = (uint8_t)(0xf0 + i);
	memcpy(grh + 8, want, 16);
	assert_int_equal(lfv_grh_source(grh, gid), 0);
	assert_memory_equal(gid, want, 16);
}

/* rxe leaves RoCE v2's IPv4 header in the last 20 bytes. */
static void test_grh_source_ipv4(void **state)
{
	uint8_t grh[40] = { 0 }, gid[16];
	const uint8_t want[16] = { [10] = 0xff, [11] = 0xff,
				   [12] = 10, [13] = 77, [14] = 0, [15] = 1 };

	(void)state;
	grh[20] = 0x45;
	grh[32] = 10; grh[33] = 77; grh[34] = 0; grh[35] = 1;
	assert_int_equal(lfv_grh_source(grh, gid), 0);
	assert_memory_equal(gid, want, 16);
}

static void test_grh_source_neither(void **state)
{
	uint8_t grh[40] = { 0x40 }, gid[16] = { 7 };

	(void)state;
	assert_int_equal(lfv_grh_source(grh, gid), -FI_EINVAL);
	assert_int_equal(gid[0], 7);
}

/* ---- RDM handshake datagrams ---- */

static const uint8_t peer_gid[16] = { 0xfe, 0x80, [15] = 0x42 };
enum { PEER_QPN = 0x1234 };

static struct lfv_rdm_ctrl good_ctrl(void)
{
	struct lfv_rdm_ctrl m = {
		.op = LFV_RDM_CTRL_REQ, .version = LFV_RDM_WIRE_VERSION,
		.qpn = 0x99, .psn = 7, .incarnation = 0xabcdef,
		.name = { .qpn = PEER_QPN }, .mtu = 3,	/* IBV_MTU_1024 */
	};

	memcpy(m.name.gid, peer_gid, 16);
	return m;
}

static int parse_ctrl(const struct lfv_rdm_ctrl *m, size_t len,
		      struct lfv_rdm_ctrl *out)
{
	return lfv_rdm_ctrl_parse(m, len, peer_gid, PEER_QPN, out);
}

static void test_ctrl_good(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
	assert_memory_equal(&out, &m, sizeof(m));
	m.op = LFV_RDM_CTRL_REP;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
	/* Version 5's liveness datagrams. */
	m.op = LFV_RDM_CTRL_PING;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
	m.op = LFV_RDM_CTRL_PONG;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
	m.op = LFV_RDM_CTRL_GONE;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
	assert_int_equal(out.op, LFV_RDM_CTRL_GONE);
}

static void test_ctrl_truncated(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	assert_int_equal(parse_ctrl(&m, sizeof(m) - 1, &out), -FI_EMSGSIZE);
	assert_int_equal(parse_ctrl(&m, 1, &out), -FI_EMSGSIZE);
	assert_int_equal(parse_ctrl(&m, 0, &out), -FI_EMSGSIZE);
}

/* Another version is told apart before its length is judged. */
static void test_ctrl_version(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	m.version = LFV_RDM_WIRE_VERSION + 1;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_ENOPROTOOPT);
	assert_int_equal(parse_ctrl(&m, 4, &out), -FI_ENOPROTOOPT);
}

static void test_ctrl_unknown_op(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	m.op = 0;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
	m.op = LFV_RDM_CTRL_GONE + 1;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
	m.op = 0xff;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
}

static void test_ctrl_service_name(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	m.name.flags = LFV_UD_NAME_SERVICE;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
}

/* A REQ or REP must say its sender's MTU (enum ibv_mtu: 1 to 5), which
 * the connection's QPs take if it is the smaller; the liveness datagrams
 * need none. */
static void test_ctrl_mtu(void **state)
{
	static const uint8_t ops[] = { LFV_RDM_CTRL_REQ, LFV_RDM_CTRL_REP };
	struct lfv_rdm_ctrl m, out;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(ops); k++) {
		m = good_ctrl();
		m.op = ops[k];
		m.mtu = 1;
		assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
		m.mtu = 5;
		assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
		assert_int_equal(out.mtu, 5);
		m.mtu = 0;
		assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
		m.mtu = 6;
		assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
		m.mtu = 0xff;
		assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EINVAL);
	}
	m = good_ctrl();
	m.op = LFV_RDM_CTRL_PING;
	m.mtu = 0;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), 0);
}

/* A datagram naming a sender (QP or GID) it did not come from: the forged
 * REQ that tears down another peer's connection, the forged REP that
 * redirects a connecting QP (issue 14, defect 6). */
static void test_ctrl_forged(void **state)
{
	struct lfv_rdm_ctrl m = good_ctrl(), out;

	(void)state;
	m.name.qpn = PEER_QPN + 1;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EACCES);
	m = good_ctrl();
	m.name.gid[15] ^= 1;
	assert_int_equal(parse_ctrl(&m, sizeof(m), &out), -FI_EACCES);
}

/* ---- messages on RDM connections ---- */

/* A message: header (op, length) and len payload bytes, in a buffer of
 * exactly that size (room for the largest test). */
struct msg {
	struct lfv_rdm_hdr h;
	uint8_t payload[64];
};

static size_t msg_of(struct msg *m, uint8_t op, uint32_t len)
{
	memset(m, 0, sizeof(*m));
	m->h.op = op;
	m->h.len = len;
	m->h.tag = 0x7a67;
	return sizeof(m->h) + len;
}

static void test_msg_good(void **state)
{
	static const struct { uint8_t op; uint32_t len; } good[] = {
		{ LFV_RDM_EAGER_MSG, 0 }, { LFV_RDM_EAGER_TAG, 64 },
		{ LFV_RDM_RTS_MSG, sizeof(struct lfv_rdm_rts) },
		{ LFV_RDM_RTS_TAG, sizeof(struct lfv_rdm_rts) },
		{ LFV_RDM_EVENT, sizeof(struct lfv_rdm_event) },
		{ LFV_RDM_FIN, 0 }, { LFV_RDM_WDATA, 0 }, { LFV_RDM_RTU, 0 },
		{ LFV_RDM_ASK, 0 }, { LFV_RDM_HELD, 0 },
		{ LFV_RDM_SAR_MSG, sizeof(struct lfv_rdm_sar) + 1 },
		{ LFV_RDM_SAR_TAG, 64 }, { LFV_RDM_SEG, 64 },
		{ LFV_RDM_CTS, sizeof(struct lfv_rdm_cts) },
		{ LFV_RDM_WDONE, 0 },
	};
	struct lfv_rdm_hdr out;
	struct msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = msg_of(&m, good[i].op, good[i].len);
		memset(&out, 0, sizeof(out));
		assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), 0);
		assert_int_equal(out.op, good[i].op);
		assert_int_equal(out.len, good[i].len);
		assert_int_equal(out.tag, 0x7a67);
	}
}

/* Shorter than a header, or a length field that is not what arrived (a
 * write with immediate data reports its own length over a stale buffer;
 * a peer may lie). */
static void test_msg_length_lies(void **state)
{
	struct lfv_rdm_hdr out = { .op = 0xee };
	struct msg m;
	size_t n = msg_of(&m, LFV_RDM_EAGER_MSG, 16);

	(void)state;
	assert_int_equal(lfv_rdm_msg_parse(&m, sizeof(m.h) - 1, &out),
			 -FI_EMSGSIZE);
	assert_int_equal(lfv_rdm_msg_parse(&m, 0, &out), -FI_EMSGSIZE);
	assert_int_equal(lfv_rdm_msg_parse(&m, n - 1, &out), -FI_EMSGSIZE);
	assert_int_equal(lfv_rdm_msg_parse(&m, n + 1, &out), -FI_EMSGSIZE);
	m.h.len = UINT32_MAX;
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	assert_int_equal(out.op, 0xee);	/* untouched on failure */
}

/* A control op with a payload it does not have, or the wrong one. */
static void test_msg_payload_of_op(void **state)
{
	struct lfv_rdm_hdr out;
	struct msg m;
	size_t n;

	(void)state;
	n = msg_of(&m, LFV_RDM_RTS_MSG, sizeof(struct lfv_rdm_rts) - 8);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_EVENT, sizeof(struct lfv_rdm_rts));
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_FIN, 8);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_ASK, 1);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_CTS, sizeof(struct lfv_rdm_cts) - 1);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_WDONE, 8);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	/* A first segment needs its total and at least a byte of payload. */
	n = msg_of(&m, LFV_RDM_SAR_TAG, sizeof(struct lfv_rdm_sar));
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
	n = msg_of(&m, LFV_RDM_SAR_MSG, 3);
	assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EMSGSIZE);
}

static void test_msg_unknown_op(void **state)
{
	static const uint8_t bad[] = { 0, LFV_RDM_WDONE + 1, 0xff };
	struct lfv_rdm_hdr out;
	struct msg m;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad); i++) {
		n = msg_of(&m, bad[i], 0);
		assert_int_equal(lfv_rdm_msg_parse(&m, n, &out), -FI_EINVAL);
	}
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

static void test_drop_err_reasons(void **state)
{
	static const struct { int err; unsigned reason; } map[] = {
		{ -FI_EMSGSIZE, FI_LFVERBS_DROP_TRUNCATED },
		{ -FI_ENOPROTOOPT, FI_LFVERBS_DROP_VERSION },
		{ -FI_EACCES, FI_LFVERBS_DROP_FORGED },
		{ -FI_ENOSPC, FI_LFVERBS_DROP_LIMIT },
		{ -FI_EINVAL, FI_LFVERBS_DROP_MALFORMED },
	};
	struct lfv_drops drops;
	struct fi_lfverbs_drops out;
	size_t i;

	(void)state;
	memset(&drops, 0, sizeof(drops));
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		lfv_drop_err(&drops, map[i].err, "test");
	lfv_drops_read(&drops, &out);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		assert_int_equal(out.count[map[i].reason], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_data_fits),
		cmocka_unit_test(test_cm_data_none),
		cmocka_unit_test(test_cm_data_full_request),
		cmocka_unit_test(test_cm_data_reply_length_lies),
		cmocka_unit_test(test_cm_data_truncated),
		cmocka_unit_test(test_grh_source_ipv6),
		cmocka_unit_test(test_grh_source_ipv4),
		cmocka_unit_test(test_grh_source_neither),
		cmocka_unit_test(test_ctrl_good),
		cmocka_unit_test(test_ctrl_truncated),
		cmocka_unit_test(test_ctrl_version),
		cmocka_unit_test(test_ctrl_unknown_op),
		cmocka_unit_test(test_ctrl_service_name),
		cmocka_unit_test(test_ctrl_forged),
		cmocka_unit_test(test_ctrl_mtu),
		cmocka_unit_test(test_msg_good),
		cmocka_unit_test(test_msg_length_lies),
		cmocka_unit_test(test_msg_payload_of_op),
		cmocka_unit_test(test_msg_unknown_op),
		cmocka_unit_test(test_drops_counted_by_reason),
		cmocka_unit_test(test_drop_err_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
