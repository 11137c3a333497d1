/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBS_H
#define CMDGATE_JOBS_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rpc.h"
#include "scheduler.h"
#include "tools.h"

/*
 * Jobs: cmdgate-protocol(7), Jobs.  The store holds every job; queued and
 * running ones are also kept here, with the workers that run them.  Every
 * change is committed before anyone is told (jobs_commit()).
 */

struct server;
struct store;
struct event;
struct bufferevent;

enum job_status {
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_DONE,
	JOB_FAILED,
	JOB_CANCELLED,
};
#define JOB_NSTATUS	5

struct worker;

struct job {
	TAILQ_ENTRY(job)	 entry;		/* queued or running list */
	uint64_t		 num;
	char			 ticket[24];
	enum job_status		 status;
	enum tier		 tier;
	int			 reload;
	unsigned		 busy;		/* BUSY_BIT()s of its tools */
	json_object		*rec;		/* the stored record */
	size_t			 ncmds;
	size_t			 completed;
	uint64_t		 notify_conn;	/* 0: no notifications */
	const char		*last_blocked;
	struct worker		*worker;
	int			 cancelling;
};
TAILQ_HEAD(joblist, job);

struct jobs;

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	struct jobs		*jobs;
	pid_t			 pid;
	pid_t			 tool_pgid;	/* 0 until a tool runs */
	unsigned		 busy;
	struct job		*job;		/* NULL: left by a past run */
	struct bufferevent	*events;	/* its JSON lines */
	struct bufferevent	*spec;		/* the spec going in */
	struct event		*kill_timer;
	struct event		*exit_ev;	/* past runs' workers: pidfd */
	int			 pidfd;
	char			*garbled;	/* why it was killed */
	long long		 starttime;	/* from /proc, clock ticks */
};
TAILQ_HEAD(workerlist, worker);

struct waiter;
TAILQ_HEAD(waiterlist, waiter);
struct submission;
TAILQ_HEAD(submissionlist, submission);

struct jobs {
	struct server		*srv;
	struct store		*st;
	struct joblist		 queued;
	struct joblist		 running;
	struct joblist		 unstored;	/* ended, end not yet stored */
	struct workerlist	 workers;
	struct waiterlist	 waiters;
	struct submissionlist	 submits;	/* for this turn's commit */
	size_t			 nqueued, nrunning, nworkers, norphans;
	size_t			 nqueued_beside_heavy;	/* instant, no reload */
	size_t			 nqueued_watched;	/* notify and reload */
	uint64_t		 count[JOB_NSTATUS];	/* in the store */
	struct event		*expire_ev;
	struct event		*sigchld_ev;
	struct event		*sync_ev;
	struct event		*group_ev;	/* commits this turn's submits */
	struct event		*retry_ev;	/* the store refused a change */
	int			 store_blocked;	/* start nothing until it takes */
	int			 retry_s;	/* backoff of retry_ev, 0: none */
	int			 retry_logged;	/* said once until it takes */
	int			 expire_retry_s;	/* backoff of expire_ev */
	int			 store_full;	/* new jobs refused (store_room) */
	struct sched_busy	 editor_saved;	/* as in STATE_DIR/editor-flags */
	struct sched_busy	 editor_restored; /* held before a restart */
	struct event		*grace_ev;	/* ends editor_restored */
	int			 scheduling, reschedule;
};

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

const char	*job_status_name(enum job_status);
/* "t-000042" -> 42; -1 when not a ticket. */
int		 job_parse_ticket(const char *, uint64_t *);

/* Used by the methods. */
struct job	*jobs_find(struct jobs *, uint64_t num);
/* Not over yet, or over with its end not yet stored. */
int		 jobs_pending(struct jobs *, uint64_t num);
/* The job object of cmdgate-protocol(7) (full) or its summary; caller puts. */
json_object	*jobs_view(struct jobs *, uint64_t num, int full, int *found,
		    struct rpc_error *);
json_object	*job_view(struct jobs *, struct job *, int full);
/* The summary of job num from its stored record rec (borrowed); a live
 * job's own state wins.  Caller puts. */
json_object	*jobs_view_record(struct jobs *, uint64_t num, json_object *rec);
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
void		 jobs_wait(struct jobs *, uint64_t num, struct rpc_pending *p,
		    uint64_t timeout_s, int mcp);
/* The MCP tool result that carries job (taken).  Caller puts. */
json_object	*jobs_mcp_result(json_object *job);
void		 jobs_busy(struct jobs *, struct sched_busy *);
const char	*jobs_blocked_by(struct jobs *, const struct job *);

#endif
