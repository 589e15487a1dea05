/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo's templates (lfv_info_template.c): for a device and an
 * endpoint type, the fi_info its real limits allow; sizes in a template
 * are maxima, which lfv_getinfo.c narrows to what was asked.
 */
#ifndef LFV_INFO_TEMPLATE_H
#define LFV_INFO_TEMPLATE_H

#include <stdint.h>
#include <rdma/fabric.h>

#include "lfv_prov.h"

/* What each direction's attributes may hold (fi_endpoint(3)): the
 * locality caps are the domain's and info's, never tx's or rx's. */
#define LFV_TX_CAP_MASK                                                    \
	((LFV_PRIMARY_CAPS & ~(uint64_t)(FI_DIRECTED_RECV |                 \
					 FI_VARIABLE_MSG)) |                \
	 FI_SEND | FI_READ | FI_WRITE | FI_FENCE | FI_TRIGGER)
#define LFV_RX_CAP_MASK                                                    \
	((LFV_PRIMARY_CAPS & ~(uint64_t)(FI_MULTICAST | FI_NAMED_RX_CTX)) | \
	 FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_MULTI_RECV |       \
	 FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR)

/* An fi_info's src_addr or dest_addr: a copy of len bytes of addr in *out,
 * len in *outlen; 0 or -FI_ENOMEM. */
int lfv_info_addr_dup(const void *addr, size_t len, void **out,
		      size_t *outlen);

struct fi_info *lfv_info_template(const struct lfv_device *dev,
				  enum fi_ep_type type,
				  const struct lfv_addr *addr,
				  uint32_t version);

#endif /* LFV_INFO_TEMPLATE_H */
