/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Decoders of what arrives from the network. Each takes the bytes as they
 * arrived and their length, trusts nothing in them, needs no device (the
 * unit tests and fuzz targets call them on plain buffers) and returns 0 or
 * a negative -FI_E* without touching its outputs. */
#ifndef LFV_WIRE_H
#define LFV_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Connection data of an rdma_cm event (MSG endpoints): a length byte, then
 * the application's bytes. rdma_cm pads private data to a fixed size (56
 * bytes in a request, 196 in a reply), so the length byte is the only
 * record of what the peer sent; it must fit what arrived and what a peer
 * can send (LFV_CM_DATA_SIZE). No private data is no connection data.
 * -FI_EMSGSIZE: the length byte lies. */
int lfv_cm_data_parse(const void *priv, size_t priv_len,
		      const uint8_t **data, size_t *len);

#endif /* LFV_WIRE_H */
