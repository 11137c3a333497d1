/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UPSTREAM_H
#define CMDGATE_UPSTREAM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "upstatus.h"

/*
 * One connection to an upstream (an editor's bridge) in one of the
 * dialects of cmdgate.tools(5), forward: jsonrpc, jsonrpc-lsp, unity-mcp,
 * mcp-http.  Every call blocks until its answer, the deadline, SIGTERM
 * (got_term) or the broker's end of the event pipe closing.
 */

struct upstream;

/*
 * Connect to to (HOST:PORT or [IPV6]:PORT; for mcp-http a URL
 * http://HOST:PORT/PATH) and do the dialect's handshake (unity-mcp: the
 * WELCOME line; mcp-http: initialize, notifications/initialized).  *up
 * and UP_OK, or a status with err (a sentence a person can act on) and
 * *nolisten 1 when the connect was refused: nothing listens there.
 */
enum up_status	 upstream_open(const char *dialect, const char *to,
		    int64_t deadline, const sigset_t *waitmask,
		    struct upstream **up, int *nolisten, char *err,
		    size_t errlen);
/*
 * Send method with params (borrowed, may be NULL: {}) and wait for its
 * answer.  UP_OK: *out is the result (jsonrpc: "result"; unity-mcp: the
 * envelope's "result"; mcp-http: the CallToolResult).  UP_ERROR: *out is
 * the error as the upstream sent it (jsonrpc: the error object;
 * unity-mcp: the whole envelope; mcp-http: the JSON-RPC error object).
 * Caller puts *out.
 */
enum up_status	 upstream_call(struct upstream *, const char *method,
		    json_object *params, int64_t deadline, json_object **out,
		    char *err, size_t errlen);
/*
 * The dialect's liveness check (unity-mcp: the "ping" frame; jsonrpc and
 * jsonrpc-lsp: method "ping"; mcp-http: MCP ping): UP_OK when answered.
 */
enum up_status	 upstream_ping(struct upstream *, int64_t deadline,
		    char *err, size_t errlen);
/* Whether the last call's request was written whole. */
int		 upstream_sent(const struct upstream *);
void		 upstream_close(struct upstream *);
/* Whether dialect is one of the four. */
int		 upstream_dialect_known(const char *dialect);
const char	*up_strstatus(enum up_status);

#endif
