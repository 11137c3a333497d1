/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JSONL_H
#define CMDGATE_JSONL_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * One reader for newline-delimited JSON (and LSP bodies of a known
 * length) on a socket, blocking or not: the client, the worker's forward
 * call, the tests and the bench all read through it.  Library-like:
 * nothing here exits, logs or allocates through util.c.
 */

enum jsonl_status {
	JSONL_MSG,		/* a line (or body) came */
	JSONL_TIMEOUT,		/* not within the time given */
	JSONL_EOF,		/* the peer closed first */
	JSONL_ERROR,		/* errno says why */
	JSONL_TOO_LONG,		/* a line longer than max */
	JSONL_CANCELLED,	/* the wait function said so */
	JSONL_BAD_JSON,		/* a line that is not strict JSON */
};

/* What a wait function returns besides 1 (readable) and 0 (not yet). */
#define JSONL_WAIT_ERROR	(-1)	/* with errno */
#define JSONL_WAIT_CANCEL	(-2)

struct jsonl {
	int	  fd;
	char	 *buf;		/* read, not yet taken */
	size_t	  len, cap;
	size_t	  max;		/* the longest line, in bytes */
	int	  jerr;		/* jstrict code of the last JSONL_BAD_JSON */
	/*
	 * Wait up to ms (-1: no limit) for fd to be readable: 1, 0, or a
	 * JSONL_WAIT_* code.  NULL: poll(2).
	 */
	int	(*wait)(void *arg, int fd, int ms);
	void	 *arg;
};

void		 jsonl_init(struct jsonl *, int fd, size_t max);
/* Free the buffer; the fd stays open. */
void		 jsonl_free(struct jsonl *);
/*
 * The next line within ms (-1: no limit), without its newline: *line
 * NUL-terminated (caller frees) and *len its length (may be NULL).
 */
enum jsonl_status jsonl_line(struct jsonl *, int64_t ms, char **line,
		    size_t *len);
/* The next n bytes within ms (an LSP body): *out NUL-terminated; caller frees. */
enum jsonl_status jsonl_take(struct jsonl *, int64_t ms, size_t n, char **out);
/* The next line, parsed by jstrict: *out (caller puts). */
enum jsonl_status jsonl_json(struct jsonl *, int64_t ms, json_object **out);
/*
 * Whether msg answers request id: it has that id, or it is an error with
 * a null id (a peer that could not read the request cannot name it).
 */
int		 jsonl_is_answer(json_object *msg, int64_t id);
/* What was read and not yet taken (borrowed), *len bytes of it. */
const char	*jsonl_rest(const struct jsonl *, size_t *len);
const char	*jsonl_strerror(enum jsonl_status);
/* Send all of s on a blocking fd, never raising SIGPIPE: 0, or -1. */
int		 jsonl_send(int fd, const char *s, size_t n);

#endif
