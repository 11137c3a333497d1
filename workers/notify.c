/* SPDX-License-Identifier: ISC */
/*
 * An exec tool's notify descriptor: "progress P[/T] [MESSAGE]" and
 * "log LEVEL MESSAGE" lines become progress and log events
 * (cmdgate.tools(5), Progress and log lines).  A line over
 * NOTIFY_LINE_MAX bytes is ignored, and so is anything else; each is said
 * once per command, as a log event.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "notify.h"
#include "wire.h"

#define NOTIFY_READ_MAX	(64 * 1024)	/* bytes read per call */
#define NOTIFY_END_MAX	(1024 * 1024)	/* read once the tool is gone */
#define NOTIFY_WINDOW_MS 1000

static const char *levels[] = { "debug", "info", "notice", "warning",
    "error", "critical", "alert", "emergency", NULL };

/* A decimal number at *p (digits, maybe a fraction): 0, or -1. */
static int
parse_number(const char **p, const char *end, double *v)
{
	const char	*s = *p;
	double		 scale = 1;
	int		 digits = 0;

	*v = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++, digits++)
		*v = *v * 10 + (*s - '0');
	if (digits > 0 && s < end && *s == '.') {
		for (s++, digits = 0; s < end && *s >= '0' && *s <= '9';
		    s++, digits++) {
			scale /= 10;
			*v += (*s - '0') * scale;
		}
	}
	if (digits == 0 || !isfinite(*v))
		return -1;
	*p = s;
	return 0;
}

/* The rest of the line after a word: nothing, or a space and a message. */
static int
parse_rest(const char *p, const char *end, struct notify_line *out)
{
	if (p < end && *p != ' ')
		return -1;
	out->msg = p < end ? p + 1 : p;
	out->msglen = (size_t)(end - out->msg);
	return 0;
}

static int
parse_progress(const char *p, const char *end, struct notify_line *out)
{
	if (parse_number(&p, end, &out->progress) == -1)
		return -1;
	if (p < end && *p == '/') {
		p++;
		if (parse_number(&p, end, &out->total) == -1 ||
		    out->total <= 0)
			return -1;
	}
	out->kind = NOTIFY_PROGRESS;
	return parse_rest(p, end, out);
}

const char *
notify_level(const char *name, size_t len)
{
	size_t	i;

	for (i = 0; levels[i] != NULL; i++)
		if (strlen(levels[i]) == len &&
		    memcmp(levels[i], name, len) == 0)
			return levels[i];
	return NULL;
}

static int
parse_log(const char *p, const char *end, struct notify_line *out)
{
	const char	*w = p;

	while (p < end && *p != ' ')
		p++;
	if ((out->level = notify_level(w, (size_t)(p - w))) == NULL)
		return -1;
	out->kind = NOTIFY_LOG;
	out->levellen = (size_t)(p - w);
	return parse_rest(p, end, out);
}

int
notify_parse(const char *line, size_t len, struct notify_line *out)
{
	const char	*end = line + len;

	memset(out, 0, sizeof(*out));
	if (len > 0 && line[len - 1] == '\r')
		end--;
	if (end - line > 9 && memcmp(line, "progress ", 9) == 0 &&
	    parse_progress(line + 9, end, out) == 0)
		return 0;
	if (end - line > 4 && memcmp(line, "log ", 4) == 0 &&
	    parse_log(line + 4, end, out) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	return -1;
}

static json_object *
number_json(double v)
{
	if (v < 9007199254740992.0 && (double)(int64_t)v == v)
		return json_object_new_int64((int64_t)v);
	return json_object_new_double(v);
}

static json_object *
event_new(struct notify *n, const char *kind)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, WIRE_EVENT, json_object_new_string(kind));
	json_object_object_add(ev, WIRE_INDEX,
	    json_object_new_int64((int64_t)n->index));
	return ev;
}

static json_object *
log_event(struct notify *n, const char *level, const char *msg, size_t len)
{
	json_object	*ev = event_new(n, WIRE_EV_LOG);

	json_object_object_add(ev, WIRE_LEVEL, json_object_new_string(level));
	json_object_object_add(ev, WIRE_MESSAGE, utf8_json(msg, len));
	return ev;
}

/* Send what the last second held back. */
static void
notify_flush(struct notify *n)
{
	char	msg[64];

	if (n->pending != NULL) {
		n->emit(n->pending);
		n->pending = NULL;
		n->sent++;
	}
	if (n->dropped > 0) {
		snprintf(msg, sizeof(msg), "%lu log lines dropped", n->dropped);
		n->emit(log_event(n, "warning", msg, strlen(msg)));
		n->dropped = 0;
		n->sent++;
	}
}

int64_t
notify_due(struct notify *n, int64_t now)
{
	if (now - n->window >= NOTIFY_WINDOW_MS) {
		n->window = now;
		n->sent = 0;
		notify_flush(n);
	}
	if (n->pending == NULL && n->dropped == 0)
		return -1;
	return n->window + NOTIFY_WINDOW_MS - now;
}

void
notify_send(struct notify *n, json_object *ev, int progress, int64_t now)
{
	notify_due(n, now);
	if (n->sent < NOTIFY_RATE) {
		n->emit(ev);
		n->sent++;
	} else if (progress) {
		json_object_put(n->pending);
		n->pending = ev;
	} else {
		json_object_put(ev);
		n->dropped++;
	}
}

/* A note about the tool's lines, once per command. */
static void
notify_say(struct notify *n, int *said, const char *level, const char *msg,
    int64_t now)
{
	if (*said)
		return;
	*said = 1;
	notify_send(n, log_event(n, level, msg, strlen(msg)), 0, now);
}

static void
notify_line(struct notify *n, const char *line, size_t len, int64_t now)
{
	struct notify_line	 l;
	json_object		*ev;

	if (notify_parse(line, len, &l) == -1) {
		notify_say(n, &n->said_bad, "debug", "a line on the notify "
		    "descriptor that is neither progress nor log was ignored",
		    now);
		return;
	}
	if (l.kind == NOTIFY_LOG) {
		notify_send(n, log_event(n, l.level, l.msg, l.msglen), 0, now);
		return;
	}
	ev = event_new(n, WIRE_EV_PROGRESS);
	json_object_object_add(ev, WIRE_PROGRESS, number_json(l.progress));
	if (l.total > 0)
		json_object_object_add(ev, WIRE_TOTAL, number_json(l.total));
	if (l.msglen > 0)
		json_object_object_add(ev, WIRE_MESSAGE, utf8_json(l.msg,
		    l.msglen));
	notify_send(n, ev, 1, now);
}

/* Bytes p[len] of the stream, cut into lines. */
static void
notify_bytes(struct notify *n, const char *p, size_t len, int64_t now)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (p[i] == '\n') {
			if (!n->overlong)
				notify_line(n, n->buf, n->len, now);
			n->overlong = 0;
			n->len = 0;
		} else if (n->overlong)
			continue;
		else if (n->len == NOTIFY_LINE_MAX) {
			n->overlong = 1;
			n->len = 0;
			notify_say(n, &n->said_long, "warning", "a line over "
			    "4096 bytes on the notify descriptor was ignored",
			    now);
		} else
			n->buf[n->len++] = p[i];
	}
}

void
notify_init(struct notify *n, int fd, size_t index,
    void (*emit)(json_object *))
{
	memset(n, 0, sizeof(*n));
	n->fd = fd;
	n->index = index;
	n->emit = emit;
}

/* Read up to max bytes: 0 at end of file (closed), else 1. */
static int
notify_read_max(struct notify *n, int64_t now, size_t max)
{
	char	buf[4096];
	size_t	total = 0;
	ssize_t	r;

	while (n->fd >= 0 && total < max) {
		r = read(n->fd, buf, sizeof(buf));
		if (r > 0) {
			notify_bytes(n, buf, (size_t)r, now);
			total += (size_t)r;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && errno == EAGAIN)
			return 1;
		close(n->fd);
		n->fd = -1;
		return 0;
	}
	return n->fd >= 0;
}

int
notify_read(struct notify *n, int64_t now)
{
	return notify_read_max(n, now, NOTIFY_READ_MAX);
}

void
notify_end(struct notify *n, int64_t now)
{
	notify_read_max(n, now, NOTIFY_END_MAX);
	/* A last line without its newline counts too. */
	if (n->len > 0 && !n->overlong)
		notify_line(n, n->buf, n->len, now);
	n->len = 0;
	notify_flush(n);
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}
