/* SPDX-License-Identifier: ISC */
/*
 * Jobs: the queued and running jobs, their workers, and every change of
 * state, each committed to the store before anyone hears of it.
 */
#include "config.h"

#include <sys/types.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "proc.h"
#include "store.h"
#include "ticket.h"
#include "tools.h"
#include "util.h"

#define EVENT_SLACK	(1024 * 1024)

static void	 on_store_retry(evutil_socket_t, short, void *);
static void	 on_spawn_retry(evutil_socket_t, short, void *);
static void	 jobs_turn_end(evutil_socket_t, short, void *);
static void	 on_editor_grace(evutil_socket_t, short, void *);

static void
now_stamp(char buf[UTIL_TIMESTAMP_LEN])
{
	util_timestamp(buf, util_now_ms());
}

/* ---- the store ------------------------------------------------------ */

/* --sync group: sync what was committed, then send what it held. */
static void
jobs_sync(struct jobs *J)
{
	int	rc;

	if ((rc = store_sync(J->st)) != 0)
		fatalx("store: sync failed: %s; stopping before any answer "
		    "claims it", store_strerror(rc));
	J->sync_held = 0;
	if (!turn_held(J))	/* else the turn's commit releases */
		J->hooks.job_synced(J->hooks.arg, 0);
}

void
jobs_turn_wake(struct jobs *J)
{
	event_active(J->turn_ev, EV_TIMEOUT, 0);
}

/*
 * The end of a loop turn, the one place where what the turn changed is
 * stored, synced and only then told, in this order (redis's beforeSleep
 * is the model).  jobs_turn_wake() brings it: a submission (submit_add),
 * a running job's news that someone hears of (turn_add, and turn.c's
 * timer for those nobody is told of) and, under --sync group, any commit
 * (job_commit).
 *  1. This turn's submissions, in one commit for all their clients; a
 *     commit that fails queues none of them.
 *  2. The scheduler's pass for what 1 queued: each start is stored with
 *     the transitions the turn holds (one commit for a job's end and the
 *     next one's start), which is why it comes before 3.
 *  3. The transitions left, in one commit (each alone if that fails),
 *     then what they tell: notes, waiters.
 *  4. The submitters' answers: after 2 and 3, so that an answer never
 *     leaves ahead of a change it follows; output is held until 5.
 *  5. --sync group: one fsync for every commit of the turn, then the held
 *     output goes.  A sync that fails stops the broker before any answer
 *     claims it (cmdgate-protocol(7), 4).  Under --sync full each commit
 *     synced itself, and the output went when 3 was stored.  Commits of
 *     instant reads only are held by the store, not synced (job_commit):
 *     a turn of nothing else has no sync at all, and holds no output for
 *     one.
 */
static void
jobs_turn_end(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;

	(void)fd;
	(void)ev;
	if (submit_store_turn(J) > 0)			/* 1 */
		jobs_schedule(J);			/* 2 */
	turn_end(J);					/* 3 */
	submit_answer_turn(J);				/* 4 */
	if (J->sync_held)				/* 5 */
		jobs_sync(J);
}

/* ---- notifications -------------------------------------------------- */


/* ---- submit, cancel, finish ----------------------------------------- */

static void
on_store_retry(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;
	struct job	*j;
	int		 rc, stored = 0;

	(void)fd;
	(void)ev;
	while ((j = TAILQ_FIRST(&J->unstored)) != NULL) {
		if ((rc = jobend_save_unstored(J, j, 0)) != 0) {
			jobend_store_blocked(J, j->ticket, rc);
			return;
		}
		TAILQ_REMOVE(&J->unstored, j, entry);
		jobend_forget(J, j);
		stored = 1;
	}
	if (stored)
		job_store_recovered(J);
	/* A start that failed is tried again by the scheduler. */
	J->store_blocked = 0;
	jobs_schedule(J);
}

static void
on_spawn_retry(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;

	(void)fd;
	(void)ev;
	J->spawn_blocked = 0;
	jobs_schedule(J);
}

int
jobs_fail(struct jobs_error *err, enum jobs_errcode code, const char *fmt,
    ...)
{
	va_list	ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* Cancel a queued job; -1 with err, and nothing changed, if not stored. */
static int
jobs_cancel_queued(struct jobs *J, struct job *j, struct jobs_error *err)
{
	json_object	*rec = NULL;
	int		 rc;

	/* A queued job's record is the store's; a damaged one, replaced. */
	if ((rc = job_rec_load(J, j)) == STORE_EBADRECORD)
		rec = recover_damaged(J, j, "when it was cancelled");
	else if (rc != 0)
		goto fail;
	else if (json_object_deep_copy(j->rec, &rec, NULL) != 0)
		fatalx("json_object_deep_copy");
	job_rec_finish(rec, JOB_CANCELLED, "cancelled");
	if ((rc = job_store_final(J, "a cancel", j->num,
	    JOB_CANCELLED, rec)) != 0) {
		json_object_put(rec);
fail:
		return jobs_fail(err, JOBS_ESTORE, "the cancel could not be "
		    "stored, so the job stays queued: %s", store_strerror(rc));
	}
	job_unlist(J, j);
	json_object_put(j->rec);
	j->rec = rec;
	job_set_status(J, j, JOB_CANCELLED);
	jobend_forget(J, j);
	return 0;
}

int
jobs_cancel(struct jobs *J, uint64_t num, json_object **result,
    struct jobs_error *err)
{
	struct job	*j = job_find(J, num);
	json_object	*v, *r;
	int		 found, cancelled = 0;
	char		 ticket[TICKET_LEN];

	ticket_format(ticket, sizeof(ticket), num);
	if (j != NULL && j->status == JOB_QUEUED) {
		if (jobs_cancel_queued(J, j, err) == -1)
			return -1;
		cancelled = 1;
	} else if (j != NULL) {
		if (!j->cancelling) {
			j->cancelling = 1;
			log_info("%s: cancelling; its processes get SIGTERM",
			    j->ticket);
			if (j->worker != NULL)
				worker_kill(j->worker, SIGTERM);
			else
				linkjob_cancel(J, j);
		}
		cancelled = 1;
	}
	if ((v = jobview_get(J, num, 0, &found, err)) == NULL) {
		if (!found && err->code == JOBS_OK)
			jobs_fail(err, JOBS_ENOJOB, "no job %s: it never "
			    "existed or has expired", ticket);
		return -1;
	}
	r = json_object_new_object();
	json_object_object_add(r, "ticket", json_object_new_string(ticket));
	json_object_object_add(r, "cancelled",
	    json_object_new_boolean(cancelled));
	job_copy(r, v, "status");
	json_object_put(v);
	*result = r;
	if (cancelled)
		jobs_schedule(J);
	return 0;
}

/* ---- workers --------------------------------------------------------- */

/* Progress that cannot be stored stops the job: see job_shrink(). */
static void
worker_store_failed(struct worker *w, int rc)
{
	char	why[256];

	snprintf(why, sizeof(why), "storage_error: its progress could not be "
	    "recorded (%s)", store_strerror(rc));
	worker_garbled(w, why);
}

/* Hook: w's job started a tool; its group is recorded for a restart. */
static void
jobs_worker_started(void *arg, struct worker *w)
{
	turn_add(arg, TURN_STARTED, w->job, 0, 0, 0);
	if (w->next_index == 0)
		spare_refill(arg);	/* its first tool */
}

/* Hook: w's job finished a command with res (borrowed); told once
 * stored with the turn. */
static int
jobs_worker_result(void *arg, struct worker *w, json_object *res)
{
	jobs_result(arg, w->job, res);
	/* Its first tool could not start: no start event refilled the spare. */
	if (w->job->completed == 1 && w->tool_pgid == 0)
		spare_refill(arg);
	return 0;
}

void
jobs_result(struct jobs *J, struct job *j, json_object *res)
{
	int	ok = json_object_get_boolean(json_object_object_get(res, "ok"));

	json_object_array_add(job_rec_get(j->rec, "results"),
	    json_object_get(res));
	j->completed++;
	/*
	 * The last one the worker sends (it stops at a failure under
	 * fail_fast or atomic, jobrun_spec): its exit and the end follow.
	 */
	turn_add(J, j->completed >= j->ncmds || (!ok &&
	    (json_object_get_boolean(job_rec_get(j->rec, "fail_fast")) ||
	    json_object_get_boolean(job_rec_get(j->rec, "atomic")))) ?
	    TURN_LAST : TURN_RESULT, j, 0, j->completed - 1, ok);
}

void
jobs_linked_end(struct jobs *J, struct job *j)
{
	enum job_status	 s;
	char		 why[512];

	s = jobrun_outcome(j, NULL, 0, why, sizeof(why));
	jobend_finish(J, j, s, why[0] != '\0' ? why : NULL);
	jobs_schedule(J);
}

/* The turn's transition op is stored (rc 0) or could not be (rc). */
void
jobs_turn_done(struct jobs *J, struct turn_op *op, int rc)
{
	struct job	*j = op->j;

	if (op->kind == TURN_FINISH) {
		TAILQ_REMOVE(&J->ending, j, entry);
		if (rc == 0)
			jobend_forget(J, j);
		else
			jobend_finish_alone(J, j, op->del, rc);
	} else if (rc != 0) {
		if (j->worker != NULL)
			worker_store_failed(j->worker, rc);
	} else if (op->kind == TURN_RESULT || op->kind == TURN_LAST) {
		if (j->nstored < op->index + 1)
			j->nstored = op->index + 1;
		/* An end in the same turn says it all. */
		if (j->status == JOB_RUNNING)
			jobend_notify(J, j);
		waiter_job_result(J, j->num, op->index, op->ok);
	}
}

/* Hook: w's awaited command had its first answer: to the job's watchers. */
static void
jobs_worker_answer(void *arg, struct worker *w, json_object *res)
{
	waiter_job_answer(arg, w->job->num, w->next_index, res);
}

/* The answer of a worker's call over an editor link, if it is there. */
static void
jobs_link_reply(void *arg, pid_t pid, json_object *answer)
{
	struct jobs	*J = arg;
	struct worker	*w;

	if ((w = worker_find(&J->W, pid)) != NULL)
		worker_reply(w, answer);
}

/* Hook: w asked for an exchange over an editor link. */
static void
jobs_worker_call(void *arg, struct worker *w, json_object *ev)
{
	struct jobs	*J = arg;

	if (edlink_call(J->cfg.links, ev, jobs_link_reply, J, w->pid) == -1)
		worker_garbled(w, "garbled call from the worker");
}

struct jobs_run {
	struct job	*j;
	struct worker	*w;
	json_object	*run;
};

/* Put the start of jobs_run arg in the open transaction. */
static int
jobs_put_start(struct jobs *J, void *arg)
{
	struct jobs_run	*r = arg;
	int		 rc;

	if ((rc = store_job_put(J->st, r->j->num, job_status_char(JOB_RUNNING),
	    0, json_object_to_json_string_ext(r->run,
	    JSON_C_TO_STRING_PLAIN))) != 0)
		return rc;
	return r->w != NULL ? job_put_worker(J, r->w) : 0;
}

/*
 * j is running once that is committed, with the turn's transitions so
 * far; w (NULL: a read the broker forwards itself, linkjob.c) is its
 * worker.  0, or -1 with the store refusing (j stays queued).
 */
static int
jobs_begin(struct jobs *J, struct job *j, struct worker *w)
{
	struct jobs_run	 r;
	json_object	*run = NULL;
	char		 ts[UTIL_TIMESTAMP_LEN], why[256];
	int		 rc;

	/* Stored as running first; only then does anything change here. */
	if (json_object_deep_copy(j->rec, &run, NULL) != 0)
		fatalx("json_object_deep_copy");
	job_rec_set(run, "status", job_status_name(JOB_RUNNING));
	if (!json_object_is_type(job_rec_get(run, "results"), json_type_array))
		json_object_object_add(run, "results", json_object_new_array());
	now_stamp(ts);
	job_rec_set(run, "started_at", ts);
	r.j = j;
	r.w = w;
	r.run = run;
	snprintf(why, sizeof(why), "%s running", j->ticket);
	if ((rc = turn_commit_with(J, why, jobs_put_start, &r,
	    job_instant_read(j))) != 0) {
		json_object_put(run);
		jobend_store_blocked(J, j->ticket, rc);
		return -1;
	}
	json_object_put(j->rec);
	j->rec = run;
	if (w != NULL) {
		w->busy = j->busy;
		w->next_index = j->completed;
	}
	j->worker = w;
	job_dequeue(J, j);
	TAILQ_INSERT_TAIL(&J->running, j, entry);
	J->nrunning++;
	job_set_status(J, j, JOB_RUNNING);
	return 0;
}

/* What went in j's start commit (the last job's end) is told first. */
static void
jobs_begun(struct jobs *J, struct job *j)
{
	turn_tell_stored(J);
	jobend_notify(J, j);
	waiter_job_result(J, j->num, 0, -1);
}

/* A worker could not be started for j (rc): it fails, and nothing
 * starts for a second. */
static void
jobs_spawn_failed(struct jobs *J, struct job *j, int rc)
{
	struct timeval	 spawn_tv = { SPAWN_RETRY_S, 0 };
	char		 why[256];

	snprintf(why, sizeof(why), "cannot start a worker: %s",
	    strerror(rc));
	log_warnx("%s: %s", j->ticket, why);
	jobend_finish(J, j, JOB_FAILED, why);
	/*
	 * Trying the next at once would fail the whole queue on a passing
	 * limit: nothing starts for a second, and no worker ends to run the
	 * scheduler then.
	 */
	J->spawn_blocked = 1;
	if (!evtimer_pending(J->spawn_ev, NULL))
		evtimer_add(J->spawn_ev, &spawn_tv);
}

/* w (j's) gets its spec and runs. */
static void
jobs_worker_go(struct jobs *J, struct job *j, struct worker *w,
    json_object *spec)
{
	worker_run(w, spec);
	/*
	 * The next spare: once the tool runs (jobs_worker_started), when
	 * this worker waits and a CPU is free; now if no tool is spawned.
	 */
	if (!json_object_object_get_ex(json_object_array_get_idx(
	    json_object_object_get(spec, "commands"), 0), "exec", NULL))
		spare_refill(J);
	log_info("%s running: worker %d", j->ticket, (int)w->pid);
}

/*
 * Start j: over its editor link with no worker when it is such a read
 * (linkjob.c), else in its worker (the spare, if there is one).
 */
void
jobs_start(struct jobs *J, struct job *j)
{
	struct worker	*w;
	json_object	*spec;
	char		 why[256];
	int		 rc;

	if (jobrun_tools_ok(J, j, why, sizeof(why)) == -1) {
		log_warnx("%s: %s", j->ticket, why);
		jobend_finish(J, j, JOB_FAILED, why);
		J->reschedule = 1;	/* no worker ends to say so */
		return;
	}
	spec = jobrun_spec(J, j);
	if (linkjob_fits(J, j, spec)) {
		if (jobs_begin(J, j, NULL) == 0) {
			linkjob_run(J, j, spec);
			jobs_begun(J, j);
		}
		json_object_put(spec);
		return;
	}
	if ((rc = worker_spawn(&J->W, &w)) != 0) {
		jobs_spawn_failed(J, j, rc);
		json_object_put(spec);
		return;
	}
	w->job = j;		/* its record names the job */
	if (jobs_begin(J, j, w) != 0)
		worker_abort(w);
	else {
		jobs_worker_go(J, j, w, spec);
		jobs_begun(J, j);
	}
	json_object_put(spec);
}

/* Put the record of worker arg, which takes on its job. */
static int
jobs_put_worker(struct jobs *J, void *arg)
{
	return job_put_worker(J, arg);
}

void
jobs_handover(struct jobs *J, struct job *j)
{
	struct worker	*w;
	json_object	*spec;
	char		 why[256];
	int		 rc;

	if ((rc = worker_spawn(&J->W, &w)) != 0) {
		jobs_spawn_failed(J, j, rc);
		return;
	}
	w->job = j;
	w->busy = j->busy;
	w->next_index = j->completed;
	snprintf(why, sizeof(why), "%s handed to a worker", j->ticket);
	if ((rc = turn_commit_with(J, why, jobs_put_worker, w,
	    job_instant_read(j))) != 0) {
		w->job = NULL;
		worker_abort(w);
		snprintf(why, sizeof(why), "storage_error: its worker could "
		    "not be recorded (%s)", store_strerror(rc));
		jobend_finish(J, j, JOB_FAILED, why);
		return;
	}
	j->worker = w;
	spec = jobrun_spec(J, j);
	jobs_worker_go(J, j, w, spec);
	json_object_put(spec);
	turn_tell_stored(J);
}

/* Hook: w exited; its job ends, or its record goes. */
static void
jobs_worker_exited(void *arg, struct worker *w, int status)
{
	struct jobs	*J = arg;
	struct job	*j = w->job;
	enum job_status	 s;
	char		 why[512];
	int		 rc;

	if (j != NULL) {
		s = jobrun_outcome(j, w, status, why, sizeof(why));
		jobend_finish(J, j, s, why[0] != '\0' ? why : NULL);
	} else if (!w->recorded) {
		/* A retired spare: nothing of it was stored. */
	} else if ((rc = store_begin(J->st)) != 0 ||
	    (rc = store_worker_del(J->st, w->pid)) != 0 ||
	    (rc = job_commit(J, 0)) != 0) {
		/* A stale record is harmless: a restart checks its pid. */
		store_abort(J->st);
		log_warnx("worker %d: its record stays in the store: %s",
		    (int)w->pid, store_strerror(rc));
	}
}

/* Hook: workers were reaped; a worker's place may be free. */
static void
jobs_worker_reaped(void *arg)
{
	struct jobs	*J = arg;

	jobs_schedule(J);
	if (J->stopping && J->W.nworkers == 0)
		J->hooks.idle(J->hooks.arg);
}

/* Hook: a child that is no worker was reaped (the editor probe). */
static int
jobs_other_reaped(void *arg, pid_t pid, int status)
{
	struct jobs	*J = arg;

	return J->hooks.child(J->hooks.arg, pid, status);
}

/* ---- editor flags across a restart ---------------------------------- */

void
jobs_editor_changed(struct jobs *J)
{
	if (J->stopping)
		return;
	edsaved_update(J);
	jobs_schedule(J);
}

static void
on_editor_grace(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*J = arg;

	(void)fd;
	(void)ev;
	edsaved_grace_over(J);
	jobs_schedule(J);
}

/* ---- scheduling ----------------------------------------------------- */

void
jobs_schedule(struct jobs *J)
{
	jobsched_pass(J);
}

/* ---- start-up and shutdown ------------------------------------------ */

/* Open the store as the flags say; 0, or the exit status, logged. */
static int
jobs_open_store(struct jobs *J, const struct options *opt)
{
	struct store_conf	 conf;
	char			*moved, *damage;
	int			 rc;

	conf.map_size = opt->map_size;
	conf.map_size_max = opt->map_size_max > opt->map_size ?
	    opt->map_size_max : opt->map_size;
	conf.sync = opt->sync;
	conf.reset = opt->reset_store;
	rc = store_open(&J->st, opt->state_dir, &conf, &moved, &damage);
	if (moved != NULL)
		log_warnx("THE STORE WAS DAMAGED (%s): --reset-store moved it "
		    "to %s and a new, empty one started", damage, moved);
	else if (rc == STORE_EDAMAGED)
		log_errx("store refused: %s; move it aside by hand or start "
		    "with --reset-store (which keeps it as "
		    "data.mdb.broken-*)", damage);
	else if (rc != 0)
		log_errx("store %s/store: %s", opt->state_dir,
		    store_strerror(rc));
	free(moved);
	free(damage);
	return rc == 0 ? 0 : 78;
}

int
jobs_open(struct jobs **Jp, const struct jobs_config *cfg,
    const struct jobs_hooks *hooks)
{
	struct jobs		*J = xcalloc(1, sizeof(*J));
	size_t			 interrupted, damaged;
	struct worker_hooks	 wh = { J, jobs_worker_started,
				    jobs_worker_result, jobs_worker_exited,
				    jobs_worker_reaped, jobs_other_reaped,
				    jobs_worker_answer, waiter_worker_note,
				    jobs_worker_call };
	int			 rc;

	J->cfg = *cfg;
	J->hooks = *hooks;
	TAILQ_INIT(&J->queued);
	TAILQ_INIT(&J->watched);
	TAILQ_INIT(&J->watched_new);
	TAILQ_INIT(&J->running);
	TAILQ_INIT(&J->waiters);
	TAILQ_INIT(&J->watchers);
	TAILQ_INIT(&J->submits);
	TAILQ_INIT(&J->turn);
	TAILQ_INIT(&J->unstored);
	TAILQ_INIT(&J->ending);
	if ((rc = jobs_open_store(J, J->cfg.opt)) != 0) {
		free(J);
		return rc;
	}
	*Jp = J;
	if (workers_init(&J->W, J->cfg.base, J->cfg.worker_path,
	    J->cfg.opt->kill_grace, 12 * J->cfg.opt->output_cap + EVENT_SLACK,
	    &wh) == -1)
		fatalx("evsignal_add");
	spare_init(J);
	turn_init(J);
	expiry_init(J);
	J->retry_ev = evtimer_new(J->cfg.base, on_store_retry, J);
	J->spawn_ev = evtimer_new(J->cfg.base, on_spawn_retry, J);
	J->turn_ev = event_new(J->cfg.base, -1, 0, jobs_turn_end, J);
	J->grace_ev = evtimer_new(J->cfg.base, on_editor_grace, J);
	J->held_ms = JOB_HELD_MS;
	if (J->turn_ev == NULL || J->retry_ev == NULL || J->spawn_ev == NULL ||
	    J->grace_ev == NULL)
		fatalx("event_new");
	if ((rc = recover_store(J, &interrupted, &damaged)) != 0) {
		log_errx("store: recovery failed: %s", store_strerror(rc));
		return 78;
	}
	log_info("store %s: %zu queued, %zu interrupted by the restart, "
	    "%zu damaged records failed, next ticket t-%06llu",
	    store_path(J->st), J->nqueued, interrupted, damaged,
	    (unsigned long long)store_next_ticket(J->st));
	expiry_arm(J);
	edsaved_restore(J);
	jobs_schedule(J);
	return 0;
}

/* The running jobs' records, in one commit: 0, or the error. */
static int
jobs_put_running(struct jobs *J, void *arg)
{
	struct job	*j;
	int		 rc;

	(void)arg;
	if ((rc = store_begin(J->st)) != 0)
		return rc;
	TAILQ_FOREACH(j, &J->running, entry)
		if ((rc = job_put(J, j)) != 0) {
			store_abort(J->st);
			return rc;
		}
	return job_commit(J, 0);
}

void
jobs_shutdown(struct jobs *J)
{
	struct job	*j;
	char		 ts[UTIL_TIMESTAMP_LEN];
	int		 rc;

	J->stopping = 1;
	if (turn_pending(J))
		turn_flush(J);
	/* Ends the store refused: one more try, else the restart's. */
	while ((j = TAILQ_FIRST(&J->unstored)) != NULL &&
	    jobend_save_unstored(J, j, 1) == 0) {
		TAILQ_REMOVE(&J->unstored, j, entry);
		jobend_forget(J, j);
	}
	if (J->nrunning > 0) {
		now_stamp(ts);
		TAILQ_FOREACH(j, &J->running, entry) {
			job_set_status(J, j, JOB_FAILED);
			job_rec_set(j->rec, "finished_at", ts);
			job_rec_set(j->rec, "error", "interrupted by broker "
			    "shutdown");
		}
		if ((rc = job_store_growing(J, "the shutdown",
		    jobs_put_running, NULL)) != 0)
			job_fatal_store("the shutdown", rc);
		while ((j = TAILQ_FIRST(&J->running)) != NULL) {
			TAILQ_REMOVE(&J->running, j, entry);
			J->nrunning--;
			jobend_notify(J, j);
			waiter_job_done(J, j->num, j->rec);
			if (j->worker != NULL)
				j->worker->job = NULL;
			job_free(j);
		}
	}
	/*
	 * The connections close once their output is out: what --sync group
	 * holds (these ends, earlier answers of this turn) must be out first.
	 */
	if (J->sync_held)
		jobs_sync(J);
	job_flush(J);	/* the instant reads' records, kept */
	spare_retire(J);
	workers_kill_all(&J->W, SIGTERM);
}

int
jobs_idle(const struct jobs *J)
{
	return jobs_nworkers(J) == 0 && (J == NULL || J->W.spare == NULL);
}

size_t
jobs_nworkers(const struct jobs *J)
{
	return J == NULL ? 0 : J->W.nworkers;
}

void
jobs_free(struct jobs *J)
{
	struct job	*j;

	if (J == NULL)
		return;
	if (J->facejobs_free != NULL)
		J->facejobs_free(J->facejobs);
	submit_free_all(J);
	waiter_free_all(J);
	while ((j = TAILQ_FIRST(&J->queued)) != NULL) {
		TAILQ_REMOVE(&J->queued, j, entry);
		job_free(j);
	}
	while ((j = TAILQ_FIRST(&J->running)) != NULL) {
		TAILQ_REMOVE(&J->running, j, entry);
		job_free(j);
	}
	while ((j = TAILQ_FIRST(&J->unstored)) != NULL) {
		TAILQ_REMOVE(&J->unstored, j, entry);
		job_free(j);
	}
	turn_free(J);
	while ((j = TAILQ_FIRST(&J->ending)) != NULL) {
		TAILQ_REMOVE(&J->ending, j, entry);
		job_free(j);
	}
	spare_free(J);
	workers_free(&J->W);
	event_free(J->expire_ev);
	event_free(J->retry_ev);
	event_free(J->spawn_ev);
	event_free(J->turn_ev);
	if (J->grace_ev != NULL)
		event_free(J->grace_ev);
	job_flush(J);
	if (J->held_ev != NULL)
		event_free(J->held_ev);
	store_close(J->st);
	free(J);
}
