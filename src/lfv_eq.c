/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "lfv_eq.h"
#include "lfv_err_data.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

struct lfv_eq_event {
	struct lfv_list node;
	uint32_t event;
	bool is_err;
	size_t len;			/* bytes in data (event or err_data) */
	struct fi_eq_err_entry err;	/* valid when is_err */
	uint8_t data[];
};

static struct lfv_eq_event *lfv_eq_head(struct lfv_eq *eq)
{
	struct lfv_list *first = lfv_list_first(&eq->events);

	return first ? lfv_container_of(first, struct lfv_eq_event, node) :
		       NULL;
}

static void lfv_eq_enqueue(struct lfv_eq *eq, struct lfv_eq_event *ev)
{
	lfv_mutex_lock(&eq->lock);
	lfv_list_insert_tail(&eq->events, &ev->node);
	lfv_mutex_unlock(&eq->lock);
	lfv_wait_signal(&eq->wait);
}

int lfv_eq_push(struct lfv_eq *eq, uint32_t event, const void *buf,
		size_t len)
{
	struct lfv_eq_event *ev;

	ev = calloc(1, sizeof(*ev) + len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	if (len)
		memcpy(ev->data, buf, len);
	lfv_eq_enqueue(eq, ev);
	return 0;
}

int lfv_eq_push_err(struct lfv_eq *eq, const struct fi_eq_err_entry *err)
{
	size_t data_len = err->err_data ? err->err_data_size : 0;
	struct lfv_eq_event *ev;

	ev = calloc(1, sizeof(*ev) + data_len);
	if (!ev)
		return -FI_ENOMEM;
	ev->is_err = true;
	ev->err = *err;
	ev->len = data_len;
	if (data_len)
		memcpy(ev->data, err->err_data, data_len);
	ev->err.err_data = NULL;
	ev->err.err_data_size = 0;
	lfv_eq_enqueue(eq, ev);
	return 0;
}

/* Caller holds eq->lock. Provider-owned err_data lives until the next read. */
static void lfv_eq_release_err_data(struct lfv_eq *eq)
{
	free(eq->err_data_held);
	eq->err_data_held = NULL;
}

/* Caller holds eq->lock. Returns bytes read or a negative error. */
static ssize_t lfv_eq_read_locked(struct lfv_eq *eq, uint32_t *event,
				  void *buf, size_t len, uint64_t flags)
{
	struct lfv_eq_event *ev = lfv_eq_head(eq);

	lfv_eq_release_err_data(eq);
	if (!ev)
		return -FI_EAGAIN;
	if (ev->is_err)
		return -FI_EAVAIL;
	if (len < ev->len)
		return -FI_ETOOSMALL;
	*event = ev->event;
	if (ev->len)
		memcpy(buf, ev->data, ev->len);
	len = ev->len;
	if (!(flags & FI_PEEK)) {
		lfv_list_remove(&ev->node);
		free(ev);
	}
	return (ssize_t)len;
}

static ssize_t lfv_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct lfv_eq *eq = lfv_eq_from_fid(eq_fid);
	ssize_t ret;

	if (!event || (len && !buf))
		return -FI_EINVAL;
	lfv_progress_run(&eq->source.progress);
	lfv_mutex_lock(&eq->lock);
	ret = lfv_eq_read_locked(eq, event, buf, len, flags);
	lfv_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t lfv_eq_readerr(struct fid_eq *eq_fid,
			      struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct lfv_eq *eq = lfv_eq_from_fid(eq_fid);
	struct lfv_eq_event *ev;
	void *user_data;
	size_t user_size;
	ssize_t ret = sizeof(*buf);

	(void)flags;
	if (!buf)
		return -FI_EINVAL;
	lfv_progress_run(&eq->source.progress);
	lfv_mutex_lock(&eq->lock);
	lfv_eq_release_err_data(eq);
	ev = lfv_eq_head(eq);
	if (!ev || !ev->is_err) {
		ret = -FI_EAGAIN;
		goto unlock;
	}
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	ret = lfv_err_data_deliver(&eq->err_data_held, eq->api_version,
				   ev->data, ev->len, &user_data, &user_size);
	if (ret)
		goto unlock;
	ev->err.err_data = user_data;
	ev->err.err_data_size = user_size;
	/* fi_eq_err_entry grew err_data_size in 1.5: older callers have
	 * less room. */
	ret = eq->api_version < FI_VERSION(1, 5) ?
	      (ssize_t)offsetof(struct fi_eq_err_entry, err_data_size) :
	      (ssize_t)sizeof(*buf);
	memcpy(buf, &ev->err, (size_t)ret);
	ret = sizeof(*buf);
	lfv_list_remove(&ev->node);
	free(ev);
unlock:
	lfv_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t lfv_eq_write(struct fid_eq *eq_fid, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	int ret;

	(void)flags;
	if (len && !buf)
		return -FI_EINVAL;
	ret = lfv_eq_push(lfv_eq_from_fid(eq_fid), event, buf, len);
	return ret ? ret : (ssize_t)len;
}

struct lfv_eq_sread_arg {
	struct lfv_eq *eq;
	uint32_t *event;
	void *buf;
	size_t len;
	uint64_t flags;
	ssize_t ret;
};

static bool lfv_eq_sread_ready(void *arg)
{
	struct lfv_eq_sread_arg *a = arg;

	a->ret = lfv_eq_read(&a->eq->eq_fid, a->event, a->buf, a->len,
			     a->flags);
	return a->ret != -FI_EAGAIN;
}

/* A condition variable cannot watch the source's fd: wait in slices and
 * let each slice's read poll the source. */
static ssize_t lfv_eq_sread_polled(struct lfv_eq_sread_arg *arg, int timeout)
{
	int64_t deadline = timeout < 0 ? -1 :
			   lfv_now_ns() + (int64_t)timeout * 1000000;
	int64_t left;
	int slice, ret;

	for (;;) {
		slice = LFV_EQ_SOURCE_POLL_MS;
		if (deadline >= 0) {
			left = (deadline - lfv_now_ns() + 999999) / 1000000;
			if (left <= 0)
				return lfv_eq_sread_ready(arg) ? arg->ret :
								 -FI_EAGAIN;
			if (left < slice)
				slice = (int)left;
		}
		ret = lfv_wait_until(&arg->eq->wait, slice, lfv_eq_sread_ready,
				     arg);
		if (!ret || ret != -FI_EAGAIN)
			return ret ? ret : arg->ret;
	}
}

static ssize_t lfv_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct lfv_eq_sread_arg arg = {
		.eq = lfv_eq_from_fid(eq_fid),
		.event = event,
		.buf = buf,
		.len = len,
		.flags = flags,
		.ret = -FI_EAGAIN,
	};
	int ret;

	if (!event || (len && !buf))
		return -FI_EINVAL;
	/* fi_eq(3): with FI_WAIT_NONE the application may not call sread. */
	if (arg.eq->wait.type == FI_WAIT_NONE)
		return -FI_EINVAL;
	if (arg.eq->source.progress.fn &&
	    arg.eq->wait.type == FI_WAIT_MUTEX_COND)
		return lfv_eq_sread_polled(&arg, timeout);
	ret = lfv_wait_until(&arg.eq->wait, timeout, lfv_eq_sread_ready, &arg);
	return ret ? ret : arg.ret;
}

static const char *lfv_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	const char *str = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	(void)eq_fid;
	(void)err_data;
	return lfv_strerror_out(str, buf, len);
}

int lfv_eq_trywait(struct lfv_eq *eq)
{
	int ret = 0;

	lfv_progress_run(&eq->source.progress);
	lfv_mutex_lock(&eq->lock);
	if (!lfv_list_empty(&eq->events))
		ret = -FI_EAGAIN;
	else
		lfv_wait_reset(&eq->wait);
	lfv_mutex_unlock(&eq->lock);
	return ret;
}

static int lfv_eq_close(struct fid *fid)
{
	struct lfv_eq *eq = lfv_container_of(fid, struct lfv_eq, eq_fid.fid);
	struct lfv_list *item;

	if (lfv_ref_read(&eq->ref) > 1)
		return -FI_EBUSY;
	lfv_wait_set_unbind(&eq->wait, fid);
	if (eq->source.fini)
		eq->source.fini(eq->source.progress.arg);
	while ((item = lfv_list_pop_head(&eq->events)))
		free(lfv_container_of(item, struct lfv_eq_event, node));
	lfv_eq_release_err_data(eq);
	lfv_wait_fini(&eq->wait);
	lfv_mutex_destroy(&eq->lock);
	lfv_ref_put(eq->parent_ref);
	free(eq);
	return 0;
}

static int lfv_eq_control(struct fid *fid, int command, void *arg)
{
	struct lfv_eq *eq = lfv_container_of(fid, struct lfv_eq, eq_fid.fid);

	return lfv_wait_control(&eq->wait, command, arg);
}

static struct fi_ops lfv_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_eq_close,
	.bind = lfv_no_bind,
	.control = lfv_eq_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_eq lfv_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = lfv_eq_read,
	.readerr = lfv_eq_readerr,
	.write = lfv_eq_write,
	.sread = lfv_eq_sread,
	.strerror = lfv_eq_strerror,
};

struct lfv_eq *lfv_eq_from_bind_fid(struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_EQ || fid->ops != &lfv_eq_fi_ops)
		return NULL;
	return lfv_container_of(fid, struct lfv_eq, eq_fid.fid);
}

static int lfv_eq_check_attr(const struct fi_eq_attr *attr,
			     enum fi_wait_obj *wait_obj)
{
	int ret;

	if (attr->flags & ~(uint64_t)(FI_WRITE | FI_AFFINITY)) {
		LFV_WARN(FI_LOG_EQ, "unsupported EQ flags 0x%llx\n",
			 (unsigned long long)attr->flags);
		return -FI_EINVAL;
	}
	ret = lfv_wait_select(attr->wait_obj, attr->wait_set, wait_obj);
	if (ret)
		LFV_WARN(FI_LOG_EQ, "unsupported EQ wait object %d\n",
			 attr->wait_obj);
	return ret;
}

int lfv_eq_attach_source(struct lfv_eq *eq, const struct lfv_eq_source *src)
{
	int ret;

	if (!src || !src->progress.fn)
		return -FI_EINVAL;
	if (eq->source.progress.fn)
		return -FI_EBUSY;
	ret = lfv_wait_add_fd(&eq->wait, src->fd);
	if (ret)
		return ret;
	eq->source = *src;
	return 0;
}

int lfv_eq_open(const struct fi_eq_attr *attr, void *context,
		uint32_t api_version, lfv_atomic32_t *parent_ref,
		struct fid_eq **eq_fid)
{
	enum fi_wait_obj wait_obj;
	struct lfv_eq *eq;
	int ret;

	if (!attr || !eq_fid)
		return -FI_EINVAL;
	ret = lfv_eq_check_attr(attr, &wait_obj);
	if (ret)
		return ret;

	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = lfv_mutex_init(&eq->lock);
	if (ret)
		goto free_eq;
	ret = lfv_wait_init(&eq->wait, wait_obj);
	if (ret)
		goto destroy_lock;

	lfv_list_init(&eq->events);
	eq->size = attr->size ? attr->size : LFV_EQ_DEFAULT_SIZE;
	eq->flags = attr->flags;
	eq->api_version = api_version;
	eq->parent_ref = parent_ref;
	atomic_init(&eq->ref, 1);
	lfv_fid_init(&eq->eq_fid.fid, FI_CLASS_EQ, context, &lfv_eq_fi_ops);
	eq->eq_fid.ops = &lfv_eq_ops;
	/* Last: a wait set's fi_wait may look at the EQ from now on. */
	if (attr->wait_obj == FI_WAIT_SET) {
		ret = lfv_wait_set_bind(attr->wait_set, &eq->eq_fid.fid,
					&eq->wait);
		if (ret)
			goto fini_wait;
	}
	lfv_ref_get(parent_ref);
	*eq_fid = &eq->eq_fid;
	return 0;

fini_wait:
	lfv_wait_fini(&eq->wait);
destroy_lock:
	lfv_mutex_destroy(&eq->lock);
free_eq:
	free(eq);
	return ret;
}
