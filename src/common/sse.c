/* SPDX-License-Identifier: ISC */
/* Server-Sent Events: an event stream read as it comes, one event a call. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"

#define SSE_CHUNK	4096

static const char	sse_bom[] = "\xef\xbb\xbf";

void
sse_init(struct sse *s, size_t max, sse_cb cb, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->cb = cb;
	s->arg = arg;
}

void
sse_free(struct sse *s)
{
	free(s->line);
	free(s->data);
	s->line = s->data = NULL;
	s->linelen = s->linecap = s->datalen = s->datacap = 0;
}

const char *
sse_last_id(const struct sse *s)
{
	return s->id;
}

const char *
sse_strerror(int code)
{
	switch (code) {
	case SSE_OK:
		return "ok";
	case SSE_TOO_LONG:
		return "event longer than the limit";
	case SSE_NOMEM:
		return "out of memory";
	case SSE_STOP:
		return "stopped";
	}
	return "unknown error";
}

/* Room for n more bytes (and a NUL) in *buf: 0, or an SSE_* code. */
static int
sse_room(char **buf, size_t *cap, size_t len, size_t n, size_t max)
{
	size_t	 want;
	char	*nb;

	if (n > max || len > max - n)
		return SSE_TOO_LONG;
	if (len + n < *cap)
		return SSE_OK;
	want = *cap > 0 ? *cap : SSE_CHUNK;
	while (want <= len + n)
		want *= 2;
	if ((nb = realloc(*buf, want)) == NULL)
		return SSE_NOMEM;
	*buf = nb;
	*cap = want;
	return SSE_OK;
}

/* The blank line: hand the event over, then start the next. */
static int
sse_dispatch(struct sse *s)
{
	int	rc = 0;

	if (s->datalen > 0) {
		s->datalen--;		/* the last data line's "\n" */
		s->data[s->datalen] = '\0';
		rc = s->cb(s->arg, s->event[0] != '\0' ? s->event :
		    "message", s->id, s->data, s->datalen);
	}
	s->datalen = 0;
	s->event[0] = '\0';
	return rc == 0 ? SSE_OK : SSE_STOP;
}

/* One field of the current event. */
static int
sse_field(struct sse *s, const char *name, const char *val, size_t vlen)
{
	int	rc;

	if (strcmp(name, "data") == 0) {
		if ((rc = sse_room(&s->data, &s->datacap, s->datalen,
		    vlen + 1, s->max)) != SSE_OK)
			return rc;
		memcpy(s->data + s->datalen, val, vlen);
		s->datalen += vlen;
		s->data[s->datalen++] = '\n';
	} else if (strcmp(name, "event") == 0)
		snprintf(s->event, sizeof(s->event), "%.*s", (int)vlen, val);
	else if (strcmp(name, "id") == 0 && memchr(val, '\0', vlen) == NULL)
		snprintf(s->id, sizeof(s->id), "%.*s", (int)vlen, val);
	/* retry, and names the format does not know, are skipped */
	return SSE_OK;
}

/* A whole line, without its end. */
static int
sse_line(struct sse *s)
{
	char	*colon, *val;
	size_t	 vlen;

	if (s->linelen == 0)
		return sse_dispatch(s);
	s->line[s->linelen] = '\0';
	if (s->line[0] == ':')
		return SSE_OK;		/* a comment */
	if ((colon = memchr(s->line, ':', s->linelen)) == NULL)
		return sse_field(s, s->line, "", 0);
	*colon = '\0';
	val = colon + 1;
	if (*val == ' ')
		val++;
	vlen = s->linelen - (size_t)(val - s->line);
	return sse_field(s, s->line, val, vlen);
}

/*
 * A byte order mark at the very start of the stream is skipped; it may
 * come split across feeds.  *used: the bytes of buf taken.
 */
static void
sse_start(struct sse *s, const char *buf, size_t len, size_t *used)
{
	*used = 0;
	while (s->bom < 3 && *used < len && buf[*used] == sse_bom[s->bom]) {
		s->bom++;
		(*used)++;
	}
	if (s->bom == 3)
		s->started = 1;
	else if (*used < len) {
		/* Not a mark after all: its first bytes start the line. */
		s->started = 1;
		memcpy(s->line, sse_bom, s->bom);
		s->linelen = s->bom;
	}
}

int
sse_feed(struct sse *s, const char *buf, size_t len)
{
	size_t	i, start, skip;
	int	rc;

	if ((rc = sse_room(&s->line, &s->linecap, 0, 3, s->max)) != SSE_OK)
		return rc;
	skip = 0;
	if (!s->started)
		sse_start(s, buf, len, &skip);
	if (!s->started)
		return SSE_OK;
	for (i = start = skip; i < len; i++) {
		if (buf[i] != '\r' && buf[i] != '\n')
			continue;
		if (buf[i] == '\n' && s->after_cr && i == start) {
			s->after_cr = 0;
			start = i + 1;
			continue;
		}
		if ((rc = sse_room(&s->line, &s->linecap, s->linelen,
		    i - start, s->max)) != SSE_OK)
			return rc;
		memcpy(s->line + s->linelen, buf + start, i - start);
		s->linelen += i - start;
		s->after_cr = buf[i] == '\r';
		start = i + 1;
		rc = sse_line(s);
		s->linelen = 0;
		if (rc != SSE_OK)
			return rc;
	}
	if ((rc = sse_room(&s->line, &s->linecap, s->linelen, len - start,
	    s->max)) != SSE_OK)
		return rc;
	memcpy(s->line + s->linelen, buf + start, len - start);
	s->linelen += len - start;
	if (len > start)
		s->after_cr = 0;
	return SSE_OK;
}

/* Append s[n] to the event being written; -1 when out of memory. */
static int
sse_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	char	*nb;
	size_t	 ncap = *cap;

	while (*len + n + 1 > ncap)
		ncap = ncap == 0 ? 256 : ncap * 2;
	if (ncap != *cap) {
		if ((nb = realloc(*buf, ncap)) == NULL)
			return -1;
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

char *
sse_event(const char *event, const char *id, int retry_ms, const char *data,
    size_t len, size_t *outlen)
{
	char		*buf = NULL, num[32];
	size_t		 n = 0, cap = 0, i, ll;
	int		 rc = 0;

	if (event != NULL)
		rc |= sse_put(&buf, &n, &cap, "event: ", 7) |
		    sse_put(&buf, &n, &cap, event, strlen(event)) |
		    sse_put(&buf, &n, &cap, "\n", 1);
	if (id != NULL)
		rc |= sse_put(&buf, &n, &cap, "id: ", 4) |
		    sse_put(&buf, &n, &cap, id, strlen(id)) |
		    sse_put(&buf, &n, &cap, "\n", 1);
	if (retry_ms > 0) {
		snprintf(num, sizeof(num), "retry: %d\n", retry_ms);
		rc |= sse_put(&buf, &n, &cap, num, strlen(num));
	}
	/* A line break inside the data starts another "data:" line. */
	for (i = 0; rc == 0 && (i < len || i == 0); i += ll + 1) {
		ll = strcspn(data + i, "\r\n");
		if (ll > len - i)
			ll = len - i;
		rc |= sse_put(&buf, &n, &cap, "data: ", 6) |
		    sse_put(&buf, &n, &cap, data + i, ll) |
		    sse_put(&buf, &n, &cap, "\n", 1);
		if (i + ll < len && data[i + ll] == '\r' &&
		    i + ll + 1 < len && data[i + ll + 1] == '\n')
			ll++;
		if (i + ll >= len)
			break;
	}
	rc |= sse_put(&buf, &n, &cap, "\n", 1);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	*outlen = n;
	return buf;
}

/* A decimal number of n digits (no sign, no space) at s: 0, or -1. */
static int
sse_u64(const char *s, size_t n, uint64_t *v)
{
	size_t	i;

	if (n == 0 || n > 19)
		return -1;
	for (*v = 0, i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

int
sse_id_parse(const char *s, uint64_t *num, uint64_t *seq)
{
	size_t	n = strcspn(s, "-");

	if (s[n] != '-' || sse_u64(s, n, num) == -1 ||
	    sse_u64(s + n + 1, strlen(s + n + 1), seq) == -1)
		return -1;
	return 0;
}
