/* SPDX-License-Identifier: ISC */
/*
 * Recovery at start (cmdgate-protocol(7), Durability): the queued jobs
 * are queued again, those that ran fail as interrupted, a damaged record
 * fails alone, and the workers of the last run are adopted and stopped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "jstrict.h"
#include "log.h"
#include "proc.h"
#include "store.h"
#include "ticket.h"
#include "util.h"

struct load_ctx {
	struct jobs	*J;
	int		 rc;
	size_t		 interrupted;
	size_t		 damaged;	/* records replaced: load_damaged() */
};

/*
 * The record that replaces one nobody can use: failed, with what could be
 * kept of old (agent, label, created_at; old may be NULL) and why.  One
 * bad record never costs the rest of the queue.
 */
static json_object *
damaged_rec(uint64_t num, json_object *old, const char *why, const char *when)
{
	json_object	*rec = json_object_new_object();
	char		 ts[UTIL_TIMESTAMP_LEN], ticket[TICKET_LEN], err[512];

	util_timestamp(ts, util_now_ms());
	ticket_format(ticket, sizeof(ticket), num);
	job_rec_set(rec, "ticket", ticket);
	job_rec_set(rec, "status", job_status_name(JOB_FAILED));
	job_rec_set(rec, "tier", "instant");
	json_object_object_add(rec, "causes_reload",
	    json_object_new_boolean(0));
	job_rec_set(rec, "agent", job_rec_string(old, "agent", NULL) ?
	    json_object_get_string(job_rec_get(old, "agent")) : "unknown");
	job_rec_set(rec, "label", job_rec_string(old, "label", NULL) ?
	    json_object_get_string(job_rec_get(old, "label")) : "");
	job_rec_set(rec, "created_at", job_rec_string(old, "created_at", NULL) ?
	    json_object_get_string(job_rec_get(old, "created_at")) : ts);
	job_rec_set(rec, "finished_at", ts);
	json_object_object_add(rec, "commands", json_object_new_array());
	json_object_object_add(rec, "results", json_object_new_array());
	snprintf(err, sizeof(err), "damaged record: the store's record of "
	    "this job could not be read %s (%s); the job ends, the rest "
	    "of the queue is kept", when, why);
	job_rec_set(rec, "error", err);
	log_warnx("%s: %s", ticket, err);
	return rec;
}

/* A record recovery cannot use: failed in its place (damaged_rec()). */
static int
load_damaged(struct load_ctx *lc, uint64_t num, json_object *old,
    const char *why)
{
	struct jobs	*J = lc->J;
	struct job	*j;
	int		 rc;

	j = job_new(damaged_rec(num, old, why, "at start"), num);
	j->status = JOB_FAILED;
	J->count[JOB_FAILED]++;
	lc->damaged++;
	rc = job_put(J, j);
	job_free(j);
	return rc;
}

json_object *
recover_damaged(struct jobs *J, struct job *j, const char *when)
{
	json_object	*old = NULL, *rec;
	const char	*bad = NULL;
	char		*json, status, why[128];
	int		 rc;

	if ((rc = store_job_get(J->st, j->num, &status, &json)) != 0) {
		snprintf(why, sizeof(why), "%s", store_strerror(rc));
		bad = why;
	} else {
		if ((rc = jstrict_parse_str(json, &old)) != 0) {
			snprintf(why, sizeof(why), "not JSON: %s",
			    jstrict_strerror(rc));
			bad = why;
			old = NULL;
		} else
			bad = job_rec_malformed(old);
		free(json);
	}
	rec = damaged_rec(j->num, old, bad != NULL ? bad : "unreadable", when);
	json_object_put(old);
	return rec;
}

int
recover_check_start(struct jobs *J, struct job *j)
{
	json_object	*rec;
	char		 err[512];

	if (j->rec != NULL)
		return 0;	/* read and checked (job_rec_ref()) */
	rec = recover_damaged(J, j, "when it was to start");
	snprintf(err, sizeof(err), "%s", json_object_get_string(
	    job_rec_get(rec, "error")));
	j->rec = rec;
	job_rec_counts(j);
	jobend_finish(J, j, JOB_FAILED, err);
	/* The queue changed, and no worker will end to say so. */
	J->reschedule = 1;
	return -1;
}

/* Whether status packs a queued job's class: its record is not read. */
static int
packed(char status)
{
	enum tier	t;
	unsigned	b;
	int		r;

	return job_unpack_status(status, &t, &r, &b) == 0;
}

static int
load_job(void *arg, uint64_t num, char status, const char *json)
{
	struct load_ctx	*lc = arg;
	struct jobs	*J = lc->J;
	struct job	*j;
	json_object	*rec = NULL;
	const char	*bad = NULL;
	int		 st = job_status_from_char(status), rc, reload;
	char		 ts[UTIL_TIMESTAMP_LEN], why[128];
	enum tier	 tier;
	unsigned	 busy;

	/*
	 * A finished record is only counted: reading every one would make
	 * the start as slow as the store is large.  One that is damaged is
	 * found, and said so, when a client reads it.
	 */
	if (st >= JOB_DONE) {
		J->count[st]++;
		return 0;
	}
	/*
	 * A queued job's class is in its status byte: it is queued without
	 * reading the record, which is read (and checked) when it starts.
	 */
	if (job_unpack_status(status, &tier, &reload, &busy) == 0) {
		J->count[JOB_QUEUED]++;
		job_enqueue(J, job_new_packed(num, tier, reload, busy));
		return 0;
	}
	if ((rc = jstrict_parse_str(json, &rec)) != 0) {
		snprintf(why, sizeof(why), "not JSON: %s",
		    jstrict_strerror(rc));
		bad = why;
	} else if (st < 0)
		bad = "an unknown status";
	else
		bad = job_rec_malformed(rec);
	if (bad != NULL) {
		rc = load_damaged(lc, num, rec, bad);
		json_object_put(rec);
		return rc;
	}
	J->count[st]++;
	j = job_new(rec, num);
	j->status = st;
	if (st == JOB_QUEUED) {
		job_enqueue(J, j);
		job_rec_drop(j);	/* the store keeps it */
		return 0;
	}
	/* It ran when the broker stopped: it is over, and failed. */
	job_set_status(J, j, JOB_FAILED);
	util_timestamp(ts, util_now_ms());
	job_rec_set(j->rec, "finished_at", ts);
	job_rec_set(j->rec, "error", "interrupted by broker restart: the "
	    "broker stopped while this job ran");
	lc->interrupted++;
	lc->rc = job_put(J, j);
	job_free(j);
	return lc->rc;
}

static int
load_worker(void *arg, int pid, const char *json)
{
	struct load_ctx	*lc = arg;
	struct jobs	*J = lc->J;
	json_object	*rec = NULL;
	int		 gone;

	if (jstrict_parse_str(json, &rec) != 0)
		rec = NULL;	/* unreadable: taken as long gone */
	gone = worker_adopt(&J->W, pid, rec) == -1;
	json_object_put(rec);
	return gone ? store_worker_del(J->st, pid) : 0;
}

int
recover_store(struct jobs *J, size_t *interrupted, size_t *damaged)
{
	struct load_ctx	 lc = { J, 0, 0, 0 };
	int		 rc;

	if ((rc = store_begin(J->st)) != 0 ||
	    (rc = store_jobs_scan(J->st, packed, load_job, &lc)) != 0 ||
	    (rc = store_workers_each(J->st, load_worker, &lc)) != 0 ||
	    (rc = store_commit(J->st)) != 0)
		return rc;
	/* Synced before anyone is told (--sync group syncs per turn). */
	if (J->cfg.opt->sync == SYNC_GROUP && (rc = store_sync(J->st)) != 0)
		return rc;
	*interrupted = lc.interrupted;
	*damaged = lc.damaged;
	return 0;
}
