/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * err_data hand-over shared by fi_eq_readerr and fi_cq_readerr. fi_eq(3) and
 * fi_cq(3) give the same rule: with API >= 1.5 and a caller buffer
 * (err_data_size > 0 on input) the provider copies up to that many bytes
 * and reports how many; otherwise err_data points at a provider-owned copy
 * that stays valid until the next read of the queue.
 */
#ifndef LFV_ERR_DATA_H
#define LFV_ERR_DATA_H

#include <stddef.h>
#include <stdint.h>

/*
 * data, len: the error's own bytes. user_data, user_size: the caller's
 * buffer on input, the result on output. *held: the provider-owned copy of
 * the previous hand-over, replaced here (the caller frees it on the next
 * read and at close). Returns 0 or -FI_ENOMEM.
 */
int lfv_err_data_deliver(void **held, uint32_t api_version, const void *data,
			 size_t len, void **user_data, size_t *user_size);

/* fi_eq_strerror/fi_cq_strerror: str, copied into buf when one is given
 * (truncated, always terminated); returns what the caller should return. */
const char *lfv_strerror_out(const char *str, char *buf, size_t len);

#endif /* LFV_ERR_DATA_H */
