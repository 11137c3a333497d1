/* SPDX-License-Identifier: ISC */
/* MCP over HTTP: sessions, and the event streams their messages go on. */
#include "config.h"

#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <json-c/json.h>

#include "log.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "sse.h"
#include "util.h"

static struct conn	*hs_conn(struct http_sess *);
static void		 hs_drain(struct conn *);
static void		 hs_resume(struct conn *);
static void		 hs_run(struct http_sess *);
static void		 hs_decide(struct http_stream *);
static void		 hs_start(struct http_stream *, int);
static void		 hs_push(struct http_stream *);
static void		 hs_detach(struct http_stream *);
static void		 hs_stream_free(struct http_stream *);
static void		 hs_closed(struct evhttp_connection *, void *);
static void		 hs_poll(evutil_socket_t, short, void *);
static void		 hs_sweep(evutil_socket_t, short, void *);
static void		 hs_reap_soon(struct http_sess *, int);
static int		 hs_busy(struct http_sess *, struct conn *);

/* What a session hears unasked: MCP's notifications, not cmdgate's own
 * (notifications/job, notifications/server/shutdown). */
static const char *hs_notes[] = {
	"notifications/progress", "notifications/message",
	"notifications/cancelled", "notifications/tools/list_changed",
	"notifications/subscriptions/acknowledged", "notifications/tasks",
	"notifications/tasks/status", NULL,
};

static struct http_stream *
hs_stream_new(struct http_sess *s, uint64_t num)
{
	struct http_stream	*st = xcalloc(1, sizeof(*st));

	st->s = s;
	st->num = num;
	TAILQ_INIT(&st->evs);
	return st;
}

struct http_sess *
httpsess_new(struct http *h, const char *peer)
{
	unsigned char	  r[HTTP_SID_BYTES];
	struct http_sess *s;
	struct conn	 *c;
	size_t		  i;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		log_warn("getrandom");
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	for (i = 0; i < sizeof(r); i++)
		snprintf(s->id + 2 * i, 3, "%02x", r[i]);
	explicit_bzero(r, sizeof(r));
	s->h = h;
	if ((s->out = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	c = server_conn_new(h->srv, NULL, s->out, 0, peer);
	c->authenticated = 1;	/* the bearer token is checked per request */
	c->drain = hs_drain;
	c->drain_arg = s;
	c->resume = hs_resume;
	s->conn_id = c->id;
	TAILQ_INIT(&s->streams);
	s->get = hs_stream_new(s, 0);
	s->next_num = 1;
	s->fresh = 1;
	s->active_ms = util_monotonic_ms();
	TAILQ_INSERT_TAIL(&h->sessions, s, entry);
	h->nsessions++;
	httpsess_sweep_start(h);
	log_debug("client %llu (%s): MCP over HTTP session %.8s... begins",
	    (unsigned long long)c->id, peer, s->id);
	return s;
}

/* Its connection, or NULL once that went or is closing (a limit, the
 * shutdown, a method that closes its connection). */
static struct conn *
hs_conn(struct http_sess *s)
{
	struct conn	*c = server_conn_find(s->h->srv, s->conn_id);

	return c != NULL && !c->dead && !c->closing ? c : NULL;
}

struct http_sess *
httpsess_find(struct http *h, const char *id)
{
	struct http_sess	*s;

	TAILQ_FOREACH(s, &h->sessions, entry)
		if (strcmp(s->id, id) == 0)
			break;
	if (s != NULL && hs_conn(s) == NULL) {
		httpsess_free(s);
		s = NULL;
	}
	return s;
}

void
httpsess_free(struct http_sess *s)
{
	struct server		*srv = s->h->srv;
	struct http_stream	*st;
	struct conn		*c;

	/* What it said this turn (the answers of a shutdown) goes out first. */
	if ((c = server_conn_find(srv, s->conn_id)) != NULL && !c->dead &&
	    c->flush_queued)
		conn_flush(c);
	while ((st = TAILQ_FIRST(&s->streams)) != NULL)
		hs_stream_free(st);
	hs_stream_free(s->get);
	/* Dead or not, it goes now: the reaper will not find it. */
	if ((c = server_conn_find(srv, s->conn_id)) != NULL) {
		c->drain_arg = NULL;
		c->resume = NULL;
		server_conn_free(srv, c);
	}
	if (s->reap != NULL)
		event_free(s->reap);
	evbuffer_free(s->out);
	TAILQ_REMOVE(&s->h->sessions, s, entry);
	s->h->nsessions--;
	free(s);
	server_may_exit(srv);
}

void
httpsess_headers(struct http_sess *s, struct evhttp_request *req)
{
	if (s->oneshot)
		return;		/* 2026-07-28: no sessions */
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Mcp-Session-Id", s->id);
}

/* Whether st's requests hold the id key and await their answer. */
static int
hs_holds(const struct http_stream *st, const char *key)
{
	size_t	i;

	if (!st->due || st->keys == NULL)
		return 0;
	for (i = 0; i < json_object_array_length(st->keys); i++)
		if (strcmp(json_object_get_string(
		    json_object_array_get_idx(st->keys, i)), key) == 0)
			return 1;
	return 0;
}

/*
 * The stream that awaits the answer of id key: the one whose body runs
 * when it does (ids may repeat across POSTs: null, an invalid message's),
 * else the oldest.
 */
static struct http_stream *
hs_find(struct http_sess *s, const char *key)
{
	struct http_stream	*st;

	if (s->cur != NULL && hs_holds(s->cur, key))
		return s->cur;
	TAILQ_FOREACH(st, &s->streams, entry)
		if (hs_holds(st, key))
			return st;
	return NULL;
}

/* One event on st (data[len] copied); an answer ends a POST's stream. */
static void
hs_add(struct http_stream *st, const char *data, size_t len, int answer)
{
	struct http_ev	*ev = xcalloc(1, sizeof(*ev));

	ev->seq = ++st->seq;
	ev->len = len;
	ev->data = xcalloc(1, len + 1);
	memcpy(ev->data, data, len);
	TAILQ_INSERT_TAIL(&st->evs, ev, entry);
	st->nevs++;
	st->bytes += len;
	if (answer) {
		st->due = 0;
		st->ended_ms = util_monotonic_ms();
	}
	/* The newest stays, however large: it may be the answer. */
	while ((st->nevs > HTTP_RING_EVENTS || st->bytes > HTTP_RING_BYTES) &&
	    st->nevs > 1) {
		ev = TAILQ_FIRST(&st->evs);
		TAILQ_REMOVE(&st->evs, ev, entry);
		st->nevs--;
		st->bytes -= ev->len;
		free(ev->data);
		free(ev);
	}
	hs_push(st);
}

/*
 * The id of an answer (an array: a batch's, its first id not null) as
 * JSON text: "null" for id null, which JSON-RPC answers like any other
 * (a deferred answer finds its POST by it too); NULL for none.
 */
static const char *
hs_answer_key(json_object *msg)
{
	json_object	*id = NULL, *m;
	size_t		 i;

	if (json_object_is_type(msg, json_type_array)) {
		for (i = 0; i < json_object_array_length(msg); i++) {
			m = json_object_array_get_idx(msg, i);
			if (json_object_object_get_ex(m, "id", &id) &&
			    id != NULL)
				break;
			id = NULL;
		}
		if (id == NULL && json_object_array_length(msg) > 0)
			return "null";
	} else if (!json_object_object_get_ex(msg, "id", &id))
		return NULL;
	return id == NULL ? "null" :
	    json_object_to_json_string_ext(id, JSON_C_TO_STRING_PLAIN);
}

/* Whether msg is a notification a session hears. */
static int
hs_heard(json_object *msg)
{
	json_object	*m;
	size_t		 i;

	if (!json_object_object_get_ex(msg, "method", &m))
		return 0;
	for (i = 0; hs_notes[i] != NULL; i++)
		if (strcmp(json_object_get_string(m), hs_notes[i]) == 0)
			return 1;
	return 0;
}

/* One record "REL\tMSG" of the connection: onto its stream. */
static void
hs_route(struct http_sess *s, char *line, size_t n)
{
	struct http_stream	*st = NULL;
	json_object		*msg;
	const char		*key;
	char			*tab = memchr(line, '\t', n);
	int			 answer;

	if (tab == NULL)
		return;
	*tab = '\0';
	if (tab + 1 == line + n && (st = hs_find(s, line)) != NULL) {
		st->due = 0;	/* dropped: nothing more is due */
		st->ended_ms = util_monotonic_ms();
		hs_push(st);
	}
	if (tab + 1 == line + n)
		return;
	if ((msg = json_tokener_parse(tab + 1)) == NULL)
		return;
	answer = json_object_is_type(msg, json_type_array) ||
	    !json_object_object_get_ex(msg, "method", NULL);
	if (answer) {
		key = hs_answer_key(msg);
		st = key != NULL ? hs_find(s, key) : s->cur;
	} else if (!hs_heard(msg)) {
		log_debug("MCP session %.8s...: %s not sent (not MCP)", s->id,
		    json_object_get_string(json_object_object_get(msg,
		    "method")));
		json_object_put(msg);
		return;
	} else if (strcmp(line, "-") != 0)
		st = hs_find(s, line);
	if (st == NULL || !st->due)
		hs_add(s->get, tab + 1, n - (size_t)(tab + 1 - line), 0);
	else
		hs_add(st, tab + 1, n - (size_t)(tab + 1 - line), answer);
	json_object_put(msg);
}

/* conn.h drain: the records the turn produced. */
static void
hs_drain(struct conn *c)
{
	struct http_sess	*s = c->drain_arg;
	char			*line;
	size_t			 n;

	while ((line = evbuffer_readln(c->out, &n, EVBUFFER_EOL_LF)) != NULL) {
		if (s != NULL)
			hs_route(s, line, n);
		free(line);
	}
}

static void
hs_resume(struct conn *c)
{
	if (c->drain_arg != NULL)
		hs_run(c->drain_arg);
}

/* Run the POSTs' bodies in order, while the connection reads: a
 * submit's answer, or a batch's, comes before the next request's. */
static void
hs_run(struct http_sess *s)
{
	struct http_stream	*st;
	struct conn		*c;

	if (s->running)
		return;
	s->running = 1;
	while ((c = hs_conn(s)) != NULL && c->holds == 0 && c->batch == NULL) {
		TAILQ_FOREACH(st, &s->streams, entry)
			if (st->body != NULL)
				break;
		if (st == NULL)
			break;
		s->active_ms = c->active_ms = util_monotonic_ms();
		s->cur = st;
		conn_message(c, st->body, st->bodylen);
		free(st->body);
		st->body = NULL;
		if (c->flush_queued && !c->dead)
			conn_flush(c);
		s->cur = NULL;
		hs_decide(st);
	}
	s->running = 0;
}

void
httpsess_post(struct http_sess *s, struct evhttp_request *req,
    json_object *keys, char *body, size_t len)
{
	struct http_stream	*st = hs_stream_new(s, s->next_num++);

	st->keys = keys;
	st->body = body;
	st->bodylen = len;
	st->due = 1;
	st->req = req;
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    hs_closed, st);
	TAILQ_INSERT_TAIL(&s->streams, st, entry);
	hs_run(s);
}

void
httpsess_notify(struct http_sess *s, const char *body, size_t len)
{
	struct conn	*c = hs_conn(s);

	if (c == NULL)
		return;
	s->active_ms = c->active_ms = util_monotonic_ms();
	conn_message(c, body, len);
	if (c->flush_queued && !c->dead)
		conn_flush(c);
}

/* Answered at once, with nothing else to say: one JSON reply. */
static void
hs_reply_json(struct http_stream *st)
{
	struct http_ev	*ev = TAILQ_FIRST(&st->evs);
	struct evbuffer	*b;
	json_object	*a = NULL;
	int		 failed;

	/* An initialize refused (bad params): no session, no place held. */
	failed = st->s->fresh && (a = json_tokener_parse(ev->data)) != NULL &&
	    json_object_object_get_ex(a, "error", NULL);
	json_object_put(a);
	st->s->fresh = 0;
	if (failed && hs_conn(st->s) != NULL)
		conn_kill(hs_conn(st->s));
	if ((b = evbuffer_new()) == NULL ||
	    evbuffer_add(b, ev->data, ev->len) == -1)
		fatalx("evbuffer_add: out of memory");
	evhttp_connection_set_closecb(evhttp_request_get_connection(st->req),
	    NULL, NULL);
	evhttp_add_header(evhttp_request_get_output_headers(st->req),
	    "Content-Type", "application/json");
	if (!failed)
		httpsess_headers(st->s, st->req);
	evhttp_send_reply(st->req, st->s->oneshot ?
	    httpmodern_status(ev->data) : HTTP_OK, NULL, b);
	evbuffer_free(b);
	st->req = NULL;
}

/* A body has run: its answer as JSON when it is all there, or events. */
static void
hs_decide(struct http_stream *st)
{
	/* Gone, or already resumed by a GET (Last-Event-ID). */
	if (st->req == NULL || st->sse)
		return;
	if (!st->due && st->nevs == 1 && st->seq == 1) {
		hs_reply_json(st);
		if (st->s->oneshot)
			hs_reap_soon(st->s, 0);
		hs_stream_free(st);
		return;
	}
	/* 2026-07-28: a stream of its own request's, not resumed. */
	hs_start(st, !st->s->oneshot);
}

/* The session of one 2026-07-28 request, once nothing holds it: gone. */
static void
hs_reap(evutil_socket_t fd, short ev, void *arg)
{
	struct http_sess	*s = arg;
	struct conn		*c = hs_conn(s);

	(void)fd;
	(void)ev;
	if (s->reap_force || c == NULL || !hs_busy(s, c))
		httpsess_free(s);
}

/* Look at s once this turn is over (force: free it whatever holds it). */
static void
hs_reap_soon(struct http_sess *s, int force)
{
	if (s->reap == NULL &&
	    (s->reap = evtimer_new(s->h->srv->base, hs_reap, s)) == NULL)
		fatalx("evtimer_new");
	s->reap_force |= force;
	event_active(s->reap, EV_TIMEOUT, 0);
}

/*
 * Begin an event stream on st->req: the priming event (unless it goes on
 * from an id its client had), then the rest.
 */
static void
hs_start(struct http_stream *st, int prime)
{
	const struct options	*opt = st->s->h->srv->opt;
	struct evkeyvalq	*oh = evhttp_request_get_output_headers(st->req);
	struct timeval		 tv = { (time_t)opt->http_poll, 0 };
	struct timeval		 wtv = { HTTP_WRITE_S, 0 };
	struct evbuffer		*b;
	char			 id[48], *ev;
	size_t			 n;

	evhttp_add_header(oh, "Content-Type", "text/event-stream");
	evhttp_add_header(oh, "Cache-Control", "no-cache");
	httpsess_headers(st->s, st->req);
	evhttp_send_reply_start(st->req, HTTP_OK, "OK");
	/* A stream may say nothing for long: no read timeout, only write. */
	bufferevent_set_timeouts(evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(st->req)), NULL, &wtv);
	st->sse = 1;
	st->cut = 0;
	/* The priming event: the id to resume from, and how soon. */
	snprintf(id, sizeof(id), "%" PRIu64 "-%" PRIu64, st->num, st->sent);
	if (prime) {
		if ((ev = sse_event(NULL, id, HTTP_RETRY_MS, "", 0, &n)) ==
		    NULL || (b = evbuffer_new()) == NULL ||
		    evbuffer_add(b, ev, n) == -1)
			fatalx("sse_event: out of memory");
		free(ev);
		evhttp_send_reply_chunk(st->req, b);
		evbuffer_free(b);
	}
	/* Only a POST's: a GET that resumes it gets the rest. */
	if (evhttp_request_get_command(st->req) == EVHTTP_REQ_POST &&
	    opt->http_poll > 0 && !st->s->oneshot) {
		if (st->poll == NULL && (st->poll = evtimer_new(
		    st->s->h->srv->base, hs_poll, st)) == NULL)
			fatalx("evtimer_new");
		evtimer_add(st->poll, &tv);
	}
	hs_push(st);
}

/*
 * A client that does not read its stream: close the connection (at the
 * loop's next callbacks, as if it failed; hs_closed follows).  The events
 * stay in the ring for a GET with Last-Event-ID.
 */
static void
hs_cut(struct http_stream *st, size_t unread)
{
	log_warnx("MCP session %.8s...: stream %" PRIu64 " closed: its "
	    "client left %zu bytes unread (over %d); its events wait for a "
	    "GET with Last-Event-ID", st->s->id, st->num, unread,
	    HTTP_UNREAD_MAX);
	st->cut = 1;
	bufferevent_trigger_event(evhttp_connection_get_bufferevent(
	    evhttp_request_get_connection(st->req)), BEV_EVENT_ERROR |
	    BEV_EVENT_WRITING, BEV_TRIG_DEFER_CALLBACKS);
}

/* Send the events req has not had; a POST's stream ends with its answer. */
static void
hs_push(struct http_stream *st)
{
	struct http_ev	*ev;
	struct evbuffer	*b;
	char		 id[48], *text;
	size_t		 n;

	if (st->req == NULL || !st->sse || st->cut)
		return;
	/* What it has not read yet: more only while that is little. */
	n = evbuffer_get_length(bufferevent_get_output(
	    evhttp_connection_get_bufferevent(evhttp_request_get_connection(
	    st->req))));
	if (st->sent < st->seq && n > HTTP_UNREAD_MAX) {
		hs_cut(st, n);
		return;
	}
	if ((b = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	TAILQ_FOREACH(ev, &st->evs, entry) {
		if (ev->seq <= st->sent)
			continue;
		snprintf(id, sizeof(id), "%" PRIu64 "-%" PRIu64, st->num,
		    ev->seq);
		if ((text = sse_event("message", id, 0, ev->data, ev->len,
		    &n)) == NULL || evbuffer_add(b, text, n) == -1)
			fatalx("sse_event: out of memory");
		free(text);
		st->sent = ev->seq;
	}
	if (evbuffer_get_length(b) > 0)
		evhttp_send_reply_chunk(st->req, b);
	evbuffer_free(b);
	if (st->num > 0 && !st->due && st->sent == st->seq)
		hs_detach(st);
}

/* End st's reply (events so far; an error before any) and forget it. */
static void
hs_detach(struct http_stream *st)
{
	struct timeval	tv = { HTTP_WRITE_S, 0 };

	if (st->req == NULL)
		return;
	evhttp_connection_set_closecb(evhttp_request_get_connection(st->req),
	    NULL, NULL);
	if (st->sse) {		/* kept alive: the next request is timed */
		bufferevent_set_timeouts(evhttp_connection_get_bufferevent(
		    evhttp_request_get_connection(st->req)), &tv, &tv);
		evhttp_send_reply_end(st->req);
	} else
		http_error_reply(st->req, HTTP_NOTFOUND, RPC_INVALID_REQUEST,
		    "unknown_session", "the session ended before this request "
		    "ran");
	st->req = NULL;
	if (st->poll != NULL)
		evtimer_del(st->poll);
	st->s->active_ms = util_monotonic_ms();
	if (st->s->oneshot)
		hs_reap_soon(st->s, 0);
}

/* The client closed st's connection: its events wait for a GET. */
static void
hs_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_stream	*st = arg;
	struct evhttp_request	*req = st->req;

	(void)evcon;
	st->req = NULL;
	st->cut = 0;
	if (st->poll != NULL)
		evtimer_del(st->poll);
	st->s->active_ms = util_monotonic_ms();
	/* Taken off its connection: ending it frees it (libevent). */
	if (req != NULL)
		evhttp_send_reply_end(req);
	/* 2026-07-28: closing the stream ends the request. */
	if (st->s->oneshot)
		hs_reap_soon(st->s, 1);
}

/* --http-poll: close a POST's stream; the client resumes with a GET. */
static void
hs_poll(evutil_socket_t fd, short ev, void *arg)
{
	struct http_stream	*st = arg;

	(void)fd;
	(void)ev;
	if (st->req != NULL && st->due) {
		log_debug("MCP session %.8s...: stream %" PRIu64 " closed "
		    "(--http-poll)", st->s->id, st->num);
		hs_detach(st);
	}
}

static void
hs_stream_free(struct http_stream *st)
{
	struct http_ev	*ev;

	hs_detach(st);
	while ((ev = TAILQ_FIRST(&st->evs)) != NULL) {
		TAILQ_REMOVE(&st->evs, ev, entry);
		free(ev->data);
		free(ev);
	}
	json_object_put(st->keys);
	free(st->body);
	if (st->poll != NULL)
		event_free(st->poll);
	if (st->num > 0)
		TAILQ_REMOVE(&st->s->streams, st, entry);
	free(st);
}

int
httpsess_get(struct http_sess *s, struct evhttp_request *req,
    const char *last)
{
	struct http_stream	*st = NULL;
	uint64_t		 num, seq = UINT64_MAX;
	int			 resumed;

	if (last != NULL && sse_id_parse(last, &num, &seq) == 0) {
		if (num == 0)
			st = s->get;
		else
			TAILQ_FOREACH(st, &s->streams, entry)
				if (st->num == num)
					break;
	}
	/* Unknown or gone: the standalone stream, from now on. */
	resumed = st != NULL;
	if (st == NULL || st == s->get) {
		if (s->get->req != NULL)
			return HTTP_S_CONFLICT;
		if (st == NULL)
			seq = UINT64_MAX;
		st = s->get;
	} else
		hs_detach(st);
	st->sent = seq < st->seq ? seq : st->seq;
	st->req = req;
	st->sse = 0;
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    hs_closed, st);
	s->active_ms = util_monotonic_ms();
	/* Resumed: no priming event, whose id its client had. */
	hs_start(st, !resumed);
	return 0;
}

/*
 * Whether s is in use: a request open or running, a stream attached,
 * editor flags held (their reloads would run once it went).
 */
static int
hs_busy(struct http_sess *s, struct conn *c)
{
	struct http_stream	*st;

	if (!TAILQ_EMPTY(&c->pending) || c->batch != NULL || c->holds > 0 ||
	    c->editor.tests_running || c->editor.compiling ||
	    c->editor.busy || s->get->req != NULL)
		return 1;
	TAILQ_FOREACH(st, &s->streams, entry)
		if (st->req != NULL || st->body != NULL)
			return 1;
	return 0;
}

/* Ended streams kept past HTTP_LINGER_MS go. */
static void
hs_sweep_streams(struct http_sess *s, int64_t now)
{
	struct http_stream	*st, *next;

	for (st = TAILQ_FIRST(&s->streams); st != NULL; st = next) {
		next = TAILQ_NEXT(st, entry);
		if (st->req == NULL && !st->due && st->body == NULL &&
		    now - st->ended_ms >= HTTP_LINGER_MS)
			hs_stream_free(st);
	}
}

static void
hs_sweep(evutil_socket_t fd, short ev, void *arg)
{
	struct http		*h = arg;
	const struct options	*opt = h->srv->opt;
	struct http_sess	*s, *next;
	struct conn		*c;
	int64_t			 now = util_monotonic_ms();

	(void)fd;
	(void)ev;
	for (s = TAILQ_FIRST(&h->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if ((c = hs_conn(s)) == NULL) {
			httpsess_free(s);
			continue;
		}
		hs_sweep_streams(s, now);
		if (s->oneshot && !hs_busy(s, c))
			httpsess_free(s);
		else if (hs_busy(s, c))
			s->active_ms = now;
		else if (opt->idle_timeout > 0 && now - s->active_ms >=
		    (int64_t)opt->idle_timeout * 1000) {
			log_info("client %llu (%s): MCP session %.8s...: no "
			    "request for %llu s (--idle-timeout), ended",
			    (unsigned long long)c->id, c->peer, s->id,
			    (unsigned long long)opt->idle_timeout);
			httpsess_free(s);
		}
	}
	httpsess_sweep_start(h);
}

void
httpsess_sweep_start(struct http *h)
{
	struct timeval	tv = { HTTP_SWEEP_MS / 1000, 0 };

	if (h->sweep == NULL &&
	    (h->sweep = evtimer_new(h->srv->base, hs_sweep, h)) == NULL)
		fatalx("evtimer_new");
	if (h->nsessions > 0 && !evtimer_pending(h->sweep, NULL))
		evtimer_add(h->sweep, &tv);
}
