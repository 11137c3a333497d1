/* SPDX-License-Identifier: ISC */
/*
 * MCP over HTTP: the connections evhttp accepts, counted and bounded at
 * 2 x --max-clients + 16 (libevent 2.1 has no bound of its own), and
 * each closed unless a request of it passes the checks within
 * --auth-timeout of its accept (evhttp's own timeout starts again with
 * every byte, so a client that trickles bytes would hold its place).
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "httpconn.h"
#include "httpsess.h"
#include "log.h"
#include "options.h"
#include "server.h"
#include "util.h"

#define HTTP_CONNS_PER_CLIENT	2	/* open connections: 2 a client, */
#define HTTP_CONNS_SPARE	16	/* and these more */

static void	httpconn_refuse(evutil_socket_t, short, void *);
static void	httpconn_deadline(evutil_socket_t, short, void *);

/* Whether evhttp has freed c (it clears the callbacks). */
static int
httpconn_gone(const struct http_conn *c)
{
	bufferevent_data_cb	 rcb;
	bufferevent_event_cb	 ecb;

	bufferevent_getcb(c->bev, &rcb, NULL, &ecb, NULL);
	return rcb == NULL && ecb == NULL;
}

/* Close c as at an EOF: evhttp frees it, with no answer. */
static void
httpconn_close(struct http_conn *c)
{
	if (!httpconn_gone(c))
		bufferevent_trigger_event(c->bev, BEV_EVENT_EOF |
		    BEV_EVENT_READING, 0);
}

/* Forget the connections evhttp has freed: how many are open. */
static size_t
httpconn_reap(struct http *h)
{
	struct http_conn	*c;
	size_t			 i = 0;

	while (i < h->nconns) {
		c = h->conns[i];
		if (!httpconn_gone(c)) {
			i++;
			continue;
		}
		event_free(c->deadline);
		bufferevent_decref(c->bev);
		free(c);
		h->conns[i] = h->conns[--h->nconns];
	}
	if (h->nconns < h->maxconns)
		h->full = 0;
	return h->nconns;
}

/* A new entry for bev, its deadline armed. */
static struct http_conn *
httpconn_add(struct http *h, struct event_base *base, struct bufferevent *bev)
{
	struct http_conn	*c = xcalloc(1, sizeof(*c));
	struct timeval		 tv = { (time_t)h->srv->opt->auth_timeout, 0 };

	c->h = h;
	c->bev = bev;
	if ((c->deadline = evtimer_new(base, httpconn_deadline, c)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(c->deadline, &tv);
	if (h->nconns == h->connsize) {
		h->connsize = h->connsize == 0 ? 64 : 2 * h->connsize;
		h->conns = xrealloc(h->conns, h->connsize *
		    sizeof(*h->conns));
	}
	h->conns[h->nconns++] = c;
	return c;
}

/*
 * evhttp's bufferevent for a connection it accepted (no socket yet): held
 * to be counted.  Not closed on free: evhttp then closes the socket
 * itself, and the connection is known gone as soon as it is.  Over the
 * bound, it is closed before anything is read from it (httpconn_refuse runs
 * in this turn of the loop).
 */
struct bufferevent *
httpconn_new(struct event_base *base, void *arg)
{
	struct http		*h = arg;
	struct bufferevent	*bev;
	size_t			 open = httpconn_reap(h);

	if ((bev = bufferevent_socket_new(base, -1, 0)) == NULL)
		fatalx("bufferevent_socket_new");
	bufferevent_incref(bev);
	httpconn_add(h, base, bev)->refuse = open >= h->maxconns;
	if (open >= h->maxconns) {
		if (!h->full)
			log_warnx("HTTP: %zu connections open (2 x "
			    "--max-clients + 16); refusing more until one "
			    "closes", open);
		h->full = 1;
		event_active(h->refuse, EV_TIMEOUT, 1);
	}
	return bev;
}

/* Close the refused connections: evhttp frees them as at an EOF. */
static void
httpconn_refuse(evutil_socket_t fd, short ev, void *arg)
{
	struct http	*h = arg;
	size_t		 i;

	(void)fd;
	(void)ev;
	for (i = 0; i < h->nconns; i++) {
		if (!h->conns[i]->refuse)
			continue;
		h->conns[i]->refuse = 0;
		httpconn_close(h->conns[i]);
	}
}

/* The client's address as "ADDR:PORT", or "?". */
static void
httpconn_peer(const struct http_conn *c, char *buf, size_t len)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	char			 a[INET6_ADDRSTRLEN];

	if (getpeername(bufferevent_getfd(c->bev), (struct sockaddr *)&ss,
	    &sl) == -1)
		snprintf(buf, len, "?");
	else if (ss.ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", inet_ntop(AF_INET6,
		    &sin6->sin6_addr, a, sizeof(a)), ntohs(sin6->sin6_port));
	else
		snprintf(buf, len, "%s:%u", inet_ntop(AF_INET,
		    &sin->sin_addr, a, sizeof(a)), ntohs(sin->sin_port));
}

/*
 * --auth-timeout since its accept, and no request of it passed the
 * checks: closed, however it was sending (a request not yet whole has no
 * evhttp_request to answer).
 */
static void
httpconn_deadline(evutil_socket_t fd, short ev, void *arg)
{
	struct http_conn	*c = arg;
	char			 peer[80];

	(void)fd;
	(void)ev;
	if (c->let_in || httpconn_gone(c))
		return;
	httpconn_peer(c, peer, sizeof(peer));
	log_info("HTTP: connection from %s: no request let in within %llu s "
	    "(--auth-timeout), closed", peer,
	    (unsigned long long)c->h->srv->opt->auth_timeout);
	httpconn_close(c);
}

struct http_conn *
httpconn_of(struct http *h, struct evhttp_request *req)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(
				    evhttp_request_get_connection(req));
	size_t			 i;

	for (i = 0; i < h->nconns; i++)
		if (h->conns[i]->bev == bev)
			return h->conns[i];
	return NULL;
}

void
httpconn_let_in(struct http_conn *c)
{
	if (c == NULL || c->let_in)
		return;
	c->let_in = 1;
	evtimer_del(c->deadline);
}

void
httpconn_init(struct http *h)
{
	uint64_t	n = h->srv->opt->max_clients;

	if ((h->refuse = evtimer_new(h->srv->base, httpconn_refuse, h)) ==
	    NULL)
		fatalx("evtimer_new");
	h->maxconns = n > (SIZE_MAX - HTTP_CONNS_SPARE) / HTTP_CONNS_PER_CLIENT ?
	    SIZE_MAX : (size_t)(HTTP_CONNS_PER_CLIENT * n + HTTP_CONNS_SPARE);
}

void
httpconn_free(struct http *h)
{
	struct http_conn	*c;

	event_free(h->refuse);
	while (h->nconns > 0) {
		c = h->conns[--h->nconns];
		event_free(c->deadline);
		bufferevent_decref(c->bev);
		free(c);
	}
	free(h->conns);
	h->conns = NULL;
}
