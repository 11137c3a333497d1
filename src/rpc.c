/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "conn.h"
#include "jstrict.h"
#include "listener.h"
#include "log.h"
#include "rpc.h"
#include "server.h"
#include "util.h"

/*
 * The answers of one batch, sent once every request has one.  A batch is
 * answered RPC_BATCH_STEP requests per loop turn, so that other clients
 * are served between its parts; its connection reads nothing meanwhile.
 */
struct rpc_batch {
	struct conn	*conn;
	json_object	*responses;
	int		 waiting;	/* deferred answers still due, + 1 while
					   requests remain to be answered */
	json_object	*msg;		/* the requests; NULL once all ran */
	size_t		 next;		/* the next request of msg to run */
	struct event	*ev;		/* runs the next part, next turn */
};

static json_object	*rpc_call(struct conn *, json_object *,
			    struct rpc_batch *);
static void		 rpc_batch_start(struct conn *, json_object *);
static void		 rpc_batch_step(struct rpc_batch *);
static void		 rpc_batch_next(evutil_socket_t, short, void *);
static void		 rpc_batch_end(struct rpc_batch *);
static void		 rpc_batch_done(struct rpc_batch *);
static int		 rpc_waits_full(struct conn *, struct rpc_error *);
static int		 rpc_str_has_nul(json_object *);
static int		 rpc_nul_path(json_object *, const char *, char *,
			    size_t);
static int		 rpc_check(json_object *, json_object **,
			    const char **, int *, struct rpc_error *);
static json_object	*rpc_answer(struct rpc_req *, enum rpc_status,
			    json_object *, struct rpc_error *);
static const struct rpc_method *rpc_lookup(const char *);

static const struct {
	int		 code;
	const char	*message;
} rpc_messages[] = {
	{ RPC_PARSE_ERROR, "Parse error" },
	{ RPC_INVALID_REQUEST, "Invalid Request" },
	{ RPC_METHOD_NOT_FOUND, "Method not found" },
	{ RPC_INVALID_PARAMS, "Invalid params" },
	{ RPC_INTERNAL_ERROR, "Internal error" },
	{ RPC_SECURITY_BLOCKED, "Security blocked" },
	{ RPC_UNKNOWN_TICKET, "Unknown ticket" },
	{ RPC_QUEUE_FULL, "Queue full" },
	{ RPC_STORAGE_ERROR, "Storage error" },
	{ RPC_UNAUTHORIZED, "Unauthorized" },
};

const char *
rpc_code_message(int code)
{
	size_t	i;

	for (i = 0; i < sizeof(rpc_messages) / sizeof(rpc_messages[0]); i++)
		if (rpc_messages[i].code == code)
			return rpc_messages[i].message;
	return "Error";
}

enum rpc_status
rpc_fail(struct rpc_error *err, int code, const char *type,
    const char *fmt, ...)
{
	va_list	ap;

	err->code = code;
	err->type = type;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return RPC_ERROR;
}

json_object *
rpc_error_response(json_object *id, int code, const char *type,
    const char *command, const char *reason)
{
	json_object	*r, *e, *d;

	d = json_object_new_object();
	json_object_object_add(d, "type", json_object_new_string(type));
	json_object_object_add(d, "command", command != NULL ?
	    json_object_new_string(command) : NULL);
	json_object_object_add(d, "reason", json_object_new_string(reason));
	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message",
	    json_object_new_string(rpc_code_message(code)));
	json_object_object_add(e, "data", d);
	r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "error", e);
	return r;
}

json_object *
rpc_notification(const char *method, json_object *params)
{
	json_object	*n = json_object_new_object();

	json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(n, "method", json_object_new_string(method));
	json_object_object_add(n, "params", params);
	return n;
}

static const struct rpc_method *
rpc_lookup(const char *name)
{
	const struct rpc_method	*m;

	for (m = rpc_methods; m->name != NULL; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

/* Whether the string v (or NULL) holds U+0000. */
static int
rpc_str_has_nul(json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	    strlen(json_object_get_string(v)) !=
	    (size_t)json_object_get_string_len(v);
}

/*
 * Where under v, named at, a string holds U+0000: 1 with path set (for
 * example "params.commands[0].params.text"), else 0.  Member names cannot
 * hold it: jstrict refuses them.
 */
static int
rpc_nul_path(json_object *v, const char *at, char *path, size_t len)
{
	char	sub[RPC_REASON_MAX / 2];
	size_t	i, n;

	if (rpc_str_has_nul(v)) {
		snprintf(path, len, "%s", at);
		return 1;
	}
	if (json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
			if (rpc_nul_path(json_object_array_get_idx(v, i), sub,
			    path, len))
				return 1;
		}
	} else if (json_object_is_type(v, json_type_object)) {
		json_object_object_foreach(v, key, val) {
			snprintf(sub, sizeof(sub), "%s.%s", at, key);
			if (rpc_nul_path(val, sub, path, len))
				return 1;
		}
	}
	return 0;
}

/*
 * Check the envelope of one request.  On success *id, *method, *notif are
 * set (id borrowed, NULL for id null).  A request that is not one gets
 * -32600; its id is kept when it is a valid one, so the client can match.
 */
static int
rpc_check(json_object *msg, json_object **id, const char **method,
    int *notif, struct rpc_error *err)
{
	json_object	*v;
	enum json_type	 t;
	int		 has_id;

	*id = NULL;
	*method = NULL;
	*notif = 0;
	if (!json_object_is_type(msg, json_type_object)) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "a request must be a JSON object");
		return -1;
	}
	has_id = json_object_object_get_ex(msg, "id", &v);
	t = json_object_get_type(v);
	if (has_id && (t == json_type_string || t == json_type_int))
		*id = v;
	if (json_object_object_get_ex(msg, "method", &v) &&
	    rpc_str_has_nul(v)) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"method\" holds U+0000, which no method name does");
		return -1;
	}
	if (json_object_is_type(v, json_type_string))
		*method = json_object_get_string(v);
	if (has_id && t != json_type_string && t != json_type_int &&
	    t != json_type_null) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"id\" must be a string, an integer or null");
		return -1;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) != 3 ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"jsonrpc\" must be \"2.0\"");
		return -1;
	}
	if (*method == NULL) {
		rpc_fail(err, RPC_INVALID_REQUEST, "invalid_request",
		    "\"method\" must be a string");
		return -1;
	}
	*notif = !has_id;
	return 0;
}

static json_object *
rpc_answer(struct rpc_req *req, enum rpc_status st, json_object *result,
    struct rpc_error *err)
{
	json_object	*r;

	if (req->notification) {
		json_object_put(result);
		return NULL;
	}
	if (st == RPC_ERROR)
		return rpc_error_response(req->id, err->code, err->type,
		    err->command != NULL ? err->command : req->method,
		    err->reason);
	if (result == NULL)
		result = json_object_new_object();
	r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(req->id));
	json_object_object_add(r, "result", result);
	return r;
}

/* Whether c may not leave one more answer outstanding (err filled). */
static int
rpc_waits_full(struct conn *c, struct rpc_error *err)
{
	const struct options	*opt = c->srv->opt;

	if (c->npending >= opt->max_waits) {
		rpc_fail(err, RPC_QUEUE_FULL, "too_many_waits", "this "
		    "connection already waits for %zu answers (--max-waits "
		    "%llu): take some of them first", c->npending,
		    (unsigned long long)opt->max_waits);
		return 1;
	}
	if (c->srv->npending >= opt->max_waits_total) {
		rpc_fail(err, RPC_QUEUE_FULL, "too_many_waits", "the broker "
		    "already holds %zu answers for its clients "
		    "(--max-waits-total %llu): try again later",
		    c->srv->npending, (unsigned long long)opt->max_waits_total);
		return 1;
	}
	return 0;
}

/* Run one request; the response, or NULL when none is due now. */
static json_object *
rpc_call(struct conn *c, json_object *msg, struct rpc_batch *batch)
{
	const struct rpc_method	*m;
	struct rpc_req		 req;
	struct rpc_error	 err;
	json_object		*params = NULL, *result = NULL, *resp;
	enum rpc_status		 st;
	char			 where[RPC_REASON_MAX / 2];

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
	if (json_object_object_get_ex(msg, "params", &params) &&
	    params != NULL && !json_object_is_type(params, json_type_object)) {
		st = rpc_fail(&err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"params\" must be an object");
		return rpc_answer(&req, st, NULL, &err);
	}
	if (jstrict_has_nul(params)) {
		rpc_nul_path(params, "params", where, sizeof(where));
		st = rpc_fail(&err, RPC_INVALID_PARAMS, "invalid_params",
		    "%s holds U+0000 (\\u0000), which the broker refuses in "
		    "any string", where);
		return rpc_answer(&req, st, NULL, &err);
	}
	m = rpc_lookup(req.method);
	if (conn_needs_auth(c) && (m == NULL || !(m->flags & RPC_NOAUTH))) {
		st = rpc_fail(&err, RPC_UNAUTHORIZED, "unauthorized",
		    "this broker requires a token: call authenticate "
		    "{\"token\": ...} first");
		return rpc_answer(&req, st, NULL, &err);
	}
	if (m == NULL) {
		st = rpc_fail(&err, RPC_METHOD_NOT_FOUND, "method_not_found",
		    "no method '%s'; see cmdgate-protocol(7)", req.method);
		return rpc_answer(&req, st, NULL, &err);
	}
	if ((m->flags & RPC_WAITS) && rpc_waits_full(c, &err))
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

void
rpc_message(struct conn *c, const char *buf, size_t len)
{
	json_object	*msg, *resp;
	char		 reason[128];
	int		 rc;

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
		if ((resp = rpc_call(c, msg, NULL)) != NULL)
			conn_send(c, resp);
		json_object_put(resp);
		json_object_put(msg);
		return;
	}
	rpc_batch_start(c, msg);
}

/* A batch (msg, taken): refuse it whole, or answer its first part. */
static void
rpc_batch_start(struct conn *c, json_object *msg)
{
	struct rpc_batch	*b;
	json_object		*resp;
	size_t			 n = json_object_array_length(msg);
	uint64_t		 max = c->srv->opt->max_rpc_batch;
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
	rpc_batch_step(b);
}

/* Run the next part of b; the rest waits for the next loop turn. */
static void
rpc_batch_step(struct rpc_batch *b)
{
	struct conn	*c = b->conn;
	struct timeval	 now = { 0, 0 };
	json_object	*resp;
	size_t		 n = json_object_array_length(b->msg), stop;

	stop = b->next + RPC_BATCH_STEP;
	if (c->srv->base == NULL || stop > n)
		stop = n;	/* no loop (unit tests): all at once */
	while (b->next < stop && !c->closing)
		if ((resp = rpc_call(c, json_object_array_get_idx(b->msg,
		    b->next++), b)) != NULL)
			json_object_array_add(b->responses, resp);
	if (b->next == n || c->closing) {
		rpc_batch_end(b);
		return;
	}
	/* A timer, not event_active: the loop polls the sockets first. */
	if (b->ev == NULL &&
	    (b->ev = evtimer_new(c->srv->base, rpc_batch_next, b)) == NULL)
		fatalx("evtimer_new");
	c->batch = b;
	evtimer_add(b->ev, &now);
}

static void
rpc_batch_next(evutil_socket_t fd, short ev, void *arg)
{
	struct rpc_batch	*b = arg;
	struct conn		*c = b->conn;

	(void)fd;
	(void)ev;
	rpc_batch_step(b);
	/* Done: read what the client sent meanwhile. */
	if (c->batch == NULL)
		listener_resume(c);
}

/* Every request of b has run (or its connection goes). */
static void
rpc_batch_end(struct rpc_batch *b)
{
	if (b->conn != NULL && b->conn->batch == b)
		b->conn->batch = NULL;
	if (b->ev != NULL)
		event_free(b->ev);
	b->ev = NULL;
	json_object_put(b->msg);
	b->msg = NULL;
	rpc_batch_done(b);
}

/* One answer of the batch is in; send them all with the last. */
static void
rpc_batch_done(struct rpc_batch *b)
{
	if (--b->waiting > 0)
		return;
	if (b->conn != NULL && json_object_array_length(b->responses) > 0)
		conn_send(b->conn, b->responses);
	json_object_put(b->responses);
	free(b);
}

struct rpc_pending *
rpc_defer(struct rpc_req *req, void (*cancel)(void *), void *arg)
{
	struct rpc_pending	*p = xcalloc(1, sizeof(*p));

	p->conn = req->conn;
	p->id = json_object_get(req->id);
	p->method = xstrdup(req->method);
	p->notification = req->notification;
	p->batch = req->batch;
	p->cancel = cancel;
	p->arg = arg;
	if (p->batch != NULL)
		p->batch->waiting++;
	TAILQ_INSERT_TAIL(&req->conn->pending, p, entry);
	req->conn->npending++;
	req->conn->srv->npending++;
	return p;
}

static void
rpc_pending_free(struct rpc_pending *p)
{
	TAILQ_REMOVE(&p->conn->pending, p, entry);
	p->conn->npending--;
	p->conn->srv->npending--;
	json_object_put(p->id);
	free(p->method);
	free(p);
}

void
rpc_complete(struct rpc_pending *p, json_object *result, struct rpc_error *err)
{
	struct rpc_req	 req;
	json_object	*resp;

	memset(&req, 0, sizeof(req));
	p->conn->active_ms = util_monotonic_ms();	/* idle from now */
	req.conn = p->conn;
	req.id = p->id;
	req.method = p->method;
	req.notification = p->notification;
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
		rpc_batch_done(p->batch);
	rpc_pending_free(p);
}

void
rpc_cancel_all(struct conn *c)
{
	struct rpc_pending	*p;

	if (c->batch != NULL) {
		c->batch->conn = NULL;
		rpc_batch_end(c->batch);
		c->batch = NULL;
	}
	while ((p = TAILQ_FIRST(&c->pending)) != NULL) {
		if (p->cancel != NULL)
			p->cancel(p->arg);
		if (p->batch != NULL) {
			p->batch->conn = NULL;
			rpc_batch_done(p->batch);
		}
		rpc_pending_free(p);
	}
}
