/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WORKER_H
#define CMDGATE_WORKER_H

#include <sys/types.h>

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* What cmdgate-worker.c shares with forward.c and run.c. */

#define READ_CHUNK	65536

/* 1 once SIGTERM came or the broker is gone (2: passed on to a tool). */
extern volatile sig_atomic_t	got_term;
/* How long a tool has after SIGTERM before SIGKILL (the spec's). */
extern int64_t			kill_grace_ms;
/* The index of the command that runs now, which its events name. */
extern size_t			command_index;

/* CLOCK_MONOTONIC in milliseconds. */
int64_t		 now_ms(void);
/* Whether ev (WIRE_EVENTS_FD, polled) says the broker is gone: got_term. */
void		 broker_gone(struct pollfd *ev);
/* Emit {"event":"start","index":index,"pgid":pgid}. */
void		 emit_start(size_t index, pid_t pgid);
/* Write ev (put here) as one line on WIRE_EVENTS_FD. */
void		 emit(json_object *ev);
/*
 * Wait for events on fd (-1: none, a plain sleep) until deadline: 1
 * ready, 0 the deadline passed, -1 SIGTERM came or the broker is gone.
 */
int		 worker_wait(int fd, short events, int64_t deadline,
		    const sigset_t *waitmask);

#endif
