/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* A fake owner CQ for the unit tests of peer roles (CQ, SRX): the
 * fid_peer_cq an owner exports, recording what the peer writes to it.
 * Include after cmocka.h and lfv_cq.h. */
#ifndef UNIT_PEER_CQ_H
#define UNIT_PEER_CQ_H

#include <string.h>

#define UNIT_PEER_CQ_MAX 32

struct unit_peer_cq {
	struct fid_peer_cq cq;
	struct fi_ops_cq_owner ops;
	int nwrites;
	int nerrs;
	struct lfv_cq_comp writes[UNIT_PEER_CQ_MAX];
	struct fi_cq_err_entry errs[UNIT_PEER_CQ_MAX];
};

static inline ssize_t unit_peer_cq_write(struct fid_peer_cq *cq,
					 void *context, uint64_t flags,
					 size_t len, void *buf, uint64_t data,
					 uint64_t tag, fi_addr_t src)
{
	struct unit_peer_cq *f =
		lfv_container_of(cq, struct unit_peer_cq, cq);

	assert_true(f->nwrites < UNIT_PEER_CQ_MAX);
	f->writes[f->nwrites++] = (struct lfv_cq_comp){
		.context = context, .flags = flags, .len = len, .buf = buf,
		.data = data, .tag = tag, .src = src,
	};
	return 0;
}

static inline ssize_t unit_peer_cq_writeerr(struct fid_peer_cq *cq,
					    const struct fi_cq_err_entry *err)
{
	struct unit_peer_cq *f =
		lfv_container_of(cq, struct unit_peer_cq, cq);

	assert_true(f->nerrs < UNIT_PEER_CQ_MAX);
	f->errs[f->nerrs++] = *err;
	return 0;
}

static inline void unit_peer_cq_init(struct unit_peer_cq *f)
{
	memset(f, 0, sizeof(*f));
	f->ops = (struct fi_ops_cq_owner){
		.size = sizeof(f->ops),
		.write = unit_peer_cq_write,
		.writeerr = unit_peer_cq_writeerr,
	};
	f->cq.fid.fclass = FI_CLASS_PEER_CQ;
	f->cq.owner_ops = &f->ops;
}

#endif
