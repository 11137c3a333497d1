/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_ENGINE_H
#define CMDGATE_ENGINE_H

/*
 * The engine (src/engine/): jobs from submission to their end.
 * struct job and struct jobs are its own (src/engine/internal.h).
 */

#include <sys/queue.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "policy.h"
#include "proc.h"
#include "ticket.h"
#include "tools.h"

struct edsubs;
struct event;
struct event_base;
struct facejobs;
struct forksrv;
struct job;
struct jobs;
struct links;
struct options;
struct edprobe;
struct spare;
struct store;
struct submission;
struct tooltab;
struct turn;
struct waiter;
struct worker;

/* job.c */

/*
 * A job, and the engine's state (struct jobs): the queued and running
 * jobs, their workers, the counters of the store.  The store holds every
 * job; a change is committed (job_commit()) before anyone is told.
 */

#define STORE_RETRY_S	1	/* after the store refused a change... */
#define SPAWN_RETRY_S	1	/* the queue, after a worker failed to start */
#define STORE_RETRY_MAX_S 60	/* ...doubling up to this */
#define JOB_HELD_MS	1000	/* instant reads' records held, at most */

/* What the engine needs of the broker; all borrowed, outliving it. */
struct jobs_config {
	struct event_base	*base;
	const struct options	*opt;
	const char		*worker_path;
	const struct edflags	*holds;		/* the connections' flags */
	struct tooltab		**tools;	/* the table now */
	struct links		*links;		/* the editor links; NULL: each
						   worker connects itself */
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
 * struct jobs and struct job are the engine's (src/engine/internal.h); the
 * folders above it ask through these.  jobs_set_facejobs: the faces'
 * repeat table (facejob.c), which jobs_free frees first with free_fn (it
 * holds waiters and submits of this engine).  jobs_set_edsubs: the
 * editor state's subscriptions (edstate.c), told by changed when a
 * reload job starts or stops running.
 */
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
/*
 * Commit the open transaction: held (store_commit_held(), to the disk
 * within J->held_ms) when reads, it holding only job_instant_read() jobs'
 * records; else durable, and with --sync group every answer is held until
 * the sync.  0, or the store's error.
 */
int		 job_commit(struct jobs *, int reads);
/* Whether j's records are held rather than synced (cmdgated(8)). */
int		 job_instant_read(const struct job *);
/* What the store holds, to the disk now (a failure logged). */
void		 job_flush(struct jobs *);
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

/* jobs.c */

/*
 * Jobs: cmdgate-protocol(7), Jobs.  The coordinator: recovery, the
 * scheduler's passes, submits, waits, cancels and the ends of jobs; a job
 * and the engine's state are in job.h.
 */

/* Open the store and recover (cmdgate-protocol(7), Durability): 0 with
 * *J set, or an exit status (with *J set when the store opened). */
int		 jobs_open(struct jobs **J, const struct jobs_config *,
		    const struct jobs_hooks *);
void		 jobs_free(struct jobs *);
/* Stop: every running job's processes get SIGTERM, then SIGKILL. */
void		 jobs_shutdown(struct jobs *);
/* No worker is left (or J is NULL); how many are. */
int		 jobs_idle(const struct jobs *);
size_t		 jobs_nworkers(const struct jobs *);
/* A holder changed. */
void		 jobs_schedule(struct jobs *);
/*
 * Something of this turn is to be stored, synced or told: the end of the
 * loop turn does it, once, in its order (jobs.c jobs_turn_end).
 */
void		 jobs_turn_wake(struct jobs *);
/*
 * The editor flags changed: save them for a restart (STATE_DIR/
 * editor-flags), then jobs_schedule().  Not while stopping: the flags go
 * with the connections then, and the file keeps what they held, so that
 * after a restart reloads wait --editor-grace seconds for their holders to
 * report again.
 */
void		 jobs_editor_changed(struct jobs *);

/*
 * What went wrong, in the engine's terms: the methods layer tells it to
 * clients (methods/jobmethods.c jobmethods_error, the JSON-RPC code and
 * data.type of each), a face in its own shape.
 */
enum jobs_errcode {
	JOBS_OK = 0,		/* none */
	JOBS_ENOJOB,		/* no such job: never existed, or expired */
	JOBS_EQUEUEFULL,	/* --max-queued jobs are waiting already */
	JOBS_ESTOREFULL,	/* the store is full (it backs off) */
	JOBS_ESTORE,		/* the store failed a read or a write */
	JOBS_EBADRECORD,	/* a stored record cannot be read */
};

#define JOBS_REASON_MAX	512

struct jobs_error {
	enum jobs_errcode	 code;
	char			 reason[JOBS_REASON_MAX];	/* for people */
};

/* Fill err; returns -1 so callers can "return jobs_fail(...)". */
int		 jobs_fail(struct jobs_error *err, enum jobs_errcode code,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Used by the methods. */
int		 jobs_cancel(struct jobs *, uint64_t num, json_object **,
		    struct jobs_error *);

/* jobview.c */

/*
 * What the methods and notifications show of jobs (cmdgate-protocol(7),
 * Jobs).  Each returns a new reference: caller puts.
 */

/* The job object of rec (borrowed), full or its summary; j is its live
 * job, NULL when it is over. */
json_object	*jobview_make(struct jobs *, json_object *rec, struct job *j,
		    int full);
/* The job object of job num, live or stored; NULL with *found 0 when no
 * job has it, or NULL with err filled when the store failed. */
json_object	*jobview_get(struct jobs *, uint64_t num, int full, int *found,
		    struct jobs_error *err);
/* The summary of job num from its stored record rec (borrowed); a live
 * job's own state wins. */
json_object	*jobview_record(struct jobs *, uint64_t num, json_object *rec);
/* The params of a notifications/job about j. */
json_object	*jobview_note(struct jobs *, struct job *j);
/* The queue_status result. */
json_object	*jobview_queue(struct jobs *);
/* What holds every queued reload back, or NULL (borrowed, static). */
const char	*jobview_blocked_by_queued(struct jobs *);
/* What holds the queued reload j back, or NULL (borrowed, static). */
const char	*jobview_blocked_by(struct jobs *, const struct job *j);
/*
 * Why job num (its ticket given) is held, in one line for the client
 * who waits: running, held by the reload guard, queued behind another
 * job or a heavy one running, or waiting for a worker.
 */
void		 jobview_why_held(struct jobs *, uint64_t num,
		    const char *ticket, char *why, size_t len);

/* edlink.c */

/* Where an exchange's answer goes: the process pid that asked. */
typedef void	(*edlink_reply_fn)(void *arg, pid_t pid, json_object *answer);
/*
 * ev (borrowed), the WIRE_EV_CALL of process pid: over the link it
 * names; its answer, one object (borrowed), to reply(arg, pid, answer)
 * from the loop later.  0, or -1 when ev is garbled or names no bridge
 * a link carries (nothing was sent).
 */
int		 edlink_call(struct links *, json_object *ev,
		    edlink_reply_fn reply, void *arg, pid_t pid);

/* edprobe.c */

/*
 * The editor probe (cmdgate.tools(5), editor; cmdgated(8)): one
 * long-lived cmdgate-worker in probe mode, started when the tool table
 * names an editor, restarted when it dies (backoff) or when the table's
 * editor changes, stopped at shutdown.  It is not a job: no store
 * record, not counted by --max-workers.  The flags it reports leave
 * through probe_hooks; its exit is handed in by whoever reaps children
 * (edprobe_reaped).
 */

#define PROBE_BACKOFF_MS	1000	/* the first restart after a death... */
#define PROBE_BACKOFF_MAX_MS	30000	/* ...doubling up to this */
#define PROBE_LINE_MAX		65536	/* bytes of one event line */

struct edprobe_hooks {
	void	*arg;
	/* The probe's flags are f now (cleared when it is unreachable or
	 * gone); called only when they change. */
	void	(*flags)(void *arg, const struct editor_flags *f);
};

/* The settings of a probe, all borrowed for its life. */
struct edprobe_config {
	struct event_base	*base;
	const char		*worker_path;
	char			**env;
	uint64_t		 kill_grace;	/* seconds */
	const char		*lock_dir;	/* absolute */
	struct links		*links;		/* its exchanges go over them;
						   NULL: it connects itself */
};

/* A probe that runs nothing until edprobe_configure().  Free with
 * edprobe_free(), which kills a process still alive. */
struct edprobe	*edprobe_new(const struct edprobe_config *,
		    const struct edprobe_hooks *);
void		 edprobe_free(struct edprobe *);
/*
 * The table's editor object (borrowed; NULL: none): start the probe,
 * restart it when the object changed, or stop it.
 */
void		 edprobe_configure(struct edprobe *, json_object *editor);
/* Stop for good: SIGTERM, SIGKILL after kill_grace; no restart. */
void		 edprobe_stop(struct edprobe *);
/* fn(arg) after the editor's reachable changed (one watcher; fn NULL:
 * none); p may be NULL. */
void		 edprobe_watch(struct edprobe *p, void (*fn)(void *), void *arg);
/*
 * Whether the editor answers: 1, 0, or -1 (no probe or not known yet);
 * *lost_ms (monotonic) when it stopped answering after it had answered,
 * 0 when it did not.  p may be NULL.
 */
int		 edprobe_reachable(const struct edprobe *p, int64_t *lost_ms);
/* Whether its process is alive (not yet reaped). */
int		 edprobe_alive(const struct edprobe *);
/* Child pid was reaped with status: 1 when it was the probe's, else 0. */
int		 edprobe_reaped(struct edprobe *, pid_t pid, int status);
/* The status object {probe, reachable, error?, since}; p may be NULL.
 * Caller puts. */
json_object	*edprobe_json(const struct edprobe *);
/*
 * Whether the editor answered, then stopped answering (or its probe
 * died): its flags are the last it reported, kept until it answers
 * again.  p may be NULL.
 */
int		 edprobe_unreachable(const struct edprobe *p);

/* submit.c */

/*
 * Submits and waits (cmdgate-protocol(7), Jobs).  The submits of one loop
 * turn are stored in one commit (group commit) at its end, each in a
 * nested transaction when one fails, so that it fails alone; then they are
 * queued, and each caller is told.  A waiter (waiter.c) is told when its
 * job ends, or after its timeout.
 */

/* num stored (dedup: found by its idempotency key), or err (borrowed). */
typedef void	(*submit_done_fn)(void *arg, uint64_t num, int dedup,
		    struct jobs_error *err);
/* The job object (taken), or NULL with err (borrowed). */
typedef void	(*waiter_done_fn)(void *arg, json_object *job,
		    struct jobs_error *err);
/* An awaited forward command's first upstream answer (borrowed; not
 * stored), index the command's. */
typedef void	(*waiter_answer_fn)(void *arg, size_t index,
		    json_object *result);

/*
 * What a watching waiter is told of its job (ev borrowed; nothing of it
 * is stored): {"event":"queued","position":N,"blocked_by":X|null} once
 * stored and after each scheduler pass while queued, {"event":"running"},
 * {"event":"result","index":I,"ok":B} as each command ends, and the
 * tool's own {"event":"progress",...} and {"event":"log",...}.
 */
typedef void	(*waiter_watch_fn)(void *arg, json_object *ev);

/* Submit the validated job record rec under idempotency key idem (both
 * taken; idem NULL for none); done(arg) at the end of the turn. */
struct submission *submit_add(struct jobs *, json_object *rec, char *idem,
		    uint64_t notify_conn, submit_done_fn done, void *arg);
/* The job of s is owned by connection id (list_clients counts it). */
void		 submit_set_owner(struct submission *s, uint64_t id);
/* The caller of s is gone: s is stored all the same, and nobody told. */
void		 submit_forget(struct submission *s);
/* Store and queue this turn's submits: how many were queued. */
size_t		 submit_store_turn(struct jobs *);
/* Tell the callers of this turn's submits, and free them. */
void		 submit_answer_turn(struct jobs *);
/* Free every submit (their callers are gone). */
void		 submit_free_all(struct jobs *);

/* waiter.c */


/* Wait for job num, which must be job_pending(): done(arg) once it ends or
 * after timeout_s, never from here. */
struct waiter	*waiter_add(struct jobs *, uint64_t num, uint64_t timeout_s,
		    waiter_done_fn done, void *arg);
/* The same without a timeout, and told each first upstream answer of an
 * awaited command of the job too (answer may be NULL). */
struct waiter	*waiter_watch(struct jobs *, uint64_t num,
		    waiter_done_fn done, waiter_answer_fn answer, void *arg);
/* Tell watch(arg) of w's job's changes too, until w is answered. */
void		 waiter_set_watch(struct waiter *w, waiter_watch_fn watch,
		    void *arg);
/* Job num's event ev (borrowed): tell its watchers. */
void		 waiter_job_note(struct jobs *, uint64_t num, json_object *ev);
/* The worker hook (worker.h, note) of the engine J (arg): w's job's
 * progress or log event ev (borrowed) to its watchers. */
void		 waiter_worker_note(void *arg, struct worker *w,
		    json_object *ev);
/* Job num's command index ended (ok 1 or 0), or (ok -1) it started
 * running: tell its watchers. */
void		 waiter_job_result(struct jobs *, uint64_t num, size_t index,
		    int ok);
/* Tell the watchers of queued jobs where they stand (a scheduler pass). */
void		 waiter_queue_pass(struct jobs *);
/* Job num's state as a queued or running event, or NULL when it is not
 * live.  Caller puts. */
json_object	*waiter_state(struct jobs *, uint64_t num);
/* The caller of w is gone. */
void		 waiter_cancel(struct waiter *w);
/* Job num ended and rec (borrowed; NULL: read it from the store) is
 * stored: tell its waiters. */
void		 waiter_job_done(struct jobs *, uint64_t num,
		    json_object *rec);
/* Command index of job num had its first upstream answer result
 * (borrowed): tell its watchers. */
void		 waiter_job_answer(struct jobs *, uint64_t num, size_t index,
		    json_object *result);
/* What a waiter of job num is told: the full job object, or NULL with err
 * ("expired while it was waited for").  Caller puts. */
json_object	*waiter_view(struct jobs *, uint64_t num,
		    struct jobs_error *err);
/* Free every waiter (their callers are gone). */
void		 waiter_free_all(struct jobs *);

#endif
