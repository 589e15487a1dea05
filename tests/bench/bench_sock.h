/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The out-of-band TCP socket on which bench_rdm and bench_scale exchange
 * endpoint names: the server listens at ADDR:PORT for one client. Cold
 * paths only; errors exit. The including file defines BENCH_PROG.
 */
#ifndef BENCH_SOCK_H
#define BENCH_SOCK_H

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static inline void bench_sock_fail(const char *what)
{
	perror(BENCH_PROG ": out-of-band socket");
	fprintf(stderr, BENCH_PROG ": %s failed\n", what);
	exit(1);
}

/* The connected socket: the client's to ADDR:PORT, or the server's from
 * its one client (after printing "listening impl=IMPL"). */
static inline int bench_sock_open(const char *addr, const char *port,
				  bool server, const char *impl)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = server ? AI_PASSIVE : 0 }, *res;
	int one = 1, fd, c, ret;

	ret = getaddrinfo(addr, port, &hints, &res);
	if (ret) {
		fprintf(stderr, BENCH_PROG ": %s:%s: %s\n", addr, port,
			gai_strerror(ret));
		exit(1);
	}
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		bench_sock_fail("socket");
	if (!server) {
		if (connect(fd, res->ai_addr, res->ai_addrlen))
			bench_sock_fail("connect");
		freeaddrinfo(res);
		return fd;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1))
		bench_sock_fail("bind/listen");
	freeaddrinfo(res);
	printf("listening impl=%s\n", impl);
	fflush(stdout);
	c = accept(fd, NULL, NULL);
	if (c < 0)
		bench_sock_fail("accept");
	close(fd);
	return c;
}

/* All len bytes out of buf, or into it. */
static inline void bench_sock_io(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0)
			bench_sock_fail(out ? "write" : "read");
		p += n;
		len -= (size_t)n;
	}
}

#endif /* BENCH_SOCK_H */
