/* SPDX-License-Identifier: ISC */
/* A uLoopMCP client stand-in: see ulclient.c. */
#ifndef CMDGATE_ULCLIENT_H
#define CMDGATE_ULCLIENT_H

#include <stddef.h>

#include <json-c/json.h>

#include "testnet.h"

/* One uLoopMCP client: its connection, its framing and its id style. */
struct ulc {
	struct client	*cl;
	int		 lsp;		/* Content-Length framing (v0.27 on) */
	int		 str_ids;	/* ts_... ids (v0.28.4 on) */
	long long	 next;		/* the next id */
	json_object	*notes;		/* notifications read meanwhile */
};

/* Connect to port: Content-Length frames or lines, string or number ids. */
void		 ulc_open(struct ulc *, int port, int lsp, int str_ids);
void		 ulc_close(struct ulc *);
/* Send body (one JSON message) in u's framing. */
void		 ulc_send(struct ulc *, const char *body);
/* The next message in u's framing, parsed (caller puts), or NULL. */
json_object	*ulc_read(struct ulc *);
/* The id u sends next, as JSON text. */
void		 ulc_id(struct ulc *, char *buf, size_t len);
/* Call method with params (JSON text): the answer, its id checked. */
json_object	*ulc_call(struct ulc *, const char *method, const char *params);
/* Send a call without reading its answer: its id in id. */
void		 ulc_ask(struct ulc *, const char *method, const char *params,
		    char *id, size_t idlen);
/* The answer to id (caller puts); notifications are kept in u->notes. */
json_object	*ulc_answer(struct ulc *, const char *id);
/* set-client-name name (unless NULL) first, as v2 does, then tool. */
json_object	*ulc_tool(struct ulc *, const char *name, const char *tool,
		    const char *params);
/*
 * The next notification method, those before it dropped (kept ones
 * first, then read, bounded by the read timeout).  Caller puts.
 */
json_object	*ulc_note(struct ulc *, const char *method);
/* r is an error: code, type, and its reason in message and data.message. */
void		 assert_ul_error(json_object *r, int code, const char *type);

#endif
