/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UPLOCK_H
#define CMDGATE_UPLOCK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/*
 * One exchange at a time per upstream, across every worker and the
 * probe: an exclusive OFD lock on LOCK_DIR/upstream-<to>.lock, held from
 * connect to close.  See cmdgate.tools(5), FILES.
 */

/*
 * Take the lock of upstream to in lock_dir (NULL: no lock, *fd = -1):
 * 0 with *fd held, 1 the deadline passed, -1 SIGTERM or the broker is
 * gone, -2 the lock file cannot be used (err says why).
 */
int	uplock_take(const char *lock_dir, const char *to, int64_t deadline,
	    const sigset_t *waitmask, int *fd, char *err, size_t errlen);
/* Release it (fd -1: nothing). */
void	uplock_release(int fd);
/* Upstream to was reached now (lock_dir NULL: nothing is kept). */
void	uplock_seen(const char *lock_dir, const char *to);
/* Milliseconds since upstream to was last reached; -1: never, or not
 * known. */
int64_t	uplock_seen_ago(const char *lock_dir, const char *to);

#endif
