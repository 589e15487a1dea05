/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every UD queue pair of lfverbs shares (lfv_ud.c): DGRAM endpoints
 * and RDM control QPs.
 */
#ifndef LFV_UD_H
#define LFV_UD_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Space a UD receive gets in front of the payload: the GRH. */
#define LFV_GRH_SIZE 40
/* rdma_cm's Q_Key for its UDP port space: a service resolution (lfv_svc.h)
 * answers with it, so every UD QP of lfverbs uses it. */
#define LFV_UD_QKEY RDMA_UDP_QKEY

/* Brings a UD QP from RESET to RTS with lfverbs' Q_Key (lfv_ud.c): DGRAM
 * endpoints and RDM control QPs. */
int lfv_ud_qp_ready(struct ibv_qp *qp, uint8_t port_num);

#endif /* LFV_UD_H */
