/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLIENT_H
#define CMDGATE_CLIENT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "jsonl.h"

/*
 * The client side of the protocol, for cmdgate(1): one connection, one
 * request at a time, answers matched by id, notifications skipped.
 */

/* Exit statuses of cmdgate(1), from sysexits(3) where they fit. */
#define CX_DONE		0
#define CX_FAILED	1
#define CX_CANCELLED	2
#define CX_RUNNING	3
#define CX_USAGE	64
#define CX_UNAVAILABLE	69
#define CX_NOPERM	77

/* How long a call waits for its answer unless told (--reply-timeout). */
#define CG_REPLY_TIMEOUT_S	30

/*
 * Getting back to a broker that went away (cmdgate mcp, wait, submit
 * --wait): the first try this soon, then twice as long each time, up to
 * the cap.
 */
#define CG_RETRY_FIRST_MS	100
#define CG_RETRY_MAX_MS		2000

struct cg_client {
	int		 fd;
	struct jsonl	 jl;		/* reads fd */
	int64_t		 next_id;
	int64_t		 timeout_ms;	/* for each answer; from the target */
	char		 err[512];	/* why the last call failed */
	int		 lost;		/* ... by the connection's end */
};

struct cg_target {
	const char	*host;
	const char	*port;
	const char	*socket;	/* wins over host and port */
	const char	*token_file;	/* NULL: look in the state dir */
	const char	*state_dir;	/* NULL: cmdgated's default */
	int64_t		 reply_timeout_ms;	/* 0: CG_REPLY_TIMEOUT_S */
};

/*
 * The token to present to the broker at t (see client.c); 0 with *tok
 * (caller frees; NULL for none) and, unless owner is NULL, the owner of
 * its file in *owner; or an exit status with c->err set.
 */
int		 cg_find_token(struct cg_client *, const struct cg_target *,
		    char **tok, uid_t *owner);
/*
 * Whether the TCP listener at the other end of fd may have the token of
 * a file that owner owns: 0 when the kernel says owner holds its socket,
 * or when it is another machine's (not loopback, unknown to the kernel:
 * nothing can be checked there, cmdgate(1)); -1 with err naming who
 * holds it and who should, or why it cannot tell.  Ask only once the
 * listener has sent something: before it accepts, the kernel names no
 * owner.
 */
int		 cg_peer_check(int fd, uid_t owner, char *err, size_t errlen);
/*
 * Connect, and authenticate with the token found (cg_find_token) once the
 * listener is known to be the broker's (cg_peer_check); 0, or an exit
 * status with c->err set.
 */
int		 cg_connect(struct cg_client *, const struct cg_target *);
void		 cg_close(struct cg_client *);
/*
 * Call method with params (taken; NULL for none).  Returns the result
 * (caller puts), or NULL with *error the error object (caller puts) or,
 * when the connection failed, *error NULL and c->err set.  The answer is
 * the one with the request's id, or an error with a null id (the broker
 * could not read the request); it must come within c->timeout_ms, and
 * must be strict JSON.
 */
json_object	*cg_call(struct cg_client *, const char *method,
		    json_object *params, json_object **error);
/* The same for a request that asks the broker to wait up to wait_ms. */
json_object	*cg_call_wait(struct cg_client *, const char *method,
		    json_object *params, int64_t wait_ms, json_object **error);
/* The exit status that fits a JSON-RPC error object. */
int		 cg_error_status(json_object *error);

#endif
