/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Shared by the functional tests: they use only the public libfabric API,
 * loading lfverbs through the real core (FI_PROVIDER_PATH). */
#ifndef FUNC_COMMON_H
#define FUNC_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

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

#endif /* FUNC_COMMON_H */
