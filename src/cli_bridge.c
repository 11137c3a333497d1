/* SPDX-License-Identifier: ISC */
/* cmdgate mcp: cmdgate(1) as an MCP stdio server, bridged to the broker. */
#include "config.h"

#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <errno.h>
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
#include "cli_bridge.h"
#include "client.h"
#include "jsonl.h"
#include "jstrict.h"
#include "util.h"

/*
 * The bridge follows the client's requests until they are answered, so
 * that it can outlive the broker: when the connection is lost it
 * connects again, says again what the client said at the start (its
 * initialize, notifications/initialized, logging/setLevel) and sends
 * every unanswered request again.  A tools/call carries an idempotency
 * key (the bridge gives it one), so that sent again it runs once.
 */
#define BRIDGE_ID	"cmdgate-bridge:"	/* its own requests' ids */
#define IDEM_META	"cmdgate/idempotency_key"
#define IDEM_BYTES	16			/* random, sent as hex */
#define JSON_FLAGS	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum call_kind { CALL_OTHER, CALL_INIT, CALL_LEVEL, CALL_TOOLS };

/* A request of the client's that the broker has not answered yet. */
struct call {
	TAILQ_ENTRY(call)	 entry;
	char			*id;	/* its id, as JSON */
	char			*line;	/* the request as sent, key and all */
	enum call_kind		 kind;
};
TAILQ_HEAD(calls, call);

struct bridge {
	struct event_base	*base;
	struct bufferevent	*in, *out, *sock;	/* sock: NULL when lost */
	struct event		*retry;
	struct cli		*cl;
	struct calls		 calls;		/* unanswered, oldest first */
	char			*init;		/* the answered initialize */
	char			*level;		/* the last logging/setLevel */
	int			 initialized;	/* notifications/initialized */
	uint64_t		 tools_seen;	/* hash of its last tools; 0 */
	int64_t			 lost_at;	/* -1: connected */
	int64_t			 delay;		/* before the next try */
	int			 stdin_done;
};

static void	bridge_sock(struct bufferevent *, void *);
static void	bridge_sock_flushed(struct bufferevent *, void *);
static void	bridge_sock_event(struct bufferevent *, short, void *);

/* 64-bit FNV-1a: enough to see that a tool list changed. */
static uint64_t
bridge_hash(const char *s)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h != 0 ? h : 1;
}

/* line (n bytes) and a newline to the broker; nothing while it is lost. */
static void
bridge_send(struct bridge *b, const char *line, size_t n)
{
	if (b->sock == NULL)
		return;
	bufferevent_write(b->sock, line, n);
	bufferevent_write(b->sock, "\n", 1);
}

static void
bridge_to_client(struct bridge *b, const char *line, size_t n)
{
	bufferevent_write(b->out, line, n);
	bufferevent_write(b->out, "\n", 1);
}

static struct call *
call_find(struct bridge *b, json_object *id)
{
	const char	*s = json_object_to_json_string_ext(id, JSON_FLAGS);
	struct call	*c;

	TAILQ_FOREACH(c, &b->calls, entry)
		if (strcmp(c->id, s) == 0)
			return c;
	return NULL;
}

static void
call_free(struct bridge *b, struct call *c)
{
	TAILQ_REMOVE(&b->calls, c, entry);
	free(c->id);
	free(c->line);
	free(c);
}

/*
 * Give a tools/call a key of its own in params._meta, unless the client
 * gave one (the broker judges that).
 */
static void
bridge_key(json_object *msg)
{
	json_object	*params, *meta;
	unsigned char	 raw[IDEM_BYTES];
	char		 hex[2 * IDEM_BYTES + 1];
	size_t		 i;

	if (!json_object_object_get_ex(msg, "params", &params) ||
	    !json_object_is_type(params, json_type_object))
		return;
	if (!json_object_object_get_ex(params, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(params, "_meta", meta);
	}
	if (!json_object_is_type(meta, json_type_object) ||
	    json_object_object_get_ex(meta, IDEM_META, NULL))
		return;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		fprintf(stderr, "cmdgate mcp: getrandom: %s: a tools/call "
		    "goes without its key\n", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	json_object_object_add(meta, IDEM_META, json_object_new_string(hex));
}

static enum call_kind
call_kind(const char *method)
{
	if (strcmp(method, "initialize") == 0)
		return CALL_INIT;
	if (strcmp(method, "logging/setLevel") == 0)
		return CALL_LEVEL;
	if (strcmp(method, "tools/list") == 0)
		return CALL_TOOLS;
	return CALL_OTHER;
}

/* Follow the client's request msg (its line), and send it. */
static void
bridge_request(struct bridge *b, json_object *msg, const char *method,
    json_object *id, const char *line)
{
	struct call	*c = xcalloc(1, sizeof(*c));

	if (strcmp(method, "tools/call") == 0) {
		bridge_key(msg);
		line = json_object_to_json_string_ext(msg, JSON_FLAGS);
	}
	c->id = xstrdup(json_object_to_json_string_ext(id, JSON_FLAGS));
	c->line = xstrdup(line);
	c->kind = call_kind(method);
	TAILQ_INSERT_TAIL(&b->calls, c, entry);
	bridge_send(b, c->line, strlen(c->line));
}

/* A notification of the client's: what a reconnection needs of it. */
static void
bridge_notice(struct bridge *b, json_object *msg, const char *method)
{
	json_object	*params, *rid;
	struct call	*c;

	if (strcmp(method, "notifications/initialized") == 0)
		b->initialized = 1;
	else if (strcmp(method, "notifications/cancelled") == 0 &&
	    json_object_object_get_ex(msg, "params", &params) &&
	    json_object_object_get_ex(params, "requestId", &rid) &&
	    (c = call_find(b, rid)) != NULL)
		call_free(b, c);	/* the broker will not answer it */
}

/*
 * A line from the client: a request is followed; anything else goes as
 * it is (and is lost while the broker is).
 */
static void
bridge_client_line(struct bridge *b, const char *line, size_t n)
{
	json_object	*msg = NULL, *m, *id;
	const char	*method = NULL;

	if (jstrict_parse(line, n, &msg) == 0 &&
	    json_object_object_get_ex(msg, "method", &m) &&
	    json_object_is_type(m, json_type_string))
		method = json_object_get_string(m);
	if (method != NULL && json_object_object_get_ex(msg, "id", &id))
		bridge_request(b, msg, method, id, line);
	else {
		if (method != NULL)
			bridge_notice(b, msg, method);
		bridge_send(b, line, n);
	}
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
			b->init = c->line;
			c->line = NULL;
			break;
		case CALL_LEVEL:
			free(b->level);
			b->level = c->line;
			c->line = NULL;
			break;
		case CALL_TOOLS:
			b->tools_seen = bridge_hash(
			    json_object_to_json_string_ext(r, JSON_FLAGS));
			break;
		default:
			break;
		}
	}
	call_free(b, c);
}

/*
 * The answer to a request of the bridge's own: not the client's.  The
 * tool list fetched on reconnecting tells whether it changed.
 */
static void
bridge_own_answer(struct bridge *b, json_object *msg, const char *id)
{
	static const char	 changed[] = "{\"jsonrpc\":\"2.0\",\"method\":"
				    "\"notifications/tools/list_changed\"}";
	json_object		*r;
	uint64_t		 h;

	if (json_object_object_get_ex(msg, "error", &r)) {
		fprintf(stderr, "cmdgate mcp: the broker refused the %s the "
		    "bridge sent again: %s\n", id + strlen(BRIDGE_ID),
		    json_object_to_json_string_ext(r, JSON_FLAGS));
		return;
	}
	if (strcmp(id, BRIDGE_ID "tools") != 0 ||
	    !json_object_object_get_ex(msg, "result", &r))
		return;
	h = bridge_hash(json_object_to_json_string_ext(r, JSON_FLAGS));
	if (b->tools_seen != 0 && h != b->tools_seen)
		bridge_to_client(b, changed, sizeof(changed) - 1);
	b->tools_seen = h;
}

/* A line from the broker: to the client, unless the bridge asked. */
static void
bridge_broker_line(struct bridge *b, const char *line, size_t n)
{
	json_object	*msg = NULL, *id;
	struct call	*c;

	if (jstrict_parse(line, n, &msg) == 0 &&
	    !json_object_object_get_ex(msg, "method", NULL) &&
	    json_object_object_get_ex(msg, "id", &id)) {
		if (json_object_is_type(id, json_type_string) &&
		    strncmp(json_object_get_string(id), BRIDGE_ID,
		    strlen(BRIDGE_ID)) == 0) {
			bridge_own_answer(b, msg, json_object_get_string(id));
			json_object_put(msg);
			return;
		}
		if ((c = call_find(b, id)) != NULL)
			bridge_answered(b, c, msg);
	}
	json_object_put(msg);
	bridge_to_client(b, line, n);
}

/* Send request line again, under the bridge's own id. */
static void
bridge_resend(struct bridge *b, const char *line, const char *id)
{
	json_object	*msg;
	const char	*s;

	if (jstrict_parse_str(line, &msg) != 0)
		return;
	json_object_object_add(msg, "id", json_object_new_string(id));
	s = json_object_to_json_string_ext(msg, JSON_FLAGS);
	bridge_send(b, s, strlen(s));
	json_object_put(msg);
}

/*
 * To a new connection: what the client said at the start, a tools/list
 * of the bridge's own when the client saw one, then every request still
 * unanswered (a tools/call with its key: the broker finds its job).
 */
static void
bridge_replay(struct bridge *b)
{
	static const char	 inited[] = "{\"jsonrpc\":\"2.0\",\"method\":"
				    "\"notifications/initialized\"}";
	static const char	 tools[] = "{\"jsonrpc\":\"2.0\",\"id\":\""
				    BRIDGE_ID "tools\",\"method\":"
				    "\"tools/list\",\"params\":{}}";
	struct call		*c;

	if (b->init != NULL)
		bridge_resend(b, b->init, BRIDGE_ID "initialize");
	if (b->initialized)
		bridge_send(b, inited, sizeof(inited) - 1);
	if (b->level != NULL)
		bridge_resend(b, b->level, BRIDGE_ID "logging/setLevel");
	if (b->tools_seen != 0)
		bridge_send(b, tools, sizeof(tools) - 1);
	TAILQ_FOREACH(c, &b->calls, entry)
		bridge_send(b, c->line, strlen(c->line));
}

/*
 * Take the connection cl->c made, and what it read past the
 * authentication: 0, or -1.
 */
static int
bridge_attach(struct bridge *b)
{
	struct cg_client	*c = &b->cl->c;
	const char		*rest;
	size_t			 n = 0;

	evutil_make_socket_nonblocking(c->fd);
	if ((b->sock = bufferevent_socket_new(b->base, c->fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return -1;
	c->fd = -1;	/* the bridge owns it now */
	if ((rest = jsonl_rest(&c->jl, &n)) != NULL && n > 0)
		evbuffer_add(bufferevent_get_input(b->sock), rest, n);
	bufferevent_setcb(b->sock, bridge_sock, bridge_sock_flushed,
	    bridge_sock_event, b);
	bufferevent_enable(b->sock, EV_READ | EV_WRITE);
	if (n > 0)
		bridge_sock(b->sock, b);
	return 0;
}

static void
bridge_arm(struct bridge *b)
{
	struct timeval	tv;

	tv.tv_sec = b->delay / 1000;
	tv.tv_usec = (b->delay % 1000) * 1000;
	evtimer_add(b->retry, &tv);
}

/* One try to get back to the broker; the next one later. */
static void
bridge_retry(evutil_socket_t fd, short what, void *arg)
{
	struct bridge	*b = arg;

	(void)fd;
	(void)what;
	cg_close(&b->cl->c);
	if (cg_connect(&b->cl->c, &b->cl->t) != 0 || bridge_attach(b) == -1) {
		b->delay = b->delay * 2 > CG_RETRY_MAX_MS ? CG_RETRY_MAX_MS :
		    b->delay * 2;
		bridge_arm(b);
		return;
	}
	fprintf(stderr, " reconnected after %lld s\n",
	    (long long)(util_monotonic_ms() - b->lost_at + 500) / 1000);
	b->lost_at = -1;
	bridge_replay(b);
}

/* The broker went away: one line for the outage, its end completes it. */
static void
bridge_lost(struct bridge *b, short what)
{
	fprintf(stderr, "cmdgate mcp: broker lost (%s), reconnecting...",
	    what & BEV_EVENT_ERROR ? evutil_socket_error_to_string(
	    EVUTIL_SOCKET_ERROR()) : "it closed the connection");
	bufferevent_free(b->sock);
	b->sock = NULL;
	b->lost_at = util_monotonic_ms();
	b->delay = CG_RETRY_FIRST_MS;
	bridge_arm(b);
}

static void
bridge_stdin(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	char		*line;
	size_t		 n;

	while ((line = evbuffer_readln(bufferevent_get_input(bev), &n,
	    EVBUFFER_EOL_LF)) != NULL) {
		bridge_client_line(b, line, n);
		free(line);
	}
}

static void
bridge_sock(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;
	char		*line;
	size_t		 n;

	while ((line = evbuffer_readln(bufferevent_get_input(bev), &n,
	    EVBUFFER_EOL_LF)) != NULL) {
		bridge_broker_line(b, line, n);
		free(line);
	}
}

static void
bridge_sock_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	/* The client is done and all it said has gone: half-close. */
	if (b->stdin_done)
		shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void
bridge_out_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	(void)bev;
	if (b->sock == NULL && b->stdin_done)
		event_base_loopexit(b->base, NULL);
}

/* The client closed stdin: the bridge ends once the broker has answered. */
static void
bridge_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	char		*last;
	size_t		 n;

	(void)what;
	bufferevent_disable(bev, EV_READ);
	b->stdin_done = 1;
	if ((n = evbuffer_get_length(in)) > 0) {	/* without its newline */
		last = xmalloc(n + 1);
		evbuffer_remove(in, last, n);
		last[n] = '\0';
		bridge_client_line(b, last, n);
		free(last);
	}
	if (b->sock != NULL) {
		if (evbuffer_get_length(bufferevent_get_output(b->sock)) == 0)
			shutdown(bufferevent_getfd(b->sock), SHUT_WR);
		return;
	}
	fprintf(stderr, " gave up: the client closed stdin\n");
	evtimer_del(b->retry);
	if (evbuffer_get_length(bufferevent_get_output(b->out)) == 0)
		event_base_loopexit(b->base, NULL);
}

static void
bridge_sock_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;

	if (!b->stdin_done) {
		bridge_lost(b, what);
		return;
	}
	bufferevent_write_buffer(b->out, bufferevent_get_input(bev));
	bufferevent_free(bev);
	b->sock = NULL;
	if (evbuffer_get_length(bufferevent_get_output(b->out)) == 0)
		event_base_loopexit(b->base, NULL);
}

static void
bridge_free(struct bridge *b)
{
	while (!TAILQ_EMPTY(&b->calls))
		call_free(b, TAILQ_FIRST(&b->calls));
	free(b->init);
	free(b->level);
	if (b->retry != NULL)
		event_free(b->retry);
	if (b->in != NULL)
		bufferevent_free(b->in);
	if (b->out != NULL)
		bufferevent_free(b->out);
	if (b->sock != NULL)
		bufferevent_free(b->sock);
	event_base_free(b->base);
}

int
cmd_mcp(struct cli *cl, int argc, char **argv)
{
	struct bridge	 b;
	int		 rc = 0;

	(void)argv;
	if (argc != 1)
		return cli_usage_error("mcp takes no arguments%s", "");
	memset(&b, 0, sizeof(b));
	TAILQ_INIT(&b.calls);
	b.cl = cl;
	b.lost_at = -1;
	signal(SIGPIPE, SIG_IGN);
	if ((b.base = event_base_new()) == NULL)
		return CX_UNAVAILABLE;
	b.in = bufferevent_socket_new(b.base, 0, 0);
	b.out = bufferevent_socket_new(b.base, 1, 0);
	b.retry = evtimer_new(b.base, bridge_retry, &b);
	if (b.in != NULL && b.out != NULL && b.retry != NULL) {
		bufferevent_setcb(b.in, bridge_stdin, NULL, bridge_stdin_event,
		    &b);
		bufferevent_setcb(b.out, NULL, bridge_out_flushed, NULL, &b);
	}
	if (b.in == NULL || b.out == NULL || b.retry == NULL ||
	    bridge_attach(&b) == -1)
		rc = CX_UNAVAILABLE;
	else {
		bufferevent_enable(b.in, EV_READ);
		bufferevent_enable(b.out, EV_WRITE);
		event_base_dispatch(b.base);
	}
	bridge_free(&b);
	return rc;
}
