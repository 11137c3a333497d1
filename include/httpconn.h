/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPCONN_H
#define CMDGATE_HTTPCONN_H

/*
 * The connections of MCP over HTTP (cmdgated(8), MCP over HTTP): at most
 * 2 x --max-clients + 16 open; one more is closed before it is read.
 * One that no request of has passed the checks (Host, Origin, token)
 * --auth-timeout after its accept is closed.  The bytes of requests not
 * yet read whole count against --max-partial, in the server's total of
 * unfinished input; past it, the connection holding the most is closed.
 */

struct bufferevent;
struct event_base;
struct evhttp_request;
struct http;
struct http_conn;

/* The bound and the refusing event of h. */
void			 httpconn_init(struct http *);
/* evhttp_set_bevcb's: a new connection's bufferevent, counted. */
struct bufferevent	*httpconn_new(struct event_base *, void *http);
/*
 * req was read whole: its connection's bytes held against --max-partial
 * are now only those of the next request.  The connection, or NULL (not
 * one of h's).
 */
struct http_conn	*httpconn_request(struct http *,
			    struct evhttp_request *);
/* A request of c passed the checks: no --auth-timeout for c (c: or NULL). */
void			 httpconn_let_in(struct http_conn *);
/* After evhttp_free: release what is held. */
void			 httpconn_free(struct http *);

#endif
