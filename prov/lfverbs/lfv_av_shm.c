/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Named (shared) address vectors: the POSIX shared-memory segment that
 * carries an AV's table from the process that created it to the processes
 * that open it read-only (fi_av(3): attr->name, FI_READ).
 *
 * The segment, /lfverbs-av-<name> (bytes outside [A-Za-z0-9._-] of the
 * name written as %XX), holds a header, then capacity fi_addr_t values
 * (slot i: the fi_addr_t of table index i, FI_ADDR_NOTAVAIL while it is
 * free; attr->map_addr points there), then capacity names of name_size
 * bytes. Only the creator writes it, under its AV's lock, in seqlock
 * fashion: seq is odd while slots change. A reader copies the slots that
 * differ from its own entries and keeps the copy only if seq was even and
 * unchanged around it; it then makes its own address handles
 * (lfv_av.c). Address handles are per process, fi_addr_t values are not:
 * index and generation are the creator's.
 *
 * The segment comes from another process: a reader checks the header
 * (magic, version, sizes, type) against what it expects and the file's
 * size before it maps the slots, and lfv_av.c checks each slot's fi_addr_t
 * and name before using them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lfv_av_shm.h"
#include "lfv_log.h"

#define LFV_AV_SHM_MAGIC 0x4d48535641564c46ULL	/* "LFVAVSHM" */
#define LFV_AV_SHM_VERSION 1
#define LFV_AV_SHM_PREFIX "/lfverbs-av-"
/* A reader that finds the creator writing retries this often. */
#define LFV_AV_SHM_TRIES 64

struct lfv_av_shm_hdr {
	lfv_atomic64_t magic;	/* release-stored last by the creator */
	uint32_t version;
	uint32_t hdr_size;
	uint32_t type;		/* FI_AV_MAP or FI_AV_TABLE */
	uint32_t capacity;	/* slots, a power of two */
	uint32_t name_size;	/* bytes of a slot's name */
	uint32_t rx_ctx_bits;
	int32_t creator;	/* pid, to spot a segment left by a crash */
	uint32_t pad;
	uint64_t size;		/* of the segment */
	lfv_atomic64_t seq;	/* odd while slots change */
	lfv_atomic32_t high;	/* slots [0, high) were used */
	uint32_t pad2;
};

struct lfv_av_shm {
	struct lfv_av_shm_hdr *hdr;
	lfv_atomic64_t *addrs;
	uint8_t *names;
	size_t size;
	uint32_t capacity, name_size;
	bool creator;		/* unlinks the name at close */
	char path[LFV_AV_SHM_PATH_MAX];
};

/* ---- names and sizes -------------------------------------------------------- */

int lfv_av_shm_path(const char *name, char *path, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(LFV_AV_SHM_PREFIX);
	const unsigned char *c;

	if (!*name || len <= n)
		return -FI_EINVAL;
	memcpy(path, LFV_AV_SHM_PREFIX, n);
	for (c = (const unsigned char *)name; *c; c++) {
		if (n + 4 > len)
			return -FI_EINVAL;	/* too long for a shm name */
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
		    *c == '-') {
			path[n++] = (char)*c;
		} else {
			path[n++] = '%';
			path[n++] = hex[*c >> 4];
			path[n++] = hex[*c & 0xf];
		}
	}
	path[n] = '\0';
	return 0;
}

static size_t lfv_av_shm_name_size(size_t addrlen)
{
	return (addrlen + 7) & ~(size_t)7;
}

static size_t lfv_av_shm_size(uint32_t capacity, size_t name_size)
{
	return sizeof(struct lfv_av_shm_hdr) +
	       (size_t)capacity * (sizeof(fi_addr_t) + name_size);
}

static struct lfv_av_shm *lfv_av_shm_new(const char *path, void *map,
					 size_t size, uint32_t capacity,
					 uint32_t name_size)
{
	struct lfv_av_shm *shm = calloc(1, sizeof(*shm));

	if (!shm)
		return NULL;
	shm->hdr = map;
	shm->addrs = (lfv_atomic64_t *)(shm->hdr + 1);
	shm->names = (uint8_t *)(shm->addrs + capacity);
	shm->size = size;
	shm->capacity = capacity;
	shm->name_size = name_size;
	snprintf(shm->path, sizeof(shm->path), "%s", path);
	return shm;
}

/* ---- the creator ---------------------------------------------------------- */

/* A segment whose creator is gone (it crashed before fi_close): only then
 * may a new creator take the name over. */
static bool lfv_av_shm_stale(const char *path)
{
	struct lfv_av_shm_hdr hdr;
	bool stale = false;
	int fd = shm_open(path, O_RDONLY, 0);

	if (fd < 0)
		return false;
	if (pread(fd, &hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	    lfv_load_relaxed64(&hdr.magic) == LFV_AV_SHM_MAGIC &&
	    hdr.creator > 0 && kill(hdr.creator, 0) && errno == ESRCH)
		stale = true;
	close(fd);
	return stale;
}

static int lfv_av_shm_create_fd(const char *path)
{
	int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	if (fd < 0 && errno == EEXIST && lfv_av_shm_stale(path)) {
		LFV_INFO(FI_LOG_AV, "%s: creator gone, taking it over\n", path);
		shm_unlink(path);
		fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	}
	if (fd >= 0)
		return fd;
	if (errno == EEXIST) {
		/* fi_av(3) lets more processes open a named AV for writing;
		 * lfverbs has one writer, the creator. */
		LFV_INFO(FI_LOG_AV, "%s exists: a second writer of a named "
			 "AV is not supported\n", path);
		return -FI_ENOSYS;
	}
	return -errno;
}

int lfv_av_shm_create(const char *name, const struct lfv_av_shm_want *want,
		      struct lfv_av_shm **out)
{
	size_t name_size = lfv_av_shm_name_size(want->addrlen);
	size_t size = lfv_av_shm_size(want->capacity, name_size);
	char path[LFV_AV_SHM_PATH_MAX];
	struct lfv_av_shm *shm;
	uint32_t i;
	void *map;
	int fd, ret;

	ret = lfv_av_shm_path(name, path, sizeof(path));
	if (ret)
		return ret;
	fd = lfv_av_shm_create_fd(path);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)size)) {
		ret = -errno;
		goto unlink;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto unlink;
	}
	shm = lfv_av_shm_new(path, map, size, want->capacity,
			     (uint32_t)name_size);
	if (!shm) {
		ret = -FI_ENOMEM;
		goto unmap;
	}
	shm->creator = true;
	*shm->hdr = (struct lfv_av_shm_hdr){
		.version = LFV_AV_SHM_VERSION,
		.hdr_size = sizeof(struct lfv_av_shm_hdr),
		.type = (uint32_t)want->type,
		.capacity = want->capacity,
		.name_size = (uint32_t)name_size,
		.rx_ctx_bits = (uint32_t)want->rx_ctx_bits,
		.creator = (int32_t)getpid(),
		.size = size,
	};
	/* ftruncate's zeros are fi_addr_t 0, a valid FI_AV_TABLE address. */
	for (i = 0; i < want->capacity; i++)
		lfv_store_relaxed64(&shm->addrs[i], FI_ADDR_NOTAVAIL);
	/* Release: a reader that sees the magic sees the rest. */
	lfv_store_release64(&shm->hdr->magic, LFV_AV_SHM_MAGIC);
	close(fd);
	*out = shm;
	return 0;

unmap:
	munmap(map, size);
unlink:
	shm_unlink(path);
	close(fd);
	return ret;
}

void lfv_av_shm_publish(struct lfv_av_shm *shm, uint32_t idx, fi_addr_t addr,
			const void *name, size_t len)
{
	struct lfv_av_shm_hdr *h = shm->hdr;
	uint64_t seq = lfv_load_relaxed64(&h->seq);

	if (idx >= shm->capacity)
		return;		/* lfv_av_next_slot keeps inserts below */
	/* Seqlock write: odd, then the slot, then even (release). The
	 * fence keeps the slot's stores after the odd value. */
	lfv_store_relaxed64(&h->seq, seq + 1);
	atomic_thread_fence(memory_order_release);
	if (name) {
		memcpy(shm->names + (size_t)idx * shm->name_size, name,
		       len < shm->name_size ? len : shm->name_size);
		if (idx >= lfv_load_relaxed32(&h->high))
			lfv_store_relaxed32(&h->high, idx + 1);
	}
	lfv_store_relaxed64(&shm->addrs[idx], addr);
	lfv_store_release64(&h->seq, seq + 2);
}

/* ---- readers ---------------------------------------------------------------- */

/* The header of a segment from another process, checked before any of it
 * is believed: what this AV needs, and sizes that fit the file. */
static int lfv_av_shm_check(const struct lfv_av_shm_hdr *h, size_t file_size,
			    const struct lfv_av_shm_want *want)
{
	size_t name_size = lfv_av_shm_name_size(want->addrlen);

	/* Acquire: pairs with the creator's release store of the magic. */
	if (lfv_load_acquire64(&h->magic) != LFV_AV_SHM_MAGIC ||
	    h->version != LFV_AV_SHM_VERSION ||
	    h->hdr_size != sizeof(*h))
		return -FI_EINVAL;
	if (h->type != FI_AV_MAP && h->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (want->type != FI_AV_UNSPEC && h->type != (uint32_t)want->type)
		return -FI_EINVAL;
	if (h->rx_ctx_bits != (uint32_t)want->rx_ctx_bits ||
	    h->name_size != name_size)
		return -FI_EINVAL;
	if (!h->capacity || (h->capacity & (h->capacity - 1)) ||
	    h->capacity > want->capacity)
		return -FI_EINVAL;
	if (h->size != lfv_av_shm_size(h->capacity, name_size) ||
	    h->size > file_size)
		return -FI_EINVAL;
	return 0;
}

int lfv_av_shm_attach(const char *name, const struct lfv_av_shm_want *want,
		      struct lfv_av_shm **out, enum fi_av_type *type,
		      uint32_t *capacity)
{
	char path[LFV_AV_SHM_PATH_MAX];
	struct lfv_av_shm_hdr hdr;
	struct lfv_av_shm *shm;
	struct stat st;
	void *map;
	int fd, ret;

	ret = lfv_av_shm_path(name, path, sizeof(path));
	if (ret)
		return ret;
	fd = shm_open(path, O_RDONLY, 0);
	if (fd < 0)
		return errno == ENOENT ? -FI_ENOENT : -errno;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(hdr) ||
	    pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		ret = -FI_EINVAL;
		goto close_fd;
	}
	ret = lfv_av_shm_check(&hdr, (size_t)st.st_size, want);
	if (ret) {
		LFV_WARN(FI_LOG_AV, "%s: not a usable lfverbs AV segment\n",
			 path);
		goto close_fd;
	}
	/* Mapped at the size checked: later changes to the header in the
	 * segment (by a faulty writer) do not move these bounds. */
	map = mmap(NULL, hdr.size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto close_fd;
	}
	shm = lfv_av_shm_new(path, map, hdr.size, hdr.capacity,
			     hdr.name_size);
	if (!shm) {
		munmap(map, hdr.size);
		ret = -FI_ENOMEM;
		goto close_fd;
	}
	close(fd);
	*type = (enum fi_av_type)hdr.type;
	*capacity = hdr.capacity;
	*out = shm;
	return 0;

close_fd:
	close(fd);
	return ret;
}

uint64_t lfv_av_shm_seq(const struct lfv_av_shm *shm)
{
	/* Acquire: pairs with the creator's release store of an even seq. */
	return lfv_load_acquire64(&shm->hdr->seq);
}

/* One pass over the used slots: the ones whose fi_addr_t differs from
 * local's, into ch (capacity entries). */
static size_t lfv_av_shm_scan(const struct lfv_av_shm *shm,
			      lfv_av_shm_local_fn local, void *arg,
			      struct lfv_av_shm_slot *ch)
{
	uint32_t high = lfv_load_relaxed32(&shm->hdr->high), idx;
	size_t n = 0, len = shm->name_size;
	fi_addr_t a;

	if (high > shm->capacity)
		high = shm->capacity;	/* a bad header: its slots only */
	if (len > sizeof(ch->name))
		len = sizeof(ch->name);
	for (idx = 0; idx < high; idx++) {
		a = lfv_load_relaxed64(&shm->addrs[idx]);
		if (a == local(arg, idx))
			continue;
		ch[n].idx = idx;
		ch[n].addr = a;
		memcpy(&ch[n].name, shm->names + (size_t)idx * shm->name_size,
		       len);
		n++;
	}
	return n;
}

int lfv_av_shm_changes(const struct lfv_av_shm *shm, lfv_av_shm_local_fn local,
		       void *arg, struct lfv_av_shm_slot **out, size_t *count,
		       uint64_t *seq)
{
	struct lfv_av_shm_slot *ch;
	uint64_t s1, s2;
	size_t n;
	int tries;

	ch = calloc(shm->capacity, sizeof(*ch));
	if (!ch)
		return -FI_ENOMEM;
	for (tries = 0; tries < LFV_AV_SHM_TRIES; tries++) {
		s1 = lfv_av_shm_seq(shm);
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		n = lfv_av_shm_scan(shm, local, arg, ch);
		/* Seqlock read: the slots' loads before the second seq. */
		atomic_thread_fence(memory_order_acquire);
		s2 = lfv_load_relaxed64(&shm->hdr->seq);
		if (s1 == s2) {
			*out = ch;
			*count = n;
			*seq = s1;
			return 0;
		}
	}
	free(ch);
	return -FI_EAGAIN;
}

/* ---- both ----------------------------------------------------------------- */

void *lfv_av_shm_map_addr(const struct lfv_av_shm *shm)
{
	return shm->addrs;
}

void lfv_av_shm_close(struct lfv_av_shm *shm)
{
	if (!shm)
		return;
	if (shm->creator)
		shm_unlink(shm->path);
	munmap(shm->hdr, shm->size);
	free(shm);
}
