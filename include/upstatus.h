/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UPSTATUS_H
#define CMDGATE_UPSTATUS_H

/*
 * How a call to an upstream ended, in every dialect: upstream.c's, and
 * mcphttp.c's and httpx.c's below it, which include this and not
 * upstream.h (its words for people: up_strstatus, upstream.c).
 */
enum up_status {
	UP_OK,		/* *out: the upstream's result */
	UP_ERROR,	/* the upstream answered with an error: *out, as sent */
	UP_REFUSED,	/* nothing was written: safe to try again */
	UP_LOST,	/* written, then the connection was lost unanswered */
	UP_TIMEOUT,	/* the deadline passed */
	UP_CANCELLED,	/* SIGTERM, or the broker is gone */
	UP_PROTOCOL,	/* the upstream speaks something else: err says what */
	UP_TOO_LONG,	/* an answer over the dialect's limit */
};

#endif
