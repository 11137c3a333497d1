/* SPDX-License-Identifier: ISC */
/*
 * The editor state the faces show: worked out from the running reload
 * jobs and the editor probe whenever asked; the subscribers are told
 * from the loop once it changed (changes coming together are told once).
 */
#include "config.h"

#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "engine.h"
#include "faces.h"
#include "log.h"
#include "server.h"
#include "util.h"

struct edsub {
	TAILQ_ENTRY(edsub)	 entry;
	struct edsubs		*S;		/* NULL: no engine, never told */
	void			(*fn)(void *);
	void			*arg;
	unsigned		 told;		/* S->gen when last told */
};
TAILQ_HEAD(edsublist, edsub);

/* The subscriptions of one engine (struct jobs). */
struct edsubs {
	struct server		*srv;
	struct edsublist	 subs;
	struct edstate		 last;		/* as last told */
	struct event		*kick;		/* something changed */
	struct event		*lost_ev;	/* the end of a reload by loss */
	unsigned		 gen;		/* of the telling under way */
	int			 telling;
};

static void	 edsubs_free(struct edsubs *);

static void
reload_running(struct job *j, void *arg)
{
	int	*reloading = arg;

	*reloading |= job_reload(j);
}

/* The state now; *lost_end (monotonic ms) when a reload taken from the
 * probe's loss ends, or 0. */
static void
edstate_now(struct server *srv, struct edstate *st, int64_t *lost_end)
{
	int64_t		 lost, now = util_monotonic_ms();

	memset(st, 0, sizeof(*st));
	*lost_end = 0;
	st->reachable = edprobe_reachable(srv->probe, &lost);
	if (st->reachable == 0 && lost != 0 &&
	    now - lost < EDSTATE_LOST_MAX_S * 1000) {
		st->reloading = 1;
		*lost_end = lost + EDSTATE_LOST_MAX_S * 1000;
	}
	/* A reload's end counts once stored (jobend_forget tells it). */
	if (srv->jobs != NULL)
		job_foreach_stored(srv->jobs, JOB_RUNNING, reload_running,
		    &st->reloading);
}

void
edstate_get(struct server *srv, struct edstate *st)
{
	int64_t	lost_end;

	edstate_now(srv, st, &lost_end);
}

/* Tell every subscriber once; each may unsubscribe itself or others. */
static void
edsubs_tell(struct edsubs *S)
{
	struct edsub	*sub;

	S->gen++;
	S->telling = 1;
	for (;;) {
		TAILQ_FOREACH(sub, &S->subs, entry)
			if (sub->told != S->gen)
				break;
		if (sub == NULL)
			break;
		sub->told = S->gen;
		sub->fn(sub->arg);
	}
	S->telling = 0;
	if (TAILQ_EMPTY(&S->subs))
		edsubs_free(S);
}

static void
on_kick(evutil_socket_t fd, short ev, void *arg)
{
	struct edsubs	*S = arg;
	struct edstate	 st;
	struct timeval	 tv;
	int64_t		 lost_end, ms;

	(void)fd;
	(void)ev;
	edstate_now(S->srv, &st, &lost_end);
	if (lost_end != 0) {
		ms = lost_end - util_monotonic_ms() + 1;
		tv.tv_sec = (time_t)(ms / 1000);
		tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
		evtimer_add(S->lost_ev, &tv);
	}
	if (memcmp(&st, &S->last, sizeof(st)) == 0)
		return;
	log_debug("editor state: reloading %d, reachable %d", st.reloading,
	    st.reachable);
	S->last = st;
	edsubs_tell(S);
}

/* A feed (the probe, a reload job) may have changed the state. */
static void
edsubs_feed(struct edsubs *S)
{
	event_active(S->kick, EV_TIMEOUT, 0);
}

static void
edsubs_feed_arg(void *arg)
{
	edsubs_feed(arg);
}

static struct edsubs *
edsubs_new(struct server *srv)
{
	struct edsubs	*S = xcalloc(1, sizeof(*S));
	int64_t		 lost_end;

	S->srv = srv;
	TAILQ_INIT(&S->subs);
	S->kick = event_new(srv->base, -1, 0, on_kick, S);
	S->lost_ev = evtimer_new(srv->base, on_kick, S);
	if (S->kick == NULL || S->lost_ev == NULL)
		fatalx("event_new");
	edstate_now(srv, &S->last, &lost_end);
	jobs_set_edsubs(srv->jobs, S, edsubs_feed);
	edprobe_watch(srv->probe, edsubs_feed_arg, S);
	/* The loss's end, if one is under way. */
	if (lost_end != 0)
		edsubs_feed(S);
	return S;
}

static void
edsubs_free(struct edsubs *S)
{
	jobs_set_edsubs(S->srv->jobs, NULL, NULL);
	edprobe_watch(S->srv->probe, NULL, NULL);
	event_free(S->kick);
	event_free(S->lost_ev);
	free(S);
}

struct edsub *
edstate_subscribe(struct server *srv, void (*fn)(void *), void *arg)
{
	struct edsub	*sub = xcalloc(1, sizeof(*sub));

	sub->fn = fn;
	sub->arg = arg;
	if (srv->jobs == NULL)
		return sub;
	if ((sub->S = jobs_edsubs(srv->jobs)) == NULL)
		sub->S = edsubs_new(srv);
	sub->told = sub->S->gen;
	TAILQ_INSERT_TAIL(&sub->S->subs, sub, entry);
	return sub;
}

void
edstate_unsubscribe(struct edsub *sub)
{
	struct edsubs	*S;

	if (sub == NULL)
		return;
	if ((S = sub->S) != NULL) {
		TAILQ_REMOVE(&S->subs, sub, entry);
		if (TAILQ_EMPTY(&S->subs) && !S->telling)
			edsubs_free(S);
	}
	free(sub);
}
