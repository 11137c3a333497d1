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

struct job;
struct jobs;


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

/*
 * struct jobs and struct job are the engine's (src/engine/engine.h); the
 * folders above it ask through these.  jobs_set_facejobs: the faces'
 * repeat table (facejob.c), which jobs_free frees first with free_fn (it
 * holds waiters and submits of this engine).  jobs_set_edsubs: the
 * editor state's subscriptions (edstate.c), told by changed when a
 * reload job starts or stops running.
 */
struct forksrv;
const struct options	*jobs_options(const struct jobs *);
struct store	*jobs_store(const struct jobs *);
uint64_t	 jobs_count(const struct jobs *, enum job_status);
const struct forksrv	*jobs_forksrv(const struct jobs *);
char		**jobs_worker_env(const struct jobs *);
struct facejobs	*jobs_facejobs(const struct jobs *);
void		 jobs_set_facejobs(struct jobs *, struct facejobs *,
		    void (*free_fn)(struct facejobs *));
struct edsubs	*jobs_edsubs(const struct jobs *);
void		 jobs_set_edsubs(struct jobs *, struct edsubs *,
		    void (*changed)(struct edsubs *));
/* fn on every queued job, in ticket order. */
void		 job_foreach_queued(struct jobs *,
		    void (*fn)(struct job *, void *), void *arg);
/* Its submitter's connection (0: none known); whether it reloads. */
uint64_t	 job_owner_conn(const struct job *);
int		 job_reload(const struct job *);

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
