/* SPDX-License-Identifier: ISC */
/*
 * The turn's transitions: every start, tool group, result and end of a
 * loop turn stored in one commit at its end (one sync to disk for a job's
 * end and the next one's start), the output held until then.  A commit
 * of instant reads' transitions only is held, not synced (job_commit).
 * If the shared commit fails, each transition is stored alone, so that it
 * fails alone, as the engine did before, the start last (none while an
 * end waits unstored).
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "store.h"
#include "util.h"

#define TURN_LOG_OPS	4	/* transitions named in the debug line */
#define TURN_LATE_MS	10	/* a tool group's record waits at most */
#define TURN_LAST_MS	1000	/* a last result waits for its end */

struct turn {
	struct turn_oplist	 ops;
	struct event		*late;	/* tool groups alone: a bit later */
	int			 active;	/* for turn_end: someone is told */
	int			 held;	/* the output is held for it */
};

static const char *kind_names[] = { "tool started", "result", NULL,
    "result" };

static void	 on_late(evutil_socket_t, short, void *);
static void	 turn_log(struct turn_oplist *, const char *);
static int	 turn_store_once(struct jobs *, void *);

void
turn_init(struct jobs *J)
{
	struct turn	*T = xcalloc(1, sizeof(*T));

	TAILQ_INIT(&T->ops);
	if ((T->late = evtimer_new(J->cfg.base, on_late, J)) == NULL)
		fatalx("event_new");
	J->trans = T;
}

void
turn_free(struct jobs *J)
{
	struct turn_op	*op;

	if (J->trans == NULL)
		return;
	while ((op = TAILQ_FIRST(&J->trans->ops)) != NULL) {
		TAILQ_REMOVE(&J->trans->ops, op, entry);
		free(op);
	}
	event_free(J->trans->late);
	free(J->trans);
	J->trans = NULL;
}

int
turn_pending(const struct jobs *J)
{
	return J->trans != NULL && !TAILQ_EMPTY(&J->trans->ops);
}

int
turn_held(const struct jobs *J)
{
	return J->trans != NULL && J->trans->held;
}

/* Something pending decides what is told: not only tool groups. */
static int
turn_telling(struct turn *T)
{
	struct turn_op	*op;

	TAILQ_FOREACH(op, &T->ops, entry)
		if (op->kind != TURN_STARTED && op->kind != TURN_LAST)
			return 1;
	return 0;
}

void
turn_add(struct jobs *J, enum turn_kind kind, struct job *j, pid_t del,
    size_t index, int ok)
{
	struct turn	*T = J->trans;
	struct turn_op	*op = xcalloc(1, sizeof(*op));
	struct timeval	 late = { 0, TURN_LATE_MS * 1000 };
	struct timeval	 last = { TURN_LAST_MS / 1000,
			    (TURN_LAST_MS % 1000) * 1000 };

	op->kind = kind;
	op->j = j;
	op->del = del;
	op->index = index;
	op->ok = ok;
	TAILQ_INSERT_TAIL(&T->ops, op, entry);
	if (kind == TURN_STARTED || kind == TURN_LAST) {
		/*
		 * Nobody is told of a tool group: its record goes with the
		 * next commit (its result's, often), TURN_LATE_MS at most.
		 * Nor of a last result before the job's end, which comes
		 * with its worker's exit: one commit for both (and for the
		 * next job's start), TURN_LAST_MS at most (an exit can be
		 * slow under sanitizers).  Polls show stored results only.
		 */
		if (!evtimer_pending(T->late, NULL))
			evtimer_add(T->late, kind == TURN_LAST ? &last :
			    &late);
		return;
	}
	if (!T->active) {
		T->active = 1;
		jobs_turn_wake(J);
	}
	/* Nothing anyone hears of may leave before the commit. */
	if (!T->held) {
		T->held = 1;
		if (!J->sync_held)
			J->hooks.job_synced(J->hooks.arg, 1);
	}
}

/* Write op in the open transaction. */
static int
turn_put(struct jobs *J, struct turn_op *op)
{
	struct job	*j = op->j;
	int		 rc = 0;

	if (op->stored)
		return 0;
	if (op->kind != TURN_STARTED && (rc = job_put(J, j)) != 0)
		return rc;
	if (op->kind == TURN_STARTED && j->worker != NULL &&
	    (rc = job_put_worker(J, j->worker)) != 0)
		return rc;
	if (op->kind == TURN_FINISH && op->del > 0)
		rc = store_worker_del(J->st, op->del);
	return rc;
}

struct turn_write {
	struct turn_oplist	*ops;
	int			(*put)(struct jobs *, void *);
	void			*arg;
	int			 reads;	/* put stores instant reads only */
};

/*
 * Store ops and put(arg) in one transaction: 0, or the error with nothing
 * applied.  A full map is grown, when it may be, and the same tried again.
 */
static int
turn_store(struct jobs *J, struct turn_oplist *ops,
    int (*put)(struct jobs *, void *), void *arg, int reads)
{
	struct turn_write	w = { ops, put, arg, reads };

	return job_store_growing(J, "the turn's commit", turn_store_once, &w);
}

/* Whether what ops has unstored is instant reads' only: held. */
static int
turn_reads(struct turn_oplist *ops)
{
	struct turn_op	*op;

	if (ops != NULL)
		TAILQ_FOREACH(op, ops, entry)
			if (!op->stored && !job_instant_read(op->j))
				return 0;
	return 1;
}

static int
turn_store_once(struct jobs *J, void *arg)
{
	struct turn_write	*w = arg;
	struct turn_oplist	*ops = w->ops;
	int			(*put)(struct jobs *, void *) = w->put;
	struct turn_op		*op;
	int			 rc;

	if (put == NULL) {
		TAILQ_FOREACH(op, ops, entry)
			if (!op->stored)
				break;
		if (op == NULL)
			return 0;	/* all went with a start */
	}
	if ((rc = store_begin(J->st)) != 0)
		return rc;
	if (ops != NULL)
		TAILQ_FOREACH(op, ops, entry)
			if ((rc = turn_put(J, op)) != 0) {
				store_abort(J->st);
				return rc;
			}
	if ((put != NULL && (rc = put(J, w->arg)) != 0) ||
	    (rc = job_commit(J, w->reads && turn_reads(ops))) != 0)
		store_abort(J->st);
	return rc;
}

int
turn_commit_with(struct jobs *J, const char *what,
    int (*put)(struct jobs *, void *), void *arg, int reads)
{
	struct turn_op	*op;
	int		 rc;

	if ((rc = turn_store(J, &J->trans->ops, put, arg, reads)) == 0) {
		turn_log(&J->trans->ops, what);
		TAILQ_FOREACH(op, &J->trans->ops, entry)
			op->stored = 1;
		return 0;
	}
	if (!turn_pending(J))
		return rc;
	/*
	 * One of the pending failed it: each of them alone first, then the
	 * start alone, unless an end was refused (the store would have the
	 * start beside a job that ended here, both running).
	 */
	turn_flush(J);
	if (J->store_blocked)
		return rc;
	return turn_store(J, NULL, put, arg, reads);
}

/* Debug: which transitions shared the commit (tests count them). */
static void
turn_log(struct turn_oplist *ops, const char *with)
{
	struct turn_op	*op;
	char		 buf[256];
	size_t		 n = 0, len = 0;

	buf[0] = '\0';
	TAILQ_FOREACH(op, ops, entry) {
		if (op->stored)
			continue;
		if (n++ < TURN_LOG_OPS && len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s %s",
			    n > 1 ? ", " : "", op->j->ticket,
			    kind_names[op->kind] != NULL ?
			    kind_names[op->kind] :
			    job_status_name(op->j->status));
	}
	if (n > 0 || with != NULL)
		log_debug("store: one commit for %s%s%zu transitions%s%s%s",
		    with != NULL ? with : "", with != NULL ? " and " : "", n,
		    n > 0 ? ": " : "", buf, n > TURN_LOG_OPS ? ", ..." : "");
}

void
turn_flush(struct jobs *J)
{
	struct turn		*T = J->trans;
	struct turn_oplist	 ops;
	struct turn_op		*op;
	int			 rc, one;

	TAILQ_INIT(&ops);
	TAILQ_CONCAT(&ops, &T->ops, entry);
	if ((rc = turn_store(J, &ops, NULL, NULL, 1)) == 0)
		turn_log(&ops, NULL);
	while ((op = TAILQ_FIRST(&ops)) != NULL) {
		TAILQ_REMOVE(&ops, op, entry);
		one = 0;
		if (rc != 0 && !op->stored &&
		    (one = store_begin(J->st)) == 0 &&
		    ((one = turn_put(J, op)) != 0 ||
		    (one = job_commit(J, job_instant_read(op->j))) != 0))
			store_abort(J->st);
		jobs_turn_done(J, op, one);
		free(op);
	}
	/* What the effects added is a turn of its own, pending. */
	if (TAILQ_EMPTY(&T->ops))
		evtimer_del(T->late);
	if (T->held && !turn_telling(T)) {
		T->held = 0;
		if (!J->sync_held)
			J->hooks.job_synced(J->hooks.arg, 0);
	}
}

void
turn_tell_stored(struct jobs *J)
{
	struct turn_op	*op;

	if (!turn_pending(J))
		return;
	TAILQ_FOREACH(op, &J->trans->ops, entry)
		if (!op->stored)
			return;
	turn_flush(J);
}

void
turn_end(struct jobs *J)
{
	struct turn	*T = J->trans;

	if (!T->active)
		return;
	T->active = 0;
	if (turn_pending(J))
		turn_flush(J);
}

/* What nobody is told of waited its time: the turn's end stores it. */
static void
on_late(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;

	(void)fd;
	(void)ev;
	if (turn_pending(J) && !J->trans->active) {
		J->trans->active = 1;
		jobs_turn_wake(J);
	}
}
