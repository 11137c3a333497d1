/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PEERCRED_H
#define CMDGATE_PEERCRED_H

#include <stddef.h>

/*
 * Who is at the other end of a local connection, as the kernel says
 * (cmdgated(8), Peer credentials): SO_PEERCRED on a Unix socket; on a
 * loopback TCP connection the owner of the peer's socket (peeruid.h).
 * Library-like: nothing here exits or logs.
 */

struct options;

/*
 * 1: fd's peer is allowed (the broker's own uid, or --allow-user /
 * --allow-group), why says who; 0: not, why says who and why (a TCP peer
 * that is not loopback is never allowed); -1: could not tell, why.
 */
int	peercred_check(const struct options *, int fd, char *why,
	    size_t whylen);

#endif
