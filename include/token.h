/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOKEN_H
#define CMDGATE_TOKEN_H

#include <sys/types.h>

#include <stddef.h>

/*
 * The token file, shared by the broker (which checks and creates it) and
 * cmdgate(1) (which reads it).  Library-like: nothing here exits or logs.
 */

#define TOKEN_MAX	4096	/* bytes of a token */
#define TOKEN_BYTES	32	/* random bytes of a made token: 256 bits */
#define TOKEN_NAME	"token"	/* its name in the state dir */

/*
 * Read the first line of path, trimmed of white space.  The file must be
 * a regular file (opened O_NONBLOCK, so a FIFO never blocks).  With
 * strict (the broker's rules) it must also not be a symlink, be owned by
 * the effective user and be unreadable by group and others.  Returns the
 * token (caller frees, after explicit_bzero) and, unless owner is NULL,
 * the file's owner in *owner; or NULL with err naming the file and the
 * rule it breaks and *errnum the errno of a failed open (0 when the file
 * itself was refused).
 */
char	*token_read(const char *path, int strict, uid_t *owner, int *errnum,
	    char *err, size_t errlen);
/*
 * Create path with a new token: 2 * TOKEN_BYTES hex digits from
 * getrandom(2), mode 0600, never through a symlink nor over a file.
 * 0, or -1 with err.
 */
int	 token_create(const char *path, char *err, size_t errlen);

#endif
