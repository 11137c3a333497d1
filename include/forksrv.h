/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FORKSRV_H
#define CMDGATE_FORKSRV_H

#include <sys/types.h>

#include <stdint.h>

#include <json-c/json.h>

#include "wire.h"

struct event;
struct event_base;

/*
 * The fork server (cmdgate-worker --forker): exec'd once, it forks each
 * new worker, which costs a fork of a small process instead of an exec.
 * The broker is a child subreaper, so the worker is the broker's child
 * as a spawned one is.  While there is no fork server (not ready yet,
 * gone, or silent), launch_worker() spawns workers as before; a fork
 * server that is gone is started again after FORKSRV_RETRY_S seconds,
 * unless FORKSRV_TRIES in a row ended before they were ready.
 */
#define FORKSRV_RETRY_S		5
#define FORKSRV_TRIES		3	/* starts in a row that never got ready */
#define FORKSRV_REPLY_MS	2000	/* a fork's answer, at most */

struct forksrv {
	struct event_base	*base;
	const char		*path;		/* of cmdgate-worker */
	char			**env;
	pid_t			 pid;		/* 0: none */
	int			 fd;		/* its socket; -1: none */
	int			 ready;		/* it said hello */
	int			 failing;	/* said so once */
	int			 never;		/* none for good */
	int			 unready;	/* starts since the last ready */
	uint64_t		 forked;	/* workers it forked */
	uint64_t		 twice;		/* of them, forked twice */
	struct event		*ev;		/* its socket: hello or end */
	struct event		*retry_ev;
};

/* Start it (and make the broker a child subreaper). */
void	forksrv_init(struct forksrv *, struct event_base *, const char *path,
	    char **env);
/* Stop it: the end of its socket; it exits. */
void	forksrv_free(struct forksrv *);
/*
 * A worker from the fork server, as launch_worker() gives one: 0, or -1
 * when there is no fork server to ask (the caller spawns one itself).
 */
int	forksrv_fork(struct forksrv *, pid_t *pid, int *spec, int *events);
/*
 * For server_status: {"pid": its pid, null while it is not ready,
 * "workers_forked": N, "workers_forked_twice": M}, or NULL when the
 * broker has none (it could not be a child subreaper).  Caller puts.
 */
json_object	*forksrv_json(const struct forksrv *);
/* pid was reaped: 1 when it was the fork server. */
int	forksrv_reaped(struct forksrv *, pid_t pid, int status);

#endif
