/* SPDX-License-Identifier: ISC */
/*
 * MCP tasks backed by tickets (cmdgate-protocol(7), Tasks): a task is a
 * job, its id the job's ticket, its state the job's, kept as long as the
 * job (--result-ttl after it ends) and across restarts as the job is.
 * tasks/get, tasks/result, tasks/list, tasks/cancel and tasks/update in
 * the 2025-11-25 revision's shape (ttl, pollInterval) or in the
 * io.modelcontextprotocol/tasks extension's of 2026-07-28 (ttlMs,
 * pollIntervalMs, resultType).
 */
#include "config.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "jstrict.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "options.h"
#include "server.h"
#include "store.h"
#include "ticket.h"
#include "util.h"

#define TASKS_PAGE		100	/* tasks/list: tasks a page */
#define POLL_QUEUED_MS		2000
#define POLL_RUNNING_MS		1000

/* A 2025-11-25 task whose client hears when it ends. */
struct taskwatch {
	TAILQ_ENTRY(taskwatch)	 entry;
	struct server		*srv;
	uint64_t		 conn_id;
	struct waiter		*w;
};
static TAILQ_HEAD(, taskwatch) taskwatches =
    TAILQ_HEAD_INITIALIZER(taskwatches);

struct tasklist {
	json_object	*tasks;
	struct server	*srv;
	int		 rev;
	uint64_t	 last;
	int		 more;
};

/* The string member key of o, or NULL. */
static const char *
task_str(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int
mcptask_working(json_object *job)
{
	const char	*st = task_str(job, "status");

	return st != NULL && (strcmp(st, "queued") == 0 ||
	    strcmp(st, "running") == 0);
}

/*
 * A job's task status.  A job whose command failed is a call that
 * completed with its tool's error (isError), as a tools/call answers
 * it; one that failed before or beside its commands (interrupted by a
 * restart, a damaged record) failed.
 */
const char *
mcptask_status(json_object *job)
{
	const char	*st = task_str(job, "status");

	if (st == NULL)
		return "failed";
	if (strcmp(st, "done") == 0 || (strcmp(st, "failed") == 0 &&
	    json_object_object_get_ex(job, "failed_at_command", NULL)))
		return "completed";
	if (strcmp(st, "failed") == 0 || strcmp(st, "cancelled") == 0)
		return st;
	return "working";
}

/* What the task's status does not say: where a job waits, and why. */
static char *
task_message(json_object *job)
{
	const char	*st = task_str(job, "status"), *by, *e;
	json_object	*pos;
	char		*m;

	if (st == NULL)
		return NULL;
	if (strcmp(st, "queued") == 0) {
		by = task_str(job, "blocked_by");
		if (json_object_object_get_ex(job, "position", &pos))
			m = xasprintf("queued, position %d%s%s",
			    json_object_get_int(pos), by != NULL ?
			    ", blocked_by: " : "", by != NULL ? by : "");
		else
			m = xasprintf("queued%s%s", by != NULL ?
			    ", blocked_by: " : "", by != NULL ? by : "");
		return m;
	}
	if (strcmp(st, "running") == 0)
		return xstrdup("running");
	if ((e = task_str(job, "error")) != NULL &&
	    (strcmp(st, "failed") == 0 || strcmp(st, "cancelled") == 0))
		return xstrdup(e);
	return NULL;
}

json_object *
mcptask_make(struct server *srv, json_object *job, int rev)
{
	json_object	*t = json_object_new_object();
	const char	*st = task_str(job, "status"), *when;
	char		*msg;
	int64_t		 ttl = (int64_t)srv->opt->result_ttl * 1000;

	json_object_object_add(t, "taskId", json_object_new_string(
	    task_str(job, "ticket") != NULL ? task_str(job, "ticket") : ""));
	json_object_object_add(t, "status",
	    json_object_new_string(mcptask_status(job)));
	if ((msg = task_message(job)) != NULL)
		json_object_object_add(t, "statusMessage",
		    json_object_new_string(msg));
	free(msg);
	when = task_str(job, "created_at");
	json_object_object_add(t, "createdAt",
	    json_object_new_string(when != NULL ? when : ""));
	if (task_str(job, "finished_at") != NULL)
		when = task_str(job, "finished_at");
	else if (task_str(job, "started_at") != NULL)
		when = task_str(job, "started_at");
	json_object_object_add(t, "lastUpdatedAt",
	    json_object_new_string(when != NULL ? when : ""));
	json_object_object_add(t, rev >= MCP_REV_2026 ? "ttlMs" : "ttl",
	    json_object_new_int64(ttl));
	if (st != NULL && (strcmp(st, "queued") == 0 ||
	    strcmp(st, "running") == 0))
		json_object_object_add(t, rev >= MCP_REV_2026 ?
		    "pollIntervalMs" : "pollInterval", json_object_new_int(
		    strcmp(st, "queued") == 0 ? POLL_QUEUED_MS :
		    POLL_RUNNING_MS));
	return t;
}

/*
 * The job params.taskId names, into *num; -1 with err when it names none
 * this broker knows (not a ticket, or expired).
 */
int
mcptask_id(struct rpc_req *req, json_object *params, int rev, uint64_t *num,
    struct rpc_error *err)
{
	const char	*id;

	if (rev >= MCP_REV_2026 && !mcp_declares_tasks(params)) {
		mcp_needs_tasks(err);
		return -1;
	}
	if (param_string(params, "taskId", 1, &id, err) == -1)
		return -1;
	if (ticket_parse(id, num) == 0)
		return 0;
	mcptask_unknown(err, rev, id);
	(void)req;
	return -1;
}

void
mcptask_unknown(struct rpc_error *err, int rev, const char *id)
{
	(void)rev;	/* -32602 in both revisions */
	rpc_fail(err, RPC_INVALID_PARAMS, "unknown_task", "no task '%.40s': "
	    "not one of this broker's, or it ended more than --result-ttl "
	    "ago", id);
}

json_object *
mcptask_job(struct rpc_req *req, json_object *params, int rev, uint64_t *num,
    struct rpc_error *err)
{
	struct jobs_error	 jerr;
	json_object		*job;
	int			 found;
	char			 t[TICKET_LEN];

	if (mcptask_id(req, params, rev, num, err) == -1)
		return NULL;
	if (req->conn->srv->jobs == NULL) {
		rpc_fail(err, RPC_INTERNAL_ERROR, "internal_error",
		    "this broker has no job store open");
		return NULL;
	}
	memset(&jerr, 0, sizeof(jerr));
	job = jobview_get(req->conn->srv->jobs, *num, 1, &found, &jerr);
	if (job == NULL && !found && jerr.code == JOBS_OK) {
		ticket_format(t, sizeof(t), *num);
		mcptask_unknown(err, rev, t);
	} else if (job == NULL)
		rpc_fail(err, RPC_STORAGE_ERROR, "storage_error", "%s",
		    jerr.reason);
	return job;
}

enum rpc_status
method_tasks_get(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	json_object	*job;
	uint64_t	 num;
	int		 rev = mcp_rev(req, params);

	if ((job = mcptask_job(req, params, rev, &num, err)) == NULL)
		return RPC_ERROR;
	*result = mcptask_make(req->conn->srv, job, rev);
	if (rev >= MCP_REV_2026)
		mcptask_embed(req->conn->srv, *result, job);
	json_object_put(job);
	return RPC_OK;
}

/* tasks/list: one task of the store, when its job was made as a task. */
static int
task_listed(void *arg, uint64_t num, char status, const char *json)
{
	struct tasklist	*tl = arg;
	json_object	*rec, *job;

	(void)status;
	if (jstrict_parse_str(json, &rec) != 0)
		return 0;
	if (!json_object_object_get_ex(rec, "mcp_task", NULL)) {
		json_object_put(rec);
		return 0;
	}
	if (json_object_array_length(tl->tasks) == TASKS_PAGE) {
		json_object_put(rec);
		tl->more = 1;
		return 1;
	}
	job = jobview_make(tl->srv->jobs, rec, NULL, 1);
	json_object_put(rec);
	if (job_pending(tl->srv->jobs, num)) {
		json_object_put(job);
		job = jobview_get(tl->srv->jobs, num, 1, &(int){0},
		    &(struct jobs_error){0});
	}
	if (job != NULL)
		json_object_array_add(tl->tasks, mcptask_make(tl->srv, job,
		    tl->rev));
	json_object_put(job);
	tl->last = num;
	return 0;
}

enum rpc_status
method_tasks_list(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct tasklist	 tl;
	const char	*cursor = NULL;
	uint64_t	 after = 0;
	char		 t[TICKET_LEN];
	int		 rc;

	memset(&tl, 0, sizeof(tl));
	tl.srv = req->conn->srv;
	tl.rev = mcp_rev(req, params);
	if (param_string(params, "cursor", 0, &cursor, err) == -1)
		return RPC_ERROR;
	if (cursor != NULL && ticket_parse(cursor, &after) == -1)
		return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"cursor\" '%.40s' is not one tasks/list gave", cursor);
	if (tl.srv->jobs == NULL)
		return rpc_fail(err, RPC_INTERNAL_ERROR, "internal_error",
		    "this broker has no job store open");
	tl.tasks = json_object_new_array();
	if ((rc = store_jobs_each(jobs_store(tl.srv->jobs), cursor != NULL ?
	    after + 1 : 0, task_listed, &tl)) != 0 && rc != 1) {
		json_object_put(tl.tasks);
		return rpc_fail(err, RPC_STORAGE_ERROR, "storage_error",
		    "the store could not be read: %s", store_strerror(rc));
	}
	*result = json_object_new_object();
	json_object_object_add(*result, "tasks", tl.tasks);
	if (tl.more) {
		ticket_format(t, sizeof(t), tl.last);
		json_object_object_add(*result, "nextCursor",
		    json_object_new_string(t));
	}
	return RPC_OK;
}

json_object *
mcptask_created(struct server *srv, json_object *job, int rev)
{
	json_object	*r, *t = mcptask_make(srv, job, rev);

	if (rev >= MCP_REV_2026) {
		json_object_object_add(t, "resultType",
		    json_object_new_string("task"));
		return t;
	}
	r = json_object_new_object();
	json_object_object_add(r, "task", t);
	return r;
}

void
mcptask_relate(json_object *res, uint64_t num)
{
	json_object	*meta, *rel;
	char		 t[TICKET_LEN];

	if (!json_object_object_get_ex(res, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(res, "_meta", meta);
	}
	ticket_format(t, sizeof(t), num);
	rel = json_object_new_object();
	json_object_object_add(rel, "taskId", json_object_new_string(t));
	json_object_object_add(meta, MCP_META_RELATED_TASK, rel);
}

void
mcptask_embed(struct server *srv, json_object *task, json_object *job)
{
	const char	*st = mcptask_status(job), *why;
	json_object	*e, *r;

	if (strcmp(st, "completed") == 0) {
		r = mcp_job_result(srv->tools, json_object_get(job), 1);
		/* The call's own result, as complete as its tools/call's. */
		json_object_object_add(r, "resultType",
		    json_object_new_string("complete"));
		json_object_object_add(task, "result", r);
	}
	else if (strcmp(st, "failed") == 0) {
		why = task_str(job, "error");
		e = json_object_new_object();
		json_object_object_add(e, "code",
		    json_object_new_int(RPC_INTERNAL_ERROR));
		json_object_object_add(e, "message", json_object_new_string(
		    why != NULL ? why : "the job failed"));
		json_object_object_add(task, "error", e);
	}
}

enum rpc_status
method_tasks_update(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	json_object	*job;
	uint64_t	 num;

	/* cmdgate never asks for input: the answers are not looked at. */
	if ((job = mcptask_job(req, params, MCP_REV_2026, &num, err)) == NULL)
		return RPC_ERROR;
	json_object_put(job);
	*result = json_object_new_object();
	return RPC_OK;
}

/* waiter.c: a watched task's job ended: its client, if still there, hears. */
static void
taskwatch_done(void *arg, json_object *job, struct jobs_error *jerr)
{
	struct taskwatch	*tw = arg;
	struct conn		*c = server_conn_find(tw->srv, tw->conn_id);
	json_object		*note;

	(void)jerr;
	if (job != NULL && c != NULL && !c->dead && !c->closing) {
		note = rpc_notification("notifications/tasks/status",
		    mcptask_make(tw->srv, job, MCP_REV_2025));
		conn_send(c, note);
		json_object_put(note);
	}
	json_object_put(job);
	TAILQ_REMOVE(&taskwatches, tw, entry);
	free(tw);
}

void
mcptask_watch(struct conn *c, uint64_t num)
{
	struct taskwatch	*tw;

	if (!job_pending(c->srv->jobs, num))
		return;
	tw = xcalloc(1, sizeof(*tw));
	tw->srv = c->srv;
	tw->conn_id = c->id;
	tw->w = waiter_watch(c->srv->jobs, num, taskwatch_done, NULL, tw);
	TAILQ_INSERT_TAIL(&taskwatches, tw, entry);
}

void
mcptask_watch_free_all(void)
{
	struct taskwatch	*tw;

	while ((tw = TAILQ_FIRST(&taskwatches)) != NULL) {
		waiter_cancel(tw->w);
		TAILQ_REMOVE(&taskwatches, tw, entry);
		free(tw);
	}
}
