/* SPDX-License-Identifier: ISC */
/*
 * MCP over HTTP: the connections evhttp accepts, counted and bounded at
 * 2 x --max-clients + 16 (libevent 2.1 has no bound of its own).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "httpconn.h"
#include "httpsess.h"
#include "log.h"
#include "options.h"
#include "server.h"
#include "util.h"

#define HTTP_CONNS_PER_CLIENT	2	/* open connections: 2 a client, */
#define HTTP_CONNS_SPARE	16	/* and these more */

static void	httpconn_refuse(evutil_socket_t, short, void *);

/*
 * Forget the connections evhttp has freed (it clears their callbacks):
 * how many are open.
 */
static size_t
httpconn_reap(struct http *h)
{
	bufferevent_data_cb	 rcb;
	bufferevent_event_cb	 ecb;
	size_t			 i = 0;

	while (i < h->nconns) {
		bufferevent_getcb(h->conns[i].bev, &rcb, NULL, &ecb, NULL);
		if (rcb != NULL || ecb != NULL) {
			i++;
			continue;
		}
		bufferevent_decref(h->conns[i].bev);
		h->conns[i] = h->conns[--h->nconns];
	}
	if (h->nconns < h->maxconns)
		h->full = 0;
	return h->nconns;
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
	if (h->nconns == h->connsize) {
		h->connsize = h->connsize == 0 ? 64 : 2 * h->connsize;
		h->conns = xrealloc(h->conns, h->connsize *
		    sizeof(*h->conns));
	}
	h->conns[h->nconns].bev = bev;
	h->conns[h->nconns++].refuse = open >= h->maxconns;
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
	struct http		*h = arg;
	bufferevent_event_cb	 ecb;
	size_t			 i;

	(void)fd;
	(void)ev;
	for (i = 0; i < h->nconns; i++) {
		if (!h->conns[i].refuse)
			continue;
		h->conns[i].refuse = 0;
		bufferevent_getcb(h->conns[i].bev, NULL, NULL, &ecb, NULL);
		if (ecb != NULL)
			bufferevent_trigger_event(h->conns[i].bev,
			    BEV_EVENT_EOF | BEV_EVENT_READING, 0);
	}
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
	event_free(h->refuse);
	while (h->nconns > 0)
		bufferevent_decref(h->conns[--h->nconns].bev);
	free(h->conns);
	h->conns = NULL;
}
