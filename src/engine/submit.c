/* SPDX-License-Identifier: ISC */
/*
 * Submits, stored in one commit per loop turn (group commit), and the
 * waiters of jobs.  The caller of each is told through its callback.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "engine.h"
#include "internal.h"
#include "log.h"
#include "options.h"
#include "store.h"
#include "ticket.h"
#include "tools.h"
#include "util.h"

/* A submit waiting for the end of the loop turn. */
struct submission {
	TAILQ_ENTRY(submission)	 entry;
	json_object		*rec;
	char			*idem;
	uint64_t		 notify_conn;
	uint64_t		 owner_conn;
	struct job		*job;	/* stored as new */
	uint64_t		 num;
	int			 dedup;
	struct jobs_error	 err;	/* JOBS_OK: none */
	submit_done_fn		 done;	/* NULL: its caller is gone */
	void			*arg;
};



struct submission *
submit_add(struct jobs *J, json_object *rec, char *idem, uint64_t notify_conn,
    submit_done_fn done, void *arg)
{
	struct submission	*s = xcalloc(1, sizeof(*s));

	s->rec = rec;
	s->idem = idem;
	s->notify_conn = notify_conn;
	s->done = done;
	s->arg = arg;
	if (TAILQ_EMPTY(&J->submits))
		jobs_turn_wake(J);
	TAILQ_INSERT_TAIL(&J->submits, s, entry);
	return s;
}

void
submit_set_owner(struct submission *s, uint64_t id)
{
	s->owner_conn = id;
}

void
submit_forget(struct submission *s)
{
	s->done = NULL;
}

static void
submission_free(struct submission *s)
{
	json_object_put(s->rec);
	free(s->idem);
	free(s);
}

/*
 * Store s in the open transaction: found by its idempotency key, or new
 * (s->job), or refused (s->err).  0, or -1 when the store failed it.
 * With nested, s has a nested transaction of its own, so that its failure
 * leaves the others' changes; without, a failure spoils the transaction.
 */
static int
submission_store(struct jobs *J, struct submission *s, int nested,
    size_t *added, int *full)
{
	json_object	*rec = s->rec;
	char		 ticket[TICKET_LEN];
	int		 rc;

	if (s->idem != NULL) {
		rc = store_idem_get(J->st, s->idem, &s->num);
		if (rc == 0) {
			s->dedup = 1;
			return 0;
		}
		if (rc != STORE_ENOTFOUND) {
			return jobs_fail(&s->err, JOBS_ESTORE, "the store "
			    "could not be read: %s", store_strerror(rc));
		}
	}
	if (J->store_full) {
		jobs_fail(&s->err, JOBS_ESTOREFULL, "%s",
		    store_strerror(STORE_EFULL));
		return 0;
	}
	if (J->nqueued + *added >= J->cfg.opt->max_queued) {
		jobs_fail(&s->err, JOBS_EQUEUEFULL, "%llu jobs are already "
		    "waiting (--max-queued); try again later",
		    (unsigned long long)J->cfg.opt->max_queued);
		return 0;
	}
	if (nested && (rc = store_begin(J->st)) != 0)
		goto fail;
	if ((rc = store_take_ticket(J->st, &s->num)) != 0)
		goto abort;
	ticket_format(ticket, sizeof(ticket), s->num);
	job_rec_set(rec, "ticket", ticket);
	job_rec_set(rec, "status", "queued");
	json_object_object_add(rec, "results", json_object_new_array());
	s->job = job_new(json_object_get(rec), s->num);
	if ((rc = job_put(J, s->job)) != 0 || (s->idem != NULL &&
	    (rc = store_idem_put(J->st, s->idem, s->num)) != 0)) {
		job_free(s->job);
		s->job = NULL;
		goto abort;
	}
	/* A nested commit that fails is gone, its parent kept. */
	if (nested && (rc = store_commit(J->st)) != 0) {
		job_free(s->job);
		s->job = NULL;
		goto fail;
	}
	s->job->notify_conn = s->notify_conn;
	s->job->owner_conn = s->owner_conn;
	if (J->hooks.changed != NULL)
		J->hooks.changed(J->hooks.arg);
	(*added)++;
	return 0;
abort:
	if (nested)
		store_abort(J->st);
fail:
	if (store_map_full(rc))
		*full = 1;
	return jobs_fail(&s->err, JOBS_ESTORE, "the job could not be "
	    "stored and was not queued: %s", store_strerror(rc));
}

/* Forget what submission_store() did to the submits of group. */
static void
group_reset(struct submissionlist *group)
{
	struct submission	*s;

	TAILQ_FOREACH(s, group, entry) {
		if (s->job != NULL)
			job_free(s->job);
		s->job = NULL;
		s->dedup = 0;
		memset(&s->err, 0, sizeof(s->err));
	}
}

/* Whether the jobs that group stores are instant reads only: held. */
static int
group_reads(struct submissionlist *group)
{
	struct submission	*s;

	TAILQ_FOREACH(s, group, entry)
		if (s->job != NULL && !job_instant_read(s->job))
			return 0;
	return 1;
}

/*
 * Store the submits of group in one transaction and commit it: 0, or the
 * commit's error.  The first try has no nested transactions (each costs
 * LMDB a large allocation); if one submit fails, the group is stored again
 * with them, so that it fails alone.  One that finds the map full has the
 * map grown, if it may, and the group goes again.  Bounded: the map
 * doubles up to --map-size-max, then the nested try is the last.
 */
static int
group_store(struct jobs *J, struct submissionlist *group, size_t *added)
{
	struct submission	*s;
	int			 nested = 0, may_grow = 1, full, rc;

	for (;;) {
		*added = 0;
		full = 0;
		if ((rc = store_begin(J->st)) != 0)
			return rc;
		TAILQ_FOREACH(s, group, entry)
			if (submission_store(J, s, nested, added, &full) == -1 &&
			    !nested)
				break;
		if (s == NULL && !(full && may_grow))
			return job_commit(J, group_reads(group));
		store_abort(J->st);
		group_reset(group);
		if (full && may_grow && job_store_grow(J, "a submit") == 0)
			continue;	/* the same again, in a larger map */
		if (full)
			may_grow = 0;
		if (s != NULL)
			nested = 1;
	}
}

/*
 * New jobs are refused above the store's high-water mark, so that the
 * jobs it holds can always finish, be cancelled and expire; said when it
 * starts and when it ends.
 */
static void
submit_check_room(struct jobs *J)
{
	int	full = store_room(J->st) == STORE_EFULL;

	if (full && !J->store_full)
		log_warnx("store: %d%% of its map is in use and it may not "
		    "grow (--map-size-max): new jobs are refused with "
		    "store_full until finished ones expire", STORE_FULL_PCT);
	else if (!full && J->store_full)
		log_info("store: room again: new jobs are taken");
	J->store_full = full;
}

size_t
submit_store_turn(struct jobs *J)
{
	struct submission	*s;
	size_t			 added = 0;
	int			 rc;

	if (TAILQ_EMPTY(&J->submits))
		return 0;	/* the turn ended for other news */
	TAILQ_CONCAT(&J->turn, &J->submits, entry);
	submit_check_room(J);
	rc = group_store(J, &J->turn, &added);
	if (store_map_full(rc) && job_store_grow(J, "a submit") == 0) {
		group_reset(&J->turn);
		rc = group_store(J, &J->turn, &added);
	}
	TAILQ_FOREACH(s, &J->turn, entry) {
		if (rc != 0 && (s->err.code == JOBS_OK || s->job != NULL))
			jobs_fail(&s->err, JOBS_ESTORE, "the job could not be "
			    "stored and was not queued: %s", store_strerror(rc));
		if (rc != 0 && s->job != NULL) {
			job_free(s->job);
			s->job = NULL;
		}
		if (s->job == NULL)
			continue;
		job_enqueue(J, s->job);
		J->count[JOB_QUEUED]++;
		log_debug("%s queued: %s, %zu commands", s->job->ticket,
		    tier_name(s->job->tier), s->job->ncmds);
	}
	if (rc != 0)
		log_warnx("store: %zu submits could not be stored: %s",
		    added, store_strerror(rc));
	return rc == 0 ? added : 0;
}

void
submit_answer_turn(struct jobs *J)
{
	struct submission	*s;

	struct job		*j;

	while ((s = TAILQ_FIRST(&J->turn)) != NULL) {
		TAILQ_REMOVE(&J->turn, s, entry);
		if (s->done != NULL)
			s->done(s->arg, s->num, s->dedup,
			    s->err.code != JOBS_OK ? &s->err : NULL);
		/* Answered: while queued, its record is the store's. */
		if (s->err.code == JOBS_OK && !s->dedup &&
		    (j = job_find(J, s->num)) != NULL)
			job_rec_drop(j);
		submission_free(s);
	}
}

void
submit_free_all(struct jobs *J)
{
	struct submission	*s;

	TAILQ_CONCAT(&J->turn, &J->submits, entry);
	while ((s = TAILQ_FIRST(&J->turn)) != NULL) {
		TAILQ_REMOVE(&J->turn, s, entry);
		submission_free(s);
	}
}
