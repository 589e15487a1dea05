/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The CQ as a fid: fi_cq_open, fi_close, fi_control and its ops tables.
 * The parts: lfv_cq.c (writers, waking), lfv_cq_read.c (the read path and
 * its modes), lfv_cq_err.c (the error queue), lfv_cq_wait.c (sread,
 * signal, trywait), lfv_cq_peer.c (the peer roles).
 */
#include <stdlib.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_cq.h"
#include "lfv_cq_format.h"
#include "lfv_cq_peer.h"
#include "lfv_log.h"
#include "lfv_stubs.h"
#include "lfv_wait_set.h"

static int lfv_cq_control(struct fid *fid, int command, void *arg)
{
	struct lfv_cq *cq = lfv_container_of(fid, struct lfv_cq, cq_fid.fid);

	if (command == FI_EXPORT_FID)
		return lfv_cq_export(cq, arg);
	if (cq->owner)
		return -FI_ENOSYS;
	return lfv_wait_control(&cq->wait, command, arg);
}

static int lfv_cq_close(struct fid *fid)
{
	struct lfv_cq *cq = lfv_container_of(fid, struct lfv_cq, cq_fid.fid);

	if (lfv_ref_read(&cq->ref) > 1)
		return -FI_EBUSY;
	lfv_wait_set_unbind(&cq->wait, fid);
	if (cq->hw.fini)
		cq->hw.fini(cq->hw.arg);
	if (!cq->owner) {
		lfv_ring_fini(&cq->ring);
		lfv_wait_fini(&cq->wait);
	}
	lfv_cq_err_fini(cq);
	lfv_ref_put(cq->parent_ref);
	free(cq);
	return 0;
}

static struct fi_ops lfv_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lfv_cq_close,
	.bind = lfv_no_bind,
	.control = lfv_cq_control,
	.ops_open = lfv_no_ops_open,
	.tostr = lfv_no_tostr,
	.ops_set = lfv_no_ops_set,
};

static struct fi_ops_cq lfv_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfv_cq_read,
	.readfrom = lfv_cq_readfrom,
	.readerr = lfv_cq_readerr,
	.sread = lfv_cq_sread,
	.sreadfrom = lfv_cq_sreadfrom,
	.signal = lfv_cq_signal,
	.strerror = lfv_cq_strerror,
};

static int lfv_cq_check_attr(const struct fi_cq_attr *attr,
			     enum fi_wait_obj *wait_obj)
{
	long ncpu;
	int ret;

	if ((attr->flags & FI_PEER) && !lfv_peer_allowed())
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)(FI_AFFINITY | FI_PEER))
		return -FI_EINVAL;
	if (attr->format > FI_CQ_FORMAT_TAGGED)
		return -FI_EINVAL;
	if (attr->size > LFV_RING_MAX_CAPACITY)
		return -FI_EINVAL;
	if (attr->wait_cond != FI_CQ_COND_NONE &&
	    attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_EINVAL;
	if (attr->flags & FI_AFFINITY) {
		ncpu = sysconf(_SC_NPROCESSORS_CONF);
		if (attr->signaling_vector < 0 || attr->signaling_vector >= ncpu)
			return -FI_EINVAL;
	}
	if (attr->flags & FI_PEER) {
		*wait_obj = FI_WAIT_NONE; /* the owner does the waiting */
		return 0;
	}
	ret = lfv_wait_select(attr->wait_obj, attr->wait_set, wait_obj);
	if (ret)
		LFV_WARN(FI_LOG_CQ, "unsupported CQ wait object %d\n",
			 attr->wait_obj);
	return ret;
}
/* The ring, wait object and error queue of a CQ that holds entries. */
static int lfv_cq_init_queue(struct lfv_cq *cq, const struct fi_cq_attr *attr,
			     enum fi_wait_obj wait_obj)
{
	int ret;

	ret = lfv_ring_init(&cq->ring, attr->size ? attr->size :
				       LFV_CQ_DEFAULT_SIZE, lfv_cq_slot_size(cq));
	if (ret)
		return ret;
	ret = lfv_wait_init(&cq->wait, wait_obj);
	if (ret)
		lfv_ring_fini(&cq->ring);
	return ret;
}

int lfv_cq_open(const struct fi_cq_attr *attr, void *context,
		const struct lfv_cq_params *params, struct fid_cq **cq_fid)
{
	enum fi_wait_obj wait_obj;
	struct lfv_cq *cq;
	int ret;

	if (!attr || !params || !cq_fid)
		return -FI_EINVAL;
	ret = lfv_cq_check_attr(attr, &wait_obj);
	if (ret)
		return ret;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	if (attr->flags & FI_PEER) {
		ret = lfv_cq_peer_owner(context, &cq->owner);
		if (ret)
			goto free_cq;
	}
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->fmt_size = lfv_cq_format_size(cq->format);
	cq->store_src = params->store_src;
	cq->serial_reads = params->serial_reads;
	cq->cond_threshold = attr->wait_cond == FI_CQ_COND_THRESHOLD;
	cq->signaling_vector = (attr->flags & FI_AFFINITY) ?
			       attr->signaling_vector : -1;
	cq->api_version = params->api_version;
	cq->prov_strerror = params->prov_strerror;
	cq->parent_ref = params->parent_ref;
	cq->hw.fd = -1;
	ret = lfv_cq_err_init(cq);
	if (ret)
		goto free_cq;
	if (!cq->owner) {
		ret = lfv_cq_init_queue(cq, attr, wait_obj);
		if (ret)
			goto fini_errors;
	}
	lfv_cq_update_mode(cq);
	atomic_init(&cq->ref, 1);
	lfv_fid_init(&cq->cq_fid.fid, FI_CLASS_CQ, context, &lfv_cq_fi_ops);
	cq->cq_fid.ops = cq->owner ? &lfv_cq_peer_ops : &lfv_cq_ops;
	lfv_cq_init_export(cq);
	/* Last: a wait set's fi_wait may look at the CQ from now on. */
	if (wait_obj == FI_WAIT_FD && attr->wait_obj == FI_WAIT_SET) {
		ret = lfv_wait_set_bind(attr->wait_set, &cq->cq_fid.fid,
					&cq->wait);
		if (ret)
			goto fini_queue;
	}
	lfv_ref_get(cq->parent_ref);
	*cq_fid = &cq->cq_fid;
	return 0;

fini_queue:
	lfv_wait_fini(&cq->wait);
	lfv_ring_fini(&cq->ring);
fini_errors:
	lfv_cq_err_fini(cq);
free_cq:
	free(cq);
	return ret;
}
