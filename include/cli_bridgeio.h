/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_BRIDGEIO_H
#define CMDGATE_CLI_BRIDGEIO_H

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

/*
 * cmdgate mcp's standard input and output, as lines, through libevent
 * when they can be polled (pipes, sockets, terminals); a regular file or
 * /dev/null, which cannot, is read a piece per loop turn, and written
 * at once (it never blocks for long).
 */

/* The longest line read; a longer one is answered with an error. */
#define BRIDGEIO_LINE_MAX	(64 * 1024 * 1024)
/* Past this much unread by the client, nothing more is read for it. */
#define BRIDGEIO_OUT_MAX	(16 * 1024 * 1024)

struct bridgeio_cb {
	void	(*line)(void *arg, const char *line, size_t len);
	void	(*eof)(void *arg);		/* stdin ended */
	void	(*flushed)(void *arg);		/* stdout has all of it */
	int	(*room)(void *arg);		/* 0: read a file no further */
	void	(*full)(void *arg, int full);	/* stdout past OUT_MAX, or not */
};

struct bridgeio {
	const struct bridgeio_cb *cb;
	void			*arg;
	struct bufferevent	*in, *out;	/* NULL: not pollable */
	struct evbuffer		*inbuf;		/* a file's, read not taken */
	struct event		*pump;		/* reads a file on */
	int			 paused;	/* no room: the file waits */
	int			 skipping;	/* a line too long, to its end */
	size_t			 scanned;	/* of stdin: no newline in it */
	int			 eof;
	int			 full;		/* stdout past OUT_MAX */
	int			 held;		/* bridgeio_hold() */
};

/*
 * The next line of buf, without its newline (caller frees), or NULL.
 * *scanned (0 at first) is how much of buf has no newline: a long line
 * that comes a piece at a time is searched once.
 */
char	*bridgeio_readln(struct evbuffer *buf, size_t *scanned, size_t *n);
/* Set io up on fds 0 and 1 of base; 0, or -1. */
int	 bridgeio_open(struct bridgeio *, struct event_base *,
	    const struct bridgeio_cb *, void *arg);
void	 bridgeio_start(struct bridgeio *);
/* line (n bytes) and a newline to stdout. */
void	 bridgeio_write(struct bridgeio *, const char *line, size_t n);
/* All of buf to stdout. */
void	 bridgeio_write_buffer(struct bridgeio *, struct evbuffer *buf);
/* Whether stdout holds nothing unwritten. */
int	 bridgeio_flushed(const struct bridgeio *);
/* There may be room again: a file waiting for it is read on. */
void	 bridgeio_room(struct bridgeio *);
/* Read stdin no further (the broker reads too little), or read again. */
void	 bridgeio_hold(struct bridgeio *, int held);
void	 bridgeio_free(struct bridgeio *);

#endif
