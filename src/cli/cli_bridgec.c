/* SPDX-License-Identifier: ISC */
/* cmdgate mcp: its connection to the broker, made again without blocking. */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "addr.h"
#include "cli.h"
#include "jstrict.h"
#include "util.h"

#define BRIDGEC_JSON	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static void	bridgec_read(struct bufferevent *, void *);
static void	bridgec_written(struct bufferevent *, void *);
static void	bridgec_event(struct bufferevent *, short, void *);
static void	bridgec_lost(struct bridgec *, short);

static struct bufferevent *
bridgec_unix(struct event_base *base, const char *path, char *err,
    size_t errlen)
{
	struct sockaddr_un	 sun;
	struct bufferevent	*bev;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return NULL;
	}
	strcpy(sun.sun_path, path);
	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL || bufferevent_socket_connect(bev, (struct sockaddr *)&sun,
	    sizeof(sun)) == -1) {
		snprintf(err, errlen, "cannot connect to %s", path);
		if (bev != NULL)
			bufferevent_free(bev);
		return NULL;
	}
	return bev;
}

/*
 * Start connecting to t: a bufferevent whose event callback will get
 * BEV_EVENT_CONNECTED or an error; NULL with err set.  For TCP, attempt
 * picks which of the host's addresses is tried.
 */
static struct bufferevent *
bridgec_dial(struct event_base *base, const struct client_target *t,
    unsigned attempt, char *err, size_t errlen)
{
	struct bufferevent	*bev;
	int			 fd;

	if (t->socket != NULL)
		return bridgec_unix(base, t->socket, err, errlen);
	/* The broker is on this machine or a name the resolver knows. */
	if ((fd = addr_connect(t->host, t->port, attempt, ADDR_NONBLOCK, err,
	    errlen)) < 0)
		return NULL;
	if ((bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		close(fd);
	/* The connect is under way: its end is the event callback's. */
	if (bev == NULL || bufferevent_socket_connect(bev, NULL, 0) == -1) {
		snprintf(err, errlen, "cannot connect to %s:%s", t->host,
		    t->port);
		if (bev != NULL)
			bufferevent_free(bev);
		return NULL;
	}
	return bev;
}

/*
 * The authenticate request line, with id (JSON text), to send once the
 * listener is known to be the broker's user's (*owner, the owner of the
 * token file); NULL with *rc 0 when none is needed, or NULL with *rc an
 * exit status and err set.  Caller frees (and wipes: it holds the token).
 */
static char *
bridgec_auth(const struct client_target *t, const char *id, uid_t *owner,
    int *rc, char *err, size_t errlen)
{
	struct client_client	 c;
	char			*tok, *line;
	json_object		*req, *p;

	*rc = 0;
	if (t->socket != NULL)
		return NULL;	/* trusted by the socket's permissions */
	memset(&c, 0, sizeof(c));
	c.fd = -1;
	if ((*rc = client_find_token(&c, t, &tok, owner)) != 0 || tok == NULL) {
		snprintf(err, errlen, "%s", c.err);
		return NULL;
	}
	p = json_object_new_object();
	json_object_object_add(p, "token", json_object_new_string(tok));
	explicit_bzero(tok, strlen(tok));
	free(tok);
	req = json_object_new_object();
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_tokener_parse(id));
	json_object_object_add(req, "method",
	    json_object_new_string("authenticate"));
	json_object_object_add(req, "params", p);
	line = xstrdup(json_object_to_json_string_ext(req, BRIDGEC_JSON));
	json_object_put(req);
	return line;
}

/* Forget the authenticate line of a try, wiped. */
static void
bridgec_wipe(struct bridgec *c)
{
	if (c->auth == NULL)
		return;
	explicit_bzero(c->auth, strlen(c->auth));
	free(c->auth);
	c->auth = NULL;
}

/*
 * Why a try to get back was refused, on the outage's line (its end
 * completes it); once, not at each try, while the reason stays.
 */
static void
bridgec_say(struct bridgec *c, const char *why)
{
	if (strcmp(c->said, why) == 0)
		return;
	snprintf(c->said, sizeof(c->said), "%s", why);
	fprintf(stderr, "\ncmdgate mcp: %s; still trying...", why);
}

static void
bridgec_arm(struct bridgec *c)
{
	struct timeval	tv;

	tv.tv_sec = c->delay / 1000;
	tv.tv_usec = (c->delay % 1000) * 1000;
	evtimer_add(c->retry, &tv);
}

static void
bridgec_backoff(struct bridgec *c)
{
	c->delay = c->delay * 2 > CG_RETRY_MAX_MS ? CG_RETRY_MAX_MS :
	    c->delay * 2;
}

/* Whether the broker reads too little (1) or reads again (0). */
static void
bridgec_full(struct bridgec *c, int full)
{
	if (c->full == full)
		return;
	c->full = full;
	c->cb->full(c->arg, full);
}

static void
bridgec_close(struct bridgec *c)
{
	if (c->sock != NULL)
		bufferevent_free(c->sock);
	c->sock = NULL;
	c->scanned = 0;
	c->state = BRIDGEC_DOWN;
	bridgec_wipe(c);
	evtimer_del(c->deadline);
	bridgec_full(c, 0);	/* nothing is sent while it is down */
}

/* Connected and authenticated: the client's requests go on it. */
static void
bridgec_up(struct bridgec *c)
{
	c->state = BRIDGEC_UP;
	c->up_at = util_monotonic_ms();
	c->said[0] = '\0';
	evtimer_del(c->deadline);
	bufferevent_setcb(c->sock, bridgec_read, bridgec_written,
	    bridgec_event, c);
	if (c->paused)
		bufferevent_disable(c->sock, EV_READ);
	c->cb->up(c->arg);
}

/* A try to get back failed: the next one later. */
static void
bridgec_failed(struct bridgec *c)
{
	bridgec_close(c);
	bridgec_backoff(c);
	bridgec_arm(c);
}

/* No answer to the connection or its authentication in time. */
static void
bridgec_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	bridgec_failed(arg);
}

/* A line on a new connection: the answer to its authentication? */
static void
bridgec_auth_line(struct bridgec *c, const char *line, size_t n)
{
	json_object	*msg = NULL, *id;
	const char	*s;

	if (jstrict_parse(line, n, &msg) != 0 ||
	    !json_object_object_get_ex(msg, "id", &id) ||
	    !json_object_is_type(id, json_type_string) ||
	    strncmp(s = json_object_get_string(id), c->own,
	    strlen(c->own)) != 0 ||
	    strcmp(s + strlen(c->own), "authenticate") != 0) {
		json_object_put(msg);
		return;
	}
	if (json_object_object_get_ex(msg, "result", NULL))
		bridgec_up(c);
	else
		bridgec_failed(c);
	json_object_put(msg);
}

/*
 * The listener answered the probe, so it has accepted the connection and
 * the kernel can name its socket's owner: the token goes to the broker's
 * user only.
 */
static void
bridgec_probe_line(struct bridgec *c)
{
	char	err[512];

	if (client_peer_check(bufferevent_getfd(c->sock), c->owner, err,
	    sizeof(err)) == -1) {
		bridgec_say(c, err);
		bridgec_failed(c);
		return;
	}
	c->state = BRIDGEC_AUTH;
	bufferevent_write(c->sock, c->auth, strlen(c->auth));
	bufferevent_write(c->sock, "\n", 1);
	bridgec_wipe(c);
}

/*
 * Connected: when the broker asks for a token, a ping first (probe), the
 * token once the listener is known (bridgec_probe_line).
 */
static void
bridgec_connected(struct bridgec *c)
{
	char	 err[512], id[64], *probe;
	int	 rc;

	snprintf(id, sizeof(id), "\"%sauthenticate\"", c->own);
	if ((c->auth = bridgec_auth(c->t, id, &c->owner, &rc, err,
	    sizeof(err))) == NULL) {
		if (rc == 0)
			bridgec_up(c);
		else
			bridgec_failed(c);
		return;
	}
	c->state = BRIDGEC_PROBE;
	probe = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":\"%sprobe\","
	    "\"method\":\"ping\"}\n", c->own);
	bufferevent_write(c->sock, probe, strlen(probe));
	free(probe);
}

/* One try to get back to the broker, without waiting for it. */
static void
bridgec_retry(evutil_socket_t fd, short what, void *arg)
{
	struct bridgec	*c = arg;
	struct timeval	 tv;
	char		 err[512];
	int64_t		 ms = c->t->reply_timeout_ms > 0 ?
			    c->t->reply_timeout_ms : CG_REPLY_TIMEOUT_S * 1000;

	(void)fd;
	(void)what;
	if ((c->sock = bridgec_dial(c->base, c->t, c->attempt++, err,
	    sizeof(err))) == NULL) {
		bridgec_failed(c);
		return;
	}
	c->state = BRIDGEC_DIAL;
	bufferevent_setcb(c->sock, bridgec_read, NULL, bridgec_event, c);
	bufferevent_enable(c->sock, EV_READ | EV_WRITE);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->deadline, &tv);
}

static void
bridgec_read(struct bufferevent *bev, void *arg)
{
	struct bridgec	*c = arg;
	char		*line;
	size_t		 n;

	while (c->sock == bev && (line = bridgeio_readln(
	    bufferevent_get_input(bev), &c->scanned, &n)) != NULL) {
		if (c->state == BRIDGEC_PROBE)
			bridgec_probe_line(c);
		else if (c->state == BRIDGEC_AUTH)
			bridgec_auth_line(c, line, n);
		else if (c->state == BRIDGEC_UP)
			c->cb->line(c->arg, line, n);
		free(line);
	}
	/* A line longer than any the client may send: not a broker. */
	if (c->sock != bev || evbuffer_get_length(bufferevent_get_input(bev)) <=
	    BRIDGEIO_LINE_MAX)
		return;
	evbuffer_drain(bufferevent_get_input(bev), (size_t)-1);
	c->scanned = 0;
	errno = EMSGSIZE;
	if (c->state == BRIDGEC_UP)
		bridgec_lost(c, BEV_EVENT_READING | BEV_EVENT_ERROR);
	else
		bridgec_failed(c);
}

static void
bridgec_written(struct bufferevent *bev, void *arg)
{
	struct bridgec	*c = arg;

	bridgec_full(c, 0);
	/* The client is done and all it said has gone: half-close. */
	if (c->finish)
		shutdown(bufferevent_getfd(bev), SHUT_WR);
}

/*
 * The connection that was up is lost: back to the first delay only
 * after one that lasted, else on with the backoff.
 */
static void
bridgec_lost(struct bridgec *c, short what)
{
	struct bufferevent	*sock = c->sock;
	int64_t			 now = util_monotonic_ms();
	int			 again;

	c->sock = NULL;		/* closed for the callback */
	bridgec_close(c);
	again = c->cb->lost(c->arg, what, bufferevent_get_input(sock));
	bufferevent_free(sock);
	if (!again)
		return;
	if (now - c->up_at >= BRIDGEC_STABLE_MS)
		c->delay = CG_RETRY_FIRST_MS;
	else
		bridgec_backoff(c);
	bridgec_arm(c);
}

static void
bridgec_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridgec	*c = arg;

	(void)bev;
	if (c->state == BRIDGEC_DIAL && (what & BEV_EVENT_CONNECTED))
		bridgec_connected(c);
	else if (c->state == BRIDGEC_UP)
		bridgec_lost(c, what);
	else
		bridgec_failed(c);
}

int
bridgec_init(struct bridgec *c, struct event_base *base,
    const struct client_target *t, const char *own, const struct bridgec_cb *cb,
    void *arg)
{
	memset(c, 0, sizeof(*c));
	c->base = base;
	c->t = t;
	c->own = own;
	c->cb = cb;
	c->arg = arg;
	c->delay = CG_RETRY_FIRST_MS;
	c->retry = evtimer_new(base, bridgec_retry, c);
	c->deadline = evtimer_new(base, bridgec_deadline, c);
	return c->retry != NULL && c->deadline != NULL ? 0 : -1;
}

int
bridgec_attach(struct bridgec *c, struct client_client *cc)
{
	const char	*rest;
	size_t		 n = 0;

	evutil_make_socket_nonblocking(cc->fd);
	if ((c->sock = bufferevent_socket_new(c->base, cc->fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return -1;
	cc->fd = -1;	/* the bridge owns it now */
	if ((rest = jsonl_rest(&cc->jl, &n)) != NULL && n > 0)
		evbuffer_add(bufferevent_get_input(c->sock), rest, n);
	bufferevent_enable(c->sock, EV_READ | EV_WRITE);
	bridgec_up(c);
	if (n > 0)
		bridgec_read(c->sock, c);
	return 0;
}

int
bridgec_is_up(const struct bridgec *c)
{
	return c->state == BRIDGEC_UP;
}

void
bridgec_send(struct bridgec *c, const char *line, size_t n)
{
	if (c->state != BRIDGEC_UP)
		return;
	bufferevent_write(c->sock, line, n);
	bufferevent_write(c->sock, "\n", 1);
	if (evbuffer_get_length(bufferevent_get_output(c->sock)) >
	    BRIDGEC_OUT_MAX)
		bridgec_full(c, 1);
}

int
bridgec_finish(struct bridgec *c)
{
	c->finish = 1;
	if (c->state == BRIDGEC_UP) {
		if (evbuffer_get_length(bufferevent_get_output(c->sock)) == 0)
			shutdown(bufferevent_getfd(c->sock), SHUT_WR);
		return 1;
	}
	evtimer_del(c->retry);
	bridgec_close(c);
	return 0;
}

void
bridgec_pause(struct bridgec *c, int paused)
{
	c->paused = paused;
	if (c->state != BRIDGEC_UP)
		return;
	if (paused)
		bufferevent_disable(c->sock, EV_READ);
	else
		bufferevent_enable(c->sock, EV_READ);
}

int
bridgec_open(const struct bridgec *c)
{
	return c->sock != NULL;
}

void
bridgec_free(struct bridgec *c)
{
	if (c->sock != NULL)
		bufferevent_free(c->sock);
	if (c->retry != NULL)
		event_free(c->retry);
	if (c->deadline != NULL)
		event_free(c->deadline);
}
