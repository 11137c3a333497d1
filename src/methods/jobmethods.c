/* SPDX-License-Identifier: ISC */
/* The job methods of cmdgate-protocol(7), Methods, and MCP tools/call. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "jstrict.h"
#include "log.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "policy.h"
#include "server.h"
#include "store.h"
#include "ticket.h"
#include "tools.h"
#include "util.h"

#define WAIT_DEFAULT_S		30
#define WAIT_MAX_S		3600
#define SYNC_DEFAULT_S		300
#define LABEL_MAX		256	/* bytes */
#define IDEM_KEY_MAX		256	/* bytes */
#define MCP_IDEM_META		"cmdgate/idempotency_key"
#define TASK_AFTER_S		1	/* a running call becomes a task */

/* Options of a submitted job. */
struct submit {
	const char	*agent;
	const char	*label;
	const char	*idem;
	int		 async, atomic, fail_fast, notify;
	uint64_t	 timeout_s;
	json_object	*token;		/* MCP progressToken, borrowed */
	const char	*tool;		/* MCP: the tool called */
	int		 task;		/* MCP: answered as a task (rev) */
	int		 level;		/* MCP log level; -1: the conn's */
};

/* A request answered later: once its submit is stored, or its job ends. */
struct jm_call {
	struct conn_pending	*p;
	struct submission	*s;	/* until stored */
	struct waiter		*w;	/* while it waits for the end */
	uint64_t		 timeout_s;	/* of w, for a submit */
	int			 async;
	int			 mcp;	/* tools/call: answer as MCP */
	json_object		*token;		/* its progressToken */
	char			*tool;		/* tools/call of a tool */
	uint64_t		 num;		/* the job it submitted... */
	int			 stored;	/* ...once stored */
	struct mcpwatch		*mw;		/* its progress and log */
	int			 cancelled;	/* notifications/cancelled */
	int			 structured;	/* of a table tool */
	int			 dedup;		/* the job of its key */
	int			 task;		/* answer a task of rev */
	int			 task_always;	/* its tool's "task": required */
	int			 related;	/* tasks/result: say its task */
	int			 task_view;	/* tasks/cancel: answer the task
						   of this rev */
	int			 level;		/* submit's */
};

static struct jobs *
req_jobs_of(struct conn *c)
{
	return c->srv->jobs;
}

static struct jobs *
req_jobs(struct rpc_req *req)
{
	return req_jobs_of(req->conn);
}

/* Without a store (unit tests, fuzzing) job methods say so, not crash. */
static int
no_store(struct rpc_req *req, struct rpc_error *err)
{
	if (req_jobs(req) != NULL)
		return 0;
	rpc_fail(err, RPC_INTERNAL_ERROR, "internal_error", "this broker "
	    "has no job store open");
	return 1;
}

/* A reason is told as the engine wrote it, never cut. */
_Static_assert(JOBS_REASON_MAX <= RPC_REASON_MAX, "a reason would be cut");

enum rpc_status
jobmethods_error(struct rpc_error *err, const struct jobs_error *jerr)
{
	int		 code = RPC_INTERNAL_ERROR;
	const char	*type = "internal_error";

	/* No default: a new engine error is a compiler warning here. */
	switch (jerr->code) {
	case JOBS_ENOJOB:
		code = RPC_UNKNOWN_TICKET;
		type = "unknown_ticket";
		break;
	case JOBS_EQUEUEFULL:
		code = RPC_QUEUE_FULL;
		type = "queue_full";
		break;
	case JOBS_ESTOREFULL:
		code = RPC_STORAGE_ERROR;
		type = "store_full";
		break;
	case JOBS_ESTORE:
		code = RPC_STORAGE_ERROR;
		type = "storage_error";
		break;
	case JOBS_OK:		/* a caller's mistake: told as internal */
	case JOBS_EBADRECORD:
		break;
	}
	return rpc_fail(err, code, type, "%s", jerr->reason);
}

/* jobview_get found no job num (jerr JOBS_OK), or could not read it. */
static enum rpc_status
unknown_ticket(struct rpc_error *err, const struct jobs_error *jerr,
    uint64_t num)
{
	if (jerr->code != JOBS_OK)
		return jobmethods_error(err, jerr);
	return rpc_fail(err, RPC_UNKNOWN_TICKET, "unknown_ticket", "no job "
	    "t-%06llu: it never existed or has expired",
	    (unsigned long long)num);
}

/*
 * Where command i of a job is, for its errors: "commands[i] (NAME)", or
 * the tool's name alone for a tools/call, whose job has that command
 * only.
 */
static void
command_where(char *at, size_t len, size_t i, const char *name, int call)
{
	if (call)
		snprintf(at, len, "%s", name);
	else
		snprintf(at, len, "commands[%zu] (%s)", i, name);
}

/* One command of a job: checked against the table, resolved.  Caller puts. */
static json_object *
build_command(struct server *srv, json_object *cmd, size_t i, int call,
    enum tier *tier, int *reload, struct rpc_error *err)
{
	const struct tool	*t;
	json_object		*v, *params = NULL, *c, *argv, *empty, *fwd;
	const char		*name;
	char			 msg[512], at[96];
	int			 rc;

	if (!json_object_is_type(cmd, json_type_object) ||
	    !json_object_object_get_ex(cmd, "tool", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "commands[%zu]"
		    " must be {\"tool\": NAME, \"params\": {...}}", i);
		return NULL;
	}
	name = json_object_get_string(v);
	if ((t = tooltab_find(srv->tools, name)) == NULL) {
		if (call)
			rpc_fail(err, RPC_INVALID_PARAMS, "unknown_tool", "no "
			    "tool '%s' in the table; tools/list shows them",
			    name);
		else
			rpc_fail(err, RPC_INVALID_PARAMS, "unknown_tool",
			    "commands[%zu]: no tool '%s' in the table; "
			    "list_tools shows them", i, name);
		err->command = xstrdup(name);
		return NULL;
	}
	command_where(at, sizeof(at), i, name, call);
	if (!t->enabled) {
		rpc_fail(err, RPC_SECURITY_BLOCKED, "security_blocked",
		    "%s: the tool is disabled in the tool table", at);
		err->command = xstrdup(name);
		return NULL;
	}
	json_object_object_get_ex(cmd, "params", &params);
	if (params != NULL && !json_object_is_type(params, json_type_object)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "%s: "
		    "params must be an object", at);
		err->command = xstrdup(name);
		return NULL;
	}
	rc = 0;
	if (t->params != NULL) {
		empty = params == NULL ? json_object_new_object() : NULL;
		rc = schema_validate(t->params, params != NULL ? params :
		    empty, msg, sizeof(msg));
		json_object_put(empty);
	}
	if (rc == -1) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "%s: %s",
		    at, msg);
		err->command = xstrdup(name);
		return NULL;
	}
	c = json_object_new_object();
	json_object_object_add(c, "tool", json_object_new_string(name));
	*reload = tool_command_reload(t, params);
	*tier = *reload ? TIER_HEAVY : tool_command_tier(t, params);
	json_object_object_add(c, "tier", json_object_new_string(
	    tier_name(*reload ? TIER_HEAVY : tool_command_tier(t, params))));
	json_object_object_add(c, "causes_reload",
	    json_object_new_boolean(*reload));
	if (t->busy != BUSY_NONE)
		json_object_object_add(c, "busy",
		    json_object_new_string(busy_name(t->busy)));
	if (t->exec != NULL) {
		if (tool_expand_argv(t, params, &argv, msg, sizeof(msg)) == -1) {
			json_object_put(c);
			rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
			    "%s: %s", at, msg);
			err->command = xstrdup(name);
			return NULL;
		}
		json_object_object_add(c, "exec", argv);
	} else if (tool_forward_command(t, params, &fwd, msg,
	    sizeof(msg)) == -1) {
		json_object_put(c);
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "%s: forward.params: %s", at, msg);
		err->command = xstrdup(name);
		return NULL;
	} else {
		json_object_object_add(c, "forward", fwd);
		json_object_object_add(c, "reload",
		    json_object_new_boolean(*reload));
	}
	if (params != NULL)
		json_object_object_add(c, "params", json_object_get(params));
	json_object_object_add(c, "timeout_s",
	    json_object_new_int64((int64_t)t->timeout_s));
	return c;
}

/* The record of a new job; caller puts. */
static json_object *
build_job(struct server *srv, json_object *commands, const struct submit *o,
    struct rpc_error *err)
{
	json_object	*rec, *list, *c;
	enum tier	 tier, jt = TIER_INSTANT;
	char		 ts[UTIL_TIMESTAMP_LEN];
	size_t		 i, n;
	int		 reload, jr = 0;

	if (!json_object_is_type(commands, json_type_array) ||
	    (n = json_object_array_length(commands)) == 0 ||
	    n > srv->opt->max_batch) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"commands\""
		    " must be a list of 1 to %llu commands (--max-batch)",
		    (unsigned long long)srv->opt->max_batch);
		return NULL;
	}
	list = json_object_new_array();
	for (i = 0; i < n; i++) {
		c = build_command(srv, json_object_array_get_idx(commands, i),
		    i, o->tool != NULL, &tier, &reload, err);
		if (c == NULL) {
			json_object_put(list);
			return NULL;
		}
		json_object_array_add(list, c);
		if (tier > jt)
			jt = tier;
		jr |= reload;
	}
	rec = json_object_new_object();
	json_object_object_add(rec, "ticket", json_object_new_string(""));
	json_object_object_add(rec, "status", json_object_new_string("queued"));
	json_object_object_add(rec, "tier",
	    json_object_new_string(tier_name(jr ? TIER_HEAVY : jt)));
	json_object_object_add(rec, "causes_reload",
	    json_object_new_boolean(jr));
	json_object_object_add(rec, "agent", json_object_new_string(o->agent));
	json_object_object_add(rec, "label", json_object_new_string(o->label));
	json_object_object_add(rec, "atomic",
	    json_object_new_boolean(o->atomic));
	json_object_object_add(rec, "fail_fast",
	    json_object_new_boolean(o->fail_fast));
	if (o->idem != NULL)
		json_object_object_add(rec, "idempotency_key",
		    json_object_new_string(o->idem));
	if (o->task)
		json_object_object_add(rec, "mcp_task",
		    json_object_new_boolean(1));
	util_timestamp(ts, util_now_ms());
	json_object_object_add(rec, "created_at", json_object_new_string(ts));
	json_object_object_add(rec, "commands", list);
	return rec;
}

json_object *
jobmethods_record(struct server *srv, json_object *commands,
    const char *agent, struct rpc_error *err)
{
	struct submit	o;

	memset(&o, 0, sizeof(o));
	o.agent = agent;
	o.label = "";
	if (!param_name_ok(agent)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "the "
		    "agent's name has 1 to %d printable characters",
		    CONN_NAME_MAX);
		return NULL;
	}
	return build_job(srv, commands, &o, err);
}

static int
submit_options(struct rpc_req *req, json_object *params, struct submit *o,
    struct rpc_error *err)
{
	struct conn	*c = req->conn;

	memset(o, 0, sizeof(*o));
	o->agent = c->name != NULL ? c->name : "anonymous";
	o->label = "";
	o->timeout_s = SYNC_DEFAULT_S;
	if (param_bool(params, "async", &o->async, err) == -1 ||
	    param_bool(params, "atomic", &o->atomic, err) == -1 ||
	    param_bool(params, "fail_fast", &o->fail_fast, err) == -1 ||
	    param_bool(params, "notify", &o->notify, err) == -1 ||
	    param_string(params, "agent", 0, &o->agent, err) == -1 ||
	    param_string(params, "label", 0, &o->label, err) == -1 ||
	    param_string(params, "idempotency_key", 0, &o->idem, err) == -1 ||
	    param_uint(params, "timeout_s", 0, WAIT_MAX_S, &o->timeout_s,
	    err) == -1)
		return -1;
	if (!param_name_ok(o->agent)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"agent\" "
		    "has 1 to %d printable characters", CONN_NAME_MAX);
		return -1;
	}
	if (strlen(o->label) > LABEL_MAX || (o->idem != NULL &&
	    (*o->idem == '\0' || strlen(o->idem) > IDEM_KEY_MAX))) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"label\" "
		    "may hold %d bytes and \"idempotency_key\" 1 to %d",
		    LABEL_MAX, IDEM_KEY_MAX);
		return -1;
	}
	/* The store keys it by agent, newline, key: one LMDB key. */
	if (o->idem != NULL &&
	    strlen(o->agent) + 1 + strlen(o->idem) > STORE_KEY_MAX) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"agent\" "
		    "and \"idempotency_key\" take %zu bytes together; at most "
		    "%d may (shorten the key)", strlen(o->agent) +
		    strlen(o->idem), STORE_KEY_MAX - 1);
		return -1;
	}
	return 0;
}

static void
jm_free(struct jm_call *call)
{
	mcpwatch_free(call->mw);
	json_object_put(call->token);
	free(call->tool);
	free(call);
}

/* The caller's connection is gone: forget the submit or the wait. */
static void
jm_cancel(void *arg)
{
	struct jm_call	*call = arg;

	if (call->s != NULL)
		submit_forget(call->s);
	if (call->w != NULL)
		waiter_cancel(call->w);
	jm_free(call);
}

/* Answer call with its job (taken), or err; as a tool result for MCP. */
static void
jm_waited(void *arg, json_object *job, struct jobs_error *jerr)
{
	struct jm_call		*call = arg;
	struct rpc_error	 err;
	json_object		*v;

	memset(&err, 0, sizeof(err));
	if (job == NULL)
		jobmethods_error(&err, jerr);
	if (job != NULL && call->mw != NULL)
		mcpwatch_end(call->mw, job);
	if (job != NULL && call->dedup)
		json_object_object_add(job, "deduplicated",
		    json_object_new_boolean(1));
	if (job != NULL && call->task && mcptask_working(job)) {
		v = mcptask_created(call->p->conn->srv, job, call->task);
		json_object_put(job);
		conn_complete(call->p, v, NULL);
		jm_free(call);
		return;
	}
	if (job != NULL && call->mcp)
		job = mcp_job_result(call->p->conn->srv->tools, job,
		    call->structured);
	if (job != NULL && call->related)
		mcptask_relate(job, call->num);
	if (job != NULL && call->task_view) {
		v = call->task_view >= MCP_REV_2026 ? json_object_new_object() :
		    mcptask_make(call->p->conn->srv, job, call->task_view);
		json_object_put(job);
		job = v;
	}
	conn_complete(call->p, job, job != NULL ? NULL : &err);
	jm_free(call);
}

/*
 * The client cancelled call (MCP notifications/cancelled): its job is
 * cancelled, and the call goes unanswered.
 */
static void
jm_drop(struct jm_call *call)
{
	struct jobs_error	 err;
	json_object		*r = NULL;

	memset(&err, 0, sizeof(err));
	/* First: a queued job ends in jobs_cancel, and tells its waiters. */
	if (call->w != NULL)
		waiter_cancel(call->w);
	if (call->tool != NULL && call->stored && jobs_cancel(req_jobs_of(
	    call->p->conn), call->num, &r, &err) == -1)
		log_warnx("t-%06llu: not cancelled: %s",
		    (unsigned long long)call->num, err.reason);
	json_object_put(r);
	conn_drop(call->p);
	jm_free(call);
}

enum rpc_status
method_mcp_cancelled(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn_pending	*p;
	struct jm_call		*call;
	json_object		*id;

	(void)result;
	(void)err;
	if (json_object_object_get_ex(params, "requestId", &id) &&
	    mcplisten_cancel(req->conn, id))
		return RPC_OK;		/* a listen ends */
	if (!json_object_object_get_ex(params, "requestId", &id) ||
	    (p = conn_pending_find(req->conn, id, "tools/call")) == NULL ||
	    p->cancel != jm_cancel) {
		log_debug("client %llu: cancelled no call of ours",
		    (unsigned long long)req->conn->id);
		return RPC_OK;
	}
	call = p->arg;
	if (call->s != NULL)
		call->cancelled = 1;	/* once it is stored */
	else
		jm_drop(call);
	return RPC_OK;
}

/*
 * Whether call, stored, is answered with a task at once: it asked for one
 * (2025-11-25), or (2026-07-28) its job waits in the queue or is heavy; a
 * job that runs at the instant or smooth tier has TASK_AFTER_S to end.
 */
static int
task_now(struct jobs *J, struct jm_call *call, uint64_t num)
{
	struct jobs_error	 jerr;
	json_object		*v, *st, *tier;
	int			 now, found;

	if (call->task == 0 || !job_pending(J, num))
		return 0;
	if (call->task != MCP_REV_2026 || call->task_always)
		return 1;	/* asked (2025), or its tool runs only so */
	memset(&jerr, 0, sizeof(jerr));
	if ((v = jobview_get(J, num, 0, &found, &jerr)) == NULL)
		return 0;
	now = !json_object_object_get_ex(v, "status", &st) ||
	    strcmp(json_object_get_string(st), "running") != 0 ||
	    !json_object_object_get_ex(v, "tier", &tier) ||
	    strcmp(json_object_get_string(tier), "heavy") == 0;
	json_object_put(v);
	return now;
}

/* Answer call, stored, with the task its job is (tasks/get's shape). */
static void
task_answer(struct jobs *J, struct jm_call *call, uint64_t num)
{
	struct rpc_error	 err;
	struct jobs_error	 jerr;
	json_object		*v;
	int			 found;

	memset(&jerr, 0, sizeof(jerr));
	if ((v = jobview_get(J, num, 1, &found, &jerr)) == NULL) {
		memset(&err, 0, sizeof(err));
		if (jerr.code != JOBS_OK)
			jobmethods_error(&err, &jerr);
		else
			rpc_fail(&err, RPC_UNKNOWN_TICKET, "unknown_ticket",
			    "the job t-%06llu this idempotency key named has "
			    "expired", (unsigned long long)num);
		conn_complete(call->p, NULL, &err);
	} else {
		if (call->task == MCP_REV_2025)
			mcptask_watch(call->p->conn, num);
		conn_complete(call->p, mcptask_created(call->p->conn->srv, v,
		    call->task), NULL);
	}
	json_object_put(v);
	jm_free(call);
}

/* Answer call, stored: an error, the summary (async), or the job when it
 * ends (now, when it ended already). */
static void
submission_answer(struct jobs *J, struct jm_call *call, uint64_t num,
    int dedup, struct jobs_error *serr)
{
	struct rpc_error	 err;
	struct jobs_error	 jerr;
	json_object		*v;
	int			 found;

	memset(&err, 0, sizeof(err));
	memset(&jerr, 0, sizeof(jerr));
	call->dedup = dedup;
	if (serr == NULL && task_now(J, call, num)) {
		task_answer(J, call, num);
		return;
	}
	if (serr == NULL && call->task)	/* running: a task unless quick */
		call->timeout_s = TASK_AFTER_S;
	if (serr == NULL && !call->async) {
		if (job_pending(J, num))
			call->w = waiter_add(J, num, call->timeout_s,
			    jm_waited, call);
		if (call->tool != NULL)
			call->mw = mcpwatch_new(call->p->conn, call->p->id,
			    call->token, J, call->w, num, call->tool);
		if (call->mw != NULL && call->level >= 0)
			mcpwatch_set_level(call->mw, call->level);
		if (call->w == NULL) {
			v = waiter_view(J, num, &jerr);
			jm_waited(call, v, v != NULL ? NULL : &jerr);
		}
		return;
	}
	if (serr != NULL)
		jobmethods_error(&err, serr);
	else if ((v = jobview_get(J, num, 0, &found, &jerr)) != NULL) {
		json_object_object_add(v, "deduplicated",
		    json_object_new_boolean(dedup));
		conn_complete(call->p, v, NULL);
		jm_free(call);
		return;
	} else if (jerr.code != JOBS_OK)
		jobmethods_error(&err, &jerr);
	else
		rpc_fail(&err, RPC_UNKNOWN_TICKET, "unknown_ticket", "the job "
		    "t-%06llu this idempotency key named has expired",
		    (unsigned long long)num);
	conn_complete(call->p, NULL, &err);
	jm_free(call);
}

/* call's submit was stored (or not): answer, and read the next request. */
static void
jm_submitted(void *arg, uint64_t num, int dedup, struct jobs_error *err)
{
	struct jm_call	*call = arg;
	struct conn	*c = call->p->conn;

	call->s = NULL;
	call->num = num;
	call->stored = err == NULL;
	if (call->cancelled)
		jm_drop(call);		/* cancelled before it was stored */
	else
		submission_answer(req_jobs_of(c), call, num, dedup, err);
	conn_unhold(c);
}

/*
 * Submit (or find the job of the same idempotency key) and answer: the
 * summary once stored, or the job when it ends.  mcp wraps it for
 * tools/call.  Until it is stored the connection reads no further
 * request, so that answers keep their order.
 */
static enum rpc_status
submit_and_answer(struct rpc_req *req, json_object *commands,
    struct submit *o, int mcp, struct rpc_error *err)
{
	struct jm_call	*call;
	json_object	*rec;

	if ((rec = build_job(req->conn->srv, commands, o, err)) == NULL)
		return RPC_ERROR;
	call = xcalloc(1, sizeof(*call));
	call->timeout_s = mcp ? req->conn->srv->opt->call_timeout :
	    o->timeout_s;
	call->async = o->async;
	call->mcp = mcp;
	call->token = json_object_get(o->token);
	call->tool = o->tool != NULL ? xstrdup(o->tool) : NULL;
	call->structured = mcp;
	call->task = o->task & ~MCP_TASK_ALWAYS;
	call->task_always = (o->task & MCP_TASK_ALWAYS) != 0;
	call->level = o->level;
	call->p = conn_defer(req, jm_cancel, call);
	call->s = submit_add(req_jobs(req), rec, o->idem != NULL ?
	    xasprintf("%s\n%s", o->agent, o->idem) : NULL,
	    o->notify ? req->conn->id : 0, jm_submitted, call);
	submit_set_owner(call->s, req->conn->id);
	conn_hold(req->conn);
	return RPC_DEFERRED;
}

enum rpc_status
method_batch_execute(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct submit	 o;
	json_object	*commands;

	if (no_store(req, err))
		return RPC_ERROR;
	if (submit_options(req, params, &o, err) == -1)
		return RPC_ERROR;
	if (!json_object_object_get_ex(params, "commands", &commands))
		return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "missing parameter \"commands\" (a list of {tool, params})");
	(void)result;
	return submit_and_answer(req, commands, &o, 0, err);
}

enum rpc_status
method_poll_job(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct jobs_error	jerr;
	uint64_t		num;
	int			found;

	if (no_store(req, err))
		return RPC_ERROR;
	if (param_ticket(params, &num, err) == -1)
		return RPC_ERROR;
	memset(&jerr, 0, sizeof(jerr));
	if ((*result = jobview_get(req_jobs(req), num, 1, &found,
	    &jerr)) == NULL)
		return unknown_ticket(err, &jerr, num);
	return RPC_OK;
}

static enum rpc_status
wait_for(struct rpc_req *req, json_object *params, int mcp,
    json_object **result, struct rpc_error *err)
{
	struct jobs		*J = req_jobs(req);
	struct jm_call		*call;
	struct jobs_error	 jerr;
	uint64_t		 num, timeout = WAIT_DEFAULT_S;
	int			 found;

	if (param_ticket(params, &num, err) == -1 ||
	    param_uint(params, "timeout_s", 0, WAIT_MAX_S, &timeout, err) == -1)
		return RPC_ERROR;
	if (!job_pending(J, num)) {
		memset(&jerr, 0, sizeof(jerr));
		if ((*result = jobview_get(J, num, 1, &found, &jerr)) == NULL)
			return unknown_ticket(err, &jerr, num);
		if (mcp)	/* finished: answered now, as a tool result */
			*result = mcp_job_result(req->conn->srv->tools,
			    *result, 0);
		return RPC_OK;
	}
	call = xcalloc(1, sizeof(*call));
	call->mcp = mcp;
	call->p = conn_defer(req, jm_cancel, call);
	call->w = waiter_add(J, num, timeout, jm_waited, call);
	return RPC_DEFERRED;
}

enum rpc_status
method_wait_job(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	if (no_store(req, err))
		return RPC_ERROR;
	return wait_for(req, params, 0, result, err);
}

enum rpc_status
method_cancel_job(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct jobs_error	jerr;
	uint64_t		num;

	if (no_store(req, err))
		return RPC_ERROR;
	if (param_ticket(params, &num, err) == -1)
		return RPC_ERROR;
	memset(&jerr, 0, sizeof(jerr));
	if (jobs_cancel(req_jobs(req), num, result, &jerr) == -1)
		return jobmethods_error(err, &jerr);
	return RPC_OK;
}

enum rpc_status
method_queue_status(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	(void)params;
	if (no_store(req, err))
		return RPC_ERROR;
	*result = jobview_queue(req_jobs(req));
	json_object_object_add(*result, "editor",
	    edprobe_json(req->conn->srv->probe));
	return RPC_OK;
}

/* tasks/result of task num (cmdgate-protocol(7), Tasks). */
static enum rpc_status
task_result(struct rpc_req *req, uint64_t num, int rev,
    json_object **result, struct rpc_error *err)
{
	struct jobs		*J = req_jobs(req);
	struct jobs_error	 jerr;
	struct jm_call		*call;
	char			 t[TICKET_LEN];
	int			 found;

	if (no_store(req, err))
		return RPC_ERROR;
	if (!job_pending(J, num)) {
		memset(&jerr, 0, sizeof(jerr));
		if ((*result = jobview_get(J, num, 1, &found, &jerr)) == NULL &&
		    jerr.code != JOBS_OK)
			return jobmethods_error(err, &jerr);
		if (*result == NULL) {
			ticket_format(t, sizeof(t), num);
			mcptask_unknown(err, rev, t);
			return RPC_ERROR;
		}
		*result = mcp_job_result(req->conn->srv->tools, *result, 1);
		mcptask_relate(*result, num);
		return RPC_OK;
	}
	call = xcalloc(1, sizeof(*call));
	call->mcp = call->structured = call->related = 1;
	call->num = num;
	call->p = conn_defer(req, jm_cancel, call);
	call->w = waiter_watch(J, num, jm_waited, NULL, call);
	return RPC_DEFERRED;
}

/* tasks/cancel of task num, working: answered once its job has ended. */
static enum rpc_status
task_cancel(struct rpc_req *req, uint64_t num, int rev,
    json_object **result, struct rpc_error *err)
{
	struct jobs		*J = req_jobs(req);
	struct jobs_error	 jerr;
	struct jm_call		*call;
	json_object		*r = NULL;
	int			 found;

	memset(&jerr, 0, sizeof(jerr));
	if (jobs_cancel(J, num, &r, &jerr) == -1)
		return jobmethods_error(err, &jerr);
	json_object_put(r);
	if (!job_pending(J, num)) {
		if ((r = jobview_get(J, num, 1, &found, &jerr)) == NULL)
			return jobmethods_error(err, &jerr);
		*result = rev >= MCP_REV_2026 ? json_object_new_object() :
		    mcptask_make(req->conn->srv, r, rev);
		json_object_put(r);
		return RPC_OK;
	}
	/* Its processes were told to stop: answered once they have. */
	call = xcalloc(1, sizeof(*call));
	call->task_view = rev;
	call->num = num;
	call->p = conn_defer(req, jm_cancel, call);
	call->w = waiter_watch(J, num, jm_waited, NULL, call);
	return RPC_DEFERRED;
}

enum rpc_status
method_tasks_result(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	uint64_t	num;
	int		rev = mcp_rev(req, params);

	if (mcptask_id(req, params, rev, &num, err) == -1)
		return RPC_ERROR;
	return task_result(req, num, rev, result, err);
}

enum rpc_status
method_tasks_cancel(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	json_object	*job;
	uint64_t	 num;
	int		 rev = mcp_rev(req, params);

	if ((job = mcptask_job(req, params, rev, &num, err)) == NULL)
		return RPC_ERROR;
	if (!mcptask_working(job) && rev >= MCP_REV_2026) {
		json_object_put(job);	/* ended: cancelled as asked */
		*result = json_object_new_object();
		return RPC_OK;
	}
	if (!mcptask_working(job)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "task_ended", "task t-%06llu "
		    "is %s already: only a working task can be cancelled",
		    (unsigned long long)num, mcptask_status(job));
		json_object_put(job);
		return RPC_ERROR;
	}
	json_object_put(job);
	return task_cancel(req, num, rev, result, err);
}

/* A job method called as an MCP tool: its result as the tool's. */
static enum rpc_status
mcp_job_method(struct rpc_req *req, const char *name, json_object *args,
    json_object **result, struct rpc_error *err)
{
	json_object	*r = NULL;
	enum rpc_status	 st;

	if (strcmp(name, "wait_job") == 0)
		return wait_for(req, args, 1, result, err);
	if (strcmp(name, "poll_job") == 0)
		st = method_poll_job(req, args, &r, err);
	else if (strcmp(name, "cancel_job") == 0)
		st = method_cancel_job(req, args, &r, err);
	else
		st = method_queue_status(req, args, &r, err);
	if (st != RPC_OK)
		return st;
	*result = mcp_tool_result(r, 0);
	return RPC_OK;
}

/*
 * The idempotency key a tools/call may carry in
 * params._meta["cmdgate/idempotency_key"] (cmdgate mcp gives one to every
 * call): o->idem (borrowed from params), NULL without; -1 with err.
 */
static int
mcp_idem_key(json_object *params, struct submit *o, struct rpc_error *err)
{
	json_object	*meta, *k;

	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, MCP_IDEM_META, &k))
		return 0;
	o->idem = json_object_get_string(k);
	if (!json_object_is_type(k, json_type_string) || *o->idem == '\0' ||
	    strlen(o->idem) > IDEM_KEY_MAX ||
	    strlen(o->agent) + 1 + strlen(o->idem) > STORE_KEY_MAX) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params", "\"_meta."
		    MCP_IDEM_META "\" must be a string of 1 to %d bytes, and "
		    "at most %d with the client's name", IDEM_KEY_MAX,
		    STORE_KEY_MAX - 1);
		return -1;
	}
	return 0;
}

enum rpc_status
method_tools_call(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	static const char *job_tools[] = { "poll_job", "wait_job",
	    "cancel_job", "queue_status", NULL };
	struct submit	 o;
	json_object	*args = NULL, *cmds, *cmd, *empty, *token;
	const char	*name;
	enum rpc_status	 st;
	size_t		 i;

	if (no_store(req, err))
		return RPC_ERROR;
	if (param_string(params, "name", 1, &name, err) == -1 ||
	    mcpwatch_token(params, &token, err) == -1)
		return RPC_ERROR;
	json_object_object_get_ex(params, "arguments", &args);
	if (args != NULL && !json_object_is_type(args, json_type_object))
		return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"arguments\" must be an object");
	for (i = 0; job_tools[i] != NULL; i++)
		if (strcmp(name, job_tools[i]) == 0) {
			empty = json_object_new_object();
			st = mcp_job_method(req, name, args != NULL ? args :
			    empty, result, err);
			json_object_put(empty);
			return st;
		}
	memset(&o, 0, sizeof(o));
	o.agent = req->conn->name != NULL ? req->conn->name : "anonymous";
	o.label = "";
	o.token = token;
	o.tool = name;
	o.level = -1;
	if (req->modern) {
		o.agent = mcp_client_name(params, o.agent);
		o.level = mcpwatch_meta_level(params);
	}
	if (mcp_idem_key(params, &o, err) == -1 ||
	    mcp_task_wanted(req, params, &o.task, err) == -1)
		return RPC_ERROR;
	cmd = json_object_new_object();
	json_object_object_add(cmd, "tool", json_object_new_string(name));
	json_object_object_add(cmd, "params", args != NULL ?
	    json_object_get(args) : json_object_new_object());
	cmds = json_object_new_array();
	json_object_array_add(cmds, cmd);
	st = submit_and_answer(req, cmds, &o, 1, err);
	json_object_put(cmds);
	return st;
}
