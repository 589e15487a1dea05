/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Shared by the functional tests: they use only the public libfabric API,
 * loading lfverbs through the real core (FI_PROVIDER_PATH). */
#ifndef FUNC_COMMON_H
#define FUNC_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "../test_with.h"

#define FUNC_VERSION FI_VERSION(1, 17)
#define FUNC_MR_MODE (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
		      FI_MR_PROV_KEY)

static inline const char *func_dev(void)
{
	const char *dev = getenv("LFV_BED_DEV");

	return dev && *dev ? dev : "rxe0";
}

static inline const char *func_ip(void)
{
	const char *ip = getenv("LFV_BED_IP");

	return ip && *ip ? ip : "10.77.0.1";
}

/* Hints that select lfverbs on the test device. */
static inline struct fi_info *func_hints(enum fi_ep_type type)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		abort();
	hints->fabric_attr->prov_name = strdup("lfverbs");
	hints->domain_attr->name = strdup(func_dev());
	hints->domain_attr->mr_mode = FUNC_MR_MODE;
	hints->ep_attr->type = type;
	return hints;
}

/* TAP "skip all" when lfverbs sees no device: the tests need soft-RoCE. */
static inline void func_require_device(void)
{
	struct fi_info *hints = func_hints(FI_EP_UNSPEC), *info = NULL;
	int ret = fi_getinfo(FUNC_VERSION, NULL, NULL, 0, hints, &info);

	fi_freeinfo(hints);
	if (ret && getenv("LFV_REQUIRE_DEVICE")) {
		/* Inside the test bed a missing device is a failure. */
		printf("Bail out! lfverbs finds no device %s (%s)\n",
		       func_dev(), fi_strerror(-ret));
		exit(1);
	}
	if (ret) {
		printf("1..0 # SKIP lfverbs finds no device %s (%s); run "
		       "through tests/bed/rxe-bed\n", func_dev(),
		       fi_strerror(-ret));
		exit(0);
	}
	fi_freeinfo(info);
}

/* Reads one connection event within timeout_ms into *entry (its fixed
 * part); returns the event (FI_CONNREQ, ...) or a negative error. */
static inline int func_cm_event(struct fid_eq *eq, struct fi_eq_cm_entry *entry,
				int timeout_ms)
{
	uint8_t raw[sizeof(*entry) + 256];
	uint32_t event;
	ssize_t ret;

	ret = fi_eq_sread(eq, &event, raw, sizeof(raw), timeout_ms, 0);
	if (ret < 0)
		return (int)ret;
	if (ret < (ssize_t)sizeof(*entry))
		return -FI_EOTHER;
	memcpy(entry, raw, sizeof(*entry));
	return (int)event;
}

/* Reads n entries of entry_size bytes (and their sources if src) from cq,
 * polling until timeout_ms passes; returns how many it got, or the first
 * error other than -FI_EAGAIN. */
static inline ssize_t func_cq_read_n(struct fid_cq *cq, void *buf,
				     size_t entry_size, size_t n,
				     fi_addr_t *src, int timeout_ms)
{
	struct timespec start, now;
	size_t got = 0;
	ssize_t ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (got < n) {
		ret = src ? fi_cq_readfrom(cq, (char *)buf + got * entry_size,
					   n - got, src + got) :
			    fi_cq_read(cq, (char *)buf + got * entry_size,
				       n - got);
		if (ret > 0) {
			got += (size_t)ret;
			continue;
		}
		if (ret != -FI_EAGAIN)
			return got ? (ssize_t)got : ret;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000 > timeout_ms)
			break;
	}
	return (ssize_t)got;
}

#endif /* FUNC_COMMON_H */
