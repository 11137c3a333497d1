/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stddef.h>

#include "policy.h"

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

enum sched_class
sched_class(const struct sched_job *j)
{
	enum sched_class	c;

	if (j->reload)
		c = SCHED_RELOAD;
	else if (j->tier == TIER_INSTANT)
		c = SCHED_INSTANT;
	else if (j->tier == TIER_HEAVY)
		c = SCHED_HEAVY;
	else
		c = SCHED_SMOOTH;
	return j->busy != 0 ? c + 1 : c;
}

/* sched_decide()'s state along its pass. */
struct sched_pass {
	struct sched_busy	busy;
	size_t			workers, smooth;
	int			heavy, heavy_waiting, reload_held;
};

#define CLS(c)	(1u << (c))

/*
 * The classes whose next job would start or change the pass; the others
 * sched_decide() would pass over without a change.  After a held reload
 * the jobs with busy labels wait; once a heavy job runs or waits, only
 * instant jobs may start, and a reload matters only to be held (when
 * something holds the guard) so that the busy ones behind it wait.
 */
static unsigned
pick_mask(const struct sched_pass *p)
{
	int		blocked = p->heavy || p->heavy_waiting;
	unsigned	m = CLS(SCHED_INSTANT);

	if (!p->reload_held)
		m |= CLS(SCHED_INSTANT_BUSY);
	if (!blocked)
		m |= CLS(SCHED_SMOOTH) | CLS(SCHED_HEAVY);
	if (!blocked && !p->reload_held)
		m |= CLS(SCHED_SMOOTH_BUSY) | CLS(SCHED_HEAVY_BUSY);
	if (!p->reload_held && (!blocked || sched_guard(&p->busy) != NULL))
		m |= CLS(SCHED_RELOAD) | CLS(SCHED_RELOAD_BUSY);
	return m;
}

/* sched_decide()'s rules for j, one of pick_mask()'s: 1 when it starts. */
static int
pick_one(struct sched_pass *p, const struct sched_job *j)
{
	int	go = 0;

	if (j->busy != 0 && p->reload_held)
		return 0;
	if (j->tier == TIER_INSTANT && !j->reload)
		go = 1;
	else if (j->reload && sched_guard(&p->busy) != NULL) {
		p->reload_held = 1;
		return 0;
	} else if (j->reload || j->tier == TIER_HEAVY) {
		go = !p->heavy && p->smooth == 0 && !p->heavy_waiting;
		p->heavy |= go;
		p->heavy_waiting = 1;
	} else if (!p->heavy && !p->heavy_waiting) {
		go = 1;
		p->smooth++;
	}
	if (go) {
		p->workers++;
		sched_hold(&p->busy, j->busy);
	}
	return go;
}

size_t
sched_pick(const struct sched_queue *q, const struct sched_state *s,
    uint64_t *start)
{
	struct sched_pass	p;
	struct sched_job	j;
	uint64_t		from = 0, key;
	size_t			n = 0;

	p.busy = s->busy;
	p.workers = s->workers;
	p.smooth = s->smooth_running;
	p.heavy = s->heavy_running;
	p.heavy_waiting = p.reload_held = 0;
	while (p.workers < s->max_workers &&
	    q->next(q->arg, from, pick_mask(&p), &key, &j) == 0) {
		from = key + 1;
		if (pick_one(&p, &j))
			start[n++] = key;
	}
	return n;
}
