/* SPDX-License-Identifier: ISC */
/*
 * Waiters (cmdgate-protocol(7), Jobs): a wait_job, a tools/call or a
 * face's command waiting for its job's end, its timeout, and, for a
 * watching waiter, the job's news as it comes.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "store.h"
#include "util.h"

struct waiter {
	TAILQ_ENTRY(waiter)	 entry;
	TAILQ_ENTRY(waiter)	 wentry;	/* J->watchers, with a watch */
	struct jobs		*jobs;
	uint64_t		 num;
	struct event		*timer;		/* NULL: none */
	waiter_done_fn		 done;
	waiter_answer_fn	 answer;	/* NULL: not told */
	waiter_watch_fn		 watch;		/* NULL: not told */
	void			*watch_arg;
	void			*arg;
};

static void	 on_wait_timeout(evutil_socket_t, short, void *);


static void
waiter_free(struct waiter *w)
{
	if (w->watch != NULL) {
		w->jobs->nwatching--;
		TAILQ_REMOVE(&w->jobs->watchers, w, wentry);
	}
	TAILQ_REMOVE(&w->jobs->waiters, w, entry);
	if (w->timer != NULL)
		event_free(w->timer);
	free(w);
}

void
waiter_cancel(struct waiter *w)
{
	waiter_free(w);
}

json_object *
waiter_view(struct jobs *J, uint64_t num, struct jobs_error *err)
{
	json_object	*o;
	int		 found;

	o = jobview_get(J, num, 1, &found, err);
	if (o == NULL && !found && err->code == JOBS_OK)
		jobs_fail(err, JOBS_ENOJOB, "the job t-%06llu expired while "
		    "it was waited for", (unsigned long long)num);
	return o;
}

/* w's answer: the job's view, from rec when given (its stored record). */
static void
waiter_answer(struct waiter *w, json_object *rec)
{
	struct jobs_error	 err;
	json_object		*o;

	memset(&err, 0, sizeof(err));
	o = rec != NULL ? jobview_make(w->jobs, rec, NULL, 1) :
	    waiter_view(w->jobs, w->num, &err);
	w->done(w->arg, o, o != NULL ? NULL : &err);
	waiter_free(w);
}

static void
on_wait_timeout(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	waiter_answer(arg, NULL);
}

void
waiter_job_done(struct jobs *J, uint64_t num, json_object *rec)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&J->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->num == num)
			waiter_answer(w, rec);
	}
}

void
waiter_job_answer(struct jobs *J, uint64_t num, size_t index,
    json_object *result)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&J->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->num == num && w->answer != NULL)
			w->answer(w->arg, index, result);
	}
}

void
waiter_set_watch(struct waiter *w, waiter_watch_fn watch, void *arg)
{
	if (w->watch == NULL) {
		w->jobs->nwatching++;
		TAILQ_INSERT_TAIL(&w->jobs->watchers, w, wentry);
	}
	w->watch = watch;
	w->watch_arg = arg;
}

void
waiter_job_note(struct jobs *J, uint64_t num, json_object *ev)
{
	struct waiter	*w, *next;

	for (w = TAILQ_FIRST(&J->watchers); w != NULL; w = next) {
		next = TAILQ_NEXT(w, wentry);
		if (w->num == num)
			w->watch(w->watch_arg, ev);
	}
}

void
waiter_worker_note(void *arg, struct worker *w, json_object *ev)
{
	waiter_job_note(arg, w->job->num, ev);
}

void
waiter_job_result(struct jobs *J, uint64_t num, size_t index, int ok)
{
	json_object	*ev;

	if (J->nwatching == 0)
		return;
	ev = json_object_new_object();
	json_object_object_add(ev, "event", json_object_new_string(ok == -1 ?
	    "running" : "result"));
	if (ok != -1) {
		json_object_object_add(ev, "index",
		    json_object_new_int64((int64_t)index));
		json_object_object_add(ev, "ok", json_object_new_boolean(ok));
	}
	waiter_job_note(J, num, ev);
	json_object_put(ev);
}

json_object *
waiter_state(struct jobs *J, uint64_t num)
{
	struct job	*j = job_find(J, num);
	json_object	*ev;
	const char	*bb;

	if (j == NULL || (j->status != JOB_QUEUED &&
	    j->status != JOB_RUNNING))
		return NULL;
	ev = json_object_new_object();
	json_object_object_add(ev, "event", json_object_new_string(
	    j->status == JOB_QUEUED ? "queued" : "running"));
	if (j->status == JOB_RUNNING)
		return ev;
	bb = jobview_blocked_by(J, j);
	json_object_object_add(ev, "position",
	    json_object_new_int64((int64_t)job_position(J, j)));
	json_object_object_add(ev, "blocked_by", bb != NULL ?
	    json_object_new_string(bb) : NULL);
	return ev;
}

void
waiter_queue_pass(struct jobs *J)
{
	struct waiter	*w, *next;
	struct job	*j;
	json_object	*ev;

	/* Only the waiters with a watch: never the whole queue. */
	for (w = TAILQ_FIRST(&J->watchers); w != NULL; w = next) {
		next = TAILQ_NEXT(w, wentry);
		if ((j = job_find(J, w->num)) == NULL ||
		    j->status != JOB_QUEUED)
			continue;
		ev = waiter_state(J, w->num);
		w->watch(w->watch_arg, ev);
		json_object_put(ev);
	}
}

struct waiter *
waiter_watch(struct jobs *J, uint64_t num, waiter_done_fn done,
    waiter_answer_fn answer, void *arg)
{
	struct waiter	*w = xcalloc(1, sizeof(*w));

	w->jobs = J;
	w->num = num;
	w->done = done;
	w->answer = answer;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&J->waiters, w, entry);
	return w;
}

struct waiter *
waiter_add(struct jobs *J, uint64_t num, uint64_t timeout_s,
    waiter_done_fn done, void *arg)
{
	struct waiter	*w = waiter_watch(J, num, done, NULL, arg);
	struct timeval	 tv = { (time_t)timeout_s, 0 };

	if ((w->timer = evtimer_new(J->cfg.base, on_wait_timeout, w)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(w->timer, &tv);
	return w;
}

void
waiter_free_all(struct jobs *J)
{
	struct waiter	*w;

	while ((w = TAILQ_FIRST(&J->waiters)) != NULL)
		waiter_free(w);
}
