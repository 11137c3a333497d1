/* SPDX-License-Identifier: ISC */
/*
 * The opening handshake's heads (include/wshead.h).  A head is lines
 * ended by CRLF (a bare LF is taken too) up to an empty line; a header
 * is NAME ":" VALUE with the value's surrounding blanks dropped, and the
 * names compared without case.  Obsolete line folding is refused.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nettle/base64.h>

#include "util.h"
#include "wshead.h"

#define WSHEAD_LINE_MAX	4096

long
wshead_length(const char *buf, size_t len, size_t *seen)
{
	size_t	i;

	if (len > WSHEAD_MAX)
		len = WSHEAD_MAX;
	for (i = *seen < len ? *seen : len; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i >= 1 && buf[i - 1] == '\n')
			return (long)i + 1;
		if (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n')
			return (long)i + 1;
	}
	*seen = len;
	return len >= WSHEAD_MAX ? -1 : 0;
}

/* The next line of buf[*off..n) into line, its end dropped: its length,
 * or -1 at the end of the head or on a line over the limit. */
static int
wshead_line(const char *buf, size_t n, size_t *off, char *line)
{
	const char	*nl;
	size_t		 len;

	if (*off >= n || (nl = memchr(buf + *off, '\n', n - *off)) == NULL)
		return -1;
	len = (size_t)(nl - (buf + *off));
	if (len > 0 && nl[-1] == '\r')
		len--;
	/* A NUL would cut the line short (a key "K\0junk" read as K), a bare
	 * CR hide what follows it: neither is HTTP (RFC 9112, 2.2). */
	if (len >= WSHEAD_LINE_MAX || memchr(buf + *off, '\0', len) != NULL ||
	    memchr(buf + *off, '\r', len) != NULL)
		return -1;
	memcpy(line, buf + *off, len);
	line[len] = '\0';
	*off = (size_t)(nl - buf) + 1;
	return (int)len;
}

/* Whether the comma-separated list v holds token (any case). */
static int
wshead_has_token(const char *v, const char *token)
{
	size_t	tl = strlen(token), n;

	while (*v != '\0') {
		v += strspn(v, " \t,");
		n = strcspn(v, ",");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n == tl && strncasecmp(v, token, tl) == 0)
			return 1;
		v += strcspn(v, ",");
	}
	return 0;
}

/* Whether key is 16 bytes in base64. */
static int
wshead_key_ok(const char *key)
{
	struct base64_decode_ctx	ctx;
	uint8_t				raw[BASE64_DECODE_LENGTH(WS_KEY_LEN)];
	size_t				n = sizeof(raw);

	if (strlen(key) != WS_KEY_LEN)
		return 0;
	base64_decode_init(&ctx);
	return base64_decode_update(&ctx, &n, raw, WS_KEY_LEN, key) &&
	    base64_decode_final(&ctx) && n == 16;
}

/* One header line of a request into h: 0, or -1 when it is no header. */
static int
wshead_header(char *line, struct wshead *h)
{
	char	*colon = strchr(line, ':'), *v;
	size_t	 n;

	if (colon == NULL || colon == line || line[0] == ' ' ||
	    line[0] == '\t')
		return -1;
	*colon = '\0';
	v = colon + 1 + strspn(colon + 1, " \t");
	for (n = strlen(v); n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t');)
		v[--n] = '\0';
	if (strcasecmp(line, "Upgrade") == 0 && wshead_has_token(v,
	    "websocket"))
		h->upgrade |= 1;
	else if (strcasecmp(line, "Connection") == 0 && wshead_has_token(v,
	    "upgrade"))
		h->upgrade |= 2;
	else if (strcasecmp(line, "Sec-WebSocket-Version") == 0)
		h->version = atoi(v);
	else if (strcasecmp(line, "Sec-WebSocket-Key") == 0 &&
	    wshead_key_ok(v))
		snprintf(h->key, sizeof(h->key), "%s", v);
	else if (strcasecmp(line, "X-API-Key") == 0)
		snprintf(h->api_key, sizeof(h->api_key), "%s", v);
	return 0;
}

int
wshead_request(const char *buf, size_t n, struct wshead *h)
{
	char	line[WSHEAD_LINE_MAX], proto[16];
	size_t	off = 0;
	int	len, end = 0;

	memset(h, 0, sizeof(*h));
	if (wshead_line(buf, n, &off, line) <= 0 ||
	    sscanf(line, "%15s %1023s %15s%n", h->method, h->target,
	    proto, &end) != 3 || line[end] != '\0' ||
	    strcmp(proto, "HTTP/1.1") != 0)
		return -1;
	while ((len = wshead_line(buf, n, &off, line)) > 0)
		if (wshead_header(line, h) == -1)
			return -1;
	return len == 0 ? 0 : -1;
}

int
wshead_upgrade_status(const struct wshead *h)
{
	if (strcmp(h->method, "GET") != 0 || h->upgrade != 3 ||
	    h->key[0] == '\0')
		return 400;
	return h->version == 13 ? 0 : 426;
}

char *
wshead_accept(const char *key)
{
	char	accept[WS_ACCEPT_LEN + 1];

	ws_accept_key(key, accept);
	return xasprintf("HTTP/1.1 101 Switching Protocols\r\nUpgrade: "
	    "websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n"
	    "\r\n", accept);
}

char *
wshead_refuse(int status)
{
	const char	*reason = status == 426 ? "Upgrade Required" :
			    status == 404 ? "Not Found" : status == 403 ?
			    "Forbidden" : "Bad Request";

	return xasprintf("HTTP/1.1 %d %s\r\n%sContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n", status, reason, status == 426 ?
	    "Sec-WebSocket-Version: 13\r\n" : "");
}

char *
wshead_connect(const char *host, const char *path, const char *api_key,
    char key[WS_KEY_LEN + 1])
{
	ws_new_key(key);
	return xasprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n", path, host, key,
	    api_key != NULL ? "X-API-Key: " : "", api_key != NULL ? api_key :
	    "", api_key != NULL ? "\r\n" : "");
}

int
wshead_answered(const char *buf, size_t n, const char *key, char *err,
    size_t errlen)
{
	char	line[WSHEAD_LINE_MAX], want[WS_ACCEPT_LEN + 1], *v;
	size_t	off = 0;
	int	status = 0, accepted = 0, len;

	if (wshead_line(buf, n, &off, line) <= 0 ||
	    sscanf(line, "HTTP/1.1 %d", &status) != 1 || status != 101) {
		snprintf(err, errlen, "answered the upgrade with \"%.80s\"",
		    line);
		return -1;
	}
	ws_accept_key(key, want);
	while ((len = wshead_line(buf, n, &off, line)) > 0) {
		if ((v = strchr(line, ':')) == NULL)
			continue;
		*v++ = '\0';
		v += strspn(v, " \t");
		if (strcasecmp(line, "Sec-WebSocket-Accept") == 0 &&
		    strncmp(v, want, WS_ACCEPT_LEN) == 0 &&
		    strspn(v + WS_ACCEPT_LEN, " \t") ==
		    strlen(v + WS_ACCEPT_LEN))
			accepted = 1;
	}
	if (!accepted)
		snprintf(err, errlen, "answered the upgrade without the "
		    "Sec-WebSocket-Accept of its key");
	return accepted ? 0 : -1;
}
