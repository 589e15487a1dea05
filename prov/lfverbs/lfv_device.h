/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RDMA devices as lfverbs sees them (lfv_device.c).
 */
#ifndef LFV_DEVICE_H
#define LFV_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfv_prov.h"

/* Discovers devices once (thread-safe) and caches them until cleanup. */
int lfv_devices_get(const struct lfv_device_table **table);
const struct lfv_device *lfv_device_find(const char *name);
void lfv_devices_release(void);

/* Asks rdma_cm which device and source address route to dst. */
int lfv_route_lookup(const struct sockaddr *dst, char *dev_name,
		     size_t name_len, union lfv_sockaddr *src);

size_t lfv_sockaddr_len(const struct sockaddr *sa);

#endif /* LFV_DEVICE_H */
