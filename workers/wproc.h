/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WPROC_H
#define CMDGATE_WPROC_H

#include <sys/types.h>

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * wproc.c: the worker process's state and its link to the broker, what
 * the entry (cmdgate-worker.c) and its helpers (run.c, forward.c,
 * edwatch.c and those below them) share.  It includes none of theirs.
 */

#define READ_CHUNK	65536

/* 1 once SIGTERM came or the broker is gone (2: passed on to a tool). */
extern volatile sig_atomic_t	got_term;
/* How long a tool has after SIGTERM before SIGKILL (the spec's). */
extern int64_t			kill_grace_ms;
/* The index of the command that runs now, which its events name. */
extern size_t			command_index;
/* 0 in the editor probe: an upstream's notifications during its call
 * (progress, log) are not the probe's to tell; it writes editor events
 * only, and the broker takes no other line from it. */
extern int			wproc_relay;

/* CLOCK_MONOTONIC in milliseconds. */
int64_t		 wproc_now_ms(void);
/* Write ev (put here) as one line on WIRE_EVENTS_FD; got_term when the
 * broker is gone. */
void		 wproc_emit(json_object *ev);
/* Emit the start event of command index, its tool in group pgid (0: a
 * forward, no process). */
void		 wproc_emit_start(size_t index, pid_t pgid);
/* Emit the result event of command index, with result (taken). */
void		 wproc_emit_result(size_t index, json_object *result);
/* Whether ev (WIRE_EVENTS_FD, polled) says the broker is gone: got_term. */
void		 wproc_broker_gone(struct pollfd *ev);
/*
 * Wait for events on fd (-1: none, a plain sleep) until deadline: 1
 * ready, 0 the deadline passed, -1 SIGTERM came or the broker is gone.
 */
int		 wproc_wait(int fd, short events, int64_t deadline,
		    const sigset_t *waitmask);

#endif
