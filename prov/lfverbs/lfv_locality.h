/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Devices ordered by their distance from the caller (lfv_locality.c).
 */
#ifndef LFV_LOCALITY_H
#define LFV_LOCALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfv_prov.h"

/* Orders devices nearest to the calling thread's CPU set first. */
void lfv_devices_sort_by_locality(struct lfv_device *devs, size_t count);
/* Stable sort by the locality field (0 first); ties keep their order. */
void lfv_devices_sort(struct lfv_device *devs, size_t count);

#endif /* LFV_LOCALITY_H */
