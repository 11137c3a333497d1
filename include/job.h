/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOB_H
#define CMDGATE_JOB_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "holds.h"
#include "qtree.h"
#include "scheduler.h"
#include "ticket.h"
#include "tools.h"
#include "worker.h"

/*
 * A job, and the engine's state (struct jobs): the queued and running
 * jobs, their workers, the counters of the store.  The store holds every
 * job; a change is committed (job_commit()) before anyone is told.
 */

#define STORE_RETRY_S	1	/* after the store refused a change... */
#define SPAWN_RETRY_S	1	/* the queue, after a worker failed to start */
#define STORE_RETRY_MAX_S 60	/* ...doubling up to this */

struct event_base;
struct options;
struct store;
struct tooltab;
struct event;
struct facejobs;
struct edsubs;
struct spare;
struct turn;

/* What the engine needs of the broker; all borrowed, outliving it. */
struct jobs_config {
	struct event_base	*base;
	const struct options	*opt;
	const char		*worker_path;
	const struct holds	*holds;		/* the connections' flags */
	struct tooltab		**tools;	/* the table now */
};

/* What the engine tells the broker (from inside its own calls). */
struct jobs_hooks {
	void	*arg;
	/* Job news for connection conn_id (note borrowed). */
	void	(*job_changed)(void *arg, uint64_t conn_id, json_object *note);
	/* --sync group: 1, hold every answer until the sync; 0, send them. */
	void	(*job_synced)(void *arg, int held);
	/* Stopping, and the last worker is gone. */
	void	(*idle)(void *arg);
	/* A child that is no worker was reaped: 1 when the broker knew it. */
	int	(*child)(void *arg, pid_t pid, int status);
	/* A job was queued or changed status; NULL: nobody asks. */
	void	(*changed)(void *arg);
};

enum job_status {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_DONE,
	JOB_FAILED,
	JOB_CANCELLED,
};
#define JOB_NSTATUS	5

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

struct jobs;


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
	struct event		*sync_ev;
	struct event		*group_ev;	/* commits this turn's submits */
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


/* A queued job of the stored record rec (taken). */
struct job	*job_new(json_object *rec, uint64_t num);
/* A queued job from its packed status byte alone: no record yet. */
struct job	*job_new_packed(uint64_t num, enum tier, int reload,
		    unsigned busy);
/* Whether rec is a string member key of rec (one of names, if given). */
int		 job_rec_string(json_object *rec, const char *key,
		    const char **names);
/* What is wrong with rec's shape, that every reader relies on, or NULL. */
const char	*job_rec_malformed(json_object *rec);
/* j->ncmds and j->completed from j->rec. */
void		 job_rec_counts(struct job *);
void		 job_free(struct job *);
/* A held reload whose submitter hears when its holder changes. */
int		 job_watched(const struct job *);
const char	*job_status_name(enum job_status);
char		 job_status_char(enum job_status);
/* The status of a store's status letter, or -1. */
int		 job_status_from_char(char);
/* The status byte j is stored with: a queued job's packs its class. */
char		 job_store_status(const struct job *);
/* A packed status byte's class: 0, or -1 when c packs none. */
int		 job_unpack_status(char c, enum tier *, int *reload,
		    unsigned *busy);
/* Change j's status, its record and the counters. */
void		 job_set_status(struct jobs *, struct job *, enum job_status);

/* The queue, in ticket order. */
void		 job_enqueue(struct jobs *, struct job *);
void		 job_dequeue(struct jobs *, struct job *);
/* A queued job's new class (tier, and reload, which only becomes 1). */
void		 job_reclass(struct jobs *, struct job *, enum tier,
		    int reload);
/* Take j off the queued or running list. */
void		 job_unlist(struct jobs *, struct job *);
/* The queued job of J->qroot's node n. */
struct job	*job_of_node(struct qnode *n);
/* How many jobs are queued ahead of j. */
size_t		 job_position(struct jobs *, struct job *);
/* The queued or running job num, or NULL. */
struct job	*job_find(struct jobs *, uint64_t num);
/* Not over yet, or over with its end not yet stored. */
int		 job_pending(struct jobs *, uint64_t num);
/* What holds reloads now: editor flags, past holders, running tools. */
void		 job_busy(struct jobs *, struct sched_busy *);
/*
 * Call fn on every job whose end is not stored yet (the turn's commit, or
 * a store that refuses) and that is stored with status s; for
 * JOB_RUNNING, on those running first.  What clients see of running and
 * queued jobs (queue_status, list_clients, the editor state) is what is
 * stored; the scheduler works on J->running and the queue.
 */
void		 job_foreach_stored(struct jobs *, enum job_status s,
		    void (*fn)(struct job *, void *), void *arg);
/* The heavy job stored as running (its end may not be stored), or NULL. */
struct job	*job_heavy_stored(struct jobs *);

/* A queued job's record: dropped from the heap (the store keeps it), and
 * read back.  job_rec_ref: a new reference (caller puts), or NULL with
 * *rc; job_rec_load: j->rec read back, 0 or the store's error. */
void		 job_rec_drop(struct job *);
json_object	*job_rec_ref(struct jobs *, struct job *, int *rc);
int		 job_rec_load(struct jobs *, struct job *);

/* Records: members of a job's stored JSON object. */
json_object	*job_rec_get(json_object *rec, const char *key); /* borrowed */
void		 job_rec_set(json_object *rec, const char *key,
		    const char *val);
/* Mark rec finished with status s at the current time. */
void		 job_rec_finish(json_object *rec, enum job_status s,
		    const char *error);
/* Copy member key of from (if any) into to. */
void		 job_copy(json_object *to, json_object *from, const char *key);

/* The store. */
/* Write j's record in the open transaction. */
int		 job_put(struct jobs *, struct job *);
/* Write w's record in the open transaction. */
int		 job_put_worker(struct jobs *, struct worker *);
/* Commit; with --sync group, hold every answer until the sync. */
int		 job_commit(struct jobs *);
/* Record j in one transaction, with its worker's record put (put_worker)
 * or deleted (del_pid > 0).  0, or the error with nothing applied. */
int		 job_save(struct jobs *, struct job *, int put_worker,
		    pid_t del_pid);
/* The store cannot take j's state (rc): j fails, its results dropped. */
void		 job_shrink(struct jobs *, struct job *, int rc);
/* A change was stored after the store refused some: the backoff ends. */
void		 job_store_recovered(struct jobs *);
/* The store's map is full: grow it (logged, what changed).  0, or rc. */
int		 job_store_grow(struct jobs *, const char *what);
/*
 * Run fn(J, arg), a whole transaction, again as long as it finds the
 * map full and the map may grow (it doubles, up to --map-size-max): 0, or
 * the last error.
 */
int		 job_store_growing(struct jobs *, const char *what,
		    int (*fn)(struct jobs *, void *), void *arg);
/*
 * Store rec, num's record in its final status s (kept --result-ttl), in a
 * commit of its own, growing a full map (job_store_growing).  0, or rc.
 */
int		 job_store_final(struct jobs *, const char *what, uint64_t num,
		    enum job_status s, json_object *rec);
/* A change cannot be recorded: stop (fatalx). */
void		 job_fatal_store(const char *what, int rc)
		    __attribute__((noreturn));

#endif
