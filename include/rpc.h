/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RPC_H
#define CMDGATE_RPC_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * JSON-RPC 2.0 of cmdgate-protocol(7), Framing and Errors: the envelope
 * of requests, answers, errors and notifications.  conn.c runs requests
 * through rpc_methods[], the table of handlers, defined in methods.c (a
 * table of pointers, so that the transport includes no handler).
 */

struct conn;
struct conn_batch;

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
	RPC_HELD = -32006,	/* a face's call: its job still waits */
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
	RPC_DEFERRED,	/* conn_defer() was called: answered later */
};

/* One request while it is being answered. */
struct rpc_req {
	struct conn		*conn;
	json_object		*id;		/* borrowed; NULL with id null */
	int			 notification;	/* no id member: no answer */
	const char		*method;	/* borrowed from the message */
	struct conn_batch	*batch;		/* the batch it came in or NULL */
};

typedef enum rpc_status (*rpc_handler)(struct rpc_req *, json_object *params,
    json_object **result, struct rpc_error *);

#define RPC_NOAUTH	0x01	/* may be called before authenticating */
#define RPC_WAITS	0x02	/* may answer later (counts to --max-waits) */
#define RPC_SESSION	0x04	/* once answered, the connection is a session
				   that is never idle */

struct rpc_method {
	const char	*name;
	rpc_handler	 handler;
	int		 flags;
};

extern const struct rpc_method	rpc_methods[];

/* Fill err; returns RPC_ERROR so handlers can "return rpc_fail(...)". */
enum rpc_status	 rpc_fail(struct rpc_error *err, int code, const char *type,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Error response {"jsonrpc","id","error"}; id borrowed; caller puts. */
json_object	*rpc_error_response(json_object *id, int code,
		    const char *type, const char *command, const char *reason);
/* A notification {"jsonrpc","method","params"}; params taken; caller puts. */
json_object	*rpc_notification(const char *method, json_object *params);
const char	*rpc_code_message(int code);

/* The method called name, or NULL. */
const struct rpc_method *rpc_lookup(const char *name);
/*
 * Check the envelope of one request.  0 with *id, *method, *notif set
 * (id borrowed, NULL for id null), or -1 with err (-32600); *id is kept
 * when it is a valid one, so that the client can match the error.
 */
int		 rpc_check(json_object *msg, json_object **id,
		    const char **method, int *notif, struct rpc_error *err);
/* Check the params of msg: 0 with *params (borrowed, NULL when absent),
 * or -1 with err. */
int		 rpc_check_params(json_object *msg, json_object **params,
		    struct rpc_error *err);
/* The response to req: result (taken) or err; NULL for a notification.
 * Caller puts. */
json_object	*rpc_answer(struct rpc_req *req, enum rpc_status,
		    json_object *result, struct rpc_error *err);

#endif
