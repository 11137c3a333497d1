/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FRAME_H
#define CMDGATE_FRAME_H

#include <stddef.h>

/*
 * Message framing of cmdgate-protocol(7), Framing.  A framer is fed the input
 * buffer of one connection and cuts whole messages out of it: JSON lines,
 * or LSP-style Content-Length frames when the connection's first bytes say
 * so, or the 8-byte frames of MCP for Unity's bridge when its face says so.
 * It never reads the socket itself, so it can be tested on buffers.
 */

struct evbuffer;

enum frame_mode {
	FRAME_UNKNOWN,		/* nothing decided yet */
	FRAME_LINE,		/* one JSON message per line */
	FRAME_LSP,		/* Content-Length headers, then the body */
	FRAME_UNITY,		/* 8-byte big-endian length, then the body */
};

enum frame_status {
	FRAME_MSG,		/* *msg holds one message */
	FRAME_MORE,		/* need more input */
	FRAME_TOO_LARGE,	/* a message passes the limit: close */
	FRAME_BAD_HEADER,	/* bad Content-Length header, or a unity
				   frame of length 0: close */
};

#define FRAME_LSP_HEADER_MAX	8192	/* bytes of headers per message */
#define FRAME_UNITY_HEADER	8	/* bytes of a unity frame's length */
#define FRAME_UNITY_MAX		(64 * 1024 * 1024)	/* the bridge's limit */

struct framer {
	enum frame_mode	 mode;
	size_t		 max;		/* largest message, bytes */
	size_t		 scanned;	/* input bytes known to hold no '\n' */
	size_t		 header_bytes;	/* LSP: header bytes of this frame */
	long long	 body_len;	/* LSP: -1 until Content-Length seen */
	int		 in_body;	/* LSP: headers done, reading body */
};

void			 frame_init(struct framer *, size_t max);
/* Speak MCP for Unity's frames from now on, up to max bytes a message. */
void			 frame_init_unity(struct framer *, size_t max);
/*
 * Take the next message out of in.  On FRAME_MSG *msg is a NUL-terminated
 * copy of the message without its framing (caller frees) and *len its
 * length.  Blank lines are skipped.
 */
enum frame_status	 frame_next(struct framer *, struct evbuffer *in,
			    char **msg, size_t *len);
/* Append one framed message to out in the connection's framing. */
int			 frame_write(const struct framer *, struct evbuffer *out,
			    const char *msg, size_t len);

#endif
