/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SCHEDULER_H
#define CMDGATE_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "tools.h"

/*
 * The scheduling rules of cmdgate-protocol(7), Scheduling, and of
 * cmdgated(8), Scheduling, as one pure function: the queued jobs in ticket
 * order, what runs and what holds reloads in; the jobs to start now out.
 * It keeps no state and does no I/O, so every case is a table in
 * tests/check_sched.c.
 */

/* Bit of a busy label (enum busy) in sched_job.busy. */
#define SCHED_BUSY_BIT(b)	(1u << (b))

struct sched_job {
	enum tier	tier;		/* a reload job is always TIER_HEAVY */
	int		reload;
	unsigned	busy;		/* SCHED_BUSY_BIT()s of its tools */
};

/* Holders that stop a reload job from starting, by what is busy. */
struct sched_busy {
	int	tests_running;
	int	compiling;
	int	editor_busy;
};

struct sched_state {
	int			heavy_running;	/* a heavy (or reload) job runs */
	size_t			smooth_running;
	size_t			workers;	/* live workers, exiting ones too */
	size_t			max_workers;
	struct sched_busy	busy;		/* what holds reloads now */
};

/*
 * Indexes into jobs[] (the queued jobs, in ticket order) of the jobs to
 * start, in the order to start them; returns how many (at most n).  A job
 * started in the pass holds its busy labels against the reloads after it
 * in the same pass, and a reload held by the guard holds back the jobs
 * with busy labels queued behind it, so that it runs at the first gap.
 */
size_t		 sched_decide(const struct sched_job *jobs, size_t n,
		    const struct sched_state *, size_t *start);
/*
 * The same decisions without walking the queue.  Each queued job is of
 * one class (sched_class()); q->next gives the first queued job, in ticket
 * order, at or after key from whose class is in mask (bits 1 << class),
 * and sched_pick asks only for the classes that could still start or
 * change the pass, so that a pass costs O(jobs started + 2) lookups.
 * The keys of the jobs to start, in the order to start them, go to
 * start[] (room for s->max_workers - s->workers); returns how many.
 * tests/check_schedq.c holds it to sched_decide() on random queues.
 */
enum sched_class {
	SCHED_INSTANT,
	SCHED_INSTANT_BUSY,
	SCHED_SMOOTH,
	SCHED_SMOOTH_BUSY,
	SCHED_HEAVY,
	SCHED_HEAVY_BUSY,
	SCHED_RELOAD,
	SCHED_RELOAD_BUSY,
};
#define SCHED_NCLASS	8

struct sched_queue {
	/* 0 with *key and *job set, or -1 when there is none. */
	int	(*next)(void *arg, uint64_t from, unsigned mask,
		    uint64_t *key, struct sched_job *job);
	void	*arg;
};

enum sched_class sched_class(const struct sched_job *);
size_t		 sched_pick(const struct sched_queue *q,
		    const struct sched_state *, uint64_t *start);
/* blocked_by of a queued reload job: the first holder, or NULL. */
const char	*sched_guard(const struct sched_busy *);
/* Add the busy labels of bits (SCHED_BUSY_BIT()s) to b. */
void		 sched_hold(struct sched_busy *b, unsigned bits);

#endif
