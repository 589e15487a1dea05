/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Decoders of what arrives from the network (lfv_wire.h): plain functions
 * of bytes, so unit tests and fuzz targets drive them without a device. */
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_svc.h"
#include "lfv_wire.h"

int lfv_cm_data_parse(const void *priv, size_t priv_len,
		      const uint8_t **data, size_t *len)
{
	const uint8_t *p = priv;

	if (!p || !priv_len) {
		*data = NULL;
		*len = 0;
		return 0;
	}
	if (p[0] > LFV_CM_DATA_SIZE || (size_t)p[0] + 1 > priv_len)
		return -FI_EMSGSIZE;
	*data = p + 1;
	*len = p[0];
	return 0;
}

/* Byte offsets in the 40-byte GRH area of a UD receive. */
enum {
	LFV_GRH_SGID = 8,		/* GRH: source GID */
	LFV_GRH_IP4 = 20,		/* RoCE v2 over IPv4: the IPv4 header */
	LFV_IP4_SADDR = 12,		/* in it: the source address */
};

int lfv_grh_source(const uint8_t grh[40], uint8_t gid[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (grh[0] >> 4 == 6) {
		memcpy(gid, grh + LFV_GRH_SGID, 16);
		return 0;
	}
	/* Version 4 with no options: what RoCE v2 sends. */
	if (grh[LFV_GRH_IP4] == 0x45) {
		memcpy(gid, mapped, sizeof(mapped));
		memcpy(gid + 12, grh + LFV_GRH_IP4 + LFV_IP4_SADDR, 4);
		return 0;
	}
	return -FI_EINVAL;
}

int lfv_rdm_msg_parse(const void *buf, size_t len, struct lfv_rdm_hdr *out)
{
	struct lfv_rdm_hdr h;
	size_t want;

	if (len < sizeof(h))
		return -FI_EMSGSIZE;
	memcpy(&h, buf, sizeof(h));
	if (h.len != len - sizeof(h))
		return -FI_EMSGSIZE;
	switch (h.op) {
	case LFV_RDM_EAGER_MSG:
	case LFV_RDM_EAGER_TAG:
	case LFV_RDM_SEG:
		*out = h;
		return 0;
	case LFV_RDM_SAR_MSG:
	case LFV_RDM_SAR_TAG:
		/* Its total, then at least one byte of payload. */
		if (h.len <= sizeof(struct lfv_rdm_sar))
			return -FI_EMSGSIZE;
		*out = h;
		return 0;
	case LFV_RDM_RTS_MSG:
	case LFV_RDM_RTS_TAG:
		want = sizeof(struct lfv_rdm_rts);
		break;
	case LFV_RDM_EVENT:
		want = sizeof(struct lfv_rdm_event);
		break;
	case LFV_RDM_CTS:
		want = sizeof(struct lfv_rdm_cts);
		break;
	case LFV_RDM_FIN:
	case LFV_RDM_WDONE:
	case LFV_RDM_WDATA:
	case LFV_RDM_RTU:
	case LFV_RDM_ASK:
	case LFV_RDM_HELD:
		want = 0;
		break;
	default:
		return -FI_EINVAL;
	}
	if (h.len != want)
		return -FI_EMSGSIZE;
	*out = h;
	return 0;
}

int lfv_rdm_ctrl_parse(const void *buf, size_t len, const uint8_t src_gid[16],
		       uint32_t src_qp, struct lfv_rdm_ctrl *out)
{
	struct lfv_rdm_ctrl m;

	/* The version first: a later version may be shorter or longer. */
	if (len < 2)
		return -FI_EMSGSIZE;
	if (((const uint8_t *)buf)[1] != LFV_RDM_WIRE_VERSION)
		return -FI_ENOPROTOOPT;
	if (len < sizeof(m))
		return -FI_EMSGSIZE;
	memcpy(&m, buf, sizeof(m));
	if (m.op < LFV_RDM_CTRL_REQ || m.op > LFV_RDM_CTRL_GONE)
		return -FI_EINVAL;
	/* The connection's QPs take the smaller of the two MTUs. */
	if (LFV_RDM_CTRL_HAS_MTU(m.op) && !LFV_RDM_MTU_OK(m.mtu))
		return -FI_EINVAL;
	if (lfv_ud_name_is_service(&m.name))
		return -FI_EINVAL;
	if (m.name.qpn != src_qp || memcmp(m.name.gid, src_gid, 16))
		return -FI_EACCES;
	*out = m;
	return 0;
}
