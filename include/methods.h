/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_METHODS_H
#define CMDGATE_METHODS_H

#include <json-c/json.h>

#include "rpc.h"

/*
 * The broker's own methods behind rpc_methods[] (methods.c); the job
 * methods are in jobmethods.h, the Model Context Protocol ones in mcp.h.
 */

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

#endif
