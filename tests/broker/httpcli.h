/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_HTTPCLI_H
#define CMDGATE_HTTPCLI_H

#include <stddef.h>

/*
 * A small HTTP/1.1 client over a raw loopback socket for check_http:
 * one request per connection, a whole reply or its event stream read as
 * it comes.  Every read is bounded by HC_TIMEOUT_MS; no Check in here:
 * failures are return values.
 */

#define HC_TIMEOUT_MS	10000
#define HC_BUF		(1024 * 1024)

struct hc {
	int	 fd;
	int	 status;
	char	 head[8192];		/* the reply's header lines */
	char	*raw;			/* read, not yet taken */
	size_t	 rawlen;
	char	*body;			/* dechunked body so far */
	size_t	 bodylen;
	int	 chunked;
	int	 ended;			/* the body is complete */
	long	 clen;			/* Content-Length, or -1 */
};

/*
 * Send method path with the extra header lines hdrs ("Name: v\r\n"...,
 * or NULL) and body (or NULL) to 127.0.0.1:port, and read the reply's
 * head.  NULL on failure.  Free with hc_close.
 */
struct hc	*hc_request(int port, const char *method, const char *path,
		    const char *hdrs, const char *body);
/* Read the whole body (hc->body, NUL-terminated): 0, or -1. */
int		 hc_body(struct hc *);
/*
 * The next event of an event stream (its text, up to and without its
 * blank line; caller frees), or NULL at the end of the stream (ended
 * set) or on timeout.
 */
char		*hc_event(struct hc *);
/* A header of the reply (case-insensitive name) into buf: 0, or -1. */
int		 hc_header(const struct hc *, const char *name, char *buf,
		    size_t len);
void		 hc_close(struct hc *);

#endif
