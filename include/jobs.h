/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBS_H
#define CMDGATE_JOBS_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"

/*
 * Jobs: cmdgate-protocol(7), Jobs.  The coordinator: recovery, the
 * scheduler's passes, submits, waits, cancels and the ends of jobs; a job
 * and the engine's state are in job.h.
 */

struct job;
struct jobs;
struct jobs_config;
struct jobs_hooks;

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
 * The editor flags changed: save them for a restart (STATE_DIR/
 * editor-flags), then jobs_schedule().  Not while stopping: the flags go
 * with the connections then, and the file keeps what they held, so that
 * after a restart reloads wait --editor-grace seconds for their holders to
 * report again.
 */
void		 jobs_editor_changed(struct jobs *);

/* Used by the methods. */
int		 jobs_cancel(struct jobs *, uint64_t num, json_object **,
		    struct rpc_error *);

#endif
