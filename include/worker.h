/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WORKER_H
#define CMDGATE_WORKER_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "child.h"
#include "forksrv.h"

/*
 * Worker processes (cmdgate-worker, one per running job): started,
 * fed their spec, read, signalled and reaped here, and adopted after a
 * restart.  What they report goes to the engine through worker_hooks;
 * a job is only a pointer here.
 */

struct event;
struct event_base;
struct bufferevent;
struct evbuffer;
struct job;
struct workers;

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	struct workers		*W;
	pid_t			 pid;
	pid_t			 tool_pgid;	/* 0 while no tool runs */
	unsigned		 busy;
	struct job		*job;		/* NULL: left by a past run */
	size_t			 next_index;	/* of the next event */
	struct child		 child;		/* its pipes, its grace */
	int			 spec_fd, events_fd;	/* until worker_run */
	struct event		*exit_ev;	/* past runs' workers: pidfd */
	int			 pidfd;
	char			*garbled;	/* why it was killed */
	long long		 starttime;	/* from /proc, clock ticks */
	int			 recorded;	/* its record was put */
	int			 reaped;	/* its pid is no longer its */
};
TAILQ_HEAD(workerlist, worker);

/* Called from inside the worker's events or SIGCHLD; w is borrowed. */
struct worker_hooks {
	void	*arg;
	/* w's job (not NULL) started a tool, in group w->tool_pgid. */
	void	(*started)(void *arg, struct worker *w);
	/* w's job (not NULL) finished a command with res (borrowed): 0, or
	 * -1 once the hook has called worker_garbled(). */
	int	(*result)(void *arg, struct worker *w, json_object *res);
	/* w exited (status as waitpid's; 0 for a past run's); freed next. */
	void	(*exited)(void *arg, struct worker *w, int status);
	/* After every reap of one turn. */
	void	(*reaped)(void *arg);
	/* A child that is no worker (the editor probe) was reaped: 1 when
	 * the hook knew it, else 0 (then it is logged as unknown). */
	int	(*other)(void *arg, pid_t pid, int status);
	/* w's job (not NULL) had the first upstream answer res (borrowed)
	 * of its awaited command w->next_index; nothing is stored. */
	void	(*answer)(void *arg, struct worker *w, json_object *res);
	/* w's job (not NULL) had a progress or log event ev (borrowed,
	 * checked) of its command w->next_index; nothing is stored. */
	void	(*note)(void *arg, struct worker *w, json_object *ev);
};

struct workers {
	struct workerlist	 list;
	size_t			 nworkers;	/* exiting ones too */
	struct worker		*spare;		/* not in nworkers; NULL: none */
	size_t			 norphans;	/* left by a past run */
	struct event_base	*base;
	const char		*path;		/* of cmdgate-worker */
	char			**env;
	uint64_t		 kill_grace;	/* seconds */
	size_t			 event_max;	/* bytes of one event line */
	struct event		*sigchld_ev;
	struct worker_hooks	 hooks;
	struct forksrv		 fs;		/* forks workers */
};

/* 0, or -1 when SIGCHLD cannot be watched. */
int		 workers_init(struct workers *, struct event_base *,
		    const char *path, uint64_t kill_grace, size_t event_max,
		    const struct worker_hooks *);
void		 workers_free(struct workers *);
void		 workers_kill_all(struct workers *, int sig);
/* The BUSY_BIT()s of every live worker's tools. */
unsigned	 workers_busy_bits(const struct workers *);

/* A worker waiting for worker_run() or worker_abort(): the spare if
 * there is one, else one started now.  0, or an errno. */
int		 worker_spawn(struct workers *, struct worker **);
/*
 * The spare: a worker started ahead of need, waiting for its spec (no
 * record, not in nworkers until worker_spawn() takes it; never given a
 * second job).  Start one if there is none: 0, or an errno.  Retire it:
 * SIGTERM and the end of its spec pipe; it exits 0 and is reaped as a
 * job-less worker (in nworkers until then).
 */
int		 worker_spare_start(struct workers *);
void		 worker_spare_retire(struct workers *);
/* Its job could not start: SIGKILL; SIGCHLD reaps it as job-less. */
void		 worker_abort(struct worker *);
/* Feed w its spec (borrowed) and read its events. */
void		 worker_run(struct worker *, json_object *spec);
/* Signal w; SIGKILL reaches the tool's process group too. */
void		 worker_kill(struct worker *, int sig);
/* Take on worker pid of a past run (its stored record rec, borrowed) and
 * stop it: 0, or -1 when it is long gone. */
int		 worker_adopt(struct workers *, pid_t, json_object *rec);
/*
 * What w wrote, in: each whole line is an event, told through the hooks
 * until one is garbled (then in is drained); a partial line stays in in
 * unless it passes event_max.  Its pipe's callbacks call it; the fuzzer
 * feeds it bytes.
 */
void		 worker_read(struct worker *, struct evbuffer *in);
/* w said something wrong (why): it is killed, its output ignored. */
void		 worker_garbled(struct worker *, const char *why);
/* The stored record of w, running ticket (NULL: none).  Caller puts. */
json_object	*worker_record(const struct worker *, const char *ticket);

#endif
