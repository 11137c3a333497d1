/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stddef.h>

#include "scheduler.h"

const char *
sched_guard(const struct sched_busy *b)
{
	if (b->tests_running)
		return "tests_running";
	if (b->compiling)
		return "compiling";
	if (b->editor_busy)
		return "editor_busy";
	return NULL;
}

void
sched_hold(struct sched_busy *b, unsigned bits)
{
	if (bits & SCHED_BUSY_BIT(BUSY_TESTS_RUNNING))
		b->tests_running = 1;
	if (bits & SCHED_BUSY_BIT(BUSY_COMPILING))
		b->compiling = 1;
}

size_t
sched_decide(const struct sched_job *jobs, size_t n,
    const struct sched_state *s, size_t *start)
{
	struct sched_busy	busy = s->busy;
	size_t			i, nstart = 0, workers = s->workers;
	size_t			smooth = s->smooth_running;
	int			heavy = s->heavy_running;
	int			heavy_waiting = 0;	/* eligible heavy ahead */
	int			reload_held = 0;	/* a held reload ahead */

	for (i = 0; i < n && workers < s->max_workers; i++) {
		const struct sched_job *j = &jobs[i];
		int go = 0;

		if (j->busy != 0 && reload_held)
			continue;	/* the reload ahead goes first */
		if (j->tier == TIER_INSTANT && !j->reload)
			go = 1;
		else if (j->reload && sched_guard(&busy) != NULL) {
			reload_held = 1;	/* keeps its place */
			continue;
		} else if (j->reload || j->tier == TIER_HEAVY) {
			go = !heavy && smooth == 0 && !heavy_waiting;
			heavy |= go;
			heavy_waiting = 1;
		} else if (!heavy && !heavy_waiting) {
			go = 1;
			smooth++;
		}
		if (!go)
			continue;
		start[nstart++] = i;
		workers++;
		/* It holds the guard from now on, in this pass too. */
		sched_hold(&busy, j->busy);
	}
	return nstart;
}
