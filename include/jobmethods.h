/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBMETHODS_H
#define CMDGATE_JOBMETHODS_H

#include <json-c/json.h>

#include "rpc.h"

/* The job methods behind rpc_methods[] (cmdgate-protocol(7), Jobs). */
enum rpc_status	 method_batch_execute(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_poll_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_wait_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_cancel_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_list_jobs(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_queue_status(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* MCP tools/call: a tool becomes a job, a job method answers as a tool. */
enum rpc_status	 method_tools_call(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

#endif
