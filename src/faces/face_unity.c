/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "addr.h"
#include "faces.h"
#include "jstrict.h"
#include "log.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "tools.h"
#include "util.h"

/* One command waiting for its job's news; its connection reads nothing
 * more until it is answered, so answers keep the requests' order. */
struct unity_req {
	struct conn		*conn;
	struct conn_pending	*pending;
	struct facejob		*fj;
	char			*tool;
	json_object		*params;	/* as the job got them */
};

/*
 * The reads answered from the last answer seen while the editor reloads,
 * and the face's state: one broker, one face state (the status file is
 * one per project, whatever the number of unity-mcp listeners).
 */
static const char	*unity_cached_tools[] = { "get_tool_states",
			    "get_editor_state", "get_project_info" };
#define UNITY_NCACHED	(sizeof(unity_cached_tools) / sizeof(char *))

static struct {
	json_object		*cache[UNITY_NCACHED];
	struct unitystatus	*status;
	struct edsub		*sub;
	struct server		*srv;
} uf;

static int	 unity_is_ping(const char *, size_t);
static void	 unity_send(struct conn *, json_object *);
static void	 unity_outer_error(struct conn *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	 unity_command(struct conn *, json_object *);
static int	 unity_cached(const char *);
static int	 unity_from_cache(struct conn *, const char *);
static void	 unity_run(struct conn *, const struct tool *, json_object *);
static void	 unity_news(void *, const struct facejob_news *);
static void	 unity_cancel(void *);
static void	 unity_req_free(struct unity_req *);
static json_object *unity_success(json_object *);
static json_object *unity_failure(const char *, const char *, json_object *);
static void	 unity_edstate(void *);
static int	 unity_bridge_port(const struct tooltab *);

void
unity_accept(struct conn *c)
{
	uint64_t	max = c->sh->opt->max_message;

	/* Sent before the framer turns to unity frames: a plain line. */
	conn_send_raw(c, UNITY_WELCOME, strlen(UNITY_WELCOME));
	/* --max-message bounds what a client makes the broker hold, as on
	 * every listener; the bridge's own limit when that is larger. */
	frame_init_unity(&c->fr, max < FRAME_UNITY_MAX ? (size_t)max :
	    FRAME_UNITY_MAX);
}

/*
 * The last word before closing (a refused peer, a bad frame): the bridge's
 * outer error, after the WELCOME line when it was not sent yet, so that
 * the client reads it as the answer to what it sends.
 */
void
unity_fail(struct conn *c, int code, const char *type, const char *reason)
{
	(void)code;
	/* The bridge closes an idle client without a word: a frame nobody
	 * asked for would be read as the answer to its next command. */
	if (strcmp(type, "idle_timeout") == 0)
		return;
	if (c->fr.mode != FRAME_UNITY)
		unity_accept(c);
	unity_outer_error(c, "cmdgate: %s: %s", type, reason);
}

/* The bridge answers "ping", white space around it allowed. */
static int
unity_is_ping(const char *buf, size_t len)
{
	while (len > 0 && isspace((unsigned char)*buf)) {
		buf++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	return len == 4 && memcmp(buf, "ping", 4) == 0;
}

/* Send msg (taken) compact, as the bridge does. */
static void
unity_send(struct conn *c, json_object *msg)
{
	conn_send(c, msg);
	json_object_put(msg);
}

/* The bridge's outer error: the client sends the command again. */
static void
unity_outer_error(struct conn *c, const char *fmt, ...)
{
	json_object	*o = json_object_new_object();
	va_list		 ap;
	char		 text[512];

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "status", json_object_new_string("error"));
	/* The text may quote a client's bytes, cut at a byte count. */
	json_object_object_add(o, "error", jstrict_string(text));
	unity_send(c, o);
}

void
unity_message(struct conn *c, const char *buf, size_t len)
{
	json_object	*msg;

	if (unity_is_ping(buf, len)) {
		msg = json_object_new_object();
		json_object_object_add(msg, "message",
		    json_object_new_string("pong"));
		unity_send(c, unity_success(msg));
		return;
	}
	if (jstrict_parse(buf, len, &msg) != 0 ||
	    !json_object_is_type(msg, json_type_object))
		unity_outer_error(c, "Invalid JSON format");
	else
		unity_command(c, msg);
	json_object_put(msg);
}

/* {"type": TOOL, "params": {...}}: outer errors for what is no command
 * or names no tool of the table, a face job for the rest. */
static void
unity_command(struct conn *c, json_object *msg)
{
	json_object		*type, *params = NULL;
	const struct tool	*t;
	const char		*name;

	if (!json_object_object_get_ex(msg, "type", &type) ||
	    !json_object_is_type(type, json_type_string)) {
		unity_outer_error(c, "a command needs \"type\", a string");
		return;
	}
	name = json_object_get_string(type);
	if ((t = tooltab_find(c->srv->tools, name)) == NULL) {
		unity_outer_error(c, "Unknown or unsupported command type: "
		    "%.100s (not in cmdgate's tool table)", name);
		return;
	}
	json_object_object_get_ex(msg, "params", &params);
	if (params != NULL && !json_object_is_type(params, json_type_object))
		unity_outer_error(c, "%s: \"params\" must be an object",
		    t->name);
	else if (!unity_from_cache(c, t->name))
		unity_run(c, t, params);
}

/* The index of tool in unity_cached_tools, or -1. */
static int
unity_cached(const char *tool)
{
	size_t	i;

	for (i = 0; i < UNITY_NCACHED; i++)
		if (strcmp(tool, unity_cached_tools[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * While the editor reloads, its state, tools and project are answered
 * from the last answer seen, marked "cached": true.  1 when answered.
 */
static int
unity_from_cache(struct conn *c, const char *tool)
{
	struct edstate	 es;
	json_object	*r = NULL;	/* json_object_deep_copy wants NULL */
	int		 i = unity_cached(tool);

	if (i < 0 || uf.cache[i] == NULL)
		return 0;
	edstate_get(c->srv, &es);
	if (!es.reloading)
		return 0;
	if (json_object_deep_copy(uf.cache[i], &r, NULL) != 0)
		fatalx("json_object_deep_copy: out of memory");
	json_object_object_add(r, "cached", json_object_new_boolean(1));
	unity_send(c, unity_success(r));
	return 1;
}

/* Run t as a face job; the connection waits for its answer. */
static void
unity_run(struct conn *c, const struct tool *t, json_object *params)
{
	struct facejob_req	 fr;
	struct unity_req	*ur = xcalloc(1, sizeof(*ur));
	struct rpc_req		 rr;
	json_object		*p = params != NULL ? json_object_get(params) :
				    json_object_new_object();

	memset(&rr, 0, sizeof(rr));
	rr.conn = c;
	rr.notification = 1;	/* answered here, not by conn_complete */
	rr.method = t->name;
	ur->conn = c;
	ur->tool = xstrdup(t->name);
	ur->params = p;
	ur->pending = conn_defer(&rr, unity_cancel, ur);
	conn_hold(c);
	memset(&fr, 0, sizeof(fr));
	fr.conn = c->id;
	fr.agent = UNITY_AGENT;
	fr.tool = t->name;
	fr.params = p;
	fr.hold_ms = c->sh->opt->unity_hold * 1000;
	/* A reload tool answers once the editor is back, never at first. */
	fr.want_first = t->nreload == 0 && !t->reload_always;
	if ((ur->fj = facejob_start(c->srv, &fr, unity_news, ur)) == NULL)
		fatalx("facejob_start: out of memory");
}

static void
unity_news(void *arg, const struct facejob_news *n)
{
	struct unity_req	*ur = arg;
	struct conn		*c = ur->conn;
	json_object		*r;
	int			 i = unity_cached(ur->tool);

	ur->fj = NULL;		/* nothing more comes */
	if (n->event == FJ_DONE && n->ok && i >= 0 && n->result != NULL &&
	    json_object_object_get_ex(n->result, "result", &r) &&
	    json_object_is_type(r, json_type_object)) {
		json_object_put(uf.cache[i]);
		uf.cache[i] = json_object_get(r);
	}
	if (n->event == FJ_FIRST)
		facejob_end_window(c->srv, c->id, UNITY_AGENT, ur->tool,
		    ur->params);
	unity_send(c, unity_answer(ur->tool, n));
	conn_complete(ur->pending, NULL, NULL);
	unity_req_free(ur);
	conn_unhold(c);
}

/* The connection went first: the job goes on, unanswered. */
static void
unity_cancel(void *arg)
{
	struct unity_req	*ur = arg;

	if (ur->fj != NULL)
		facejob_cancel(ur->fj);
	unity_req_free(ur);
}

static void
unity_req_free(struct unity_req *ur)
{
	json_object_put(ur->params);
	free(ur->tool);
	free(ur);
}

/* {"status":"success","result":r}, r taken. */
static json_object *
unity_success(json_object *r)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("success"));
	json_object_object_add(o, "result", r);
	return o;
}

/*
 * A failure the client must read rather than retry blindly: status
 * success, result.success false (the bridge's ErrorResponse: code, error,
 * data), and message, which MCP for Unity's tools show.  data taken.
 */
static json_object *
unity_failure(const char *code, const char *text, json_object *data)
{
	json_object	*r = json_object_new_object();

	json_object_object_add(r, "success", json_object_new_boolean(0));
	json_object_object_add(r, "code", json_object_new_string(code));
	json_object_object_add(r, "error", json_object_new_string(text));
	json_object_object_add(r, "message", json_object_new_string(text));
	json_object_object_add(r, "data", data);
	return unity_success(r);
}

/* The data of a failure: the ticket, and what says more. */
static json_object *
unity_data(const char *reason, const char *ticket)
{
	json_object	*d = json_object_new_object();

	json_object_object_add(d, "reason", json_object_new_string(reason));
	if (ticket != NULL)
		json_object_object_add(d, "ticket",
		    json_object_new_string(ticket));
	return d;
}

static json_object *
unity_held(const char *tool, const struct facejob_news *n)
{
	json_object	*d = unity_data("held", n->ticket), *o, *r;
	char		*text;

	text = xasprintf("held: %s is ticket %s, %s%s; it stays queued and "
	    "runs once: send the same command again to get its result (a "
	    "repeat joins the ticket, it does not run twice)", tool,
	    n->ticket, n->why != NULL ? n->why : "not done yet",
	    n->attached ? " (this was a repeat, joined to it)" : "");
	json_object_object_add(d, "held_by", json_object_new_string(
	    n->why != NULL ? n->why : ""));
	json_object_object_add(d, "retry_after_ms",
	    json_object_new_int(UNITY_RETRY_MS));
	o = unity_failure("held", text, d);
	json_object_object_get_ex(o, "result", &r);
	json_object_object_add(r, "hint", json_object_new_string("retry"));
	free(text);
	return o;
}

static json_object *
unity_refused(const char *tool, const struct facejob_news *n)
{
	json_object	*d = unity_data("refused", NULL), *o;
	char		*text;

	text = xasprintf("refused: %s: %s", tool, n->why != NULL ? n->why :
	    "refused");
	json_object_object_add(d, "error_type", json_object_new_string(
	    n->type != NULL ? n->type : "refused"));
	json_object_object_add(d, "code", json_object_new_int(n->code));
	o = unity_failure("refused", text, d);
	free(text);
	return o;
}

/* The command ended: the editor's answer, or why there is none. */
static json_object *
unity_done(const char *tool, const struct facejob_news *n)
{
	json_object	*cmd = n->result, *r = NULL, *v, *d;
	const char	*et = NULL, *err = NULL;
	char		*text;

	if (cmd != NULL) {
		json_object_object_get_ex(cmd, "result", &r);
		if (json_object_object_get_ex(cmd, "error_type", &v))
			et = json_object_get_string(v);
		if (json_object_object_get_ex(cmd, "error", &v))
			err = json_object_get_string(v);
	}
	/* The editor's own answer, success or the tool's own failure. */
	if (json_object_is_type(r, json_type_object) && (n->ok ||
	    (et != NULL && strcmp(et, "tool_failed") == 0)))
		return unity_success(json_object_get(r));
	/* Anything else that ran (an exec tool): its command result. */
	if (n->ok && cmd != NULL && !json_object_get_boolean(
	    json_object_object_get(cmd, "reloaded")))
		return unity_success(json_object_get(r != NULL ? r : cmd));
	d = unity_data(n->ok ? "done" : "failed", n->ticket);
	if (n->ok) {
		/* A reload tool whose editor reloaded: no answer came. */
		json_object_object_add(d, "reloaded",
		    json_object_new_boolean(1));
		r = json_object_new_object();
		json_object_object_add(r, "success",
		    json_object_new_boolean(1));
		text = xasprintf("%s done (ticket %s): the editor reloaded "
		    "and is back", tool, n->ticket);
		json_object_object_add(r, "message",
		    json_object_new_string(text));
		json_object_object_add(r, "data", d);
		free(text);
		return unity_success(r);
	}
	if (et != NULL)
		json_object_object_add(d, "error_type",
		    json_object_new_string(et));
	text = xasprintf("%s failed (ticket %s%s%s): %s", tool, n->ticket,
	    et != NULL ? ", " : "", et != NULL ? et : "", err != NULL ? err :
	    "no reason given");
	r = unity_failure(et != NULL ? et : "failed", text, d);
	free(text);
	return r;
}

json_object *
unity_answer(const char *tool, const struct facejob_news *n)
{
	switch (n->event) {
	case FJ_FIRST:
		return unity_success(json_object_get(n->result));
	case FJ_HELD:
		return unity_held(tool, n);
	case FJ_REFUSED:
		return unity_refused(tool, n);
	case FJ_DONE:
		break;
	}
	return unity_done(tool, n);
}

/* The port of the first unity-mcp bridge the table forwards to, or 0. */
static int
unity_bridge_port(const struct tooltab *tab)
{
	json_object	*d;
	const char	*port;
	size_t		 i;

	for (i = 0; i < tab->ntools; i++) {
		const struct tool *t = &tab->tools[i];

		if (t->forward == NULL || t->forward_json == NULL ||
		    !json_object_object_get_ex(t->forward_json, "dialect",
		    &d) || strcmp(json_object_get_string(d), "unity-mcp") != 0)
			continue;
		if (addr_split(t->forward, NULL, 0, &port) != -1)
			return atoi(port);
	}
	return 0;
}

static void
unity_edstate(void *arg)
{
	struct edstate	es;

	(void)arg;
	edstate_get(uf.srv, &es);
	unitystatus_set_reloading(uf.status, es.reloading);
}

/* The port of the first unity-mcp listener bound, or 0. */
static int
unity_listen_port(const struct server *srv)
{
	const char	*a, *port, *prefix = "unity-mcp@";
	size_t		 i;

	for (i = 0; i < json_object_array_length(srv->listen_addrs); i++) {
		a = json_object_get_string(json_object_array_get_idx(
		    srv->listen_addrs, i));
		if (strncmp(a, prefix, strlen(prefix)) == 0 &&
		    addr_split(a + strlen(prefix), NULL, 0, &port) != -1)
			return atoi(port);
	}
	return 0;
}

int
unity_face_start(struct server *srv, char *err, size_t errlen)
{
	const struct options	*opt = srv->opt;
	int			 port = unity_listen_port(srv), dirfd;

	if (uf.srv != NULL || opt->unity_status_dir == NULL || port == 0)
		return 0;
	if ((dirfd = unitystatus_open_dir(opt, err, errlen)) == -1)
		return -1;
	uf.srv = srv;
	uf.status = unitystatus_new(srv->base, opt, dirfd, port,
	    unity_bridge_port(srv->tools));
	uf.sub = edstate_subscribe(srv, unity_edstate, NULL);
	unity_edstate(NULL);
	log_info("unity-mcp face on port %d: status file in %s", port,
	    opt->unity_status_dir);
	return 0;
}

json_object *
unity_status_dir(const struct server *srv)
{
	char	abs[PATH_MAX];

	if (uf.srv != srv || uf.status == NULL)
		return NULL;
	if (realpath(srv->opt->unity_status_dir, abs) == NULL)
		return json_object_new_string(srv->opt->unity_status_dir);
	return json_object_new_string(abs);
}

void
unity_face_stop(struct server *srv)
{
	size_t	i;

	if (uf.srv != srv)
		return;
	edstate_unsubscribe(uf.sub);
	unitystatus_free(uf.status);
	for (i = 0; i < UNITY_NCACHED; i++) {
		json_object_put(uf.cache[i]);
		uf.cache[i] = NULL;
	}
	memset(&uf, 0, sizeof(uf));
}
