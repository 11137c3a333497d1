/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_NOTIFY_H
#define CMDGATE_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/*
 * An exec tool's notify descriptor (cmdgate.tools(5), Progress and log
 * lines): the lines it writes there become the worker's progress and log
 * events, at most NOTIFY_RATE a second, excess progress coalesced to the
 * latest and excess log lines counted.
 */

#define NOTIFY_FD	4	/* the tool's end; CMDGATE_NOTIFY_FD */
#define NOTIFY_LINE_MAX	4096	/* bytes of a line, without its newline */
#define NOTIFY_RATE	50	/* events a second, per command */

enum notify_kind {
	NOTIFY_BAD,
	NOTIFY_PROGRESS,
	NOTIFY_LOG,
};

/* One parsed line; level and msg point into the line. */
struct notify_line {
	enum notify_kind	 kind;
	double			 progress, total;	/* total 0: none */
	const char		*level;
	size_t			 levellen;
	const char		*msg;
	size_t			 msglen;
};

struct notify {
	int		 fd;		/* the read end; -1 once closed */
	size_t		 index;		/* of the command */
	char		 buf[NOTIFY_LINE_MAX + 1];
	size_t		 len;
	int		 overlong;	/* skipping the rest of a long line */
	int		 said_long, said_bad;
	int64_t		 window;	/* when the current second began */
	int		 sent;		/* events in it */
	json_object	*pending;	/* coalesced progress, or NULL */
	unsigned long	 dropped;	/* log lines dropped in it */
	void		(*emit)(json_object *);	/* takes the event */
};

/* Parse line[len] (no newline): 0 with *out set, or -1 (NOTIFY_BAD). */
int		 notify_parse(const char *line, size_t len,
		    struct notify_line *out);
/* Watch fd (the pipe's read end, non-blocking) for command index. */
void		 notify_init(struct notify *, int fd, size_t index,
		    void (*emit)(json_object *));
/* Read what is there (bounded): 0 at end of file (fd closed), else 1. */
int		 notify_read(struct notify *, int64_t now);
/* Send what waited for the next second if it has begun: the ms until the
 * next is due, or -1 when nothing waits. */
int64_t		 notify_due(struct notify *, int64_t now);
/* Send ev (taken; progress: a progress event, else a log event) as the
 * rate allows, or hold it back (a progress) or count it (a log line). */
void		 notify_send(struct notify *, json_object *ev, int progress,
		    int64_t now);
/* The level name's own static string, or NULL when it is none. */
const char	*notify_level(const char *name, size_t len);
/* The tool is gone: read what is left, send all that waits, close. */
void		 notify_end(struct notify *, int64_t now);

#endif
