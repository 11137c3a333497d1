/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_BRIDGEQ_H
#define CMDGATE_CLI_BRIDGEQ_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * The requests of cmdgate mcp's client that the broker has not answered
 * yet (cli_bridge.c), bounded, so that they can be sent again on a new
 * connection.
 */

/* The most requests held unanswered, and their bytes in all. */
#define CALLQ_MAX	1024
#define CALLQ_BYTES	(64 * 1024 * 1024)

#define CALLQ_JSON	(JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum call_kind { CALL_OTHER, CALL_INIT, CALL_LEVEL, CALL_TOOLS, CALL_BATCH };

struct call {
	TAILQ_ENTRY(call)	 entry;
	char			*id;	/* its id, as JSON; NULL for a batch */
	json_object		*ids;	/* a batch's ids, as JSON strings */
	char			*line;	/* the request as sent, key and all */
	size_t			 len;
	enum call_kind		 kind;
	int			 sent;	/* written on the connection now up */
	int			 ever_sent; /* written on some connection */
	int64_t			 sent_at;
	uint64_t		 mark;	/* the read mark sent after it */
	int			 read;	/* ...answered: the broker read it */
	int			 kills;	/* connections lost just after it,
					   not known read */
	int			 keyed;	/* it has tools/calls, with keys */
	char			*cancel; /* notifications/cancelled lines */
	uint64_t		 cancel_mark; /* the read mark sent after them
					   on the connection now up; 0 */
	json_object		*progress; /* its progressTokens (JSON text) to
					      the last progress the client saw
					      of each; NULL: none */
};
TAILQ_HEAD(calls, call);

struct callq {
	struct calls	 calls;		/* oldest first */
	size_t		 n, bytes;
};

void		 callq_init(struct callq *);
/* The request (or batch) whose id is id (JSON text), or NULL. */
struct call	*callq_find(struct callq *, const char *id);
/* An id a request can be followed by: a string or an integer (the
 * broker answers any other with id null, which names no request). */
int		 callq_id_ok(json_object *id);
/* The held batch an answer array (msg) is for, by any id in it. */
struct call	*callq_find_batch(struct callq *, json_object *msg);
/*
 * Hold line (len bytes, copied; msg, what it holds) of kind under id (JSON
 * text, copied; NULL for a batch, whose ids are taken).  NULL when the
 * bounds forbid it.
 */
struct call	*callq_add(struct callq *, const char *id, json_object *ids,
		    json_object *msg, const char *line, size_t len,
		    enum call_kind);
/*
 * Whether msg (NULL: not JSON) is a notifications/progress of a held
 * request's progressToken whose progress is not above the last the
 * client saw of it (1: not to be passed on); else 0, the progress kept
 * as the last.  The broker sends a call's progress in increasing order
 * on one connection; a call sent again on a new one is watched anew, from
 * 0, and the MCP client must see it increase all the same.
 */
int		 callq_progress_old(struct callq *, json_object *msg);
/* Whether one more request of len bytes stays within the bounds. */
int		 callq_room(const struct callq *, size_t len);
void		 callq_free(struct callq *, struct call *);
void		 callq_clear(struct callq *);
/* The largest request written on the connection now up, or NULL. */
struct call	*callq_largest(struct callq *);
enum call_kind	 callq_kind(const char *method);
/*
 * Keep a cancellation of c's request id (JSON text) to send after c, once
 * for each id (a batch has several).  A request (not a batch) loses its
 * progressToken: sent again only for its job to be cancelled, and
 * forgotten then, it must not have the new broker send progress its
 * client can no longer place (or see go back).
 */
void		 callq_cancel(struct callq *, struct call *c, const char *id);
/*
 * Give a tools/call (msg) a random idempotency key in params._meta,
 * unless the client gave one.
 */
void		 callq_key(json_object *msg);
/*
 * A JSON-RPC error line answering id (JSON text; NULL: null) with code,
 * message, data.type and reason.  Caller frees.
 */
char		*callq_error(const char *id, int code, const char *message,
		    const char *type, const char *reason);

#endif
