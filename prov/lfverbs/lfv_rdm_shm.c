/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * shm as the RDM endpoint's intra-node peer: see lfv_rdm_shm.h. The
 * sequence is fi_peer(3)'s (and the efa provider's): shm's info with
 * FI_PEER and FI_AV_USER_ID, its CQs and counters opened with FI_PEER on
 * ours, its SRX imported from ours, its endpoint named from our address.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

#include "lfv_atomic.h"
#include "lfv_auto.h"
#include "lfv_av.h"
#include "lfv_cntr.h"
#include "lfv_cq.h"
#include "lfv_fi_compat.h"
#include "lfv_log.h"
#include "lfv_param.h"
#include "lfv_peer_srx.h"
#include "lfv_rdm_ep.h"
#include "lfv_rdm_shm.h"
#include "lfv_rdm_shm_av.h"
#include "lfv_rdm_tx.h"

/* What the endpoint holds for shm. */
struct lfv_rdm_shm_ep {
	struct fid_ep *ep;
	struct fid_ep *srx;			/* shm's import of ours */
	struct fid_peer_srx *export;		/* ours, for shm */
	struct fid_cq *tx_cq, *rx_cq;		/* rx_cq NULL: tx_cq does both */
	struct fid_cntr *cntr[2];		/* FI_SEND, FI_RECV */
	lfv_atomic64_t sent;			/* statistics only */
};

/* ---- the endpoint's part ---------------------------------------------------- */

/* shm's CQ as a peer of ours, bound to its endpoint with flags. */
static int lfv_rdm_shm_cq(struct lfv_rdm_shm_av *s, struct lfv_rdm_shm_ep *x,
			  struct lfv_cq *cq, uint64_t flags,
			  struct fid_cq **out)
{
	struct fi_peer_cq_context ctx = {
		.size = sizeof(ctx), .cq = &cq->peer_cq,
	};
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED, .flags = FI_PEER,
	};
	int ret;

	ret = fi_cq_open(s->domain, &attr, out, &ctx);
	if (ret)
		return ret;
	return fi_ep_bind(x->ep, &(*out)->fid, flags);
}

/* shm's counters of sends and receives as peers of ours, where bound. */
static int lfv_rdm_shm_cntrs(struct lfv_rdm_ep *ep, struct lfv_rdm_shm_av *s,
			     struct lfv_rdm_shm_ep *x)
{
	static const struct {
		enum lfv_cntr_kind kind;
		uint64_t flag;
	} which[2] = { { LFV_CNTR_SEND, FI_SEND }, { LFV_CNTR_RECV, FI_RECV } };
	struct fi_cntr_attr attr = { .flags = FI_PEER };
	struct fi_peer_cntr_context ctx = { .size = sizeof(ctx) };
	struct lfv_cntr *c;
	int i, ret;

	for (i = 0; i < 2; i++) {
		c = ep->base.cntr[which[i].kind];
		if (!c)
			continue;
		if (!LFV_PEER_CNTR_SUPPORTED)
			return -FI_ENOSYS;
		ctx.cntr = &c->peer_cntr;
		ret = fi_cntr_open(s->domain, &attr, &x->cntr[i], &ctx);
		if (ret)
			return ret;
		ret = fi_ep_bind(x->ep, &x->cntr[i]->fid, which[i].flag);
		if (ret)
			return ret;
	}
	return 0;
}

/* shm's SRX imported from ours: one matching order for both paths. */
static int lfv_rdm_shm_srx(struct lfv_rdm_ep *ep, struct lfv_rdm_shm_av *s,
			   struct lfv_rdm_shm_ep *x)
{
	struct fi_rx_attr attr = { .op_flags = FI_PEER };
	struct fi_peer_srx_context ctx = { .size = sizeof(ctx) };
	int ret;

	ret = lfv_peer_srx_export(ep->srx, &x->export);
	if (ret)
		return ret;
	ctx.srx = x->export;
	ret = fi_srx_context(s->domain, &attr, &x->srx, &ctx);
	if (ret)
		return ret;
	/* shm 2.x hands back its side to bind; before 2.0 it binds ours. */
	return fi_ep_bind(x->ep, x->srx ? &x->srx->fid : &x->export->ep_fid.fid,
			  0);
}

static void lfv_rdm_shm_ep_free(struct lfv_rdm_shm_ep *x)
{
	int i, ret = 0;

	/* Our export first, while shm is there to take back what it queued
	 * (discard); if shm still holds entries (-FI_EBUSY), its close
	 * returns them, and the export closes after it. */
	if (x->export)
		ret = fi_close(&x->export->ep_fid.fid);
	if (x->ep)
		fi_close(&x->ep->fid);
	if (x->srx)
		fi_close(&x->srx->fid);
	if (x->export && ret)
		fi_close(&x->export->ep_fid.fid);
	for (i = 0; i < 2; i++)
		if (x->cntr[i])
			fi_close(&x->cntr[i]->fid);
	if (x->rx_cq)
		fi_close(&x->rx_cq->fid);
	if (x->tx_cq)
		fi_close(&x->tx_cq->fid);
	free(x);
}

/* Every shm object of the endpoint, enabled; on failure nothing. */
static int lfv_rdm_shm_ep_build(struct lfv_rdm_ep *ep, struct lfv_rdm_shm_av *s,
				struct lfv_rdm_shm_ep **out)
{
	struct lfv_cq *tx = ep->base.tx_cq, *rx = ep->base.rx_cq;
	char name[LFV_SHM_NAME_MAX];
	struct lfv_rdm_shm_ep *x;
	int ret;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -FI_ENOMEM;
	ret = fi_endpoint(s->domain, s->info, &x->ep, NULL);
	if (ret)
		goto free;
	lfv_rdm_shm_name(&ep->name, name, sizeof(name));
	ret = fi_setname(&x->ep->fid, name, strlen(name) + 1);
	if (!ret)
		ret = fi_ep_bind(x->ep, &s->av->fid, 0);
	if (!ret && tx)
		ret = lfv_rdm_shm_cq(s, x, tx, FI_TRANSMIT | (tx == rx ?
				     FI_RECV : 0) | (ep->base.tx_selective ?
				     FI_SELECTIVE_COMPLETION : 0), &x->tx_cq);
	if (!ret && rx && rx != tx)
		ret = lfv_rdm_shm_cq(s, x, rx, FI_RECV, &x->rx_cq);
	if (!ret)
		ret = lfv_rdm_shm_cntrs(ep, s, x);
	if (!ret)
		ret = lfv_rdm_shm_srx(ep, s, x);
	if (!ret)
		ret = fi_enable(x->ep);
	if (ret)
		goto free;
	*out = x;
	return 0;

free:
	lfv_rdm_shm_ep_free(x);
	return ret;
}

void lfv_rdm_shm_ep_open(struct lfv_rdm_ep *ep)
{
	struct lfv_rdm_shm_av *s = ep->base.av->rdm_shm;
	int ret;

	/* shm needs both CQs of its endpoint (it has no send-only or
	 * receive-only use here); without them, verbs only. */
	if (!s || !ep->base.tx_cq || !ep->base.rx_cq || !ep->srx)
		return;
	ret = lfv_rdm_shm_ep_build(ep, s, &ep->shm);
	if (ret) {
		LFV_WARN(FI_LOG_EP_CTRL, "shm peer endpoint: %s; through "
			 "verbs only\n", fi_strerror(-ret));
		return;
	}
	/* shm has no fd to wake the progress thread: it ticks instead. */
	if (ep->base.domain->progress_auto)
		lfv_auto_ticked(ep->base.domain, true);
}

void lfv_rdm_shm_ep_close(struct lfv_rdm_ep *ep)
{
	if (!ep->shm)
		return;
	LFV_INFO(FI_LOG_EP_CTRL, "RDM close: %" PRIu64 " sends through shm, "
		 "%" PRIu32 " connections\n",
		 lfv_load_relaxed64(&ep->shm->sent), ep->nconns);
	lfv_rdm_shm_ep_free(ep->shm);
	ep->shm = NULL;
	if (ep->base.domain->progress_auto)
		lfv_auto_ticked(ep->base.domain, false);
}

void lfv_rdm_shm_progress(struct lfv_rdm_ep *ep)
{
	if (!ep->shm)
		return;
	/* fi_peer(3): reading a peer CQ with no buffer drives its
	 * provider, which writes what completes into ours. */
	fi_cq_read(ep->shm->tx_cq, NULL, 0);
	if (ep->shm->rx_cq)
		fi_cq_read(ep->shm->rx_cq, NULL, 0);
}

/* fi_inject*: one buffer, never a completion. */
static ssize_t lfv_rdm_shm_inject(struct fid_ep *shm, const struct lfv_rdm_send *s,
				  fi_addr_t to)
{
	const void *buf = s->count ? s->iov[0].iov_base : NULL;
	size_t len = s->count ? s->iov[0].iov_len : 0;

	if (s->flags & FI_REMOTE_CQ_DATA)
		return s->tagged ? fi_tinjectdata(shm, buf, len, s->data, to, s->tag) :
				   fi_injectdata(shm, buf, len, s->data, to);
	return s->tagged ? fi_tinject(shm, buf, len, to, s->tag) :
			   fi_inject(shm, buf, len, to);
}

/* The one builder of a send to shm: fi_sendmsg / fi_tsendmsg with the
 * call's flags (shm's CQ is bound with the endpoint's selective
 * completion, so FI_COMPLETION means the same there). No descriptors:
 * ours are verbs registrations, which shm neither needs (host memory)
 * nor knows. */
static ssize_t lfv_rdm_shm_post(struct lfv_rdm_shm_ep *x,
				const struct lfv_rdm_send *s, fi_addr_t to)
{
	struct fi_msg_tagged m = {
		.msg_iov = s->iov, .iov_count = s->count, .addr = to,
		.tag = s->tag, .context = s->context, .data = s->data,
	};

	if (s->inject)
		return lfv_rdm_shm_inject(x->ep, s, to);
	if (s->tagged)
		return fi_tsendmsg(x->ep, &m, s->flags);
	return fi_sendmsg(x->ep, &(struct fi_msg){
		.msg_iov = s->iov, .iov_count = s->count, .addr = to,
		.context = s->context, .data = s->data }, s->flags);
}

bool lfv_rdm_shm_send(struct lfv_rdm_ep *ep, const struct lfv_rdm_send *s,
		      ssize_t *ret)
{
	const struct lfv_av_dest *d = lfv_av_dest(ep->base.av, s->dest);
	const struct lfv_av_entry *e;

	if (!d)
		return false;
	e = lfv_container_of(d, const struct lfv_av_entry, dest);
	if (!e->via_shm)
		return false;
	*ret = lfv_rdm_shm_post(ep->shm, s, e->shm_addr);
	if (!*ret)
		lfv_fetch_add64(&ep->shm->sent, 1);
	return true;
}
