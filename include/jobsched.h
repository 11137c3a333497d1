/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBSCHED_H
#define CMDGATE_JOBSCHED_H

/*
 * The scheduler's pass over the engine (cmdgate-protocol(7), Scheduling):
 * which queued jobs start now (scheduler.c decides), then what the
 * watchers of queued jobs hear.  jobs.c owns starting a job and telling
 * its submitter; it hands both in.
 */

struct job;
struct jobs;

/* Start j (jobs.c jobs_start); tell j's submitter it changed. */
typedef void	(*jobsched_fn)(struct jobs *, struct job *);

/* Start what may start now, then tell the watchers of queued jobs. */
void	 jobsched_pass(struct jobs *, jobsched_fn start, jobsched_fn notify);

#endif
