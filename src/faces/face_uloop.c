/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/queue.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "faces.h"
#include "jstrict.h"
#include "methods.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "tools.h"
#include "util.h"

/*
 * uLoopMCP's clients speak JSON-RPC 2.0 to the editor, one message per
 * line (up to v0.26) or Content-Length framed (the framer tells them
 * apart), with numeric or string ids, which are echoed as they came.
 * Errors carry their reason in error.message (the MCP server shows it)
 * and their type in error.data.message (the CLI adds it in parentheses:
 * the reason there too read "X (X)").  No answer of cmdgate's own
 * has "Ver": the CLI compares it with its own version and warns when
 * they differ, and says nothing when it is absent; a forwarded answer
 * keeps the editor's.
 */

/* One request being answered. */
struct ureq {
	struct conn	*conn;
	json_object	*id;		/* borrowed; NULL for id null */
	const char	*method;	/* borrowed */
	int		 notification;
};

/* A table tool's call, until its face job answers it. */
struct ucall {
	TAILQ_ENTRY(ucall)	 entry;
	struct uloop		*ul;
	json_object		*id;
	char			*tool;
	int			 notification;
	struct facejob		*fj;
};
TAILQ_HEAD(ucalls, ucall);

/* A connection's face state (conn->face_state). */
struct uloop {
	struct conn		*conn;
	struct ucalls		 calls;	/* as many as conn->face_waits */
	struct edsub		*sub;	/* the editor's state */
	int			 reloading; /* as last told */
};

typedef void	(*ul_fn)(struct ureq *, json_object *params);

static void	ul_ping(struct ureq *, json_object *);
static void	ul_set_name(struct ureq *, json_object *);
static void	ul_tool_details(struct ureq *, json_object *);
static void	ul_tool_names(struct ureq *, json_object *);
static void	ul_version(struct ureq *, json_object *);
static void	ul_answer(struct ureq *, json_object *result);
static void	ul_error(struct ureq *, int code, const char *type,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The methods the face answers itself, by every name the clients use. */
static const struct {
	const char	*name;
	ul_fn		 fn;
} ul_methods[] = {
	{ "ping", ul_ping },
	{ "set-client-name", ul_set_name },
	{ "setClientName", ul_set_name },
	{ "get-tool-details", ul_tool_details },
	{ "get-command-details", ul_tool_details },
	{ "getAvailableCommands", ul_tool_names },
	{ "getAvailableTools", ul_tool_names },
};

#define UL_NMETHODS	(sizeof(ul_methods) / sizeof(ul_methods[0]))

/*
 * The editor behind cmdgate began a reload, or is back: as the editor's
 * own server does, notifications/server/shutdown {reason: DomainReload}
 * (clients wait and retry rather than take it as gone), then
 * notifications/tools/list_changed once it is back (uLoopMCP's clients
 * read it as "ready again" and fetch the tools anew).
 */
static void
ul_edstate(void *arg)
{
	struct uloop	*ul = arg;
	struct edstate	 st;
	json_object	*p, *n;

	edstate_get(ul->conn->srv, &st);
	if (st.reloading == ul->reloading || ul->conn->closing)
		return;
	ul->reloading = st.reloading;
	if (!conn_hears(ul->conn))
		return;
	p = json_object_new_object();
	if (st.reloading) {
		json_object_object_add(p, "reason",
		    json_object_new_string("DomainReload"));
		n = rpc_notification("notifications/server/shutdown", p);
	} else
		n = rpc_notification("notifications/tools/list_changed", p);
	conn_send(ul->conn, n);
	json_object_put(n);
}

void
uloop_accept(struct conn *c)
{
	struct uloop	*ul = xcalloc(1, sizeof(*ul));
	struct edstate	 st;

	ul->conn = c;
	TAILQ_INIT(&ul->calls);
	c->face_state = ul;
	edstate_get(c->srv, &st);
	ul->reloading = st.reloading;
	ul->sub = edstate_subscribe(c->srv, ul_edstate, ul);
}

static void
ul_call_free(struct ucall *u)
{
	TAILQ_REMOVE(&u->ul->calls, u, entry);
	u->ul->conn->face_waits--;
	u->ul->conn->sh->npending--;
	json_object_put(u->id);
	free(u->tool);
	free(u);
}

/* The client is gone: its calls' jobs go on, unanswered. */
void
uloop_closed(struct conn *c)
{
	struct uloop	*ul = c->face_state;
	struct ucall	*u;

	if (ul == NULL)
		return;
	edstate_unsubscribe(ul->sub);
	while ((u = TAILQ_FIRST(&ul->calls)) != NULL) {
		facejob_cancel(u->fj);
		ul_call_free(u);
	}
	free(ul);
	c->face_state = NULL;
}

/* {"jsonrpc","id","error":{code, message: reason, data:{type, message:
 * type}}}. */
static json_object *
ul_error_response(json_object *id, int code, const char *type,
    const char *reason)
{
	json_object	*d;

	d = json_object_new_object();
	json_object_object_add(d, "type", json_object_new_string(type));
	json_object_object_add(d, "message", json_object_new_string(type));
	/* The reason may quote a method name cut at RPC_REASON_MAX bytes. */
	return rpc_error_envelope(id, code, jstrict_string(reason), d);
}

void
uloop_fail(struct conn *c, int code, const char *type, const char *reason)
{
	json_object	*r = ul_error_response(NULL, code, type, reason);

	conn_send(c, r);
	json_object_put(r);
}

static void
ul_answer(struct ureq *q, json_object *result)
{
	json_object	*r;

	if (q->notification) {
		json_object_put(result);
		return;
	}
	r = json_object_new_object();
	json_object_object_add(r, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(r, "id", json_object_get(q->id));
	json_object_object_add(r, "result", result);
	conn_send(q->conn, r);
	json_object_put(r);
}

static void
ul_error(struct ureq *q, int code, const char *type, const char *fmt, ...)
{
	char		 reason[RPC_REASON_MAX];
	json_object	*r;
	va_list		 ap;

	if (q->notification)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	r = ul_error_response(q->id, code, type, reason);
	conn_send(q->conn, r);
	json_object_put(r);
}

/* ping {Message}: {Message}, as the editor answers it, naming cmdgate. */
static void
ul_ping(struct ureq *q, json_object *params)
{
	json_object	*r = json_object_new_object(), *m;
	const char	*msg = "";
	char		*s;

	if (json_object_object_get_ex(params, "Message", &m) &&
	    json_object_is_type(m, json_type_string))
		msg = json_object_get_string(m);
	s = xasprintf("cmdgate received: %s", msg);
	json_object_object_add(r, "Message", json_object_new_string(s));
	free(s);
	ul_answer(q, r);
}

/*
 * set-client-name {ClientName}: the connection's agent, for its jobs.
 * The empty name is allowed (clients send it); control characters and
 * names over CONN_NAME_MAX characters are not.
 */
static void
ul_set_name(struct ureq *q, json_object *params)
{
	struct conn	*c = q->conn;
	json_object	*r, *v;
	const char	*name;

	if (!json_object_object_get_ex(params, "ClientName", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		ul_error(q, RPC_INVALID_PARAMS, "invalid_params", "%s needs "
		    "\"ClientName\", a string", q->method);
		return;
	}
	name = json_object_get_string(v);
	if (*name != '\0' && !param_name_ok(name)) {
		ul_error(q, RPC_INVALID_PARAMS, "invalid_params", "a client "
		    "name has at most %d printable characters", CONN_NAME_MAX);
		return;
	}
	free(c->name);
	c->name = xstrdup(name);
	/* A named client is a long-lived server: never idle. */
	c->session = 1;
	r = json_object_new_object();
	json_object_object_add(r, "Message", json_object_new_string(
	    "Client name registered"));
	json_object_object_add(r, "ClientName", json_object_new_string(name));
	ul_answer(q, r);
}

/* A JSON Schema type as uLoopMCP names it; unknown ones are strings. */
static const char *
ul_type(json_object *prop)
{
	static const char	*same[] = { "string", "number", "boolean",
				    "array", "object" };
	json_object		*t, *e;
	const char		*s = NULL;
	size_t			 i;

	if (!json_object_object_get_ex(prop, "type", &t))
		return "string";
	if (json_object_is_type(t, json_type_string))
		s = json_object_get_string(t);
	else if (json_object_is_type(t, json_type_array))
		/* ["integer", "null"]: the first that is not null. */
		for (i = 0; i < json_object_array_length(t); i++) {
			e = json_object_array_get_idx(t, i);
			if (json_object_is_type(e, json_type_string) &&
			    strcmp(json_object_get_string(e), "null") != 0) {
				s = json_object_get_string(e);
				break;
			}
		}
	if (s == NULL)
		return "string";
	if (strcmp(s, "integer") == 0)
		return "number";
	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (strcmp(s, same[i]) == 0)
			return same[i];
	return "string";
}

/* One property of a JSON Schema as uLoopMCP's ParameterInfo. */
static json_object *
ul_param_info(json_object *prop)
{
	json_object	*p = json_object_new_object(), *v;

	json_object_object_add(p, "Type", json_object_new_string(
	    ul_type(prop)));
	json_object_object_add(p, "Description",
	    json_object_object_get_ex(prop, "description", &v) &&
	    json_object_is_type(v, json_type_string) ? json_object_get(v) :
	    json_object_new_string(""));
	json_object_object_add(p, "DefaultValue",
	    json_object_object_get_ex(prop, "default", &v) ?
	    json_object_get(v) : NULL);
	json_object_object_add(p, "Enum",
	    json_object_object_get_ex(prop, "enum", &v) &&
	    json_object_is_type(v, json_type_array) ? json_object_get(v) :
	    NULL);
	return p;
}

/* A tool's params schema as {Properties: {P: ParameterInfo}, Required}. */
static json_object *
ul_param_schema(const struct tool *t)
{
	json_object	*s = json_object_new_object(), *props, *req, *p;

	props = json_object_new_object();
	if (t->params != NULL &&
	    json_object_object_get_ex(t->params, "properties", &p) &&
	    json_object_is_type(p, json_type_object)) {
		json_object_object_foreach(p, key, val)
			json_object_object_add(props, key,
			    ul_param_info(val));
	}
	json_object_object_add(s, "Properties", props);
	if (t->params != NULL &&
	    json_object_object_get_ex(t->params, "required", &req) &&
	    json_object_is_type(req, json_type_array))
		json_object_object_add(s, "Required", json_object_get(req));
	else
		json_object_object_add(s, "Required",
		    json_object_new_array());
	return s;
}

/*
 * The face's own get-version as a ToolInfo: the CLI calls it before each
 * command, and after "uloop sync" takes a method it was not told of for
 * an unknown tool.  Caller puts.
 */
static json_object *
ul_version_info(void)
{
	json_object	*ti = json_object_new_object(), *ps;

	ps = json_object_new_object();
	json_object_object_add(ps, "Properties", json_object_new_object());
	json_object_object_add(ps, "Required", json_object_new_array());
	json_object_object_add(ti, "name", json_object_new_string(
	    "get-version"));
	json_object_object_add(ti, "description", json_object_new_string(
	    "cmdgate's version and the project's DataPath (--unity-project)"));
	json_object_object_add(ti, "parameterSchema", ps);
	json_object_object_add(ti, "displayDevelopmentOnly",
	    json_object_new_boolean(0));
	return ti;
}

/* The table's enabled tools as uLoopMCP's ToolInfo objects.  Caller puts. */
static json_object *
ul_tool_infos(const struct tooltab *tab)
{
	json_object	*list = json_object_new_array(), *ti;
	size_t		 i;

	for (i = 0; i < tab->ntools; i++) {
		const struct tool *t = &tab->tools[i];

		if (!t->enabled)
			continue;
		ti = json_object_new_object();
		json_object_object_add(ti, "name",
		    json_object_new_string(t->name));
		json_object_object_add(ti, "description",
		    json_object_new_string(t->description));
		json_object_object_add(ti, "parameterSchema",
		    ul_param_schema(t));
		json_object_object_add(ti, "displayDevelopmentOnly",
		    json_object_new_boolean(0));
		json_object_array_add(list, ti);
	}
	if (tooltab_find(tab, "get-version") == NULL)
		json_object_array_add(list, ul_version_info());
	return list;
}

/* get-tool-details {IncludeDevelopmentOnly}: {Tools: [ToolInfo]}. */
static void
ul_tool_details(struct ureq *q, json_object *params)
{
	json_object	*r = json_object_new_object();

	(void)params;
	json_object_object_add(r, "Tools",
	    ul_tool_infos(q->conn->srv->tools));
	ul_answer(q, r);
}

/* The older getAvailableCommands: the enabled tools' names. */
static void
ul_tool_names(struct ureq *q, json_object *params)
{
	const struct tooltab	*tab = q->conn->srv->tools;
	json_object		*r = json_object_new_array();
	size_t			 i;

	(void)params;
	for (i = 0; i < tab->ntools; i++)
		if (tab->tools[i].enabled)
			json_object_array_add(r, json_object_new_string(
			    tab->tools[i].name));
	ul_answer(q, r);
}

/*
 * get-version, when the table has no get-version tool (which forwards it
 * to the editor, whose answer has the project's DataPath): cmdgate's,
 * with the DataPath of --unity-project, which the CLI checks against its
 * own project (without one it warns on every command).
 */
static void
ul_version(struct ureq *q, json_object *params)
{
	const char	*project = q->conn->srv->opt->unity_project;
	json_object	*r = json_object_new_object();
	char		*data;

	(void)params;
	json_object_object_add(r, "Product", json_object_new_string(
	    "cmdgate"));
	json_object_object_add(r, "CmdgateVersion", json_object_new_string(
	    PACKAGE_VERSION));
	if (project != NULL) {
		data = xasprintf("%s/Assets", project);
		json_object_object_add(r, "DataPath",
		    json_object_new_string(data));
		free(data);
	}
	ul_answer(q, r);
}

/* An error naming the ticket, and the command result when there is one. */
static void
ul_job_error(struct ureq *q, int code, const char *type, const char *ticket,
    json_object *result, const char *reason)
{
	json_object	*r, *d;

	if (q->notification)
		return;
	r = ul_error_response(q->id, code, type, reason);
	d = json_object_object_get(json_object_object_get(r, "error"), "data");
	if (ticket != NULL)
		json_object_object_add(d, "ticket",
		    json_object_new_string(ticket));
	if (result != NULL)
		json_object_object_add(d, "result", json_object_get(result));
	conn_send(q->conn, r);
	json_object_put(r);
}

/*
 * The job ended: the tool's own result (a forward tool's upstream answer,
 * kept when the editor said it failed), or the upstream's own error as
 * it sent it, or an error saying why the command failed.
 */
static void
ul_done(struct ureq *q, const struct facejob_news *n)
{
	json_object	*res = n->result, *v, *r;
	const char	*why, *type;
	char		 reason[RPC_REASON_MAX];

	type = json_object_get_string(json_object_object_get(res,
	    "error_type"));
	/* The editor's own "it failed" answer is an answer too. */
	if ((n->ok || (type != NULL && strcmp(type, "tool_failed") == 0)) &&
	    json_object_object_get_ex(res, "result", &v) && v != NULL) {
		ul_answer(q, json_object_get(v));
		return;
	}
	if (n->ok) {
		ul_answer(q, json_object_get(res));
		return;
	}
	if (json_object_object_get_ex(res, "upstream_error", &v) &&
	    json_object_is_type(v, json_type_object) && !q->notification) {
		r = json_object_new_object();
		json_object_object_add(r, "jsonrpc",
		    json_object_new_string("2.0"));
		json_object_object_add(r, "id", json_object_get(q->id));
		json_object_object_add(r, "error", json_object_get(v));
		conn_send(q->conn, r);
		json_object_put(r);
		return;
	}
	why = json_object_get_string(json_object_object_get(res, "error"));
	snprintf(reason, sizeof(reason), "%s failed (cmdgate ticket %s): %s",
	    q->method, n->ticket, why != NULL ? why : "no reason given");
	ul_job_error(q, RPC_INTERNAL_ERROR, type != NULL ? type :
	    "tool_failed", n->ticket, res, reason);
}

/* Still queued or running after --uloop-hold: say so before they go. */
static void
ul_held(struct ureq *q, const struct facejob_news *n)
{
	char	reason[RPC_REASON_MAX];

	snprintf(reason, sizeof(reason), "%s is held by cmdgate as ticket "
	    "%s (%s); the job goes on and runs once: call %s again with the "
	    "same parameters to get its result", q->method, n->ticket,
	    n->why != NULL ? n->why : "queued", q->method);
	ul_job_error(q, RPC_HELD, "held", n->ticket, NULL, reason);
}

static void
ul_news(void *arg, const struct facejob_news *n)
{
	struct ucall	*u = arg;
	struct ureq	 q;

	memset(&q, 0, sizeof(q));
	q.conn = u->ul->conn;
	q.id = u->id;
	q.method = u->tool;
	q.notification = u->notification;
	switch (n->event) {
	case FJ_DONE:
		ul_done(&q, n);
		break;
	case FJ_FIRST:		/* not asked for (want_first 0) */
		ul_answer(&q, json_object_get(n->result));
		break;
	case FJ_HELD:
		ul_held(&q, n);
		break;
	case FJ_REFUSED:
		ul_job_error(&q, n->code, n->type != NULL ? n->type :
		    "invalid_params", NULL, NULL, n->why != NULL ? n->why :
		    "refused");
		break;
	}
	q.conn->active_ms = util_monotonic_ms();
	ul_call_free(u);
}

/* A table tool called by its name: a face job, answered from its news. */
static void
ul_call(struct ureq *q, const struct tool *t, json_object *params)
{
	struct conn		*c = q->conn;
	struct uloop		*ul = c->face_state;
	const struct options	*opt = c->sh->opt;
	struct facejob_req	 req;
	struct ucall		*u;

	if (c->face_waits >= opt->max_waits) {
		ul_error(q, RPC_QUEUE_FULL, "too_many_waits", "this connection "
		    "already waits for %zu calls (--max-waits %llu): take "
		    "some of their answers first", c->face_waits,
		    (unsigned long long)opt->max_waits);
		return;
	}
	if (c->sh->npending >= opt->max_waits_total) {
		ul_error(q, RPC_QUEUE_FULL, "too_many_waits", "the broker "
		    "already holds %zu answers for its clients "
		    "(--max-waits-total %llu): try again later",
		    c->sh->npending, (unsigned long long)opt->max_waits_total);
		return;
	}
	u = xcalloc(1, sizeof(*u));
	u->ul = ul;
	u->id = json_object_get(q->id);
	u->tool = xstrdup(t->name);
	u->notification = q->notification;
	TAILQ_INSERT_TAIL(&ul->calls, u, entry);
	c->face_waits++;
	c->sh->npending++;
	memset(&req, 0, sizeof(req));
	req.conn = c->id;
	req.agent = c->name != NULL ? c->name : "";
	req.tool = t->name;
	req.params = params;
	req.hold_ms = opt->uloop_hold * 1000;
	if ((u->fj = facejob_start(c->srv, &req, ul_news, u)) == NULL) {
		ul_call_free(u);
		ul_error(q, RPC_INTERNAL_ERROR, "internal_error", "out of "
		    "memory: %s was not run", t->name);
	}
}

static void
ul_dispatch(struct ureq *q, json_object *params)
{
	const struct tool	*t;
	size_t			 i;

	for (i = 0; i < UL_NMETHODS; i++)
		if (strcmp(q->method, ul_methods[i].name) == 0) {
			ul_methods[i].fn(q, params);
			return;
		}
	t = tooltab_find(q->conn->srv->tools, q->method);
	if (t != NULL && t->enabled) {
		ul_call(q, t, params);
		return;
	}
	if (strcmp(q->method, "get-version") == 0) {
		ul_version(q, params);
		return;
	}
	ul_error(q, RPC_METHOD_NOT_FOUND, "method_not_found", "no method or "
	    "tool '%s' here%s; get-tool-details lists the tools", q->method,
	    t != NULL ? " (the tool is disabled in cmdgate's table)" : "");
}

void
uloop_message(struct conn *c, const char *buf, size_t len)
{
	struct ureq		 q;
	struct rpc_error	 err;
	json_object		*msg, *params, *r;
	int			 rc;

	memset(&q, 0, sizeof(q));
	q.conn = c;
	if ((rc = jstrict_parse(buf, len, &msg)) != 0) {
		r = ul_error_response(NULL, RPC_PARSE_ERROR, "parse_error",
		    jstrict_strerror(rc));
		conn_send(c, r);
		json_object_put(r);
		return;
	}
	memset(&err, 0, sizeof(err));
	if (rpc_check(msg, &q.id, &q.method, &q.notification, &err) == -1 ||
	    rpc_check_params(msg, &params, &err) == -1) {
		/* An invalid request is answered, whatever its id said. */
		q.notification = 0;
		ul_error(&q, err.code, err.type, "%s", err.reason);
	} else if (params == NULL) {
		params = json_object_new_object();
		ul_dispatch(&q, params);
		json_object_put(params);
	} else
		ul_dispatch(&q, params);
	json_object_put(msg);
}
