/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_METHODS_H
#define CMDGATE_METHODS_H

#include <json-c/json.h>

#include "rpc.h"

/*
 * The handlers behind rpc_methods[]: the broker's own methods (methods.c)
 * and the Model Context Protocol ones (mcp.c).
 */

/* Params helpers: 0, 1 when absent and optional, or -1 with err filled. */
int	param_string(json_object *params, const char *key, int required,
	    const char **out, struct rpc_error *err);
int	param_bool(json_object *params, const char *key, int *out,
	    struct rpc_error *err);
/* Check a client name: 1-64 characters, no control characters. */
int	client_name_ok(const char *);

enum rpc_status	method_ping(struct rpc_req *, json_object *, json_object **,
		    struct rpc_error *);
enum rpc_status	method_set_client_name(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	method_authenticate(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	method_server_status(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	method_list_tools(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	method_get_tool_details(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	method_report_editor_state(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

enum rpc_status	mcp_initialize(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_initialized(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	mcp_tools_list(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

#endif
