/* SPDX-License-Identifier: ISC */
/* Checked allocators and small helpers for daemon glue. */
#ifndef CMDGATE_UTIL_H
#define CMDGATE_UTIL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct stat;

/* Allocators that never return NULL: out of memory is fatal.  Caller frees. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));

/* RFC 3339 UTC with milliseconds, e.g. 2026-11-22T10:00:00.123Z. */
#define UTIL_TIMESTAMP_LEN 32
void	 util_timestamp(char buf[UTIL_TIMESTAMP_LEN], int64_t unix_ms);
int64_t	 util_now_ms(void);
int64_t	 util_monotonic_ms(void);

/*
 * Parse a decimal in [min, max]; 0 on success, -1 (errno EINVAL or ERANGE)
 * otherwise.  The whole string must be the number.
 */
int	 util_parse_u64(const char *, uint64_t min, uint64_t max, uint64_t *);

/*
 * What a file the broker trusts must be: owned by the effective user and
 * granting group and others none of the deny bits.
 */
struct util_perm {
	const char	*what;	/* "state dir" */
	mode_t		 deny;	/* S_IWGRP | S_IWOTH */
	const char	*lets;	/* what those bits allow: "write in it" */
	const char	*fix;	/* "chmod 700 it" */
};
/* Whether path, of status st, is as p says: 0, or -1 with err. */
int	 util_perm_check(const struct util_perm *p, const char *path,
	    const struct stat *st, char *err, size_t errlen);
/*
 * Open the directory path and check it as p says; with nofollow, a path
 * that is a symlink is refused too.  Its descriptor (close-on-exec;
 * caller closes), or -1 with err.
 */
int	 util_dir_open(const struct util_perm *p, const char *path,
	    int nofollow, char *err, size_t errlen);

/* Count UTF-8 code points of a valid UTF-8 string. */
size_t	 util_utf8_len(const char *);

#endif
