/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CHILD_H
#define CMDGATE_CHILD_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * A cmdgate-worker process as the broker holds it, a job's worker
 * (worker.c) or the editor probe (engine/probe.c): while it runs, its two
 * pipes (include/wire.h), the spec going in and its JSON lines coming
 * out, and the grace it has from its SIGTERM to its SIGKILL.  The
 * process itself, how it is signalled and reaped, is its owner's.
 */

struct bufferevent;
struct event;
struct event_base;
struct evbuffer;

/* What the owner hears, with the arg given to child_init(). */
struct child_hooks {
	/* The child wrote in; eof: at the end of its pipe, which is no
	 * longer read (a line it began is still in in). */
	void	(*read)(void *arg, struct evbuffer *in, int eof);
	/* Its spec could not be written: it is gone.  May be NULL. */
	void	(*spec_lost)(void *arg);
	/* The grace of child_grace() passed. */
	void	(*late)(void *arg);
};

struct child {
	struct event_base	 *base;
	struct bufferevent	 *events;	/* its lines; NULL: closed */
	struct bufferevent	 *spec;		/* until written whole */
	struct event		 *grace;
	const struct child_hooks *hooks;
	void			 *arg;
};

/* A child with no pipes yet; hooks and arg borrowed for its life. */
void	child_init(struct child *, struct event_base *,
	    const struct child_hooks *, void *arg);
/* Close its pipes, and stop and free its grace timer. */
void	child_free(struct child *);
/*
 * It runs: spec_fd and events_fd (the broker's ends, taken) become its
 * pipes.  spec (borrowed) is written from the next loop turn and its
 * pipe closed once written whole, the child's end of file; what it
 * writes goes to the read hook.
 */
void	child_start(struct child *, int spec_fd, int events_fd,
	    json_object *spec);
/*
 * The child exited: all it wrote is in its pipe now.  What it wrote and
 * was not yet heard (the read hook's buffer emptied), or NULL when its
 * pipe is closed.  Caller frees.
 */
struct evbuffer	*child_rest(struct child *);
/* Hear no more of it: its pipe is not read any more. */
void	child_mute(struct child *);
/* Close the pipes still open. */
void	child_close(struct child *);
/* The late hook in seconds from now, unless it is already due. */
void	child_grace(struct child *, uint64_t seconds);
/* No late hook (the child is gone). */
void	child_grace_stop(struct child *);
/*
 * Each whole line of in (taken out of it) to line(arg, line, len) until
 * it returns -1: 0; -1 when line stopped; 1 when what is left in in, a
 * line begun, is over max bytes.
 */
int	child_lines(struct evbuffer *in, size_t max,
	    int (*line)(void *arg, const char *line, size_t len), void *arg);

#endif
