/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MCP_H
#define CMDGATE_MCP_H

#include <json-c/json.h>

#include "rpc.h"
#include "tools.h"

/* The Model Context Protocol methods behind rpc_methods[] (mcp.c). */
enum rpc_status	mcp_initialize(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_initialized(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_tools_list(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* The tools/call result that carries r (taken) as text and as
 * structuredContent.  Caller puts. */
json_object	*mcp_tool_result(json_object *r, int is_error);
/*
 * The tools/call result of a job object (taken), its ticket and status in
 * _meta ("cmdgate/ticket", "cmdgate/status").  Done: what its commands
 * printed as content (an exec tool's stdout, an MCP upstream's content,
 * another upstream's result as JSON) and the job as structuredContent;
 * failed or cancelled: isError, and why as text; else where it stands.
 * With structured, when the job's tool declares an output_schema in tab:
 * its output as structuredContent, or an error saying why there is none.
 * Caller puts.
 */
json_object	*mcp_job_result(const struct tooltab *tab, json_object *job,
		    int structured);

#endif
