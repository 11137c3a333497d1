/* SPDX-License-Identifier: ISC */
/* cmdgate mcp: cmdgate(1) as an MCP stdio server, bridged to the broker. */
#include "config.h"

#include <sys/queue.h>
#include <sys/random.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "cli.h"
#include "jsonl.h"
#include "jstrict.h"
#include "util.h"

/*
 * The bridge follows the client's requests until they are answered, so
 * that it can outlive the broker: when the connection is lost it
 * connects again (without blocking: the client is served meanwhile),
 * says again what the client said at the start (its initialize,
 * notifications/initialized, logging/setLevel) and sends every
 * unanswered request again.  A tools/call carries an idempotency key
 * (the bridge gives it one), so that sent again it runs once.
 *
 * After the lines of a loop turn it sends a ping of its own, the read
 * mark: the broker reads a connection's lines in order (a tools/call's
 * next line once its job is stored), so the mark's answer says that it
 * read all before it.  A request it read is not what killed it, and a
 * cancellation it read needs no sending again.
 */
#define BRIDGE_KILLS		2	/* quick losses a request may cause */

struct bridge {
	struct event_base	*base;
	struct bridgeio		 io;		/* the client's stdin, stdout */
	struct bridgec		 c;		/* the broker */
	struct cli		*cl;
	struct callq		 q;		/* unanswered requests */
	char			*init;		/* the answered initialize */
	char			*level;		/* the last logging/setLevel */
	int			 initialized;	/* notifications/initialized */
	uint64_t		 tools_seen;	/* hash of its last tools; 0 */
	char			 own[32];	/* the prefix of its own ids */
	int64_t			 lost_at;	/* -1: not lost */
	json_object		*too_large;	/* the broker's, before closing */
	struct event		*mark_ev;	/* sends the read mark */
	uint64_t		 mark;		/* the next mark's number */
	size_t			 refuse_at;	/* requests this long: 0, none */
	size_t			 passed_max;	/* longest line not held, sent */
	char			*refuse_why;
};

static void	bridge_client_line(void *, const char *, size_t);
static void	bridge_client_eof(void *);
static void	bridge_end_if_done(struct bridge *);

/* 64-bit FNV-1a: enough to see that a tool list changed. */
static uint64_t
bridge_hash(const char *s)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h != 0 ? h : 1;
}

/* The hash of a tools/list result's tools (0: none to compare). */
static uint64_t
bridge_tools_hash(json_object *result)
{
	json_object	*t;

	if (!json_object_object_get_ex(result, "tools", &t))
		return 0;
	return bridge_hash(json_object_to_json_string_ext(t, CALLQ_JSON));
}

/* What follows the bridge's prefix in id, one of its own; else NULL. */
static const char *
bridge_own_id(struct bridge *b, json_object *id)
{
	const char	*s;

	if (!json_object_is_type(id, json_type_string))
		return NULL;
	s = json_object_get_string(id);
	if (strncmp(s, b->own, strlen(b->own)) != 0)
		return NULL;
	return s + strlen(b->own);
}

static void
bridge_send(struct bridge *b, const char *line, size_t n)
{
	bridgec_send(&b->c, line, n);
}

/*
 * A line of the client's that is not held (a notification, an answer,
 * not JSON) to the broker, when it is up; the longest is remembered, in
 * case the broker refuses it by size.  One as long as a line it refused
 * is not sent.
 */
static void
bridge_pass(struct bridge *b, const char *line, size_t n)
{
	char	*e;

	if (b->refuse_at != 0 && n >= b->refuse_at) {
		e = callq_error(NULL, -32600, "Invalid Request",
		    "message_too_large", b->refuse_why);
		bridgeio_write(&b->io, e, strlen(e));
		free(e);
		return;
	}
	if (bridgec_is_up(&b->c) && n > b->passed_max)
		b->passed_max = n;
	bridge_send(b, line, n);
}

/* A read mark after the lines of this loop turn (one for them all). */
static void
bridge_mark_due(struct bridge *b)
{
	event_active(b->mark_ev, EV_TIMEOUT, 0);
}

/* The read mark: the number of the next, then the next is one more. */
static void
bridge_mark(evutil_socket_t fd, short what, void *arg)
{
	struct bridge	*b = arg;
	char		 line[128];

	(void)fd;
	(void)what;
	/* Once the client is done, the connection half-closes: no more. */
	if (!bridgec_is_up(&b->c) || b->io.eof)
		return;
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":\"%sread:"
	    "%llu\",\"method\":\"ping\"}", b->own,
	    (unsigned long long)b->mark++);
	bridge_send(b, line, strlen(line));
}

/*
 * The broker answered read mark n: it read every line before it.  A
 * request (not a batch) whose cancellation it read is forgotten: it will
 * not answer it.
 */
static void
bridge_read_upto(struct bridge *b, uint64_t n)
{
	struct call	*c, *next;

	for (c = TAILQ_FIRST(&b->q.calls); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!c->sent)
			continue;
		if (c->mark <= n)
			c->read = 1;
		if (c->cancel_mark != 0 && c->cancel_mark <= n &&
		    c->kind != CALL_BATCH)
			callq_free(&b->q, c);
	}
	bridgeio_room(&b->io);
}

/* c to the broker, when it is up; c stays held until it is answered. */
static void
bridge_put(struct bridge *b, struct call *c)
{
	if (!bridgec_is_up(&b->c))
		return;
	bridge_send(b, c->line, c->len);
	c->sent = c->ever_sent = 1;
	c->sent_at = util_monotonic_ms();
	c->read = 0;
	c->mark = b->mark;
	bridge_mark_due(b);
}

/*
 * c's cancellations to the broker after it (c sent on the connection now
 * up); c is held until the broker has read them, to be sent again with
 * them if it goes away first.
 */
static void
bridge_put_cancel(struct bridge *b, struct call *c)
{
	bridge_send(b, c->cancel, strlen(c->cancel));
	c->cancel_mark = b->mark;
	bridge_mark_due(b);
}

/*
 * Answer a request (id, JSON text) or a batch (ids: an error each, in
 * one array) with an error of the bridge's own.
 */
static void
bridge_refuse(struct bridge *b, const char *id, json_object *ids, int code,
    const char *msg, const char *type, const char *reason)
{
	struct evbuffer	*buf;
	char		*line;
	size_t		 i, n;

	if (ids == NULL) {
		line = callq_error(id, code, msg, type, reason);
		bridgeio_write(&b->io, line, strlen(line));
		free(line);
		return;
	}
	if ((buf = evbuffer_new()) == NULL)
		return;
	n = json_object_array_length(ids);
	for (i = 0; i < n; i++) {
		line = callq_error(json_object_get_string(
		    json_object_array_get_idx(ids, i)), code, msg, type, reason);
		evbuffer_add_printf(buf, "%s%s%s", i == 0 ? "[" : ",", line,
		    i + 1 == n ? "]\n" : "");
		free(line);
	}
	bridgeio_write_buffer(&b->io, buf);
	evbuffer_free(buf);
}

/*
 * Refuse a request (or batch) of n bytes that the broker is known to
 * refuse, or that the bridge has no room to hold: 1 when refused.
 */
static int
bridge_refused(struct bridge *b, const char *id, json_object *ids, size_t n)
{
	char	why[256];

	if (b->refuse_at != 0 && n >= b->refuse_at) {
		bridge_refuse(b, id, ids, -32600, "Invalid Request",
		    "message_too_large", b->refuse_why);
		return 1;
	}
	if (callq_room(&b->q, n))
		return 0;
	snprintf(why, sizeof(why), "cmdgate mcp holds at most %d unanswered "
	    "requests (%d MiB) until the broker answers; wait for answers "
	    "and send it again", CALLQ_MAX, CALLQ_BYTES / (1024 * 1024));
	bridge_refuse(b, id, ids, -32003, "Server error", "bridge_full", why);
	return 1;
}

/* Follow the client's request msg (line, n bytes), and send it. */
static void
bridge_request(struct bridge *b, json_object *msg, const char *method,
    json_object *id, const char *line, size_t n)
{
	const char	*ids = json_object_to_json_string_ext(id, CALLQ_JSON);
	json_object	*p;
	struct call	*c;
	enum call_kind	 kind = callq_kind(method);

	if (strcmp(method, "tools/call") == 0) {
		callq_key(msg);
		line = json_object_to_json_string_length(msg, CALLQ_JSON, &n);
	}
	/* A later page is not the list the bridge fetches to compare. */
	if (kind == CALL_TOOLS && json_object_object_get_ex(msg, "params",
	    &p) && json_object_object_get_ex(p, "cursor", NULL))
		kind = CALL_OTHER;
	if (bridge_refused(b, ids, NULL, n))
		return;
	c = callq_add(&b->q, ids, NULL, msg, line, n, kind);
	c->keyed = strcmp(method, "tools/call") == 0;
	bridge_put(b, c);
}

/*
 * A batch (msg): its requests' tools/calls get keys, and it is followed
 * as one request, answered by one array.  Refused whole, an error each.
 */
static void
bridge_batch(struct bridge *b, json_object *msg, const char *line, size_t n)
{
	json_object	*ids = json_object_new_array(), *e, *m, *id;
	struct call	*c;
	size_t		 i;
	int		 keyed = 0;

	for (i = 0; i < json_object_array_length(msg); i++) {
		e = json_object_array_get_idx(msg, i);
		if (!json_object_object_get_ex(e, "method", &m) ||
		    !json_object_is_type(m, json_type_string) ||
		    !json_object_object_get_ex(e, "id", &id) ||
		    !callq_id_ok(id))
			continue;
		json_object_array_add(ids, json_object_new_string(
		    json_object_to_json_string_ext(id, CALLQ_JSON)));
		if (strcmp(json_object_get_string(m), "tools/call") == 0) {
			callq_key(e);
			keyed = 1;
		}
	}
	if (json_object_array_length(ids) == 0) {
		json_object_put(ids);
		bridge_pass(b, line, n);	/* notifications only */
		return;
	}
	line = json_object_to_json_string_length(msg, CALLQ_JSON, &n);
	if (bridge_refused(b, NULL, ids, n)) {
		json_object_put(ids);
		return;
	}
	c = callq_add(&b->q, NULL, ids, msg, line, n, CALL_BATCH);
	c->keyed = keyed;
	bridge_put(b, c);
}

/*
 * A notification of the client's: what a reconnection needs of it.  A
 * cancelled request that no broker has seen is dropped here (it made no
 * job); one sent before the broker went away goes again with its
 * cancellation, so that the job it made is cancelled too; and one sent
 * on the connection now up is held until the broker has read its
 * cancellation (bridge_read_upto), so that it goes again with it if the
 * broker dies first.
 */
static void
bridge_notice(struct bridge *b, json_object *msg, const char *method,
    const char *line, size_t n)
{
	json_object	*params, *rid;
	struct call	*c = NULL;
	const char	*rs = NULL;

	if (strcmp(method, "notifications/initialized") == 0)
		b->initialized = 1;
	else if (strcmp(method, "notifications/cancelled") == 0 &&
	    json_object_object_get_ex(msg, "params", &params) &&
	    json_object_object_get_ex(params, "requestId", &rid))
		c = callq_find(&b->q, rs = json_object_to_json_string_ext(rid,
		    CALLQ_JSON));
	if (c != NULL && !c->ever_sent && c->kind != CALL_BATCH) {
		callq_free(&b->q, c);
		return;
	}
	if (c != NULL) {
		callq_cancel(&b->q, c, rs);
		if (c->sent)
			bridge_put_cancel(b, c);
		return;
	}
	bridge_pass(b, line, n);
}

/*
 * A line from the client: a request (or a batch of them) is followed;
 * anything else goes as it is (and is lost while the broker is).
 */
static void
bridge_client_line(void *arg, const char *line, size_t n)
{
	struct bridge	*b = arg;
	json_object	*msg = NULL, *m, *id = NULL;

	if (jstrict_parse(line, n, &msg) != 0)
		bridge_pass(b, line, n);	/* the broker says why */
	else if (json_object_is_type(msg, json_type_array))
		bridge_batch(b, msg, line, n);
	else if (!json_object_object_get_ex(msg, "method", &m) ||
	    !json_object_is_type(m, json_type_string))
		bridge_pass(b, line, n);
	else if (json_object_object_get_ex(msg, "id", &id) && callq_id_ok(id))
		bridge_request(b, msg, json_object_get_string(m), id, line, n);
	else if (id != NULL)
		bridge_pass(b, line, n);	/* the broker says why */
	else
		bridge_notice(b, msg, json_object_get_string(m), line, n);
	json_object_put(msg);
}

/* The broker answered c (msg): forget it, keeping what is replayed. */
static void
bridge_answered(struct bridge *b, struct call *c, json_object *msg)
{
	json_object	*r;

	if (json_object_object_get_ex(msg, "result", &r)) {
		switch (c->kind) {
		case CALL_INIT:
			free(b->init);
			b->init = xstrdup(c->line);
			break;
		case CALL_LEVEL:
			free(b->level);
			b->level = xstrdup(c->line);
			break;
		case CALL_TOOLS:
			b->tools_seen = bridge_tools_hash(r);
			break;
		default:
			break;
		}
	}
	callq_free(&b->q, c);
	bridgeio_room(&b->io);
}

/*
 * The answer to a request of the bridge's own (what: its name): not the
 * client's.  The tool list fetched on reconnecting tells whether it
 * changed.
 */
static void
bridge_own_answer(struct bridge *b, json_object *msg, const char *what)
{
	static const char	 changed[] = "{\"jsonrpc\":\"2.0\",\"method\":"
				    "\"notifications/tools/list_changed\"}";
	json_object		*r;
	uint64_t		 h;

	/* Any answer to a mark, even an error, says it was read. */
	if (strncmp(what, "read:", 5) == 0) {
		bridge_read_upto(b, strtoull(what + 5, NULL, 10));
		return;
	}
	if (json_object_object_get_ex(msg, "error", &r)) {
		fprintf(stderr, "cmdgate mcp: the broker refused the %s the "
		    "bridge sent again: %s\n", what,
		    json_object_to_json_string_ext(r, CALLQ_JSON));
		return;
	}
	if (strcmp(what, "tools") != 0 ||
	    !json_object_object_get_ex(msg, "result", &r))
		return;
	h = bridge_tools_hash(r);
	if (b->tools_seen != 0 && h != b->tools_seen)
		bridgeio_write(&b->io, changed, sizeof(changed) - 1);
	b->tools_seen = h;
}

/* Whether msg is the broker's message_too_large, before it closes. */
static int
bridge_too_large(json_object *msg)
{
	json_object	*id, *e, *d, *t;

	return json_object_object_get_ex(msg, "id", &id) && id == NULL &&
	    json_object_object_get_ex(msg, "error", &e) &&
	    json_object_object_get_ex(e, "data", &d) &&
	    json_object_object_get_ex(d, "type", &t) &&
	    json_object_is_type(t, json_type_string) &&
	    strcmp(json_object_get_string(t), "message_too_large") == 0;
}

/*
 * A line from the broker: to the client, unless the bridge asked, it is
 * the broker's message_too_large (the request it names is answered when
 * the connection closes), progress the client saw (callq_progress_old),
 * or the answer to a request the client cancelled (MCP: none is sent).
 * The client's ids are looked up first.
 */
static void
bridge_broker_line(struct bridge *b, const char *line, size_t n)
{
	json_object	*msg = NULL, *id;
	struct call	*c = NULL;
	const char	*own;
	int		 cancelled = 0;

	if (jstrict_parse(line, n, &msg) == 0 &&
	    json_object_is_type(msg, json_type_array))
		c = callq_find_batch(&b->q, msg);
	else if (msg != NULL && !json_object_object_get_ex(msg, "method",
	    NULL) && json_object_object_get_ex(msg, "id", &id)) {
		c = callq_find(&b->q, json_object_to_json_string_ext(id,
		    CALLQ_JSON));
		if (c == NULL && (own = bridge_own_id(b, id)) != NULL) {
			bridge_own_answer(b, msg, own);
			json_object_put(msg);
			return;
		}
		if (c == NULL && bridge_too_large(msg)) {
			json_object_put(b->too_large);
			b->too_large = msg;
			return;
		}
	}
	if (c != NULL) {
		cancelled = c->cancel != NULL && c->kind != CALL_BATCH;
		bridge_answered(b, c, msg);
	}
	if (!cancelled && !callq_progress_old(&b->q, msg))
		bridgeio_write(&b->io, line, n);
	json_object_put(msg);
}

/* Send request line again, under the bridge's own id for what. */
static void
bridge_resend(struct bridge *b, const char *line, const char *what)
{
	json_object	*msg;
	const char	*s;
	char		 id[64];

	if (jstrict_parse_str(line, &msg) != 0)
		return;
	snprintf(id, sizeof(id), "%s%s", b->own, what);
	json_object_object_add(msg, "id", json_object_new_string(id));
	s = json_object_to_json_string_ext(msg, CALLQ_JSON);
	bridge_send(b, s, strlen(s));
	json_object_put(msg);
}

/*
 * To a new connection: what the client said at the start, a tools/list
 * of the bridge's own when the client saw one, then every request still
 * unanswered (a tools/call with its key: the broker finds its job), and
 * after one cancelled its cancellation, which it never answers (held
 * until the broker has read it).
 */
static void
bridge_replay(struct bridge *b)
{
	static const char	 inited[] = "{\"jsonrpc\":\"2.0\",\"method\":"
				    "\"notifications/initialized\"}";
	struct call		*c;
	char			*tools;

	if (b->init != NULL)
		bridge_resend(b, b->init, "initialize");
	if (b->initialized)
		bridge_send(b, inited, sizeof(inited) - 1);
	if (b->level != NULL)
		bridge_resend(b, b->level, "logging/setLevel");
	if (b->tools_seen != 0) {
		tools = xasprintf("{\"jsonrpc\":\"2.0\",\"id\":\"%stools\","
		    "\"method\":\"tools/list\",\"params\":{}}", b->own);
		bridge_send(b, tools, strlen(tools));
		free(tools);
	}
	TAILQ_FOREACH(c, &b->q.calls, entry) {
		bridge_put(b, c);
		if (c->cancel != NULL)
			bridge_put_cancel(b, c);
	}
}

/* The connection is up (again): the replay goes first. */
static void
bridge_up(void *arg)
{
	struct bridge	*b = arg;

	if (b->lost_at != -1)
		fprintf(stderr, " reconnected after %lld s\n",
		    (long long)(util_monotonic_ms() - b->lost_at + 500) / 1000);
	b->lost_at = -1;
	b->passed_max = 0;
	bridge_replay(b);
}

/*
 * The broker refused a line by size: the longest sent on the connection
 * (its limit is below it).  A request gets the broker's error with its
 * id; a line not held, the error as the broker sent it.  Lines as long
 * are refused from now on.
 */
static void
bridge_blame_size(struct bridge *b)
{
	struct call	*c = callq_largest(&b->q);
	const char	*s;

	if (c == NULL || b->passed_max > c->len) {
		if (b->passed_max == 0)
			return;
		s = json_object_to_json_string_ext(b->too_large, CALLQ_JSON);
		bridgeio_write(&b->io, s, strlen(s));
		b->refuse_at = b->passed_max;
		return;
	}
	b->refuse_at = c->len;
	bridge_refuse(b, c->id, c->ids, -32600, "Invalid Request",
	    "message_too_large", b->refuse_why);
	callq_free(&b->q, c);
}

/*
 * A request that two quick losses followed, not known read: it may be
 * what kills the broker, and is not sent again.  The client hears so,
 * unless it cancelled it (MCP: no answer then).
 */
static void
bridge_give_up(struct bridge *b, struct call *c)
{
	if (c->cancel == NULL || c->kind == CALL_BATCH)
		bridge_refuse(b, c->id, c->ids, -32603, "Internal error",
		    "connection_lost", c->keyed ? "the broker closed the "
		    "connection just after this request, twice, before it "
		    "showed it had read it; cmdgate mcp does not send it "
		    "again; a job the broker stored for it first runs all "
		    "the same (queue_status shows it)" : "the broker closed "
		    "the connection just after this request, twice, before "
		    "it showed it had read it; cmdgate mcp does not send it "
		    "again");
	callq_free(&b->q, c);
}

/*
 * Who the lost connection's end is for: the request the broker refused
 * by size (the largest sent: the limit is below it) is answered with the
 * broker's error and longer ones are refused from now on; a request sent
 * just before two quick losses, that the broker did not show it read
 * (its read mark), is answered and not sent again.
 */
static void
bridge_blame(struct bridge *b, int64_t now)
{
	json_object	*e;
	struct call	*c, *next;

	if (b->too_large != NULL) {
		e = json_object_object_get(json_object_object_get(
		    b->too_large, "error"), "data");
		free(b->refuse_why);
		b->refuse_why = xstrdup(json_object_get_string(
		    json_object_object_get(e, "reason")) != NULL ?
		    json_object_get_string(json_object_object_get(e,
		    "reason")) : "the broker refused a message this long");
		bridge_blame_size(b);
	}
	json_object_put(b->too_large);
	b->too_large = NULL;
	for (c = TAILQ_FIRST(&b->q.calls); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->sent && !c->read && now - c->sent_at <
		    BRIDGEC_STABLE_MS && ++c->kills >= BRIDGE_KILLS) {
			bridge_give_up(b, c);
			continue;
		}
		c->sent = 0;
		c->cancel_mark = 0;
	}
	bridgeio_room(&b->io);
}

/*
 * The broker went away: one line for the outage, its end completes it.
 * When the client is done, what the broker sent last is passed on.
 */
static int
bridge_lost(void *arg, short what, struct evbuffer *rest)
{
	struct bridge	*b = arg;

	if (b->io.eof) {
		bridgeio_write_buffer(&b->io, rest);
		bridge_end_if_done(b);
		return 0;
	}
	fprintf(stderr, "cmdgate mcp: broker lost (%s), reconnecting...",
	    what & BEV_EVENT_ERROR ? evutil_socket_error_to_string(
	    EVUTIL_SOCKET_ERROR()) : "it closed the connection");
	b->lost_at = util_monotonic_ms();
	bridge_blame(b, b->lost_at);
	return 1;
}

static void
bridge_broker_line_cb(void *arg, const char *line, size_t n)
{
	bridge_broker_line(arg, line, n);
}

static void
bridge_end_if_done(struct bridge *b)
{
	if (b->io.eof && !bridgec_open(&b->c) && bridgeio_flushed(&b->io))
		event_base_loopexit(b->base, NULL);
}

/* The client closed stdin: the bridge ends once the broker has answered. */
static void
bridge_client_eof(void *arg)
{
	struct bridge	*b = arg;

	if (bridgec_finish(&b->c))
		return;
	fprintf(stderr, " gave up: the client closed stdin\n");
	bridge_end_if_done(b);
}

/* The client's output is flushed: the end, once everything is. */
static void
bridge_flushed(void *arg)
{
	bridge_end_if_done(arg);
}

/* The client reads too little: read the broker no further meanwhile. */
static void
bridge_full(void *arg, int full)
{
	struct bridge	*b = arg;
	static int	 said;

	if (full && !said++)
		fprintf(stderr, "cmdgate mcp: the client leaves %d MiB of "
		    "answers unread; the bridge reads nothing more until it "
		    "reads them (said once)\n", BRIDGEIO_OUT_MAX / (1024 * 1024));
	bridgec_pause(&b->c, full);
}

/* The broker reads too little: read the client no further meanwhile. */
static void
bridge_broker_full(void *arg, int full)
{
	struct bridge	*b = arg;

	bridgeio_hold(&b->io, full);
}

/* Whether one more request may be read (a file is read no further). */
static int
bridge_has_room(void *arg)
{
	struct bridge	*b = arg;

	return callq_room(&b->q, 0);
}

static void
bridge_free(struct bridge *b)
{
	callq_clear(&b->q);
	free(b->init);
	free(b->level);
	free(b->refuse_why);
	json_object_put(b->too_large);
	bridgec_free(&b->c);
	bridgeio_free(&b->io);
	if (b->mark_ev != NULL)
		event_free(b->mark_ev);
	event_base_free(b->base);
}

/* The prefix of the bridge's own ids: random, so no client's is one. */
static void
bridge_own_prefix(struct bridge *b)
{
	uint32_t	r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)getpid() ^ (uint32_t)util_monotonic_ms();
	snprintf(b->own, sizeof(b->own), "cmdgate-bridge-%08x:", r);
}

int
cmd_mcp(struct cli *cl, int argc, char **argv)
{
	static const struct bridgeio_cb	 cb = { bridge_client_line,
					    bridge_client_eof, bridge_flushed,
					    bridge_has_room, bridge_full };
	static const struct bridgec_cb	 ccb = { bridge_up,
					    bridge_broker_line_cb, bridge_lost,
					    bridge_broker_full };
	struct bridge			 b;
	int				 rc = 0;

	(void)argv;
	if (argc != 1)
		return cli_usage_error("mcp takes no arguments%s", "");
	memset(&b, 0, sizeof(b));
	callq_init(&b.q);
	b.cl = cl;
	b.lost_at = -1;
	b.mark = 1;	/* 0: no mark (struct call's cancel_mark) */
	bridge_own_prefix(&b);
	signal(SIGPIPE, SIG_IGN);
	if ((b.base = event_base_new()) == NULL)
		return CX_UNAVAILABLE;
	if ((b.mark_ev = event_new(b.base, -1, 0, bridge_mark, &b)) == NULL ||
	    bridgec_init(&b.c, b.base, &cl->t, b.own, &ccb, &b) == -1 ||
	    bridgeio_open(&b.io, b.base, &cb, &b) == -1 ||
	    bridgec_attach(&b.c, &cl->c) == -1)
		rc = CX_UNAVAILABLE;
	else {
		bridgeio_start(&b.io);
		event_base_dispatch(b.base);
	}
	bridge_free(&b);
	return rc;
}
