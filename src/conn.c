/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "conn.h"
#include "frame.h"
#include "log.h"
#include "rpc.h"
#include "server.h"
#include "util.h"

struct conn *
conn_new(struct server *srv, struct bufferevent *bev, struct evbuffer *out,
    int is_unix, const char *peer)
{
	struct conn	*c = xcalloc(1, sizeof(*c));

	c->srv = srv;
	c->bev = bev;
	if (bev != NULL) {
		if ((c->out = evbuffer_new()) == NULL)
			fatalx("evbuffer_new");
		c->sock = bufferevent_get_output(bev);
	} else
		c->out = out;
	c->is_unix = is_unix;
	c->id = ++srv->next_conn_id;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->since_ms = c->active_ms = util_monotonic_ms();
	frame_init(&c->fr, srv->opt->max_message);
	TAILQ_INIT(&c->pending);
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	return c;
}

void
conn_free(struct conn *c)
{
	struct editor_flags	none = { 0, 0, 0 };
	struct server		*srv = c->srv;
	int			had_flags;

	rpc_cancel_all(c);
	had_flags = holds_change(&srv->holds, &c->editor, &none);
	TAILQ_REMOVE(&c->srv->conns, c, entry);
	c->srv->nconns--;
	c->srv->inbuf_total -= c->inbuf;
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->flush_queued)
		TAILQ_REMOVE(&c->srv->flushq, c, flush_entry);
	if (c->sock != NULL)
		evbuffer_free(c->out);
	if (c->held != NULL)
		evbuffer_free(c->held);
	free(c->name);
	free(c);
	if (had_flags)
		server_busy_changed(srv);
}

int
conn_needs_auth(const struct conn *c)
{
	return c->srv->token != NULL && !c->is_unix && !c->authenticated;
}

int
conn_busy(const struct conn *c)
{
	return !TAILQ_EMPTY(&c->pending) || c->batch != NULL ||
	    c->committing > 0 || c->session || c->editor.tests_running ||
	    c->editor.compiling || c->editor.busy;
}

void
conn_kill(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	c->closing = 1;
	if (c->srv->reaper != NULL)
		event_active(c->srv->reaper, EV_TIMEOUT, 0);
}

/*
 * A client that does not read its answers is dropped once its unread
 * output passes the bound, rather than growing the broker without end.
 */
static size_t
conn_out_max(const struct conn *c)
{
	size_t	m = 4 * c->fr.max;

	return m > CONN_OUT_MAX ? m : CONN_OUT_MAX;
}

size_t
conn_unsent(const struct conn *c)
{
	return evbuffer_get_length(c->out) +
	    (c->sock != NULL ? evbuffer_get_length(c->sock) : 0);
}

/*
 * Answers are written once per loop turn, after everything the turn
 * produced: a pipelined client gets one write for many answers, and a
 * lone request is answered without waiting for the socket to be polled
 * for writing first.
 */
static void
conn_queue_flush(struct conn *c)
{
	if (c->sock == NULL || c->flush_queued || c->dead)
		return;
	c->flush_queued = 1;
	TAILQ_INSERT_TAIL(&c->srv->flushq, c, flush_entry);
	if (c->srv->flusher != NULL)
		event_active(c->srv->flusher, EV_TIMEOUT, 0);
}

/* Out of the flush queue: write what the socket takes, queue the rest. */
void
conn_flush(struct conn *c)
{
	TAILQ_REMOVE(&c->srv->flushq, c, flush_entry);
	c->flush_queued = 0;
	if (c->dead || evbuffer_get_length(c->out) == 0)
		return;
	/* An error is the bufferevent's to see when it writes the rest. */
	if (evbuffer_get_length(c->sock) == 0)
		(void)evbuffer_write(c->out, bufferevent_getfd(c->bev));
	if (evbuffer_get_length(c->out) > 0)
		evbuffer_add_buffer(c->sock, c->out);
}

void
conn_send(struct conn *c, json_object *msg)
{
	const char	*s;
	size_t		 len;

	if (c->dead)
		return;
	s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	/* With --sync group, nothing leaves before the changes are synced. */
	if (c->srv->hold_output) {
		if (c->held == NULL && (c->held = evbuffer_new()) == NULL)
			fatalx("evbuffer_new");
		if (frame_write(&c->fr, c->held, s, len) == -1)
			fatalx("evbuffer_add: out of memory");
		return;
	}
	if (frame_write(&c->fr, c->out, s, len) == -1)
		fatalx("evbuffer_add: out of memory");
	if (conn_unsent(c) > conn_out_max(c)) {
		log_warnx("client %llu (%s): %zu bytes unread, dropped",
		    (unsigned long long)c->id, c->peer, conn_unsent(c));
		conn_kill(c);
		return;
	}
	conn_queue_flush(c);
}

void
conn_release(struct conn *c)
{
	if (c->held == NULL || evbuffer_get_length(c->held) == 0)
		return;
	evbuffer_add_buffer(c->out, c->held);
	if (conn_unsent(c) > conn_out_max(c))
		conn_kill(c);
	else
		conn_queue_flush(c);
}

void
conn_fail(struct conn *c, int code, const char *type, const char *reason)
{
	struct timeval	 tv = { CONN_FAIL_FLUSH_S, 0 };
	json_object	*resp;

	resp = rpc_error_response(NULL, code, type, NULL, reason);
	conn_send(c, resp);
	json_object_put(resp);
	c->closing = 1;
	/* Dropped if it does not read the error in time. */
	if (c->timer != NULL)
		evtimer_add(c->timer, &tv);
}

void
conn_input(struct conn *c, struct evbuffer *in)
{
	enum frame_status	 st;
	char			*msg, reason[128];
	size_t			 len;

	/*
	 * A submit's answer comes after its commit, and a batch's after its
	 * last request: both before the next request's.
	 */
	while (!c->closing && c->committing == 0 && c->batch == NULL) {
		st = frame_next(&c->fr, in, &msg, &len);
		switch (st) {
		case FRAME_MORE:
			return;
		case FRAME_MSG:
			c->active_ms = util_monotonic_ms();
			rpc_message(c, msg, len);
			free(msg);
			break;
		case FRAME_TOO_LARGE:
			snprintf(reason, sizeof(reason), "a message may hold "
			    "at most %zu bytes (--max-message)", c->fr.max);
			conn_fail(c, RPC_INVALID_REQUEST, "message_too_large",
			    reason);
			log_info("client %llu (%s): message too large, closed",
			    (unsigned long long)c->id, c->peer);
			return;
		case FRAME_BAD_HEADER:
			conn_fail(c, RPC_INVALID_REQUEST, "invalid_request",
			    "a frame needs a \"Content-Length: N\" header "
			    "with a decimal N, then an empty line");
			log_info("client %llu (%s): bad frame header, closed",
			    (unsigned long long)c->id, c->peer);
			return;
		}
	}
}
