/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo (lfv_getinfo.c): each device's templates
 * (lfv_info_template.h) that fit the hints (lfv_info_fits.h), narrowed to
 * the request, with the addresses node and service name.
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

#endif /* LFV_GETINFO_H */
