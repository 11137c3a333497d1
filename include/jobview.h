/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBVIEW_H
#define CMDGATE_JOBVIEW_H

#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"

/*
 * What the methods and notifications show of jobs (cmdgate-protocol(7),
 * Jobs).  Each returns a new reference: caller puts.
 */

struct job;
struct jobs;

/* The job object of rec (borrowed), full or its summary; j is its live
 * job, NULL when it is over. */
json_object	*jobview_make(struct jobs *, json_object *rec, struct job *j,
		    int full);
/* The job object of job num, live or stored; NULL with *found 0 when no
 * job has it, or NULL with err filled when the store failed. */
json_object	*jobview_get(struct jobs *, uint64_t num, int full, int *found,
		    struct rpc_error *err);
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

#endif
