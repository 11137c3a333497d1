/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_ENGINE_INTERNAL_H
#define CMDGATE_ENGINE_INTERNAL_H

/*
 * The engine's own types, private to src/engine/: a job and the jobs.
 * Other folders hold them as pointers and ask through the functions of
 * job.h and jobs.h (jobs_store, jobs_count, job_owner_conn, ...).
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
	struct worker		*worker;
	int			 cancelling;
	unsigned char		 damaged;	/* its record could not be read */
	unsigned char		 shrunk;	/* failed, results dropped (job_shrink) */
	unsigned char		 whole_tries;	/* its end refused by a full disk */
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
struct turn_op;
void	jobs_start(struct jobs *, struct job *);
void	jobs_turn_done(struct jobs *, struct turn_op *op, int rc);

#endif
