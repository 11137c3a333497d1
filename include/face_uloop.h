/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FACE_ULOOP_H
#define CMDGATE_FACE_ULOOP_H

#include <stddef.h>

/*
 * The uloop face (cmdgated(8), Listener faces): uLoopMCP's editor side of
 * JSON-RPC 2.0, for its TypeScript MCP server and its uloop CLI.  Each
 * table tool is a method of its own, run as a face job; the rest
 * (set-client-name, ping, get-tool-details...) is answered here.  Its
 * entries in face_ops[] (conn.h).
 */

struct conn;

/* Just accepted and let in: its state and editor-state subscription. */
void		 uloop_accept(struct conn *);
/* One framed message from c; buf[len] is NUL. */
void		 uloop_message(struct conn *, const char *buf, size_t len);
/* A last error before closing, as a JSON-RPC error with data.message. */
void		 uloop_fail(struct conn *, int code, const char *type,
		    const char *reason);
/* c goes: its calls are forgotten (their jobs go on). */
void		 uloop_closed(struct conn *);

#endif
