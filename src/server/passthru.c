/* SPDX-License-Identifier: ISC */
/*
 * A connection passed on byte for byte: what a listener took that is
 * not its own (the unity-hub face's other routes: MCP over HTTP with its
 * event streams, /health, /api/...) goes to another server over a
 * connection of its own, the bytes read so far first, until either side
 * closes.  Nothing is parsed; each direction stops reading while the
 * other side has PASSTHRU_HIGH bytes it has not taken.
 */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "addr.h"
#include "log.h"
#include "server.h"
#include "util.h"

#define PASSTHRU_HIGH	(1024 * 1024)

#define PASSTHRU_DRAIN_S	30	/* for the last bytes, once one side
					   closed */
#define PASSTHRU_502	"HTTP/1.1 502 Bad Gateway\r\nContent-Type: " \
	"text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s"

struct passthru {
	struct bufferevent	*a, *b;		/* the client, the server */
	char			*to;
	int			 connected;
	int			 closing;	/* one side went: the other's
						   last bytes go out */
	passthru_fn		 done;
	void			*arg;
};

static void	pt_move(struct passthru *, struct bufferevent *);

static void
pt_end(struct passthru *p)
{
	passthru_fn	 done = p->done;
	void		*arg = p->arg;

	passthru_free(p);
	done(arg);
}

/* from closed: the other side gets what it has not taken, then ends. */
static void
pt_closing(struct passthru *p, struct bufferevent *from)
{
	struct bufferevent	*to = from == p->a ? p->b : p->a;
	struct timeval		 tv = { PASSTHRU_DRAIN_S, 0 };

	pt_move(p, from);
	p->closing = 1;
	bufferevent_disable(from, EV_READ | EV_WRITE);
	bufferevent_disable(to, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(to)) == 0) {
		pt_end(p);
		return;
	}
	bufferevent_setwatermark(to, EV_WRITE, 0, 0);
	bufferevent_set_timeouts(to, NULL, &tv);
}

/* The server cannot be reached: the client hears why. */
static void
pt_refused(struct passthru *p)
{
	char	why[512];

	snprintf(why, sizeof(why), "cmdgated: the server at %s does not "
	    "answer (%s)\n", p->to, evutil_socket_error_to_string(
	    EVUTIL_SOCKET_ERROR()));
	log_info("passing a connection on to %s: %s", p->to,
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	evbuffer_drain(bufferevent_get_input(p->a), (size_t)-1);
	evbuffer_add_printf(bufferevent_get_output(p->a), PASSTHRU_502,
	    strlen(why), why);
	if (p->b != NULL)
		bufferevent_free(p->b);
	p->b = NULL;
	p->connected = 1;	/* nothing moves: the 502 goes out */
	p->closing = 1;
	bufferevent_setwatermark(p->a, EV_WRITE, 0, 0);
	bufferevent_disable(p->a, EV_READ);
}

/* Move what from holds to the other side, reading less while it waits. */
static void
pt_move(struct passthru *p, struct bufferevent *from)
{
	struct bufferevent	*to = from == p->a ? p->b : p->a;

	if (!p->connected)
		return;		/* the client's bytes wait for the connect */
	evbuffer_add_buffer(bufferevent_get_output(to),
	    bufferevent_get_input(from));
	if (evbuffer_get_length(bufferevent_get_output(to)) >= PASSTHRU_HIGH)
		bufferevent_disable(from, EV_READ);
}

static void
pt_read(struct bufferevent *bev, void *arg)
{
	struct passthru	*p = arg;

	if (!p->closing)
		pt_move(p, bev);
}

/* bev took its bytes: its other side reads again (or, closing, ends). */
static void
pt_written(struct bufferevent *bev, void *arg)
{
	struct passthru	*p = arg;

	if (p->closing) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			pt_end(p);
		return;
	}
	bufferevent_enable(bev == p->a ? p->b : p->a, EV_READ);
}

static void
pt_event(struct bufferevent *bev, short what, void *arg)
{
	struct passthru	*p = arg;
	int		 one = 1;

	if ((what & BEV_EVENT_CONNECTED) && bev == p->b) {
		p->connected = 1;
		(void)setsockopt(bufferevent_getfd(bev), IPPROTO_TCP,
		    TCP_NODELAY, &one, sizeof(one));
		pt_move(p, p->a);
		return;
	}
	if (!p->connected && bev == p->b)
		pt_refused(p);
	else if (p->closing)
		pt_end(p);	/* the other side went too, or timed out */
	else
		pt_closing(p, bev);
}

struct passthru *
passthru_new(struct event_base *base, struct bufferevent *client,
    const char *to, passthru_fn done, void *arg)
{
	struct passthru	*p = xcalloc(1, sizeof(*p));
	const char	*port;
	char		 host[256], err[512];
	int		 fd = -1;

	p->a = client;
	p->to = xstrdup(to);
	p->done = done;
	p->arg = arg;
	bufferevent_setcb(p->a, pt_read, pt_written, pt_event, p);
	bufferevent_setwatermark(p->a, EV_WRITE, PASSTHRU_HIGH / 2, 0);
	bufferevent_set_timeouts(p->a, NULL, NULL);
	bufferevent_enable(p->a, EV_READ | EV_WRITE);
	if (addr_split(to, host, sizeof(host), &port) != -1)
		fd = addr_connect(host, port, 0, ADDR_NONBLOCK, err,
		    sizeof(err));
	if (fd < 0) {
		pt_refused(p);
		return p;
	}
	if ((p->b = bufferevent_socket_new(base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    bufferevent_socket_connect(p->b, NULL, 0) == -1)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(p->b, pt_read, pt_written, pt_event, p);
	bufferevent_setwatermark(p->b, EV_WRITE, PASSTHRU_HIGH / 2, 0);
	bufferevent_enable(p->b, EV_READ | EV_WRITE);
	return p;
}

void
passthru_free(struct passthru *p)
{
	if (p == NULL)
		return;
	bufferevent_free(p->a);
	if (p->b != NULL)
		bufferevent_free(p->b);
	free(p->to);
	free(p);
}
