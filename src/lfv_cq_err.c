/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ's error queue: entries that lfv_cq_write_err copies, with their
 * err_data, until fi_cq_readerr takes them (slow path, one mutex), and the
 * text for their provider error codes.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_cq.h"
#include "lfv_err_data.h"
#include "lfv_stubs.h"

struct lfv_cq_err {
	struct lfv_list node;
	struct fi_cq_err_entry err;	/* err_data not set: data follows */
	size_t len;
	uint8_t data[];
};

int lfv_cq_err_init(struct lfv_cq *cq)
{
	lfv_list_init(&cq->errors);
	return lfv_mutex_init(&cq->err_lock);
}

void lfv_cq_err_fini(struct lfv_cq *cq)
{
	struct lfv_list *item;

	while ((item = lfv_list_pop_head(&cq->errors)))
		free(lfv_container_of(item, struct lfv_cq_err, node));
	free(cq->err_data_held);
	lfv_mutex_destroy(&cq->err_lock);
}

static int lfv_cq_err_queue(struct lfv_cq *cq,
			    const struct fi_cq_err_entry *err)
{
	size_t len = err->err_data ? err->err_data_size : 0;
	struct lfv_cq_err *node;

	node = malloc(sizeof(*node) + len);
	if (!node)
		return -FI_ENOMEM;
	node->err = *err;
	node->err.err_data = NULL;
	node->err.err_data_size = 0;
	node->len = len;
	if (len)
		memcpy(node->data, err->err_data, len);
	lfv_mutex_lock(&cq->err_lock);
	lfv_list_insert_tail(&cq->errors, &node->node);
	/* Relaxed: readers take err_lock before using the list; the count
	 * only tells them to. */
	lfv_fetch_add64(&cq->err_count, 1);
	lfv_mutex_unlock(&cq->err_lock);
	return 0;
}

int lfv_cq_write_err(struct lfv_cq *cq, const struct fi_cq_err_entry *err)
{
	ssize_t ret;

	if (cq->owner) {
		ret = cq->owner->owner_ops->writeerr(cq->owner, err);
		return ret < 0 ? (int)ret : 0;
	}
	ret = lfv_cq_err_queue(cq, err);
	if (ret)
		return (int)ret;
	lfv_cq_wake(cq);
	return 0;
}

/* fi_cq_err_entry grew err_data_size in 1.5: older callers have less room. */
static size_t lfv_cq_err_entry_size(uint32_t api_version)
{
	return api_version < FI_VERSION(1, 5) ?
	       offsetof(struct fi_cq_err_entry, err_data_size) :
	       sizeof(struct fi_cq_err_entry);
}

ssize_t lfv_cq_readerr(struct fid_cq *cq_fid,
		       struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);
	struct fi_cq_err_entry out;
	struct lfv_list *item;
	struct lfv_cq_err *node;
	void *user_data = NULL;
	size_t user_size = 0;
	ssize_t ret;

	(void)flags;
	if (!buf)
		return -FI_EINVAL;
	if (cq->api_version >= FI_VERSION(1, 5)) {
		user_data = buf->err_data;
		user_size = buf->err_data_size;
	}
	lfv_mutex_lock(&cq->err_lock);
	item = lfv_list_first(&cq->errors);
	if (!item) {
		ret = -FI_EAGAIN;
		goto unlock;
	}
	node = lfv_container_of(item, struct lfv_cq_err, node);
	ret = lfv_err_data_deliver(&cq->err_data_held, cq->api_version,
				   node->data, node->len, &user_data,
				   &user_size);
	if (ret)
		goto unlock;
	out = node->err;
	out.err_data = user_data;
	out.err_data_size = user_size;
	memcpy(buf, &out, lfv_cq_err_entry_size(cq->api_version));
	lfv_list_remove(item);
	/* Relaxed: under err_lock, pairs with the increment there. */
	lfv_fetch_sub64(&cq->err_count, 1);
	free(node);
	ret = 1;
unlock:
	lfv_mutex_unlock(&cq->err_lock);
	return ret;
}

const char *lfv_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
			    const void *err_data, char *buf, size_t len)
{
	struct lfv_cq *cq = lfv_cq_from_fid(cq_fid);
	const char *str;

	(void)err_data;
	str = cq->prov_strerror ? cq->prov_strerror(prov_errno) :
				  fi_strerror(prov_errno < 0 ? -prov_errno :
							       prov_errno);
	return lfv_strerror_out(str, buf, len);
}
