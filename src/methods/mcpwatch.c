/* SPDX-License-Identifier: ISC */
/*
 * MCP progress and logging of a connection's own tools/call jobs: the
 * events its waiter is told (submit.h) become notifications/progress
 * (strictly increasing, total 100) and notifications/message at or above
 * the connection's level.  Nothing of it is stored.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "ticket.h"
#include "util.h"

#define PROGRESS_TOTAL	100
#define PROGRESS_RUNNING 1		/* the tool started */
#define PROGRESS_SPAN	97		/* of the tool's own progress: its
					   100% stays below the end's */
#define PROGRESS_END	99		/* its command ended */
#define PRERUN_MAX	52		/* 1 - 2^-k stays below 1 */
#define POSITION_MS	1000		/* position news at most this often */
#define BLOCKED_MAX	64

static const char *levels[] = { "debug", "info", "notice", "warning",
    "error", "critical", "alert", "emergency", NULL };
/* A connection starts at warning (conn.h counts in this order). */
_Static_assert(CONN_LOG_DEFAULT == 3, "CONN_LOG_DEFAULT is not warning");

struct mcpwatch {
	struct conn	*c;
	json_object	*id;		/* of the tools/call */
	json_object	*token;		/* NULL: no progress */
	char		 ticket[TICKET_LEN];
	char		*tool;
	double		 last;		/* progress sent last; -1: none */
	int		 k;		/* pre-run notes after the first */
	int		 queued, running;
	int64_t		 position, pos_ms;
	char		 blocked[BLOCKED_MAX];
	int		 level;		/* its own; -1: the connection's */
};

static void	 mcpwatch_event(void *, json_object *);

int
mcpwatch_level(const char *name)
{
	int	i;

	for (i = 0; levels[i] != NULL; i++)
		if (strcmp(levels[i], name) == 0)
			return i;
	return -1;
}

enum rpc_status
method_logging_set_level(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	const char	*name;
	int		 level;

	if (param_string(params, "level", 1, &name, err) == -1)
		return RPC_ERROR;
	if ((level = mcpwatch_level(name)) == -1)
		return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"level\" must be one of debug, info, notice, warning, "
		    "error, critical, alert, emergency; not '%.64s'", name);
	req->conn->log_level = level;
	*result = json_object_new_object();
	return RPC_OK;
}

int
mcpwatch_token(json_object *params, json_object **token,
    struct rpc_error *err)
{
	json_object	*meta, *t;

	*token = NULL;
	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    meta == NULL)
		return 0;
	if (!json_object_is_type(meta, json_type_object)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"_meta\" must be an object");
		return -1;
	}
	if (!json_object_object_get_ex(meta, "progressToken", &t))
		return 0;
	if (!json_object_is_type(t, json_type_string) &&
	    !json_object_is_type(t, json_type_int)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"_meta.progressToken\" must be a string or an integer");
		return -1;
	}
	*token = t;
	return 0;
}

/* A number as JSON: an integer when it is one. */
static json_object *
number_json(double v)
{
	if ((double)(int64_t)v == v)
		return json_object_new_int64((int64_t)v);
	return json_object_new_double(v);
}

/* notifications/progress at v, if it is more than the last. */
static void
mw_progress(struct mcpwatch *mw, double v, const char *msg)
{
	json_object	*p, *note;

	if (mw->token == NULL || v <= mw->last)
		return;
	mw->last = v;
	p = json_object_new_object();
	json_object_object_add(p, "progressToken", json_object_get(mw->token));
	json_object_object_add(p, "progress", number_json(v));
	json_object_object_add(p, "total", json_object_new_int(PROGRESS_TOTAL));
	json_object_object_add(p, "message", json_object_new_string(msg));
	note = rpc_notification("notifications/progress", p);
	conn_send_rel(mw->c, note, mw->id);
	json_object_put(note);
}

/* The next step before the tool runs: 1 - 2^-k. */
static void
mw_step(struct mcpwatch *mw, const char *msg)
{
	if (mw->k < PRERUN_MAX)
		mw->k++;
	mw_progress(mw, 1.0 - 1.0 / (double)(1ULL << mw->k), msg);
}

/* notifications/message, if level is at or above the connection's;
 * index < 0: not a tool's own line. */
static void
mw_log(struct mcpwatch *mw, const char *level, const char *msg,
    int64_t index)
{
	json_object	*data, *p, *note;
	int		 lv = mcpwatch_level(level);

	if (lv < 0 || lv < (mw->level >= 0 ? mw->level : mw->c->log_level))
		return;
	data = json_object_new_object();
	json_object_object_add(data, "ticket",
	    json_object_new_string(mw->ticket));
	json_object_object_add(data, "message", json_object_new_string(msg));
	json_object_object_add(data, "tool", json_object_new_string(mw->tool));
	if (index >= 0)
		json_object_object_add(data, "index",
		    json_object_new_int64(index));
	p = json_object_new_object();
	json_object_object_add(p, "level", json_object_new_string(level));
	json_object_object_add(p, "logger", json_object_new_string("cmdgate"));
	json_object_object_add(p, "data", data);
	note = rpc_notification("notifications/message", p);
	conn_send_rel(mw->c, note, mw->id);
	json_object_put(note);
}

/* Queued at pos (the first time, or moved), blocked by bb (or NULL). */
static void
mw_queued(struct mcpwatch *mw, int64_t pos, const char *bb)
{
	char	msg[128];
	int64_t	now = util_monotonic_ms();

	snprintf(msg, sizeof(msg), "queued, position %lld", (long long)pos);
	if (!mw->queued) {
		mw->queued = 1;
		mw_progress(mw, 0, msg);
		mw_log(mw, "debug", msg, -1);
		mw->position = pos;
		mw->pos_ms = now;
	} else if (pos != mw->position && now - mw->pos_ms >= POSITION_MS) {
		mw_step(mw, msg);
		mw->position = pos;
		mw->pos_ms = now;
	}
	if (strcmp(bb != NULL ? bb : "", mw->blocked) == 0)
		return;
	snprintf(mw->blocked, sizeof(mw->blocked), "%s", bb != NULL ? bb : "");
	if (bb == NULL)
		return;
	snprintf(msg, sizeof(msg), "blocked by %s", bb);
	mw_step(mw, msg);
	mw_log(mw, "info", msg, -1);
}

static void
mw_running(struct mcpwatch *mw)
{
	if (!mw->queued)
		mw_queued(mw, 0, NULL);
	if (mw->running)
		return;
	mw->running = 1;
	mw_progress(mw, PROGRESS_RUNNING, "running");
	mw_log(mw, "info", "started", -1);
}

/* The tool's own progress P[/T] (T absent: P is a percentage). */
static void
mw_tool_progress(struct mcpwatch *mw, json_object *ev)
{
	json_object	*t, *m;
	double		 p, total = PROGRESS_TOTAL;

	p = json_object_get_double(json_object_object_get(ev, "progress"));
	if (json_object_object_get_ex(ev, "total", &t))
		total = json_object_get_double(t);
	if (p > total)
		p = total;
	m = json_object_object_get(ev, "message");
	mw_running(mw);
	mw_progress(mw, PROGRESS_RUNNING + PROGRESS_SPAN * p / total,
	    m != NULL ? json_object_get_string(m) : "running");
}

/* The waiter's watch: one event of the job (submit.h). */
static void
mcpwatch_event(void *arg, json_object *ev)
{
	struct mcpwatch	*mw = arg;
	json_object	*v;
	const char	*kind = json_object_get_string(json_object_object_get(
			    ev, "event"));

	if (strcmp(kind, "queued") == 0) {
		v = json_object_object_get(ev, "blocked_by");
		mw_queued(mw, json_object_get_int64(json_object_object_get(ev,
		    "position")), v != NULL ? json_object_get_string(v) : NULL);
	} else if (strcmp(kind, "running") == 0)
		mw_running(mw);
	else if (strcmp(kind, "result") == 0)
		mw_progress(mw, PROGRESS_END, json_object_get_boolean(
		    json_object_object_get(ev, "ok")) ? "done" : "failed");
	else if (strcmp(kind, "progress") == 0)
		mw_tool_progress(mw, ev);
	else if (strcmp(kind, "log") == 0)
		mw_log(mw, json_object_get_string(json_object_object_get(ev,
		    "level")), json_object_get_string(json_object_object_get(
		    ev, "message")), json_object_get_int64(
		    json_object_object_get(ev, "index")));
}

struct mcpwatch *
mcpwatch_new(struct conn *c, json_object *id, json_object *token,
    struct jobs *J, struct waiter *w, uint64_t num, const char *tool)
{
	struct mcpwatch	*mw = xcalloc(1, sizeof(*mw));
	json_object	*ev;

	mw->c = c;
	mw->id = json_object_get(id);
	mw->token = json_object_get(token);
	mw->tool = xstrdup(tool);
	mw->last = -1;
	mw->level = -1;
	ticket_format(mw->ticket, sizeof(mw->ticket), num);
	if (w != NULL)
		waiter_set_watch(w, mcpwatch_event, mw);
	if ((ev = waiter_state(J, num)) != NULL)
		mcpwatch_event(mw, ev);
	json_object_put(ev);
	return mw;
}

int
mcpwatch_meta_level(json_object *params)
{
	json_object	*meta, *v;
	int		 lv;

	if (!json_object_object_get_ex(params, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, MCP_META_LEVEL, &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    (lv = mcpwatch_level(json_object_get_string(v))) < 0)
		return MCPWATCH_SILENT;
	return lv;
}

void
mcpwatch_set_level(struct mcpwatch *mw, int level)
{
	mw->level = level;
}

void
mcpwatch_end(struct mcpwatch *mw, json_object *job)
{
	const char	*st = json_object_get_string(json_object_object_get(job,
			    "status"));
	json_object	*e = json_object_object_get(job, "error");
	char		 msg[512];

	if (st == NULL)
		return;
	if (strcmp(st, "done") == 0)
		mw_log(mw, "info", "finished", -1);
	else if (strcmp(st, "cancelled") == 0)
		mw_log(mw, "notice", "cancelled", -1);
	else if (strcmp(st, "failed") == 0) {
		snprintf(msg, sizeof(msg), "failed%s%s", e != NULL ? ": " : "",
		    e != NULL ? json_object_get_string(e) : "");
		mw_log(mw, "error", msg, -1);
	}
}

void
mcpwatch_free(struct mcpwatch *mw)
{
	if (mw == NULL)
		return;
	json_object_put(mw->id);
	json_object_put(mw->token);
	free(mw->tool);
	free(mw);
}
