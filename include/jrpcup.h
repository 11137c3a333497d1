/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JRPCUP_H
#define CMDGATE_JRPCUP_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "upstatus.h"

/*
 * A JSON-RPC 2.0 upstream as its client sees it, without the I/O: the
 * request, the jsonrpc-lsp header, the answer (cmdgate.tools(5), jsonrpc
 * and jsonrpc-lsp).  The worker reads the upstream with blocking waits
 * (workers/upstream.c), the broker's editor link with libevent
 * (src/link/); both decide here.
 */

#define JRPCUP_MAX	(64 * 1024 * 1024)	/* a message */
#define JRPCUP_LINE_MAX	4096			/* a header line */

/* {"jsonrpc": "2.0", "id": id, "method", "params": params or {}}
 * (caller puts). */
json_object	*jrpcup_request(int64_t id, const char *method,
		    json_object *params);
/*
 * A jsonrpc-lsp header line (no line end): 1 and *n when it is a valid
 * Content-Length, -1 when it is one that is not valid, 0 for any other.
 */
int		 jrpcup_content_length(const char *line, size_t *n);
/* Whether msg answers a request (not a notification or a request). */
int		 jrpcup_is_answer(json_object *msg);
/*
 * An answer's end: UP_OK with *out its "result", UP_ERROR with *out its
 * "error" (err: "upstream error CODE: MESSAGE"), or UP_PROTOCOL with err.
 * Caller puts *out.
 */
enum up_status	 jrpcup_answer(json_object *msg, json_object **out,
		    char *err, size_t errlen);

#endif
