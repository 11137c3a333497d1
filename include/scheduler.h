/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SCHEDULER_H
#define CMDGATE_SCHEDULER_H

#include <stddef.h>

#include "tools.h"

/*
 * The scheduling rules of cmdgate-protocol(7), Scheduling, as one pure
 * function:
 * the queued jobs in ticket order, what runs and what holds reloads in;
 * the jobs to start now out.  It keeps no state and does no I/O, so every
 * case is a table in tests/check_sched.c.
 */

struct sched_job {
	enum tier	tier;		/* a reload job is always TIER_HEAVY */
	int		reload;
};

struct sched_state {
	int		 heavy_running;	/* a heavy (or reload) job runs */
	size_t		 smooth_running;
	size_t		 workers;	/* live workers, exiting ones too */
	size_t		 max_workers;
	const char	*guard;		/* what holds reloads, or NULL */
};

/* Holders that stop a reload job from starting, by what is busy. */
struct sched_busy {
	int	tests_running;
	int	compiling;
	int	editor_busy;
};

/*
 * Indexes into jobs[] (the queued jobs, in ticket order) of the jobs to
 * start, in the order to start them; returns how many (at most n).
 */
size_t		 sched_decide(const struct sched_job *jobs, size_t n,
		    const struct sched_state *, size_t *start);
/* blocked_by of a queued reload job: the first holder, or NULL. */
const char	*sched_guard(const struct sched_busy *);

#endif
