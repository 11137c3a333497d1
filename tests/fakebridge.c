/* SPDX-License-Identifier: ISC */
/* What the fake editor bridges share: see fakebridge.h. */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fakebridge.h"
#include "jstrict.h"

#define FB_CTL_MAX	4096

int
fb_listen(int port)
{
	struct sockaddr_in	sin;
	int			fd, on = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fb_fatal("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((unsigned short)port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 16) == -1)
		fb_fatal("listen on 127.0.0.1:%d: %s", port, strerror(errno));
	return fd;
}

int
fb_port(int lfd)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);

	if (getsockname(lfd, (struct sockaddr *)&sin, &len) == -1)
		fb_fatal("getsockname: %s", strerror(errno));
	return ntohs(sin.sin_port);
}

void
fb_log(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void
fb_log_recv(const char *name, json_object *params)
{
	fb_log("recv %s %s", name, params != NULL ?
	    jstrict_to_string(params) : "null");
}

int64_t
fb_now_ms(clockid_t clock)
{
	struct timespec	ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_object *
fb_jsonf(const char *fmt, ...)
{
	char		 buf[8192];
	json_object	*o;
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (jstrict_parse_str(buf, &o) != 0)
		fb_fatal("not JSON: %s", buf);
	return o;
}

static uint32_t
rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t	w[80], a, b, c, d, e, f, k, t;
	int		i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rol(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rol(b, 30), b = a, a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void
fb_sha1_hex8(const char *s, char out[9])
{
	uint32_t	 h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
			    0x10325476, 0xc3d2e1f0 };
	unsigned char	 blk[64];
	size_t		 len = strlen(s), i, n;
	uint64_t	 bits = (uint64_t)len * 8;

	for (i = 0; i + 64 <= len; i += 64)
		sha1_block(h, (const unsigned char *)s + i);
	n = len - i;
	memset(blk, 0, sizeof(blk));
	memcpy(blk, s + i, n);
	blk[n] = 0x80;
	if (n >= 56) {
		sha1_block(h, blk);
		memset(blk, 0, sizeof(blk));
	}
	for (i = 0; i < 8; i++)
		blk[63 - i] = (unsigned char)(bits >> (8 * i));
	sha1_block(h, blk);
	snprintf(out, 9, "%08x", h[0]);
}

void
fb_fatal(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "fake bridge: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

struct fb_conn *
fb_conn_add(struct fb_conn *conns, int fd)
{
	int	i, one = 1;

	for (i = 0; i < FB_MAXCONN; i++)
		if (conns[i].fd == -1) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
			conns[i].fd = fd;
			conns[i].len = 0;
			return &conns[i];
		}
	return NULL;
}

void
fb_conn_close(struct fb_conn *c)
{
	if (c->fd == -1)
		return;
	close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

int
fb_conn_read(struct fb_conn *c)
{
	ssize_t	n;

	if (c->cap - c->len < 65536) {
		c->cap = c->cap * 2 + 65536;
		if (c->cap > FB_MAX_MSG + 65536 ||
		    (c->buf = realloc(c->buf, c->cap)) == NULL)
			return 0;
	}
	n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
	if (n <= 0)
		return 0;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	return 1;
}

void
fb_conn_consume(struct fb_conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
	c->buf[c->len] = '\0';
}

int
fb_write(int fd, const void *buf, size_t n)
{
	const char	*p = buf;
	ssize_t		 w;

	while (n > 0) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
fb_control(void (*fn)(char *line))
{
	static char	 buf[FB_CTL_MAX];
	static size_t	 len;
	char		 line[FB_CTL_MAX], *nl;
	ssize_t		 n;

	n = read(0, buf + len, sizeof(buf) - 1 - len);
	if (n <= 0)
		return -1;
	len += (size_t)n;
	buf[len] = '\0';
	while ((nl = strchr(buf, '\n')) != NULL) {
		*nl = '\0';
		snprintf(line, sizeof(line), "%s", buf);
		fn(line);
		/* After it took effect: a test that awaits it may go on. */
		fb_log("ctl %s", buf);
		len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, len + 1);
	}
	if (len == sizeof(buf) - 1)
		fb_fatal("control line too long");
	return 0;
}
