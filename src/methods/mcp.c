/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "server.h"
#include "tools.h"
#include "util.h"

/* The job methods that MCP clients may call as tools. */
static const struct {
	const char	*name;
	const char	*title;
	const char	*description;
	int		 read_only;	/* else idempotent, not destructive */
	const char	*schema;
} mcp_job_tools[] = {
	{ "poll_job", "Poll a job",
	  "Show a job: status, position, blocked_by, results", 1,
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"}},\"required\":[\"ticket\"]}" },
	{ "wait_job", "Wait for a job",
	  "Wait until a job finishes or timeout_s passes", 1,
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"},\"timeout_s\":{\"type\":\"integer\"}},"
	  "\"required\":[\"ticket\"]}" },
	{ "cancel_job", "Cancel a job", "Cancel a queued or running job", 0,
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"}},\"required\":[\"ticket\"]}" },
	{ "queue_status", "Queue status",
	  "Show what runs, what waits and what holds reloads", 1,
	  "{\"type\":\"object\"}" },
};

/* 2025-11-25's tasks capability: tools/call as a task, list, cancel. */
static json_object *
mcp_tasks_caps(void)
{
	json_object	*t = json_object_new_object(), *r, *tools;

	json_object_object_add(t, "list", json_object_new_object());
	json_object_object_add(t, "cancel", json_object_new_object());
	tools = json_object_new_object();
	json_object_object_add(tools, "call", json_object_new_object());
	r = json_object_new_object();
	json_object_object_add(r, "tools", tools);
	json_object_object_add(t, "requests", r);
	return t;
}

int
mcp_rev(struct rpc_req *req, json_object *params)
{
	(void)params;
	if (req->modern)
		return MCP_REV_2026;
	return req->conn->mcp_rev != 0 ? req->conn->mcp_rev : MCP_REV_OLD;
}

int
mcp_task_wanted(struct rpc_req *req, json_object *params, int *task,
    struct rpc_error *err)
{
	const struct tool	*tl = NULL;
	json_object		*t, *name;
	int			 rev = mcp_rev(req, params);

	*task = 0;
	if (json_object_object_get_ex(params, "name", &name))
		tl = tooltab_find(req->conn->srv->tools,
		    json_object_get_string(name));
	if (rev == MCP_REV_2026 && mcp_declares_tasks(params))
		*task = MCP_REV_2026;
	else if (rev == MCP_REV_2025 &&
	    json_object_object_get_ex(params, "task", &t)) {
		if (!json_object_is_type(t, json_type_object)) {
			rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
			    "\"task\" must be an object ({\"ttl\": ms})");
			return -1;
		}
		*task = MCP_REV_2025;
	}
	if (tl == NULL || tl->meta.task == TOOL_TASK_OPTIONAL)
		return 0;
	if (tl->meta.task == TOOL_TASK_FORBIDDEN) {
		*task = 0;
		return 0;
	}
	if (*task != 0) {
		*task |= MCP_TASK_ALWAYS;
		return 0;
	}
	if (rev == MCP_REV_2026)
		mcp_needs_tasks(err);
	else
		rpc_fail(err, RPC_INVALID_PARAMS, "task_required", "tool '%s' "
		    "runs only as a task: call it with \"task\" (MCP "
		    "2025-11-25) or the tasks extension (2026-07-28)", tl->name);
	return -1;
}

enum rpc_status
mcp_initialize(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn	*c = req->conn;
	json_object	*ci, *name, *caps, *tools, *info;
	const char	*want = NULL, *ver = mcp_version_newest();

	if (param_string(params, "protocolVersion", 0, &want, err) == -1)
		return RPC_ERROR;
	if (want != NULL && mcp_version_ok(want))
		ver = want;
	if (json_object_object_get_ex(params, "clientInfo", &ci) &&
	    json_object_object_get_ex(ci, "name", &name) &&
	    json_object_is_type(name, json_type_string) &&
	    param_name_ok(json_object_get_string(name))) {
		free(c->name);
		c->name = xstrdup(json_object_get_string(name));
	}
	tools = json_object_new_object();
	json_object_object_add(tools, "listChanged",
	    json_object_new_boolean(1));
	caps = json_object_new_object();
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(caps, "logging", json_object_new_object());
	c->mcp_rev = mcp_version_rev(ver);
	if (c->mcp_rev == MCP_REV_2025)
		json_object_object_add(caps, "tasks", mcp_tasks_caps());
	info = json_object_new_object();
	json_object_object_add(info, "name", json_object_new_string("cmdgate"));
	json_object_object_add(info, "version",
	    json_object_new_string(PACKAGE_VERSION));
	*result = json_object_new_object();
	json_object_object_add(*result, "protocolVersion",
	    json_object_new_string(ver));
	json_object_object_add(*result, "capabilities", caps);
	json_object_object_add(*result, "serverInfo", info);
	return RPC_OK;
}

const char *
mcp_client_name(json_object *params, const char *dflt)
{
	json_object	*meta, *ci, *name;

	if (json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta, MCP_META_CLIENT, &ci) &&
	    json_object_object_get_ex(ci, "name", &name) &&
	    json_object_is_type(name, json_type_string) &&
	    param_name_ok(json_object_get_string(name)))
		return json_object_get_string(name);
	return dflt;
}

int
mcp_declares_tasks(json_object *params)
{
	json_object	*meta, *caps, *ext, *t;

	return json_object_object_get_ex(params, "_meta", &meta) &&
	    json_object_object_get_ex(meta, MCP_META_CAPS, &caps) &&
	    json_object_object_get_ex(caps, "extensions", &ext) &&
	    json_object_object_get_ex(ext, MCP_EXT_TASKS, &t) &&
	    json_object_is_type(t, json_type_object);
}

/* The error of a task method asked without the extension declared. */
enum rpc_status
mcp_needs_tasks(struct rpc_error *err)
{
	json_object	*caps = json_object_new_object(), *ext;

	rpc_fail(err, RPC_MISSING_CAPABILITY, "missing_capability", "this "
	    "method is the tasks extension's: declare \"" MCP_EXT_TASKS
	    "\" in _meta's client capabilities (extensions)");
	ext = json_object_new_object();
	json_object_object_add(ext, MCP_EXT_TASKS, json_object_new_object());
	json_object_object_add(caps, "extensions", ext);
	err->data = json_object_new_object();
	json_object_object_add(err->data, "requiredCapabilities", caps);
	return RPC_ERROR;
}

/* A cacheable result (2026-07-28): not to be cached, as a SIGHUP may
 * change the tools any time, and the same for every client. */
static void
mcp_cacheable(json_object *res)
{
	json_object_object_add(res, "ttlMs", json_object_new_int(0));
	json_object_object_add(res, "cacheScope",
	    json_object_new_string("public"));
}

enum rpc_status
mcp_discover(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	json_object	*caps, *tools, *ext, *vs;

	(void)params;
	(void)err;
	tools = json_object_new_object();
	json_object_object_add(tools, "listChanged",
	    json_object_new_boolean(1));
	caps = json_object_new_object();
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(caps, "logging", json_object_new_object());
	ext = json_object_new_object();
	json_object_object_add(ext, MCP_EXT_TASKS, json_object_new_object());
	json_object_object_add(caps, "extensions", ext);
	vs = mcp_versions_json();	/* the older ones by initialize */
	*result = json_object_new_object();
	json_object_object_add(*result, "supportedVersions", vs);
	json_object_object_add(*result, "capabilities", caps);
	json_object_object_add(*result, "instructions", json_object_new_string(
	    "cmdgate runs each tool call as a job in a shared queue; "
	    "calls that wait become tasks, kept across restarts."));
	mcp_cacheable(*result);
	if (!req->modern) {	/* asked outside an envelope: say ours */
		json_object_object_add(*result, "resultType",
		    json_object_new_string("complete"));
	}
	return RPC_OK;
}

enum rpc_status
mcp_initialized(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	(void)req;
	(void)params;
	(void)err;
	*result = NULL;
	return RPC_OK;
}

/* One MCP tool entry; schema and annotations taken. */
static json_object *
mcp_tool(const char *name, const char *title, const char *description,
    json_object *schema, json_object *annotations)
{
	json_object	*t = json_object_new_object();

	json_object_object_add(t, "name", json_object_new_string(name));
	if (title != NULL)
		json_object_object_add(t, "title",
		    json_object_new_string(title));
	json_object_object_add(t, "description",
	    json_object_new_string(description));
	json_object_object_add(t, "inputSchema", schema);
	json_object_object_add(t, "annotations", annotations);
	return t;
}

/* Whether every tier t may take is instant. */
static int
mcp_instant(const struct tool *t)
{
	size_t	i;

	if (t->tier != TIER_INSTANT)
		return 0;
	for (i = 0; i < t->nrules; i++)
		if (t->rules[i].tier != TIER_INSTANT)
			return 0;
	return 1;
}

/*
 * t's MCP annotations: readOnlyHint for an instant tool that causes no
 * reload, destructiveHint for one that may, the table's title and
 * annotations over these.
 */
static json_object *
mcp_annotations(const struct tool *t)
{
	json_object	*a = json_object_new_object();
	int		 reload = t->reload_always || t->nreload > 0;

	if (t->meta.title != NULL)
		json_object_object_add(a, "title",
		    json_object_new_string(t->meta.title));
	json_object_object_add(a, "readOnlyHint",
	    json_object_new_boolean(!reload && mcp_instant(t)));
	if (reload)
		json_object_object_add(a, "destructiveHint",
		    json_object_new_boolean(1));
	if (t->meta.annotations != NULL) {
		json_object_object_foreach(t->meta.annotations, key, val)
			json_object_object_add(a, key, json_object_get(val));
	}
	return a;
}

static json_object *
mcp_table_tool(const struct tool *tl)
{
	json_object	*t, *x;

	t = mcp_tool(tl->name, tl->meta.title, tl->description,
	    tool_input_schema(tl), mcp_annotations(tl));
	/* Any table tool may run as a task (2025-11-25; more is harmless). */
	x = json_object_new_object();
	json_object_object_add(x, "taskSupport",
	    json_object_new_string(toolmeta_task_name(tl->meta.task)));
	json_object_object_add(t, "execution", x);
	if (tl->meta.output_schema != NULL)
		json_object_object_add(t, "outputSchema",
		    json_object_get(tl->meta.output_schema));
	return t;
}

static json_object *
mcp_job_tool(size_t i)
{
	json_object	*a = json_object_new_object();

	json_object_object_add(a, "title",
	    json_object_new_string(mcp_job_tools[i].title));
	json_object_object_add(a, "readOnlyHint",
	    json_object_new_boolean(mcp_job_tools[i].read_only));
	if (!mcp_job_tools[i].read_only) {
		json_object_object_add(a, "destructiveHint",
		    json_object_new_boolean(0));
		json_object_object_add(a, "idempotentHint",
		    json_object_new_boolean(1));
	}
	json_object_object_add(a, "openWorldHint", json_object_new_boolean(0));
	return mcp_tool(mcp_job_tools[i].name, mcp_job_tools[i].title,
	    mcp_job_tools[i].description,
	    json_tokener_parse(mcp_job_tools[i].schema), a);
}

enum rpc_status
mcp_tools_list(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	json_object	*list;
	size_t		 i;

	(void)params;
	(void)err;
	list = methods_tool_list(req->conn->srv->tools, 1, mcp_table_tool);
	for (i = 0; i < sizeof(mcp_job_tools) / sizeof(mcp_job_tools[0]); i++)
		json_object_array_add(list, mcp_job_tool(i));
	*result = json_object_new_object();
	json_object_object_add(*result, "tools", list);
	if (req->modern)
		mcp_cacheable(*result);
	return RPC_OK;
}

/* A tools/call result of one text; structured (taken) may be NULL. */
static json_object *
mcp_text_result(const char *text, json_object *structured, int is_error)
{
	json_object	*res = json_object_new_object(), *content, *t;

	t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	content = json_object_new_array();
	json_object_array_add(content, t);
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "isError",
	    json_object_new_boolean(is_error));
	if (structured != NULL)
		json_object_object_add(res, "structuredContent", structured);
	return res;
}

json_object *
mcp_tool_result(json_object *r, int is_error)
{
	return mcp_text_result(json_object_to_json_string_ext(r,
	    JSON_C_TO_STRING_PLAIN), r, is_error);
}

/*
 * An upstream MCP server's tools/call result: its structuredContent, or
 * the JSON object its first text holds.  Borrowed from res, or a new
 * reference in *own; NULL for neither.
 */
static json_object *
mcp_upstream_output(json_object *res, json_object **own)
{
	json_object	*v, *text;

	*own = NULL;
	if (json_object_object_get_ex(res, "structuredContent", &v) &&
	    json_object_is_type(v, json_type_object))
		return v;
	if (!json_object_object_get_ex(res, "content", &v) ||
	    !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0 ||
	    !json_object_object_get_ex(json_object_array_get_idx(v, 0),
	    "text", &text) || !json_object_is_type(text, json_type_string) ||
	    jstrict_parse_str(json_object_get_string(text), own) != 0)
		return NULL;
	return *own;
}

/* The dialect of forward tool t. */
static const char *
mcp_dialect(const struct tool *t)
{
	json_object	*v;

	if (t->forward_json != NULL &&
	    json_object_object_get_ex(t->forward_json, "dialect", &v))
		return json_object_get_string(v);
	return "jsonrpc";
}

/*
 * What tool t's command of a done job gave, as the JSON object its
 * output_schema describes: exec tools' stdout, forward tools' upstream
 * result.  A new reference, or NULL with why set.
 */
static json_object *
mcp_output(const struct tool *t, json_object *job, char *why, size_t len)
{
	json_object	*res, *r = NULL, *out = NULL, *own = NULL;
	char		 e[384];

	if (json_object_object_get_ex(job, "results", &res) &&
	    json_object_is_type(res, json_type_array) &&
	    json_object_array_length(res) > 0)
		r = json_object_array_get_idx(res, 0);
	json_object_object_get_ex(r, "result", &out);
	if (out != NULL && t->forward != NULL &&
	    strcmp(mcp_dialect(t), "mcp-http") == 0)
		out = mcp_upstream_output(out, &own);
	if (out == NULL || !json_object_is_type(out, json_type_object)) {
		snprintf(why, len, "tool '%s' has an output_schema but its "
		    "%s is not a JSON object%s", t->name, t->exec != NULL ?
		    "standard output" : "upstream's result",
		    json_object_object_get_ex(r, "truncated", NULL) ?
		    " (the output was truncated)" : "");
		json_object_put(own);
		return NULL;
	}
	if (schema_validate_output(t->meta.output_schema, out, e,
	    sizeof(e)) == -1) {
		snprintf(why, len, "the output of tool '%s' does not match its "
		    "output_schema: %s", t->name, e);
		json_object_put(own);
		return NULL;
	}
	return own != NULL ? own : json_object_get(out);
}

/* The job's first tool, when it declares an output_schema. */
static const struct tool *
mcp_structured_tool(const struct tooltab *tab, json_object *job)
{
	json_object		*cmds, *name;
	const struct tool	*t;

	if (tab == NULL || !json_object_object_get_ex(job, "commands", &cmds) ||
	    !json_object_is_type(cmds, json_type_array) ||
	    json_object_array_length(cmds) == 0 ||
	    !json_object_object_get_ex(json_object_array_get_idx(cmds, 0),
	    "tool", &name) || !json_object_is_type(name, json_type_string) ||
	    (t = tooltab_find(tab, json_object_get_string(name))) == NULL ||
	    t->meta.output_schema == NULL)
		return NULL;
	return t;
}

/* A text content item. */
static void
mcp_add_text(json_object *content, const char *text)
{
	json_object	*t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(content, t);
}

/* The tool of a command result r, when the table still has it. */
static const struct tool *
mcp_result_tool(const struct tooltab *tab, json_object *r)
{
	json_object	*name;

	if (tab == NULL || !json_object_object_get_ex(r, "tool", &name))
		return NULL;
	return tooltab_find(tab, json_object_get_string(name));
}

/*
 * Adds to content what command result r gave: an exec tool's standard
 * output, an MCP upstream's own content (it is MCP content already), or
 * another upstream's result as JSON text.
 */
static void
mcp_output_content(json_object *content, const struct tooltab *tab,
    json_object *r)
{
	const struct tool	*t;
	json_object		*v, *up;
	size_t			 i;

	t = mcp_result_tool(tab, r);
	if (json_object_object_get_ex(r, "stdout", &v) && t != NULL &&
	    t->meta.content_mcp) {
		up = mcpcontent_result(t, json_object_get_string(v));
		json_object_object_get_ex(up, "content", &v);
		for (i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(content, json_object_get(
			    json_object_array_get_idx(v, i)));
		json_object_put(up);
		return;
	}
	if (json_object_object_get_ex(r, "stdout", &v)) {
		mcp_add_text(content, json_object_get_string(v));
		return;
	}
	if (!json_object_object_get_ex(r, "result", &v))
		return;
	if (t != NULL && t->forward != NULL && mcpcontent_image(content, t, v))
		return;
	if (t != NULL && t->forward != NULL &&
	    strcmp(mcp_dialect(t), "mcp-http") == 0 &&
	    json_object_object_get_ex(v, "content", &up) &&
	    json_object_is_type(up, json_type_array)) {
		for (i = 0; i < json_object_array_length(up); i++)
			json_object_array_add(content, json_object_get(
			    json_object_array_get_idx(up, i)));
		return;
	}
	mcp_add_text(content, json_object_to_json_string_ext(v,
	    JSON_C_TO_STRING_PLAIN));
}

/*
 * A done job of one command whose exec tool makes MCP tool results: its
 * isError and structuredContent are the result's (res), not the job's.
 * Whether it is one.
 */
static int
mcp_own_result(const struct tooltab *tab, json_object *job, json_object *res)
{
	json_object		*results, *r, *out, *v;
	const struct tool	*t;

	if (!json_object_object_get_ex(job, "results", &results) ||
	    json_object_array_length(results) != 1 ||
	    (r = json_object_array_get_idx(results, 0)) == NULL ||
	    (t = mcp_result_tool(tab, r)) == NULL || !t->meta.content_mcp ||
	    !json_object_object_get_ex(r, "stdout", &v))
		return 0;
	out = mcpcontent_result(t, json_object_get_string(v));
	if (json_object_object_get_ex(out, "isError", &v))
		json_object_object_add(res, "isError", json_object_get(v));
	if (json_object_object_get_ex(out, "structuredContent", &v))
		json_object_object_add(res, "structuredContent",
		    json_object_get(v));
	json_object_put(out);
	return 1;
}

/* The string member key of o, or "". */
static const char *
mcp_str(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* The result of the command job failed at, or NULL. */
static json_object *
mcp_failed_result(json_object *job)
{
	json_object	*res, *at;

	if (!json_object_object_get_ex(job, "failed_at_command", &at) ||
	    !json_object_object_get_ex(job, "results", &res))
		return NULL;
	return json_object_array_get_idx(res, json_object_get_int(at));
}

/*
 * Why a failed or cancelled job ended, for a model to read: the failed
 * command's error and what it printed, else the job's error.  Caller
 * frees.
 */
static char *
mcp_failure_text(json_object *job)
{
	json_object	*r = mcp_failed_result(job);
	const char	*out = mcp_str(r, "stdout"), *errout;

	errout = mcp_str(r, "stderr");
	if (*mcp_str(r, "error") == '\0')
		return xasprintf("%s %s: %s", mcp_str(job, "ticket"),
		    mcp_str(job, "status"), *mcp_str(job, "error") != '\0' ?
		    mcp_str(job, "error") : "no reason given");
	return xasprintf("%s failed: %s%s%s%s%s", mcp_str(r, "tool"),
	    mcp_str(r, "error"), *errout != '\0' ? "\nstderr:\n" : "",
	    errout, *out != '\0' ? "\nstdout:\n" : "", out);
}

/* What a job that has not ended is doing, and how to get its result. */
static char *
mcp_pending_text(json_object *job)
{
	json_object	*pos, *by;
	char		 where[128] = "";

	if (json_object_object_get_ex(job, "position", &pos))
		snprintf(where, sizeof(where), ", position %d",
		    json_object_get_int(pos));
	if (json_object_object_get_ex(job, "blocked_by", &by) && by != NULL)
		snprintf(where + strlen(where), sizeof(where) - strlen(where),
		    ", blocked by %s", json_object_get_string(by));
	return xasprintf("%s is %s%s and has not finished: call wait_job with "
	    "{\"ticket\": \"%s\"} for its result", mcp_str(job, "ticket"),
	    mcp_str(job, "status"), where, mcp_str(job, "ticket"));
}

/* The answer's _meta: the job's ticket and status. */
static void
mcp_add_meta(json_object *res, json_object *job)
{
	json_object	*m = json_object_new_object();

	json_object_object_add(m, "cmdgate/ticket",
	    json_object_new_string(mcp_str(job, "ticket")));
	json_object_object_add(m, "cmdgate/status",
	    json_object_new_string(mcp_str(job, "status")));
	json_object_object_add(res, "_meta", m);
}

/*
 * The result of a job of tool t: done, its output as structuredContent;
 * else an error, without structuredContent (which t's schema would not
 * describe).
 */
static json_object *
mcp_structured_result(const struct tool *t, json_object *job,
    const char *st)
{
	json_object	*out, *res;
	char		 why[640], *text;

	if (strcmp(st, "done") != 0) {
		text = strcmp(st, "failed") == 0 || strcmp(st, "cancelled") ==
		    0 ? mcp_failure_text(job) : mcp_pending_text(job);
		snprintf(why, sizeof(why), "%s: %s", strcmp(st, "failed") ==
		    0 || strcmp(st, "cancelled") == 0 ? "the job ended" :
		    "the job has not finished", text);
		free(text);
		res = mcp_text_result(why, NULL, 1);
	} else if ((out = mcp_output(t, job, why, sizeof(why))) == NULL)
		res = mcp_text_result(why, NULL, 1);
	else
		res = mcp_text_result(json_object_to_json_string_ext(out,
		    JSON_C_TO_STRING_PLAIN), out, 0);
	mcp_add_meta(res, job);
	json_object_put(job);
	return res;
}

/*
 * The result of a job of no output_schema: what its commands printed, or
 * why it failed, or where it stands; the job object as structuredContent.
 */
static json_object *
mcp_plain_result(const struct tooltab *tab, json_object *job,
    const char *st)
{
	json_object	*res, *content, *results;
	char		*text = NULL;
	int		 failed = strcmp(st, "failed") == 0 ||
			    strcmp(st, "cancelled") == 0;
	size_t		 i;

	res = json_object_new_object();
	content = json_object_new_array();
	if (failed)
		text = mcp_failure_text(job);
	else if (strcmp(st, "done") != 0)
		text = mcp_pending_text(job);
	else if (json_object_object_get_ex(job, "results", &results))
		for (i = 0; i < json_object_array_length(results); i++)
			mcp_output_content(content, tab,
			    json_object_array_get_idx(results, i));
	if (text != NULL)
		mcp_add_text(content, text);
	free(text);
	/* An upstream's own words on why its tool failed. */
	if (failed && !json_object_object_get_ex(mcp_failed_result(job),
	    "stdout", NULL))
		mcp_output_content(content, tab, mcp_failed_result(job));
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "isError", json_object_new_boolean(failed));
	mcp_add_meta(res, job);
	if (!failed && mcp_own_result(tab, job, res)) {
		json_object_put(job);
		return res;
	}
	json_object_object_add(res, "structuredContent", job);
	return res;
}

json_object *
mcp_job_result(const struct tooltab *tab, json_object *job, int structured)
{
	json_object		*v = NULL;
	const struct tool	*t;
	const char		*st;

	json_object_object_get_ex(job, "status", &v);
	st = json_object_get_string(v);
	if (structured && (t = mcp_structured_tool(tab, job)) != NULL)
		return mcp_structured_result(t, job, st);
	return mcp_plain_result(tab, job, st);
}
