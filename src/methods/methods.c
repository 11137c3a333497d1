/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "engine.h"
#include "link.h"
#include "log.h"
#include "methods.h"
#include "net.h"
#include "policy.h"
#include "proc.h"
#include "server.h"
#include "store.h"
#include "tools.h"
#include "util.h"

#define AUTH_STRIKES	3	/* wrong tokens before the connection closes */

const struct rpc_method rpc_methods[] = {
	{ "ping", method_ping, RPC_LEGACY },
	{ "set_client_name", method_set_client_name, 0 },
	{ "authenticate", method_authenticate, RPC_NOAUTH },
	{ "server_status", method_server_status, 0 },
	{ "list_clients", method_list_clients, 0 },
	{ "subscribe_status", method_subscribe_status, 0 },
	{ "list_tools", method_list_tools, 0 },
	{ "get_tool_details", method_get_tool_details, 0 },
	{ "report_editor_state", method_report_editor_state, 0 },
	{ "initialize", mcp_initialize, RPC_SESSION | RPC_LEGACY },
	{ "server/discover", mcp_discover, 0 },
	{ "notifications/initialized", mcp_initialized, RPC_LEGACY },
	{ "tools/list", mcp_tools_list, 0 },
	{ "tools/call", method_tools_call, RPC_WAITS },
	{ "notifications/cancelled", method_mcp_cancelled, 0 },
	{ "logging/setLevel", method_logging_set_level, RPC_LEGACY },
	{ "tasks/get", method_tasks_get, 0 },
	{ "tasks/result", method_tasks_result, RPC_WAITS | RPC_LEGACY },
	{ "tasks/list", method_tasks_list, RPC_LEGACY },
	{ "tasks/update", method_tasks_update, 0 },
	{ "subscriptions/listen", method_subscriptions_listen, RPC_WAITS },
	{ "tasks/cancel", method_tasks_cancel, RPC_WAITS },
	{ "batch_execute", method_batch_execute, RPC_WAITS },
	{ "poll_job", method_poll_job, 0 },
	{ "wait_job", method_wait_job, RPC_WAITS },
	{ "cancel_job", method_cancel_job, 0 },
	{ "list_jobs", method_list_jobs, 0 },
	{ "queue_status", method_queue_status, 0 },
	{ NULL, NULL, 0 },
};

enum rpc_status
method_ping(struct rpc_req *req, json_object *params, json_object **result,
    struct rpc_error *err)
{
	json_object	*m;

	(void)req;
	(void)err;
	*result = json_object_new_object();
	if (json_object_object_get_ex(params, "message", &m))
		json_object_object_add(*result, "message",
		    json_object_get(m));
	return RPC_OK;
}

enum rpc_status
method_set_client_name(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn	*c = req->conn;
	const char	*name;

	if (param_string(params, "name", 1, &name, err) == -1)
		return RPC_ERROR;
	if (!param_name_ok(name))
		return rpc_fail(err, RPC_INVALID_PARAMS, "invalid_params",
		    "a client name has 1 to %d printable characters",
		    CONN_NAME_MAX);
	free(c->name);
	c->name = xstrdup(name);
	server_status_changed(c->srv);
	*result = json_object_new_object();
	json_object_object_add(*result, "client_id",
	    json_object_new_uint64(c->id));
	json_object_object_add(*result, "name", json_object_new_string(name));
	return RPC_OK;
}

/* One more failed try on c: refused, and closed at the last strike. */
static enum rpc_status
auth_strike(struct conn *c, struct rpc_error *err, const char *why)
{
	if (++c->strikes >= AUTH_STRIKES) {
		c->closing = 1;
		return rpc_fail(err, RPC_UNAUTHORIZED, "unauthorized",
		    "%s, %d times: closing the connection", why,
		    AUTH_STRIKES);
	}
	return rpc_fail(err, RPC_UNAUTHORIZED, "unauthorized", "%s (%d of %d "
	    "tries; the connection closes after the last)", why, c->strikes,
	    AUTH_STRIKES);
}

enum rpc_status
method_authenticate(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn	*c = req->conn;
	struct server	*srv = c->srv;
	json_object	*tok;
	const char	*token;
	char		 why[128];
	int64_t		 now = util_monotonic_ms(), wait;

	if (param_string(params, "token", 1, &token, err) == -1)
		return RPC_ERROR;
	json_object_object_get_ex(params, "token", &tok);
	if (srv->token != NULL && !c->is_unix) {
		if (srv->authlimit == NULL)
			srv->authlimit = authlimit_new();
		/* Locked out: the token is not even looked at. */
		if ((wait = authlimit_locked(srv->authlimit, c->peer,
		    now)) > 0) {
			snprintf(why, sizeof(why), "too many wrong tokens from "
			    "this address: try again in %lld s",
			    (long long)wait);
			return auth_strike(c, err, why);
		}
		if (!server_token_ok(srv, token,
		    (size_t)json_object_get_string_len(tok))) {
			authlimit_failed(srv->authlimit, c->peer, now);
			return auth_strike(c, err, "wrong token");
		}
	}
	c->authenticated = 1;
	*result = json_object_new_object();
	json_object_object_add(*result, "authenticated",
	    json_object_new_boolean(1));
	return RPC_OK;
}

static json_object *
status_jobs_by_status(struct jobs *J)
{
	json_object	*o = json_object_new_object();
	int		 i;

	for (i = 0; i < JOB_NSTATUS; i++)
		json_object_object_add(o, job_status_name(i),
		    json_object_new_int64(J != NULL ? (int64_t)jobs_count(J, i) : 0));
	return o;
}

enum rpc_status
method_server_status(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct server		*srv = req->conn->srv;
	struct store_info	 si = { 0, 0, srv->opt->map_size, 0 };
	json_object		*r, *store;
	int			 rc;

	(void)params;
	if (srv->jobs != NULL && (rc = store_info(jobs_store(srv->jobs), &si)) != 0)
		return rpc_fail(err, RPC_STORAGE_ERROR, "storage_error",
		    "the store could not be read: %s", store_strerror(rc));
	store = json_object_new_object();
	json_object_object_add(store, "path",
	    json_object_new_string(srv->store_path));
	json_object_object_add(store, "jobs",
	    json_object_new_uint64(si.jobs));
	json_object_object_add(store, "map_used_bytes",
	    json_object_new_uint64(si.map_used));
	json_object_object_add(store, "map_size_bytes",
	    json_object_new_uint64(si.map_size));
	r = json_object_new_object();
	json_object_object_add(r, "version",
	    json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(r, "pid", json_object_new_int(getpid()));
	json_object_object_add(r, "uptime_s", json_object_new_int64(
	    (util_monotonic_ms() - srv->started_ms) / 1000));
	json_object_object_add(r, "listen", json_object_get(srv->listen_addrs));
	json_object_object_add(r, "clients",
	    json_object_new_int((int)srv->nconns));
	json_object_object_add(r, "store", store);
	json_object_object_add(r, "workers_alive", json_object_new_int64(
	    (int64_t)jobs_nworkers(srv->jobs)));
	json_object_object_add(r, "jobs_by_status",
	    status_jobs_by_status(srv->jobs));
	json_object_object_add(r, "tools", json_object_new_string(
	    srv->tools->source));
	json_object_object_add(r, "worker", srv->worker_path != NULL ?
	    json_object_new_string(srv->worker_path) : NULL);
	json_object_object_add(r, "fork_server", srv->jobs != NULL ?
	    forksrv_json(jobs_forksrv(srv->jobs)) : NULL);
	json_object_object_add(r, "editor", edprobe_json(srv->probe));
	json_object_object_add(r, "editor_unreachable",
	    json_object_new_boolean(edprobe_unreachable(srv->probe)));
	json_object_object_add(r, "editor_links", srv->links != NULL ?
	    links_json(srv->links) : json_object_new_array());
	json_object_object_add(r, "unity_status_dir",
	    face_ops[FACE_UNITY].status(srv));
	json_object_object_add(r, "unity_hub", srv->opt->unity_hub_server !=
	    NULL ? face_ops[FACE_HUB].status(srv) : NULL);
	*result = r;
	return RPC_OK;
}

json_object *
methods_tool_list(const struct tooltab *tab, int enabled_only,
    json_object *(*one)(const struct tool *))
{
	json_object	*list = json_object_new_array();
	size_t		 i;

	for (i = 0; i < tab->ntools; i++)
		if (!enabled_only || tab->tools[i].enabled)
			json_object_array_add(list, one(&tab->tools[i]));
	return list;
}

enum rpc_status
method_list_tools(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	(void)params;
	(void)err;
	*result = json_object_new_object();
	json_object_object_add(*result, "tools",
	    methods_tool_list(req->conn->srv->tools, 0, tool_details));
	return RPC_OK;
}

enum rpc_status
method_get_tool_details(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	const struct tool	*t;
	const char		*name;

	if (param_string(params, "name", 1, &name, err) == -1)
		return RPC_ERROR;
	if ((t = tooltab_find(req->conn->srv->tools, name)) == NULL) {
		rpc_fail(err, RPC_INVALID_PARAMS, "unknown_tool",
		    "no tool '%s' in the table; list_tools shows them", name);
		err->command = xstrdup(name);
		return RPC_ERROR;
	}
	*result = tool_details(t);
	return RPC_OK;
}

enum rpc_status
method_report_editor_state(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn		*c = req->conn;
	struct editor_flags	 f = c->editor;
	struct sched_busy	 all;

	if (param_bool(params, "tests_running", &f.tests_running, err) == -1 ||
	    param_bool(params, "compiling", &f.compiling, err) == -1 ||
	    param_bool(params, "busy", &f.busy, err) == -1)
		return RPC_ERROR;
	server_set_editor(c->srv, c, &f);
	edflags_busy(&c->srv->holds, 0, &all);
	*result = json_object_new_object();
	json_object_object_add(*result, "busy", edflags_json(&all));
	return RPC_OK;
}
