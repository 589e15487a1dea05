/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <rdma/providers/fi_prov.h>

#include "lfv_log.h"
#include "lfv_param.h"

struct lfv_params lfv_params = {
	.device_name = NULL,
	.tx_size = 384,
	.rx_size = 384,
	.tx_iov_limit = 4,
	.rx_iov_limit = 4,
	.inline_size = 0,
	.bounce_size = 16384,
	.buffered_recv = 0,
	.rdm = 1,
	.rdm_eager = 16384,
	.rdm_sar = 131072,
	.rdm_rx_bufs = 256,
	.rdm_read_max = 262144,
	.rdm_reads = 2,
	.rdm_rndv_write = 0,
	.mr_cache = 0,		/* see fi_lfverbs(7): not safe yet */
	.svc_timeout = 5000,
	.rdm_handshakes_max = 4096,
	.rdm_rndv_timeout = 300,
	.rdm_live_timeout = 30,
	.rdm_rndv_peer_max = 0,
	.rdm_unexp_max = 1 << 20,
	.rdm_unexp_bytes = (size_t)1 << 30,
	.rdm_conns_max = 65536,
	.shm = 0,		/* see fi_lfverbs(7): a first cut */
};

static void lfv_param_str(struct fi_provider *prov, const char *name,
			  char **dst, const char *help)
{
	fi_param_define(prov, name, FI_PARAM_STRING, "%s", help);
	fi_param_get_str(prov, name, dst);
}

static void lfv_param_size(struct fi_provider *prov, const char *name,
			   size_t *dst, const char *help)
{
	fi_param_define(prov, name, FI_PARAM_SIZE_T, "%s (default: %zu)",
			help, *dst);
	fi_param_get_size_t(prov, name, dst);
}

/* A size_t parameter: FI_LFVERBS_<NAME> sets lfv_params.<name>. */
struct lfv_size_param {
	const char *name;
	size_t *dst;
	const char *help;
};

#define LFV_SIZE_PARAM(field, text) \
	{ .name = #field, .dst = &lfv_params.field, .help = text }

/* In the order fi_info -e lists them. */
static const struct lfv_size_param lfv_size_params[] = {
	LFV_SIZE_PARAM(tx_size,
		       "Default transmit queue depth reported by fi_getinfo, "
		       "capped at the device's max_qp_wr"),
	LFV_SIZE_PARAM(rx_size,
		       "Default receive queue depth reported by fi_getinfo, "
		       "capped at the device's max_qp_wr"),
	LFV_SIZE_PARAM(tx_iov_limit,
		       "Default transmit iov limit, capped at the device's "
		       "max_sge"),
	LFV_SIZE_PARAM(rx_iov_limit,
		       "Default receive iov limit, capped at the device's "
		       "max_sge"),
	LFV_SIZE_PARAM(inline_size,
		       "Default inject size in bytes, capped at the device's "
		       "probed max_inline_data; 0 means the device maximum"),
	LFV_SIZE_PARAM(bounce_size,
		       "Bytes of each provider receive buffer of MSG endpoints "
		       "that buffer receives (FI_MULTI_RECV); also their "
		       "max_msg_size"),
	LFV_SIZE_PARAM(buffered_recv,
		       "1: every MSG endpoint receives through provider "
		       "buffers (one copy), which makes fi_cancel of receives "
		       "possible; 0: only endpoints with FI_MULTI_RECV do"),
	LFV_SIZE_PARAM(rdm,
		       "1: fi_getinfo offers FI_EP_RDM endpoints; 0 hides "
		       "them"),
	LFV_SIZE_PARAM(rdm_eager,
		       "RDM: payload bytes of the largest message sent eagerly "
		       "through provider buffers"),
	LFV_SIZE_PARAM(rdm_sar,
		       "RDM: payload bytes of the largest message sent "
		       "eagerly in segments of the eager size (above it: "
		       "rendezvous); at or below FI_LFVERBS_RDM_EAGER: none"),
	LFV_SIZE_PARAM(rdm_rx_bufs,
		       "RDM: provider receive buffers each endpoint keeps on "
		       "its shared receive queue"),
	LFV_SIZE_PARAM(rdm_read_max,
		       "RDM: bytes of one RDMA read or write (rendezvous "
		       "receives, RMA); 0: the port's largest message"),
	LFV_SIZE_PARAM(rdm_reads,
		       "RDM: rendezvous RDMA reads in flight per connection "
		       "(all receives from that peer); 0: no limit"),
	LFV_SIZE_PARAM(rdm_rndv_write,
		       "RDM: 1: a rendezvous receive into one buffer asks its "
		       "sender to RDMA-write the payload (CTS) instead of "
		       "reading it; 0: it reads (default)"),
	LFV_SIZE_PARAM(mr_cache,
		       "RDM: registrations of unregistered application buffers "
		       "kept for reuse (rendezvous, RMA), per domain; 0: none "
		       "(default; experimental, see fi_lfverbs(7))"),
	LFV_SIZE_PARAM(svc_timeout,
		       "DGRAM and RDM: milliseconds fi_av_insert of a host "
		       "and service waits for the endpoint there to answer, "
		       "trying again while nobody listens at the port yet"),
	LFV_SIZE_PARAM(rdm_handshakes_max,
		       "RDM: connection handshakes an endpoint has under way "
		       "at most; a peer's request past it is dropped (the peer "
		       "asks again), so a flood of requests cannot take a "
		       "queue pair each"),
	LFV_SIZE_PARAM(rdm_rndv_timeout,
		       "RDM: seconds a rendezvous send waits for the "
		       "receiver's FIN before it asks whether the receiver "
		       "still holds the request, and as many again for the "
		       "answer before it fails (FI_ETIMEDOUT); 0: for ever"),
	LFV_SIZE_PARAM(rdm_live_timeout,
		       "RDM: seconds a connection with work on its queue pair "
		       "waits without a completion and without an answer to "
		       "its liveness PINGs before it fails (FI_ETIMEDOUT): a "
		       "peer that exited, whose host or link is down, or that "
		       "has not read its completion queue for that long; 0: "
		       "for ever"),
	LFV_SIZE_PARAM(rdm_rndv_peer_max,
		       "RDM: rendezvous sends to one peer waiting for its FIN "
		       "at most; past it sends to that peer return "
		       "-FI_EAGAIN; 0: half the transmit queue"),
	LFV_SIZE_PARAM(rdm_unexp_max,
		       "RDM: messages an endpoint holds that arrived before "
		       "their receive, at most (one peer: half); past it "
		       "an eager message is dropped, a rendezvous refused"),
	LFV_SIZE_PARAM(rdm_unexp_bytes,
		       "RDM: bytes those messages take, at most (one peer: "
		       "half)"),
	LFV_SIZE_PARAM(rdm_conns_max,
		       "RDM: connections peers' requests made to an endpoint, "
		       "at most; a new peer's request past it is dropped"),
	LFV_SIZE_PARAM(shm,
		       "RDM: 1: messages (fi_msg, fi_tagged) to processes on "
		       "the same host go through libfabric's shm provider as "
		       "lfverbs' peer (libfabric 2.x; no effect on 1.x); 0: "
		       "through verbs"),
};

void lfv_params_init(struct fi_provider *prov)
{
	size_t i;

	lfv_param_str(prov, "device_name", &lfv_params.device_name,
		      "Comma-separated list of verbs device names to use, in "
		      "order of preference (e.g. rxe0,mlx5_0). Overrides the "
		      "hwloc nearest-device ordering; other devices are not "
		      "reported (default: all devices, nearest first)");
	for (i = 0; i < sizeof(lfv_size_params) / sizeof(lfv_size_params[0]);
	     i++)
		lfv_param_size(prov, lfv_size_params[i].name,
			       lfv_size_params[i].dst, lfv_size_params[i].help);
}
