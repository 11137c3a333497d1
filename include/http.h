/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTP_H
#define CMDGATE_HTTP_H

#include <stddef.h>

struct server;

/*
 * MCP over Streamable HTTP (cmdgated(8), MCP over HTTP): --http's
 * endpoint, http://ADDR:PORT/mcp, on the broker's loop.  Its sessions are
 * connections of the server's table (httpsess.c).
 */

/* Bind --http, if given: 0, or -1 with err. */
int	http_open(struct server *, char *err, size_t errlen);
/* Stop accepting, end every stream and session. */
void	http_shutdown(struct server *);
/* The same, then free the endpoint (before the loop is freed). */
void	http_free(struct server *);

#endif
