/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBRUN_H
#define CMDGATE_JOBRUN_H

#include <stddef.h>

#include <json-c/json.h>

#include "job.h"

/*
 * The run of a job: whether it may start, what its worker is given, and
 * how it ended.  The coordinator (jobs.c) acts on the answers.
 */

struct worker;

/*
 * A queued job's tools as the table has them now: a tool that a SIGHUP
 * removed or disabled fails the job instead of running.  0, or -1 with why.
 */
int		 jobrun_tools_ok(struct jobs *, struct job *, char *why,
		    size_t len);
/*
 * Whether the table now makes a command of queued job j (its record
 * loaded) a reload that it was not when j was queued (a SIGHUP): j then
 * becomes one, its record and its class, to wait for the reload guard as
 * if it were submitted now.  1 when it changed.
 */
int		 jobrun_reload_now(struct jobs *, struct job *);
/* The state dir, absolute (in buf, PATH_MAX bytes), or as given. */
const char	*jobrun_state_dir(struct jobs *, char *buf, size_t len);
/* The spec j's worker reads on its stdin.  Caller puts. */
json_object	*jobrun_spec(struct jobs *, struct job *);
/*
 * How j ended, its worker w reaped with wait status: why filled, empty
 * when the job is done.
 */
enum job_status	 jobrun_outcome(struct job *, struct worker *, int status,
		    char *why, size_t len);

#endif
