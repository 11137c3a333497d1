/* SPDX-License-Identifier: ISC */
/*
 * The editor link: one connection to an editor's bridge, owned by the
 * broker, carrying every exchange with it in order.  MCP for Unity's
 * bridge serves one client at a time (a second connection closes the
 * first) and answers its frames in order: the link writes each call as
 * it comes, after the WELCOME line, and gives each answer to the oldest
 * call not yet answered.  uLoopMCP's editor (jsonrpc-lsp) answers the
 * requests of one connection one after another, each by its id: the
 * link numbers its calls and gives each answer to the call of its id,
 * skipping what the editor pushes.  It connects when a call comes and nothing is
 * open, never by itself, and closes after LINK_IDLE_MS without a call,
 * before the bridge's own 30 s would close it under a request.  A call
 * is its caller's to try again: a refusal or a loss is told, not retried
 * here.  See cmdgated(8), Editor link.
 */
#include "config.h"

#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "addr.h"
#include "jrpcup.h"
#include "jstrict.h"
#include "link.h"
#include "log.h"
#include "umcp.h"
#include "util.h"

#define LINK_IDLE_MS	20000
#define LINKS_MAX	64	/* bridges: a table names a few */

enum link_state { L_DOWN, L_CONNECTING, L_WELCOME, L_OPEN };
enum link_dialect { LD_UNITY, LD_LSP, LD_HUB };

static const char *const link_dialects[] = { "unity-mcp", "jsonrpc-lsp",
    "unity-hub", NULL };

struct lcall {
	TAILQ_ENTRY(lcall)	 entry;
	struct link		*L;
	unsigned char		*frame;		/* until written */
	size_t			 len;
	int			 ping;
	int64_t			 id;		/* jsonrpc-lsp */
	int			 told;		/* its answer, if it comes, is
						   nobody's */
	uint64_t		 end;		/* L->queued at its last byte */
	int64_t			 open_by, deadline;
	struct event		*timer;
	link_fn			 fn;
	void			*arg;
};
TAILQ_HEAD(lcalls, lcall);

struct link {
	TAILQ_ENTRY(link)	 entry;
	struct links		*LS;
	char			*dialect, *to;
	enum link_dialect	 dl;
	enum link_state		 state;
	struct bufferevent	*bev;
	struct evbuffer_cb_entry *drain_cb;	/* on bev's output */
	struct lcalls		 waiting;	/* not written yet */
	struct lcalls		 inflight;	/* written, in order */
	uint64_t		 queued;	/* bytes given to bev */
	uint64_t		 drained;	/* of them, gone to the kernel */
	size_t			 frame_len;	/* unity-mcp 0, jsonrpc-lsp
						   !in_body: a header next */
	int			 in_body, have_len;	/* jsonrpc-lsp */
	int64_t			 next_id;
	unsigned		 attempt;	/* of its addresses */
	int64_t			 seen_ms;	/* the last WELCOME; 0: none */
	uint64_t		 calls, connects, lost;
	struct event		*idle_ev;
	const struct link_port	*port;		/* unity-hub: the plugin's */
	void			*port_arg;
};

struct links {
	struct event_base	*base;
	TAILQ_HEAD(, link)	 list;
	size_t			 n;
};

static void	link_read(struct bufferevent *, void *);

/* ---- telling a call's end ------------------------------------------- */

static void
lcall_free(struct lcall *c)
{
	if (c->timer != NULL)
		event_free(c->timer);
	free(c->frame);
	free(c);
}

static int64_t
link_seen_ago(const struct link *L)
{
	return L->seen_ms == 0 ? -1 : util_monotonic_ms() - L->seen_ms;
}

/* Tell c's end (err: printf-like after "TO: "), once. */
static void
lcall_tell(struct lcall *c, enum up_status st, json_object *out,
    const char *fmt, ...)
{
	struct link_answer	 a;
	va_list			 ap;
	char			 why[512], err[800];

	if (c->told)
		return;
	c->told = 1;
	if (c->timer != NULL)
		evtimer_del(c->timer);
	memset(&a, 0, sizeof(a));
	a.status = st;
	a.out = out;
	a.sent = c->end != 0 && c->L->drained >= c->end;
	a.seen_ago_ms = link_seen_ago(c->L);
	if (fmt != NULL) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(err, sizeof(err), "%s: %s", c->L->to, why);
		a.err = err;
	}
	/* Closed: the bridge went before it took a request written to it;
	 * a call never written (no WELCOME in time) was refused. */
	if (st == UP_REFUSED && c->end != 0)
		a.closed = 1;
	c->fn(c->arg, &a);
}

/* Every call not written: st, why. */
static void
link_fail_waiting(struct link *L, enum up_status st, int nolisten,
    const char *why)
{
	struct link_answer	 a;
	struct lcall		*c;
	char			 err[800];

	snprintf(err, sizeof(err), "%s: %s", L->to, why);
	while ((c = TAILQ_FIRST(&L->waiting)) != NULL) {
		TAILQ_REMOVE(&L->waiting, c, entry);
		memset(&a, 0, sizeof(a));
		a.status = st;
		a.nolisten = nolisten;
		a.seen_ago_ms = link_seen_ago(L);
		a.err = err;
		c->told = 1;
		c->fn(c->arg, &a);
		lcall_free(c);
	}
}

/* ---- the connection --------------------------------------------------- */

static void
link_close(struct link *L)
{
	/* Its buffers may outlive it (libevent frees it later): L's count
	 * of them ends here. */
	if (L->drain_cb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_output(L->bev),
		    L->drain_cb);
	L->drain_cb = NULL;
	if (L->bev != NULL)
		bufferevent_free(L->bev);
	L->bev = NULL;
	L->state = L_DOWN;
	L->frame_len = 0;
	L->in_body = L->have_len = 0;
	evtimer_del(L->idle_ev);
}

/*
 * The connection ended (why): calls in flight are lost, or were never
 * taken whole.  Those not written hear st (a bad WELCOME line, the broker
 * stopping), but a loss: nothing of theirs was lost, they are refused.
 */
static void
link_lost(struct link *L, enum up_status st, const char *why)
{
	struct lcall	*c;
	enum up_status	 end = st == UP_LOST ? UP_REFUSED : st;

	if (L->state == L_OPEN)
		L->lost++;
	while ((c = TAILQ_FIRST(&L->inflight)) != NULL) {
		TAILQ_REMOVE(&L->inflight, c, entry);
		if (c->end != 0 && L->drained >= c->end)
			lcall_tell(c, st, NULL, "%s", why);
		else
			lcall_tell(c, UP_REFUSED, NULL, "closed the "
			    "connection before it took the whole request");
		lcall_free(c);
		if (st != UP_CANCELLED)
			st = UP_LOST;	/* the first had the reason */
	}
	link_close(L);
	link_fail_waiting(L, end, 0, why);
}

static void
link_output_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct link	*L = arg;

	(void)buf;
	L->drained += info->n_deleted;
}

/*
 * Give len bytes of p to the bridge: what the socket takes goes at once,
 * not a loop turn later; the rest, or all of it after an error, through
 * the bufferevent, whose write event then sees the error.
 */
static void
link_write(struct link *L, const char *p, size_t len)
{
	ssize_t	n = 0;

	if (evbuffer_get_length(bufferevent_get_output(L->bev)) == 0 &&
	    (n = send(bufferevent_getfd(L->bev), p, len, MSG_NOSIGNAL)) < 0)
		n = 0;
	L->drained += (uint64_t)n;
	if ((size_t)n < len &&
	    bufferevent_write(L->bev, p + n, len - (size_t)n) == -1)
		fatalx("bufferevent_write: out of memory");
}

/* Write every waiting call, in order. */
static void
link_flush(struct link *L)
{
	struct lcall	*c;

	while ((c = TAILQ_FIRST(&L->waiting)) != NULL) {
		/* The plugin runs one command at a time: the next waits here,
		 * not on the server's clock inside the plugin. */
		if (L->dl == LD_HUB && !TAILQ_EMPTY(&L->inflight))
			return;
		TAILQ_REMOVE(&L->waiting, c, entry);
		if (L->dl == LD_HUB) {
			L->port->send(L->port_arg, (char *)c->frame, c->len);
			L->drained += c->len;
		} else
			link_write(L, (const char *)c->frame, c->len);
		L->queued += c->len;
		c->end = L->queued;
		free(c->frame);
		c->frame = NULL;
		TAILQ_INSERT_TAIL(&L->inflight, c, entry);
	}
}

/* The link is open (after the WELCOME, if its dialect has one). */
static void
link_opened(struct link *L)
{
	L->state = L_OPEN;
	L->seen_ms = util_monotonic_ms();
	L->connects++;
	link_flush(L);
}

/* Idle: nothing waits, nothing is in flight. */
static void
link_idle(struct link *L)
{
	struct timeval	tv = { LINK_IDLE_MS / 1000, 0 };

	if (TAILQ_EMPTY(&L->waiting) && TAILQ_EMPTY(&L->inflight) &&
	    L->state == L_OPEN)
		evtimer_add(L->idle_ev, &tv);
}

static void
link_idle_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	link_close(arg);
}

static void
link_event(struct bufferevent *bev, short what, void *arg)
{
	struct link	*L = arg;
	int		 e = EVUTIL_SOCKET_ERROR();
	char		 why[256];

	if (what & BEV_EVENT_CONNECTED) {
		/* Its WELCOME may have been read first, in the same turn. */
		if (L->dl == LD_UNITY)
			L->state = L_WELCOME;
		else
			link_opened(L);
		if (evbuffer_get_length(bufferevent_get_input(bev)) > 0)
			link_read(bev, L);
		return;
	}
	if (L->state == L_CONNECTING) {
		L->attempt++;
		link_close(L);
		link_fail_waiting(L, UP_REFUSED, e == ECONNREFUSED,
		    strerror(e));
		return;
	}
	if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof(why), "%s", L->state == L_WELCOME ?
		    "closed the connection before its WELCOME line" :
		    "closed the connection before answering");
	else
		snprintf(why, sizeof(why), "%s before answering",
		    e == ECONNRESET ? "closed the connection (reset)" :
		    strerror(e));
	link_lost(L, L->state == L_WELCOME ? UP_REFUSED : UP_LOST, why);
}

/* Connect, unless a connection is open or under way. */
static void
link_connect(struct link *L)
{
	struct bufferevent	*bev;
	const char		*port;
	char			 host[256], err[512];
	int			 fd, one = 1;

	if (L->state != L_DOWN || L->dl == LD_HUB)
		return;		/* a plugin connects to the hub itself */
	if (addr_split(L->to, host, sizeof(host), &port) == -1) {
		link_fail_waiting(L, UP_PROTOCOL, 0,
		    "not HOST:PORT or [IPV6]:PORT");
		return;
	}
	fd = addr_connect(host, port, L->attempt, ADDR_NONBLOCK, err,
	    sizeof(err));
	if (fd < 0) {
		L->attempt++;
		link_fail_waiting(L, fd == ADDR_ENAME ? UP_PROTOCOL :
		    UP_REFUSED, fd == ADDR_ECONNECT && errno == ECONNREFUSED,
		    strerror(errno));
		return;
	}
	/* Pipelined small frames must not wait for the bridge's ACK. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	bev = bufferevent_socket_new(L->LS->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL || bufferevent_socket_connect(bev, NULL, 0) == -1)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(bev, link_read, NULL, link_event, L);
	if ((L->drain_cb = evbuffer_add_cb(bufferevent_get_output(bev),
	    link_output_cb, L)) == NULL)
		fatalx("evbuffer_add_cb: out of memory");
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	L->bev = bev;
	L->state = L_CONNECTING;
	L->queued = L->drained = 0;
}

/* ---- reading ---------------------------------------------------------- */

/* The WELCOME line: 1 when the link opened, 0 for more, -1 closed. */
static int
link_welcome(struct link *L, struct evbuffer *in)
{
	char	*line, why[320];
	size_t	 len;

	if ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) == NULL) {
		if (evbuffer_get_length(in) <= UMCP_LINE_MAX)
			return 0;
		link_lost(L, UP_PROTOCOL, "sent no WELCOME line (4 KiB "
		    "without a newline)");
		return -1;
	}
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	if (umcp_welcome(line, why, sizeof(why)) != 0) {
		free(line);
		link_lost(L, UP_PROTOCOL, why);
		return -1;
	}
	free(line);
	link_opened(L);
	return 1;
}

/* One frame's payload, to the oldest call in flight. */
static int
link_answer(struct link *L, const char *buf, size_t n)
{
	struct lcall	*c = TAILQ_FIRST(&L->inflight);
	json_object	*out = NULL;
	enum up_status	 st;
	char		 why[512];

	if (c == NULL) {
		link_lost(L, UP_PROTOCOL, "sent an answer to no request");
		return -1;
	}
	TAILQ_REMOVE(&L->inflight, c, entry);
	st = umcp_answer(buf, n, c->ping, &out, why, sizeof(why));
	if (st == UP_OK || st == UP_ERROR)
		lcall_tell(c, st, out, st == UP_OK ? NULL : "%s", why);
	else
		lcall_tell(c, st, NULL, "%s", why);
	json_object_put(out);
	lcall_free(c);
	return 0;
}

/* The frames in in: -1 once the link is closed. */
static int
link_frames(struct link *L, struct evbuffer *in)
{
	unsigned char	 hdr[UMCP_HDR], *p;
	enum up_status	 st;
	char		 why[128];
	int		 rc;

	for (;;) {
		if (L->frame_len == 0) {
			if (evbuffer_get_length(in) < UMCP_HDR)
				return 0;
			evbuffer_remove(in, hdr, UMCP_HDR);
			st = umcp_frame_len(hdr, &L->frame_len, why,
			    sizeof(why));
			if (st != UP_OK) {
				link_lost(L, st, why);
				return -1;
			}
		}
		if (evbuffer_get_length(in) < L->frame_len)
			return 0;
		if ((p = evbuffer_pullup(in, (ev_ssize_t)L->frame_len)) ==
		    NULL)
			fatalx("evbuffer_pullup: out of memory");
		rc = link_answer(L, (char *)p, L->frame_len);
		if (rc == -1)
			return -1;
		evbuffer_drain(in, L->frame_len);
		L->frame_len = 0;
	}
}

/* ---- reading jsonrpc-lsp -------------------------------------------- */

/* The call in flight of id, or NULL. */
static struct lcall *
link_call_of(struct link *L, json_object *id)
{
	struct lcall	*c;
	int64_t		 n;

	if (!json_object_is_type(id, json_type_int))
		return NULL;
	n = json_object_get_int64(id);
	TAILQ_FOREACH(c, &L->inflight, entry)
		if (c->id == n)
			return c;
	return NULL;
}

/*
 * One message: an answer to the call of its id (an error without one, as
 * to a request it could not read: the oldest's); what the editor pushes
 * is skipped, as is an answer to no call of ours.
 */
static int
link_lsp_message(struct link *L, const char *buf, size_t n)
{
	json_object	*msg = NULL, *out = NULL, *id;
	struct lcall	*c;
	enum up_status	 st;
	char		 why[512];
	int		 rc;

	if ((rc = jstrict_parse(buf, n, &msg)) != 0 ||
	    !json_object_is_type(msg, json_type_object)) {
		json_object_put(msg);
		snprintf(why, sizeof(why), "sent %s", rc != 0 ? "something "
		    "that is not JSON" : "JSON that is not an object");
		link_lost(L, UP_PROTOCOL, why);
		return -1;
	}
	c = NULL;
	if (jrpcup_is_answer(msg)) {
		id = json_object_object_get(msg, "id");
		c = id == NULL && json_object_object_get_ex(msg, "error",
		    NULL) ? TAILQ_FIRST(&L->inflight) : link_call_of(L, id);
	}
	if (c == NULL) {
		json_object_put(msg);
		return 0;
	}
	TAILQ_REMOVE(&L->inflight, c, entry);
	st = jrpcup_answer(msg, &out, why, sizeof(why));
	if (c->ping && st == UP_ERROR)
		st = UP_OK;	/* any answer is the editor alive */
	lcall_tell(c, st, out, st == UP_OK ? NULL : "%s", why);
	json_object_put(out);
	json_object_put(msg);
	lcall_free(c);
	return 0;
}

/* Header lines up to the blank one: 1 when the body comes, 0 for more,
 * -1 closed. */
static int
link_lsp_header(struct link *L, struct evbuffer *in)
{
	char	*line;
	size_t	 len;
	int	 rc;

	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF)) != NULL) {
		rc = len == 0 ? 2 : jrpcup_content_length(line, &L->frame_len);
		free(line);
		if (rc == 2)
			break;
		if (rc != 0)
			L->have_len = rc == 1;
	}
	if (line == NULL) {
		if (evbuffer_get_length(in) <= JRPCUP_LINE_MAX)
			return 0;
		link_lost(L, UP_PROTOCOL, "sent a header line over 4 KiB");
		return -1;
	}
	if (!L->have_len) {
		link_lost(L, UP_PROTOCOL, "sent a message without a valid "
		    "Content-Length");
		return -1;
	}
	if (L->frame_len > JRPCUP_MAX) {
		link_lost(L, UP_TOO_LONG, "sent a message longer than 64 MiB");
		return -1;
	}
	L->in_body = 1;
	return 1;
}

/* The messages in in: -1 once the link is closed. */
static int
link_lsp_frames(struct link *L, struct evbuffer *in)
{
	unsigned char	*p;
	int		 rc;

	for (;;) {
		if (!L->in_body && (rc = link_lsp_header(L, in)) != 1)
			return rc;
		if (evbuffer_get_length(in) < L->frame_len)
			return 0;
		p = (unsigned char *)"";
		if (L->frame_len > 0 && (p = evbuffer_pullup(in,
		    (ev_ssize_t)L->frame_len)) == NULL)
			fatalx("evbuffer_pullup: out of memory");
		if (link_lsp_message(L, (char *)p, L->frame_len) == -1)
			return -1;
		evbuffer_drain(in, L->frame_len);
		L->in_body = L->have_len = 0;
		L->frame_len = 0;
	}
}

static void
link_read(struct bufferevent *bev, void *arg)
{
	struct link	*L = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);

	if (L->state == L_CONNECTING)
		return;		/* the connect's end reads it */
	if (L->state == L_WELCOME && link_welcome(L, in) != 1)
		return;
	if (L->state == L_OPEN && (L->dl == LD_UNITY ? link_frames(L, in) :
	    link_lsp_frames(L, in)) == 0)
		link_idle(L);
}

/* ---- calls ------------------------------------------------------------ */

/* c's time ran out behind an unanswered call: the editor was not asked
 * (a unity-hub call never was: it waited unwritten). */
static void
lcall_behind(struct lcall *c)
{
	struct link_answer	a;
	char			err[512];

	memset(&a, 0, sizeof(a));
	a.status = UP_TIMEOUT;
	a.sent = c->end != 0;
	a.behind = 1;
	a.seen_ago_ms = link_seen_ago(c->L);
	snprintf(err, sizeof(err), "%s: an earlier call was not answered in "
	    "time", c->L->to);
	a.err = err;
	c->told = 1;
	c->fn(c->arg, &a);
}

static void
lcall_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct lcall	*c = arg;
	struct link	*L = c->L;
	int64_t		 now = util_monotonic_ms();
	struct timeval	 tv;
	int64_t		 until;

	(void)fd;
	(void)ev;
	/* Written, a call waits for its answer until its deadline: open_by
	 * was its time to be written.  (Behind another on an open unity-hub
	 * link, it is not refused: it waits its turn until its deadline.) */
	until = c->end == 0 && c->open_by < c->deadline &&
	    !(L->dl == LD_HUB && L->state == L_OPEN) ? c->open_by :
	    c->deadline;
	if (now < until) {
		tv.tv_sec = (until - now) / 1000;
		tv.tv_usec = (until - now) % 1000 * 1000;
		evtimer_add(c->timer, &tv);
		return;
	}
	if (c->end == 0) {		/* never written */
		TAILQ_REMOVE(&L->waiting, c, entry);
		if (now < c->deadline)
			lcall_tell(c, UP_REFUSED, NULL, L->dl == LD_HUB ?
			    "the editor's plugin did not connect in time" :
			    "no connection and WELCOME line in time");
		else if (L->dl == LD_HUB && !TAILQ_EMPTY(&L->inflight))
			lcall_behind(c);
		else
			lcall_tell(c, UP_TIMEOUT, NULL, "did not answer in "
			    "time");
		lcall_free(c);
		/* A connect or a WELCOME that stalls is given up. */
		if (TAILQ_EMPTY(&L->waiting) && L->state != L_OPEN) {
			L->attempt++;
			link_close(L);
		}
		return;
	}
	/* In flight: told now; its answer stays its own when it comes. */
	if (c != TAILQ_FIRST(&L->inflight))
		lcall_behind(c);
	else
		lcall_tell(c, UP_TIMEOUT, NULL, "did not answer in time");
}

/* jsonrpc-lsp: the message of a call (ping: the method "ping"). */
static void
lcall_lsp_frame(struct lcall *c, const char *method, json_object *params)
{
	json_object	*req;
	const char	*s;
	size_t		 n;
	char		 hdr[64];
	int		 h;

	c->id = ++c->L->next_id;
	req = jrpcup_request(c->id, method != NULL ? method : "ping", params);
	s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	h = snprintf(hdr, sizeof(hdr), "Content-Length: %zu\r\n\r\n", n);
	c->len = (size_t)h + n;
	c->frame = xcalloc(1, c->len);
	memcpy(c->frame, hdr, (size_t)h);
	memcpy(c->frame + h, s, n);
	json_object_put(req);
}

/*
 * unity-hub: the server's execute (ping: the command "ping", which the
 * plugin's dispatcher answers pong); its timeout in whole seconds, as
 * the plugin reads it, at least 1.
 */
static void
lcall_hub_frame(struct lcall *c, const char *method, json_object *params,
    int64_t timeout_ms)
{
	json_object	*req = json_object_new_object();
	const char	*s;
	char		 id[32];
	size_t		 n;

	c->id = ++c->L->next_id;
	snprintf(id, sizeof(id), "cg-%lld", (long long)c->id);
	json_object_object_add(req, "type", json_object_new_string("execute"));
	json_object_object_add(req, "id", json_object_new_string(id));
	json_object_object_add(req, "name", json_object_new_string(
	    method != NULL ? method : "ping"));
	json_object_object_add(req, "params",
	    json_object_is_type(params, json_type_object) ?
	    json_object_get(params) : json_object_new_object());
	json_object_object_add(req, "timeout", json_object_new_double(
	    (double)(timeout_ms > 1000 ? (timeout_ms + 999) / 1000 : 1)));
	s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	c->len = n;
	c->frame = (unsigned char *)xstrdup(s);
	json_object_put(req);
}

/* The frame of a call (ping: the bytes "ping"). */
static void
lcall_frame(struct lcall *c, const char *method, json_object *params)
{
	json_object	*req = NULL;
	const char	*s = UMCP_PING;
	size_t		 n = 4;

	if (c->L->dl == LD_LSP) {
		lcall_lsp_frame(c, method, params);
		return;
	}
	if (c->L->dl == LD_HUB) {
		lcall_hub_frame(c, method, params, c->deadline -
		    util_monotonic_ms());
		return;
	}
	if (method != NULL) {
		req = umcp_request(method, params);
		s = json_object_to_json_string_length(req,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &n);
	}
	c->len = UMCP_HDR + n;
	c->frame = xcalloc(1, c->len);
	umcp_frame_hdr(n, c->frame);
	memcpy(c->frame + UMCP_HDR, s, n);
	json_object_put(req);
}

void
link_call(struct link *L, const char *method, json_object *params,
    int64_t open_ms, int64_t timeout_ms, link_fn fn, void *arg)
{
	struct lcall	*c = xcalloc(1, sizeof(*c));
	int64_t		 now = util_monotonic_ms(), first;
	struct timeval	 tv;

	c->L = L;
	c->fn = fn;
	c->arg = arg;
	c->ping = method == NULL;
	c->deadline = now + (timeout_ms > 0 ? timeout_ms : 0);
	c->open_by = now + (open_ms > 0 ? open_ms : 0);
	lcall_frame(c, method, params);
	if ((c->timer = evtimer_new(L->LS->base, lcall_timer_cb, c)) == NULL)
		fatalx("evtimer_new");
	first = (c->open_by < c->deadline ? c->open_by : c->deadline) - now;
	tv.tv_sec = first / 1000;
	tv.tv_usec = first % 1000 * 1000;
	evtimer_add(c->timer, &tv);
	L->calls++;
	evtimer_del(L->idle_ev);
	TAILQ_INSERT_TAIL(&L->waiting, c, entry);
	if (L->state == L_OPEN)
		link_flush(L);
	else
		link_connect(L);
}

int
link_connected(const struct link *L)
{
	return L->state == L_OPEN;
}

int
link_carries_workers(const struct link *L)
{
	return L->dl == LD_UNITY || L->dl == LD_HUB;
}

/* ---- unity-hub: a link whose connection the plugin makes ------------- */

void
link_attach(struct link *L, const struct link_port *port, void *arg)
{
	if (L->dl != LD_HUB)
		fatalx("link_attach: %s is no unity-hub link", L->to);
	if (L->port != NULL)
		link_detach(L, "superseded by a new registration");
	L->port = port;
	L->port_arg = arg;
	L->queued = L->drained = 0;
	link_opened(L);
}

void *
link_attached(const struct link *L)
{
	return L->port_arg;
}

void
link_detach(struct link *L, const char *why)
{
	struct lcall	*c;
	enum up_status	 st = UP_LOST;

	if (L->port == NULL)
		return;
	L->port = NULL;
	L->port_arg = NULL;
	if (L->state == L_OPEN)
		L->lost++;
	L->state = L_DOWN;
	/* What went to the editor is lost; what waits, waits for it. */
	while ((c = TAILQ_FIRST(&L->inflight)) != NULL) {
		TAILQ_REMOVE(&L->inflight, c, entry);
		lcall_tell(c, st, NULL, "%s before answering", why);
		lcall_free(c);
	}
}

/*
 * The call of L's in flight whose execute carried id[len] (its JSON
 * length: "cg-1\u0000x", "cg-01" or "cg- 1" is another id, one the
 * server would not know either), or NULL.
 */
static struct lcall *
link_hub_call(struct link *L, const char *id, size_t len)
{
	struct lcall	*c;
	char		 mine[32];
	int		 n;

	TAILQ_FOREACH(c, &L->inflight, entry) {
		n = snprintf(mine, sizeof(mine), "cg-%lld", (long long)c->id);
		if ((size_t)n == len && memcmp(mine, id, len) == 0)
			return c;
	}
	return NULL;
}

int
link_hub_answer(struct link *L, const char *id, size_t len,
    json_object *result)
{
	struct lcall	*c;
	json_object	*out = NULL;
	enum up_status	 st;
	char		 why[512];

	if (L->dl != LD_HUB || (c = link_hub_call(L, id, len)) == NULL)
		return -1;	/* no call of ours: the server's drop it too */
	TAILQ_REMOVE(&L->inflight, c, entry);
	st = umcp_envelope(result, &out, why, sizeof(why));
	lcall_tell(c, st, out, st == UP_OK ? NULL : "%s", why);
	json_object_put(out);
	lcall_free(c);
	link_flush(L);
	return 0;
}

/* ---- the links -------------------------------------------------------- */

struct links *
links_new(struct event_base *base)
{
	struct links	*LS = xcalloc(1, sizeof(*LS));

	LS->base = base;
	TAILQ_INIT(&LS->list);
	return LS;
}

void
links_free(struct links *LS)
{
	struct link	*L;

	if (LS == NULL)
		return;
	while ((L = TAILQ_FIRST(&LS->list)) != NULL) {
		TAILQ_REMOVE(&LS->list, L, entry);
		link_lost(L, UP_CANCELLED, "the broker stops");
		event_free(L->idle_ev);
		free(L->dialect);
		free(L->to);
		free(L);
	}
	free(LS);
}

struct link *
links_get(struct links *LS, const char *dialect, const char *to)
{
	struct link	*L;
	int		 dl;

	for (dl = 0; dialect != NULL && link_dialects[dl] != NULL; dl++)
		if (strcmp(dialect, link_dialects[dl]) == 0)
			break;
	if (dialect == NULL || link_dialects[dl] == NULL)
		return NULL;
	TAILQ_FOREACH(L, &LS->list, entry)
		if (strcmp(L->to, to) == 0 && strcmp(L->dialect, dialect) == 0)
			return L;
	if (LS->n >= LINKS_MAX) {
		log_warnx("editor link to %s: already %d bridges linked",
		    to, LINKS_MAX);
		return NULL;
	}
	LS->n++;
	L = xcalloc(1, sizeof(*L));
	L->LS = LS;
	L->dialect = xstrdup(dialect);
	L->dl = (enum link_dialect)dl;
	L->to = xstrdup(to);
	TAILQ_INIT(&L->waiting);
	TAILQ_INIT(&L->inflight);
	if ((L->idle_ev = evtimer_new(LS->base, link_idle_cb, L)) == NULL)
		fatalx("evtimer_new");
	TAILQ_INSERT_TAIL(&LS->list, L, entry);
	return L;
}

json_object *
links_json(const struct links *LS)
{
	json_object		*a = json_object_new_array(), *o;
	const struct link	*L;
	const struct lcall	*c;
	size_t			 n;

	TAILQ_FOREACH(L, &LS->list, entry) {
		n = 0;
		TAILQ_FOREACH(c, &L->inflight, entry)
			n++;
		o = json_object_new_object();
		json_object_object_add(o, "to", json_object_new_string(L->to));
		json_object_object_add(o, "dialect",
		    json_object_new_string(L->dialect));
		json_object_object_add(o, "connected",
		    json_object_new_boolean(L->state == L_OPEN));
		json_object_object_add(o, "calls",
		    json_object_new_int64((int64_t)L->calls));
		json_object_object_add(o, "in_flight",
		    json_object_new_int64((int64_t)n));
		json_object_object_add(o, "connects",
		    json_object_new_int64((int64_t)L->connects));
		json_object_object_add(o, "lost",
		    json_object_new_int64((int64_t)L->lost));
		json_object_array_add(a, o);
	}
	return a;
}
