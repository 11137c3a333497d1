/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBMETHODS_H
#define CMDGATE_JOBMETHODS_H

#include <json-c/json.h>

#include "rpc.h"

struct server;

/* The job methods behind rpc_methods[] (cmdgate-protocol(7), Jobs). */
enum rpc_status	 method_batch_execute(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_poll_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_wait_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_cancel_job(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_queue_status(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* MCP tools/call: a tool becomes a job, a job method answers as a tool. */
enum rpc_status	 method_tools_call(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* MCP notifications/cancelled: the pending tools/call of that requestId
 * goes unanswered, and the job it submitted is cancelled. */
enum rpc_status	 method_mcp_cancelled(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/*
 * The record of a new job of commands by agent, each checked against the
 * table as batch_execute checks it (no label, no idempotency key, neither
 * atomic nor fail_fast), for submit_add(); NULL with err.  Caller puts.
 */
json_object	*jobmethods_record(struct server *, json_object *commands,
		    const char *agent, struct rpc_error *err);

#endif
