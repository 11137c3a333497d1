/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PROC_H
#define CMDGATE_PROC_H

/*
 * The worker processes (src/proc/): spawn, fork server, launch.
 */

#include <sys/queue.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "wire.h"

struct bufferevent;
struct evbuffer;
struct event;
struct event_base;
struct job;
struct workers;

/* child.c */

/*
 * A cmdgate-worker process as the broker holds it, a job's worker
 * (worker.c) or the editor probe (engine/edprobe.c): while it runs, its two
 * pipes (include/wire.h), the spec going in and its JSON lines coming
 * out, and the grace it has from its SIGTERM to its SIGKILL.  The
 * process itself, how it is signalled and reaped, is its owner's.
 */

/* What the owner hears, with the arg given to child_init(). */
struct child_hooks {
	/* The child wrote in; eof: at the end of its pipe, which is no
	 * longer read (a line it began is still in in). */
	void	(*read)(void *arg, struct evbuffer *in, int eof);
	/* Its spec could not be written: it is gone.  May be NULL. */
	void	(*spec_lost)(void *arg);
	/* The grace of child_grace() passed. */
	void	(*late)(void *arg);
};

struct child {
	struct event_base	 *base;
	struct bufferevent	 *events;	/* its lines; NULL: closed */
	struct bufferevent	 *spec;		/* until written whole */
	struct event		 *grace;
	const struct child_hooks *hooks;
	void			 *arg;
};

/* A child with no pipes yet; hooks and arg borrowed for its life. */
void	child_init(struct child *, struct event_base *,
	    const struct child_hooks *, void *arg);
/* Close its pipes, and stop and free its grace timer. */
void	child_free(struct child *);
/*
 * It runs: spec_fd and events_fd (the broker's ends, taken) become its
 * pipes.  spec (borrowed) is written from the next loop turn and its
 * pipe closed once written whole, the child's end of file; what it
 * writes goes to the read hook.
 */
void	child_start(struct child *, int spec_fd, int events_fd,
	    json_object *spec);
/* Write msg (borrowed) to it, one line on its event socket: the answer
 * to its WIRE_EV_CALL.  Nothing when its socket is closed. */
void	child_reply(struct child *, json_object *msg);
/*
 * The child exited: all it wrote is in its pipe now.  What it wrote and
 * was not yet heard (the read hook's buffer emptied), or NULL when its
 * pipe is closed.  Caller frees.
 */
struct evbuffer	*child_rest(struct child *);
/* Hear no more of it: its pipe is not read any more. */
void	child_mute(struct child *);
/* Close the pipes still open. */
void	child_close(struct child *);
/* The late hook in seconds from now, unless it is already due. */
void	child_grace(struct child *, uint64_t seconds);
/* No late hook (the child is gone). */
void	child_grace_stop(struct child *);
/*
 * Each whole line of in (taken out of it) to line(arg, line, len) until
 * it returns -1: 0; -1 when line stopped; 1 when what is left in in, a
 * line begun, is over max bytes.
 */
int	child_lines(struct evbuffer *in, size_t max,
	    int (*line)(void *arg, const char *line, size_t len), void *arg);

/* forksrv.c */

/*
 * The fork server (cmdgate-worker --forker): exec'd once, it forks each
 * new worker, which costs a fork of a small process instead of an exec.
 * The broker is a child subreaper, so the worker is the broker's child
 * as a spawned one is.  While there is no fork server (not ready yet,
 * gone, or silent), launch_worker() spawns workers as before; a fork
 * server that is gone is started again after FORKSRV_RETRY_S seconds,
 * unless FORKSRV_TRIES in a row ended before they were ready.
 */
#define FORKSRV_RETRY_S		5
#define FORKSRV_TRIES		3	/* starts in a row that never got ready */
#define FORKSRV_REPLY_MS	2000	/* a fork's answer, at most */

struct forksrv {
	struct event_base	*base;
	const char		*path;		/* of cmdgate-worker */
	char			**env;
	pid_t			 pid;		/* 0: none */
	int			 fd;		/* its socket; -1: none */
	int			 ready;		/* it said hello */
	int			 failing;	/* said so once */
	int			 never;		/* none for good */
	int			 unready;	/* starts since the last ready */
	uint64_t		 forked;	/* workers it forked */
	uint64_t		 twice;		/* of them, forked twice */
	struct event		*ev;		/* its socket: hello or end */
	struct event		*retry_ev;
};

/* Start it (and make the broker a child subreaper). */
void	forksrv_init(struct forksrv *, struct event_base *, const char *path,
	    char **env);
/* Stop it: the end of its socket; it exits. */
void	forksrv_free(struct forksrv *);
/*
 * A worker from the fork server, as launch_worker() gives one: 0, or -1
 * when there is no fork server to ask (the caller spawns one itself).
 */
int	forksrv_fork(struct forksrv *, pid_t *pid, int *spec, int *events);
/*
 * For server_status: {"pid": its pid, null while it is not ready,
 * "workers_forked": N, "workers_forked_twice": M}, or NULL when the
 * broker has none (it could not be a child subreaper).  Caller puts.
 */
json_object	*forksrv_json(const struct forksrv *);
/* pid was reaped: 1 when it was the fork server. */
int	forksrv_reaped(struct forksrv *, pid_t pid, int status);

/* launch.c */

/*
 * Starting worker processes.  The worker is its own program,
 * cmdgate-worker: in the build tree next to the broker's (so the broker
 * runs uninstalled), else in LIBEXECDIR.
 */

/* Find the worker: 0 and *path (caller frees), or -1 with err. */
int	launch_find_worker(char **path, char *err, size_t errlen);

/*
 * The environment workers and their tools get: PATH (the broker's, or a
 * default), and HOME, USER, LOGNAME, LANG, LC_ALL, TZ and TMPDIR when set;
 * nothing else.  NULL-terminated; caller frees with launch_env_free().
 */
char	**launch_env(void);
void	  launch_env_free(char **);

/*
 * Start the worker with posix_spawn: its own process group, signals
 * reset, stdin /dev/null, stdout a socket whose other end is *events, fd 3 a
 * pipe whose write end is *spec, stderr the broker's.  Both ends returned
 * are non-blocking and close-on-exec.  0, or an errno value.
 */
int	  launch_worker(const char *path, char **env, pid_t *pid, int *spec,
	      int *events);
/* A worker's spec pipe and event socket, close-on-exec; the broker's
 * ends (sp[1], ev[0]) non-blocking.  0, or an errno value. */
int	  launch_pipes(int sp[2], int ev[2]);
/*
 * Start the fork server, "path --forker", as a worker is started but with
 * no pipes: descriptor 3 is a SOCK_SEQPACKET socket whose other end is
 * *sock (close-on-exec, blocking).  0, or an errno value.
 */
int	  launch_forker(const char *path, char **env, pid_t *pid, int *sock);
/*
 * Remember RLIMIT_NOFILE's soft limit before the broker raises its own
 * (call it first); launch_nofile() gives it back, -1 when unknown.
 * Workers set it again for their tools.
 */
void	  launch_save_nofile(void);
long long launch_nofile(void);
/* Process start time from /proc/PID/stat, in clock ticks; -1 if gone. */
long long launch_starttime(pid_t);

/* worker.c */

/*
 * Worker processes (cmdgate-worker, one per running job): started,
 * fed their spec, read, signalled and reaped here, and adopted after a
 * restart.  What they report goes to the engine through worker_hooks;
 * a job is only a pointer here.
 */

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
	/* w asked for an exchange over an editor link, ev (borrowed,
	 * WIRE_EV_CALL); the answer goes back with worker_reply(). */
	void	(*call)(void *arg, struct worker *w, json_object *ev);
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
	struct event		*orphan_ev;	/* the next look for a dead
						   worker's tools */
	int			 orphan_looks;	/* still to come */
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
/* The live worker of pid, or NULL. */
struct worker	*worker_find(struct workers *, pid_t);
/* Answer w's WIRE_EV_CALL with msg (borrowed). */
void		 worker_reply(struct worker *, json_object *msg);

#endif
