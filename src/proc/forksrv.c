/* SPDX-License-Identifier: ISC */
/*
 * The fork server, broker side: started with the workers, asked for each
 * worker over its socket (forkmsg.h), started again when it is gone.  Its
 * answer is awaited at once (a fork of a small process, well under the
 * FORKSRV_REPLY_MS bound): the worker's pid must be known before the loop
 * can reap it.  See cmdgated(8), Workers.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <json-c/json.h>

#include "fdpass.h"
#include "log.h"
#include "proc.h"
#include "util.h"

static void	forksrv_start(struct forksrv *);

/* It is gone or useless (why): stop it, spawn workers, try again later. */
static void
forksrv_lost(struct forksrv *F, const char *why)
{
	struct timeval	tv = { FORKSRV_RETRY_S, 0 };

	if (!F->failing)
		log_warnx("the fork server %s; workers are spawned one by "
		    "one until it is back", why);
	F->failing = 1;
	F->ready = 0;
	if (F->ev != NULL) {
		event_free(F->ev);
		F->ev = NULL;
	}
	if (F->fd != -1) {
		close(F->fd);
		F->fd = -1;
	}
	if (F->pid > 0)
		kill(F->pid, SIGKILL);	/* SIGCHLD reaps it */
	if (!evtimer_pending(F->retry_ev, NULL))
		evtimer_add(F->retry_ev, &tv);
}

/* Its socket is readable while it is idle: its hello, else its end. */
static void
on_socket(evutil_socket_t fd, short ev, void *arg)
{
	struct forksrv	*F = arg;
	char		 b;
	ssize_t		 n;

	(void)ev;
	n = recv(fd, &b, 1, MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 1 && b == FORKER_NOPIDFD && !F->ready) {
		log_warnx("no fork server: the kernel has no pidfds (Linux "
		    "5.3); every worker is spawned");
		F->never = 1;
		event_free(F->ev);
		F->ev = NULL;
		close(F->fd);
		F->fd = -1;	/* it exits; SIGCHLD reaps it */
		return;
	}
	if (n == 1 && b == FORKER_HELLO && !F->ready) {
		F->ready = 1;
		F->unready = 0;
		log_debug("the fork server %d is ready", (int)F->pid);
		if (F->failing)
			log_info("the fork server is back");
		F->failing = 0;
		return;
	}
	forksrv_lost(F, n == 0 ? "exited" : "said something unexpected");
}

static void
on_retry(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	forksrv_start(arg);
}

static void
forksrv_start(struct forksrv *F)
{
	int	rc;

	if (F->fd != -1 || F->pid > 0 || F->never)
		return;		/* the last one is not reaped yet */
	if (F->unready >= FORKSRV_TRIES) {
		log_warnx("no fork server: it ended %d times before it was "
		    "ready; every worker is spawned", F->unready);
		F->never = 1;
		return;
	}
	F->unready++;
	if ((rc = launch_forker(F->path, F->env, &F->pid, &F->fd)) != 0) {
		F->pid = 0;
		forksrv_lost(F, strerror(rc));
		return;
	}
	F->ev = event_new(F->base, F->fd, EV_READ | EV_PERSIST, on_socket, F);
	if (F->ev == NULL || event_add(F->ev, NULL) == -1)
		fatalx("event_add");
}

void
forksrv_init(struct forksrv *F, struct event_base *base, const char *path,
    char **env)
{
	memset(F, 0, sizeof(*F));
	F->base = base;
	F->path = path;
	F->env = env;
	F->fd = -1;
	/*
	 * The forked workers' parent, since the fork server's child that
	 * forks each exits at once.  Without that the broker could not reap
	 * them: it spawns every worker itself then.
	 */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		log_warn("no fork server: prctl PR_SET_CHILD_SUBREAPER");
		return;
	}
	if ((F->retry_ev = evtimer_new(base, on_retry, F)) == NULL)
		fatalx("evtimer_new");
	forksrv_start(F);
}

void
forksrv_free(struct forksrv *F)
{
	if (F->base == NULL)
		return;		/* never started */
	if (F->ev != NULL)
		event_free(F->ev);
	if (F->fd != -1)
		close(F->fd);	/* its end of file: it exits */
	if (F->retry_ev != NULL)
		event_free(F->retry_ev);
	memset(F, 0, sizeof(*F));
	F->fd = -1;
}

/*
 * Its answer: 1 with *reply, 0 when it did not come in time, -1 gone.
 * The bound holds whatever signals interrupt the wait.
 */
static int
forksrv_answer(struct forksrv *F, struct forker_reply *reply)
{
	struct pollfd	pfd = { F->fd, POLLIN, 0 };
	int64_t		end = util_monotonic_ms() + FORKSRV_REPLY_MS, left;
	ssize_t		n;
	int		rc;

	do {
		if ((left = end - util_monotonic_ms()) < 0)
			left = 0;
	} while ((rc = poll(&pfd, 1, (int)left)) == -1 && errno == EINTR);
	if (rc <= 0)
		return 0;
	while ((n = recv(F->fd, reply, sizeof(*reply), 0)) == -1 &&
	    errno == EINTR)
		;
	return n == (ssize_t)sizeof(*reply) ? 1 : -1;
}

int
forksrv_fork(struct forksrv *F, pid_t *pid, int *spec, int *events)
{
	struct forker_reply	reply;
	int			sp[2], ev[2], fds[2], rc;

	if (!F->ready)
		return -1;
	if (launch_pipes(sp, ev) != 0)
		return -1;	/* the spawn says why */
	fds[0] = sp[0];		/* the child's ends */
	fds[1] = ev[1];
	rc = fdpass_send(F->fd, FORKER_REQUEST, fds, MSG_NOSIGNAL |
	    MSG_DONTWAIT) == 0 ? forksrv_answer(F, &reply) : -1;
	close(sp[0]);
	close(ev[1]);
	if (rc != 1)
		forksrv_lost(F, rc == 0 ? "did not answer in time" :
		    "is gone");
	if (rc != 1 || reply.pid <= 0) {
		if (rc == 1)
			log_warnx("the fork server could not fork: %s",
			    strerror(-reply.pid));
		close(sp[1]);
		close(ev[0]);
		return -1;
	}
	/* As the worker does itself: one of them is first. */
	setpgid(reply.pid, reply.pid);
	F->forked++;
	if (reply.forks == 2 && F->twice++ == 0)
		log_info("the fork server forks each worker twice over: "
		    "clone(2) with CLONE_PARENT is refused here (a seccomp "
		    "filter)");
	*pid = reply.pid;
	*spec = sp[1];
	*events = ev[0];
	return 0;
}

int
forksrv_reaped(struct forksrv *F, pid_t pid, int status)
{
	if (F->pid <= 0 || pid != F->pid)
		return 0;
	F->pid = 0;
	if (F->fd != -1) {
		log_debug("the fork server ended with status %d", status);
		forksrv_lost(F, "exited");
	} else if (F->retry_ev != NULL &&
	    !evtimer_pending(F->retry_ev, NULL))
		forksrv_start(F);	/* lost, and the retry came first */
	return 1;
}

json_object *
forksrv_json(const struct forksrv *F)
{
	json_object	*o;

	if (F->retry_ev == NULL || F->never)
		return NULL;	/* none: not a subreaper, or no pidfds */
	o = json_object_new_object();
	json_object_object_add(o, "pid", F->ready ?
	    json_object_new_int(F->pid) : NULL);
	json_object_object_add(o, "workers_forked",
	    json_object_new_uint64(F->forked));
	json_object_object_add(o, "workers_forked_twice",
	    json_object_new_uint64(F->twice));
	return o;
}
