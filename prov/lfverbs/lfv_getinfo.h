/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo (lfv_getinfo.c): templates, hint checks and narrowing.
 */
#ifndef LFV_GETINFO_H
#define LFV_GETINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfv_prov.h"

int lfv_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info);
struct fi_info *lfv_info_template(const struct lfv_device *dev,
				  enum fi_ep_type type,
				  const struct lfv_addr *addr,
				  uint32_t version);
bool lfv_info_fits(const struct fi_info *prov, const struct fi_info *hints,
		   uint32_t version);

#endif /* LFV_GETINFO_H */
