/* SPDX-License-Identifier: ISC */
/*
 * MCP 2026-07-28's subscriptions/listen (cmdgate-protocol(7), Model
 * Context Protocol): a request never answered while it lasts, on whose
 * stream the server says what changed, each notification naming the
 * listen (its id) in _meta.  cmdgate honours toolsListChanged (a SIGHUP
 * that changes the table) and, with the tasks extension, taskIds (a
 * task's end, as notifications/tasks carrying the task as tasks/get
 * gives it).  The client ends it by closing the stream (HTTP) or with
 * notifications/cancelled (stdio).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "server.h"
#include "ticket.h"
#include "util.h"

#define LISTEN_TASKS_MAX	64	/* taskIds of one listen */
#define MCP_META_SUB		"io.modelcontextprotocol/subscriptionId"

struct mcplisten;

/* One task a listen follows until it ends. */
struct lwatch {
	struct mcplisten	*l;
	struct waiter		*w;
	uint64_t		 num;
};

struct mcplisten {
	struct conn_pending	*p;
	struct lwatch		 watch[LISTEN_TASKS_MAX];
	size_t			 nwatch;
};

/* A notification of listen l's: method, params (taken) with its id. */
static void
listen_send(struct mcplisten *l, const char *method, json_object *params)
{
	json_object	*meta, *note;

	if (!json_object_object_get_ex(params, "_meta", &meta)) {
		meta = json_object_new_object();
		json_object_object_add(params, "_meta", meta);
	}
	json_object_object_add(meta, MCP_META_SUB, json_object_get(l->p->id));
	note = rpc_notification(method, params);
	conn_send_rel(l->p->conn, note, l->p->id);
	json_object_put(note);
}

/* The task of job (a full job object, taken), to its listen. */
static void
listen_task(struct mcplisten *l, json_object *job)
{
	struct server	*srv = l->p->conn->srv;
	json_object	*t = mcptask_make(srv, job, MCP_REV_2026);

	mcptask_embed(srv, t, job);
	json_object_put(job);
	listen_send(l, "notifications/tasks", t);
}

/* waiter.c: a followed task's job ended. */
static void
listen_task_done(void *arg, json_object *job, struct jobs_error *jerr)
{
	struct lwatch	*lw = arg;

	(void)jerr;
	lw->w = NULL;
	if (job != NULL)
		listen_task(lw->l, job);
}

/* The listen's request is over (its connection went, or cancelled). */
static void
listen_free(void *arg)
{
	struct mcplisten	*l = arg;
	size_t			 i;

	for (i = 0; i < l->nwatch; i++)
		if (l->watch[i].w != NULL)
			waiter_cancel(l->watch[i].w);
	conn_listen_tools(l->p->conn, l->p->id, 0);
	free(l);
}

/*
 * Follow the tasks of ids (borrowed): the ones known, into honored; the
 * jobs of those over already into ended, to be said once.
 */
static void
listen_tasks(struct mcplisten *l, struct jobs *J, json_object *ids,
    json_object *honored, json_object *ended)
{
	struct jobs_error	 jerr;
	json_object		*id, *job;
	uint64_t		 num;
	size_t			 i;
	int			 found;

	for (i = 0; i < json_object_array_length(ids); i++) {
		id = json_object_array_get_idx(ids, i);
		memset(&jerr, 0, sizeof(jerr));
		if (!json_object_is_type(id, json_type_string) ||
		    ticket_parse(json_object_get_string(id), &num) == -1 ||
		    (job = jobview_get(J, num, 1, &found, &jerr)) == NULL)
			continue;
		json_object_array_add(honored, json_object_get(id));
		if (!job_pending(J, num)) {
			json_object_array_add(ended, job);
			continue;
		}
		json_object_put(job);
		l->watch[l->nwatch].l = l;
		l->watch[l->nwatch].num = num;
		l->watch[l->nwatch].w = waiter_watch(J, num, listen_task_done,
		    NULL, &l->watch[l->nwatch]);
		l->nwatch++;
	}
}

/* params.notifications: checked, or -1 with err. */
static int
listen_check(json_object *params, json_object **want, json_object **ids,
    struct rpc_error *err)
{
	*ids = NULL;
	if (!json_object_object_get_ex(params, "notifications", want) ||
	    !json_object_is_type(*want, json_type_object)) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"notifications\" must be an object naming what to hear");
		return -1;
	}
	if (!json_object_object_get_ex(*want, "taskIds", ids))
		return 0;
	if (!mcp_declares_tasks(params)) {
		mcp_needs_tasks(err);
		return -1;
	}
	if (!json_object_is_type(*ids, json_type_array) ||
	    json_object_array_length(*ids) > LISTEN_TASKS_MAX) {
		rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "\"taskIds\" must be a list of at most %d task ids",
		    LISTEN_TASKS_MAX);
		return -1;
	}
	return 0;
}

enum rpc_status
method_subscriptions_listen(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct mcplisten	*l;
	json_object		*want, *ids, *v, *honored, *ack, *ended;
	size_t			 i;

	(void)result;
	if (!req->modern)
		return rpc_fail(err, RPC_METHOD_NOT_FOUND, "method_not_found",
		    "subscriptions/listen is MCP " MCP_VERSION_2026 "'s: "
		    "send it with its _meta");
	if (listen_check(params, &want, &ids, err) == -1)
		return RPC_ERROR;
	if (ids != NULL && req->conn->srv->jobs == NULL)
		return rpc_fail(err, RPC_INTERNAL_ERROR, "internal_error",
		    "this broker has no job store open");
	l = xcalloc(1, sizeof(*l));
	l->p = conn_defer(req, listen_free, l);
	honored = json_object_new_object();
	if (json_object_object_get_ex(want, "toolsListChanged", &v) &&
	    json_object_get_boolean(v)) {
		json_object_object_add(honored, "toolsListChanged",
		    json_object_new_boolean(1));
		conn_listen_tools(req->conn, req->id, 1);
	}
	/* First the acknowledgement, then what the tasks may say. */
	ended = json_object_new_array();
	if (ids != NULL) {
		v = json_object_new_array();
		json_object_object_add(honored, "taskIds", v);
		listen_tasks(l, req->conn->srv->jobs, ids, v, ended);
	}
	ack = json_object_new_object();
	json_object_object_add(ack, "notifications", honored);
	listen_send(l, "notifications/subscriptions/acknowledged", ack);
	for (i = 0; i < json_object_array_length(ended); i++)
		listen_task(l, json_object_get(json_object_array_get_idx(ended,
		    i)));
	json_object_put(ended);
	return RPC_DEFERRED;
}

int
mcplisten_cancel(struct conn *c, json_object *id)
{
	struct conn_pending	*p;

	if ((p = conn_pending_find(c, id, "subscriptions/listen")) == NULL ||
	    p->cancel != listen_free)
		return 0;
	listen_free(p->arg);
	conn_drop(p);
	return 1;
}
