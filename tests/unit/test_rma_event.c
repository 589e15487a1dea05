/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* FI_RMA_EVENT over fake verbs: event keys, fi_mr_bind of counters, and
 * the target's handling of what peers announce (lfv_mr_event, the MSG
 * notes of lfv_rma.c, the RDM EVENT message of lfv_rdm_rma.c): what names
 * a region of the domain is counted, anything else is dropped and counted
 * as dropped, never followed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rdma/fi_domain.h>

#include "fake_verbs.h"
#include "fi_lfverbs.h"
#include "lfv_msg.h"
#include "lfv_prov.h"
#include "lfv_rdm_ep.h"
#include "lfv_device.h"
#include "lfv_ep.h"
#include "lfv_ep_base.h"
#include "lfv_fabric.h"
#include "lfv_getinfo.h"
#include "lfv_mr.h"
#include "lfv_msg_rma.h"
#include "lfv_rdm_rma.h"
#include "lfv_vcq.h"
#include "../test_close.h"
#include "unit_fake.h"

/* The MSG notes' bits (lfv_rma.c): the wire format under test. */
#define NOTE_READ (1U << 31)
#define NOTE_DATA_NEXT (1U << 30)

struct ev {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;	/* opened with FI_RMA_EVENT */
	struct lfv_domain *dom;
	char buf[2][256];
	struct fid_mr *mr[2];
	struct fid_cntr *wcntr, *rcntr;	/* bound to mr[0] */
};

/* Announcements dropped so far (what fi_lfverbs(7) tells applications
 * to read). */
static uint64_t dropped(const struct ev *e)
{
	struct fi_lfverbs_drops d;

	assert_int_equal(fi_control(&e->fabric->fid, FI_LFVERBS_GET_DROPS, &d),
			 0);
	return d.count[FI_LFVERBS_DROP_MALFORMED];
}

static int setup(void **state)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP };
	struct ev *e = calloc(1, sizeof(*e));
	int i;

	unit_fake_device();
	unit_fabric_open(NULL, &e->info, &e->fabric);
	e->info->caps |= FI_RMA_EVENT;
	assert_int_equal(fi_domain(e->fabric, e->info, &e->domain, NULL), 0);
	e->dom = lfv_container_of(e->domain, struct lfv_domain, domain_fid);
	for (i = 0; i < 2; i++)
		assert_int_equal(fi_mr_reg(e->domain, e->buf[i],
					   sizeof(e->buf[i]),
					   FI_REMOTE_READ | FI_REMOTE_WRITE,
					   0, 0, 0, &e->mr[i], NULL), 0);
	assert_int_equal(fi_cntr_open(e->domain, &attr, &e->wcntr, NULL), 0);
	assert_int_equal(fi_cntr_open(e->domain, &attr, &e->rcntr, NULL), 0);
	assert_int_equal(fi_mr_bind(e->mr[0], &e->wcntr->fid,
				    FI_REMOTE_WRITE), 0);
	assert_int_equal(fi_mr_bind(e->mr[0], &e->rcntr->fid,
				    FI_REMOTE_READ), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct ev *e = *state;
	int i;

	for (i = 0; i < 2; i++)
		if (e->mr[i])
			assert_int_equal(fi_close(&e->mr[i]->fid), 0);
	test_close(e->wcntr, e->rcntr, e->domain, e->fabric);
	fi_freeinfo(e->info);
	free(e);
	unit_fake_release();
	return 0;
}

static uint32_t idx(const struct fid_mr *mr)
{
	return lfv_key_index(fi_mr_key((struct fid_mr *)mr));
}

static uint32_t rkey(const struct fid_mr *mr)
{
	return ((const struct lfv_mr *)mr->mem_desc)->ibv_mr->rkey;
}

/* Keys carry the event bit and a slot of their own; counters bind once
 * per kind; a domain without FI_RMA_EVENT keeps plain rkeys and refuses
 * counters on regions. */
static void test_keys_and_bind(void **state)
{
	struct ev *e = *state;
	struct fid_domain *plain;
	struct fid_mr *mr;
	struct fi_info *info;

	assert_true(lfv_key_is_event(fi_mr_key(e->mr[0])));
	assert_true(lfv_key_is_event(fi_mr_key(e->mr[1])));
	assert_int_not_equal(idx(e->mr[0]), idx(e->mr[1]));
	assert_int_equal((uint32_t)fi_mr_key(e->mr[0]), rkey(e->mr[0]));
	assert_int_equal(fi_mr_bind(e->mr[0], &e->wcntr->fid,
				    FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(fi_mr_bind(e->mr[1], &e->wcntr->fid, FI_SEND),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_mr_bind(e->mr[1], &e->wcntr->fid, 0),
			 -FI_EBADFLAGS);
	assert_int_equal(fi_close(&e->wcntr->fid), -FI_EBUSY);
	/* The registration flag that announces a counter is taken. */
	assert_int_equal(fi_mr_reg(e->domain, e->buf[1], 8, FI_REMOTE_WRITE,
				   0, 0, FI_RMA_EVENT, &mr, NULL), 0);
	assert_int_equal(fi_close(&mr->fid), 0);

	info = fi_dupinfo(e->info);
	info->caps &= ~(uint64_t)FI_RMA_EVENT;
	assert_int_equal(fi_domain(e->fabric, info, &plain, NULL), 0);
	assert_int_equal(fi_mr_reg(plain, e->buf[1], 8, FI_REMOTE_WRITE, 0, 0,
				   0, &mr, NULL), 0);
	assert_true(fi_mr_key(mr) <= UINT32_MAX);
	assert_int_equal(fi_mr_bind(mr, &e->wcntr->fid, FI_REMOTE_WRITE),
			 -FI_ENOSYS);
	assert_int_equal(fi_mr_reg(plain, e->buf[1], 8, FI_REMOTE_WRITE, 0, 0,
				   FI_RMA_EVENT, &mr, NULL), -FI_EBADFLAGS);
	test_close(mr, plain);
	fi_freeinfo(info);
}

/* lfv_mr_event: the region, its rkey, the range; nothing else counts. */
static void test_mr_event_checks(void **state)
{
	struct ev *e = *state;
	uint64_t base = (uintptr_t)e->buf[0];
	uint32_t i0 = idx(e->mr[0]), k0 = rkey(e->mr[0]), i1 = idx(e->mr[1]);

	assert_int_equal(lfv_mr_event(e->dom, i0, k0, base, 256,
				      FI_REMOTE_WRITE), 0);
	assert_int_equal(lfv_mr_event(e->dom, i0, -1, UINT64_MAX, 0,
				      FI_REMOTE_READ), 0);
	assert_int_equal(fi_cntr_read(e->wcntr), 1);
	assert_int_equal(fi_cntr_read(e->rcntr), 1);
	assert_int_equal(dropped(e), 0);
	/* Forged or wrong: a slot nobody has, another region's rkey, bytes
	 * past the end, an address before the start. */
	assert_int_equal(lfv_mr_event(e->dom, 12345, k0, base, 1,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(lfv_mr_event(e->dom, UINT32_MAX, -1, UINT64_MAX, 0,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(lfv_mr_event(e->dom, i0, rkey(e->mr[1]), base, 1,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(lfv_mr_event(e->dom, i0, k0, base + 1, 256,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(lfv_mr_event(e->dom, i0, k0, base - 1, 1,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(lfv_mr_event(e->dom, i0, -1, UINT64_MAX, 257,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(dropped(e), 6);
	assert_int_equal(fi_cntr_read(e->wcntr), 1);
	/* A closed region's slot names nothing any more. */
	assert_int_equal(fi_close(&e->mr[1]->fid), 0);
	e->mr[1] = NULL;
	assert_int_equal(lfv_mr_event(e->dom, i1, -1, UINT64_MAX, 0,
				      FI_REMOTE_WRITE), -FI_EINVAL);
	assert_int_equal(dropped(e), 7);
}

static size_t msg_note(struct lfv_ep *ep, uint32_t imm, uint32_t len,
		       struct lfv_cq_comp *comp)
{
	struct ibv_wc wc = {
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.wc_flags = IBV_WC_WITH_IMM,
		.imm_data = htobe32(imm),
		.byte_len = len,
	};

	return lfv_msg_rma_arrived(ep, &wc, comp);
}

/* MSG: notes in immediate data on a buffered endpoint. */
static void test_msg_notes(void **state)
{
	struct ev *e = *state;
	struct lfv_ep ep = { .base.domain = e->dom };
	struct lfv_cq_comp comp;
	uint32_t i0 = idx(e->mr[0]);

	ep.base.cntr[LFV_CNTR_RWRITE] = lfv_cntr_from_fid(e->wcntr);
	ep.base.cntr[LFV_CNTR_RREAD] = lfv_cntr_from_fid(e->rcntr);
	/* The endpoint's counters are the region's here: each valid note
	 * counts twice. */
	assert_int_equal(msg_note(&ep, i0, 64, &comp), 0);
	assert_int_equal(fi_cntr_read(e->wcntr), 2);
	assert_int_equal(msg_note(&ep, i0 | NOTE_READ, 0, &comp), 0);
	assert_int_equal(fi_cntr_read(e->rcntr), 2);
	/* Forged: a slot nobody has, bits no note has, too many bytes. */
	assert_int_equal(msg_note(&ep, 4242, 8, &comp), 0);
	assert_int_equal(msg_note(&ep, i0 | (1U << 27), 8, &comp), 0);
	assert_int_equal(msg_note(&ep, i0, 4096, &comp), 0);
	assert_int_equal(dropped(e), 3);
	assert_int_equal(fi_cntr_read(e->wcntr), 2);
	assert_int_equal(fi_cntr_read(e->rcntr), 2);
	/* Remote CQ data behind its note: one completion with the data. */
	assert_int_equal(msg_note(&ep, i0 | NOTE_DATA_NEXT, 0, &comp), 0);
	assert_int_equal(fi_cntr_read(e->wcntr), 2);
	assert_int_equal(msg_note(&ep, 0xabcd, 16, &comp), 1);
	assert_int_equal(comp.data, 0xabcd);
	assert_int_equal(comp.len, 16);		/* the write's length */
	assert_int_equal(comp.flags,
			 FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	assert_int_equal(fi_cntr_read(e->wcntr), 4);
	/* The note after the data is a note again. */
	assert_int_equal(msg_note(&ep, i0, 1, &comp), 0);
	assert_int_equal(fi_cntr_read(e->wcntr), 6);
	assert_int_equal(dropped(e), 3);
}

static void rdm_event(struct lfv_rdm_ep *ep, uint64_t key, uint64_t addr,
		      uint64_t len, uint8_t flags)
{
	struct lfv_rdm_hdr h = { .op = LFV_RDM_EVENT, .flags = flags,
				 .len = sizeof(struct lfv_rdm_event),
				 .tag = len };
	struct lfv_rdm_event ev = { .key = key, .addr = addr };

	lfv_rdm_on_event(ep, &h, (const uint8_t *)&ev, FI_ADDR_NOTAVAIL);
}

/* RDM: EVENT messages, checked in full (key, address, length). */
static void test_rdm_events(void **state)
{
	struct ev *e = *state;
	struct lfv_rdm_ep *ep = calloc(1, sizeof(*ep));
	uint64_t key = fi_mr_key(e->mr[0]), base = (uintptr_t)e->buf[0];

	ep->base.domain = e->dom;
	ep->base.cntr[LFV_CNTR_RWRITE] = lfv_cntr_from_fid(e->wcntr);
	ep->base.cntr[LFV_CNTR_RREAD] = lfv_cntr_from_fid(e->rcntr);
	rdm_event(ep, key, base, 256, 0);
	rdm_event(ep, key, base + 8, 8, LFV_RDM_HDR_READ);
	assert_int_equal(fi_cntr_read(e->wcntr), 2);
	assert_int_equal(fi_cntr_read(e->rcntr), 2);
	/* Forged: no event bit, an unknown slot, another rkey, outside the
	 * region, a read with CQ data, flags no EVENT has. */
	rdm_event(ep, (uint32_t)key, base, 8, 0);
	rdm_event(ep, key + (7ULL << 32), base, 8, 0);
	rdm_event(ep, key ^ 1, base, 8, 0);
	rdm_event(ep, key, base + 200, 57, 0);
	rdm_event(ep, key, base, 8, LFV_RDM_HDR_READ | LFV_RDM_HDR_DATA);
	rdm_event(ep, key, base, 8, 0x80);
	assert_int_equal(dropped(e), 6);
	assert_int_equal(fi_cntr_read(e->wcntr), 2);
	assert_int_equal(fi_cntr_read(e->rcntr), 2);
	free(ep);
}

/* MSG without notes: a write with remote CQ data consumes a posted
 * receive, whose completion is the write's, with the write's length
 * (fi_cq(3) of 2.x; 2.x's fi_cq_data -o writedata checks it). */
static void test_msg_write_data_len(void **state)
{
	static char ctx[1], buf[64];
	struct lfv_op op = { .context = ctx, .flags = FI_RECV | FI_MSG,
			     .buf = buf, .len = sizeof(buf) };
	struct ibv_wc wc = {
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.wc_flags = IBV_WC_WITH_IMM,
		.imm_data = htobe32(0xcafe),
		.byte_len = 1000,
	};
	struct lfv_cq_comp comp;

	(void)state;
	lfv_vcq_comp(false, 0, &op, &wc, &comp);
	assert_ptr_equal(comp.context, ctx);
	assert_int_equal(comp.flags,
			 FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	assert_int_equal(comp.data, 0xcafe);
	assert_int_equal(comp.len, 1000);
	assert_null(comp.buf);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_keys_and_bind),
		T(test_mr_event_checks),
		T(test_msg_notes),
		T(test_rdm_events),
		cmocka_unit_test(test_msg_write_data_len),
	};

	return cmocka_run_group_tests_name("rma_event", tests, NULL, NULL);
}
