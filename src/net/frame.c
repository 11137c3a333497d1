/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "net.h"
#include "util.h"

#define CL_NAME		"content-length:"
#define CL_NAME_LEN	(sizeof(CL_NAME) - 1)

static enum frame_mode	 frame_detect(struct evbuffer *);
static enum frame_status frame_line(struct framer *, struct evbuffer *,
			    char **, size_t *);
static enum frame_status frame_lsp(struct framer *, struct evbuffer *,
			    char **, size_t *);
static enum frame_status frame_unity(struct framer *, struct evbuffer *,
			    char **, size_t *);
static int		 frame_header(struct framer *, const char *, size_t);
static char		*frame_take(struct evbuffer *, size_t, size_t);

void
frame_init(struct framer *f, size_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
	f->body_len = -1;
}

void
frame_init_unity(struct framer *f, size_t max)
{
	frame_init(f, max);
	f->mode = FRAME_UNITY;
}

/*
 * A connection speaks LSP framing when its first bytes are
 * "Content-Length:" in any case; decide as soon as the bytes allow.
 */
static enum frame_mode
frame_detect(struct evbuffer *in)
{
	unsigned char	*p;
	size_t		 n = evbuffer_get_length(in);

	if (n > CL_NAME_LEN)
		n = CL_NAME_LEN;
	if (n == 0)
		return FRAME_UNKNOWN;
	p = evbuffer_pullup(in, (ev_ssize_t)n);
	if (strncasecmp((char *)p, CL_NAME, n) != 0)
		return FRAME_LINE;
	return n == CL_NAME_LEN ? FRAME_LSP : FRAME_UNKNOWN;
}

enum frame_status
frame_next(struct framer *f, struct evbuffer *in, char **msg, size_t *len)
{
	if (f->mode == FRAME_UNKNOWN) {
		f->mode = frame_detect(in);
		if (f->mode == FRAME_UNKNOWN)
			return FRAME_MORE;
	}
	if (f->mode == FRAME_LSP)
		return frame_lsp(f, in, msg, len);
	if (f->mode == FRAME_UNITY)
		return frame_unity(f, in, msg, len);
	return frame_line(f, in, msg, len);
}

/* Remove n bytes from in and return the first keep of them, NUL-ended. */
static char *
frame_take(struct evbuffer *in, size_t n, size_t keep)
{
	char	*buf = xmalloc(keep + 1);

	evbuffer_remove(in, buf, keep);
	buf[keep] = '\0';
	evbuffer_drain(in, n - keep);
	return buf;
}

static int
frame_blank(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static enum frame_status
frame_line(struct framer *f, struct evbuffer *in, char **msg, size_t *len)
{
	struct evbuffer_ptr	 start, nl;
	size_t			 total, linelen;
	char			*line;

	for (;;) {
		total = evbuffer_get_length(in);
		if (f->scanned >= total)
			nl.pos = -1;
		else {
			evbuffer_ptr_set(in, &start, f->scanned,
			    EVBUFFER_PTR_SET);
			nl = evbuffer_search(in, "\n", 1, &start);
		}
		if (nl.pos == -1) {
			f->scanned = total;
			/* A trailing '\r' may still be the ignored one. */
			if (total > f->max + 1)
				return FRAME_TOO_LARGE;
			if (total == f->max + 1) {
				unsigned char *p = evbuffer_pullup(in, -1);

				if (p[total - 1] != '\r')
					return FRAME_TOO_LARGE;
			}
			return FRAME_MORE;
		}
		linelen = (size_t)nl.pos;
		f->scanned = 0;
		line = frame_take(in, linelen + 1, linelen);
		if (linelen > 0 && line[linelen - 1] == '\r')
			line[--linelen] = '\0';
		if (linelen > f->max) {
			free(line);
			return FRAME_TOO_LARGE;
		}
		if (frame_blank(line, linelen)) {
			free(line);
			continue;
		}
		*msg = line;
		*len = linelen;
		return FRAME_MSG;
	}
}

/*
 * One header line without its line end: 0, -1 when malformed, or -2 when
 * its Content-Length passes the limit (however many digits it has).
 */
static int
frame_header(struct framer *f, const char *h, size_t n)
{
	const char	*colon = memchr(h, ':', n);
	const char	*v, *end = h + n;
	long long	 val = 0;
	int		 huge = 0;

	if (colon == NULL)
		return -1;
	if ((size_t)(colon - h) != CL_NAME_LEN - 1 ||
	    strncasecmp(h, CL_NAME, CL_NAME_LEN - 1) != 0)
		return 0;	/* other headers are allowed and ignored */
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (v == end)
		return -1;
	for (; v < end; v++) {
		if (!isdigit((unsigned char)*v))
			return -1;
		if (val > (1LL << 40))
			huge = 1;	/* far past any limit; no overflow */
		else
			val = val * 10 + (*v - '0');
	}
	if (huge || (unsigned long long)val > f->max)
		return -2;
	f->body_len = val;
	return 0;
}

static enum frame_status
frame_lsp(struct framer *f, struct evbuffer *in, char **msg, size_t *len)
{
	struct evbuffer_ptr	 eol;
	size_t			 eol_len, n;
	char			*h;
	int			 rc;

	while (!f->in_body) {
		eol = evbuffer_search_eol(in, NULL, &eol_len,
		    EVBUFFER_EOL_CRLF);
		if (eol.pos == -1) {
			if (f->header_bytes + evbuffer_get_length(in) >
			    FRAME_LSP_HEADER_MAX)
				return FRAME_BAD_HEADER;
			return FRAME_MORE;
		}
		n = (size_t)eol.pos;
		f->header_bytes += n + eol_len;
		if (f->header_bytes > FRAME_LSP_HEADER_MAX)
			return FRAME_BAD_HEADER;
		h = frame_take(in, n + eol_len, n);
		if (n == 0) {
			free(h);
			if (f->body_len < 0)
				return FRAME_BAD_HEADER;
			if ((unsigned long long)f->body_len > f->max)
				return FRAME_TOO_LARGE;
			f->in_body = 1;
			break;
		}
		rc = frame_header(f, h, n);
		free(h);
		if (rc == -2)
			return FRAME_TOO_LARGE;
		if (rc == -1)
			return FRAME_BAD_HEADER;
	}
	if (evbuffer_get_length(in) < (size_t)f->body_len)
		return FRAME_MORE;
	*len = (size_t)f->body_len;
	*msg = frame_take(in, *len, *len);
	f->in_body = 0;
	f->body_len = -1;
	f->header_bytes = 0;
	return FRAME_MSG;
}

/*
 * MCP for Unity's frames: an unsigned 64-bit big-endian length, then that
 * many bytes.  Its bridge refuses a length of 0 (clients send none; its
 * answers use them as heartbeats), so a frame of 0 ends the connection.
 */
static enum frame_status
frame_unity(struct framer *f, struct evbuffer *in, char **msg, size_t *len)
{
	unsigned char	*p;
	uint64_t	 n = 0;
	int		 i;

	if (evbuffer_get_length(in) < FRAME_UNITY_HEADER)
		return FRAME_MORE;
	p = evbuffer_pullup(in, FRAME_UNITY_HEADER);
	for (i = 0; i < FRAME_UNITY_HEADER; i++)
		n = n << 8 | p[i];
	if (n == 0)
		return FRAME_BAD_HEADER;
	if (n > f->max)
		return FRAME_TOO_LARGE;
	if (evbuffer_get_length(in) - FRAME_UNITY_HEADER < n)
		return FRAME_MORE;
	evbuffer_drain(in, FRAME_UNITY_HEADER);
	*len = (size_t)n;
	*msg = frame_take(in, *len, *len);
	return FRAME_MSG;
}

/* The 8-byte big-endian length of a unity frame of len bytes. */
static int
frame_unity_header(struct evbuffer *out, size_t len)
{
	unsigned char	h[FRAME_UNITY_HEADER];
	uint64_t	n = len;
	int		i;

	for (i = FRAME_UNITY_HEADER - 1; i >= 0; i--, n >>= 8)
		h[i] = (unsigned char)(n & 0xff);
	return evbuffer_add(out, h, sizeof(h));
}

int
frame_write(const struct framer *f, struct evbuffer *out, const char *msg,
    size_t len)
{
	if (f->mode == FRAME_UNITY) {
		if (frame_unity_header(out, len) == -1)
			return -1;
		return evbuffer_add(out, msg, len);
	}
	if (f->mode == FRAME_LSP) {
		if (evbuffer_add_printf(out, "Content-Length: %zu\r\n\r\n",
		    len) == -1)
			return -1;
		return evbuffer_add(out, msg, len);
	}
	if (evbuffer_add(out, msg, len) == -1)
		return -1;
	return evbuffer_add(out, "\n", 1);
}
