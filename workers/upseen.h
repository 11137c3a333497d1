/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_UPSEEN_H
#define CMDGATE_UPSEEN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/*
 * When an upstream that the broker does not link was last reached, in
 * LOCK_DIR/upstream-<to>.seen.  See cmdgate.tools(5), FILES.
 */
/* Upstream to was reached now (lock_dir NULL: nothing is kept). */
void	upseen_stamp(const char *lock_dir, const char *to);
/* Milliseconds since upstream to was last reached; -1: never, or not
 * known. */
int64_t	upseen_ago(const char *lock_dir, const char *to);

#endif
