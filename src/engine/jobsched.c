/* SPDX-License-Identifier: ISC */
/*
 * The scheduler's pass: the queued jobs that start now, in ticket order
 * as scheduler.c decides, and then the news of those that stay queued.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "store.h"
#include "util.h"

/* sched_pick()'s view of the queue: J->qroot by class. */
static int
queue_next(void *arg, uint64_t from, unsigned mask, uint64_t *key,
    struct sched_job *sj)
{
	struct jobs	*J = arg;
	struct qnode	*n = qtree_next(J->qroot, from, mask);
	struct job	*j;

	if (n == NULL)
		return -1;
	j = job_of_node(n);
	*key = j->num;
	sj->tier = j->tier;
	sj->reload = j->reload;
	sj->busy = j->busy;
	return 0;
}

/* Start the queued jobs sched_pick() picks, in its order. */
static void
jobsched_start(struct jobs *J, const struct sched_state *s)
{
	struct sched_queue	 q = { queue_next, J };
	uint64_t		*first;
	struct qnode		*qn;
	size_t			 i, n;
	int			 rc;

	first = xcalloc(s->max_workers - s->workers, sizeof(*first));
	n = sched_pick(&q, s, first);
	/*
	 * A start the store refused, or a worker that could not be started,
	 * ends the pass: they are tried again later, all of them.
	 */
	for (i = 0; i < n && !J->store_blocked && !J->spawn_blocked; i++) {
		if ((qn = qtree_find(J->qroot, first[i])) == NULL)
			continue;
		/*
		 * A queued job's record is the store's (job_rec_drop()); one
		 * damaged, or lost with the held (job_commit), fails below.
		 */
		if ((rc = job_rec_load(J, job_of_node(qn))) != 0 &&
		    rc != STORE_EBADRECORD && rc != STORE_ENOTFOUND) {
			log_warnx("t-%06llu: not started: its record could "
			    "not be read: %s", (unsigned long long)first[i],
			    store_strerror(rc));
			continue;
		}
		/* One a restart queued from its status byte is checked now. */
		if (recover_check_start(J, job_of_node(qn)) != 0)
			continue;
		/* One a SIGHUP made a reload waits for the guard: the pass
		 * is decided again with its new class. */
		if (jobrun_reload_now(J, job_of_node(qn))) {
			J->reschedule = 1;
			break;
		}
		jobs_start(J, job_of_node(qn));
	}
	free(first);
}

/*
 * Tell the submitters of held reloads (notify: true) when what holds them
 * changed.  Every queued reload has the same blocked_by, so only the jobs
 * queued since the last pass are looked at, unless it changed.
 */
static void
jobsched_watched(struct jobs *J)
{
	struct job	*j;
	const char	*bb;

	if (J->nqueued_watched == 0)
		return;
	bb = jobview_blocked_by_queued(J);
	if (bb != J->watched_bb)
		TAILQ_FOREACH(j, &J->watched, wentry)
			if (j->last_blocked != bb)
				jobend_notify(J, j);
	J->watched_bb = bb;
	TAILQ_FOREACH(j, &J->watched_new, wentry) {
		if (j->last_blocked != bb)
			jobend_notify(J, j);
		j->wsynced = 1;
	}
	TAILQ_CONCAT(&J->watched, &J->watched_new, wentry);
}

void
jobsched_pass(struct jobs *J)
{
	struct sched_state	 s;
	struct job		*j;

	if (J->scheduling) {
		J->reschedule = 1;
		return;
	}
	J->scheduling = 1;
	do {
		J->reschedule = 0;
		/* Nothing new while a past run's worker is being stopped. */
		if (J->stopping || J->W.norphans > 0 || J->nqueued == 0 ||
		    J->store_blocked || J->spawn_blocked)
			break;
		memset(&s, 0, sizeof(s));
		TAILQ_FOREACH(j, &J->running, entry) {
			if (j->tier == TIER_HEAVY)
				s.heavy_running = 1;
			else if (j->tier == TIER_SMOOTH)
				s.smooth_running++;
		}
		s.workers = J->W.nworkers;
		s.max_workers = J->cfg.opt->max_workers;
		/* The common wait: a heavy job runs and only heavier wait. */
		if (s.workers >= s.max_workers ||
		    (s.heavy_running && J->nqueued_beside_heavy == 0))
			break;
		job_busy(J, &s.busy);
		jobsched_start(J, &s);
	} while (J->reschedule);
	J->scheduling = 0;
	waiter_queue_pass(J);
	jobsched_watched(J);
}
