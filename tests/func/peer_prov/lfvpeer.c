/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lfvpeer: a test-only libfabric provider plugin. `make check` builds it
 * (it is never installed) so that tests/func/func_peer_prov.c can prove
 * lfverbs' peer CQs (fi_peer(3)) through the real libfabric core: Debian
 * 12's shm (libfabric 1.17.0) cannot be a peer.
 *
 * - One FI_EP_RDM fi_info: FI_MSG | FI_SEND | FI_RECV, FI_ADDR_STR names
 *   "fi_lfvpeer://<pid>:<n>", FI_AV_TABLE, manual progress, no MR.
 * - The wire is an in-process loopback: endpoints find each other by name
 *   in a process-global registry. fi_send and fi_recv only queue. Reading
 *   any lfvpeer CQ (for a peer CQ: fi_cq_read(cq, NULL, 0)) is the progress:
 *   every pending send of the process whose target has a receive posted is
 *   copied into the oldest one, and both completions are written.
 * - A CQ opened with FI_PEER holds nothing: it writes every completion
 *   through the owner's fid_peer_cq (write / writeerr), and its other reads
 *   return -FI_ENOSYS. A CQ opened without FI_PEER holds its own entries
 *   (no wait object) and can be an owner: fi_export_fid() gives a
 *   fid_peer_cq whose write / writeerr queue into it.
 * - One global mutex guards everything. Unimplemented ops return
 *   -FI_ENOSYS.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include "lfv_fi_compat.h"	/* the peer interfaces of this libfabric */
#include "lfv_cq_format.h"	/* header-only: the entry size of a format */
#include "lfv_list.h"		/* header-only: the queues */
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#define LFVPEER_NAME "lfvpeer"
#define LFVPEER_ADDR_PREFIX "fi_lfvpeer://"
#define LFVPEER_ADDRLEN 48
#define LFVPEER_QUEUE_SIZE 1024
#define LFVPEER_MAX_MSG (1UL << 30)
#define LFVPEER_TX_CAPS (FI_MSG | FI_SEND)
#define LFVPEER_RX_CAPS (FI_MSG | FI_RECV)
#define LFVPEER_CAPS (LFVPEER_TX_CAPS | LFVPEER_RX_CAPS)

/* An operation waiting on an endpoint (e: what its completion will say,
 * addr: the destination), or an entry held by an owner CQ (addr: source). */
struct lfvpeer_item {
	struct lfv_list node;
	struct fi_cq_err_entry e;
	fi_addr_t addr;
};

/* A FIFO of items; its owner's open calls lfv_list_init on items. */
struct lfvpeer_queue {
	struct lfv_list items;
	size_t count;
};

struct lfvpeer_fabric {
	struct fid_fabric fabric_fid;
	int ref;
};

struct lfvpeer_domain {
	struct fid_domain domain_fid;
	struct lfvpeer_fabric *fabric;
	int ref;
};

struct lfvpeer_av {
	struct fid_av av_fid;
	struct lfvpeer_domain *domain;
	char **names;		/* fi_addr_t is the index; NULL once removed */
	size_t count, cap;
	int ref;
};

struct lfvpeer_cq {
	struct fid_cq cq_fid;
	struct fid_peer_cq peer_cq;	/* what an owner exports */
	struct lfvpeer_domain *domain;
	struct fid_peer_cq *owner;	/* FI_PEER: where completions go */
	size_t fmt_size;
	struct lfvpeer_queue comps, errs; /* an owner's entries */
	int ref;
};

struct lfvpeer_ep {
	struct fid_ep ep_fid;
	struct lfvpeer_domain *domain;
	struct lfvpeer_ep *next;	/* in lfvpeer_registry */
	struct lfvpeer_cq *tx_cq, *rx_cq;
	struct lfvpeer_av *av;
	bool enabled;
	char name[LFVPEER_ADDRLEN];
	struct lfvpeer_queue tx, rx;
};

static struct fi_provider lfvpeer_prov;
static pthread_mutex_t lfvpeer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfvpeer_ep *lfvpeer_registry;
static unsigned int lfvpeer_next_id;

/* ---- stubs: every slot is filled, the unimplemented ones say so ---------- */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static int lfvpeer_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{ return -FI_ENOSYS; }
static int lfvpeer_no_control(struct fid *fid, int command, void *arg)
{ return -FI_ENOSYS; }
static int lfvpeer_no_ops_open(struct fid *fid, const char *name,
			       uint64_t flags, void **ops, void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_tostr(const struct fid *fid, char *buf, size_t len)
{ return -FI_ENOSYS; }
static int lfvpeer_no_ops_set(struct fid *fid, const char *name,
			      uint64_t flags, void *ops, void *context)
{ return -FI_ENOSYS; }

static int lfvpeer_no_passive_ep(struct fid_fabric *fabric,
				 struct fi_info *info, struct fid_pep **pep,
				 void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_eq_open(struct fid_fabric *fabric,
			      struct fi_eq_attr *attr, struct fid_eq **eq,
			      void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_wait_open(struct fid_fabric *fabric,
				struct fi_wait_attr *attr,
				struct fid_wait **waitset)
{ return -FI_ENOSYS; }
static int lfvpeer_no_trywait(struct fid_fabric *fabric, struct fid **fids,
			      int count)
{ return -FI_ENOSYS; }
static int lfvpeer_no_domain2(struct fid_fabric *fabric, struct fi_info *info,
			      struct fid_domain **dom, uint64_t flags,
			      void *context)
{ return -FI_ENOSYS; }

static int lfvpeer_no_scalable_ep(struct fid_domain *domain,
				  struct fi_info *info, struct fid_ep **sep,
				  void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_cntr_open(struct fid_domain *domain,
				struct fi_cntr_attr *attr,
				struct fid_cntr **cntr, void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_poll_open(struct fid_domain *domain,
				struct fi_poll_attr *attr,
				struct fid_poll **pollset)
{ return -FI_ENOSYS; }
static int lfvpeer_no_stx_ctx(struct fid_domain *domain,
			      struct fi_tx_attr *attr, struct fid_stx **stx,
			      void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_srx_ctx(struct fid_domain *domain,
			      struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			      void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_query_atomic(struct fid_domain *domain,
				   enum fi_datatype datatype, enum fi_op op,
				   struct fi_atomic_attr *attr, uint64_t flags)
{ return -FI_ENOSYS; }
static int lfvpeer_no_query_collective(struct fid_domain *domain,
				       enum fi_collective_op coll,
				       struct fi_collective_attr *attr,
				       uint64_t flags)
{ return -FI_ENOSYS; }
static int lfvpeer_no_endpoint2(struct fid_domain *domain,
				struct fi_info *info, struct fid_ep **ep,
				uint64_t flags, void *context)
{ return -FI_ENOSYS; }

static int lfvpeer_no_mr_reg(struct fid *fid, const void *buf, size_t len,
			     uint64_t access, uint64_t offset,
			     uint64_t requested_key, uint64_t flags,
			     struct fid_mr **mr, void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_mr_regv(struct fid *fid, const struct iovec *iov,
			      size_t count, uint64_t access, uint64_t offset,
			      uint64_t requested_key, uint64_t flags,
			      struct fid_mr **mr, void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_mr_regattr(struct fid *fid,
				 const struct fi_mr_attr *attr, uint64_t flags,
				 struct fid_mr **mr)
{ return -FI_ENOSYS; }

static int lfvpeer_no_av_insertsym(struct fid_av *av, const char *node,
				   size_t nodecnt, const char *service,
				   size_t svccnt, fi_addr_t *fi_addr,
				   uint64_t flags, void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
			     struct fid_av_set **av_set, void *context)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_readfrom(struct fid_cq *cq, void *buf, size_t count,
				   fi_addr_t *src_addr)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_readerr(struct fid_cq *cq,
				  struct fi_cq_err_entry *buf, uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_sread(struct fid_cq *cq, void *buf, size_t count,
				const void *cond, int timeout)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_sreadfrom(struct fid_cq *cq, void *buf, size_t count,
				    fi_addr_t *src_addr, const void *cond,
				    int timeout)
{ return -FI_ENOSYS; }
static int lfvpeer_no_signal(struct fid_cq *cq)
{ return -FI_ENOSYS; }

static int lfvpeer_no_getopt(fid_t fid, int level, int optname, void *optval,
			     size_t *optlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_setopt(fid_t fid, int level, int optname,
			     const void *optval, size_t optlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_tx_ctx(struct fid_ep *sep, int index,
			     struct fi_tx_attr *attr, struct fid_ep **tx_ep,
			     void *context)
{ return -FI_ENOSYS; }
static int lfvpeer_no_rx_ctx(struct fid_ep *sep, int index,
			     struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			     void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_size_left(struct fid_ep *ep)
{ return -FI_ENOSYS; }

static int lfvpeer_no_setname(fid_t fid, void *addr, size_t addrlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_connect(struct fid_ep *ep, const void *addr,
			      const void *param, size_t paramlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_listen(struct fid_pep *pep)
{ return -FI_ENOSYS; }
static int lfvpeer_no_accept(struct fid_ep *ep, const void *param,
			     size_t paramlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_reject(struct fid_pep *pep, fid_t handle,
			     const void *param, size_t paramlen)
{ return -FI_ENOSYS; }
static int lfvpeer_no_shutdown(struct fid_ep *ep, uint64_t flags)
{ return -FI_ENOSYS; }
static int lfvpeer_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
			   struct fid_mc **mc, void *context)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_inject(struct fid_ep *ep, const void *buf,
				 size_t len, fi_addr_t dest_addr)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_injectdata(struct fid_ep *ep, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest_addr)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_rma_read(struct fid_ep *ep, void *buf, size_t len,
				   void *desc, fi_addr_t src_addr,
				   uint64_t addr, uint64_t key, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_readv(struct fid_ep *ep, const struct iovec *iov,
				    void **desc, size_t count,
				    fi_addr_t src_addr, uint64_t addr,
				    uint64_t key, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_msg(struct fid_ep *ep,
				  const struct fi_msg_rma *msg, uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_write(struct fid_ep *ep, const void *buf,
				    size_t len, void *desc,
				    fi_addr_t dest_addr, uint64_t addr,
				    uint64_t key, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_writev(struct fid_ep *ep,
				     const struct iovec *iov, void **desc,
				     size_t count, fi_addr_t dest_addr,
				     uint64_t addr, uint64_t key,
				     void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_inject(struct fid_ep *ep, const void *buf,
				     size_t len, fi_addr_t dest_addr,
				     uint64_t addr, uint64_t key)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_writedata(struct fid_ep *ep, const void *buf,
					size_t len, void *desc, uint64_t data,
					fi_addr_t dest_addr, uint64_t addr,
					uint64_t key, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_rma_injectdata(struct fid_ep *ep, const void *buf,
					 size_t len, uint64_t data,
					 fi_addr_t dest_addr, uint64_t addr,
					 uint64_t key)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_trecv(struct fid_ep *ep, void *buf, size_t len,
				void *desc, fi_addr_t src_addr, uint64_t tag,
				uint64_t ignore, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_trecvv(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count, fi_addr_t src_addr,
				 uint64_t tag, uint64_t ignore, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tmsg(struct fid_ep *ep,
			       const struct fi_msg_tagged *msg, uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tsend(struct fid_ep *ep, const void *buf, size_t len,
				void *desc, fi_addr_t dest_addr, uint64_t tag,
				void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tsendv(struct fid_ep *ep, const struct iovec *iov,
				 void **desc, size_t count,
				 fi_addr_t dest_addr, uint64_t tag,
				 void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tinject(struct fid_ep *ep, const void *buf,
				  size_t len, fi_addr_t dest_addr,
				  uint64_t tag)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tsenddata(struct fid_ep *ep, const void *buf,
				    size_t len, void *desc, uint64_t data,
				    fi_addr_t dest_addr, uint64_t tag,
				    void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_tinjectdata(struct fid_ep *ep, const void *buf,
				      size_t len, uint64_t data,
				      fi_addr_t dest_addr, uint64_t tag)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_atomic_write(struct fid_ep *ep, const void *buf,
				       size_t count, void *desc,
				       fi_addr_t dest_addr, uint64_t addr,
				       uint64_t key, enum fi_datatype datatype,
				       enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_writev(struct fid_ep *ep,
					const struct fi_ioc *iov, void **desc,
					size_t count, fi_addr_t dest_addr,
					uint64_t addr, uint64_t key,
					enum fi_datatype datatype,
					enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_writemsg(struct fid_ep *ep,
					  const struct fi_msg_atomic *msg,
					  uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_inject(struct fid_ep *ep, const void *buf,
					size_t count, fi_addr_t dest_addr,
					uint64_t addr, uint64_t key,
					enum fi_datatype datatype,
					enum fi_op op)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_readwrite(struct fid_ep *ep, const void *buf,
					   size_t count, void *desc,
					   void *result, void *result_desc,
					   fi_addr_t dest_addr, uint64_t addr,
					   uint64_t key,
					   enum fi_datatype datatype,
					   enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_readwritev(struct fid_ep *ep,
					    const struct fi_ioc *iov,
					    void **desc, size_t count,
					    struct fi_ioc *resultv,
					    void **result_desc,
					    size_t result_count,
					    fi_addr_t dest_addr, uint64_t addr,
					    uint64_t key,
					    enum fi_datatype datatype,
					    enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_readwritemsg(struct fid_ep *ep,
					      const struct fi_msg_atomic *msg,
					      struct fi_ioc *resultv,
					      void **result_desc,
					      size_t result_count,
					      uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_compwrite(struct fid_ep *ep, const void *buf,
					   size_t count, void *desc,
					   const void *compare,
					   void *compare_desc, void *result,
					   void *result_desc,
					   fi_addr_t dest_addr, uint64_t addr,
					   uint64_t key,
					   enum fi_datatype datatype,
					   enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_compwritev(struct fid_ep *ep,
					    const struct fi_ioc *iov,
					    void **desc, size_t count,
					    const struct fi_ioc *comparev,
					    void **compare_desc,
					    size_t compare_count,
					    struct fi_ioc *resultv,
					    void **result_desc,
					    size_t result_count,
					    fi_addr_t dest_addr, uint64_t addr,
					    uint64_t key,
					    enum fi_datatype datatype,
					    enum fi_op op, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_atomic_compwritemsg(struct fid_ep *ep,
					      const struct fi_msg_atomic *msg,
					      const struct fi_ioc *comparev,
					      void **compare_desc,
					      size_t compare_count,
					      struct fi_ioc *resultv,
					      void **result_desc,
					      size_t result_count,
					      uint64_t flags)
{ return -FI_ENOSYS; }
static int lfvpeer_no_atomic_valid(struct fid_ep *ep,
				   enum fi_datatype datatype, enum fi_op op,
				   size_t *count)
{ return -FI_ENOSYS; }

static ssize_t lfvpeer_no_barrier(struct fid_ep *ep, fi_addr_t coll_addr,
				  void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_broadcast(struct fid_ep *ep, void *buf, size_t count,
				    void *desc, fi_addr_t coll_addr,
				    fi_addr_t root_addr,
				    enum fi_datatype datatype, uint64_t flags,
				    void *context)
{ return -FI_ENOSYS; }
/* alltoall and allgather share one signature. */
static ssize_t lfvpeer_no_allxx(struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *result,
				void *result_desc, fi_addr_t coll_addr,
				enum fi_datatype datatype, uint64_t flags,
				void *context)
{ return -FI_ENOSYS; }
/* allreduce and reduce_scatter too. */
static ssize_t lfvpeer_no_reduce_all(struct fid_ep *ep, const void *buf,
				     size_t count, void *desc, void *result,
				     void *result_desc, fi_addr_t coll_addr,
				     enum fi_datatype datatype, enum fi_op op,
				     uint64_t flags, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_reduce(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t coll_addr,
				 fi_addr_t root_addr, enum fi_datatype datatype,
				 enum fi_op op, uint64_t flags, void *context)
{ return -FI_ENOSYS; }
/* scatter and gather too. */
static ssize_t lfvpeer_no_rooted(struct fid_ep *ep, const void *buf,
				 size_t count, void *desc, void *result,
				 void *result_desc, fi_addr_t coll_addr,
				 fi_addr_t root_addr, enum fi_datatype datatype,
				 uint64_t flags, void *context)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_coll_msg(struct fid_ep *ep,
				   const struct fi_msg_collective *msg,
				   struct fi_ioc *resultv, void **result_desc,
				   size_t result_count, uint64_t flags)
{ return -FI_ENOSYS; }
static ssize_t lfvpeer_no_barrier2(struct fid_ep *ep, fi_addr_t coll_addr,
				   uint64_t flags, void *context)
{ return -FI_ENOSYS; }

#pragma GCC diagnostic pop

/* ---- what every object shares -------------------------------------------- */

/* The fi_ops of an lfvpeer object: its close, bind and control; the rest
 * are stubs. */
#define LFVPEER_FI_OPS(close_fn, bind_fn, control_fn) {			\
	.size = sizeof(struct fi_ops),					\
	.close = close_fn,						\
	.bind = bind_fn,						\
	.control = control_fn,						\
	.ops_open = lfvpeer_no_ops_open,				\
	.tostr = lfvpeer_no_tostr,					\
	.ops_set = lfvpeer_no_ops_set,					\
}

static void lfvpeer_fid_init(struct fid *fid, size_t fclass, void *context,
			     struct fi_ops *ops)
{
	fid->fclass = fclass;
	fid->context = context;
	fid->ops = ops;
}

/* One more object holds *ref's owner open. */
static void lfvpeer_hold(int *ref)
{
	pthread_mutex_lock(&lfvpeer_lock);
	(*ref)++;
	pthread_mutex_unlock(&lfvpeer_lock);
}

/* An object whose ref says nothing holds it lets go of what it was
 * opened on (parent_ref); -FI_EBUSY while something holds it. */
static int lfvpeer_release(const int *ref, int *parent_ref)
{
	int ret = 0;

	pthread_mutex_lock(&lfvpeer_lock);
	if (*ref)
		ret = -FI_EBUSY;
	else
		(*parent_ref)--;
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static struct lfvpeer_domain *lfvpeer_domain_from_fid(struct fid_domain *fid)
{
	return container_of(fid, struct lfvpeer_domain, domain_fid);
}

static struct fi_ops_mr lfvpeer_no_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = lfvpeer_no_mr_reg,
	.regv = lfvpeer_no_mr_regv,
	.regattr = lfvpeer_no_mr_regattr,
};

static struct fi_ops_rma lfvpeer_no_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lfvpeer_no_rma_read,
	.readv = lfvpeer_no_rma_readv,
	.readmsg = lfvpeer_no_rma_msg,
	.write = lfvpeer_no_rma_write,
	.writev = lfvpeer_no_rma_writev,
	.writemsg = lfvpeer_no_rma_msg,
	.inject = lfvpeer_no_rma_inject,
	.writedata = lfvpeer_no_rma_writedata,
	.injectdata = lfvpeer_no_rma_injectdata,
};

static struct fi_ops_tagged lfvpeer_no_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lfvpeer_no_trecv,
	.recvv = lfvpeer_no_trecvv,
	.recvmsg = lfvpeer_no_tmsg,
	.send = lfvpeer_no_tsend,
	.sendv = lfvpeer_no_tsendv,
	.sendmsg = lfvpeer_no_tmsg,
	.inject = lfvpeer_no_tinject,
	.senddata = lfvpeer_no_tsenddata,
	.injectdata = lfvpeer_no_tinjectdata,
};

static struct fi_ops_atomic lfvpeer_no_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = lfvpeer_no_atomic_write,
	.writev = lfvpeer_no_atomic_writev,
	.writemsg = lfvpeer_no_atomic_writemsg,
	.inject = lfvpeer_no_atomic_inject,
	.readwrite = lfvpeer_no_atomic_readwrite,
	.readwritev = lfvpeer_no_atomic_readwritev,
	.readwritemsg = lfvpeer_no_atomic_readwritemsg,
	.compwrite = lfvpeer_no_atomic_compwrite,
	.compwritev = lfvpeer_no_atomic_compwritev,
	.compwritemsg = lfvpeer_no_atomic_compwritemsg,
	.writevalid = lfvpeer_no_atomic_valid,
	.readwritevalid = lfvpeer_no_atomic_valid,
	.compwritevalid = lfvpeer_no_atomic_valid,
};

static struct fi_ops_collective lfvpeer_no_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = lfvpeer_no_barrier,
	.broadcast = lfvpeer_no_broadcast,
	.alltoall = lfvpeer_no_allxx,
	.allreduce = lfvpeer_no_reduce_all,
	.allgather = lfvpeer_no_allxx,
	.reduce_scatter = lfvpeer_no_reduce_all,
	.reduce = lfvpeer_no_reduce,
	.scatter = lfvpeer_no_rooted,
	.gather = lfvpeer_no_rooted,
	.msg = lfvpeer_no_coll_msg,
	.barrier2 = lfvpeer_no_barrier2,
};

/* ---- queues ------------------------------------------------------------- */

/* The oldest item, left in place; NULL when q is empty. */
static struct lfvpeer_item *lfvpeer_first(const struct lfvpeer_queue *q)
{
	struct lfv_list *n = lfv_list_first(&q->items);

	return n ? lfv_container_of(n, struct lfvpeer_item, node) : NULL;
}

static void lfvpeer_push(struct lfvpeer_queue *q, struct lfvpeer_item *it)
{
	lfv_list_insert_tail(&q->items, &it->node);
	q->count++;
}

static void lfvpeer_remove(struct lfvpeer_queue *q, struct lfvpeer_item *it)
{
	lfv_list_remove(&it->node);
	q->count--;
}

static struct lfvpeer_item *lfvpeer_pop(struct lfvpeer_queue *q)
{
	struct lfvpeer_item *it = lfvpeer_first(q);

	if (it)
		lfvpeer_remove(q, it);
	return it;
}

/* Takes out the operation with this context, wherever it is. */
static struct lfvpeer_item *lfvpeer_unlink(struct lfvpeer_queue *q,
					   void *context)
{
	struct lfvpeer_item *it;
	struct lfv_list *n;

	lfv_list_foreach(n, &q->items) {
		it = lfv_container_of(n, struct lfvpeer_item, node);
		if (it->e.op_context == context) {
			lfvpeer_remove(q, it);
			return it;
		}
	}
	return NULL;
}

static void lfvpeer_drain(struct lfvpeer_queue *q)
{
	struct lfvpeer_item *it;

	while ((it = lfvpeer_pop(q)))
		free(it);
}

/* ---- completions ---------------------------------------------------------- */

static struct fi_ops_cq_owner lfvpeer_cq_owner_ops;

static ssize_t lfvpeer_cq_queue(struct lfvpeer_cq *cq,
				const struct fi_cq_err_entry *e, fi_addr_t src)
{
	struct lfvpeer_item *it = calloc(1, sizeof(*it));

	if (!it)
		return -FI_ENOMEM;
	it->e = *e;
	it->addr = src;
	lfvpeer_push(e->err ? &cq->errs : &cq->comps, it);
	return 0;
}

/* Hands one completion to whoever holds this CQ's entries (lock held). */
static void lfvpeer_complete(struct lfvpeer_cq *cq,
			     const struct fi_cq_err_entry *e, fi_addr_t src)
{
	struct fid_peer_cq *owner = cq->owner;
	ssize_t ret;

	if (!owner)
		ret = lfvpeer_cq_queue(cq, e, src);
	else if (owner->owner_ops == &lfvpeer_cq_owner_ops)
		/* An lfvpeer owner: its write would take the lock we hold. */
		ret = lfvpeer_cq_queue(container_of(owner, struct lfvpeer_cq,
						    peer_cq), e, src);
	else if (e->err)
		ret = owner->owner_ops->writeerr(owner, e);
	else
		ret = owner->owner_ops->write(owner, e->op_context, e->flags,
					      e->len, e->buf, e->data, e->tag,
					      src);
	if (ret)
		FI_WARN(&lfvpeer_prov, FI_LOG_CQ, "completion lost: %s\n",
			fi_strerror((int)-ret));
}

/* ---- the loopback wire ---------------------------------------------------- */

static fi_addr_t lfvpeer_av_find(const struct lfvpeer_av *av, const char *name)
{
	size_t i;

	for (i = 0; av && i < av->count; i++)
		if (av->names[i] && !strcmp(av->names[i], name))
			return i;
	return FI_ADDR_NOTAVAIL;
}

static bool lfvpeer_av_valid(const struct lfvpeer_av *av, fi_addr_t addr)
{
	return av && addr < av->count && av->names[addr];
}

static struct lfvpeer_ep *lfvpeer_ep_find(const char *name)
{
	struct lfvpeer_ep *ep;

	for (ep = lfvpeer_registry; ep; ep = ep->next)
		if (!strcmp(ep->name, name))
			return ep;
	return NULL;
}

/* Moves the oldest send of src. false: its target has no receive posted
 * yet, so it waits (and keeps the ones behind it waiting). */
static bool lfvpeer_deliver(struct lfvpeer_ep *src)
{
	struct lfvpeer_item *send = lfvpeer_first(&src->tx), *recv;
	struct fi_cq_err_entry sc = { .op_context = send->e.op_context,
				      .flags = FI_SEND | FI_MSG };
	struct fi_cq_err_entry rc;
	struct lfvpeer_ep *dst = NULL;
	size_t copied;

	if (lfvpeer_av_valid(src->av, send->addr))
		dst = lfvpeer_ep_find(src->av->names[send->addr]);
	if (!dst) {
		/* Removed from the AV, or the endpoint is gone. */
		sc.err = FI_EHOSTUNREACH;
		sc.prov_errno = -FI_EHOSTUNREACH;
		free(lfvpeer_pop(&src->tx));
		lfvpeer_complete(src->tx_cq, &sc, FI_ADDR_NOTAVAIL);
		return true;
	}
	if (!lfvpeer_first(&dst->rx))
		return false;
	lfvpeer_pop(&src->tx);
	recv = lfvpeer_pop(&dst->rx);
	copied = send->e.len < recv->e.len ? send->e.len : recv->e.len;
	if (copied)
		memcpy(recv->e.buf, send->e.buf, copied);
	rc = (struct fi_cq_err_entry){
		.op_context = recv->e.op_context,
		.flags = FI_RECV | FI_MSG | (send->e.flags & FI_REMOTE_CQ_DATA),
		.len = copied,
		.buf = recv->e.buf,
		.data = send->e.data,
	};
	if (send->e.len > copied) {
		rc.olen = send->e.len - copied;
		rc.err = FI_ETRUNC;
		rc.prov_errno = -FI_ETRUNC;
	}
	lfvpeer_complete(src->tx_cq, &sc, FI_ADDR_NOTAVAIL);
	lfvpeer_complete(dst->rx_cq, &rc, lfvpeer_av_find(dst->av, src->name));
	free(send);
	free(recv);
	return true;
}

/* The progress of every lfvpeer CQ: the whole process' wire (lock held). */
static void lfvpeer_progress(void)
{
	struct lfvpeer_ep *ep;

	for (ep = lfvpeer_registry; ep; ep = ep->next)
		while (lfvpeer_first(&ep->tx) && lfvpeer_deliver(ep))
			;
}

/* ---- completion queues ---------------------------------------------------- */

static struct lfvpeer_cq *lfvpeer_cq_from_fid(struct fid_cq *cq_fid)
{
	return container_of(cq_fid, struct lfvpeer_cq, cq_fid);
}

/* An owner CQ's own read. */
static ssize_t lfvpeer_cq_readfrom(struct fid_cq *cq_fid, void *buf,
				   size_t count, fi_addr_t *src)
{
	struct lfvpeer_cq *cq = lfvpeer_cq_from_fid(cq_fid);
	struct fi_cq_tagged_entry t;
	struct lfvpeer_item *it;
	ssize_t ret;
	size_t n;

	pthread_mutex_lock(&lfvpeer_lock);
	lfvpeer_progress();
	if (lfvpeer_first(&cq->errs)) {
		ret = -FI_EAVAIL;
	} else {
		for (n = 0; n < count && (it = lfvpeer_pop(&cq->comps)); n++) {
			t = (struct fi_cq_tagged_entry){
				.op_context = it->e.op_context,
				.flags = it->e.flags, .len = it->e.len,
				.buf = it->e.buf, .data = it->e.data,
				.tag = it->e.tag,
			};
			/* Every format is a prefix of the tagged one. */
			memcpy((char *)buf + n * cq->fmt_size, &t,
			       cq->fmt_size);
			if (src)
				src[n] = it->addr;
			free(it);
		}
		ret = n || !count ? (ssize_t)n : -FI_EAGAIN;
	}
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static ssize_t lfvpeer_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return lfvpeer_cq_readfrom(cq_fid, buf, count, NULL);
}

/* lfvpeer keeps no error data: err_data comes back NULL. */
static ssize_t lfvpeer_cq_readerr(struct fid_cq *cq_fid,
				  struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct lfvpeer_cq *cq = lfvpeer_cq_from_fid(cq_fid);
	struct lfvpeer_item *it;

	if (!buf)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&lfvpeer_lock);
	it = lfvpeer_pop(&cq->errs);
	pthread_mutex_unlock(&lfvpeer_lock);
	if (!it)
		return -FI_EAGAIN;
	*buf = it->e;
	buf->err_data = NULL;
	buf->err_data_size = 0;
	free(it);
	return 1;
}

static const char *lfvpeer_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				       const void *err_data, char *buf,
				       size_t len)
{
	const char *str = fi_strerror(prov_errno < 0 ? -prov_errno :
						       prov_errno);

	(void)cq_fid;
	(void)err_data;
	if (!buf || !len)
		return str;
	snprintf(buf, len, "%s", str);
	return buf;
}

/* A peer CQ: fi_cq_read(cq, NULL, 0) is the owner driving our progress;
 * the entries themselves are in the owner's CQ. */
static ssize_t lfvpeer_cq_peer_read(struct fid_cq *cq_fid, void *buf,
				    size_t count)
{
	(void)cq_fid;
	if (buf || count)
		return -FI_ENOSYS;
	pthread_mutex_lock(&lfvpeer_lock);
	lfvpeer_progress();
	pthread_mutex_unlock(&lfvpeer_lock);
	return 0;
}

/* The owner role: what another provider's peer CQ writes through. */
static ssize_t lfvpeer_owner_write(struct fid_peer_cq *peer_cq, void *context,
				   uint64_t flags, size_t len, void *buf,
				   uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct fi_cq_err_entry e = {
		.op_context = context, .flags = flags, .len = len,
		.buf = buf, .data = data, .tag = tag,
	};
	ssize_t ret;

	pthread_mutex_lock(&lfvpeer_lock);
	ret = lfvpeer_cq_queue(container_of(peer_cq, struct lfvpeer_cq,
					    peer_cq), &e, src);
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static ssize_t lfvpeer_owner_writeerr(struct fid_peer_cq *peer_cq,
				      const struct fi_cq_err_entry *err)
{
	ssize_t ret;

	if (!err || !err->err)
		return -FI_EINVAL;
	pthread_mutex_lock(&lfvpeer_lock);
	ret = lfvpeer_cq_queue(container_of(peer_cq, struct lfvpeer_cq,
					    peer_cq), err, FI_ADDR_NOTAVAIL);
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static struct fi_ops_cq_owner lfvpeer_cq_owner_ops = {
	.size = sizeof(struct fi_ops_cq_owner),
	.write = lfvpeer_owner_write,
	.writeerr = lfvpeer_owner_writeerr,
};

/* The exported fid belongs to its CQ: closing it does nothing. */
static int lfvpeer_peer_cq_close(struct fid *fid)
{
	(void)fid;
	return 0;
}

static struct fi_ops lfvpeer_peer_cq_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_peer_cq_close, lfvpeer_no_bind, lfvpeer_no_control);

static int lfvpeer_cq_control(struct fid *fid, int command, void *arg)
{
	struct lfvpeer_cq *cq = container_of(fid, struct lfvpeer_cq,
					     cq_fid.fid);
	struct fi_fid_export *exp = arg;

	if (command != FI_EXPORT_FID)
		return -FI_ENOSYS;
	if (!exp || !exp->fid)
		return -FI_EINVAL;
	if (exp->flags)
		return -FI_EBADFLAGS;
	if (cq->owner)
		return -FI_EINVAL;	/* a peer CQ holds no entries */
	cq->peer_cq.fid.context = exp->context;
	*exp->fid = &cq->peer_cq.fid;
	return 0;
}

static int lfvpeer_cq_close(struct fid *fid)
{
	struct lfvpeer_cq *cq = container_of(fid, struct lfvpeer_cq,
					     cq_fid.fid);

	pthread_mutex_lock(&lfvpeer_lock);
	if (cq->ref) {
		pthread_mutex_unlock(&lfvpeer_lock);
		return -FI_EBUSY;
	}
	cq->domain->ref--;
	lfvpeer_drain(&cq->comps);
	lfvpeer_drain(&cq->errs);
	pthread_mutex_unlock(&lfvpeer_lock);
	free(cq);
	return 0;
}

static struct fi_ops lfvpeer_cq_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_cq_close, lfvpeer_no_bind, lfvpeer_cq_control);

static struct fi_ops_cq lfvpeer_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfvpeer_cq_read,
	.readfrom = lfvpeer_cq_readfrom,
	.readerr = lfvpeer_cq_readerr,
	.sread = lfvpeer_no_sread,
	.sreadfrom = lfvpeer_no_sreadfrom,
	.signal = lfvpeer_no_signal,
	.strerror = lfvpeer_cq_strerror,
};

static struct fi_ops_cq lfvpeer_cq_peer_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lfvpeer_cq_peer_read,
	.readfrom = lfvpeer_no_readfrom,
	.readerr = lfvpeer_no_readerr,
	.sread = lfvpeer_no_sread,
	.sreadfrom = lfvpeer_no_sreadfrom,
	.signal = lfvpeer_no_signal,
	.strerror = lfvpeer_cq_strerror,
};

static int lfvpeer_cq_open(struct fid_domain *domain_fid,
			   struct fi_cq_attr *attr, struct fid_cq **cq_fid,
			   void *context)
{
	struct lfvpeer_domain *domain = lfvpeer_domain_from_fid(domain_fid);
	struct fi_peer_cq_context *peer = context;
	struct fid_peer_cq *owner = NULL;
	struct lfvpeer_cq *cq;

	if (!attr || !cq_fid)
		return -FI_EINVAL;
	if ((attr->flags & ~(uint64_t)FI_PEER) ||
	    attr->format > FI_CQ_FORMAT_TAGGED ||
	    attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_EINVAL;
	if (attr->flags & FI_PEER) {
		if (!peer || peer->size < sizeof(*peer) || !peer->cq ||
		    !peer->cq->owner_ops || !peer->cq->owner_ops->write ||
		    !peer->cq->owner_ops->writeerr)
			return -FI_EINVAL;
		owner = peer->cq;	/* the owner does any waiting */
	} else if (attr->wait_obj != FI_WAIT_NONE) {
		return -FI_ENOSYS;	/* no sread: no wait objects */
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	lfv_list_init(&cq->comps.items);
	lfv_list_init(&cq->errs.items);
	lfvpeer_fid_init(&cq->cq_fid.fid, FI_CLASS_CQ, context,
			 &lfvpeer_cq_fi_ops);
	cq->cq_fid.ops = owner ? &lfvpeer_cq_peer_ops : &lfvpeer_cq_ops;
	lfvpeer_fid_init(&cq->peer_cq.fid, FI_CLASS_PEER_CQ, NULL,
			 &lfvpeer_peer_cq_fi_ops);
	cq->peer_cq.owner_ops = &lfvpeer_cq_owner_ops;
	cq->owner = owner;
	cq->domain = domain;
	cq->fmt_size = lfv_cq_format_size(attr->format);
	lfvpeer_hold(&domain->ref);
	*cq_fid = &cq->cq_fid;
	return 0;
}

/* ---- address vectors ------------------------------------------------------- */

static bool lfvpeer_name_valid(const char *name)
{
	return name && !strncmp(name, LFVPEER_ADDR_PREFIX,
				strlen(LFVPEER_ADDR_PREFIX)) &&
	       strlen(name) < LFVPEER_ADDRLEN;
}

/* lock held */
static fi_addr_t lfvpeer_av_add(struct lfvpeer_av *av, const char *name)
{
	char **names;
	size_t cap;

	if (!lfvpeer_name_valid(name))
		return FI_ADDR_NOTAVAIL;
	if (av->count == av->cap) {
		cap = av->cap ? 2 * av->cap : 16;
		names = realloc(av->names, cap * sizeof(*names));
		if (!names)
			return FI_ADDR_NOTAVAIL;
		av->names = names;
		av->cap = cap;
	}
	av->names[av->count] = strdup(name);
	if (!av->names[av->count])
		return FI_ADDR_NOTAVAIL;
	return av->count++;
}

/* FI_ADDR_STR: addr is an array of strings (fi_av(3)). */
static int lfvpeer_av_insert(struct fid_av *av_fid, const void *addr,
			     size_t count, fi_addr_t *fi_addr, uint64_t flags,
			     void *context)
{
	struct lfvpeer_av *av = container_of(av_fid, struct lfvpeer_av, av_fid);
	const char *const *names = addr;
	fi_addr_t added;
	size_t i;
	int done = 0;

	(void)context;
	if (flags)
		return -FI_EBADFLAGS;
	if (count && !addr)
		return -FI_EINVAL;
	pthread_mutex_lock(&lfvpeer_lock);
	for (i = 0; i < count; i++) {
		added = lfvpeer_av_add(av, names[i]);
		if (fi_addr)
			fi_addr[i] = added;
		if (added != FI_ADDR_NOTAVAIL)
			done++;
	}
	pthread_mutex_unlock(&lfvpeer_lock);
	return done;
}

static int lfvpeer_av_insertsvc(struct fid_av *av_fid, const char *node,
				const char *service, fi_addr_t *fi_addr,
				uint64_t flags, void *context)
{
	if (service)
		return -FI_EINVAL;	/* node is the whole FI_ADDR_STR name */
	return lfvpeer_av_insert(av_fid, &node, 1, fi_addr, flags, context);
}

static int lfvpeer_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			     size_t count, uint64_t flags)
{
	struct lfvpeer_av *av = container_of(av_fid, struct lfvpeer_av, av_fid);
	size_t i;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&lfvpeer_lock);
	for (i = 0; i < count && !ret; i++)
		if (!lfvpeer_av_valid(av, fi_addr[i]))
			ret = -FI_EINVAL;
	for (i = 0; i < count && !ret; i++) {
		free(av->names[fi_addr[i]]);
		av->names[fi_addr[i]] = NULL;
	}
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static int lfvpeer_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr,
			     void *addr, size_t *addrlen)
{
	struct lfvpeer_av *av = container_of(av_fid, struct lfvpeer_av, av_fid);
	size_t len;
	int ret = -FI_EINVAL;

	if (!addrlen)
		return -FI_EINVAL;
	pthread_mutex_lock(&lfvpeer_lock);
	if (lfvpeer_av_valid(av, fi_addr)) {
		len = strlen(av->names[fi_addr]) + 1;
		ret = *addrlen < len ? -FI_ETOOSMALL : 0;
		if (addr)
			memcpy(addr, av->names[fi_addr],
			       *addrlen < len ? *addrlen : len);
		*addrlen = len;
	}
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static const char *lfvpeer_av_straddr(struct fid_av *av_fid, const void *addr,
				      char *buf, size_t *len)
{
	(void)av_fid;
	if (!addr || !buf || !len)
		return NULL;
	snprintf(buf, *len, "%s", (const char *)addr);
	*len = strlen(addr) + 1;
	return buf;
}

static int lfvpeer_av_close(struct fid *fid)
{
	struct lfvpeer_av *av = container_of(fid, struct lfvpeer_av, av_fid.fid);
	size_t i;

	if (lfvpeer_release(&av->ref, &av->domain->ref))
		return -FI_EBUSY;
	for (i = 0; i < av->count; i++)
		free(av->names[i]);
	free(av->names);
	free(av);
	return 0;
}

static struct fi_ops lfvpeer_av_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_av_close, lfvpeer_no_bind, lfvpeer_no_control);

static struct fi_ops_av lfvpeer_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = lfvpeer_av_insert,
	.insertsvc = lfvpeer_av_insertsvc,
	.insertsym = lfvpeer_no_av_insertsym,
	.remove = lfvpeer_av_remove,
	.lookup = lfvpeer_av_lookup,
	.straddr = lfvpeer_av_straddr,
	.av_set = lfvpeer_no_av_set,
};

static int lfvpeer_av_open(struct fid_domain *domain_fid,
			   struct fi_av_attr *attr, struct fid_av **av_fid,
			   void *context)
{
	struct lfvpeer_domain *domain = lfvpeer_domain_from_fid(domain_fid);
	struct lfvpeer_av *av;

	if (!attr || !av_fid)
		return -FI_EINVAL;
	if ((attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE) ||
	    attr->flags || attr->name || attr->rx_ctx_bits)
		return -FI_EINVAL;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	lfvpeer_fid_init(&av->av_fid.fid, FI_CLASS_AV, context,
			 &lfvpeer_av_fi_ops);
	av->av_fid.ops = &lfvpeer_av_ops;
	av->domain = domain;
	lfvpeer_hold(&domain->ref);
	*av_fid = &av->av_fid;
	return 0;
}

/* ---- endpoints ----------------------------------------------------------------- */

static struct lfvpeer_ep *lfvpeer_ep_from_fid(struct fid_ep *ep_fid)
{
	return container_of(ep_fid, struct lfvpeer_ep, ep_fid);
}

/* Queues one send (dest checked in our AV) or receive. */
static ssize_t lfvpeer_post(struct lfvpeer_ep *ep, bool send, void *buf,
			    size_t len, void *context, uint64_t flags,
			    uint64_t data, fi_addr_t dest)
{
	struct lfvpeer_queue *q = send ? &ep->tx : &ep->rx;
	struct lfvpeer_item *op = NULL;
	ssize_t ret = 0;

	if ((len && !buf) || len > LFVPEER_MAX_MSG)
		return -FI_EINVAL;
	pthread_mutex_lock(&lfvpeer_lock);
	if (!ep->enabled)
		ret = -FI_EOPBADSTATE;
	else if (send && !lfvpeer_av_valid(ep->av, dest))
		ret = -FI_EINVAL;
	else if (q->count >= LFVPEER_QUEUE_SIZE)
		ret = -FI_EAGAIN;
	else if (!(op = calloc(1, sizeof(*op))))
		ret = -FI_ENOMEM;
	if (op) {
		op->e = (struct fi_cq_err_entry){ .op_context = context,
						  .flags = flags, .len = len,
						  .buf = buf, .data = data };
		op->addr = dest;
		lfvpeer_push(q, op);
	}
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static ssize_t lfvpeer_recv(struct fid_ep *ep, void *buf, size_t len,
			    void *desc, fi_addr_t src_addr, void *context)
{
	(void)desc;
	(void)src_addr;		/* no FI_DIRECTED_RECV: any source */
	return lfvpeer_post(lfvpeer_ep_from_fid(ep), false, buf, len, context,
			    0, 0, FI_ADDR_UNSPEC);
}

static ssize_t lfvpeer_recvv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t src_addr,
			     void *context)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;
	return lfvpeer_recv(ep, count ? iov->iov_base : NULL,
			    count ? iov->iov_len : 0, desc, src_addr, context);
}

static ssize_t lfvpeer_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_COMPLETION)
		return -FI_EBADFLAGS;
	return lfvpeer_recvv(ep, msg->msg_iov, msg->desc, msg->iov_count,
			     msg->addr, msg->context);
}

static ssize_t lfvpeer_send(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, fi_addr_t dest_addr, void *context)
{
	(void)desc;
	return lfvpeer_post(lfvpeer_ep_from_fid(ep), true, (void *)buf, len,
			    context, 0, 0, dest_addr);
}

static ssize_t lfvpeer_senddata(struct fid_ep *ep, const void *buf,
				size_t len, void *desc, uint64_t data,
				fi_addr_t dest_addr, void *context)
{
	(void)desc;
	return lfvpeer_post(lfvpeer_ep_from_fid(ep), true, (void *)buf, len,
			    context, FI_REMOTE_CQ_DATA, data, dest_addr);
}

static ssize_t lfvpeer_sendv(struct fid_ep *ep, const struct iovec *iov,
			     void **desc, size_t count, fi_addr_t dest_addr,
			     void *context)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;
	return lfvpeer_send(ep, count ? iov->iov_base : NULL,
			    count ? iov->iov_len : 0, desc, dest_addr, context);
}

static ssize_t lfvpeer_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			       uint64_t flags)
{
	if (!msg || msg->iov_count > 1 || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	/* A send completes once delivered: both completion levels hold. */
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_REMOTE_CQ_DATA |
				FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE))
		return -FI_EBADFLAGS;
	return lfvpeer_post(lfvpeer_ep_from_fid(ep), true,
			    msg->iov_count ? msg->msg_iov->iov_base : NULL,
			    msg->iov_count ? msg->msg_iov->iov_len : 0,
			    msg->context, flags & FI_REMOTE_CQ_DATA,
			    flags & FI_REMOTE_CQ_DATA ? msg->data : 0,
			    msg->addr);
}

/* A cancelled operation completes with FI_ECANCELED (through writeerr for
 * a peer CQ). */
static ssize_t lfvpeer_cancel(fid_t fid, void *context)
{
	struct lfvpeer_ep *ep = container_of(fid, struct lfvpeer_ep,
					     ep_fid.fid);
	struct fi_cq_err_entry e = { .op_context = context,
				     .err = FI_ECANCELED,
				     .prov_errno = -FI_ECANCELED };
	struct lfvpeer_item *op;
	ssize_t ret = -FI_ENOENT;

	pthread_mutex_lock(&lfvpeer_lock);
	if ((op = lfvpeer_unlink(&ep->rx, context))) {
		e.flags = FI_RECV | FI_MSG;
		lfvpeer_complete(ep->rx_cq, &e, FI_ADDR_NOTAVAIL);
	} else if ((op = lfvpeer_unlink(&ep->tx, context))) {
		e.flags = FI_SEND | FI_MSG;
		lfvpeer_complete(ep->tx_cq, &e, FI_ADDR_NOTAVAIL);
	}
	if (op)
		ret = 0;
	pthread_mutex_unlock(&lfvpeer_lock);
	free(op);
	return ret;
}

static int lfvpeer_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct lfvpeer_ep *ep = container_of(fid, struct lfvpeer_ep,
					     ep_fid.fid);
	size_t len = strlen(ep->name) + 1;

	if (!addrlen)
		return -FI_EINVAL;
	if (!addr || *addrlen < len) {
		*addrlen = len;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, ep->name, len);
	*addrlen = len;
	return 0;
}

/* lock held */
static int lfvpeer_ep_bind_locked(struct lfvpeer_ep *ep, struct fid *bfid,
				  uint64_t flags)
{
	struct lfvpeer_cq *cq;

	if (ep->enabled)
		return -FI_EINVAL;
	if (bfid->fclass == FI_CLASS_AV && bfid->ops == &lfvpeer_av_fi_ops) {
		if (ep->av)
			return -FI_EINVAL;
		ep->av = container_of(bfid, struct lfvpeer_av, av_fid.fid);
		ep->av->ref++;
		return 0;
	}
	if (bfid->fclass != FI_CLASS_CQ || bfid->ops != &lfvpeer_cq_fi_ops)
		return -FI_EINVAL;
	if (!flags || (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;	/* no FI_SELECTIVE_COMPLETION */
	if (((flags & FI_TRANSMIT) && ep->tx_cq) ||
	    ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL;
	cq = container_of(bfid, struct lfvpeer_cq, cq_fid.fid);
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		cq->ref++;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		cq->ref++;
	}
	return 0;
}

static int lfvpeer_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lfvpeer_ep *ep = container_of(fid, struct lfvpeer_ep,
					     ep_fid.fid);
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&lfvpeer_lock);
	ret = lfvpeer_ep_bind_locked(ep, bfid, flags);
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

static int lfvpeer_ep_control(struct fid *fid, int command, void *arg)
{
	struct lfvpeer_ep *ep = container_of(fid, struct lfvpeer_ep,
					     ep_fid.fid);
	int ret = 0;

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	pthread_mutex_lock(&lfvpeer_lock);
	if (!ep->tx_cq || !ep->rx_cq)
		ret = -FI_ENOCQ;
	else if (!ep->av)
		ret = -FI_ENOAV;
	else
		ep->enabled = true;
	pthread_mutex_unlock(&lfvpeer_lock);
	return ret;
}

/* Queued operations go away without completions. */
static int lfvpeer_ep_close(struct fid *fid)
{
	struct lfvpeer_ep *ep = container_of(fid, struct lfvpeer_ep,
					     ep_fid.fid);
	struct lfvpeer_ep **link;

	pthread_mutex_lock(&lfvpeer_lock);
	for (link = &lfvpeer_registry; *link != ep; link = &(*link)->next)
		;
	*link = ep->next;
	if (ep->tx_cq)
		ep->tx_cq->ref--;
	if (ep->rx_cq)
		ep->rx_cq->ref--;
	if (ep->av)
		ep->av->ref--;
	ep->domain->ref--;
	lfvpeer_drain(&ep->tx);
	lfvpeer_drain(&ep->rx);
	pthread_mutex_unlock(&lfvpeer_lock);
	free(ep);
	return 0;
}

static struct fi_ops lfvpeer_ep_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_ep_close, lfvpeer_ep_bind, lfvpeer_ep_control);

static struct fi_ops_ep lfvpeer_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lfvpeer_cancel,
	.getopt = lfvpeer_no_getopt,
	.setopt = lfvpeer_no_setopt,
	.tx_ctx = lfvpeer_no_tx_ctx,
	.rx_ctx = lfvpeer_no_rx_ctx,
	.rx_size_left = lfvpeer_no_size_left,
	.tx_size_left = lfvpeer_no_size_left,
};

static struct fi_ops_cm lfvpeer_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lfvpeer_no_setname,
	.getname = lfvpeer_getname,
	.getpeer = lfvpeer_no_getpeer,
	.connect = lfvpeer_no_connect,
	.listen = lfvpeer_no_listen,
	.accept = lfvpeer_no_accept,
	.reject = lfvpeer_no_reject,
	.shutdown = lfvpeer_no_shutdown,
	.join = lfvpeer_no_join,
};

static struct fi_ops_msg lfvpeer_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lfvpeer_recv,
	.recvv = lfvpeer_recvv,
	.recvmsg = lfvpeer_recvmsg,
	.send = lfvpeer_send,
	.sendv = lfvpeer_sendv,
	.sendmsg = lfvpeer_sendmsg,
	.inject = lfvpeer_no_inject,
	.senddata = lfvpeer_senddata,
	.injectdata = lfvpeer_no_injectdata,
};

static int lfvpeer_endpoint(struct fid_domain *domain_fid,
			    struct fi_info *info, struct fid_ep **ep_fid,
			    void *context)
{
	struct lfvpeer_domain *domain = lfvpeer_domain_from_fid(domain_fid);
	struct lfvpeer_ep *ep;

	if (!info || !ep_fid)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_UNSPEC &&
	    info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	lfv_list_init(&ep->tx.items);
	lfv_list_init(&ep->rx.items);
	lfvpeer_fid_init(&ep->ep_fid.fid, FI_CLASS_EP, context,
			 &lfvpeer_ep_fi_ops);
	ep->ep_fid.ops = &lfvpeer_ep_ops;
	ep->ep_fid.cm = &lfvpeer_cm_ops;
	ep->ep_fid.msg = &lfvpeer_msg_ops;
	ep->ep_fid.rma = &lfvpeer_no_rma_ops;
	ep->ep_fid.tagged = &lfvpeer_no_tagged_ops;
	ep->ep_fid.atomic = &lfvpeer_no_atomic_ops;
	ep->ep_fid.collective = &lfvpeer_no_collective_ops;
	ep->domain = domain;
	pthread_mutex_lock(&lfvpeer_lock);
	snprintf(ep->name, sizeof(ep->name), LFVPEER_ADDR_PREFIX "%ld:%u",
		 (long)getpid(), lfvpeer_next_id++);
	ep->next = lfvpeer_registry;
	lfvpeer_registry = ep;
	domain->ref++;
	pthread_mutex_unlock(&lfvpeer_lock);
	*ep_fid = &ep->ep_fid;
	return 0;
}

/* ---- domain and fabric ---------------------------------------------------- */

static int lfvpeer_domain_close(struct fid *fid)
{
	struct lfvpeer_domain *domain = container_of(fid, struct lfvpeer_domain,
						     domain_fid.fid);

	if (lfvpeer_release(&domain->ref, &domain->fabric->ref))
		return -FI_EBUSY;
	free(domain);
	return 0;
}

static struct fi_ops lfvpeer_domain_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_domain_close, lfvpeer_no_bind, lfvpeer_no_control);

static struct fi_ops_domain lfvpeer_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = lfvpeer_av_open,
	.cq_open = lfvpeer_cq_open,
	.endpoint = lfvpeer_endpoint,
	.scalable_ep = lfvpeer_no_scalable_ep,
	.cntr_open = lfvpeer_no_cntr_open,
	.poll_open = lfvpeer_no_poll_open,
	.stx_ctx = lfvpeer_no_stx_ctx,
	.srx_ctx = lfvpeer_no_srx_ctx,
	.query_atomic = lfvpeer_no_query_atomic,
	.query_collective = lfvpeer_no_query_collective,
	.endpoint2 = lfvpeer_no_endpoint2,
};

static int lfvpeer_domain(struct fid_fabric *fabric_fid, struct fi_info *info,
			  struct fid_domain **domain_fid, void *context)
{
	struct lfvpeer_fabric *fabric = container_of(fabric_fid,
						     struct lfvpeer_fabric,
						     fabric_fid);
	struct lfvpeer_domain *domain;

	if (!info || !domain_fid)
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, LFVPEER_NAME))
		return -FI_EINVAL;
	domain = calloc(1, sizeof(*domain));
	if (!domain)
		return -FI_ENOMEM;
	lfvpeer_fid_init(&domain->domain_fid.fid, FI_CLASS_DOMAIN, context,
			 &lfvpeer_domain_fi_ops);
	domain->domain_fid.ops = &lfvpeer_domain_ops;
	domain->domain_fid.mr = &lfvpeer_no_mr_ops;
	domain->fabric = fabric;
	lfvpeer_hold(&fabric->ref);
	*domain_fid = &domain->domain_fid;
	return 0;
}

static int lfvpeer_fabric_close(struct fid *fid)
{
	struct lfvpeer_fabric *fabric = container_of(fid, struct lfvpeer_fabric,
						     fabric_fid.fid);
	int ref;

	pthread_mutex_lock(&lfvpeer_lock);
	ref = fabric->ref;
	pthread_mutex_unlock(&lfvpeer_lock);
	if (ref)
		return -FI_EBUSY;
	free(fabric);
	return 0;
}

static struct fi_ops lfvpeer_fabric_fi_ops =
	LFVPEER_FI_OPS(lfvpeer_fabric_close, lfvpeer_no_bind, lfvpeer_no_control);

static struct fi_ops_fabric lfvpeer_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = lfvpeer_domain,
	.passive_ep = lfvpeer_no_passive_ep,
	.eq_open = lfvpeer_no_eq_open,
	.wait_open = lfvpeer_no_wait_open,
	.trywait = lfvpeer_no_trywait,
	.domain2 = lfvpeer_no_domain2,
};

static int lfvpeer_fabric(struct fi_fabric_attr *attr,
			  struct fid_fabric **fabric_fid, void *context)
{
	struct lfvpeer_fabric *fabric;

	if (!attr || !fabric_fid)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, LFVPEER_NAME))
		return -FI_EINVAL;
	fabric = calloc(1, sizeof(*fabric));
	if (!fabric)
		return -FI_ENOMEM;
	lfvpeer_fid_init(&fabric->fabric_fid.fid, FI_CLASS_FABRIC, context,
			 &lfvpeer_fabric_fi_ops);
	fabric->fabric_fid.ops = &lfvpeer_fabric_ops;
	*fabric_fid = &fabric->fabric_fid;
	return 0;
}

/* ---- fi_getinfo and the provider ------------------------------------------ */

static bool lfvpeer_is(const char *hinted)
{
	return !hinted || !strcasecmp(hinted, LFVPEER_NAME);
}

static bool lfvpeer_hints_fit(const struct fi_info *hints)
{
	const struct fi_domain_attr *dom = hints->domain_attr;

	if ((hints->caps & ~(uint64_t)LFVPEER_CAPS) ||
	    (hints->addr_format != FI_FORMAT_UNSPEC &&
	     hints->addr_format != FI_ADDR_STR))
		return false;
	if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_RDM)
		return false;
	if (hints->tx_attr && (hints->tx_attr->caps & ~LFVPEER_TX_CAPS))
		return false;
	if (hints->rx_attr && (hints->rx_attr->caps & ~LFVPEER_RX_CAPS))
		return false;
	if (hints->fabric_attr && (!lfvpeer_is(hints->fabric_attr->prov_name) ||
				   !lfvpeer_is(hints->fabric_attr->name)))
		return false;
	return !dom || (lfvpeer_is(dom->name) &&
			(dom->av_type == FI_AV_UNSPEC ||
			 dom->av_type == FI_AV_TABLE) &&
			dom->control_progress != FI_PROGRESS_AUTO &&
			dom->data_progress != FI_PROGRESS_AUTO);
}

static int lfvpeer_getinfo(uint32_t version, const char *node,
			   const char *service, uint64_t flags,
			   const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *fi;

	(void)version;
	(void)flags;
	/* No name resolution: names come from fi_getname. */
	if (node || service || (hints && !lfvpeer_hints_fit(hints)))
		return -FI_ENODATA;
	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	fi->caps = LFVPEER_CAPS;
	fi->addr_format = FI_ADDR_STR;
	fi->tx_attr->caps = LFVPEER_TX_CAPS;
	fi->tx_attr->msg_order = FI_ORDER_SAS;
	fi->tx_attr->size = LFVPEER_QUEUE_SIZE;
	fi->tx_attr->iov_limit = 1;
	fi->rx_attr->caps = LFVPEER_RX_CAPS;
	fi->rx_attr->msg_order = FI_ORDER_SAS;
	fi->rx_attr->size = LFVPEER_QUEUE_SIZE;
	fi->rx_attr->iov_limit = 1;
	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->max_msg_size = LFVPEER_MAX_MSG;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;
	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_DISABLED;
	fi->domain_attr->av_type = FI_AV_TABLE;
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	fi->domain_attr->cq_cnt = 1024;
	fi->domain_attr->ep_cnt = 1024;
	fi->domain_attr->tx_ctx_cnt = 1024;
	fi->domain_attr->rx_ctx_cnt = 1024;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	/* fabric_attr->prov_name stays NULL: the core fills it. */
	fi->domain_attr->name = strdup(LFVPEER_NAME);
	fi->fabric_attr->name = strdup(LFVPEER_NAME);
	if (!fi->domain_attr->name || !fi->fabric_attr->name) {
		fi_freeinfo(fi);
		return -FI_ENOMEM;
	}
	*info = fi;
	return 0;
}

static void lfvpeer_cleanup(void)
{
}

static struct fi_provider lfvpeer_prov = {
	.version = FI_VERSION(1, 0),
	.fi_version = FI_VERSION(1, 17),
	.name = LFVPEER_NAME,
	.getinfo = lfvpeer_getinfo,
	.fabric = lfvpeer_fabric,
	.cleanup = lfvpeer_cleanup,
};

FI_EXT_INI
{
	return &lfvpeer_prov;
}
