/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_getinfo's hint checks (lfv_info_fits.c): does a template satisfy every
 * hint field? A hint the provider cannot satisfy drops the template, never
 * widens the answer. The memory-registration rules are here too, since
 * narrowing an answer (lfv_getinfo.c) applies the same ones.
 */
#ifndef LFV_INFO_FITS_H
#define LFV_INFO_FITS_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/fabric.h>

/* Applications built before 1.5 speak the old mr_mode values. */
static inline bool lfv_is_legacy_mr(uint32_t version)
{
	return version < FI_VERSION(1, 5);
}

#define LFV_RMA_TARGET_CAPS (FI_REMOTE_READ | FI_REMOTE_WRITE)
/* mr_mode bits that only concern peers reaching into this process's memory
 * (libfabric's OFI_MR_MODE_RMA_TARGET): an application that cannot be an
 * RMA target need not offer them. */
#define LFV_MR_RMA_TARGET_MODES (FI_MR_RAW | FI_MR_VIRT_ADDR |             \
				 FI_MR_PROV_KEY | FI_MR_RMA_EVENT)

/* mr_mode bits the application accepts, in the >= 1.5 bit form. */
bool lfv_user_mr_is_legacy(int mr_mode);
/* mr_mode 0 from a 1.5+ application: not an RMA target (lfv_info_fits.c). */
bool lfv_mr_unspec(const struct fi_info *hints, uint32_t version);
/* Whether hinted caps can make an RMA or atomic target. */
bool lfv_caps_rma_target(uint64_t caps);
/* The mr_mode bits a request with these caps must accept. */
int lfv_needed_mr_mode(int prov_mr_mode, uint64_t user_caps);

/* Whether the template prov satisfies every field of hints (NULL: yes);
 * a mismatch is logged with the device's name. */
bool lfv_info_fits(const struct fi_info *prov, const struct fi_info *hints,
		   uint32_t version);

#endif /* LFV_INFO_FITS_H */
