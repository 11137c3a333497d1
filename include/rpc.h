/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RPC_H
#define CMDGATE_RPC_H

#include <sys/queue.h>

#include <stddef.h>

#include <json-c/json.h>

/*
 * JSON-RPC 2.0 of cmdgate-protocol(7), Framing and Errors: parse a
 * message, check it, dispatch it to a method and frame the answer.  Methods live in
 * methods.c and mcp.c and are listed in rpc_methods[].
 */

struct conn;

enum rpc_code {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_SECURITY_BLOCKED = -32001,
	RPC_UNKNOWN_TICKET = -32002,
	RPC_QUEUE_FULL = -32003,
	RPC_STORAGE_ERROR = -32004,
	RPC_UNAUTHORIZED = -32005,
};

#define RPC_REASON_MAX	512

struct rpc_error {
	int		 code;
	const char	*type;		/* data.type */
	char		*command;	/* data.command; NULL = the method */
	char		 reason[RPC_REASON_MAX];
};

/* What a method returns. */
enum rpc_status {
	RPC_OK,		/* *result set (may be NULL: answered with {}) */
	RPC_ERROR,	/* err filled in */
	RPC_DEFERRED,	/* rpc_defer() was called: answered later */
};

struct rpc_batch;

/* One request while it is being answered. */
struct rpc_req {
	struct conn		*conn;
	json_object		*id;		/* borrowed; NULL with id null */
	int			 notification;	/* no id member: no answer */
	const char		*method;	/* borrowed from the message */
	struct rpc_batch	*batch;		/* the batch it came in, or NULL */
};

/*
 * A request whose answer waits (wait_job, a sync batch_execute,
 * tools/call).  It belongs to its connection; when the connection closes
 * first, cancel(arg) is called (unless NULL) and the owner forgets it.
 */
struct rpc_pending {
	TAILQ_ENTRY(rpc_pending)	 entry;
	struct conn			*conn;
	json_object			*id;
	char				*method;
	int				 notification;
	struct rpc_batch		*batch;
	void				(*cancel)(void *);
	void				*arg;
};
TAILQ_HEAD(rpc_pendings, rpc_pending);

typedef enum rpc_status (*rpc_handler)(struct rpc_req *, json_object *params,
    json_object **result, struct rpc_error *);

#define RPC_NOAUTH	0x01	/* may be called before authenticating */
#define RPC_WAITS	0x02	/* may answer later (counts to --max-waits) */
#define RPC_SESSION	0x04	/* once answered, the connection is a session
				   that is never idle */

#define RPC_BATCH_STEP	8	/* batch requests answered per loop turn */

struct rpc_method {
	const char	*name;
	rpc_handler	 handler;
	int		 flags;
};

extern const struct rpc_method	rpc_methods[];

/*
 * Handle one framed message from c; buf[len] must be NUL.  Answers go out
 * through conn_send.
 */
void		 rpc_message(struct conn *c, const char *buf, size_t len);

/*
 * Keep req for a later answer: the handler returns RPC_DEFERRED and the
 * owner later calls rpc_complete() exactly once, or is told by cancel().
 */
struct rpc_pending *rpc_defer(struct rpc_req *, void (*cancel)(void *),
		    void *arg);
/* Answer a deferred request (result taken, or err) and free it. */
void		 rpc_complete(struct rpc_pending *, json_object *result,
		    struct rpc_error *err);
/* The connection is closing: cancel and free its deferred requests. */
void		 rpc_cancel_all(struct conn *);

/* Fill err; returns RPC_ERROR so handlers can "return rpc_fail(...)". */
enum rpc_status	 rpc_fail(struct rpc_error *err, int code, const char *type,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Error response {"jsonrpc","id","error"}; id borrowed; caller puts. */
json_object	*rpc_error_response(json_object *id, int code,
		    const char *type, const char *command, const char *reason);
/* A notification {"jsonrpc","method","params"}; params taken; caller puts. */
json_object	*rpc_notification(const char *method, json_object *params);
const char	*rpc_code_message(int code);

#endif
