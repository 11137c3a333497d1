/* SPDX-License-Identifier: ISC */
/* What the fake editor bridges share: see fakebridge.h. */
#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
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

void
fb_loop(const struct fb_loop *l)
{
	struct pollfd	pfd[FB_MAXCONN + 2];
	int		idx[FB_MAXCONN + 2], n, i, lidx;

	for (;;) {
		n = 0;
		lidx = -1;
		pfd[n].fd = 0, pfd[n++].events = POLLIN;
		if (*l->lfd != -1)
			lidx = n, pfd[n].fd = *l->lfd, pfd[n++].events = POLLIN;
		for (i = 0; i < FB_MAXCONN; i++)
			if (l->conns[i].fd != -1) {
				idx[n] = i;
				pfd[n].fd = l->conns[i].fd;
				pfd[n++].events = POLLIN;
			}
		if (poll(pfd, (nfds_t)n, l->timeout != NULL ? l->timeout() :
		    -1) == -1 && errno != EINTR)
			fb_fatal("poll: %s", strerror(errno));
		if (pfd[0].revents != 0 && fb_control(l->control) == -1)
			exit(0);
		/* The control line may have closed what was polled. */
		for (i = 1; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (i == lidx) {
				if (*l->lfd == pfd[i].fd)
					l->accept();
			} else if (l->conns[idx[i]].fd == pfd[i].fd)
				l->serve(&l->conns[idx[i]]);
		}
		if (l->timers != NULL)
			l->timers();
	}
}
