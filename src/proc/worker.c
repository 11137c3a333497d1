/* SPDX-License-Identifier: ISC */
/*
 * Worker processes: started, fed their spec, read, signalled, reaped,
 * and adopted after a restart.  The engine hears of them through the
 * hooks given to workers_init(); only this file frees a worker, after
 * its exited hook.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "log.h"
#include "proc.h"
#include "proclist.h"
#include "util.h"
#include "wire.h"

#define ORPHAN_POLL_MS	100	/* without a pidfd: how often to look */
#define ORPHAN_LOOKS	3	/* more looks for a dead worker's tools, */
#define ORPHAN_LOOK_MS	100	/* 100, 200 and 400 ms apart */

static void	 on_sigchld(evutil_socket_t, short, void *);
static void	 on_orphan_look(evutil_socket_t, short, void *);

static const struct child_hooks	worker_child_hooks;

int
workers_init(struct workers *W, struct event_base *base, const char *path,
    uint64_t kill_grace, size_t event_max, const struct worker_hooks *hooks)
{
	memset(W, 0, sizeof(*W));
	TAILQ_INIT(&W->list);
	W->base = base;
	W->path = path;
	W->kill_grace = kill_grace;
	W->event_max = event_max;
	W->hooks = *hooks;
	W->env = launch_env();
	W->sigchld_ev = evsignal_new(base, SIGCHLD, on_sigchld, W);
	if (W->sigchld_ev == NULL || evsignal_add(W->sigchld_ev, NULL) == -1)
		return -1;
	if ((W->orphan_ev = evtimer_new(base, on_orphan_look, W)) == NULL)
		return -1;
	forksrv_init(&W->fs, base, path, W->env);
	return 0;
}

json_object *
worker_record(const struct worker *w, const char *ticket)
{
	json_object	*o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(w->pid));
	json_object_object_add(o, "pgid", json_object_new_int(w->pid));
	json_object_object_add(o, "tool_pgid",
	    json_object_new_int(w->tool_pgid));
	json_object_object_add(o, "starttime",
	    json_object_new_int64(w->starttime));
	json_object_object_add(o, "busy", json_object_new_int((int)w->busy));
	if (ticket != NULL)
		json_object_object_add(o, "ticket",
		    json_object_new_string(ticket));
	return o;
}

static struct worker *
worker_new(struct workers *W, pid_t pid)
{
	struct worker	*w = xcalloc(1, sizeof(*w));

	w->W = W;
	w->pid = pid;
	w->pidfd = -1;
	w->spec_fd = w->events_fd = -1;
	child_init(&w->child, W->base, &worker_child_hooks, w);
	TAILQ_INSERT_TAIL(&W->list, w, entry);
	W->nworkers++;
	return w;
}

static void
worker_free(struct worker *w)
{
	TAILQ_REMOVE(&w->W->list, w, entry);
	if (w == w->W->spare)
		w->W->spare = NULL;
	else
		w->W->nworkers--;
	if (w->spec_fd != -1)
		close(w->spec_fd);
	if (w->events_fd != -1)
		close(w->events_fd);
	child_free(&w->child);
	if (w->exit_ev != NULL)
		event_free(w->exit_ev);
	if (w->pidfd != -1)
		close(w->pidfd);
	free(w->garbled);
	free(w);
}

void
workers_free(struct workers *W)
{
	struct worker	*w;

	while ((w = TAILQ_FIRST(&W->list)) != NULL)
		worker_free(w);
	if (W->sigchld_ev != NULL)
		event_free(W->sigchld_ev);
	if (W->orphan_ev != NULL)
		event_free(W->orphan_ev);
	forksrv_free(&W->fs);
	launch_env_free(W->env);
	W->env = NULL;
}

static int	pgid_ok(pid_t);

/* SIGKILL for pid and the group it is in (a tool leads one). */
static void
kill_with_group(pid_t pid)
{
	pid_t	pgid;

	if ((pgid = getpgid(pid)) != -1 && pgid_ok(pgid))
		kill(-pgid, SIGKILL);
	kill(pid, SIGKILL);
}

/* SIGKILL for each child of parent and its group. */
static void
kill_children(pid_t parent)
{
	pid_t	*list;
	size_t	 i, n;

	list = proc_children(parent, &n);
	for (i = 0; i < n; i++)
		kill_with_group(list[i]);
	free(list);
}

/*
 * SIGKILL for w, its tool's group, and any child of it that we were not
 * told of (a tool whose start event is unwritten or unread), which would
 * outlive it: the broker inherits it, and nobody would end it.  SIGSTOP
 * first, so that it starts nothing more; a spawn under way may still
 * finish, so its children are looked up twice (the lookup takes longer
 * than a spawn).  Descendants that left the tool's group (setsid) are
 * beyond reach here.  A past run's worker is not our child: its pid is
 * checked, and only its group is killed.
 */
static void
worker_kill_hard(struct worker *w)
{
	if (w->reaped)
		return;
	if (w->exit_ev == NULL) {
		kill(w->pid, SIGSTOP);
		kill_children(w->pid);
		kill_children(w->pid);
		kill(-w->pid, SIGKILL);
	} else if (launch_starttime(w->pid) == w->starttime)
		kill(-w->pid, SIGKILL);
	if (w->tool_pgid > 0)
		kill(-w->tool_pgid, SIGKILL);
}

void
worker_kill(struct worker *w, int sig)
{
	if (w->reaped)
		return;		/* its pid may be another's now */
	if (sig == SIGKILL) {
		worker_kill_hard(w);
		return;
	}
	kill(w->pid, sig);
	if (w->exit_ev != NULL && w->tool_pgid > 0)
		kill(-w->tool_pgid, sig);	/* a past run's: nobody relays */
	child_grace(&w->child, w->W->kill_grace);
}

void
workers_kill_all(struct workers *W, int sig)
{
	struct worker	*w;

	TAILQ_FOREACH(w, &W->list, entry)
		worker_kill(w, sig);
}

unsigned
workers_busy_bits(const struct workers *W)
{
	struct worker	*w;
	unsigned	 b = 0;

	TAILQ_FOREACH(w, &W->list, entry)
		b |= w->busy;
	return b;
}

/* Its grace after SIGTERM passed. */
static void
worker_child_late(void *arg)
{
	struct worker	*w = arg;

	log_info("worker %d still alive after --kill-grace: SIGKILL",
	    (int)w->pid);
	worker_kill_hard(w);
}

void
worker_garbled(struct worker *w, const char *why)
{
	if (w->garbled != NULL)
		return;
	log_warnx("worker %d: %s; stopping it", (int)w->pid, why);
	w->garbled = xstrdup(why);
	/*
	 * SIGTERM, SIGKILL after the grace: what it says is not heard any
	 * more, but it still ends its tool, whose group it may not have
	 * told yet (a tool that writes into the pipe races its start event).
	 */
	worker_kill(w, SIGTERM);
}

/* Whether ev is a well-formed progress or log event (cmdgated(8)). */
static int
worker_note_ok(const char *kind, json_object *ev)
{
	json_object	*v;

	if (json_object_object_get_ex(ev, WIRE_MESSAGE, &v) &&
	    !json_object_is_type(v, json_type_string))
		return 0;
	if (strcmp(kind, WIRE_EV_LOG) == 0)
		return json_object_is_type(json_object_object_get(ev,
		    WIRE_LEVEL), json_type_string) && v != NULL;
	if (!json_object_object_get_ex(ev, WIRE_PROGRESS, &v) ||
	    (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double)) ||
	    json_object_get_double(v) < 0)
		return 0;
	return !json_object_object_get_ex(ev, WIRE_TOTAL, &v) ||
	    ((json_object_is_type(v, json_type_int) ||
	    json_object_is_type(v, json_type_double)) &&
	    json_object_get_double(v) > 0);
}

/*
 * Whether a tool's group from a worker or the store may be signalled:
 * not 1 (kill(-1) reaches every process), nor the broker's own.
 */
static int
pgid_ok(pid_t pgid)
{
	return pgid > 1 && pgid != getpgrp();
}

/* An exchange over an editor link: the engine's, which answers. */
static void
worker_call(struct worker *w, json_object *ev)
{
	const struct worker_hooks *h = &w->W->hooks;

	if (h->call == NULL)
		worker_garbled(w, "a call from the worker, which has no link");
	else
		h->call(h->arg, w, ev);
}

struct worker *
worker_find(struct workers *W, pid_t pid)
{
	struct worker	*w;

	TAILQ_FOREACH(w, &W->list, entry)
		if (w->pid == pid && !w->reaped)
			return w;
	return NULL;
}

void
worker_reply(struct worker *w, json_object *msg)
{
	child_reply(&w->child, msg);
}

/* One event line from a worker. */
static void
worker_event(struct worker *w, const char *line, size_t len)
{
	const struct worker_hooks *h = &w->W->hooks;
	json_object	*ev, *v, *res;
	const char	*kind;

	jstrict_parse(line, len, &ev);
	if (ev != NULL && len != 0 && (kind = json_object_get_string(
	    json_object_object_get(ev, WIRE_EVENT))) != NULL &&
	    strcmp(kind, WIRE_EV_CALL) == 0) {
		worker_call(w, ev);
		json_object_put(ev);
		return;
	}
	if (ev == NULL || len == 0 || (kind = json_object_get_string(
	    json_object_object_get(ev, WIRE_EVENT))) == NULL ||
	    (v = json_object_object_get(ev, WIRE_INDEX)) == NULL ||
	    (w->job != NULL &&
	    json_object_get_int64(v) != (int64_t)w->next_index)) {
		json_object_put(ev);
		worker_garbled(w, "garbled message from the worker");
		return;
	}
	if (strcmp(kind, WIRE_EV_START) == 0) {
		pid_t	pgid = json_object_get_int(json_object_object_get(ev,
			    WIRE_PGID));

		/* 0: no process (a forward). */
		if (pgid != 0 && !pgid_ok(pgid)) {
			json_object_put(ev);
			worker_garbled(w, "garbled start from the worker");
			return;
		}
		/* Known even when the job is gone (shutdown): kills reach it. */
		w->tool_pgid = pgid;
		if (w->job != NULL && w->tool_pgid > 0)
			h->started(h->arg, w);
	} else if (w->job == NULL) {
		/* Its job was recorded as interrupted: nothing to add. */
	} else if (strcmp(kind, WIRE_EV_RESULT) == 0 &&
	    json_object_is_type(res = json_object_object_get(ev, WIRE_RESULT),
	    json_type_object)) {
		if (h->result(h->arg, w, res) == 0)
			w->next_index++;
		/* Its tool's group is gone (the worker ends it first). */
		w->tool_pgid = 0;
	} else if (strcmp(kind, WIRE_EV_PROGRESS) == 0 ||
	    strcmp(kind, WIRE_EV_LOG) == 0) {
		if (!worker_note_ok(kind, ev))
			worker_garbled(w, "garbled progress from the worker");
		else if (h->note != NULL)
			h->note(h->arg, w, ev);
	} else if (strcmp(kind, WIRE_EV_ANSWER) == 0 &&
	    json_object_object_get_ex(ev, WIRE_RESULT, &res)) {
		if (h->answer != NULL)
			h->answer(h->arg, w, res);
	} else
		worker_garbled(w, "unknown message from the worker");
	json_object_put(ev);
}

/* One line of w's: -1 once w is garbled, which ends the reading. */
static int
worker_line(void *arg, const char *line, size_t len)
{
	struct worker	*w = arg;

	worker_event(w, line, len);
	return w->garbled != NULL ? -1 : 0;
}

void
worker_read(struct worker *w, struct evbuffer *in)
{
	if (w->garbled == NULL &&
	    child_lines(in, w->W->event_max, worker_line, w) == 1)
		worker_garbled(w, "a message from the worker is too long");
	/* Read on, unheard, so that its writes never block its end. */
	if (w->garbled != NULL)
		evbuffer_drain(in, evbuffer_get_length(in));
}

/* What w wrote; at the end of its pipe it is exiting, and SIGCHLD
 * finishes the job. */
static void
worker_child_read(void *arg, struct evbuffer *in, int eof)
{
	(void)eof;
	worker_read(arg, in);
}

/* The worker is gone before reading its spec; SIGCHLD says why. */
static void
worker_child_spec_lost(void *arg)
{
	struct worker	*w = arg;

	log_warnx("worker %d: its job spec could not be written",
	    (int)w->pid);
}

static const struct child_hooks worker_child_hooks = {
	worker_child_read, worker_child_spec_lost, worker_child_late,
};

static int
worker_launch(struct workers *W, struct worker **wp)
{
	struct worker	*w;
	pid_t		 pid;
	int		 sfd, efd, rc;

	if (forksrv_fork(&W->fs, &pid, &sfd, &efd) == -1 &&
	    (rc = launch_worker(W->path, W->env, &pid, &sfd, &efd)) != 0)
		return rc;
	w = worker_new(W, pid);
	w->starttime = launch_starttime(pid);
	w->spec_fd = sfd;
	w->events_fd = efd;
	*wp = w;
	return 0;
}

int
worker_spawn(struct workers *W, struct worker **wp)
{
	if (W->spare == NULL)
		return worker_launch(W, wp);
	*wp = W->spare;
	W->spare = NULL;
	W->nworkers++;
	return 0;
}

int
worker_spare_start(struct workers *W)
{
	struct worker	*w;
	int		 rc;

	if (W->spare != NULL)
		return 0;
	if ((rc = worker_launch(W, &w)) != 0)
		return rc;
	W->nworkers--;
	W->spare = w;
	log_debug("worker %d: the spare", (int)w->pid);
	return 0;
}

void
worker_spare_retire(struct workers *W)
{
	struct worker	*w = W->spare;

	if (w == NULL)
		return;
	W->spare = NULL;
	W->nworkers++;
	log_debug("worker %d: the spare retires", (int)w->pid);
	/* Signal first: at the end of its pipe it knows it was retired. */
	kill(w->pid, SIGTERM);
	close(w->spec_fd);
	close(w->events_fd);
	w->spec_fd = w->events_fd = -1;
}

void
worker_abort(struct worker *w)
{
	/* The worker has not read its spec: it never ran anything. */
	kill(-w->pid, SIGKILL);
	w->job = NULL;
	close(w->spec_fd);
	close(w->events_fd);
	w->spec_fd = w->events_fd = -1;
}

void
worker_run(struct worker *w, json_object *spec)
{
	/* The spec is sent from the next loop turn, not at once: what the
	 * job's start changed (the editor's reloading, for the faces'
	 * status) is told first, before the worker can reach the editor. */
	child_start(&w->child, w->spec_fd, w->events_fd, spec);
	w->spec_fd = w->events_fd = -1;
}

/*
 * A worker died on a signal, maybe before it told its tool's group
 * (killed from outside just after the spawn), or an orphan of one ended:
 * what it left was orphaned to us, the subreaper.  A child of ours with
 * a job's CMDGATE_TICKET in its environment is such a tool (or what a
 * tool started), since a live worker's tools are the worker's children:
 * it gets SIGKILL, with its group.  A tool spawned as its worker died may
 * not have reached its exec yet (its environment is still the worker's):
 * ORPHAN_LOOKS more looks follow, ORPHAN_LOOK_MS apart and growing.
 */
static void
kill_orphaned_tools(void)
{
	pid_t	*list;
	size_t	 i, n;

	list = proc_children(getpid(), &n);
	for (i = 0; i < n; i++)
		if (proc_environ_has(list[i], WIRE_ENV_TICKET "=")) {
			log_warnx("tool process %d outlived its worker: "
			    "SIGKILL", (int)list[i]);
			kill_with_group(list[i]);
		}
	free(list);
}

static void
on_orphan_look(evutil_socket_t fd, short ev, void *arg)
{
	struct workers	*W = arg;
	struct timeval	 tv;
	int		 ms;

	(void)fd;
	(void)ev;
	kill_orphaned_tools();
	if (--W->orphan_looks <= 0)
		return;
	ms = ORPHAN_LOOK_MS << (ORPHAN_LOOKS - W->orphan_looks);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = ms % 1000 * 1000;
	evtimer_add(W->orphan_ev, &tv);
}

/* Look now, and again later (kill_orphaned_tools). */
static void
orphans_look(struct workers *W)
{
	struct timeval	tv = { 0, ORPHAN_LOOK_MS * 1000 };

	kill_orphaned_tools();
	W->orphan_looks = ORPHAN_LOOKS;
	evtimer_add(W->orphan_ev, &tv);
}

/* w is gone: read what it left, stop its tool if need be, free it. */
static void
worker_reaped(struct worker *w, int status)
{
	const struct worker_hooks *h = &w->W->hooks;
	struct evbuffer		*rest;

	w->reaped = 1;
	if ((rest = child_rest(&w->child)) != NULL) {
		worker_read(w, rest);
		evbuffer_free(rest);
	}
	/* A worker that died on a signal left its tool: stop it too. */
	if ((WIFSIGNALED(status) || w->garbled != NULL) && w->tool_pgid > 0)
		kill(-w->tool_pgid, SIGKILL);
	if (WIFSIGNALED(status) && w->exit_ev == NULL)
		orphans_look(w->W);
	h->exited(h->arg, w, status);
	worker_free(w);
}

static void
on_sigchld(evutil_socket_t fd, short ev, void *arg)
{
	struct workers	*W = arg;
	struct worker	*w;
	pid_t		 pid;
	int		 status;

	(void)fd;
	(void)ev;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(w, &W->list, entry)
			if (w->pid == pid && w->exit_ev == NULL)
				break;
		if (w == NULL) {
			/* The broker is a subreaper: a dead worker's tools
			 * that outlived it come here, and what they started
			 * comes to us when they end. */
			if (!forksrv_reaped(&W->fs, pid, status) &&
			    (W->hooks.other == NULL ||
			    !W->hooks.other(W->hooks.arg, pid, status))) {
				log_debug("reaped %d, no worker of ours",
				    (int)pid);
				kill_orphaned_tools();
			}
			continue;
		}
		if (WIFSIGNALED(status))
			log_warnx("worker %d lost: killed by signal %d",
			    (int)pid, WTERMSIG(status));
		else
			log_debug("worker %d exited with status %d",
			    (int)pid, WEXITSTATUS(status));
		worker_reaped(w, status);
	}
	W->hooks.reaped(W->hooks.arg);
}

/* A worker left by an earlier run (not our child) is gone. */
static void
on_orphan_exit(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;
	struct workers	*W = w->W;

	(void)fd;
	(void)ev;
	log_info("worker %d of an earlier run is gone", (int)w->pid);
	W->norphans--;
	worker_reaped(w, 0);
	W->hooks.reaped(W->hooks.arg);
}

static void
on_orphan_poll(evutil_socket_t fd, short ev, void *arg)
{
	struct worker	*w = arg;

	if (launch_starttime(w->pid) != w->starttime)
		on_orphan_exit(fd, ev, arg);
}

int
worker_adopt(struct workers *W, pid_t pid, json_object *rec)
{
	struct worker	*w;
	long long	 start = launch_starttime(pid);
	struct timeval	 poll = { 0, ORPHAN_POLL_MS * 1000 };
	int		 fd;

	if (rec == NULL || start < 0 || start != json_object_get_int64(
	    json_object_object_get(rec, "starttime")))
		return -1;
	w = worker_new(W, pid);
	w->starttime = start;
	w->busy = (unsigned)json_object_get_int(json_object_object_get(rec,
	    "busy"));
	w->tool_pgid = json_object_get_int(json_object_object_get(rec,
	    "tool_pgid"));
	if (!pgid_ok(w->tool_pgid))
		w->tool_pgid = 0;
	/*
	 * Not our child: a pidfd says when it is gone.  Where there is none
	 * (old kernels, valgrind), look at /proc on a timer instead.
	 */
	if ((fd = pidfd_open(pid, 0)) != -1) {
		w->pidfd = fd;
		w->exit_ev = event_new(W->base, fd, EV_READ, on_orphan_exit,
		    w);
		if (w->exit_ev == NULL || event_add(w->exit_ev, NULL) == -1)
			fatalx("event_add");
	} else {
		w->exit_ev = event_new(W->base, -1, EV_PERSIST,
		    on_orphan_poll, w);
		if (w->exit_ev == NULL || event_add(w->exit_ev, &poll) == -1)
			fatalx("event_add");
	}
	W->norphans++;
	log_warnx("worker %d of an earlier run is still alive: SIGTERM, "
	    "SIGKILL after %llus", pid, (unsigned long long)W->kill_grace);
	worker_kill(w, SIGTERM);
	return 0;
}
