/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FACE_UNITY_H
#define CMDGATE_FACE_UNITY_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The unity-mcp face (cmdgated(8), The unity-mcp face): MCP for Unity's
 * editor bridge on the wire (the WELCOME line, 8-byte frames, the compact
 * pong, {"type", "params"} requests answered in order), each command a
 * face job (facejob.h), for as many clients at once as connect.
 */

struct conn;
struct server;

#define UNITY_WELCOME	"WELCOME UNITY-MCP 1 FRAMING=1"
#define UNITY_PONG	"{\"status\":\"success\",\"result\":{\"message\":\"pong\"}}"
#define UNITY_AGENT	"unity-mcp"	/* the agent of every command */
#define UNITY_RETRY_MS	5000		/* the retry hint of "held" */

/* A new connection: the WELCOME line; unity frames from now on. */
void		 unity_accept(struct conn *);
/* One frame from c; buf[len] is NUL.  Answered through c, in order. */
void		 unity_message(struct conn *, const char *buf, size_t len);
/* A last error before closing, as the bridge's outer error. */
void		 unity_fail(struct conn *, int code, const char *type,
		    const char *reason);
/*
 * The face's own state once the listeners are bound and the engine is
 * open: the status file (--unity-status-dir) naming the first unity-mcp
 * listener's port, and the editor state it mirrors.  0, or -1 with err.
 */
int		 unity_face_start(struct server *, char *err, size_t errlen);
/* The directory of the face's status file, absolute, or NULL when it
 * writes none (server_status).  Caller puts. */
json_object	*unity_status_dir(const struct server *);
/* Stopping, before the engine is freed: the status file goes. */
void		 unity_face_stop(struct server *);
/*
 * The answer to a face job's news as the bridge would give it.  Caller
 * puts.
 */
struct facejob_news;
json_object	*unity_answer(const char *tool, const struct facejob_news *);

#endif
