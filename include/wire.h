/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WIRE_H
#define CMDGATE_WIRE_H

#include <stdint.h>

/*
 * The wire between the broker and its worker program, cmdgate-worker:
 * what both sides must spell alike.  Types and constants only.
 */

/* What the two sides say on the fork server's descriptor FORKER_FD. */
#define FORKER_FD	3
#define FORKER_HELLO	'h'	/* the fork server, once, when ready */
#define FORKER_NOPIDFD	'p'	/* instead: no pidfds, it cannot serve */
#define FORKER_REQUEST	'w'	/* the broker: a worker, with 2 fds */

struct forker_reply {
	int32_t	pid;		/* the worker's, or -errno */
	int32_t	forks;		/* 1: cloned; 2: forked twice over */
};

#endif
