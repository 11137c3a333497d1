/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MCP_H
#define CMDGATE_MCP_H

#include <json-c/json.h>

#include "rpc.h"

/* The Model Context Protocol methods behind rpc_methods[] (mcp.c). */
enum rpc_status	mcp_initialize(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_initialized(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_tools_list(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

#endif
