/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Decoders of what arrives from the network. Each takes the bytes as they
 * arrived and their length, trusts nothing in them, needs no device (the
 * unit tests and fuzz targets call them on plain buffers) and returns 0 or
 * a negative -FI_E* without touching its outputs. */
#ifndef LFV_WIRE_H
#define LFV_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lfv_rdm_proto.h"

/* Bytes of connection data rdma_cm carries for RC (RDMA_PS_TCP, connect
 * request), less the one-byte length header the verbs provider also uses,
 * so the two interoperate. */
#define LFV_CM_PRIV_MAX 56
#define LFV_CM_DATA_SIZE (LFV_CM_PRIV_MAX - 1)

/* Errors, each a reason to drop (lfv_drop_err): -FI_EMSGSIZE shorter than
 * it must be or a length that lies, -FI_ENOPROTOOPT another wire version,
 * -FI_EACCES names a sender it did not come from, -FI_EINVAL anything else
 * malformed. */

/* Connection data of an rdma_cm event (MSG endpoints): a length byte, then
 * the application's bytes. rdma_cm pads private data to a fixed size (56
 * bytes in a request, 196 in a reply), so the length byte is the only
 * record of what the peer sent; it must fit what arrived and what a peer
 * can send (LFV_CM_DATA_SIZE). No private data is no connection data.
 * -FI_EMSGSIZE: the length byte lies. */
int lfv_cm_data_parse(const void *priv, size_t priv_len,
		      const uint8_t **data, size_t *len);

/* The source GID of a UD datagram, from the 40 bytes a UD receive gets in
 * front of the payload: a GRH (InfiniBand, RoCE v1, RoCE v2 over IPv6)
 * holds it at byte 8; RoCE v2 over IPv4 leaves the IPv4 header in the last
 * 20 bytes, whose source address is an IPv4-mapped GID. -FI_EINVAL when
 * neither header is there. */
int lfv_grh_source(const uint8_t grh[40], uint8_t gid[16]);

/* An RDM handshake datagram (struct lfv_rdm_ctrl), len bytes after the
 * GRH area, from the UD QP src_qp at src_gid: the version, a known op, a
 * QP name (not a service name) that is the datagram's real source. */
int lfv_rdm_ctrl_parse(const void *buf, size_t len, const uint8_t src_gid[16],
		       uint32_t src_qp, struct lfv_rdm_ctrl *out);

/* A message on an RDM connection, len bytes: its header (copied to *out),
 * whose length must be what follows it, and, for a known op, as long as
 * that op's payload (an RTS or EVENT descriptor; nothing for FIN, WDATA,
 * RTU, ASK, HELD; a SAR's total and at least one byte). The payload is at
 * buf + sizeof(*out). */
int lfv_rdm_msg_parse(const void *buf, size_t len, struct lfv_rdm_hdr *out);

#endif /* LFV_WIRE_H */
