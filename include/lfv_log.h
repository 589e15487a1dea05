/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Logging goes through libfabric's fi_log so FI_LOG_LEVEL/FI_LOG_SUBSYS apply. */
#ifndef LFV_LOG_H
#define LFV_LOG_H

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>

/* The provider whose name and log settings the messages carry: the
 * transport sets it when it loads (lfv_log_init), so the core names
 * nothing of the transport's; until then a placeholder named "lfverbs". */
extern const struct fi_provider *lfv_log_prov;

void lfv_log_init(const struct fi_provider *prov);

#define LFV_WARN(subsys, ...) FI_WARN(lfv_log_prov, subsys, __VA_ARGS__)
#define LFV_INFO(subsys, ...) FI_INFO(lfv_log_prov, subsys, __VA_ARGS__)
#define LFV_DBG(subsys, ...)  FI_DBG(lfv_log_prov, subsys, __VA_ARGS__)

#endif /* LFV_LOG_H */
