/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SUBMIT_H
#define CMDGATE_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"

/*
 * Submits and waits (cmdgate-protocol(7), Jobs).  The submits of one loop
 * turn are stored in one commit (group commit) at its end, each in a
 * nested transaction when one fails, so that it fails alone; then they are
 * queued, and each caller is told.  A waiter is told when its job ends,
 * or after its timeout.
 */

struct jobs;
struct submission;
struct worker;
struct waiter;

/* num stored (dedup: found by its idempotency key), or err (borrowed). */
typedef void	(*submit_done_fn)(void *arg, uint64_t num, int dedup,
		    struct rpc_error *err);
/* The job object (taken), or NULL with err (borrowed). */
typedef void	(*waiter_done_fn)(void *arg, json_object *job,
		    struct rpc_error *err);
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
/* Free every submit and waiter (their callers are gone). */
void		 submit_free_all(struct jobs *);

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
/* Job num ended: tell its waiters. */
void		 waiter_job_done(struct jobs *, uint64_t num);
/* Command index of job num had its first upstream answer result
 * (borrowed): tell its watchers. */
void		 waiter_job_answer(struct jobs *, uint64_t num, size_t index,
		    json_object *result);
/* What a waiter of job num is told: the full job object, or NULL with err
 * ("expired while it was waited for").  Caller puts. */
json_object	*waiter_view(struct jobs *, uint64_t num,
		    struct rpc_error *err);

#endif
