/* SPDX-License-Identifier: ISC */
/*
 * A cmdgate-worker process's pipes and grace, the plumbing a job's worker
 * (worker.c) and the editor probe (engine/edprobe.c) share.
 */
#include "config.h"

#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "proc.h"
#include "log.h"

static void
child_grace_callback(evutil_socket_t fd, short ev, void *arg)
{
	struct child	*c = arg;

	(void)fd;
	(void)ev;
	c->hooks->late(c->arg);
}

void
child_init(struct child *c, struct event_base *base,
    const struct child_hooks *hooks, void *arg)
{
	c->base = base;
	c->events = c->spec = NULL;
	c->hooks = hooks;
	c->arg = arg;
	if ((c->grace = evtimer_new(base, child_grace_callback, c)) == NULL)
		fatalx("evtimer_new");
}

void
child_close(struct child *c)
{
	if (c->events != NULL)
		bufferevent_free(c->events);
	if (c->spec != NULL)
		bufferevent_free(c->spec);
	c->events = c->spec = NULL;
}

void
child_free(struct child *c)
{
	child_close(c);
	if (c->grace != NULL)
		event_free(c->grace);
	c->grace = NULL;
}

static void
child_read_callback(struct bufferevent *bev, void *arg)
{
	struct child	*c = arg;

	c->hooks->read(c->arg, bufferevent_get_input(bev), 0);
}

static void
child_eof_callback(struct bufferevent *bev, short what, void *arg)
{
	struct child	*c = arg;

	/* An answer it no longer reads: it is exiting, its end tells. */
	if (what & BEV_EVENT_WRITING) {
		evbuffer_drain(bufferevent_get_output(bev),
		    evbuffer_get_length(bufferevent_get_output(bev)));
		bufferevent_disable(bev, EV_WRITE);
		return;
	}
	/* End of file: it is exiting; SIGCHLD tells. */
	bufferevent_disable(bev, EV_READ);
	c->hooks->read(c->arg, bufferevent_get_input(bev), 1);
}

static void
child_spec_callback(struct bufferevent *bev, void *arg)
{
	struct child	*c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		bufferevent_free(bev);	/* closes the pipe: end of spec */
		c->spec = NULL;
	}
}

static void
child_spec_error_callback(struct bufferevent *bev, short what, void *arg)
{
	struct child	*c = arg;

	(void)what;
	bufferevent_free(bev);
	c->spec = NULL;
	if (c->hooks->spec_lost != NULL)
		c->hooks->spec_lost(c->arg);
}

void
child_start(struct child *c, int spec_fd, int events_fd, json_object *spec)
{
	const char	*s;
	size_t		 len;

	c->events = bufferevent_socket_new(c->base, events_fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->spec = bufferevent_socket_new(c->base, spec_fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->events == NULL || c->spec == NULL)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(c->events, child_read_callback, NULL,
	    child_eof_callback, c);
	bufferevent_enable(c->events, EV_READ);
	s = json_object_to_json_string_length(spec, JSON_C_TO_STRING_PLAIN,
	    &len);
	bufferevent_write(c->spec, s, len);	/* out from the next turn */
	bufferevent_setcb(c->spec, NULL, child_spec_callback,
	    child_spec_error_callback, c);
	bufferevent_enable(c->spec, EV_WRITE);
}

void
child_reply(struct child *c, json_object *msg)
{
	const char	*s;
	size_t		 len;

	if (c->events == NULL)
		return;
	s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (bufferevent_write(c->events, s, len) == -1 ||
	    bufferevent_write(c->events, "\n", 1) == -1)
		fatalx("bufferevent_write: out of memory");
}

struct evbuffer *
child_rest(struct child *c)
{
	struct evbuffer	*rest;

	if (c->events == NULL)
		return NULL;
	/* A bufferevent's input takes data only from the bufferevent: the
	 * rest is read into a buffer of our own. */
	if ((rest = evbuffer_new()) == NULL)
		fatalx("evbuffer_new");
	evbuffer_prepend_buffer(rest, bufferevent_get_input(c->events));
	while (evbuffer_read(rest, bufferevent_getfd(c->events), -1) > 0)
		;
	return rest;
}

void
child_mute(struct child *c)
{
	if (c->events != NULL)
		bufferevent_disable(c->events, EV_READ);
}

void
child_grace(struct child *c, uint64_t seconds)
{
	struct timeval	tv = { (time_t)seconds, 0 };

	if (!evtimer_pending(c->grace, NULL))
		evtimer_add(c->grace, &tv);
}

void
child_grace_stop(struct child *c)
{
	evtimer_del(c->grace);
}

int
child_lines(struct evbuffer *in, size_t max,
    int (*line)(void *, const char *, size_t), void *arg)
{
	char	*s;
	size_t	 len;
	int	 rc = 0;

	while (rc == 0 &&
	    (s = evbuffer_readln(in, &len, EVBUFFER_EOL_LF)) != NULL) {
		rc = line(arg, s, len);
		free(s);
	}
	if (rc == 0 && evbuffer_get_length(in) > max)
		return 1;
	return rc;
}
