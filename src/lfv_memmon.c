/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The memory monitor (include/lfv_memmon.h): one userfaultfd per process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#include "lfv_log.h"
#include "lfv_memmon.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define LFV_MEMMON_EVENTS (UFFD_FEATURE_EVENT_UNMAP |                      \
			   UFFD_FEATURE_EVENT_REMOVE |                     \
			   UFFD_FEATURE_EVENT_REMAP)

static struct {
	pthread_mutex_t lock;		/* everything here */
	struct lfv_list subs;
	int uffd;			/* -1: not started */
	int stop[2];			/* a pipe: fini wakes the thread */
	pthread_t thread;
	bool failed;			/* the kernel cannot: do not retry */
} lfv_memmon = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.subs = { &lfv_memmon.subs, &lfv_memmon.subs },
	.uffd = -1,
	.stop = { -1, -1 },
};

static long lfv_page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* Hands [start, end) to every subscriber (lfv_memmon.lock held: a
 * subscriber leaves only under it). */
static void lfv_memmon_tell(uintptr_t start, uintptr_t end)
{
	struct lfv_list *item;
	struct lfv_memmon_sub *sub;

	lfv_list_foreach(item, &lfv_memmon.subs) {
		sub = lfv_container_of(item, struct lfv_memmon_sub, node);
		sub->invalidate(sub, start, end);
	}
}

static void lfv_memmon_event(const struct uffd_msg *m)
{
	uintptr_t start, end;

	switch (m->event) {
	case UFFD_EVENT_UNMAP:
	case UFFD_EVENT_REMOVE:
		start = (uintptr_t)m->arg.remove.start;
		end = (uintptr_t)m->arg.remove.end;
		break;
	case UFFD_EVENT_REMAP:
		start = (uintptr_t)m->arg.remap.from;
		end = start + (uintptr_t)m->arg.remap.len;
		break;
	default:
		return;
	}
	pthread_mutex_lock(&lfv_memmon.lock);
	lfv_memmon_tell(start, end);
	pthread_mutex_unlock(&lfv_memmon.lock);
}

/*
 * Reads events as they come: the call that unmapped waits until then.
 *
 * The thread closes the userfaultfd itself before it returns: when it
 * exits, glibc drops the unused pages of its stack (madvise DONTNEED),
 * and a stack that shares a watched mapping (one anonymous mapping
 * merged with a buffer's) would wait for a reader that is this very
 * thread: the process hung at exit that way. Once closed, the kernel
 * unwatches everything and nothing waits.
 */
static void *lfv_memmon_thread(void *arg)
{
	struct pollfd fds[2] = {
		{ .fd = lfv_memmon.uffd, .events = POLLIN },
		{ .fd = lfv_memmon.stop[0], .events = POLLIN },
	};
	struct uffd_msg m;
	ssize_t n;

	(void)arg;
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[1].revents)
			break;
		n = read(lfv_memmon.uffd, &m, sizeof(m));
		if (n == (ssize_t)sizeof(m))
			lfv_memmon_event(&m);
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
	}
	pthread_mutex_lock(&lfv_memmon.lock);
	close(lfv_memmon.uffd);
	lfv_memmon.uffd = -1;
	pthread_mutex_unlock(&lfv_memmon.lock);
	return NULL;
}

static int lfv_memmon_open_uffd(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = LFV_MEMMON_EVENTS };
	int fd;

	fd = (int)syscall(SYS_userfaultfd,
			  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) ||
	    (api.features & LFV_MEMMON_EVENTS) != LFV_MEMMON_EVENTS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The userfaultfd and its thread (lfv_memmon.lock held). */
static int lfv_memmon_start(void)
{
	/* Started: its thread may have stopped on an error (uffd closed),
	 * and is not started again. */
	if (lfv_memmon.stop[1] >= 0)
		return lfv_memmon.uffd >= 0 ? 0 : -FI_ENOSYS;
	if (lfv_memmon.failed)
		return -FI_ENOSYS;
	lfv_memmon.uffd = lfv_memmon_open_uffd();
	if (lfv_memmon.uffd < 0)
		goto fail;
	if (pipe2(lfv_memmon.stop, O_CLOEXEC))
		goto close_uffd;
	if (pthread_create(&lfv_memmon.thread, NULL, lfv_memmon_thread, NULL))
		goto close_pipe;
	return 0;

close_pipe:
	close(lfv_memmon.stop[0]);
	close(lfv_memmon.stop[1]);
	lfv_memmon.stop[0] = lfv_memmon.stop[1] = -1;
close_uffd:
	close(lfv_memmon.uffd);
	lfv_memmon.uffd = -1;
fail:
	lfv_memmon.failed = true;
	LFV_INFO(FI_LOG_MR, "no memory monitor (userfaultfd): registrations "
		 "are not cached\n");
	return -FI_ENOSYS;
}

int lfv_memmon_subscribe(struct lfv_memmon_sub *sub)
{
	int ret;

	pthread_mutex_lock(&lfv_memmon.lock);
	ret = lfv_memmon_start();
	if (!ret)
		lfv_list_insert_tail(&lfv_memmon.subs, &sub->node);
	pthread_mutex_unlock(&lfv_memmon.lock);
	return ret;
}

void lfv_memmon_unsubscribe(struct lfv_memmon_sub *sub)
{
	pthread_mutex_lock(&lfv_memmon.lock);
	lfv_list_remove(&sub->node);
	pthread_mutex_unlock(&lfv_memmon.lock);
}

/* Registers the whole mapping [start, end) with the userfaultfd. A part
 * of a mapping would split it, and mremap of the whole (glibc's realloc of
 * a large block, say) would then fail with EFAULT. */
static int lfv_memmon_watch_vma(uintptr_t start, uintptr_t end)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	/* Watching the same pages again is harmless. */
	if (ioctl(lfv_memmon.uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	return 0;
}

/* Watches every mapping that [start, end) touches (from /proc/self/maps:
 * a cache miss registers memory anyway, which costs more). */
static int lfv_memmon_watch_maps(uintptr_t start, uintptr_t end)
{
	unsigned long lo, hi;
	char line[512];
	int ret = -FI_EINVAL;
	FILE *maps;

	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return -errno;
	while (fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (hi <= start || lo >= end)
			continue;
		ret = lfv_memmon_watch_vma(lo, hi);
		if (ret)
			break;
	}
	fclose(maps);
	return ret;
}

int lfv_memmon_watch(const void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)lfv_page_size();
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);

	if (!len || lfv_memmon.uffd < 0)
		return -FI_EINVAL;
	return lfv_memmon_watch_maps(start, end);
}

void lfv_memmon_fini(void)
{
	char one = 1;

	pthread_mutex_lock(&lfv_memmon.lock);
	if (lfv_memmon.stop[1] < 0) {
		pthread_mutex_unlock(&lfv_memmon.lock);
		return;
	}
	pthread_mutex_unlock(&lfv_memmon.lock);
	/* Not under the lock: the thread takes it to close the uffd. A
	 * thread that stopped on an error has exited already. */
	if (write(lfv_memmon.stop[1], &one, 1) != 1) {
		LFV_WARN(FI_LOG_MR, "cannot stop the memory monitor\n");
		return;
	}
	pthread_join(lfv_memmon.thread, NULL);
	pthread_mutex_lock(&lfv_memmon.lock);
	close(lfv_memmon.stop[0]);
	close(lfv_memmon.stop[1]);
	lfv_memmon.stop[0] = lfv_memmon.stop[1] = -1;
	pthread_mutex_unlock(&lfv_memmon.lock);
}
