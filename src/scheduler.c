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

size_t
sched_decide(const struct sched_job *jobs, size_t n,
    const struct sched_state *s, size_t *start)
{
	size_t	i, nstart = 0, workers = s->workers;
	size_t	smooth = s->smooth_running;
	int	heavy = s->heavy_running;
	int	heavy_waiting = 0;	/* an eligible heavy job is ahead */

	for (i = 0; i < n && workers < s->max_workers; i++) {
		const struct sched_job *j = &jobs[i];

		if (j->tier == TIER_INSTANT && !j->reload) {
			start[nstart++] = i;
			workers++;
			continue;
		}
		if (j->reload && s->guard != NULL)
			continue;	/* keeps its place, holds nobody back */
		if (j->reload || j->tier == TIER_HEAVY) {
			if (!heavy && smooth == 0 && !heavy_waiting) {
				start[nstart++] = i;
				workers++;
				heavy = 1;
			}
			heavy_waiting = 1;
			continue;
		}
		if (!heavy && !heavy_waiting) {
			start[nstart++] = i;
			workers++;
			smooth++;
		}
	}
	return nstart;
}
