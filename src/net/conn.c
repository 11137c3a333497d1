/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "face.h"
#include "jstrict.h"
#include "log.h"
#include "mcpver.h"
#include "net.h"
#include "options.h"
#include "util.h"

/*
 * The answers of one batch, sent once every request has one.  A batch is
 * answered CONN_BATCH_STEP requests per loop turn, so that other clients
 * are served between its parts; its connection reads nothing meanwhile.
 */
struct conn_batch {
	struct conn	*conn;
	json_object	*responses;
	int		 waiting;	/* deferred answers still due, + 1 while
					   requests remain to be answered */
	json_object	*msg;		/* the requests; NULL once all ran */
	size_t		 next;		/* the next request of msg to run */
	struct event	*ev;		/* runs the next part, next turn */
};

static json_object	*conn_call(struct conn *, json_object *,
			    struct conn_batch *);
static void		 conn_batch_start(struct conn *, json_object *);
static void		 conn_batch_step(struct conn_batch *);
static void		 conn_batch_next(evutil_socket_t, short, void *);
static void		 conn_batch_end(struct conn_batch *);
static void		 conn_batch_done(struct conn_batch *);
static void		 conn_cancel_all(struct conn *);
static void		 conn_face_message(struct conn *, const char *,
			    size_t);

struct conn *
conn_new(struct conn_shared *sh, struct bufferevent *bev, struct evbuffer *out,
    int is_unix, const char *peer)
{
	struct conn	*c = xcalloc(1, sizeof(*c));

	c->sh = sh;
	c->bev = bev;
	if (bev != NULL) {
		if ((c->out = evbuffer_new()) == NULL)
			fatalx("evbuffer_new");
		c->sock = bufferevent_get_output(bev);
	} else
		c->out = out;
	c->is_unix = is_unix;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->since_ms = c->active_ms = util_monotonic_ms();
	c->log_level = CONN_LOG_DEFAULT;
	frame_init(&c->fr, sh->opt->max_message);
	TAILQ_INIT(&c->pending);
	return c;
}

void
conn_listen_tools(struct conn *c, json_object *id, int on)
{
	json_object	*ids = c->listen_tools;
	size_t		 i;

	if (on) {
		if (ids == NULL)
			ids = c->listen_tools = json_object_new_array();
		json_object_array_add(ids, json_object_get(id));
		return;
	}
	for (i = 0; ids != NULL && i < json_object_array_length(ids); i++)
		if (json_object_equal(json_object_array_get_idx(ids, i), id)) {
			json_object_array_del_idx(ids, i, 1);
			return;
		}
}

void
conn_free(struct conn *c)
{
	if (face_ops[c->face].closed != NULL)
		face_ops[c->face].closed(c);
	conn_cancel_all(c);
	c->sh->inbuf_total -= c->inbuf;
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->flush_queued)
		TAILQ_REMOVE(&c->sh->flushq, c, flush_entry);
	if (c->sock != NULL)
		evbuffer_free(c->out);
	if (c->held != NULL)
		evbuffer_free(c->held);
	json_object_put(c->listen_tools);
	free(c->name);
	free(c);
}

int
conn_needs_auth(const struct conn *c)
{
	return c->needs_token && !c->authenticated;
}

int
conn_hears(const struct conn *c)
{
	int	notes = face_ops[c->face].notes;

	return notes == FACE_NOTES_ALL ||
	    (notes == FACE_NOTES_NAMED && c->name != NULL);
}

int
conn_busy(const struct conn *c)
{
	return !TAILQ_EMPTY(&c->pending) || c->batch != NULL ||
	    c->face_waits > 0 || c->holds > 0 || c->session ||
	    c->editor.tests_running || c->editor.compiling || c->editor.busy;
}

void
conn_kill(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	c->closing = 1;
	if (c->sh->reaper != NULL)
		event_active(c->sh->reaper, EV_TIMEOUT, 0);
}

/*
 * A client that does not read its answers is dropped once its unread
 * output passes the bound, rather than growing the broker without end.
 */
static size_t
conn_out_max(const struct conn *c)
{
	size_t	m = 4 * c->fr.max;

	return m > CONN_OUT_MAX ? m : CONN_OUT_MAX;
}

size_t
conn_unsent(const struct conn *c)
{
	return evbuffer_get_length(c->out) +
	    (c->sock != NULL ? evbuffer_get_length(c->sock) : 0);
}

/*
 * Answers are written once per loop turn, after everything the turn
 * produced: a pipelined client gets one write for many answers, and a
 * lone request is answered without waiting for the socket to be polled
 * for writing first.
 */
static void
conn_queue_flush(struct conn *c)
{
	if ((c->sock == NULL && c->drain == NULL) || c->flush_queued ||
	    c->dead)
		return;
	c->flush_queued = 1;
	TAILQ_INSERT_TAIL(&c->sh->flushq, c, flush_entry);
	if (c->sh->flusher != NULL)
		event_active(c->sh->flusher, EV_TIMEOUT, 0);
}

/* Out of the flush queue: write what the socket takes, queue the rest. */
void
conn_flush(struct conn *c)
{
	TAILQ_REMOVE(&c->sh->flushq, c, flush_entry);
	c->flush_queued = 0;
	if (c->dead || evbuffer_get_length(c->out) == 0)
		return;
	if (c->drain != NULL) {
		c->drain(c);
		return;
	}
	/* An error is the bufferevent's to see when it writes the rest. */
	if (evbuffer_get_length(c->sock) == 0)
		(void)evbuffer_write(c->out, bufferevent_getfd(c->bev));
	if (evbuffer_get_length(c->out) > 0)
		evbuffer_add_buffer(c->sock, c->out);
}

void
conn_send(struct conn *c, json_object *msg)
{
	conn_send_rel(c, msg, NULL);
}

/* A routed connection's record: "REL\tMSG\n" (conn.h, drain). */
static void
conn_route(struct conn *c, json_object *rel, const char *s, size_t len)
{
	struct evbuffer	*b = c->out;
	const char	*r = rel == NULL ? "-" : json_object_to_json_string_ext(
			    rel, JSON_C_TO_STRING_PLAIN);

	if (c->sh->hold_output && c->held == NULL &&
	    (c->held = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	if (c->sh->hold_output)
		b = c->held;
	if (evbuffer_add_printf(b, "%s\t", r) == -1 ||
	    evbuffer_add(b, s, len) == -1 || evbuffer_add(b, "\n", 1) == -1)
		fatalx("evbuffer_add: out of memory");
	if (b == c->out)
		conn_queue_flush(c);
}

void
conn_send_rel(struct conn *c, json_object *msg, json_object *rel)
{
	const char	*s;
	size_t		 len;

	if (c->dead)
		return;
	s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (c->drain != NULL)
		conn_route(c, rel, s, len);
	else
		conn_send_raw(c, s, len);
}

void
conn_send_raw(struct conn *c, const char *s, size_t len)
{
	if (c->dead)
		return;
	if (c->drain != NULL) {
		conn_route(c, NULL, s, len);
		return;
	}
	/* With --sync group, nothing leaves before the changes are synced. */
	if (c->sh->hold_output) {
		if (c->held == NULL && (c->held = evbuffer_new()) == NULL)
			fatalx("evbuffer_new");
		if (frame_write(&c->fr, c->held, s, len) == -1)
			fatalx("evbuffer_add: out of memory");
		return;
	}
	if (frame_write(&c->fr, c->out, s, len) == -1)
		fatalx("evbuffer_add: out of memory");
	if (conn_unsent(c) > conn_out_max(c)) {
		log_warnx("client %llu (%s): %zu bytes unread, dropped",
		    (unsigned long long)c->id, c->peer, conn_unsent(c));
		conn_kill(c);
		return;
	}
	conn_queue_flush(c);
}

void
conn_release(struct conn *c)
{
	if (c->held == NULL || evbuffer_get_length(c->held) == 0)
		return;
	evbuffer_add_buffer(c->out, c->held);
	if (conn_unsent(c) > conn_out_max(c))
		conn_kill(c);
	else
		conn_queue_flush(c);
}

void
conn_fail(struct conn *c, int code, const char *type, const char *reason)
{
	struct timeval	 tv = { CONN_FAIL_FLUSH_S, 0 };
	json_object	*resp;

	if (face_ops[c->face].fail != NULL)
		face_ops[c->face].fail(c, code, type, reason);
	else {
		resp = rpc_error_response(NULL, code, type, NULL, reason);
		conn_send(c, resp);
		json_object_put(resp);
	}
	c->closing = 1;
	/* Dropped if it does not read the error in time. */
	if (c->timer != NULL)
		evtimer_add(c->timer, &tv);
}

void
conn_hold(struct conn *c)
{
	c->holds++;
}

void
conn_unhold(struct conn *c)
{
	if (--c->holds == 0 && c->resume != NULL)
		c->resume(c);
}

void
conn_input(struct conn *c, struct evbuffer *in)
{
	enum frame_status	 st;
	char			*msg, reason[128];
	size_t			 len;

	/*
	 * A submit's answer comes after its commit, and a batch's after its
	 * last request: both before the next request's.
	 */
	while (!c->closing && c->holds == 0 && c->batch == NULL) {
		st = frame_next(&c->fr, in, &msg, &len);
		switch (st) {
		case FRAME_MORE:
			return;
		case FRAME_MSG:
			c->active_ms = util_monotonic_ms();
			conn_message(c, msg, len);
			free(msg);
			break;
		case FRAME_TOO_LARGE:
			snprintf(reason, sizeof(reason), "a message may hold "
			    "at most %zu bytes (%s)", c->fr.max,
			    c->fr.mode == FRAME_UNITY &&
			    c->fr.max == FRAME_UNITY_MAX ?
			    "MCP for Unity's limit" : "--max-message");
			conn_fail(c, RPC_INVALID_REQUEST, "message_too_large",
			    reason);
			log_info("client %llu (%s): message too large, closed",
			    (unsigned long long)c->id, c->peer);
			return;
		case FRAME_BAD_HEADER:
			conn_fail(c, RPC_INVALID_REQUEST, "invalid_request",
			    c->fr.mode == FRAME_UNITY ? "a frame of length 0 "
			    "is refused, as MCP for Unity's bridge refuses it" :
			    "a frame needs a \"Content-Length: N\" header "
			    "with a decimal N, then an empty line");
			log_info("client %llu (%s): bad frame header, closed",
			    (unsigned long long)c->id, c->peer);
			return;
		}
	}
}

/* ---- JSON-RPC: requests, batches, deferred answers ----------------- */

/* Whether c may not leave one more answer outstanding (err filled). */
static int
conn_waits_full(struct conn *c, struct rpc_error *err)
{
	const struct options	*opt = c->sh->opt;

	if (c->npending >= opt->max_waits) {
		rpc_fail(err, RPC_QUEUE_FULL, "too_many_waits", "this "
		    "connection already waits for %zu answers (--max-waits "
		    "%llu): take some of them first", c->npending,
		    (unsigned long long)opt->max_waits);
		return 1;
	}
	if (c->sh->npending >= opt->max_waits_total) {
		rpc_fail(err, RPC_QUEUE_FULL, "too_many_waits", "the broker "
		    "already holds %zu answers for its clients "
		    "(--max-waits-total %llu): try again later",
		    c->sh->npending, (unsigned long long)opt->max_waits_total);
		return 1;
	}
	return 0;
}

/* Run one request; the response, or NULL when none is due now. */
static json_object *
conn_call(struct conn *c, json_object *msg, struct conn_batch *batch)
{
	const struct rpc_method	*m;
	struct rpc_req		 req;
	struct rpc_error	 err;
	json_object		*params, *result = NULL, *resp;
	enum rpc_status		 st;

	memset(&err, 0, sizeof(err));
	memset(&req, 0, sizeof(req));
	req.conn = c;
	req.batch = batch;
	if (rpc_check(msg, &req.id, &req.method, &req.notification,
	    &err) == -1) {
		req.notification = 0;
		return rpc_error_response(req.id, err.code, err.type,
		    req.method, err.reason);
	}
	if (rpc_check_params(msg, &params, &err) == -1)
		return rpc_answer(&req, RPC_ERROR, NULL, &err);
	m = rpc_lookup(req.method);
	if (conn_needs_auth(c) && (m == NULL || !(m->flags & RPC_NOAUTH))) {
		st = rpc_fail(&err, RPC_UNAUTHORIZED, "unauthorized",
		    "this broker requires a token%s: call authenticate "
		    "{\"token\": ...} first", c->sh->opt->peer_auth ?
		    " (the peer check, --peer-auth, did not let this "
		    "connection's user in)" : "");
		return rpc_answer(&req, st, NULL, &err);
	}
	if ((req.modern = rpc_mcp_envelope(params, &err)) == -1) {
		req.modern = 0;
		return rpc_answer(&req, RPC_ERROR, NULL, &err);
	}
	if (m != NULL && req.modern && (m->flags & RPC_LEGACY))
		m = NULL;	/* gone in MCP 2026-07-28 */
	if (m == NULL) {
		st = rpc_fail(&err, RPC_METHOD_NOT_FOUND, "method_not_found",
		    "no method '%s'%s; see cmdgate-protocol(7)", req.method,
		    req.modern ? " in MCP " MCP_VERSION_2026 : "");
		return rpc_answer(&req, st, NULL, &err);
	}
	if ((m->flags & RPC_WAITS) && conn_waits_full(c, &err))
		return rpc_answer(&req, RPC_ERROR, NULL, &err);
	if (params == NULL)
		params = json_object_new_object();
	else
		json_object_get(params);
	st = m->handler(&req, params, &result, &err);
	json_object_put(params);
	if (st == RPC_OK && (m->flags & RPC_SESSION))
		c->session = 1;
	if (st == RPC_DEFERRED)
		return NULL;
	resp = rpc_answer(&req, st, result, &err);
	free(err.command);
	return resp;
}

/* A message on a face's listener: the face's to answer. */
static void
conn_face_message(struct conn *c, const char *buf, size_t len)
{
	char	reason[128];

	if (face_ops[c->face].message != NULL) {
		face_ops[c->face].message(c, buf, len);
		return;
	}
	snprintf(reason, sizeof(reason), "this broker does not serve the "
	    "%s face", face_name(c->face));
	conn_fail(c, RPC_METHOD_NOT_FOUND, "method_not_found", reason);
	log_warnx("client %llu (%s): %s, closed", (unsigned long long)c->id,
	    c->peer, reason);
}

void
conn_message(struct conn *c, const char *buf, size_t len)
{
	json_object	*msg, *resp;
	char		 reason[128];
	int		 rc;

	if (c->face != FACE_CMDGATE) {
		conn_face_message(c, buf, len);
		return;
	}
	if ((rc = jstrict_parse(buf, len, &msg)) != 0) {
		snprintf(reason, sizeof(reason), "not valid JSON (RFC 8259, "
		    "UTF-8): %s", jstrict_strerror(rc));
		resp = rpc_error_response(NULL, RPC_PARSE_ERROR, "parse_error",
		    NULL, reason);
		conn_send(c, resp);
		json_object_put(resp);
		return;
	}
	/* JSON null (msg NULL) and other non-arrays: one request. */
	if (!json_object_is_type(msg, json_type_array)) {
		if ((resp = conn_call(c, msg, NULL)) != NULL)
			conn_send(c, resp);
		json_object_put(resp);
		json_object_put(msg);
		return;
	}
	conn_batch_start(c, msg);
}

/* A batch (msg, taken): refuse it whole, or answer its first part. */
static void
conn_batch_start(struct conn *c, json_object *msg)
{
	struct conn_batch	*b;
	json_object		*resp;
	size_t			 n = json_object_array_length(msg);
	uint64_t		 max = c->sh->opt->max_rpc_batch;
	char			 reason[128];

	if (n == 0 || n > max) {
		if (n == 0)
			snprintf(reason, sizeof(reason), "an empty batch "
			    "holds no request");
		else
			snprintf(reason, sizeof(reason), "a batch may hold "
			    "at most %llu requests (--max-rpc-batch); this "
			    "one holds %zu", (unsigned long long)max, n);
		resp = rpc_error_response(NULL, RPC_INVALID_REQUEST,
		    "invalid_request", NULL, reason);
		conn_send(c, resp);
		json_object_put(resp);
		json_object_put(msg);
		return;
	}
	b = xcalloc(1, sizeof(*b));
	b->conn = c;
	b->responses = json_object_new_array();
	b->waiting = 1;		/* until every request has run */
	b->msg = msg;
	conn_batch_step(b);
}

/* Run the next part of b; the rest waits for the next loop turn. */
static void
conn_batch_step(struct conn_batch *b)
{
	struct conn	*c = b->conn;
	struct timeval	 now = { 0, 0 };
	json_object	*resp;
	size_t		 n = json_object_array_length(b->msg), stop;

	stop = b->next + CONN_BATCH_STEP;
	if (c->sh->base == NULL || stop > n)
		stop = n;	/* no loop (unit tests): all at once */
	while (b->next < stop && !c->closing)
		if ((resp = conn_call(c, json_object_array_get_idx(b->msg,
		    b->next++), b)) != NULL)
			json_object_array_add(b->responses, resp);
	if (b->next == n || c->closing) {
		conn_batch_end(b);
		return;
	}
	/* A timer, not event_active: the loop polls the sockets first. */
	if (b->ev == NULL &&
	    (b->ev = evtimer_new(c->sh->base, conn_batch_next, b)) == NULL)
		fatalx("evtimer_new");
	c->batch = b;
	evtimer_add(b->ev, &now);
}

static void
conn_batch_next(evutil_socket_t fd, short ev, void *arg)
{
	struct conn_batch	*b = arg;
	struct conn		*c = b->conn;

	(void)fd;
	(void)ev;
	conn_batch_step(b);
	/* Done: read what the client sent meanwhile. */
	if (c->batch == NULL && c->resume != NULL)
		c->resume(c);
}

/* Every request of b has run (or its connection goes). */
static void
conn_batch_end(struct conn_batch *b)
{
	if (b->conn != NULL && b->conn->batch == b)
		b->conn->batch = NULL;
	if (b->ev != NULL)
		event_free(b->ev);
	b->ev = NULL;
	json_object_put(b->msg);
	b->msg = NULL;
	conn_batch_done(b);
}

/* One answer of the batch is in; send them all with the last. */
static void
conn_batch_done(struct conn_batch *b)
{
	if (--b->waiting > 0)
		return;
	if (b->conn != NULL && json_object_array_length(b->responses) > 0)
		conn_send(b->conn, b->responses);
	json_object_put(b->responses);
	free(b);
}

struct conn_pending *
conn_defer(struct rpc_req *req, void (*cancel)(void *), void *arg)
{
	struct conn_pending	*p = xcalloc(1, sizeof(*p));

	p->conn = req->conn;
	p->id = json_object_get(req->id);
	p->method = xstrdup(req->method);
	p->notification = req->notification;
	p->modern = req->modern;
	p->batch = req->batch;
	p->cancel = cancel;
	p->arg = arg;
	if (p->batch != NULL)
		p->batch->waiting++;
	TAILQ_INSERT_TAIL(&req->conn->pending, p, entry);
	req->conn->npending++;
	req->conn->sh->npending++;
	return p;
}

static void
conn_pending_free(struct conn_pending *p)
{
	TAILQ_REMOVE(&p->conn->pending, p, entry);
	p->conn->npending--;
	p->conn->sh->npending--;
	json_object_put(p->id);
	free(p->method);
	free(p);
}

struct conn_pending *
conn_pending_find(struct conn *c, json_object *id, const char *method)
{
	struct conn_pending	*p;

	TAILQ_FOREACH(p, &c->pending, entry)
		if (!p->notification && strcmp(p->method, method) == 0 &&
		    json_object_equal(p->id, id))
			return p;
	return NULL;
}

void
conn_drop(struct conn_pending *p)
{
	p->conn->active_ms = util_monotonic_ms();	/* idle from now */
	/* A routed connection learns that nothing more is due for it. */
	if (p->conn->drain != NULL && p->batch == NULL && p->id != NULL)
		conn_route(p->conn, p->id, "", 0);
	if (p->batch != NULL)
		conn_batch_done(p->batch);
	conn_pending_free(p);
}

void
conn_complete(struct conn_pending *p, json_object *result,
    struct rpc_error *err)
{
	struct rpc_req	 req;
	json_object	*resp;

	memset(&req, 0, sizeof(req));
	p->conn->active_ms = util_monotonic_ms();	/* idle from now */
	req.conn = p->conn;
	req.id = p->id;
	req.method = p->method;
	req.notification = p->notification;
	req.modern = p->modern;
	resp = rpc_answer(&req, err != NULL ? RPC_ERROR : RPC_OK, result, err);
	if (err != NULL)
		free(err->command);
	if (resp != NULL && p->batch != NULL)
		json_object_array_add(p->batch->responses, resp);
	else if (resp != NULL) {
		conn_send(p->conn, resp);
		json_object_put(resp);
	}
	if (p->batch != NULL)
		conn_batch_done(p->batch);
	conn_pending_free(p);
}

static void
conn_cancel_all(struct conn *c)
{
	struct conn_pending	*p;

	if (c->batch != NULL) {
		c->batch->conn = NULL;
		conn_batch_end(c->batch);
		c->batch = NULL;
	}
	while ((p = TAILQ_FIRST(&c->pending)) != NULL) {
		if (p->cancel != NULL)
			p->cancel(p->arg);
		if (p->batch != NULL) {
			p->batch->conn = NULL;
			conn_batch_done(p->batch);
		}
		conn_pending_free(p);
	}
}
