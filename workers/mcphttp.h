/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MCPHTTP_H
#define CMDGATE_MCPHTTP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "upstatus.h"

/*
 * The mcp-http forward dialect: an MCP client over Streamable HTTP
 * (protocol 2025-06-18), one session per struct mcphttp.  upstream.c
 * keeps one in its struct upstream's impl and calls these for
 * upstream_open, _call, _ping and _close; each waits as they do (the
 * deadline, SIGTERM, the broker's end of the event pipe) in an event
 * base of its own, made and freed within the call.
 */

struct mcphttp;

/*
 * Open a session with the MCP server at to (http://HOST:PORT/PATH, HOST
 * may be [IPV6]): initialize, then notifications/initialized.  waitmask
 * (borrowed for the session's life) is the signal mask to wait under.
 * UP_OK and *mh (free with mcphttp_close), or a status with err.
 */
enum up_status	 mcphttp_open(const char *to, int64_t deadline,
		    const sigset_t *waitmask, struct mcphttp **mh, char *err,
		    size_t errlen);
/*
 * tools/call method with arguments params (borrowed; NULL: {}).  UP_OK:
 * *out is the CallToolResult (isError may be true); UP_ERROR: *out is
 * the JSON-RPC error object as sent.  Caller puts *out.
 */
enum up_status	 mcphttp_call(struct mcphttp *, const char *method,
		    json_object *params, int64_t deadline, json_object **out,
		    char *err, size_t errlen);
/* MCP ping: UP_OK when the server answered it. */
enum up_status	 mcphttp_ping(struct mcphttp *, int64_t deadline, char *err,
		    size_t errlen);
/* End the session (DELETE, best effort, at most a second) and free mh. */
void		 mcphttp_close(struct mcphttp *);

#endif
