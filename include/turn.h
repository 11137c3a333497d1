/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TURN_H
#define CMDGATE_TURN_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>

#include <json-c/json.h>

/*
 * The transitions of running jobs in one loop turn (a tool's group, a
 * result, an end), stored in one commit with the next start, or at the
 * end of the turn, as submits are (cmdgated(8), The store); a tool's
 * group alone, which nobody is told of, waits for the next commit
 * (TURN_LATE_MS at most), and a job's last result for its end, which
 * its worker's exit brings (TURN_LAST_MS at most).  Until the commit of a change that is told,
 * nothing leaves: every connection's output is held (the hook
 * job_synced), and what it tells (notifications, waiters) is done by the
 * engine's turn_done_fn once the commit is in.  A worker's spec goes
 * only after its job's start is committed (turn_commit_with).
 */

struct jobs;
struct job;

enum turn_kind {
	TURN_STARTED,	/* j's tool started: its worker's record */
	TURN_RESULT,	/* j finished command index */
	TURN_FINISH,	/* j ended: its record, del's record deleted */
	TURN_LAST,	/* j finished its last command: told with its end */
};

struct turn_op {
	TAILQ_ENTRY(turn_op)	 entry;
	enum turn_kind		 kind;
	struct job		*j;
	pid_t			 del;	/* FINISH: the worker's pid, or 0 */
	size_t			 index;	/* RESULT, LAST */
	int			 ok;	/* RESULT, LAST */
	int			 stored;	/* committed with a start */
};
TAILQ_HEAD(turn_oplist, turn_op);

/* At the end of the turn, once op is committed (rc 0), or after op alone
 * could not be stored (rc); op is freed next. */
typedef void	(*turn_done_fn)(struct jobs *, struct turn_op *op, int rc);

void	 turn_init(struct jobs *, turn_done_fn);
void	 turn_free(struct jobs *);
/* Add a transition of this turn. */
void	 turn_add(struct jobs *, enum turn_kind, struct job *, pid_t del,
	    size_t index, int ok);
/*
 * A job starts: commit put(arg) (its running record and its worker's)
 * now, with the transitions pending, in one transaction (a job's end and
 * the next one's start): 0, the pending then told by turn_tell_stored().
 * If that fails, the pending are stored one by one and told here (their
 * turn_done_fn runs inside this call), then put alone, unless an end was
 * refused (J->store_blocked): the error, put's changes not applied.
 * what names the start in the debug log.
 */
int	 turn_commit_with(struct jobs *, const char *what,
	    int (*put)(struct jobs *, void *), void *arg);
/* Commit what is pending now (shutdown). */
void	 turn_flush(struct jobs *);
/*
 * When all that is pending was stored with a start (turn_commit_with),
 * tell it now, in its order, so that the start, told next, comes after
 * it: a job's end before the next job's start.
 */
void	 turn_tell_stored(struct jobs *);
/* Transitions are pending; the output is held for some. */
int	 turn_pending(const struct jobs *);
int	 turn_held(const struct jobs *);

#endif
