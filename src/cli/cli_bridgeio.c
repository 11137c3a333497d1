/* SPDX-License-Identifier: ISC */
/* cmdgate mcp: its standard input and output, pollable or not. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "cli.h"
#include "util.h"

#define BRIDGEIO_CHUNK	(64 * 1024)	/* read from a file per turn */

/* Whether libevent can poll fd: a pipe, a socket or a terminal. */
static int
bridgeio_pollable(int fd)
{
	struct stat	st;

	if (fstat(fd, &st) == -1)
		return 0;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || isatty(fd);
}

/* Whether reading stdin waits: for the client, or for the broker. */
static int
bridgeio_stopped(const struct bridgeio *io)
{
	return io->full || io->held;
}

/* Read stdin or not, as bridgeio_stopped() says. */
static void
bridgeio_reading(struct bridgeio *io)
{
	if (io->in != NULL && !io->eof) {
		if (bridgeio_stopped(io))
			bufferevent_disable(io->in, EV_READ);
		else
			bufferevent_enable(io->in, EV_READ);
	}
	bridgeio_room(io);
}

/*
 * The next line of buf, without its newline (caller frees), or NULL.
 * *scanned holds how much of buf is known to have no newline, so that a
 * long line coming a piece at a time is searched once, not once a piece.
 */
char *
bridgeio_readln(struct evbuffer *buf, size_t *scanned, size_t *n)
{
	struct evbuffer_ptr	 p;
	char			*line;

	if (evbuffer_ptr_set(buf, &p, *scanned, EVBUFFER_PTR_SET) == -1)
		evbuffer_ptr_set(buf, &p, 0, EVBUFFER_PTR_SET);
	p = evbuffer_search_eol(buf, &p, NULL, EVBUFFER_EOL_LF);
	if (p.pos == -1) {
		*scanned = evbuffer_get_length(buf);
		return NULL;
	}
	*scanned = 0;
	*n = (size_t)p.pos;
	line = xmalloc(*n + 1);
	evbuffer_remove(buf, line, *n);
	line[*n] = '\0';
	evbuffer_drain(buf, 1);
	return line;
}

/* The lines in buf, while there is room for them (a file) or always. */
static void
bridgeio_lines(struct bridgeio *io, struct evbuffer *buf, int file)
{
	char	*line;
	size_t	 n;

	while ((!file || (!bridgeio_stopped(io) && io->cb->room(io->arg))) &&
	    (line = bridgeio_readln(buf, &io->scanned, &n)) != NULL) {
		if (io->skipping)
			io->skipping = 0;	/* the end of the long one */
		else
			io->cb->line(io->arg, line, n);
		free(line);
	}
	if (evbuffer_get_length(buf) <= BRIDGEIO_LINE_MAX)
		return;
	if (!io->skipping) {
		line = callq_error(NULL, -32600, "Invalid Request",
		    "message_too_large", "cmdgate mcp reads lines of at most "
		    "64 MiB; this one was dropped");
		bridgeio_write(io, line, strlen(line));
		free(line);
	}
	io->skipping = 1;
	io->scanned = 0;
	evbuffer_drain(buf, evbuffer_get_length(buf));
}

/* stdin ended: its last line (without its newline), then the end. */
static void
bridgeio_end(struct bridgeio *io, struct evbuffer *buf)
{
	char	*last;
	size_t	 n;

	io->eof = 1;
	if ((n = evbuffer_get_length(buf)) > 0 && !io->skipping) {
		last = xmalloc(n + 1);
		evbuffer_remove(buf, last, n);
		last[n] = '\0';
		io->cb->line(io->arg, last, n);
		free(last);
	}
	evbuffer_drain(buf, evbuffer_get_length(buf));
	io->cb->eof(io->arg);
}

static void
bridgeio_read(struct bufferevent *bev, void *arg)
{
	bridgeio_lines(arg, bufferevent_get_input(bev), 0);
}

static void
bridgeio_event(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	bufferevent_disable(bev, EV_READ);
	bridgeio_end(arg, bufferevent_get_input(bev));
}

/* One turn's reading of a file: its lines, then a piece more. */
static void
bridgeio_pump(evutil_socket_t fd, short what, void *arg)
{
	struct bridgeio	*io = arg;
	int		 n;

	(void)fd;
	(void)what;
	bridgeio_lines(io, io->inbuf, 1);
	if (bridgeio_stopped(io) || !io->cb->room(io->arg)) {
		io->paused = 1;
		return;
	}
	if ((n = evbuffer_read(io->inbuf, 0, BRIDGEIO_CHUNK)) > 0) {
		event_active(io->pump, EV_READ, 0);
		return;
	}
	if (n == -1)
		perror("cmdgate mcp: reading stdin");
	bridgeio_end(io, io->inbuf);
}

/* Too much unread by the client: read nothing more for it until it is. */
static void
bridgeio_check(struct bridgeio *io)
{
	if (io->full || io->out == NULL ||
	    evbuffer_get_length(bufferevent_get_output(io->out)) <=
	    BRIDGEIO_OUT_MAX)
		return;
	io->full = 1;
	bridgeio_reading(io);
	io->cb->full(io->arg, 1);
}

static void
bridgeio_written(struct bufferevent *bev, void *arg)
{
	struct bridgeio	*io = arg;

	(void)bev;
	if (io->full) {
		io->full = 0;
		io->cb->full(io->arg, 0);
		bridgeio_reading(io);
	}
	io->cb->flushed(io->arg);
}

int
bridgeio_open(struct bridgeio *io, struct event_base *base,
    const struct bridgeio_cb *cb, void *arg)
{
	memset(io, 0, sizeof(*io));
	io->cb = cb;
	io->arg = arg;
	if (bridgeio_pollable(0)) {
		if ((io->in = bufferevent_socket_new(base, 0, 0)) == NULL)
			return -1;
		bufferevent_setcb(io->in, bridgeio_read, NULL, bridgeio_event,
		    io);
	} else if ((io->inbuf = evbuffer_new()) == NULL ||
	    (io->pump = event_new(base, -1, 0, bridgeio_pump, io)) == NULL)
		return -1;
	if (bridgeio_pollable(1)) {
		if ((io->out = bufferevent_socket_new(base, 1, 0)) == NULL)
			return -1;
		bufferevent_setcb(io->out, NULL, bridgeio_written, NULL, io);
	}
	return 0;
}

void
bridgeio_start(struct bridgeio *io)
{
	if (io->in != NULL)
		bufferevent_enable(io->in, EV_READ);
	else
		event_active(io->pump, EV_READ, 0);
	if (io->out != NULL)
		bufferevent_enable(io->out, EV_WRITE);
}

/* All of s to stdout, a file that does not block for long: 0, or -1. */
static int
bridgeio_write_all(const char *s, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(1, s, n)) == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

void
bridgeio_write(struct bridgeio *io, const char *line, size_t n)
{
	if (io->out != NULL) {
		bufferevent_write(io->out, line, n);
		bufferevent_write(io->out, "\n", 1);
		bridgeio_check(io);
	} else if (bridgeio_write_all(line, n) == -1 ||
	    bridgeio_write_all("\n", 1) == -1)
		perror("cmdgate mcp: writing stdout");
}

void
bridgeio_write_buffer(struct bridgeio *io, struct evbuffer *buf)
{
	if (io->out != NULL) {
		bufferevent_write_buffer(io->out, buf);
		bridgeio_check(io);
		return;
	}
	while (evbuffer_get_length(buf) > 0)
		if (evbuffer_write(buf, 1) <= 0) {
			perror("cmdgate mcp: writing stdout");
			break;
		}
}

int
bridgeio_flushed(const struct bridgeio *io)
{
	return io->out == NULL ||
	    evbuffer_get_length(bufferevent_get_output(io->out)) == 0;
}

void
bridgeio_room(struct bridgeio *io)
{
	if (io->paused && !bridgeio_stopped(io) && io->cb->room(io->arg)) {
		io->paused = 0;
		event_active(io->pump, EV_READ, 0);
	}
}

void
bridgeio_hold(struct bridgeio *io, int held)
{
	io->held = held;
	bridgeio_reading(io);
}

void
bridgeio_free(struct bridgeio *io)
{
	if (io->in != NULL)
		bufferevent_free(io->in);
	if (io->out != NULL)
		bufferevent_free(io->out);
	if (io->inbuf != NULL)
		evbuffer_free(io->inbuf);
	if (io->pump != NULL)
		event_free(io->pump);
}
