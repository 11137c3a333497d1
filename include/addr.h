/* SPDX-License-Identifier: ISC */
/* ADDR:PORT as the three programs spell it, and the client's TCP connect. */
#ifndef CMDGATE_ADDR_H
#define CMDGATE_ADDR_H

#include <stddef.h>

struct sockaddr_storage;

/*
 * Split "HOST:PORT" or "[HOST]:PORT" at its last colon: the host, without
 * its brackets, into host (hostlen bytes with the NUL; not copied when
 * host is NULL), and *port (unless port is NULL) the text after the
 * colon, unchecked.  1 when the host was in brackets ("[" first and "]"
 * last), 0 when not; -1 when there is no colon or the host does not fit.
 * Nothing else is checked: each caller says what it accepts, as
 * addr_parse does.
 */
int	 addr_split(const char *, char *host, size_t hostlen,
	    const char **port);

/*
 * "ADDR:PORT" or "[V6ADDR]:PORT" (numeric addresses, a port 0 to 65535)
 * into a sockaddr; 0 on success, -1 when malformed.  The broker's
 * --listen, --http and --listen FACE@ADDR:PORT all use it.
 */
int	 addr_parse(const char *, struct sockaddr_storage *, int *sslen);

/* addr_connect's flags and its two failures. */
#define ADDR_NONBLOCK	0x1	/* return at once, the connect under way */
#define ADDR_ENAME	(-2)	/* host or port did not resolve */
#define ADDR_ECONNECT	(-1)	/* no address connected; errno says why */

/*
 * A TCP socket (close-on-exec) connected to host and port, a name or a
 * numeric address (getaddrinfo).  Blocking, each of its addresses is
 * tried in turn from the attempt'th until one connects.  With
 * ADDR_NONBLOCK, only the attempt'th (modulo their number), and the
 * socket is non-blocking with the connect under way (EINPROGRESS): the
 * caller's loop sees it end, as bufferevent_socket_connect(bev, NULL, 0)
 * does; a caller that tries again with attempt + 1 goes round the
 * addresses.  A descriptor (the caller closes it), or ADDR_ENAME or
 * ADDR_ECONNECT with err set ("HOST:PORT: why", "cannot connect to
 * HOST:PORT: why").
 */
int	 addr_connect(const char *host, const char *port, unsigned attempt,
	    int flags, char *err, size_t errlen);

#endif
