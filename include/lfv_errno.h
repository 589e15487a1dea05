/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ibverbs and rdma_cm report errors three ways: a positive errno return
 * (ibv_post_*, ibv_destroy_*), NULL or -1 with errno set (ibv_reg_mr,
 * rdma_create_id), and sometimes a negative errno. Every call site converts
 * through these two helpers into libfabric's negative -FI_E* convention.
 */
#ifndef LFV_ERRNO_H
#define LFV_ERRNO_H

#include <errno.h>
#include <rdma/fi_errno.h>

/* For calls that return 0 or an error code of either sign, or -1 + errno. */
static inline int lfv_verbs_ret(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == -1)
		return errno ? -errno : -FI_EOTHER;
	return rc > 0 ? -rc : rc;
}

/* For calls that returned NULL and set errno. */
static inline int lfv_verbs_errno(void)
{
	return errno ? -errno : -FI_EOTHER;
}

#endif /* LFV_ERRNO_H */
