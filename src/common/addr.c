/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <string.h>

#include "addr.h"
#include "util.h"

int
addr_parse(const char *spec, struct sockaddr_storage *ss, int *sslen)
{
	char		 host[INET6_ADDRSTRLEN + 2];
	const char	*colon, *h;
	size_t		 hlen;
	uint64_t	 port;

	memset(ss, 0, sizeof(*ss));
	colon = strrchr(spec, ':');
	if (colon == NULL || colon == spec)
		return -1;
	h = spec;
	hlen = (size_t)(colon - spec);
	if (h[0] == '[') {
		if (hlen < 3 || h[hlen - 1] != ']')
			return -1;
		h++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (util_parse_u64(colon + 1, 0, 65535, &port) == -1)
		return -1;
	if (spec[0] != '[') {
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
