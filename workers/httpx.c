/* SPDX-License-Identifier: ISC */
/*
 * One HTTP exchange of the mcp-http dialect: a POST of one JSON-RPC
 * message (or a DELETE) on a connection of its own, in an event base
 * made for it and freed after it, and the answer read as it comes:
 * application/json, or a text/event-stream whose events are parsed one
 * by one (src/common/sse.c) until our response.  The worker is otherwise a
 * blocking ppoll(2) program: libevent runs only inside httpx_request.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <json-c/json.h>

#include "httpx.h"
#include "jsonl.h"
#include "jstrict.h"
#include "sse.h"
#include "wire.h"
#include "wproc.h"

#define HX_ANSWER_MAX	(64 * 1024 * 1024)	/* longest answer */
#define HX_ERRBODY_MAX	(64 * 1024)	/* longest body of an HTTP error */
#define HX_HEADERS_MAX	(64 * 1024)

/* One POST (or DELETE) and its answer, in an event base of its own. */
struct hx_xchg {
	struct httpx_peer	*peer;
	struct event_base	*base;
	int64_t			 id;	/* the response awaited; 0: none */
	enum up_status		 st;
	int			 done;	/* st is final */
	int			 sent;	/* bytes went to the connection */
	int			 code;	/* the HTTP status, 0 before it */
	int			 sse;	/* the body is an event stream */
	enum evhttp_request_error reqerr;
	int			 has_reqerr;
	struct evbuffer		*body;	/* a JSON body, so far */
	struct sse		 rd;
	json_object		*answer;	/* our response */
	char			*err;
	size_t			 errlen;
};

static void	hx_finish(struct hx_xchg *, enum up_status, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* Set the exchange's outcome once (the first reason wins) and stop. */
static void
hx_finish(struct hx_xchg *x, enum up_status st, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (x->done)
		return;
	x->done = 1;
	x->st = st;
	if (fmt != NULL && x->errlen > 0) {
		n = snprintf(x->err, x->errlen, "%s: ", x->peer->to);
		if (n < 0 || (size_t)n >= x->errlen)
			n = 0;
		va_start(ap, fmt);
		vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	event_base_loopbreak(x->base);
}

/* Whether the HTTP status is 2xx. */
static int
hx_success(int code)
{
	return code >= 200 && code < 300;
}

/*
 * A JSON-RPC message of the answer: ours (or an error with a null id: a
 * server that could not read the request cannot name it) ends the
 * exchange; a notification goes to the peer's note callback; anything
 * else (a request from the server, another id) is skipped.
 */
static void
hx_message(struct hx_xchg *x, json_object *msg)
{
	if (json_object_is_type(msg, json_type_array)) {
		size_t	i, n = json_object_array_length(msg);

		for (i = 0; i < n && !x->done; i++)
			hx_message(x, json_object_array_get_idx(msg, i));
		return;
	}
	if (json_object_object_get_ex(msg, "method", NULL) &&
	    !json_object_object_get_ex(msg, "id", NULL) &&
	    x->peer->note != NULL)
		x->peer->note(x->peer->note_arg, msg);
	if (json_object_object_get_ex(msg, "method", NULL) ||
	    !jsonl_is_answer(msg, x->id))
		return;
	x->answer = json_object_get(msg);
	hx_finish(x, UP_OK, NULL);
}

/* Parse one answer (a body or an event's data) and look for ours. */
static void
hx_parse(struct hx_xchg *x, const char *s, size_t len)
{
	json_object	*msg;
	int		 rc;

	if ((rc = jstrict_parse(s, len, &msg)) != 0) {
		hx_finish(x, UP_PROTOCOL, "answered something that is not "
		    "JSON (%s)", jstrict_strerror(rc));
		return;
	}
	hx_message(x, msg);
	json_object_put(msg);
}

static int
hx_event(void *arg, const char *event, const char *id, const char *data,
    size_t len)
{
	struct hx_xchg	*x = arg;

	(void)id;
	if (strcmp(event, "message") == 0)
		hx_parse(x, data, len);
	return x->done;
}

/*
 * The status line and headers came: keep the session id, and choose how
 * to read the body.  0 goes on; -1 drops the connection.
 */
static int
hx_headers(struct evhttp_request *req, void *arg)
{
	struct hx_xchg	*x = arg;
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	const char	*ct, *sid;

	x->code = evhttp_request_get_response_code(req);
	if (!hx_success(x->code))
		return 0;	/* the body may say why: read it */
	sid = evhttp_find_header(h, "Mcp-Session-Id");
	if (sid != NULL && x->peer->session[0] == '\0') {
		const char	*p;

		for (p = sid; *p > 0x20 && *p < 0x7f; p++)
			;
		if (*p != '\0' || p == sid || p - sid > HX_SESSION_MAX) {
			hx_finish(x, UP_PROTOCOL, "sent an Mcp-Session-Id "
			    "that is not 1 to %d visible characters",
			    HX_SESSION_MAX);
			return -1;
		}
		snprintf(x->peer->session, sizeof(x->peer->session), "%s", sid);
	}
	if (x->id == 0) {
		/* A notification (202) or DELETE: the status is all of it. */
		hx_finish(x, UP_OK, NULL);
		return 0;
	}
	ct = evhttp_find_header(h, "Content-Type");
	if (ct != NULL && strncasecmp(ct, "text/event-stream", 17) == 0)
		x->sse = 1;
	else if (x->code != 202 && (ct == NULL ||
	    strncasecmp(ct, "application/json", 16) != 0)) {
		hx_finish(x, UP_PROTOCOL, "answered Content-Type %s, not "
		    "application/json or text/event-stream",
		    ct != NULL ? ct : "(none)");
		return -1;
	}
	return 0;
}

/* Some of the body came (libevent drains it after this returns). */
static void
hx_chunk(struct evhttp_request *req, void *arg)
{
	struct hx_xchg	*x = arg;
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 n = evbuffer_get_length(in);
	size_t		 max = hx_success(x->code) ? HX_ANSWER_MAX :
			    HX_ERRBODY_MAX;
	int		 rc;

	if (x->done)
		return;
	if (x->sse && hx_success(x->code)) {
		rc = sse_feed(&x->rd, (const char *)evbuffer_pullup(in, -1), n);
		if (rc == SSE_TOO_LONG)
			hx_finish(x, UP_TOO_LONG, "sent an event longer than "
			    "64 MiB");
		else if (rc == SSE_NOMEM)
			hx_finish(x, UP_PROTOCOL, "out of memory");
		return;
	}
	if (evbuffer_get_length(x->body) + n > max) {
		if (hx_success(x->code))
			hx_finish(x, UP_TOO_LONG, "sent an answer longer "
			    "than 64 MiB");
		return;		/* an error's body: its start is enough */
	}
	evbuffer_add_buffer(x->body, in);
}

/* Why a request ended without a response, for hx_done. */
static void
hx_reqerr(enum evhttp_request_error e, void *arg)
{
	struct hx_xchg	*x = arg;

	x->reqerr = e;
	x->has_reqerr = 1;
}

/* The connection failed before a status line came. */
static void
hx_failed(struct hx_xchg *x)
{
	if (!x->sent) {
		hx_finish(x, UP_REFUSED, "cannot connect (connection "
		    "refused or unreachable)");
		return;
	}
	if (x->has_reqerr && x->reqerr == EVREQ_HTTP_INVALID_HEADER)
		hx_finish(x, UP_PROTOCOL, "answered with a status line or "
		    "headers that are not HTTP/1.x");
	else if (x->has_reqerr && x->reqerr == EVREQ_HTTP_DATA_TOO_LONG)
		hx_finish(x, UP_PROTOCOL, "answered with headers longer "
		    "than 64 KiB");
	else if (x->has_reqerr && x->reqerr == EVREQ_HTTP_TIMEOUT)
		hx_finish(x, UP_TIMEOUT, "did not answer in time");
	else
		hx_finish(x, UP_LOST, "closed the connection before "
		    "answering");
}

/* An HTTP error status: the JSON-RPC error in its body, if any. */
static void
hx_http_error(struct hx_xchg *x, struct evhttp_request *req)
{
	json_object	*msg = NULL, *e, *m;
	const char	*reason = evhttp_request_get_response_code_line(req);

	if (jstrict_parse((const char *)evbuffer_pullup(x->body, -1),
	    evbuffer_get_length(x->body), &msg) == 0 &&
	    json_object_object_get_ex(msg, "error", &e) &&
	    json_object_is_type(e, json_type_object)) {
		x->answer = json_object_get(msg);
		m = json_object_object_get(e, "message");
		hx_finish(x, UP_ERROR, "HTTP %d %s: %s", x->code,
		    reason != NULL ? reason : "", m != NULL ?
		    json_object_get_string(m) : "(no message)");
	} else
		hx_finish(x, UP_PROTOCOL, "HTTP %d %s", x->code,
		    reason != NULL ? reason : "");
	json_object_put(msg);
}

/* The request is over: whole answer, error status, or failure. */
static void
hx_done(struct evhttp_request *req, void *arg)
{
	struct hx_xchg	*x = arg;

	if (x->done)
		return;
	if (req == NULL || evhttp_request_get_response_code(req) == 0)
		hx_failed(x);
	else if (!hx_success(x->code))
		hx_http_error(x, req);
	else if (x->sse)
		hx_finish(x, UP_LOST, "ended the event stream before "
		    "answering");
	else if (evbuffer_get_length(x->body) == 0)
		hx_finish(x, UP_PROTOCOL, "answered HTTP %d with no "
		    "response", x->code);
	else {
		hx_parse(x, (const char *)evbuffer_pullup(x->body, -1),
		    evbuffer_get_length(x->body));
		if (!x->done)
			hx_finish(x, UP_PROTOCOL, "answered without a "
			    "response to request %lld", (long long)x->id);
	}
}

/*
 * Bytes went into the connection's output: from here on the request may
 * have reached the server, so a failure is UP_LOST, never UP_REFUSED.
 * (evhttp writes the request only once connected.)
 */
static void
hx_output(struct evbuffer *b, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct hx_xchg	*x = arg;

	(void)b;
	if (info->n_added > 0)
		x->sent = 1;
}

static void
hx_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct hx_xchg	*x = arg;

	(void)fd;
	(void)what;
	hx_finish(x, UP_TIMEOUT, "did not answer in time");
}

static void
hx_on_term(evutil_socket_t fd, short what, void *arg)
{
	struct hx_xchg	*x = arg;

	(void)fd;
	(void)what;
	got_term = 1;
	hx_finish(x, UP_CANCELLED, "call cancelled");
}

/* The event pipe (fd 1) woke us: is the broker's end closed? */
static void
hx_on_pipe(evutil_socket_t fd, short what, void *arg)
{
	struct hx_xchg	*x = arg;
	struct pollfd	 p = { fd, 0, 0 };

	(void)what;
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP))) {
		got_term = 1;
		hx_finish(x, UP_CANCELLED, "call cancelled: the broker is "
		    "gone");
	}
}

/*
 * Whether fd is a pipe or a socket, as the event pipe is under the
 * broker: epoll refuses files and /dev/null, and a terminal would read
 * as readable.
 */
static int
hx_is_pipe(int fd)
{
	struct stat	sb;

	return fstat(fd, &sb) == 0 && (S_ISFIFO(sb.st_mode) ||
	    S_ISSOCK(sb.st_mode));
}

/* The request's headers: 0, or -1. */
static int
hx_req_headers(struct httpx_peer *p, struct evhttp_request *req, int body)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	if (evhttp_add_header(h, "Host", p->hosthdr) == -1 ||
	    evhttp_add_header(h, "Accept",
	    "application/json, text/event-stream") == -1 ||
	    (body && evhttp_add_header(h, "Content-Type",
	    "application/json") == -1))
		return -1;
	if (p->session[0] != '\0' &&
	    evhttp_add_header(h, "Mcp-Session-Id", p->session) == -1)
		return -1;
	if (p->version[0] != '\0' &&
	    evhttp_add_header(h, "MCP-Protocol-Version", p->version) == -1)
		return -1;
	return 0;
}

/*
 * Run the exchange's base until it is over.  watch: SIGTERM and the
 * broker's end of the event pipe end it too (SIGTERM is unblocked only
 * while the base runs, under the session's waitmask).
 */
static void
hx_run(struct hx_xchg *x, int64_t deadline, int watch)
{
	struct event	*tmo, *term = NULL, *pipe = NULL;
	struct timeval	 tv;
	sigset_t	 old;
	int64_t		 left = deadline - wproc_now_ms();

	tv.tv_sec = left > 0 ? left / 1000 : 0;
	tv.tv_usec = left > 0 ? (left % 1000) * 1000 : 0;
	if ((tmo = evtimer_new(x->base, hx_on_deadline, x)) == NULL ||
	    evtimer_add(tmo, &tv) == -1) {
		hx_finish(x, UP_PROTOCOL, "cannot set a timer");
		goto out;
	}
	if (watch) {
		if ((term = evsignal_new(x->base, SIGTERM, hx_on_term,
		    x)) == NULL || evsignal_add(term, NULL) == -1) {
			hx_finish(x, UP_PROTOCOL, "cannot watch SIGTERM");
			goto out;
		}
		if (hx_is_pipe(WIRE_EVENTS_FD) && (pipe = event_new(x->base,
		    WIRE_EVENTS_FD, EV_READ, hx_on_pipe, x)) != NULL)
			event_add(pipe, NULL);
		sigprocmask(SIG_SETMASK, x->peer->waitmask, &old);
	}
	if (event_base_dispatch(x->base) == -1)
		hx_finish(x, UP_PROTOCOL, "the event loop failed");
	if (watch) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* A SIGTERM libevent caught after the loop ended: take it. */
		event_base_loop(x->base, EVLOOP_NONBLOCK);
	}
out:
	if (pipe != NULL)
		event_free(pipe);
	if (term != NULL)
		event_free(term);
	if (tmo != NULL)
		event_free(tmo);
}

/* Connection and request of one exchange, its callbacks set: 0, or -1. */
static int
hx_setup(struct hx_xchg *x, struct evhttp_connection **conn,
    struct evhttp_request **req, int64_t deadline)
{
	struct httpx_peer	*p = x->peer;
	struct timeval	 tv;
	int64_t		 left = deadline - wproc_now_ms() + 1000;

	if ((x->base = event_base_new()) == NULL ||
	    (x->body = evbuffer_new()) == NULL ||
	    (*conn = evhttp_connection_base_new(x->base, NULL, p->host,
	    (unsigned short)p->port)) == NULL ||
	    (*req = evhttp_request_new(hx_done, x)) == NULL)
		return -1;
	sse_init(&x->rd, HX_ANSWER_MAX, hx_event, x);
	evhttp_connection_set_max_headers_size(*conn, HX_HEADERS_MAX);
	/* evhttp's own idle timeout (50 s) must not come before ours. */
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	evhttp_connection_set_timeout_tv(*conn, &tv);
	evbuffer_add_cb(bufferevent_get_output(
	    evhttp_connection_get_bufferevent(*conn)), hx_output, x);
	evhttp_request_set_header_cb(*req, hx_headers);
	evhttp_request_set_chunked_cb(*req, hx_chunk);
	evhttp_request_set_error_cb(*req, hx_reqerr);
	return 0;
}

enum up_status
httpx_request(struct httpx_peer *p, enum evhttp_cmd_type cmd,
    json_object *msg, int64_t id, int64_t deadline, int watch,
    json_object **answer, char *err, size_t errlen)
{
	struct hx_xchg		 x;
	struct evhttp_connection *conn = NULL;
	struct evhttp_request	*req = NULL;
	const char		*s;
	size_t			 n;

	memset(&x, 0, sizeof(x));
	x.peer = p;
	x.id = id;
	x.err = err;
	x.errlen = errlen;
	*answer = NULL;
	p->status = 0;
	if (watch && got_term) {
		snprintf(err, errlen, "%s: call cancelled", p->to);
		return UP_CANCELLED;
	}
	if (deadline <= wproc_now_ms()) {
		snprintf(err, errlen, "%s: did not answer in time", p->to);
		return UP_TIMEOUT;
	}
	if (hx_setup(&x, &conn, &req, deadline) == -1 ||
	    hx_req_headers(p, req, msg != NULL) == -1 ||
	    (msg != NULL && (s = json_object_to_json_string_length(msg,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	    &n)) != NULL && evbuffer_add(evhttp_request_get_output_buffer(req),
	    s, n) == -1)) {
		if (req != NULL)
			evhttp_request_free(req);
		snprintf(err, errlen, "%s: cannot make an HTTP request: out "
		    "of memory", p->to);
		x.st = UP_PROTOCOL;
	} else if (evhttp_make_request(conn, req, cmd, p->target) == -1)
		/* libevent gave req up or freed it already; not ours. */
		hx_failed(&x);
	else
		hx_run(&x, deadline, watch);
	if (conn != NULL)
		evhttp_connection_free(conn);	/* and req, if unfinished */
	sse_free(&x.rd);
	if (x.body != NULL)
		evbuffer_free(x.body);
	if (x.base != NULL)
		event_base_free(x.base);
	*answer = x.answer;
	p->status = x.code;
	return x.st;
}

