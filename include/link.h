/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_LINK_H
#define CMDGATE_LINK_H

/*
 * The editor links (src/link/): one connection per editor's bridge,
 * owned by the broker, that carries exchanges with that editor in order:
 * with MCP for Unity's bridge every one, each job worker's calls and the
 * editor probe's; with uLoopMCP's editor (jsonrpc-lsp) the broker's own
 * reads.  See cmdgated(8), Editor link.
 */

#include <stdint.h>

#include <json-c/json.h>

#include "upstatus.h"

struct event_base;
struct link;
struct links;

/* link.c */

/* How a call ended, as its callback hears it (all borrowed). */
struct link_answer {
	enum up_status	 status;
	json_object	*out;		/* UP_OK: the result; UP_ERROR: the
					   bridge's envelope; else NULL */
	int		 sent;		/* the request went out whole */
	int		 closed;	/* UP_REFUSED once written: the
					   bridge went before it took the
					   request whole */
	int		 nolisten;	/* UP_REFUSED: nothing listens */
	int		 behind;	/* UP_TIMEOUT while an earlier call
					   was unanswered: the editor was
					   not asked yet */
	int64_t		 seen_ago_ms;	/* since the bridge last welcomed
					   the link; -1: never */
	const char	*err;		/* "TO: why", unless UP_OK */
};

typedef void	(*link_fn)(void *arg, const struct link_answer *);

struct links	*links_new(struct event_base *);
/* Close every link; each call not yet answered hears UP_CANCELLED. */
void		 links_free(struct links *);
/*
 * The link to the bridge at to (HOST:PORT) spoken in dialect, made on
 * first use; NULL when that dialect is not carried by a link (each
 * exchange then connects by itself: the upstream serves many clients),
 * or when 64 bridges are linked already (logged).
 */
struct link	*links_get(struct links *, const char *dialect, const char *to);
/*
 * Call method (NULL: the dialect's ping) with params (borrowed; NULL:
 * {}) over L: fn(arg, answer) once, from the loop, when it is answered,
 * when no connection and WELCOME came within open_ms (UP_REFUSED), or
 * when timeout_ms passed (UP_TIMEOUT).  The call is written as soon as
 * the link is open, after every call before it.
 */
void		 link_call(struct link *L, const char *method,
		    json_object *params, int64_t open_ms, int64_t timeout_ms,
		    link_fn fn, void *arg);
/* Whether L's connection is open (its WELCOME read). */
int		 link_connected(const struct link *L);
/*
 * Whether workers' calls go over L (unity-mcp: the bridge serves one
 * client).  uLoopMCP's editor answers each connection's requests one
 * after another, so a worker's compile or test run would hold every read
 * behind it: workers connect by themselves, and L carries reads only.
 */
int		 link_carries_workers(const struct link *L);
/*
 * A unity-hub link's transport: the plugin's WebSocket, which the face
 * owns (faces/face_hub.c).  send writes one execute message.
 */
struct link_port {
	void	(*send)(void *arg, const char *msg, size_t len);
};
/*
 * The plugin registered: L's calls go to it, one at a time, through
 * port (a plugin already attached is detached first).  Until a plugin
 * attaches, calls wait for one up to their open_ms.
 */
void		 link_attach(struct link *L, const struct link_port *,
		    void *arg);
/* The arg of the port attached to L, or NULL. */
void		*link_attached(const struct link *L);
/* Its socket went (why): the call in flight is lost; those waiting wait
 * for the next plugin. */
void		 link_detach(struct link *L, const char *why);
/* The plugin's command_result for id[len] (the JSON string's length,
 * NULs included): 0, or -1 when no call of L's is in flight with exactly
 * that id. */
int		 link_hub_answer(struct link *L, const char *id, size_t len,
		    json_object *result);

/* For server_status: [{"to", "dialect", "connected", "calls",
 * "in_flight", "connects", "lost"}...]; caller puts. */
json_object	*links_json(const struct links *);

#endif
