/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_POLICY_H
#define CMDGATE_POLICY_H

/*
 * Pure policy (src/policy/): the tiers, the reload guard, the queue
 * index, the editor flags counted over connections.
 */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "tools.h"

/* scheduler.c */

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

/* edflags.c */

/*
 * Who holds reloads back (cmdgate-protocol(7), Scheduling): how many
 * connections hold each editor flag, so that the broker-wide state is a
 * look-up, not a walk over every connection; and the editor probe's
 * flags (edprobe.c), a holder of its own.
 */

#define BUSY_BIT(b)	SCHED_BUSY_BIT(b)

/* What one connection reported (report_editor_state). */
struct editor_flags {
	int	tests_running;
	int	compiling;
	int	busy;
};

/* Connections holding each flag, and the editor probe's flags. */
struct edflags {
	unsigned		tests_running;
	unsigned		compiling;
	unsigned		busy;
	struct editor_flags	probe;
};

/* A connection's flags go from from to to: 1 when they differ, else 0. */
int		 edflags_change(struct edflags *, const struct editor_flags *from,
		    const struct editor_flags *to);
/* The editor probe's flags are f now: 1 when they changed, else 0. */
int		 edflags_set_probe(struct edflags *, const struct editor_flags *f);
/* The flags held by any connection or the probe. */
void		 edflags_get(const struct edflags *, struct editor_flags *);
/* What holds reloads: the connections' and the probe's flags, tool_bits (BUSY_BIT()s
 * of the running tools). */
void		 edflags_busy(const struct edflags *, unsigned tool_bits,
		    struct sched_busy *);
/* The "busy" object of cmdgate-protocol(7).  Caller puts. */
json_object	*edflags_json(const struct sched_busy *);

/* qtree.c */

/*
 * An ordered index of the queue: a treap keyed by ticket number whose
 * nodes live inside the jobs (struct job's qn), each subtree knowing its
 * size and the classes (enum sched_class) it holds.  Insert, remove,
 * find, rank and "the first job at or after a key whose class is in a
 * set" each take O(log n) expected, so that neither the scheduler's pass
 * nor a position walks the queue.  Pure: no allocation, no I/O.
 */

struct qnode {
	struct qnode	*l, *r;
	uint64_t	 key;
	uint32_t	 prio;		/* a hash of key: heap-ordered */
	uint32_t	 size;		/* nodes in this subtree */
	uint8_t		 cls;		/* the node's class, < 8 */
	uint8_t		 mask;		/* 1 << cls of each node below */
};

/* Add n (n->key, not in the tree yet, and n->cls set by the caller). */
void		 qtree_insert(struct qnode **root, struct qnode *n);
/* Take n out of the tree. */
void		 qtree_remove(struct qnode **root, struct qnode *n);
/* The node of key, or NULL. */
struct qnode	*qtree_find(struct qnode *root, uint64_t key);
/* How many nodes have a smaller key. */
size_t		 qtree_rank(const struct qnode *root, uint64_t key);
/* The node of least key >= from whose class is in mask (bits 1 << cls),
 * or NULL. */
struct qnode	*qtree_next(struct qnode *root, uint64_t from, unsigned mask);

#endif
