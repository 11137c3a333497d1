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

struct conn_pending;
struct server;
struct job;
struct jobs;

/* Open the store and recover (cmdgate-protocol(7), Durability): 0, or
 * an exit status. */
int		 jobs_open(struct server *);
void		 jobs_free(struct jobs *);
/* Stop: every running job's processes get SIGTERM, then SIGKILL. */
void		 jobs_shutdown(struct jobs *);
int		 jobs_idle(const struct jobs *);
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
/*
 * Submit a validated job record (taken) under idempotency key idem (taken;
 * NULL for none), answering req later.  The submits of one loop turn are
 * stored in one commit (group commit) at its end, each in a nested
 * transaction so that one that cannot be stored fails alone; then they
 * are queued and answered: async with the summary, else like wait_job.
 * Until then the connection reads no further request, so that answers
 * keep their order.
 */
struct submit_how {
	uint64_t	 notify_conn;	/* 0: no notifications */
	uint64_t	 timeout_s;	/* when not async */
	int		 async;
	int		 mcp;		/* tools/call: answer as MCP */
};
void		 jobs_submit(struct jobs *, struct rpc_req *, json_object *rec,
		    char *idem, const struct submit_how *);
int		 jobs_cancel(struct jobs *, uint64_t num, json_object **,
		    struct rpc_error *);
/* Answer p with the job once finished, or as it stands after timeout_s. */
void		 jobs_wait(struct jobs *, uint64_t num, struct conn_pending *p,
		    uint64_t timeout_s, int mcp);

#endif
