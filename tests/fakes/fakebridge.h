/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FAKEBRIDGE_H
#define CMDGATE_FAKEBRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

/*
 * What the fake editor bridges share (tests/fake_unity.c,
 * tests/fake_uloop.c): a loopback listener, connections with a read
 * buffer, the control channel on stdin and the log on stdout.  Every line
 * of the log is one event ("port N", "recv METHOD PARAMS", "ctl ...", ...)
 * so a test awaits events instead of sleeping.  Fatal on any error of
 * their own: a fake that cannot serve must not pass a test.
 */

#define FB_MAXCONN	32
#define FB_MAX_MSG	(64 * 1024 * 1024)

struct fb_conn {
	int	 fd;		/* -1: slot free */
	char	*buf;
	size_t	 len, cap;
};

/* Listen on 127.0.0.1:port (0: any free port): the fd. */
int		 fb_listen(int port);
/* The port lfd listens on. */
int		 fb_port(int lfd);
/* One line on stdout, flushed at once. */
void		 fb_log(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));
/* "recv NAME PARAMS" with params as compact JSON (null when NULL). */
void		 fb_log_recv(const char *name, json_object *params);
/* clock_gettime(clock) in milliseconds. */
int64_t		 fb_now_ms(clockid_t clock);
/* A JSON value from printf-style text (fatal if not JSON).  Caller puts. */
json_object	*fb_jsonf(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));
/* The first 8 hex digits of SHA-1(s) (FIPS 180-4) in out. */
void		 fb_fatal(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2), noreturn));

/* Take a free slot for fd: the connection, or NULL when all are taken. */
struct fb_conn	*fb_conn_add(struct fb_conn *conns, int fd);
void		 fb_conn_close(struct fb_conn *);
/* Read what is there: 1, or 0 when the peer closed or failed. */
int		 fb_conn_read(struct fb_conn *);
/* Drop the first n bytes of the buffer. */
void		 fb_conn_consume(struct fb_conn *, size_t n);
/* Write all of buf: 0, or -1 (the peer is gone). */
int		 fb_write(int fd, const void *buf, size_t n);

/*
 * Read stdin; each complete line goes to fn.  0, or -1 at EOF (the test
 * is gone: the fake exits).
 */
int		 fb_control(void (*fn)(char *line));

/* What fb_loop serves: stdin's control lines, the listener, the conns. */
struct fb_loop {
	int		*lfd;		/* the listener; -1 while closed */
	struct fb_conn	*conns;		/* FB_MAXCONN of them */
	void		(*control)(char *line);
	void		(*accept)(void);
	void		(*serve)(struct fb_conn *);
	int		(*timeout)(void);	/* poll's, in ms; NULL: -1 */
	void		(*timers)(void);	/* after each wake; may be NULL */
};
/* Serve l until a control line or end of stdin says quit (exit 0). */
void		 fb_loop(const struct fb_loop *l)
		    __attribute__((__noreturn__));

#endif
