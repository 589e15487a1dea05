/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Memory the device writes (a received message in a bounce buffer, the
 * target of an RDMA read) is written by the kernel or the NIC, which
 * memcheck does not see: to it those bytes stay undefined, and every use
 * of them is an error report. Built with --enable-valgrind (configure),
 * the data path tells memcheck such bytes are defined when their
 * completion arrives; otherwise these calls compile to nothing. Bytes a
 * peer writes with RMA into this process's memory are not covered: no
 * local completion says when they land.
 */
#ifndef LFV_VALGRIND_H
#define LFV_VALGRIND_H

#include <stddef.h>

#include "config.h"		/* LFV_VALGRIND */

#if LFV_VALGRIND
#include <valgrind/memcheck.h>
#endif

/* The device has written len bytes at p. */
static inline void lfv_mem_written(const void *p, size_t len)
{
#if LFV_VALGRIND
	(void)VALGRIND_MAKE_MEM_DEFINED(p, len);
#else
	(void)p;
	(void)len;
#endif
}

#endif /* LFV_VALGRIND_H */
