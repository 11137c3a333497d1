/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SSE_H
#define CMDGATE_SSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A reader of Server-Sent Events (the WHATWG HTML "event stream"
 * format), fed the bytes of a text/event-stream body as they come:
 * lines end with CRLF, LF or CR; "data:" lines of one event are joined
 * with "\n"; "event:" names it (default "message"); "id:" sets the last
 * event id; "retry:" and ":" comments are skipped; a blank line ends the
 * event.  An event with no data line is not dispatched.  The mcp-http
 * forward dialect reads answers through it; the broker's Streamable HTTP
 * endpoint (http.c) writes its events with sse_event().
 * Library-like: nothing here exits or logs.
 */

enum {
	SSE_OK = 0,
	SSE_TOO_LONG,		/* a line or an event's data over max */
	SSE_NOMEM,
	SSE_STOP,		/* the callback asked to stop */
};

/*
 * Called for each complete event: its type (NUL-terminated), the last
 * event id seen ("" for none) and the data (NUL-terminated, len bytes,
 * borrowed for the call).  0 goes on; anything else stops the feed,
 * which then returns SSE_STOP.
 */
typedef int	(*sse_cb)(void *arg, const char *event, const char *id,
		    const char *data, size_t len);

struct sse {
	char	*line;		/* the line being read */
	size_t	 linelen, linecap;
	char	*data;		/* the event's data so far */
	size_t	 datalen, datacap;
	char	 event[64];	/* the event's type, cut to fit */
	char	 id[256];	/* the last event id, cut to fit */
	size_t	 max;		/* the longest line and event data */
	int	 after_cr;	/* the last byte was CR: skip an LF */
	int	 started;	/* past a leading byte order mark */
	size_t	 bom;		/* bytes of a leading mark seen so far */
	sse_cb	 cb;
	void	*arg;
};

void		 sse_init(struct sse *, size_t max, sse_cb cb, void *arg);
void		 sse_free(struct sse *);
/*
 * Take buf[0..len): SSE_OK, or an SSE_* code after which the stream is
 * beyond use (free it).
 */
int		 sse_feed(struct sse *, const char *buf, size_t len);
/* The last event id (borrowed; "" for none), for a Last-Event-ID. */
const char	*sse_last_id(const struct sse *);
const char	*sse_strerror(int code);

/*
 * The writer's side: one event as its bytes on the wire, each field on
 * its line and a blank line after.  event, id: NULL for none; retry_ms:
 * 0 for none; data[len] (NUL-terminated) becomes one "data:" line per
 * line of it (an empty data, one empty "data:" line).  *outlen gets the
 * length.  NULL when out of memory.  Caller frees.
 */
char		*sse_event(const char *event, const char *id, int retry_ms,
		    const char *data, size_t len, size_t *outlen);
/*
 * An event id of cmdgated's HTTP streams, "NUM-SEQ" (stream, sequence):
 * 0 with *num and *seq, or -1 when s is none of ours.
 */
int		 sse_id_parse(const char *s, uint64_t *num, uint64_t *seq);

#endif
