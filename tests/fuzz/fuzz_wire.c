/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* libFuzzer target for the decoders of what arrives from the network
 * (prov/lfverbs/lfv_wire.h). The first input byte picks the decoder; the
 * rest is copied to a buffer of exactly its size, so AddressSanitizer sees
 * any read past what "arrived". What a decoder accepts is read in full, so
 * an output that points outside the input shows too, and checked against
 * the promise its callers rely on (abort: a finding). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lfv_wire.h"

enum { CM_DATA, GRH_SOURCE, RDM_CTRL, RDM_MSG, DECODERS };

static volatile uint8_t sink;

static void touch(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		sink ^= p[i];
}

static void cm_data(const uint8_t *in, size_t len)
{
	const uint8_t *data;
	size_t n;

	if (lfv_cm_data_parse(len ? in : NULL, len, &data, &n))
		return;
	/* Callers copy it into LFV_CM_DATA_SIZE bytes. */
	if (n > LFV_CM_DATA_SIZE)
		abort();
	touch(data, n);
}

static void grh_source(const uint8_t *in, size_t len)
{
	uint8_t gid[16];

	if (len == 40 && !lfv_grh_source(in, gid))
		touch(gid, sizeof(gid));
}

/* 16 bytes of source GID, 4 of source QP, then the datagram. */
static void rdm_ctrl(const uint8_t *in, size_t len)
{
	struct lfv_rdm_ctrl m;
	uint8_t gid[16];
	uint32_t qp;

	if (len < sizeof(gid) + sizeof(qp))
		return;
	memcpy(gid, in, sizeof(gid));
	memcpy(&qp, in + sizeof(gid), sizeof(qp));
	in += sizeof(gid) + sizeof(qp);
	len -= sizeof(gid) + sizeof(qp);
	if (lfv_rdm_ctrl_parse(in, len, gid, qp, &m))
		return;
	/* Callers trust the name as the datagram's source. */
	if (m.name.qpn != qp || memcmp(m.name.gid, gid, sizeof(gid)) ||
	    m.version != LFV_RDM_WIRE_VERSION)
		abort();
	/* A QP is connected at the MTU of an accepted REQ or REP. */
	if (LFV_RDM_CTRL_HAS_MTU(m.op) && !LFV_RDM_MTU_OK(m.mtu))
		abort();
	touch((const uint8_t *)&m, sizeof(m));
}

/* A message as it landed in an RDM receive buffer. */
static void rdm_msg(const uint8_t *in, size_t len)
{
	struct lfv_rdm_hdr h;

	if (lfv_rdm_msg_parse(in, len, &h))
		return;
	/* Callers read h.len payload bytes after the header. */
	if (sizeof(h) + (size_t)h.len != len)
		abort();
	touch(in + sizeof(h), h.len);
}

/* The first byte of an input picks one. */
static void (*const decoders[DECODERS])(const uint8_t *in, size_t len) = {
	[CM_DATA] = cm_data,
	[GRH_SOURCE] = grh_source,
	[RDM_CTRL] = rdm_ctrl,
	[RDM_MSG] = rdm_msg,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (!size)
		return 0;
	/* Exactly the bytes after the selector, on the heap. */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	decoders[data[0] % DECODERS](copy, size - 1);
	free(copy);
	return 0;
}
