/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EXCHANGE_H
#define CMDGATE_EXCHANGE_H

#include <signal.h>
#include <stdint.h>

#include <json-c/json.h>

#include "upstream.h"

/*
 * One exchange with an upstream: over the broker's link to it
 * (linkcall.c) when it has one, else connect, one call (or the dialect's
 * ping), close.  Shared by forward tools and the editor probe.
 */
struct exchange {
	const char	*dialect, *to;
	const char	*lock_dir;	/* NULL: nothing kept of when the
					   upstream was last reached */
	const sigset_t	*waitmask;
	int64_t		 open_ms;	/* connect + handshake, at most */
	int64_t		 call_ms;	/* the rest, from the start; 0: the
					   deadline given */
	int		 sent;		/* the request went out whole */
	int		 closed;	/* UP_REFUSED came after the connect */
	int		 nolisten;	/* UP_REFUSED: the connect was refused */
	int		 locked_out;	/* UP_TIMEOUT: behind another call
					   on the link; nothing was asked */
	int64_t		 seen_ago;	/* through the link: since the bridge
					   last welcomed it (-1: never) */
	char		 err[1024];	/* why, when not UP_OK */
};

/*
 * Call method with params (borrowed; method NULL: the ping) by deadline:
 * UP_OK or UP_ERROR with *out (caller puts), or a status with x->err.
 */
enum up_status	 exchange_once(struct exchange *x, const char *method,
		    json_object *params, int64_t deadline, json_object **out);

#endif
