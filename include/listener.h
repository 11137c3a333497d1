/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_LISTENER_H
#define CMDGATE_LISTENER_H

#include <stddef.h>

struct conn;
struct server;

/*
 * TCP and Unix-socket listeners and the socket side of each connection
 * (libevent bufferevents).  What is said on a connection is conn.c's.
 */

/* Bind every --listen address and --socket: 0, or -1 with err. */
int	listener_open(struct server *, char *err, size_t errlen);
/* Stop accepting and remove the Unix socket. */
void	listener_close(struct server *);
/*
 * Begin an orderly stop: tell every client, close each once its output is
 * flushed, and leave the loop when none is left.
 */
void	listener_shutdown(struct server *);
/* Free the listeners and every connection. */
void	listener_free(struct server *);

#endif
