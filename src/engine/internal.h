/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_ENGINE_INTERNAL_H
#define CMDGATE_ENGINE_INTERNAL_H

/*
 * What is private to src/engine/: a job and the jobs (struct job, struct
 * jobs), which other folders hold as pointers and ask through
 * include/engine.h (jobs_store, jobs_count, job_owner_conn, ...); and the
 * files that only the engine's own call, a section each: the editor flags
 * across a restart, expiry, a job's end, its run, the scheduler's pass,
 * recovery, the spare worker, the turn's commit.
 */

#include <sys/queue.h>

#include "engine.h"

struct job {
	TAILQ_ENTRY(job)	 entry;		/* queued or running list */
	struct qnode		 qn;		/* queued: J->qroot's node */
	TAILQ_ENTRY(job)	 wentry;	/* queued and watched */
	int			 wsynced;	/* on J->watched, not _new */
	uint64_t		 num;
	char			 ticket[TICKET_LEN];
	enum job_status		 status;
	enum tier		 tier;
	int			 reload;
	unsigned		 busy;		/* BUSY_BIT()s of its tools */
	json_object		*rec;		/* the stored record; NULL while
						   queued: job_rec_ref() */
	size_t			 ncmds;
	size_t			 completed;
	size_t			 nstored;	/* results the store has */
	uint64_t		 notify_conn;	/* 0: no notifications */
	uint64_t		 owner_conn;	/* its submitter, 0: none known */
	const char		*last_blocked;
	struct worker		*worker;	/* NULL: none (linkjob.c) */
	struct linkjob		*linked;	/* its read over an editor link,
						   not answered yet */
	int			 cancelling;
	unsigned char		 damaged;	/* its record could not be read */
	unsigned char		 shrunk;	/* failed, results dropped (job_shrink) */
	unsigned char		 whole_tries;	/* its end refused by a full disk */
	unsigned char		 forwards;	/* every command a forward */
	unsigned char		 uncounted;	/* its end is not stored yet: */
	enum job_status		 counted;	/* J->count has it so */
	pid_t			 del_worker;	/* its reaped worker's record,
						   deleted with its end */
};
TAILQ_HEAD(joblist, job);


struct waiter;
TAILQ_HEAD(waiterlist, waiter);
struct submission;
TAILQ_HEAD(submissionlist, submission);

struct jobs {
	struct jobs_config	 cfg;
	struct jobs_hooks	 hooks;
	int			 sync_held;	/* --sync group: answers held */
	int			 stopping;	/* jobs_shutdown() ran */
	struct store		*st;
	struct joblist		 queued;
	struct qnode		*qroot;		/* the queued, by ticket */
	struct joblist		 watched;	/* queued job_watched()... */
	struct joblist		 watched_new;	/* ...those since the pass */
	const char		*watched_bb;	/* blocked_by at the pass */
	struct joblist		 running;
	struct joblist		 unstored;	/* ended, end not yet stored */
	struct joblist		 ending;	/* ended, in the turn's commit */
	struct waiterlist	 waiters;
	struct waiterlist	 watchers;	/* the waiters with a watch */
	size_t			 nwatching;	/* waiters with a watch */
	struct submissionlist	 submits;	/* for this turn's commit */
	struct submissionlist	 turn;		/* being stored, answered */
	size_t			 nqueued, nrunning;
	size_t			 nqueued_beside_heavy;	/* instant, no reload */
	size_t			 nqueued_watched;	/* notify and reload */
	uint64_t		 count[JOB_NSTATUS];	/* in the store */
	struct workers		 W;
	struct spare		*spare;		/* spare.c */
	struct turn		*trans;		/* turn.c: this turn's commit */
	struct event		*expire_ev;
	struct event		*turn_ev;	/* jobs_turn_end: the turn's end */
	struct event		*retry_ev;	/* the store refused a change */
	struct event		*spawn_ev;	/* a worker could not be started */
	struct event		*held_ev;	/* the store's held commits go to
						   the disk (job_flush) */
	int			 held_ms;	/* ...this long after the first
						   (JOB_HELD_MS; tests set it) */
	int			 store_blocked;	/* start nothing until it takes */
	int			 spawn_blocked;	/* nor until spawn_ev, after a
						   worker could not start */
	int			 retry_s;	/* backoff of retry_ev, 0: none */
	int			 retry_logged;	/* said once until it takes */
	int			 expire_retry_s;	/* backoff of expire_ev;
							   -1: the store failed */
	int			 store_full;	/* new jobs refused (store_room) */
	struct sched_busy	 editor_saved;	/* as in STATE_DIR/editor-flags */
	struct sched_busy	 editor_restored; /* held before a restart */
	struct event		*grace_ev;	/* ends editor_restored */
	int			 scheduling, reschedule;
	/* The face jobs' repeat table (facejob.c), freed first by jobs_free:
	 * it holds waiters and submits of this engine. */
	struct facejobs		*facejobs;
	void			(*facejobs_free)(struct facejobs *);
	/* The editor state's subscriptions (edstate.c), told when a reload
	 * job starts or stops running (job_set_status). */
	struct edsubs		*edsubs;
	void			(*reloads_changed)(struct edsubs *);
};

/*
 * What the engine's files call of each other's, beside include/engine.h:
 * jobsched.c starts the jobs its pass picks (jobs.c jobs_start: stored as
 * running with the turn's transitions, then its worker's spec), and turn.c
 * has each transition's effect done once it is stored (rc 0), or after it
 * could not be stored alone (rc), before freeing it (jobs.c
 * jobs_turn_done).
 */
struct linkjob;
struct turn_op;
void	jobs_start(struct jobs *, struct job *);
void	jobs_turn_done(struct jobs *, struct turn_op *op, int rc);
/* j's command ended with res (borrowed): added with the turn. */
void	jobs_result(struct jobs *, struct job *j, json_object *res);
/* j, running with no worker (linkjob.c), has its results: it ends. */
void	jobs_linked_end(struct jobs *, struct job *j);
/* j, running with no worker, goes on in one started now (its spec from
 * its first command not yet done); failed when none can be. */
void	jobs_handover(struct jobs *, struct job *j);

/* edpoll.c */

/* The editor probe's polls over the editor link L (edpoll.c). */

struct edpoll;
struct link;
/* Told the event (wire.h, WIRE_EV_EDITOR; borrowed) when it changed. */
typedef void	(*edpoll_fn)(void *arg, json_object *ev);

/* Poll the editor probe (the table's editor object, borrowed) names
 * over L now and every every_ms after each answer. */
struct edpoll	*edpoll_new(struct event_base *, struct link *L,
		    json_object *probe, edpoll_fn, void *arg);
/* Stop polling; a call in flight is answered to nobody. */
void		 edpoll_free(struct edpoll *);

/* edsaved.c */

/* Editor flags across a restart (edsaved.c). */

/* At start: the flags held when the last run ended hold reloads for
 * --editor-grace seconds (J->grace_ev), or until clients hold them again. */
void	edsaved_restore(struct jobs *);
/* The connections' flags changed: record them for a restart. */
void	edsaved_update(struct jobs *);
/* --editor-grace passed: the flags of the last run hold nothing now. */
void	edsaved_grace_over(struct jobs *);

/* expiry.c */

/* Finished jobs expire from the store (expiry.c). */

/* Make J->expire_ev; jobs_free() frees it. */
void	expiry_init(struct jobs *);
/* Wake at the next expiry the store holds, if any. */
void	expiry_arm(struct jobs *);

/* jobend.c */

#define JOBEND_WHOLE_TRIES	6	/* an end a full disk refused waits whole */

/*
 * The ends of jobs (jobend.c) and the notes of changes: the engine's
 * coordinator (jobs.c) and the turn's commit (turn.c) call them.
 */

/* Tell j's submitter (notify: true) that j changed. */
void	jobend_notify(struct jobs *, struct job *);
/* j ends with s: stored with the turn's commit, then jobend_forget(). */
void	jobend_finish(struct jobs *, struct job *, enum job_status,
	    const char *error);
/* The end of j (worker del, 0: none) could not be stored with the turn
 * (rc): j shrinks (unless the disk is full) and is stored alone, or waits
 * in J->unstored. */
void	jobend_finish_alone(struct jobs *, struct job *, pid_t del, int rc);
/* Store the end of j from J->unstored, shrunk if it must (last: the
 * stop's try, which shrinks at once): 0, or the store's error. */
int	jobend_save_unstored(struct jobs *, struct job *, int last);
/* j is over and stored: tell whoever waits, forget it here. */
void	jobend_forget(struct jobs *, struct job *);
/* The store refused a change (rc): start nothing new, retry later. */
void	jobend_store_blocked(struct jobs *, const char *what, int rc);

/* jobrun.c */

/*
 * The run of a job: whether it may start, what its worker is given, and
 * how it ended.  The coordinator (jobs.c) acts on the answers.
 */

/*
 * A queued job's tools as the table has them now: a tool that a SIGHUP
 * removed or disabled fails the job instead of running.  0, or -1 with why.
 */
int		 jobrun_tools_ok(struct jobs *, struct job *, char *why,
		    size_t len);
/*
 * Whether the table now makes a command of queued job j (its record
 * loaded) a reload that it was not when j was queued (a SIGHUP): j then
 * becomes one, its record and its class, to wait for the reload guard as
 * if it were submitted now.  1 when it changed.
 */
int		 jobrun_reload_now(struct jobs *, struct job *);
/* The state dir, absolute (in buf, PATH_MAX bytes), or as given. */
const char	*jobrun_state_dir(struct jobs *, char *buf, size_t len);
/* The spec j's worker reads on its stdin.  Caller puts. */
json_object	*jobrun_spec(struct jobs *, struct job *);
/*
 * How j ended, its worker w reaped with wait status (w NULL: it had
 * none, linkjob.c): why filled, empty when the job is done.
 */
enum job_status	 jobrun_outcome(struct job *, struct worker *, int status,
		    char *why, size_t len);

/* linkjob.c */

/*
 * A read the broker forwards itself (cmdgated(8), Editor link): j's one
 * command, a forward to a bridge an editor link carries, instant or
 * smooth, with no await and no reload, while that link is open (spec:
 * jobrun_spec's).  linkjob_run sends it once j is running; its answer is
 * the command's result as a worker makes it, and j ends
 * (jobs_linked_end); a refusal, or an idempotent read lost, is handed to
 * a worker (jobs_handover), which begins the command afresh.
 */
int	 linkjob_fits(struct jobs *, struct job *, json_object *spec);
void	 linkjob_run(struct jobs *, struct job *, json_object *spec);
/* j is cancelled: its result says so, and it ends; its answer is no
 * one's. */
void	 linkjob_cancel(struct jobs *, struct job *);

/* jobsched.c */

/*
 * The scheduler's pass over the engine (cmdgate-protocol(7), Scheduling):
 * which queued jobs start now (scheduler.c decides), then what the
 * watchers of queued jobs hear: it starts each with jobs.c jobs_start and
 * tells a submitter with jobend.c jobend_notify.
 */

/* Start what may start now, then tell the watchers of queued jobs. */
void	 jobsched_pass(struct jobs *);

/* recover.c */

/* Recovery at start (recover.c). */

/* Read the store in one transaction: 0 with how many jobs were
 * interrupted and how many damaged records failed, or the store's
 * error. */
int		 recover_store(struct jobs *, size_t *interrupted,
		    size_t *damaged);

/*
 * The failed record that replaces queued job j's damaged one, keeping of
 * it what can be read, its error saying why and when (caller puts).
 */
json_object	*recover_damaged(struct jobs *, struct job *, const char *when);

/*
 * A queued job about to start, its record just read (NULL: it was not
 * JSON): 0 when it can run; -1 when the record is damaged, and the job
 * has failed saying so.
 */
int		 recover_check_start(struct jobs *, struct job *);

/* spare.c */

/*
 * The spare worker (cmdgated(8), Workers): after a job starts, another
 * worker is started from a zero timer, off the job's path, to wait for
 * the next job's spec, so that a start costs one message to a ready
 * worker.  --max-workers counts it; it is retired when no job took it for
 * SPARE_IDLE_S seconds, and at shutdown.
 */

#define SPARE_IDLE_S	2

void	spare_init(struct jobs *);
void	spare_free(struct jobs *);
/* A job started: start a spare at the next turn, keep it a while. */
void	spare_refill(struct jobs *);
/* Retire the spare now (shutdown). */
void	spare_retire(struct jobs *);

/* turn.c */

/*
 * The transitions of running jobs in one loop turn (a tool's group, a
 * result, an end), stored in one commit with the next start, or at the
 * end of the turn, as submits are (cmdgated(8), The store); a tool's
 * group alone, which nobody is told of, waits for the next commit
 * (TURN_LATE_MS at most), and a job's last result for its end, which
 * its worker's exit brings (TURN_LAST_MS at most).  Until the commit of a change that is told,
 * nothing leaves: every connection's output is held (the hook
 * job_synced), and what it tells (notifications, waiters) is done by the
 * engine's jobs_turn_done() once the commit is in.  A worker's spec goes
 * only after its job's start is committed (turn_commit_with).
 */

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

void	 turn_init(struct jobs *);
void	 turn_free(struct jobs *);
/* Add a transition of this turn. */
void	 turn_add(struct jobs *, enum turn_kind, struct job *, pid_t del,
	    size_t index, int ok);
/*
 * A job starts: commit put(arg) (its running record and its worker's)
 * now, with the transitions pending, in one transaction (a job's end and
 * the next one's start): 0, the pending then told by turn_tell_stored().
 * If that fails, the pending are stored one by one and told here (their
 * jobs_turn_done runs inside this call), then put alone, unless an end
 * was refused (J->store_blocked): the error, put's changes not applied.
 * what names the start in the debug log; reads: put stores only an
 * instant read's records (job_instant_read), so that the commit is held
 * when the pending are such too.
 */
int	 turn_commit_with(struct jobs *, const char *what,
	    int (*put)(struct jobs *, void *), void *arg, int reads);
/* At the turn's end (jobs_turn_end): commit what is pending, if any of
 * it is told or waited its time. */
void	 turn_end(struct jobs *);
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
