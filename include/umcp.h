/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UMCP_H
#define CMDGATE_UMCP_H

#include <stddef.h>

#include <json-c/json.h>

#include "upstatus.h"

/*
 * MCP for Unity's stdio bridge as its client sees it, without the I/O:
 * the WELCOME line, the 8-byte big-endian frame header, the request and
 * the status envelope of an answer (cmdgate.tools(5), unity-mcp).  The
 * worker reads the bridge with blocking waits (workers/upstream.c), the
 * broker's editor link with libevent (src/link/); both decide here.
 */

#define UMCP_MAX	(64 * 1024 * 1024)	/* a frame's payload */
#define UMCP_LINE_MAX	4096			/* the WELCOME line */
#define UMCP_HDR	8

/* The ping frame's payload, and the raw answer some bridges give it. */
#define UMCP_PING	"ping"
#define UMCP_PONG	"pong"

/* Whether line (no newline) is a WELCOME we speak: 0, or -1 with err. */
int		 umcp_welcome(const char *line, char *err, size_t errlen);
/*
 * A frame header's length: UP_OK and *n, UP_PROTOCOL (length 0) or
 * UP_TOO_LONG (over UMCP_MAX), with err.
 */
enum up_status	 umcp_frame_len(const unsigned char hdr[UMCP_HDR], size_t *n,
		    char *err, size_t errlen);
/* The header of a payload of n bytes. */
void		 umcp_frame_hdr(size_t n, unsigned char hdr[UMCP_HDR]);
/* {"type": method, "params": params or {}} (caller puts). */
json_object	*umcp_request(const char *method, json_object *params);
/*
 * An answer's payload (n bytes): UP_OK with *out its "result", UP_ERROR
 * with *out the whole envelope (err: the bridge's message), or
 * UP_PROTOCOL with err.  ping: the raw "pong" counts as success.
 * Caller puts *out.
 */
enum up_status	 umcp_answer(const char *buf, size_t n, int ping,
		    json_object **out, char *err, size_t errlen);

/*
 * The status envelope msg (an object) as umcp_answer judges it; the
 * unity-hub link's command_result carries the same envelope.
 */
enum up_status	 umcp_envelope(json_object *msg, json_object **out,
		    char *err, size_t errlen);

/*
 * Whether dialect speaks MCP for Unity's commands and envelopes: its
 * stdio bridge (unity-mcp) or its plugin through the unity-hub face
 * (unity-hub, carried by the editor link only).
 */
int		 umcp_dialect(const char *dialect);

#endif
