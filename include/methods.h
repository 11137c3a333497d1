/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_METHODS_H
#define CMDGATE_METHODS_H

/*
 * The JSON-RPC and MCP methods (src/methods/).
 */

#include <stdint.h>

#include <json-c/json.h>

#include "net.h"
#include "tools.h"

struct conn;
struct jobs;
struct jobs_error;
struct mcpwatch;
struct server;
struct tool;
struct tooltab;
struct waiter;

/* clientlist.c */

/* list_clients: every connected client, in the order they connected. */
enum rpc_status	method_list_clients(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* subscribe_status: this connection hears notifications/status. */
enum rpc_status	method_subscribe_status(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* joblist.c */

/* list_jobs (cmdgate-protocol(7), Methods). */
enum rpc_status	 method_list_jobs(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* jobmethods.c */

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
/*
 * The engine's error jerr as JSON-RPC's, into err (cmdgate-protocol(7),
 * Errors): its code and data.type, the engine's reason as the message.
 * Returns RPC_ERROR.
 */
enum rpc_status	 jobmethods_error(struct rpc_error *err,
		    const struct jobs_error *jerr);
/*
 * tasks/result (2025-11-25): the tools/call result of the task's job once
 * it ends (now, when it has), its task named in _meta; tasks/cancel: the
 * job cancelled, the task answered once the job has ended.
 */
enum rpc_status	 method_tasks_result(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_tasks_cancel(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* mcp.c */

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

/*
 * The revision request req speaks (mcpver.h): 2026-07-28 when its
 * params._meta says so, else what its connection's initialize agreed.
 */
int		 mcp_rev(struct rpc_req *, json_object *params);
/* server/discover (2026-07-28). */
enum rpc_status	mcp_discover(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* The client's name a 2026-07-28 request's _meta gives (borrowed from
 * params), or dflt. */
const char	*mcp_client_name(json_object *params, const char *dflt);
/* Whether a 2026-07-28 request's _meta declares the tasks extension. */
int		 mcp_declares_tasks(json_object *params);
/* err: -32021, the tasks extension is not declared.  RPC_ERROR. */
enum rpc_status	 mcp_needs_tasks(struct rpc_error *err);
/*
 * Whether a tools/call runs as a task: *task its revision, or 0, with
 * MCP_TASK_ALWAYS when its tool runs only as a task ("task": "required":
 * -1 with err when the call does not ask for one), 0 for a tool that
 * never does; -1 with err for a malformed ask.
 */
#define MCP_TASK_ALWAYS	0x100
int		 mcp_task_wanted(struct rpc_req *, json_object *params,
		    int *task, struct rpc_error *err);

/* mcpcontent.c */

/* What exec tool t printed (out), as the MCP tool result it says it is
 * ("content": "mcp"), or an error result saying why it is not one.
 * Caller puts. */
json_object	*mcpcontent_result(const struct tool *t, const char *out);
/* Forward tool t's result, when its "image" is in it: the rest as text
 * and the picture as an image item, added to content; whether it was. */
int		 mcpcontent_image(json_object *content, const struct tool *t,
		    json_object *result);

/* mcplisten.c */

/* subscriptions/listen (2026-07-28): toolsListChanged and taskIds. */
enum rpc_status	 method_subscriptions_listen(struct rpc_req *,
		    json_object *, json_object **, struct rpc_error *);
/* notifications/cancelled of c's listen id: it ends (1), or no such (0). */
int		 mcplisten_cancel(struct conn *c, json_object *id);

/* mcptask.c */

/*
 * MCP tasks (cmdgate-protocol(7), Tasks): a task is a job, its id the
 * ticket.  rev is the revision of the request (mcpver.h).
 */
#define MCP_META_RELATED_TASK	"io.modelcontextprotocol/related-task"
/* The task status of a job: working, completed, failed, cancelled. */
const char	*mcptask_status(json_object *job);
/* Whether the job (queued or running) is a working task. */
int		 mcptask_working(json_object *job);
/* The task of a full job object (borrowed).  Caller puts. */
json_object	*mcptask_make(struct server *, json_object *job, int rev);
/* The answer to a tools/call that made job (borrowed) a task. */
json_object	*mcptask_created(struct server *, json_object *job, int rev);
/* res's _meta names task num (tasks/result). */
void		 mcptask_relate(json_object *res, uint64_t num);
/* A completed task's tasks/get carries its call's result (2026-07-28). */
void		 mcptask_embed(struct server *, json_object *task,
		    json_object *job);
/* 2025-11-25: c hears notifications/tasks/status when task num ends. */
void		 mcptask_watch(struct conn *c, uint64_t num);
/* Forget every such watch (the broker stops; before its jobs go). */
void		 mcptask_watch_free_all(void);
/* The error of a task id no job has. */
void		 mcptask_unknown(struct rpc_error *, int rev, const char *id);
/*
 * The job of task params.taskId: its number (mcptask_id), and its full
 * job object too (mcptask_job, caller puts); -1 or NULL with err: the
 * extension not declared (2026-07-28), no such task, the store failed.
 */
int		 mcptask_id(struct rpc_req *, json_object *params, int rev,
		    uint64_t *num, struct rpc_error *err);
json_object	*mcptask_job(struct rpc_req *, json_object *params, int rev,
		    uint64_t *num, struct rpc_error *err);
/* tasks/get, tasks/list. */
enum rpc_status	 method_tasks_get(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
enum rpc_status	 method_tasks_list(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* tasks/update (2026-07-28): acknowledged; cmdgate never asks input. */
enum rpc_status	 method_tasks_update(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);

/* mcpwatch.c */

/*
 * What an MCP client hears of its own tools/call jobs
 * (cmdgate-protocol(7), Model Context Protocol): notifications/progress
 * for a call with a progressToken, notifications/message at or above the
 * connection's level (logging/setLevel), each related to its call
 * (conn_send_rel), after the submit's commit and before the answer.
 */

/* logging/setLevel {level}. */
enum rpc_status	 method_logging_set_level(struct rpc_req *, json_object *,
		    json_object **, struct rpc_error *);
/* The index of level name in the order debug .. emergency, or -1. */
int		 mcpwatch_level(const char *name);
#define MCPWATCH_SILENT	8	/* above emergency: no log at all */
/* A 2026-07-28 request's level (_meta logLevel): without one, none. */
int		 mcpwatch_meta_level(json_object *params);
/* mw's call has a level of its own, not its connection's. */
void		 mcpwatch_set_level(struct mcpwatch *, int level);
/*
 * The params._meta.progressToken of a tools/call: 0 with *token (borrowed;
 * NULL when there is none), or -1 with err (not a string or an integer).
 */
int		 mcpwatch_token(json_object *params, json_object **token,
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

/* methods.c */

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
/* The table's tools (the enabled ones only, if enabled_only), each as one
 * makes it, in the table's order: list_tools and MCP's tools/list. */
json_object	*methods_tool_list(const struct tooltab *, int enabled_only,
		    json_object *(*one)(const struct tool *));

/* params.c */

/*
 * A method's params: 0, 1 when absent and optional, or -1 with err
 * filled (invalid_params, or unknown_ticket for param_ticket()).
 */
int	param_string(json_object *params, const char *key, int required,
	    const char **out, struct rpc_error *err);
int	param_bool(json_object *params, const char *key, int *out,
	    struct rpc_error *err);
int	param_uint(json_object *params, const char *key, uint64_t min,
	    uint64_t max, uint64_t *out, struct rpc_error *err);
/* The ticket parameter; -1 with err when missing or not a ticket. */
int	param_ticket(json_object *params, uint64_t *num, struct rpc_error *err);
/* Check a client name: 1-64 characters, no control characters. */
int	param_name_ok(const char *);

#endif
