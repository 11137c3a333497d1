/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPX_H
#define CMDGATE_HTTPX_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "upstatus.h"

/* What mcphttp.c shares with httpx.c: one HTTP request and its answer. */

#define HX_SESSION_MAX	256	/* longest Mcp-Session-Id */

/* The server, and the session's headers once known. */
struct httpx_peer {
	char		*to;		/* the URL, for messages */
	char		*host;		/* without brackets */
	char		*hosthdr;	/* the Host header */
	char		*target;	/* path and query */
	int		 port;
	char		 session[HX_SESSION_MAX + 1];	/* "": none yet */
	char		 version[16];	/* "": before initialize */
	const sigset_t	*waitmask;	/* the mask to wait under */
	int		 status;	/* the last HTTP status, 0: none */
	/* Told each notification the server sends in an answer (msg
	 * borrowed); NULL: they are skipped. */
	void		(*note)(void *arg, json_object *msg);
	void		*note_arg;
};

/*
 * One HTTP request, cmd (POST or DELETE), with body msg (borrowed; NULL:
 * none), on a connection of its own, and its answer, by the deadline.
 * id: the JSON-RPC response to wait for (0: none; a 2xx ends it).  A
 * first Mcp-Session-Id the server sends is kept in p->session, the HTTP
 * status in p->status.  watch:
 * SIGTERM (unblocked under p->waitmask while the answer is awaited) and
 * the broker's end of the event pipe end it too, with got_term set.
 * UP_OK with *answer the response; UP_ERROR with *answer the body of an
 * HTTP error status that holds a JSON-RPC error; else a status, *answer
 * NULL.  err says why (not set for UP_OK).  Caller puts *answer.
 */
enum up_status	 httpx_request(struct httpx_peer *p, enum evhttp_cmd_type cmd,
		    json_object *msg, int64_t id, int64_t deadline, int watch,
		    json_object **answer, char *err, size_t errlen);

#endif
