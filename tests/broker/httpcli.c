/* SPDX-License-Identifier: ISC */
/* A raw HTTP/1.1 client for check_http: see httpcli.h. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "broker.h"
#include "httpcli.h"

/* Read what comes within the timeout: bytes read, 0 at EOF, -1. */
static ssize_t
hc_more(struct hc *h)
{
	struct pollfd	pfd = { h->fd, POLLIN, 0 };
	ssize_t		n;

	if (h->rawlen + 65536 > HC_BUF || poll(&pfd, 1, HC_TIMEOUT_MS) != 1)
		return -1;
	if ((n = read(h->fd, h->raw + h->rawlen, 65536)) > 0)
		h->rawlen += (size_t)n;
	return n;
}

static void
hc_take(struct hc *h, size_t n)
{
	memmove(h->raw, h->raw + n, h->rawlen - n);
	h->rawlen -= n;
}

static void
hc_append(struct hc *h, const char *p, size_t n)
{
	if (h->bodylen + n >= HC_BUF)
		n = HC_BUF - 1 - h->bodylen;
	memcpy(h->body + h->bodylen, p, n);
	h->bodylen += n;
	h->body[h->bodylen] = '\0';
}

/* Move what raw holds of the body into body. */
static void
hc_decode(struct hc *h)
{
	char	*eol;
	size_t	 size, line;

	while (h->chunked && !h->ended && (eol = memmem(h->raw, h->rawlen,
	    "\r\n", 2)) != NULL) {
		line = (size_t)(eol - h->raw) + 2;
		size = strtoul(h->raw, NULL, 16);
		if (h->rawlen < line + size + 2)
			return;
		hc_append(h, h->raw + line, size);
		hc_take(h, line + size + 2);
		if (size == 0)
			h->ended = 1;
	}
	if (h->chunked || h->ended)
		return;
	size = h->rawlen;
	if (h->clen >= 0 && size > (size_t)h->clen - h->bodylen)
		size = (size_t)h->clen - h->bodylen;
	hc_append(h, h->raw, size);
	hc_take(h, size);
	if (h->clen >= 0 && h->bodylen == (size_t)h->clen)
		h->ended = 1;
}

int
hc_header(const struct hc *h, const char *name, char *buf, size_t len)
{
	const char	*p = h->head;
	size_t		 n = strlen(name), v;

	for (; p != NULL && *p != '\0'; p = strstr(p, "\r\n") != NULL ?
	    strstr(p, "\r\n") + 2 : NULL) {
		if (strncasecmp(p, name, n) != 0 || p[n] != ':')
			continue;
		p += n + 1;
		p += strspn(p, " \t");
		v = strcspn(p, "\r\n");
		snprintf(buf, len, "%.*s", (int)v, p);
		return 0;
	}
	return -1;
}

/* Read the status line and headers. */
static int
hc_head(struct hc *h, const char *method)
{
	char	*end, v[32];

	while ((end = memmem(h->raw, h->rawlen, "\r\n\r\n", 4)) == NULL)
		if (hc_more(h) <= 0)
			return -1;
	snprintf(h->head, sizeof(h->head), "%.*s", (int)(end - h->raw) + 2,
	    h->raw);
	hc_take(h, (size_t)(end - h->raw) + 4);
	if (sscanf(h->head, "HTTP/1.%*d %d", &h->status) != 1)
		return -1;
	h->chunked = hc_header(h, "Transfer-Encoding", v, sizeof(v)) == 0 &&
	    strcasecmp(v, "chunked") == 0;
	h->clen = hc_header(h, "Content-Length", v, sizeof(v)) == 0 ?
	    atol(v) : -1;
	if (h->status == 204 || h->status == 304 ||
	    strcmp(method, "HEAD") == 0)
		h->clen = 0;
	hc_decode(h);
	return 0;
}

struct hc *
hc_request(int port, const char *method, const char *path, const char *hdrs,
    const char *body)
{
	struct hc	*h = calloc(1, sizeof(*h));
	char		*req;
	size_t		 off = 0;
	ssize_t		 n;
	int		 len;

	if (h == NULL || (h->raw = malloc(HC_BUF)) == NULL ||
	    (h->body = calloc(1, HC_BUF)) == NULL ||
	    (h->fd = broker_dial(port)) == -1) {
		hc_close(h);
		return NULL;
	}
	if (hdrs == NULL)
		hdrs = "";
	len = asprintf(&req, "%s %s HTTP/1.1\r\n%s%d\r\n%sConnection: close"
	    "\r\nContent-Length: %zu\r\n\r\n%s", method, path,
	    strcasestr(hdrs, "Host:") != NULL ? "X-Port: " :
	    "Host: 127.0.0.1:", port, hdrs, body != NULL ? strlen(body) : 0,
	    body != NULL ? body : "");
	while (len > 0 && off < (size_t)len &&
	    (n = write(h->fd, req + off, (size_t)len - off)) > 0)
		off += (size_t)n;
	free(req);
	if (len < 0 || off < (size_t)len || hc_head(h, method) == -1) {
		hc_close(h);
		return NULL;
	}
	return h;
}

int
hc_body(struct hc *h)
{
	ssize_t	n;

	for (;;) {
		hc_decode(h);
		if (h->ended)
			return 0;
		if ((n = hc_more(h)) < 0)
			return -1;
		if (n == 0) {
			if (h->chunked || h->clen >= 0)
				return -1;
			h->ended = 1;
		}
	}
}

char *
hc_event(struct hc *h)
{
	char	*end, *ev;
	size_t	 n;
	ssize_t	 r;

	for (;;) {
		hc_decode(h);
		if ((end = strstr(h->body, "\n\n")) != NULL) {
			n = (size_t)(end - h->body);
			ev = strndup(h->body, n);
			memmove(h->body, end + 2, h->bodylen - n - 2 + 1);
			h->bodylen -= n + 2;
			return ev;
		}
		if (h->ended || (r = hc_more(h)) < 0)
			return NULL;	/* the end, or a timeout */
		if (r == 0) {
			h->ended = 1;	/* closed, maybe abruptly */
			return NULL;
		}
	}
}

void
hc_close(struct hc *h)
{
	if (h == NULL)
		return;
	if (h->fd > 0)
		close(h->fd);
	free(h->raw);
	free(h->body);
	free(h);
}
