/* SPDX-License-Identifier: ISC */
/* Checked allocators and small helpers for daemon glue. */
#ifndef CMDGATE_UTIL_H
#define CMDGATE_UTIL_H

#include <stddef.h>
#include <stdint.h>

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

/* Count UTF-8 code points of a valid UTF-8 string. */
size_t	 util_utf8_len(const char *);

#endif
