/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPCONN_H
#define CMDGATE_HTTPCONN_H

/*
 * The connections of MCP over HTTP (cmdgated(8), MCP over HTTP): at most
 * 2 x --max-clients + 16 open; one more is closed before it is read.
 */

struct bufferevent;
struct event_base;
struct http;

/* The bound and the refusing event of h. */
void			 httpconn_init(struct http *);
/* evhttp_set_bevcb's: a new connection's bufferevent, counted. */
struct bufferevent	*httpconn_new(struct event_base *, void *http);
/* After evhttp_free: release what is held. */
void			 httpconn_free(struct http *);

#endif
