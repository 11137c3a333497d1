/* SPDX-License-Identifier: ISC */
/*
 * The scheduler's pass: the queued jobs that start now, in ticket order
 * as scheduler.c decides, and then the news of those that stay queued.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "job.h"
#include "jobsched.h"
#include "jobview.h"
#include "options.h"
#include "scheduler.h"
#include "submit.h"
#include "util.h"

/* One pass of sched_decide() over the queue: the jobs it starts. */
static void
jobsched_start(struct jobs *J, const struct sched_state *s, jobsched_fn start)
{
	struct sched_job	*sj;
	struct job		*j, **qj;
	size_t			 i, n, *first;

	sj = xcalloc(J->nqueued, sizeof(*sj));
	qj = xcalloc(J->nqueued, sizeof(*qj));
	first = xcalloc(J->nqueued, sizeof(*first));
	n = 0;
	TAILQ_FOREACH(j, &J->queued, entry) {
		sj[n].tier = j->tier;
		sj[n].reload = j->reload;
		sj[n].busy = j->busy;
		qj[n++] = j;
	}
	n = sched_decide(sj, n, s, first);
	for (i = 0; i < n; i++)
		start(J, qj[first[i]]);
	free(sj);
	free(qj);
	free(first);
}

void
jobsched_pass(struct jobs *J, jobsched_fn start, jobsched_fn notify)
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
		    J->store_blocked)
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
		jobsched_start(J, &s, start);
	} while (J->reschedule);
	J->scheduling = 0;
	waiter_queue_pass(J);
	/* Submitters asked to hear when a held reload's holder changes. */
	if (J->nqueued_watched == 0)
		return;
	TAILQ_FOREACH(j, &J->queued, entry)
		if (job_watched(j) &&
		    jobview_blocked_by(J, j) != j->last_blocked)
			notify(J, j);
}
