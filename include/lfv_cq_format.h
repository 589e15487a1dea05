/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The bytes of one entry of a CQ format, as fi_cq_read hands it out.
 * Header-only, so the test peer provider (tests/func/peer_prov), which
 * links none of lfverbs, sizes its entries the same way.
 */
#ifndef LFV_CQ_FORMAT_H
#define LFV_CQ_FORMAT_H

#include <stdint.h>

#include <rdma/fi_eq.h>

/* FI_CQ_FORMAT_UNSPEC and FI_CQ_FORMAT_CONTEXT: struct fi_cq_entry. */
static inline uint32_t lfv_cq_format_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return sizeof(struct fi_cq_entry);
	}
}

#endif /* LFV_CQ_FORMAT_H */
