/* SPDX-License-Identifier: ISC */
/*
 * What the methods and notifications show of jobs: the job object of
 * cmdgate-protocol(7), its summary, and the queue.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "policy.h"
#include "store.h"
#include "tools.h"

#define AHEAD_MAX	50	/* entries of "ahead" in a job object */

const char *
jobview_blocked_by_queued(struct jobs *J)
{
	struct sched_busy	b;

	job_busy(J, &b);
	return sched_guard(&b);
}

const char *
jobview_blocked_by(struct jobs *J, const struct job *j)
{
	if (!j->reload || j->status != JOB_QUEUED)
		return NULL;
	return jobview_blocked_by_queued(J);
}

static json_object *
ahead_entry(json_object *rec)
{
	json_object	*a = json_object_new_object();

	job_copy(a, rec, "ticket");
	job_copy(a, rec, "agent");
	job_copy(a, rec, "label");
	job_copy(a, rec, "tier");
	job_copy(a, rec, "status");
	return a;
}

/* position and ahead of a queued job. */
static void
view_queue_place(struct jobs *J, struct job *j, json_object *o, int full)
{
	struct job	*k;
	json_object	*ahead, *a;

	json_object_object_add(o, "position",
	    json_object_new_int64((int64_t)job_position(J, j)));
	if (!full)
		return;
	ahead = json_object_new_array();
	/* The heavy job as stored: running, whatever its end made of it. */
	if ((k = job_heavy_stored(J)) != NULL) {
		a = ahead_entry(k->rec);
		json_object_object_add(a, "status", json_object_new_string(
		    job_status_name(JOB_RUNNING)));
		json_object_array_add(ahead, a);
	}
	/* The first AHEAD_MAX keep their records: they start next. */
	TAILQ_FOREACH(k, &J->queued, entry) {
		if (k == j || json_object_array_length(ahead) >= AHEAD_MAX)
			break;
		if (job_rec_load(J, k) != 0)
			continue;	/* said in the log */
		json_object_array_add(ahead, ahead_entry(k->rec));
	}
	json_object_object_add(o, "ahead", ahead);
}

/*
 * A running job's results as the store has them: one whose commit is
 * still to come (or failed) is not shown (protocol section 4).
 */
static void
view_stored_results(json_object *o, size_t nstored)
{
	json_object	*res = job_rec_get(o, "results"), *keep;
	size_t		 i;

	if (!json_object_is_type(res, json_type_array) ||
	    json_object_array_length(res) <= nstored)
		return;
	keep = json_object_new_array_ext((int)nstored);
	for (i = 0; i < nstored; i++)
		json_object_array_add(keep,
		    json_object_get(json_object_array_get_idx(res, i)));
	json_object_object_add(o, "results", keep);
}

/* The names of the tools of a job's commands, in order. */
static json_object *view_tools(json_object *);

/*
 * The running jobs whose tools hold the busy label flag, for a job it
 * blocks: [{ticket, agent, tools}].  A client or the editor probe may
 * hold it too (server_status and cmdgate status say which).
 */
static json_object *
view_held_by(struct jobs *J, const char *flag)
{
	json_object	*list = json_object_new_array(), *h;
	struct job	*k;
	unsigned	 bit;

	if (strcmp(flag, busy_name(BUSY_TESTS_RUNNING)) == 0)
		bit = SCHED_BUSY_BIT(BUSY_TESTS_RUNNING);
	else if (strcmp(flag, busy_name(BUSY_COMPILING)) == 0)
		bit = SCHED_BUSY_BIT(BUSY_COMPILING);
	else
		return list;		/* editor_busy: no tool holds it */
	TAILQ_FOREACH(k, &J->running, entry) {
		if (!(k->busy & bit) || k->rec == NULL)
			continue;
		h = json_object_new_object();
		job_copy(h, k->rec, "ticket");
		job_copy(h, k->rec, "agent");
		json_object_object_add(h, "tools",
		    view_tools(job_rec_get(k->rec, "commands")));
		job_copy(h, k->rec, "started_at");
		json_object_array_add(list, h);
	}
	return list;
}

/* The names of the tools of a job's commands, in order. */
static json_object *
view_tools(json_object *cmds)
{
	json_object	*list = json_object_new_array(), *t;
	size_t		 i, n;

	n = json_object_is_type(cmds, json_type_array) ?
	    json_object_array_length(cmds) : 0;
	for (i = 0; i < n; i++)
		if (json_object_object_get_ex(json_object_array_get_idx(cmds,
		    i), "tool", &t))
			json_object_array_add(list, json_object_get(t));
	return list;
}

json_object *
jobview_make(struct jobs *J, json_object *rec, struct job *j, int full)
{
	static const char *summary[] = { "ticket", "status", "tier",
	    "causes_reload", "agent", "label", "created_at", NULL };
	static const char *more[] = { "atomic", "started_at", "finished_at",
	    "results", "error", "failed_at_command", "rolled_back", NULL };
	json_object	*o = json_object_new_object(), *cmds, *c, *list, *p;
	const char	*status = json_object_get_string(job_rec_get(rec,
	    "status"));
	json_object	*res;
	const char	*bb = j != NULL ? jobview_blocked_by(J, j) : NULL;
	size_t		 i, n;

	for (i = 0; summary[i] != NULL; i++)
		job_copy(o, rec, summary[i]);
	json_object_object_add(o, "tools",
	    view_tools(job_rec_get(rec, "commands")));
	if (j != NULL && j->status == JOB_QUEUED)
		view_queue_place(J, j, o, full);
	json_object_object_add(o, "blocked_by", bb != NULL ?
	    json_object_new_string(bb) : NULL);
	if (!full)
		return o;
	if (bb != NULL)
		json_object_object_add(o, "held_by", view_held_by(J, bb));
	for (i = 0; more[i] != NULL; i++)
		job_copy(o, rec, more[i]);
	if (j != NULL && j->status == JOB_RUNNING)
		view_stored_results(o, j->nstored);
	/* Any stored shape is shown as it is, never trusted (a finished
	 * record is not checked at start). */
	cmds = job_rec_get(rec, "commands");
	n = json_object_is_type(cmds, json_type_array) ?
	    json_object_array_length(cmds) : 0;
	list = json_object_new_array();
	for (i = 0; i < n; i++) {
		c = json_object_new_object();
		job_copy(c, json_object_array_get_idx(cmds, i), "tool");
		job_copy(c, json_object_array_get_idx(cmds, i), "tier");
		job_copy(c, json_object_array_get_idx(cmds, i),
		    "causes_reload");
		json_object_array_add(list, c);
	}
	json_object_object_add(o, "commands", list);
	p = json_object_new_object();
	res = job_rec_get(o, "results");
	json_object_object_add(p, "completed", json_object_new_int64((int64_t)
	    (json_object_is_type(res, json_type_array) ?
	    json_object_array_length(res) : 0)));
	json_object_object_add(p, "total", json_object_new_int64((int64_t)n));
	json_object_object_add(o, "progress", p);
	if (status != NULL && strcmp(status, "queued") == 0)
		json_object_object_add(o, "poll_interval_s",
		    json_object_new_int(2));
	else if (status != NULL && strcmp(status, "running") == 0)
		json_object_object_add(o, "poll_interval_s",
		    json_object_new_int(1));
	return o;
}

json_object *
jobview_record(struct jobs *J, uint64_t num, json_object *rec)
{
	struct job	*j = job_find(J, num);

	/* A queued job's record is this stored one. */
	return jobview_make(J, j != NULL && j->rec != NULL ? j->rec : rec, j,
	    0);
}

json_object *
jobview_get(struct jobs *J, uint64_t num, int full, int *found,
    struct jobs_error *err)
{
	struct job	*j;
	json_object	*rec, *o;
	char		*json, status;
	int		 rc;

	*found = 0;
	if ((j = job_find(J, num)) != NULL) {
		if ((rec = job_rec_ref(J, j, &rc)) == NULL) {
			jobs_fail(err, JOBS_ESTORE, "the store could not be "
			    "read: %s", store_strerror(rc));
			return NULL;
		}
		*found = 1;
		o = jobview_make(J, rec, j, full);
		json_object_put(rec);
		return o;
	}
	if ((rc = store_job_get(J->st, num, &status, &json)) ==
	    STORE_ENOTFOUND)
		return NULL;
	if (rc != 0) {
		jobs_fail(err, JOBS_ESTORE, "the store could not be read: %s",
		    store_strerror(rc));
		return NULL;
	}
	rc = jstrict_parse_str(json, &rec);
	free(json);
	if (rc != 0) {
		jobs_fail(err, JOBS_EBADRECORD, "the stored record of this "
		    "job cannot be read: %s", jstrict_strerror(rc));
		return NULL;
	}
	*found = 1;
	o = jobview_make(J, rec, NULL, full);
	json_object_put(rec);
	return o;
}

json_object *
jobview_note(struct jobs *J, struct job *j)
{
	json_object	*p = json_object_new_object(), *v, *rec;
	int		 rc;

	if ((rec = job_rec_ref(J, j, &rc)) == NULL) {
		/* Said in the log; the note still names the job. */
		json_object_object_add(p, "ticket",
		    json_object_new_string(j->ticket));
		json_object_object_add(p, "status", json_object_new_string(
		    job_status_name(j->status)));
		return p;
	}
	v = jobview_make(J, rec, j, 1);
	json_object_put(rec);
	job_copy(p, v, "ticket");
	job_copy(p, v, "status");
	job_copy(p, v, "blocked_by");
	job_copy(p, v, "progress");
	json_object_put(v);
	return p;
}

struct queue_count {
	size_t		 queued, running, smooth;
	const char	*heavy;
};

static void
queued_count(struct job *j, void *arg)
{
	(void)j;
	((struct queue_count *)arg)->queued++;
}

static void
queue_count(struct job *j, void *arg)
{
	struct queue_count	*q = arg;

	q->running++;
	if (j->tier == TIER_HEAVY)
		q->heavy = j->ticket;
	else if (j->tier == TIER_SMOOTH)
		q->smooth++;
}

json_object *
jobview_queue(struct jobs *J)
{
	struct queue_count	 q = { 0, 0, 0, NULL };
	struct sched_busy	 b;
	json_object		*r;

	r = json_object_new_object();
	/* As stored: a job whose end is not stored yet is as it was. */
	job_foreach_stored(J, JOB_QUEUED, queued_count, &q);
	job_foreach_stored(J, JOB_RUNNING, queue_count, &q);
	json_object_object_add(r, "queued",
	    json_object_new_int64((int64_t)(J->nqueued + q.queued)));
	json_object_object_add(r, "running",
	    json_object_new_int64((int64_t)q.running));
	json_object_object_add(r, "heavy_active", q.heavy != NULL ?
	    json_object_new_string(q.heavy) : NULL);
	json_object_object_add(r, "smooth_in_flight",
	    json_object_new_int64((int64_t)q.smooth));
	json_object_object_add(r, "workers_alive",
	    json_object_new_int64((int64_t)J->W.nworkers));
	job_busy(J, &b);
	json_object_object_add(r, "busy", edflags_json(&b));
	return r;
}

void
jobview_why_held(struct jobs *J, uint64_t num, const char *ticket,
    char *why, size_t len)
{
	struct job	*j = job_find(J, num), *k;
	const char	*bb;

	if (j == NULL || j->status == JOB_RUNNING) {
		snprintf(why, len, "%s is running", ticket);
		return;
	}
	if ((bb = jobview_blocked_by(J, j)) != NULL) {
		snprintf(why, len, "%s is queued: the reload guard holds it "
		    "while %s (blocked_by)", j->ticket, bb);
		return;
	}
	if ((k = TAILQ_PREV(j, joblist, entry)) != NULL) {
		snprintf(why, len, "%s is queued behind %s", j->ticket,
		    k->ticket);
		return;
	}
	if ((k = job_heavy_stored(J)) != NULL) {
		snprintf(why, len, "%s is queued behind %s (running)",
		    j->ticket, k->ticket);
		return;
	}
	snprintf(why, len, "%s is queued: waiting for a free worker "
	    "(--max-workers)", j->ticket);
}
