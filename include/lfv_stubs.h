/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Stubs for ops-table slots that lfverbs does not implement (yet). Every
 * ops table is filled completely; an unimplemented slot returns -FI_ENOSYS.
 */
#ifndef LFV_STUBS_H
#define LFV_STUBS_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

/*
 * One stub: a function of an ops slot's exact type (the parameters are
 * there for the type only) that returns err. Every stub of lfverbs is
 * written with it, so a slot's stub is one line of its signature.
 */
#define LFV_STUB(ret, name, err, ...)                                    \
	_Pragma("GCC diagnostic push")                                   \
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")         \
	ret name(__VA_ARGS__) { return err; }                            \
	_Pragma("GCC diagnostic pop")

/* The fid every object starts with: its class, the user's context and
 * its fi_ops (close, bind, control...). */
static inline void lfv_fid_init(struct fid *fid, size_t fclass,
				void *context, struct fi_ops *ops)
{
	fid->fclass = fclass;
	fid->context = context;
	fid->ops = ops;
}

/* struct fi_ops */
int lfv_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int lfv_no_control(struct fid *fid, int command, void *arg);
int lfv_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int lfv_no_tostr(const struct fid *fid, char *buf, size_t len);
int lfv_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context);

/* struct fi_ops_domain */
int lfv_no_query_collective(struct fid_domain *domain,
			    enum fi_collective_op coll,
			    struct fi_collective_attr *attr, uint64_t flags);

/* struct fi_ops_av */
int lfv_no_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		  struct fid_av_set **av_set, void *context);

/* Whole endpoint operation sets that return -FI_ENOSYS (lfv_stubs_ep.c). */
extern struct fi_ops_rma lfv_no_rma_ops;
extern struct fi_ops_tagged lfv_no_tagged_ops;
extern struct fi_ops_atomic lfv_no_atomic_ops;
extern struct fi_ops_collective lfv_no_collective_ops;
extern struct fi_ops_msg lfv_no_msg_ops;	/* lfv_stubs_msg.c */
extern struct fi_ops_ep lfv_no_ep_ops;		/* lfv_stubs_msg.c */
/* The fi_ops of a fid that is part of another object (an exported peer CQ
 * or counter): close does nothing (lfv_stubs.c). */
extern struct fi_ops lfv_part_fi_ops;
/* fi_export_fid's end for such a part: hands it out with the caller's
 * context; -FI_EINVAL if the object is itself a peer (owned) of another
 * provider's, -FI_EBADFLAGS for any flag. */
int lfv_part_export(struct fid *part, bool owned, uint64_t flags,
		    void *context, struct fid **out);

/*
 * The fid of an object that only receives (a shared receive context, an
 * imported or exported SRX): its own close/control, fi_ops_ep and receive
 * tables; no connections, RMA, atomics or collectives. One builder, so
 * every such object answers the calls it does not take the same way.
 */
struct lfv_rx_only_ops {
	struct fi_ops *fi;
	struct fi_ops_ep *ep;
	struct fi_ops_msg *msg;
	struct fi_ops_tagged *tagged;
};
void lfv_rx_only_fid_init(struct fid_ep *ep, size_t fclass, void *context,
			  const struct lfv_rx_only_ops *ops);

/* The receive side of fi_ops_msg, for transmit-only contexts. */
ssize_t lfv_no_msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context);
/* Both sides: recvv and sendv, recvmsg and sendmsg have one signature
 * each, so one stub each. */
ssize_t lfv_no_msg_iov(struct fid_ep *ep, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t addr, void *context);
ssize_t lfv_no_msg_msg(struct fid_ep *ep, const struct fi_msg *msg,
		       uint64_t flags);
/* The send side of fi_ops_msg and fi_ops_tagged, for receive-only
 * objects (shared receive contexts) that implement the receive side. */
ssize_t lfv_no_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest_addr, void *context);
ssize_t lfv_no_msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr);
ssize_t lfv_no_msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context);
ssize_t lfv_no_msg_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr);
ssize_t lfv_no_tagged_send(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest_addr, uint64_t tag,
			   void *context);
ssize_t lfv_no_tagged_sendv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest_addr,
			    uint64_t tag, void *context);
ssize_t lfv_no_tagged_msg(struct fid_ep *ep, const struct fi_msg_tagged *msg,
			  uint64_t flags);
ssize_t lfv_no_tagged_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest_addr, uint64_t tag);
ssize_t lfv_no_tagged_senddata(struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest_addr,
			       uint64_t tag, void *context);
ssize_t lfv_no_tagged_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data,
				 fi_addr_t dest_addr, uint64_t tag);
/* Those receive and send sides as slots of fi_ops_msg or fi_ops_tagged
 * tables. */
#define LFV_NO_MSG_RECV_SLOTS                                              \
	.recv = lfv_no_msg_recv, .recvv = lfv_no_msg_iov,                \
	.recvmsg = lfv_no_msg_msg
#define LFV_NO_MSG_SEND_SLOTS                                              \
	.send = lfv_no_msg_send, .sendv = lfv_no_msg_iov,                \
	.sendmsg = lfv_no_msg_msg, .inject = lfv_no_msg_inject,        \
	.senddata = lfv_no_msg_senddata,                                   \
	.injectdata = lfv_no_msg_injectdata
#define LFV_NO_TAGGED_SEND_SLOTS                                           \
	.send = lfv_no_tagged_send, .sendv = lfv_no_tagged_sendv,          \
	.sendmsg = lfv_no_tagged_msg, .inject = lfv_no_tagged_inject,  \
	.senddata = lfv_no_tagged_senddata,                                \
	.injectdata = lfv_no_tagged_injectdata
/* The fi_ops_msg or fi_ops_tagged (type) of a receive-only object: its
 * three receives, and one of the send sides above. */
#define LFV_RX_ONLY_OPS(type, recv_fn, recvv_fn, recvmsg_fn, send_slots)   \
	{                                                                  \
		.size = sizeof(struct type), .recv = (recv_fn),            \
		.recvv = (recvv_fn), .recvmsg = (recvmsg_fn), send_slots,  \
	}

/* struct fi_ops_ep: getopt/setopt say -FI_ENOPROTOOPT, the rest -FI_ENOSYS */
/* fi_ops_ep of an object with no options or contexts of its own: all
 * stubs but, at most, how many receives it still takes. */
#define LFV_NO_EP_OPS(rx_size_left_fn)                                    \
	{                                                                  \
		.size = sizeof(struct fi_ops_ep),                          \
		.cancel = lfv_no_cancel,                                   \
		.getopt = lfv_no_getopt,                                   \
		.setopt = lfv_no_setopt,                                   \
		.tx_ctx = lfv_no_tx_ctx,                                   \
		.rx_ctx = lfv_no_rx_ctx,                                   \
		.rx_size_left = (rx_size_left_fn),                         \
		.tx_size_left = lfv_no_size_left,                          \
	}
ssize_t lfv_no_cancel(fid_t fid, void *context);
int lfv_no_getopt(fid_t fid, int level, int optname, void *optval,
		  size_t *optlen);
int lfv_no_setopt(fid_t fid, int level, int optname, const void *optval,
		  size_t optlen);
int lfv_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		  struct fid_ep **tx_ep, void *context);
int lfv_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context);
ssize_t lfv_no_size_left(struct fid_ep *ep);

/* struct fi_ops_cm */
/* fi_ops_cm of an object with no connections: a name at most. */
#define LFV_NO_CONN_CM_OPS(setname_fn, getname_fn)                         \
	{                                                                  \
		.size = sizeof(struct fi_ops_cm),                          \
		.setname = (setname_fn),                                   \
		.getname = (getname_fn),                                   \
		.getpeer = lfv_no_getpeer,                                 \
		.connect = lfv_no_connect,                                 \
		.listen = lfv_no_listen,                                   \
		.accept = lfv_no_accept,                                   \
		.reject = lfv_no_reject,                                   \
		.shutdown = lfv_no_shutdown,                               \
		.join = lfv_no_join,                                       \
	}
int lfv_no_setname(fid_t fid, void *addr, size_t addrlen);
int lfv_no_getname(fid_t fid, void *addr, size_t *addrlen);
int lfv_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int lfv_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		   size_t paramlen);
int lfv_no_listen(struct fid_pep *pep);
int lfv_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int lfv_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		  size_t paramlen);
int lfv_no_shutdown(struct fid_ep *ep, uint64_t flags);
int lfv_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		struct fid_mc **mc, void *context);
extern struct fi_ops_cm lfv_no_cm_ops;

#endif /* LFV_STUBS_H */
