/* SPDX-License-Identifier: ISC */
/*
 * ADDR:PORT (common/addr.c): the split each caller builds on, the
 * broker's numeric parse with its refusals, and the client's TCP connect
 * against loopback sockets of the test's own.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "addr.h"
#include "ckrun.h"

/* addr_split(s) must give rc, host and port (NULL: not compared). */
static void
split_is(const char *s, int rc, const char *host, const char *port)
{
	char		 h[64];
	const char	*p = NULL;

	ck_assert_msg(addr_split(s, h, sizeof(h), &p) == rc, "'%s'", s);
	if (rc == -1)
		return;
	ck_assert_str_eq(h, host);
	ck_assert_str_eq(p, port);
}

START_TEST(split)
{
	/* The client's instance file and the broker's listen lines. */
	split_is("127.0.0.1:4000", 0, "127.0.0.1", "4000");
	split_is("[::1]:4000", 1, "::1", "4000");
	split_is("[::ffff:127.0.0.1]:1", 1, "::ffff:127.0.0.1", "1");
	/* The last colon is the port's; what is left is the caller's. */
	split_is("::1:8700", 0, "::1", "8700");
	split_is("[::1:80", 0, "[::1", "80");
	split_is("[::1]x:1", 0, "[::1]x", "1");
	split_is("[::1]:1:2", 0, "[::1]:1", "2");
	split_is("[]:80", 1, "", "80");
	split_is(":80", 0, "", "80");
	split_is("[:80", 0, "[", "80");
	split_is("]:80", 0, "]", "80");
	split_is("host:", 0, "host", "");
	split_is("host:port", 0, "host", "port");
	/* No colon (authlimit's "unix" peer), or a host that cannot fit. */
	split_is("unix", -1, NULL, NULL);
	split_is("", -1, NULL, NULL);
}
END_TEST

START_TEST(split_host_fits)
{
	char		 h[8];
	const char	*p = NULL;

	ck_assert_int_eq(addr_split("1234567:1", h, sizeof(h), &p), 0);
	ck_assert_str_eq(h, "1234567");
	ck_assert_int_eq(addr_split("12345678:1", h, sizeof(h), &p), -1);
	/* Brackets take no room in host. */
	ck_assert_int_eq(addr_split("[1234567]:1", h, sizeof(h), &p), 1);
	ck_assert_str_eq(h, "1234567");
	ck_assert_int_eq(addr_split("[12345678]:1", h, sizeof(h), &p), -1);
	/* The port alone (the faces' ports): any host, no buffer. */
	ck_assert_int_eq(addr_split("a-name-longer-than-any-buffer-here:6400",
	    NULL, 0, &p), 0);
	ck_assert_str_eq(p, "6400");
	ck_assert_int_eq(addr_split("[::1]:6400", NULL, 0, &p), 1);
	ck_assert_str_eq(p, "6400");
	ck_assert_int_eq(addr_split("[::1]:6400", h, sizeof(h), NULL), 1);
	ck_assert_str_eq(h, "::1");
}
END_TEST

START_TEST(parse_accepts)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	char			 buf[INET6_ADDRSTRLEN];
	int			 len;

	ck_assert_int_eq(addr_parse("127.0.0.1:0", &ss, &len), 0);
	ck_assert_int_eq(sin->sin_family, AF_INET);
	ck_assert_int_eq(len, (int)sizeof(*sin));
	ck_assert_uint_eq(ntohs(sin->sin_port), 0);
	ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	ck_assert_int_eq(addr_parse("0.0.0.0:65535", &ss, &len), 0);
	ck_assert_uint_eq(ntohs(sin->sin_port), 65535);
	ck_assert_int_eq(addr_parse("[::1]:2", &ss, &len), 0);
	ck_assert_int_eq(sin6->sin6_family, AF_INET6);
	ck_assert_int_eq(len, (int)sizeof(*sin6));
	ck_assert_uint_eq(ntohs(sin6->sin6_port), 2);
	ck_assert(IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr));
	ck_assert_int_eq(addr_parse("[::ffff:127.0.0.1]:3", &ss, &len), 0);
	ck_assert(IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr));
	/* The longest spelling of an IPv6 address fits. */
	ck_assert_int_eq(addr_parse(
	    "[0000:0000:0000:0000:0000:ffff:255.255.255.255]:4", &ss, &len), 0);
	inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
	ck_assert_str_eq(buf, "::ffff:255.255.255.255");
}
END_TEST

START_TEST(parse_refuses)
{
	static const char *const bad[] = {
		"127.0.0.1", ":80", "127.0.0.1:", "127.0.0.1:65536",
		"127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:80x",
		"127.0.0.1:-1", "127.0.0.1:99999999999999999999",
		"::1:80", "[::1:80", "[::1]x:80", "[::1]:80:", "[]:80", "[:80",
		"[127.0.0.1]:80", "localhost:80", "[localhost]:80",
		"[fe80::1%lo]:1", "1.2.3:80", "256.0.0.1:80",
		"", "unix",
		NULL
	};
	struct sockaddr_storage	 ss;
	int			 len, i;

	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(addr_parse(bad[i], &ss, &len) == -1,
		    "'%s' taken", bad[i]);
}
END_TEST

/* A loopback TCP socket on a free port, listening unless listening is 0. */
static int
loopback(int listening, char port[8])
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, 8, "%u", ntohs(sin.sin_port));
	return fd;
}

/* Await fd's non-blocking connect: 0 connected, or its error. */
static int
connect_end(int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLOUT };
	socklen_t	len = sizeof(int);
	int		e = -1;

	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len), 0);
	return e;
}

START_TEST(connect_blocking)
{
	char	port[8], err[256];
	int	lfd, fd, afd;

	lfd = loopback(1, port);
	fd = addr_connect("127.0.0.1", port, 0, 0, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ck_assert(!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	ck_assert_int_ge(afd = accept(lfd, NULL, NULL), 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	ck_assert_int_eq(read(afd, err, 1), 1);
	close(afd);
	close(fd);
	/* Any attempt: one address, so each names it. */
	fd = addr_connect("127.0.0.1", port, 7, 0, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(lfd);
}
END_TEST

START_TEST(connect_nonblocking)
{
	char	port[8], err[256];
	int	lfd, fd, afd;

	lfd = loopback(1, port);
	fd = addr_connect("127.0.0.1", port, 3, ADDR_NONBLOCK, err,
	    sizeof(err));
	ck_assert_int_ge(fd, 0);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	ck_assert_int_eq(connect_end(fd), 0);
	ck_assert_int_ge(afd = accept(lfd, NULL, NULL), 0);
	close(afd);
	close(fd);
	close(lfd);
}
END_TEST

START_TEST(connect_refused)
{
	char	port[8], err[256], want[64];
	int	bfd, fd;

	/* Bound, not listening: the port is ours, and refuses. */
	bfd = loopback(0, port);
	errno = 0;
	ck_assert_int_eq(addr_connect("127.0.0.1", port, 0, 0, err,
	    sizeof(err)), ADDR_ECONNECT);
	ck_assert_int_eq(errno, ECONNREFUSED);
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%s: ",
	    port);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	/* Non-blocking: refused at once, or when the connect ends. */
	fd = addr_connect("127.0.0.1", port, 0, ADDR_NONBLOCK, err,
	    sizeof(err));
	if (fd >= 0) {
		ck_assert_int_eq(connect_end(fd), ECONNREFUSED);
		close(fd);
	} else {
		ck_assert_int_eq(fd, ADDR_ECONNECT);
		ck_assert_int_eq(errno, ECONNREFUSED);
	}
	close(bfd);
}
END_TEST

START_TEST(connect_no_such_port_name)
{
	char	err[256];

	ck_assert_int_eq(addr_connect("127.0.0.1", "no-such-service", 0, 0,
	    err, sizeof(err)), ADDR_ENAME);
	ck_assert_msg(strncmp(err, "127.0.0.1:no-such-service: ", 27) == 0,
	    "%s", err);
	ck_assert_int_eq(addr_connect("127.0.0.1", "no-such-service", 0,
	    ADDR_NONBLOCK, err, sizeof(err)), ADDR_ENAME);
}
END_TEST

/*
 * "localhost" as the resolver gives it (127.0.0.1, often ::1 too), a
 * listener on 127.0.0.1 only: blocking, every attempt goes on to the
 * address that answers; non-blocking, attempt k tries the k'th alone,
 * round the list.
 */
START_TEST(connect_each_address)
{
	struct addrinfo	 hints, *ai, *p;
	char		 port[8], err[256];
	int		 lfd, fd, afd, n = 0, k, v4 = 0;

	lfd = loopback(1, port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	ck_assert_int_eq(getaddrinfo("localhost", port, &hints, &ai), 0);
	for (p = ai; p != NULL; p = p->ai_next)
		n++;
	for (k = 0; k < 2 * n; k++) {
		fd = addr_connect("localhost", port, (unsigned)k, 0, err,
		    sizeof(err));
		ck_assert_msg(fd >= 0, "attempt %d: %s", k, err);
		ck_assert_int_ge(afd = accept(lfd, NULL, NULL), 0);
		close(afd);
		close(fd);
	}
	for (k = 0; k < 2 * n; k++) {
		int	i, is_v4;

		for (p = ai, i = k % n; i > 0; i--)
			p = p->ai_next;
		is_v4 = p->ai_family == AF_INET &&
		    ((struct sockaddr_in *)p->ai_addr)->sin_addr.s_addr ==
		    htonl(INADDR_LOOPBACK);
		v4 += is_v4;
		fd = addr_connect("localhost", port, (unsigned)k,
		    ADDR_NONBLOCK, err, sizeof(err));
		if (is_v4) {
			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(connect_end(fd), 0);
			ck_assert_int_ge(afd = accept(lfd, NULL, NULL), 0);
			close(afd);
		} else if (fd >= 0)
			ck_assert_int_ne(connect_end(fd), 0);
		if (fd >= 0)
			close(fd);
	}
	ck_assert_int_gt(v4, 0);
	freeaddrinfo(ai);
	close(lfd);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("addr");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, split);
	tcase_add_test(tc, split_host_fits);
	tcase_add_test(tc, parse_accepts);
	tcase_add_test(tc, parse_refuses);
	tcase_add_test(tc, connect_blocking);
	tcase_add_test(tc, connect_nonblocking);
	tcase_add_test(tc, connect_refused);
	tcase_add_test(tc, connect_no_such_port_name);
	tcase_add_test(tc, connect_each_address);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
