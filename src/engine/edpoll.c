/* SPDX-License-Identifier: ISC */
/*
 * The editor probe's polls in the broker, over the editor link of the
 * editor's bridge (src/link/): the state call every every_ms after the
 * last answer, in order with the jobs' exchanges on the same connection,
 * and its event (include/edevent.h) to the probe whenever it changed.
 * No process and no pipe: the link knows what it sent and what the
 * editor said.  See cmdgated(8), Editor probe.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "edevent.h"
#include "internal.h"
#include "jstrict.h"
#include "link.h"
#include "log.h"
#include "util.h"

/* A call in flight: E NULL once the poller went before its answer. */
struct edpoll_call {
	struct edpoll	*E;
};

struct edpoll {
	struct link		*L;
	json_object		*probe;		/* the table's editor */
	edpoll_fn		 fn;
	void			*arg;
	struct event		*tick;
	struct edpoll_call	*inflight;
	char			*last;		/* the last event told */
};

static void
edpoll_answered(void *arg, const struct link_answer *a)
{
	struct edpoll_call	*c = arg;
	struct edpoll		*E = c->E;
	json_object		*ev;
	const char		*s;
	int64_t			 every;
	struct timeval		 tv;

	free(c);
	if (E == NULL)
		return;
	E->inflight = NULL;
	if (a->status == UP_CANCELLED)
		return;		/* the links are closing */
	every = edevent_every_ms(E->probe);
	tv.tv_sec = every / 1000;
	tv.tv_usec = (every % 1000) * 1000;
	evtimer_add(E->tick, &tv);
	ev = edevent_of(E->probe, a->status, a->behind, a->out, a->err);
	s = jstrict_to_string(ev);
	if (E->last == NULL || strcmp(s, E->last) != 0) {
		free(E->last);
		E->last = xstrdup(s);
		E->fn(E->arg, ev);
	}
	json_object_put(ev);
}

static void
edpoll_tick(evutil_socket_t fd, short what, void *arg)
{
	struct edpoll	*E = arg;
	int64_t		 ms = edevent_call_ms(E->probe);

	(void)fd;
	(void)what;
	E->inflight = xcalloc(1, sizeof(*E->inflight));
	E->inflight->E = E;
	link_call(E->L, json_object_get_string(json_object_object_get(
	    E->probe, "call")), json_object_object_get(E->probe, "params"),
	    ms, ms, edpoll_answered, E->inflight);
}

struct edpoll *
edpoll_new(struct event_base *base, struct link *L, json_object *probe,
    edpoll_fn fn, void *arg)
{
	struct edpoll	*E = xcalloc(1, sizeof(*E));

	E->L = L;
	E->probe = json_object_get(probe);
	E->fn = fn;
	E->arg = arg;
	if ((E->tick = evtimer_new(base, edpoll_tick, E)) == NULL)
		fatalx("evtimer_new");
	event_active(E->tick, EV_TIMEOUT, 0);
	return E;
}

void
edpoll_free(struct edpoll *E)
{
	if (E == NULL)
		return;
	if (E->inflight != NULL)
		E->inflight->E = NULL;	/* its answer finds nobody */
	event_free(E->tick);
	json_object_put(E->probe);
	free(E->last);
	free(E);
}
