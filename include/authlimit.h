/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_AUTHLIMIT_H
#define CMDGATE_AUTHLIMIT_H

#include <stdint.h>

/*
 * Wrong tokens counted per peer address, so that guessing the token costs
 * time whatever the number of connections.  After AUTHLIMIT_FREE wrong
 * tokens from one address, every authentication from it is refused for
 * 1 s, doubling with each further wrong token up to AUTHLIMIT_LOCK_MAX_S.
 * An address with no wrong token for AUTHLIMIT_FORGET_S is forgotten.
 * Loopback addresses (127/8, ::1) are one address, IPv6 ones count by
 * /64, so that a client cannot escape by changing its source address.
 * The table holds AUTHLIMIT_PEERS addresses; when it is full the one
 * least recently wrong is forgotten.  Each lockout is logged once.
 */

#define AUTHLIMIT_PEERS		256
#define AUTHLIMIT_FREE		3
#define AUTHLIMIT_LOCK_MAX_S	60
#define AUTHLIMIT_FORGET_S	600

struct authlimit;

/* An empty table.  Free with authlimit_free(). */
struct authlimit	*authlimit_new(void);
void			 authlimit_free(struct authlimit *);
/*
 * Seconds left of the lockout of peer ("ADDR:PORT" or "[V6ADDR]:PORT")
 * at now_ms (monotonic), or 0 when it may try; a refused try is counted
 * for the next log line.
 */
int64_t			 authlimit_locked(struct authlimit *, const char *peer,
			    int64_t now_ms);
/* A wrong token from peer: the seconds of the lockout it starts, or 0. */
int64_t			 authlimit_failed(struct authlimit *, const char *peer,
			    int64_t now_ms);

#endif
