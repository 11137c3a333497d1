/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MCPLOG_H
#define CMDGATE_MCPLOG_H

#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"

/*
 * What an MCP client hears of its own tools/call jobs
 * (cmdgate-protocol(7), Model Context Protocol): notifications/progress
 * for a call with a progressToken, notifications/message at or above the
 * connection's level (logging/setLevel), each related to its call
 * (conn_send_rel), after the submit's commit and before the answer.
 */

struct conn;
struct jobs;
struct mcpwatch;
struct waiter;

/* logging/setLevel {level}. */
enum rpc_status	 method_logging_set_level(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* The index of level name in the order debug .. emergency, or -1. */
int		 mcplog_level(const char *name);
/*
 * The params._meta.progressToken of a tools/call: 0 with *token (borrowed;
 * NULL when there is none), or -1 with err (not a string or an integer).
 */
int		 mcplog_token(json_object *params, json_object **token,
		    struct rpc_error *err);
/*
 * Watch job num of tool for the call of id on c (both borrowed; token
 * NULL: no progress), through its waiter w, and say where it stands now.
 * Caller frees (mcpwatch_free) before w is gone or once it is answered.
 */
struct mcpwatch	*mcpwatch_new(struct conn *c, json_object *id,
		    json_object *token, struct jobs *J, struct waiter *w,
		    uint64_t num, const char *tool);
/* The job ended as job (borrowed, its object): its last log line. */
void		 mcpwatch_end(struct mcpwatch *, json_object *job);
void		 mcpwatch_free(struct mcpwatch *);

#endif
