/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "lfv_err_data.h"

const char *lfv_strerror_out(const char *str, char *buf, size_t len)
{
	if (!buf || !len)
		return str;
	strncpy(buf, str, len - 1);
	buf[len - 1] = '\0';
	return buf;
}

int lfv_err_data_deliver(void **held, uint32_t api_version, const void *data,
			 size_t len, void **user_data, size_t *user_size)
{
	size_t n;

	free(*held);
	*held = NULL;
	if (api_version >= FI_VERSION(1, 5) && *user_size) {
		n = *user_size < len ? *user_size : len;
		if (n)
			memcpy(*user_data, data, n);
		*user_size = n;
		return 0;
	}
	if (!len) {
		*user_data = NULL;
		*user_size = 0;
		return 0;
	}
	*held = malloc(len);
	if (!*held)
		return -FI_ENOMEM;
	memcpy(*held, data, len);
	*user_data = *held;
	*user_size = len;
	return 0;
}
