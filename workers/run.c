/* SPDX-License-Identifier: ISC */
/*
 * The worker's exec tools: each in a process group of its own with no
 * shell, its params in the environment or a sealed file, its output kept
 * to the last output_cap bytes, SIGTERM passed on (SIGKILL after the
 * grace), and whatever it leaves behind ended before its result is sent.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "notify.h"
#include "proclist.h"
#include "run.h"
#include "wire.h"
#include "wproc.h"

#define PARAMS_FD	3			/* a tool's params file */
#define PARAMS_ENV_MAX	(64 * 1024)	/* larger: CMDGATE_PARAMS_FILE only */

extern char	**environ;

/* The last cap bytes of a stream. */
struct tail {
	char	*buf;
	size_t	 len, cap;
	int	 truncated;
};

static void
tail_add(struct tail *t, const char *p, size_t n)
{
	if (t->cap == 0) {
		t->truncated |= n > 0;
		return;
	}
	if (n >= t->cap) {
		t->truncated |= n > t->cap || t->len > 0;
		memcpy(t->buf, p + n - t->cap, t->cap);
		t->len = t->cap;
		return;
	}
	if (t->len + n > t->cap) {
		size_t drop = t->len + n - t->cap;

		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
		t->truncated = 1;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

/*
 * The command's params in an anonymous, sealed file that the tool gets as
 * descriptor PARAMS_FD (CMDGATE_PARAMS_FILE): unlike the environment it
 * has no size limit.  The descriptor, or -1 with errno.
 */
static int
params_file(const char *json, size_t len)
{
	size_t	off = 0;
	ssize_t	w;
	int	fd, e;

	if ((fd = memfd_create("cmdgate-params", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1)
		return -1;
	while (off < len) {
		if ((w = write(fd, json + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		off += (size_t)w;
	}
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
	    F_SEAL_SEAL);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/*
 * The environment of a tool: ours without any CMDGATE_* (those are the
 * job's alone, and the caller frees them) plus CMDGATE_*, CMDGATE_PARAMS
 * only when the params are small enough for one environment string
 * (execve refuses one over 128 KiB).  Caller frees.
 */
static char **
tool_env(const char *ticket, const char *tool, const char *params,
    size_t len)
{
	size_t	  n = 0, i;
	char	**env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 6, sizeof(char *));
	if (env == NULL)
		abort();
	for (i = n = 0; environ[i] != NULL; i++)
		if (strncmp(environ[i], "CMDGATE_", 8) != 0)
			env[n++] = environ[i];
	if (asprintf(&env[n], WIRE_ENV_TICKET "=%s", ticket) == -1 ||
	    asprintf(&env[n + 1], "CMDGATE_TOOL=%s", tool) == -1 ||
	    asprintf(&env[n + 2], "CMDGATE_PARAMS_FILE=/dev/fd/%d",
	    PARAMS_FD) == -1 ||
	    asprintf(&env[n + 3], "CMDGATE_NOTIFY_FD=%d", NOTIFY_FD) == -1 ||
	    (len <= PARAMS_ENV_MAX &&
	    asprintf(&env[n + 4], "CMDGATE_PARAMS=%s", params) == -1))
		abort();
	return env;
}

/*
 * End what a command left behind, once its process group has had SIGKILL
 * (tool_exited): every process this subreaper inherited (one that called
 * setsid() escapes the group).
 * Each round kills the children there are and reaps one; SIGKILL cannot
 * be refused, so only a dying process's own children move up, and the
 * loop ends when there is no child left.
 */
static void
end_leftovers(void)
{
	pid_t	*list, pid;
	size_t	 i, n;
	int	 status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0 || (pid == -1 && errno == EINTR))
			continue;
		if (pid == -1)
			return;		/* ECHILD: nothing is left */
		list = proc_children(getpid(), &n);
		for (i = 0; i < n; i++)
			kill(list[i], SIGKILL);
		free(list);
		while ((pid = waitpid(-1, &status, 0)) == -1 && errno == EINTR)
			;
		if (pid == -1)
			return;
	}
}

static void
result_common(json_object *r, const char *tool, int ok, int64_t t0)
{
	json_object_object_add(r, WIRE_RES_TOOL, json_object_new_string(tool));
	json_object_object_add(r, WIRE_RES_OK, json_object_new_boolean(ok));
	json_object_object_add(r, WIRE_RES_DURATION,
	    json_object_new_int64(wproc_now_ms() - t0));
}

/* Read what is there from fd into t; 0 at end of file. */
static int
drain(int fd, struct tail *t)
{
	char	buf[READ_CHUNK];
	ssize_t	n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			tail_add(t, buf, (size_t)n);
			continue;
		}
		if (n == -1 && (errno == EINTR))
			continue;
		return n == 0 ? 0 : 1;
	}
}

/*
 * Start the tool in a process group of its own, in directory cwd, stdout
 * and stderr on the pipes, its params file as PARAMS_FD, the notify pipe
 * as NOTIFY_FD, signals as a fresh process has them.  posix_spawn (a vfork and an exec) copies no
 * page tables, and says why the exec failed: 0 or errno.
 */
static int
spawn_tool(pid_t *pid, char **argv, char **env, const int fds[4],
    const char *cwd)
{
	posix_spawn_file_actions_t	fa;
	posix_spawnattr_t		at;
	sigset_t			none, dfl;
	int				rc;

	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGCHLD);
	sigaddset(&dfl, SIGPIPE);
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return rc;
	if ((rc = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	if ((rc = posix_spawn_file_actions_adddup2(&fa, fds[0], 1)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 2)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, fds[2],
	    PARAMS_FD)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, fds[3],
	    NOTIFY_FD)) == 0 &&
	    (cwd == NULL ||
	    (rc = posix_spawn_file_actions_addchdir_np(&fa, cwd)) == 0) &&
	    (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0 &&
	    (rc = posix_spawnattr_setpgroup(&at, 0)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
	    (rc = posix_spawnattr_setsigdefault(&at, &dfl)) == 0)
		rc = posix_spawnp(pid, argv[0], &fa, &at, argv, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* One exec command as it runs. */
struct run {
	pid_t		 pid;
	int		 status, reaped, timed_out, killed, exec_errno;
	const char	*bad_cwd;	/* the directory it could not enter */
	int64_t		 t0, deadline, term_at;
	struct tail	 out, err;
	struct notify	 nt;		/* the tool's progress and log lines */
	/* stdout, stderr, the broker's pipe, the notify pipe */
	struct pollfd	 pfd[4];
};

/* Signals for the tool's group: SIGTERM, SIGKILL after the grace. */
static void
run_signals(struct run *x)
{
	if (got_term == 1) {
		kill(-x->pid, SIGTERM);
		got_term = 2;
		x->term_at = wproc_now_ms();
	}
	if (x->term_at > 0 && wproc_now_ms() - x->term_at >= kill_grace_ms &&
	    !x->killed) {
		kill(-x->pid, SIGKILL);	/* it ignored SIGTERM */
		x->killed = 1;
	}
	if (x->deadline - wproc_now_ms() <= 0 && !x->timed_out) {
		kill(-x->pid, SIGKILL);
		x->timed_out = 1;
	}
}

/*
 * Whether the tool has exited; then what is left of its process group
 * gets SIGKILL while the exited leader still holds the group's id (so
 * that it cannot name anyone else's), and only then is it reaped.
 */
static int
tool_exited(struct run *x)
{
	siginfo_t	si;

	si.si_pid = 0;
	if (waitid(P_PID, (id_t)x->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    -1 || si.si_pid != x->pid)
		return 0;
	kill(-x->pid, SIGKILL);
	waitpid(x->pid, &x->status, 0);
	x->reaped = 1;
	return 1;
}

/* How long to wait: until the deadline, the kill, or notify's next second. */
static int64_t
run_left(struct run *x)
{
	int64_t	left = x->deadline - wproc_now_ms(), due;

	if (x->term_at > 0 && !x->killed &&
	    x->term_at + kill_grace_ms - wproc_now_ms() < left)
		left = x->term_at + kill_grace_ms - wproc_now_ms();
	if ((due = notify_due(&x->nt, wproc_now_ms())) >= 0 && due < left)
		left = due;
	return left;
}

/* Read the notify pipe if poll says so. */
static void
run_notify(struct run *x)
{
	if (x->pfd[3].fd >= 0 && (x->pfd[3].revents &
	    (POLLIN | POLLHUP | POLLERR)) &&
	    notify_read(&x->nt, wproc_now_ms()) == 0)
		x->pfd[3].fd = -1;
}

/*
 * Until the tool exits: its output read, signals passed on.  The notify
 * pipe is read meanwhile; whoever still holds it when the tool is gone
 * (a child it left) does not keep the command.
 */
static void
run_wait(struct run *x, const sigset_t *waitmask)
{
	struct timespec	ts;
	int64_t		left;
	size_t		i;

	while (x->pfd[0].fd >= 0 || x->pfd[1].fd >= 0 || !x->reaped) {
		run_signals(x);
		left = run_left(x);
		if (tool_exited(x)) {
			/* Its output is in the pipes, unless it left heirs. */
			for (i = 0; i < 2; i++)
				if (x->pfd[i].fd >= 0) {
					drain(x->pfd[i].fd, i == 0 ? &x->out :
					    &x->err);
					close(x->pfd[i].fd);
					x->pfd[i].fd = -1;
				}
			break;
		}
		ts.tv_sec = left > 0 ? left / 1000 : 0;
		ts.tv_nsec = left > 0 ? (left % 1000) * 1000000 : 100000000;
		if (ppoll(x->pfd, 4, &ts, waitmask) == -1 && errno != EINTR)
			break;
		wproc_broker_gone(&x->pfd[2]);
		run_notify(x);
		for (i = 0; i < 2; i++)
			if (x->pfd[i].fd >= 0 && (x->pfd[i].revents &
			    (POLLIN | POLLHUP | POLLERR)) &&
			    drain(x->pfd[i].fd, i == 0 ? &x->out : &x->err) == 0) {
				close(x->pfd[i].fd);
				x->pfd[i].fd = -1;
			}
	}
	if (!x->reaped) {
		kill(-x->pid, SIGKILL);
		waitpid(x->pid, &x->status, 0);
	}
	for (i = 0; i < 2; i++)
		if (x->pfd[i].fd >= 0)
			close(x->pfd[i].fd);
	notify_end(&x->nt, wproc_now_ms());
	x->pfd[3].fd = -1;
}

/* Start the command's tool: 0, or errno (x->pid is -1). */
static int
run_start(struct run *x, const char *ticket, json_object *cmd, size_t index,
    char **argv)
{
	json_object	*v, *params = NULL;
	const char	*ps = "{}", *cwd = NULL;
	size_t		 plen = 2, i;
	char		**env;
	int		 po[2], pe[2], pn[2], fds[4], rc;

	json_object_object_get_ex(cmd, WIRE_CMD_PARAMS, &params);
	if (params != NULL)
		plen = strlen(ps = jstrict_to_string(params));
	if (json_object_object_get_ex(cmd, WIRE_CMD_CWD, &v))
		cwd = json_object_get_string(v);
	x->pid = -1;
	x->pfd[0].fd = x->pfd[1].fd = x->pfd[3].fd = -1;
	notify_init(&x->nt, -1, index, wproc_emit);
	if ((fds[2] = params_file(ps, plen)) == -1)
		return errno;
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1 ||
	    pipe2(pn, O_CLOEXEC) == -1)
		abort();
	fds[0] = po[1];
	fds[1] = pe[1];
	fds[3] = pn[1];
	env = tool_env(ticket, json_object_get_string(json_object_object_get(
	    cmd, WIRE_CMD_TOOL)), ps, plen);
	if ((rc = spawn_tool(&x->pid, argv, env, fds, cwd)) != 0) {
		x->pid = -1;
		if (cwd != NULL && access(cwd, X_OK) == -1)
			x->bad_cwd = cwd;
	}
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "CMDGATE_", 8) == 0)
			free(env[i]);
	free(env);
	close(po[1]);
	close(pe[1]);
	close(pn[1]);
	close(fds[2]);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	fcntl(pn[0], F_SETFL, O_NONBLOCK);
	x->pfd[0].fd = po[0];
	x->pfd[1].fd = pe[0];
	x->pfd[3].fd = x->nt.fd = pn[0];
	x->pfd[0].events = x->pfd[1].events = x->pfd[3].events = POLLIN;
	x->pfd[2].fd = WIRE_EVENTS_FD;
	x->pfd[2].events = 0;		/* POLLERR: the broker is gone */
	if (rc != 0) {
		close(po[0]);
		close(pe[0]);
		close(pn[0]);
		x->pfd[0].fd = x->pfd[1].fd = x->pfd[3].fd = x->nt.fd = -1;
	}
	return rc;
}

static const char *
signame(int sig)
{
	return sigabbrev_np(sig) ? sigabbrev_np(sig) : "UNKNOWN";
}

/* Why the command failed, or nothing when it did not. */
static void
run_error(json_object *r, struct run *x, const char *prog)
{
	char	msg[512];

	if (x->exec_errno != 0 && x->bad_cwd != NULL)
		snprintf(msg, sizeof(msg), "cannot run '%s' in %s: %s", prog,
		    x->bad_cwd, strerror(x->exec_errno));
	else if (x->exec_errno != 0)
		snprintf(msg, sizeof(msg), "cannot run '%s': %s", prog,
		    strerror(x->exec_errno));
	else if (x->timed_out)
		snprintf(msg, sizeof(msg), "timed out: the tool's process "
		    "group was killed");
	else if (WIFSIGNALED(x->status))
		snprintf(msg, sizeof(msg), "killed by signal %d (SIG%s)",
		    WTERMSIG(x->status), signame(WTERMSIG(x->status)));
	else if (WEXITSTATUS(x->status) != 0)
		snprintf(msg, sizeof(msg), "exited with status %d",
		    WEXITSTATUS(x->status));
	else
		return;
	json_object_object_add(r, WIRE_RES_ERROR, json_object_new_string(msg));
}

/*
 * The result: present only when the whole of stdout is one JSON object or
 * array (white space around it allowed), strictly parsed.
 */
static void
run_result(json_object *r, struct tail *out)
{
	json_object	*parsed;

	if (out->truncated || out->len == 0 ||
	    jstrict_parse(out->buf, out->len, &parsed) != 0)
		return;
	if (json_object_is_type(parsed, json_type_object) ||
	    json_object_is_type(parsed, json_type_array))
		json_object_object_add(r, WIRE_RES_RESULT, parsed);
	else
		json_object_put(parsed);
}

static json_object *
run_report(struct run *x, const char *tool, const char *prog)
{
	json_object	*r = json_object_new_object();
	int		 ran = x->pid > 0;
	char		 name[32];

	result_common(r, tool, ran && !x->timed_out &&
	    WIFEXITED(x->status) && WEXITSTATUS(x->status) == 0, x->t0);
	if (ran && WIFEXITED(x->status))
		json_object_object_add(r, WIRE_RES_EXIT_CODE,
		    json_object_new_int(WEXITSTATUS(x->status)));
	if (ran && WIFSIGNALED(x->status)) {
		snprintf(name, sizeof(name), "SIG%s",
		    signame(WTERMSIG(x->status)));
		json_object_object_add(r, WIRE_RES_SIGNAL,
		    json_object_new_string(name));
	}
	if (x->timed_out)
		json_object_object_add(r, WIRE_RES_TIMED_OUT,
		    json_object_new_boolean(1));
	json_object_object_add(r, WIRE_RES_STDOUT, utf8_json(x->out.buf,
	    x->out.len));
	json_object_object_add(r, WIRE_RES_STDERR, utf8_json(x->err.buf,
	    x->err.len));
	if (x->out.truncated || x->err.truncated)
		json_object_object_add(r, WIRE_RES_TRUNCATED,
		    json_object_new_boolean(1));
	run_error(r, x, prog);
	if (ran && !x->timed_out)
		run_result(r, &x->out);
	return r;
}

json_object *
run_exec(const char *ticket, json_object *cmd, size_t index, size_t cap,
    const sigset_t *waitmask)
{
	struct run	 x;
	json_object	*argvj, *v, *r;
	char		**argv;
	size_t		 i, argc;

	memset(&x, 0, sizeof(x));
	x.out.cap = x.err.cap = cap;
	x.t0 = wproc_now_ms();
	json_object_object_get_ex(cmd, WIRE_CMD_EXEC, &argvj);
	json_object_object_get_ex(cmd, WIRE_CMD_TIMEOUT, &v);
	x.deadline = x.t0 + json_object_get_int64(v) * 1000;
	argc = json_object_array_length(argvj);
	if ((argv = calloc(argc + 1, sizeof(char *))) == NULL ||
	    (x.out.buf = malloc(cap + 1)) == NULL ||
	    (x.err.buf = malloc(cap + 1)) == NULL)
		abort();
	for (i = 0; i < argc; i++)
		argv[i] = (char *)json_object_get_string(
		    json_object_array_get_idx(argvj, i));
	x.exec_errno = run_start(&x, ticket, cmd, index, argv);
	if (x.pid > 0) {
		wproc_emit_start(index, x.pid);
		run_wait(&x, waitmask);
		end_leftovers();
	}
	r = run_report(&x, json_object_get_string(json_object_object_get(cmd,
	    WIRE_CMD_TOOL)), argv[0]);
	free(argv);
	free(x.out.buf);
	free(x.err.buf);
	return r;
}
