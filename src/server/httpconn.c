/* SPDX-License-Identifier: ISC */
/*
 * MCP over HTTP: the connections evhttp accepts, counted and bounded at
 * 2 x --max-clients + 16 (libevent 2.1 has no bound of its own), and
 * each closed unless a request of it passes the checks within
 * --auth-timeout of its accept (evhttp's own timeout starts again with
 * every byte, so a client that trickles bytes would hold its place).
 * What a connection sent of a request not yet read whole counts against
 * --max-partial with the TCP clients' partial messages: libevent 2.1
 * shows a request to no one before its body is in (evhttp has no header
 * callback for the requests it accepts), so the bytes are counted as
 * they come, from the input buffer's callback.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "log.h"
#include "options.h"
#include "server.h"
#include "util.h"

#define HTTP_CONNS_PER_CLIENT	2	/* open connections: 2 a client, */
#define HTTP_CONNS_SPARE	16	/* and these more */
#define HTTP_REAP_S		1	/* a connection gone with bytes held:
					   forgotten within */

static void	httpconn_refuse(evutil_socket_t, short, void *);
static void	httpconn_deadline(evutil_socket_t, short, void *);
static void	httpconn_input(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);

/* Whether evhttp has freed c (it clears the callbacks). */
static int
httpconn_gone(const struct http_conn *c)
{
	bufferevent_data_cb	 rcb;
	bufferevent_event_cb	 ecb;

	bufferevent_getcb(c->bev, &rcb, NULL, &ecb, NULL);
	return rcb == NULL && ecb == NULL;
}

/*
 * c holds n bytes of a request not read whole: counted in the server's
 * total of unfinished input (--max-partial).  Until evhttp has freed it,
 * a connection gone is only seen by looking: looked at in a while.
 */
static void
httpconn_hold(struct http_conn *c, size_t n)
{
	struct http	*h = c->h;
	struct timeval	 tv = { HTTP_REAP_S, 0 };

	h->srv->cs.inbuf_total = h->srv->cs.inbuf_total - c->held + n;
	h->held = h->held - c->held + n;
	c->held = n;
	if (h->held > 0 && !evtimer_pending(h->reaper, NULL))
		evtimer_add(h->reaper, &tv);
}

/*
 * Close c as at an EOF: evhttp frees it, with no answer.  What it sent is
 * never read: dropped now, not when c is reaped.
 */
static void
httpconn_close(struct http_conn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	if (!httpconn_gone(c))
		bufferevent_trigger_event(c->bev, BEV_EVENT_EOF |
		    BEV_EVENT_READING, 0);
	if (!httpconn_gone(c))
		return;
	evbuffer_drain(in, evbuffer_get_length(in));
	httpconn_hold(c, 0);
}

/* Release c's count, callback and references, and free it. */
static void
httpconn_drop(struct http_conn *c)
{
	httpconn_hold(c, 0);
	evbuffer_remove_cb(bufferevent_get_input(c->bev), httpconn_input, c);
	event_free(c->deadline);
	bufferevent_decref(c->bev);
	free(c);
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
		httpconn_drop(c);
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
	if (evbuffer_add_cb(bufferevent_get_input(bev), httpconn_input, c) ==
	    NULL)
		fatalx("evbuffer_add_cb: out of memory");
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

/*
 * Close the refused connections and those shed: evhttp frees them as at
 * an EOF.
 */
static void
httpconn_refuse(evutil_socket_t fd, short ev, void *arg)
{
	struct http	*h = arg;
	size_t		 i;

	(void)fd;
	(void)ev;
	for (i = 0; i < h->nconns; i++) {
		if (!h->conns[i]->refuse && !h->conns[i]->shed)
			continue;
		h->conns[i]->refuse = 0;
		httpconn_close(h->conns[i]);
	}
}

/* The reaper's timer: forget the connections gone with bytes held. */
static void
httpconn_reaper(evutil_socket_t fd, short ev, void *arg)
{
	struct http	*h = arg;
	struct timeval	 tv = { HTTP_REAP_S, 0 };

	(void)fd;
	(void)ev;
	httpconn_reap(h);
	if (h->held > 0)
		evtimer_add(h->reaper, &tv);
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

/*
 * Past --max-partial: the HTTP connection holding the most goes, with no
 * answer (its request has no evhttp_request yet), as the TCP client that
 * holds the most does (listener.c): the one that costs the most, and
 * likely the one that grew it.
 */
static void
httpconn_shed(struct http *h)
{
	const struct options	*opt = h->srv->opt;
	struct http_conn	*big = NULL;
	char			 peer[80];
	size_t			 i;

	for (i = 0; i < h->nconns; i++)
		if (!h->conns[i]->shed && (big == NULL ||
		    h->conns[i]->held > big->held))
			big = h->conns[i];
	if (big == NULL || big->held == 0)
		return;
	httpconn_peer(big, peer, sizeof(peer));
	log_info("HTTP: connection from %s: the broker holds too many "
	    "unfinished messages (--max-partial %llu bytes for all clients), "
	    "and its request's %zu bytes were the most, closed", peer,
	    (unsigned long long)opt->max_partial, big->held);
	big->shed = 1;
	httpconn_hold(big, 0);
	event_active(h->refuse, EV_TIMEOUT, 1);
}

/* evbuffer's callback of a connection's input: bytes of its request. */
static void
httpconn_input(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct http_conn	*c = arg;
	const struct options	*opt = c->h->srv->opt;
	uint64_t		 max;

	(void)in;
	if (info->n_added == 0 || c->refuse || c->shed || httpconn_gone(c))
		return;
	httpconn_hold(c, c->held + info->n_added);
	max = opt->max_partial > opt->max_message ? opt->max_partial :
	    opt->max_message;
	if (c->h->srv->cs.inbuf_total <= max)
		return;
	/* Those gone are not to be counted, nor shed. */
	httpconn_reap(c->h);
	if (c->h->srv->cs.inbuf_total > max)
		httpconn_shed(c->h);
}

/*
 * An answer, or an event of a stream, goes out at once: without
 * TCP_NODELAY each waited for the client's delayed ACK (40 ms a
 * tools/call on a kept connection).  The socket is evhttp's once the
 * connection is accepted: set at its first request.
 */
static void
httpconn_nodelay(struct http_conn *c)
{
	int	one = 1;

	if (c->nodelay)
		return;
	c->nodelay = 1;
	(void)setsockopt(bufferevent_getfd(c->bev), IPPROTO_TCP, TCP_NODELAY,
	    &one, sizeof(one));
}

struct http_conn *
httpconn_request(struct http *h, struct evhttp_request *req)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(
				    evhttp_request_get_connection(req));
	struct http_conn	*c;
	size_t			 i;

	for (i = 0; i < h->nconns; i++) {
		if ((c = h->conns[i])->bev != bev)
			continue;
		/* Whole: the body is the request's; what follows is held. */
		c->shed = 0;
		httpconn_nodelay(c);
		httpconn_hold(c, evbuffer_get_length(
		    bufferevent_get_input(bev)));
		return c;
	}
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
	    NULL || (h->reaper = evtimer_new(h->srv->base, httpconn_reaper,
	    h)) == NULL)
		fatalx("evtimer_new");
	h->maxconns = n > (SIZE_MAX - HTTP_CONNS_SPARE) / HTTP_CONNS_PER_CLIENT ?
	    SIZE_MAX : (size_t)(HTTP_CONNS_PER_CLIENT * n + HTTP_CONNS_SPARE);
}

void
httpconn_free(struct http *h)
{
	while (h->nconns > 0)
		httpconn_drop(h->conns[--h->nconns]);
	event_free(h->refuse);
	event_free(h->reaper);
	free(h->conns);
	h->conns = NULL;
}
