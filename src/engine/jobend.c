/* SPDX-License-Identifier: ISC */
/*
 * A job's end: recorded with the turn's commit (turn.c), then told and
 * forgotten; an end the store refused waits in J->unstored, retried with
 * a backoff (jobs.c on_store_retry).
 */
#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "proc.h"
#include "store.h"

/* Tell the submitter (notify: true) that j changed. */
void
jobend_notify(struct jobs *J, struct job *j)
{
	json_object	*note;

	if (j->notify_conn == 0)
		return;
	j->last_blocked = jobview_blocked_by(J, j);
	note = jobview_note(J, j);
	J->hooks.job_changed(J->hooks.arg, j->notify_conn, note);
	json_object_put(note);
}



/* j is over and stored: tell whoever waits, forget it here. */
void
jobend_forget(struct jobs *J, struct job *j)
{
	const char	*error = json_object_get_string(job_rec_get(j->rec,
	    "error"));

	/* An editor read that went well comes many times a minute. */
	if (job_instant_read(j) && j->status == JOB_DONE)
		log_debug("%s %s", j->ticket, job_status_name(j->status));
	else
		log_info("%s %s%s%s", j->ticket, job_status_name(j->status),
		    error != NULL ? ": " : "", error != NULL ? error : "");
	if (j->uncounted) {	/* counted as over once stored */
		J->count[j->counted]--;
		J->count[j->status]++;
		j->uncounted = 0;
		if (j->reload && j->counted == JOB_RUNNING &&
		    J->reloads_changed != NULL)
			J->reloads_changed(J->edsubs);
		/* The counts and views as stored changed only now. */
		if (J->hooks.changed != NULL)
			J->hooks.changed(J->hooks.arg);
	}
	jobend_notify(J, j);
	waiter_job_done(J, j->num, j->rec);
	expiry_arm(J);
	if (j->worker != NULL)
		j->worker->job = NULL;
	job_free(j);
}

/*
 * The job ends: recorded with the turn's commit (a finished job carries
 * its expiry, and its reaped worker's record goes), then jobend_forget().
 */
void
jobend_finish(struct jobs *J, struct job *j, enum job_status s,
    const char *error)
{
	pid_t	del = 0;

	job_unlist(J, j);
	j->counted = j->status;
	j->uncounted = 1;
	job_set_status(J, j, s);
	job_rec_finish(j->rec, s, error);
	if (j->worker != NULL) {
		del = j->worker->pid;
		j->worker->job = NULL;
		j->worker = NULL;
	}
	TAILQ_INSERT_TAIL(&J->ending, j, entry);
	turn_add(J, TURN_FINISH, j, del, 0, 0);
}

/*
 * Whether to shrink j where rc refused its end (last: the stop's try).  A
 * full disk may take it whole in a while, so that a passing ENOSPC does
 * not cost a finished job its results: it waits whole for
 * JOBEND_WHOLE_TRIES retries (about a minute), then shrinks, since freed
 * pages inside the file may still take a smaller record.
 */
static int
shrink_helps(const struct job *j, int rc, int last)
{
	if (j->shrunk || rc == STORE_EFAILED)
		return 0;
	return last || (rc != ENOSPC && rc != EDQUOT) ||
	    j->whole_tries >= JOBEND_WHOLE_TRIES;
}

/* j's end, with its worker's record deleted (job_store_growing). */
static int
save_ended(struct jobs *J, void *arg)
{
	struct job	*j = arg;

	return job_save(J, j, 0, j->del_worker);
}

int
jobend_save_unstored(struct jobs *J, struct job *j, int last)
{
	int	rc;

	/* A full map grows first, as for every other change. */
	rc = job_store_growing(J, j->ticket, save_ended, j);
	if ((rc == ENOSPC || rc == EDQUOT) && j->whole_tries < UCHAR_MAX)
		j->whole_tries++;
	if (rc != 0 && shrink_helps(j, rc, last)) {
		job_shrink(J, j, rc);
		rc = job_save(J, j, 0, j->del_worker);
	}
	return rc;
}

/* The end could not be stored with the turn (rc): smaller, or later. */
void
jobend_finish_alone(struct jobs *J, struct job *j, pid_t del, int rc)
{
	if (shrink_helps(j, rc, 0))
		job_shrink(J, j, rc);
	if ((rc = job_save(J, j, 0, del)) == 0) {
		jobend_forget(J, j);
		return;
	}
	/* Nobody hears of an end that is not stored. */
	if (rc == STORE_EFAILED)
		job_fatal_store(j->ticket, rc);
	j->del_worker = del;	/* its record goes with the end, later */
	TAILQ_INSERT_TAIL(&J->unstored, j, entry);
	jobend_store_blocked(J, j->ticket, rc);
}

/*
 * The store refused a change (it is full): start nothing new, and try
 * again in a while to record the ends that wait in J->unstored.
 */
void
jobend_store_blocked(struct jobs *J, const char *what, int rc)
{
	struct timeval	tv = { 0, 0 };

	if (rc == STORE_EFAILED)
		job_fatal_store(what, rc);
	J->store_blocked = 1;
	if (store_map_full(rc) && job_store_grow(J, what) == 0)
		goto arm;	/* at once: the map is larger now */
	/* One retry for all that the store refused meanwhile: one step. */
	if (evtimer_pending(J->retry_ev, NULL))
		return;
	J->retry_s = J->retry_s == 0 ? STORE_RETRY_S :
	    J->retry_s * 2 > STORE_RETRY_MAX_S ? STORE_RETRY_MAX_S :
	    J->retry_s * 2;
	tv.tv_sec = J->retry_s;
	/* Once per episode: a full store must not flood the log. */
	if (!J->retry_logged)
		log_warnx("%s: the store refused the change (%s); retrying "
		    "after %ds, then less and less often (at most every "
		    "%ds), quietly until it takes", what, store_strerror(rc),
		    J->retry_s, STORE_RETRY_MAX_S);
	else
		log_debug("%s: the store still refuses (%s); retrying in "
		    "%ds", what, store_strerror(rc), J->retry_s);
	J->retry_logged = 1;
arm:
	if (!evtimer_pending(J->retry_ev, NULL))
		evtimer_add(J->retry_ev, &tv);
}
