/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FACEJOB_H
#define CMDGATE_FACEJOB_H

#include <stdint.h>

#include <json-c/json.h>

/*
 * A listener face's command (cmdgated(8), Listener faces): one table
 * tool called by its name, run as a one-command job through the same
 * submit and wait path as batch_execute, with what the faces need on
 * top: an answer before the client gives up ("held"), the upstream's
 * first answer of an awaited tool, and a repeat of a command that was not
 * yet answered attached to its job instead of becoming a second one.  A
 * repeat is the same agent's, tool's and params' on the same connection,
 * or on another once the first one's client is gone (closed, or
 * half-closed: it sends nothing more there); the connection that joins
 * it then has its window.
 */

struct server;
struct facejob;

enum facejob_event {
	FJ_DONE,	/* the job ended: result is the command result */
	FJ_FIRST,	/* an awaited tool's first upstream answer: result */
	FJ_HELD,	/* hold_ms passed: why says what holds it */
	FJ_REFUSED,	/* not submitted: code, type and why as for JSON-RPC */
};

/*
 * What a face is told.  result is borrowed for the call; ticket and why
 * too.  After FJ_DONE, FJ_HELD or FJ_REFUSED the facejob is freed and
 * nothing more comes; FJ_FIRST is followed by nothing either (the job
 * goes on, holding its busy labels, and its result is kept for a repeat).
 */
struct facejob_news {
	enum facejob_event	 event;
	const char		*ticket;	/* NULL for FJ_REFUSED */
	json_object		*result;
	int			 ok;		/* FJ_DONE: the command's ok */
	int			 attached;	/* a repeat, joined to ticket */
	int			 code;		/* FJ_REFUSED: JSON-RPC code */
	const char		*type;		/* FJ_REFUSED: data.type */
	const char		*why;		/* FJ_HELD, FJ_REFUSED */
};

typedef void	(*facejob_fn)(void *arg, const struct facejob_news *);

struct facejob_req {
	uint64_t	 conn;		/* the client's connection (0: none) */
	const char	*agent;		/* the client's name ("" allowed) */
	const char	*tool;
	json_object	*params;	/* borrowed */
	uint64_t	 hold_ms;	/* FJ_HELD after this; 0: never */
	int		 want_first;	/* FJ_FIRST for an awaited tool */
};

/*
 * Start req: news(arg) is called later, never from here.  NULL only
 * when out of memory.
 */
struct facejob	*facejob_start(struct server *, const struct facejob_req *,
		    facejob_fn news, void *arg);
/* The face's client is gone: no news; the job goes on. */
void		 facejob_cancel(struct facejob *);

#endif
