/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Run-time parameters, defined through fi_param_define so `fi_info -e` lists
 * them as FI_LFVERBS_<NAME> and read once at provider load.
 */
#ifndef LFV_PARAM_H
#define LFV_PARAM_H

#include <stddef.h>

struct lfv_params {
	char *device_name;	/* comma list of devices to use, in order */
	size_t tx_size;		/* default tx queue depth */
	size_t rx_size;		/* default rx queue depth */
	size_t tx_iov_limit;	/* default tx sge count */
	size_t rx_iov_limit;	/* default rx sge count */
	size_t inline_size;	/* default inject size; 0 = device maximum */
	size_t bounce_size;	/* buffered receives: bytes per buffer */
	size_t buffered_recv;	/* 1: every MSG endpoint buffers receives */
	size_t rdm;		/* 1: offer FI_EP_RDM */
	size_t rdm_eager;	/* RDM: largest message sent eagerly */
	size_t rdm_sar;		/* RDM: largest sent eagerly in segments */
	size_t rdm_rx_bufs;	/* RDM: receive buffers on the SRQ */
	size_t rdm_read_max;	/* RDM: bytes per RDMA op; 0: the port's */
	size_t rdm_reads;	/* RDM: rendezvous reads in flight per
				 * connection; 0: no limit */
	size_t rdm_rndv_write;	/* RDM: 1: rendezvous by the sender's
				 * writes (CTS), not the receiver's reads */
	size_t mr_cache;	/* RDM: cached registrations; 0: none */
	size_t svc_timeout;	/* ms an AV waits for a service name */
	size_t rdm_handshakes_max; /* RDM: handshakes under way per endpoint */
	size_t rdm_rndv_timeout; /* RDM: s a rendezvous waits before asking */
	size_t rdm_live_timeout; /* RDM: s quiet and unanswered: dead */
	size_t rdm_rndv_peer_max; /* RDM: rendezvous waiting per peer; 0: half
				   * the transmit requests */
	size_t rdm_unexp_max;	/* RDM: unexpected messages per endpoint */
	size_t rdm_unexp_bytes;	/* RDM: and their bytes */
	size_t rdm_conns_max;	/* RDM: connections peers made, per endpoint */
	size_t shm;		/* RDM: 1: shm carries same-host messages */
};

extern struct lfv_params lfv_params;

struct fi_provider;

/* Defines every parameter with the core, as prov's, and loads the
 * values. */
void lfv_params_init(struct fi_provider *prov);

#endif /* LFV_PARAM_H */
