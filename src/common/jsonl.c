/* SPDX-License-Identifier: ISC */
/* Newline-delimited JSON on a socket: the one reader of every client. */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h"
#include "jstrict.h"

#define JSONL_CHUNK	65536

static int64_t
jsonl_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
jsonl_poll(void *arg, int fd, int ms)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	int		n;

	(void)arg;
	if ((n = poll(&pfd, 1, ms)) == -1)
		return errno == EINTR ? 0 : JSONL_WAIT_ERROR;
	return n > 0;
}

/* Room for one more read: 0, or -1 (ENOMEM). */
static int
jsonl_grow(struct jsonl *j)
{
	size_t	 cap = j->cap > 0 ? j->cap : JSONL_CHUNK;
	char	*buf;

	if (j->cap - j->len >= JSONL_CHUNK)
		return 0;
	while (cap - j->len < JSONL_CHUNK)
		cap *= 2;
	if ((buf = realloc(j->buf, cap)) == NULL)
		return -1;
	j->buf = buf;
	j->cap = cap;
	return 0;
}

/*
 * Read once into the buffer, waiting until deadline (-1: none); data
 * already there when the deadline passes is still read.
 */
static enum jsonl_status
jsonl_fill(struct jsonl *j, int64_t deadline)
{
	int64_t	left;
	ssize_t	got;
	int	rc;

	if (jsonl_grow(j) == -1)
		return JSONL_ERROR;
	for (;;) {
		left = deadline < 0 ? -1 : deadline - jsonl_now();
		if (deadline >= 0 && left < 0)
			left = 0;
		rc = (j->wait != NULL ? j->wait : jsonl_poll)(j->arg, j->fd,
		    left > INT_MAX ? INT_MAX : (int)left);
		if (rc == JSONL_WAIT_CANCEL)
			return JSONL_CANCELLED;
		if (rc < 0)
			return JSONL_ERROR;
		if (rc == 0) {
			if (deadline >= 0 && jsonl_now() >= deadline)
				return JSONL_TIMEOUT;
			continue;
		}
		got = recv(j->fd, j->buf + j->len, j->cap - j->len, 0);
		if (got > 0) {
			j->len += (size_t)got;
			return JSONL_MSG;
		}
		if (got == 0)
			return JSONL_EOF;
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			return JSONL_ERROR;
	}
}

/* Take n bytes, and skip more, off the front into *out (caller frees). */
static enum jsonl_status
jsonl_cut(struct jsonl *j, size_t n, size_t skip, char **out)
{
	if ((*out = malloc(n + 1)) == NULL)
		return JSONL_ERROR;
	memcpy(*out, j->buf, n);
	(*out)[n] = '\0';
	memmove(j->buf, j->buf + n + skip, j->len - n - skip);
	j->len -= n + skip;
	return JSONL_MSG;
}

void
jsonl_init(struct jsonl *j, int fd, size_t max)
{
	memset(j, 0, sizeof(*j));
	j->fd = fd;
	j->max = max;
}

void
jsonl_free(struct jsonl *j)
{
	free(j->buf);
	j->buf = NULL;
	j->len = j->cap = 0;
}

enum jsonl_status
jsonl_line(struct jsonl *j, int64_t ms, char **line, size_t *len)
{
	int64_t			 deadline = ms < 0 ? -1 : jsonl_now() + ms;
	enum jsonl_status	 st;
	char			*nl;
	size_t			 n;

	*line = NULL;
	while ((nl = j->len > 0 ? memchr(j->buf, '\n', j->len) : NULL) ==
	    NULL) {
		if (j->len > j->max)
			return JSONL_TOO_LONG;
		if ((st = jsonl_fill(j, deadline)) != JSONL_MSG)
			return st;
	}
	if ((n = (size_t)(nl - j->buf)) > j->max)
		return JSONL_TOO_LONG;
	if (len != NULL)
		*len = n;
	return jsonl_cut(j, n, 1, line);
}

enum jsonl_status
jsonl_take(struct jsonl *j, int64_t ms, size_t n, char **out)
{
	int64_t			 deadline = ms < 0 ? -1 : jsonl_now() + ms;
	enum jsonl_status	 st;

	*out = NULL;
	if (n > j->max)
		return JSONL_TOO_LONG;
	while (j->len < n)
		if ((st = jsonl_fill(j, deadline)) != JSONL_MSG)
			return st;
	return jsonl_cut(j, n, 0, out);
}

enum jsonl_status
jsonl_json(struct jsonl *j, int64_t ms, json_object **out)
{
	enum jsonl_status	 st;
	char			*line;
	size_t			 n;

	*out = NULL;
	if ((st = jsonl_line(j, ms, &line, &n)) != JSONL_MSG)
		return st;
	j->jerr = jstrict_parse(line, n, out);
	free(line);
	return j->jerr == 0 ? JSONL_MSG : JSONL_BAD_JSON;
}

int
jsonl_is_answer(json_object *msg, int64_t id)
{
	json_object	*v;

	if (!json_object_is_type(msg, json_type_object) ||
	    !json_object_object_get_ex(msg, "id", &v))
		return 0;	/* a notification */
	if (v == NULL)
		return json_object_object_get_ex(msg, "error", NULL);
	return json_object_is_type(v, json_type_int) &&
	    json_object_get_int64(v) == id;
}

const char *
jsonl_rest(const struct jsonl *j, size_t *len)
{
	*len = j->len;
	return j->buf;
}

const char *
jsonl_strerror(enum jsonl_status st)
{
	static const char *msgs[] = { "a message", "timed out",
	    "end of file", "read error", "line too long", "cancelled",
	    "not JSON" };

	return st <= JSONL_BAD_JSON ? msgs[st] : "?";
}

int
jsonl_send(int fd, const char *s, size_t n)
{
	size_t	off = 0;
	ssize_t	w;

	while (off < n) {
		w = send(fd, s + off, n - off, MSG_NOSIGNAL);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		off += (size_t)w;
	}
	return 0;
}
