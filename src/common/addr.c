/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "util.h"

int
addr_split(const char *spec, char *host, size_t hostlen, const char **port)
{
	const char	*colon = strrchr(spec, ':'), *h = spec;
	size_t		 hlen;
	int		 bracketed;

	if (colon == NULL)
		return -1;
	hlen = (size_t)(colon - spec);
	bracketed = hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']';
	if (bracketed) {
		h++;
		hlen -= 2;
	}
	if (host != NULL) {
		if (hlen >= hostlen)
			return -1;
		memcpy(host, h, hlen);
		host[hlen] = '\0';
	}
	if (port != NULL)
		*port = colon + 1;
	return bracketed;
}

int
addr_parse(const char *spec, struct sockaddr_storage *ss, int *sslen)
{
	char		 host[INET6_ADDRSTRLEN];
	const char	*p;
	uint64_t	 port;
	int		 bracketed;

	memset(ss, 0, sizeof(*ss));
	/* "[" opens an IPv6 address, which only "]:" closes. */
	if ((bracketed = addr_split(spec, host, sizeof(host), &p)) == -1 ||
	    (spec[0] == '[' && !bracketed) ||
	    util_parse_u64(p, 0, 65535, &port) == -1)
		return -1;
	if (!bracketed) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -1;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -1;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*sin6);
	}
	return 0;
}

/*
 * One socket connecting to ai: connected (blocking), or under way
 * (non-blocking); -1 with errno the connect's.
 */
static int
addr_connect_one(const struct addrinfo *ai, int flags)
{
	int	fd, type = SOCK_STREAM | SOCK_CLOEXEC, e;

	if (flags & ADDR_NONBLOCK)
		type |= SOCK_NONBLOCK;
	if ((fd = socket(ai->ai_family, type, 0)) == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
	    ((flags & ADDR_NONBLOCK) && (errno == EINPROGRESS ||
	    errno == EINTR)))
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int
addr_connect(const char *host, const char *port, unsigned attempt,
    int flags, char *err, size_t errlen)
{
	struct addrinfo	 hints, *ai, *p;
	unsigned	 n = 0, i, k, tries;
	int		 rc, fd = -1, e = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
		snprintf(err, errlen, "%s:%s: %s", host, port,
		    gai_strerror(rc));
		return ADDR_ENAME;
	}
	for (p = ai; p != NULL; p = p->ai_next)
		n++;
	tries = (flags & ADDR_NONBLOCK) ? 1 : n;
	for (i = 0; i < tries && fd == -1; i++) {
		for (p = ai, k = (attempt + i) % n; k > 0; k--)
			p = p->ai_next;
		if ((fd = addr_connect_one(p, flags)) == -1) {
			e = errno;
			snprintf(err, errlen, "cannot connect to %s:%s: %s",
			    host, port, strerror(e));
		}
	}
	freeaddrinfo(ai);
	if (fd != -1)
		return fd;
	errno = e;
	return ADDR_ECONNECT;
}
