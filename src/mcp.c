/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "conn.h"
#include "mcp.h"
#include "params.h"
#include "rpc.h"
#include "server.h"
#include "toolcmd.h"
#include "tools.h"
#include "util.h"

/* Newest first: the answer when a client asks for one we do not know. */
static const char *mcp_versions[] = {
	"2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

/* The job methods that MCP clients may call as tools. */
static const struct {
	const char	*name;
	const char	*description;
	const char	*schema;
} mcp_job_tools[] = {
	{ "poll_job", "Show a job: status, position, blocked_by, results",
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"}},\"required\":[\"ticket\"]}" },
	{ "wait_job", "Wait until a job finishes or timeout_s passes",
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"},\"timeout_s\":{\"type\":\"integer\"}},"
	  "\"required\":[\"ticket\"]}" },
	{ "cancel_job", "Cancel a queued or running job",
	  "{\"type\":\"object\",\"properties\":{\"ticket\":{\"type\":"
	  "\"string\"}},\"required\":[\"ticket\"]}" },
	{ "queue_status", "Show what runs, what waits and what holds reloads",
	  "{\"type\":\"object\"}" },
};

static json_object	*mcp_tool(const char *, const char *, json_object *);

enum rpc_status
mcp_initialize(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct conn	*c = req->conn;
	json_object	*ci, *name, *caps, *tools, *info;
	const char	*want = NULL, *ver = mcp_versions[0];
	size_t		 i;

	if (param_string(params, "protocolVersion", 0, &want, err) == -1)
		return RPC_ERROR;
	for (i = 0; want != NULL && mcp_versions[i] != NULL; i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			ver = mcp_versions[i];
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

/* One MCP tool entry; schema taken. */
static json_object *
mcp_tool(const char *name, const char *description, json_object *schema)
{
	json_object	*t = json_object_new_object();

	json_object_object_add(t, "name", json_object_new_string(name));
	json_object_object_add(t, "description",
	    json_object_new_string(description));
	json_object_object_add(t, "inputSchema", schema);
	return t;
}

enum rpc_status
mcp_tools_list(struct rpc_req *req, json_object *params,
    json_object **result, struct rpc_error *err)
{
	struct tooltab	*tab = req->conn->srv->tools;
	json_object	*list = json_object_new_array();
	size_t		 i;

	(void)params;
	(void)err;
	for (i = 0; i < tab->ntools; i++)
		if (tab->tools[i].enabled)
			json_object_array_add(list, mcp_tool(tab->tools[i].name,
			    tab->tools[i].description,
			    tool_input_schema(&tab->tools[i])));
	for (i = 0; i < sizeof(mcp_job_tools) / sizeof(mcp_job_tools[0]); i++)
		json_object_array_add(list, mcp_tool(mcp_job_tools[i].name,
		    mcp_job_tools[i].description,
		    json_tokener_parse(mcp_job_tools[i].schema)));
	*result = json_object_new_object();
	json_object_object_add(*result, "tools", list);
	return RPC_OK;
}

json_object *
mcp_tool_result(json_object *r, int is_error)
{
	json_object	*res = json_object_new_object(), *content, *t;

	t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(
	    json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN)));
	content = json_object_new_array();
	json_object_array_add(content, t);
	json_object_object_add(res, "content", content);
	json_object_object_add(res, "isError",
	    json_object_new_boolean(is_error));
	json_object_object_add(res, "structuredContent", r);
	return res;
}

json_object *
mcp_job_result(json_object *job)
{
	json_object	*v = NULL;
	const char	*st;

	json_object_object_get_ex(job, "status", &v);
	st = json_object_get_string(v);
	return mcp_tool_result(job, strcmp(st, "failed") == 0 ||
	    strcmp(st, "cancelled") == 0);
}
