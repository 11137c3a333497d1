/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-worker: the program cmdgated starts once per job.  It reads the
 * job's spec (JSON) from descriptor 3 until end of file, runs the commands
 * in order, and writes one JSON line per event to standard output:
 *
 *	{"event":"start","index":I,"pgid":P}
 *	{"event":"result","index":I,"result":{...}}
 *
 * then exits 0.  It never links the broker's store or event loop.  Exec
 * tools run with no shell in a process group of their own; forward tools
 * are one JSON-RPC request to an upstream.  On SIGTERM it passes the
 * signal to the running tool's process group, waits for the tool to end,
 * and starts nothing more; if the tool outlives the spec's kill_grace, its
 * group gets SIGKILL.  The same happens when the broker is gone (a write
 * to it fails), so that no tool is left running that nobody tracks.
 * See cmdgated(8), Workers.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netdb.h>

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

#define EXIT_USAGE	64
#define SPEC_FD		3
#define SPEC_MAX	(64 * 1024 * 1024)
#define READ_CHUNK	65536
#define UPSTREAM_MAX	(64 * 1024 * 1024)	/* longest upstream answer */

/* The last cap bytes of a stream. */
struct tail {
	char	*buf;
	size_t	 len, cap;
	int	 truncated;
};

static volatile sig_atomic_t	got_term, got_chld;
static int64_t			kill_grace_ms = 5000;
extern char			**environ;

static void
on_signal(int sig)
{
	if (sig == SIGTERM)
		got_term = 1;
	else
		got_chld = 1;
}

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* A JSON string of bytes that may not be UTF-8: bad bytes become U+FFFD. */
static json_object *
utf8_string(const char *s, size_t n)
{
	json_object	*o;
	char		*out = malloc(n * 3 + 1);
	size_t		 i = 0, j = 0, k, len;
	unsigned char	 c;

	if (out == NULL)
		abort();
	while (i < n) {
		c = (unsigned char)s[i];
		len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 :
		    (c >> 3) == 30 ? 4 : 0;
		for (k = 1; len > 1 && k < len; k++)
			if (i + k >= n || ((unsigned char)s[i + k] >> 6) != 2)
				len = 0;
		if (len == 2 && c < 0xc2)
			len = 0;
		if (len == 3 && ((c == 0xe0 && (unsigned char)s[i + 1] < 0xa0) ||
		    (c == 0xed && (unsigned char)s[i + 1] >= 0xa0)))
			len = 0;
		if (len == 4 && ((c == 0xf0 && (unsigned char)s[i + 1] < 0x90) ||
		    c > 0xf4 || (c == 0xf4 && (unsigned char)s[i + 1] >= 0x90)))
			len = 0;
		if (len == 0) {
			memcpy(out + j, "\xef\xbf\xbd", 3);
			j += 3;
			i++;
			continue;
		}
		memcpy(out + j, s + i, len);
		i += len;
		j += len;
	}
	o = json_object_new_string_len(out, (int)j);
	free(out);
	return o;
}

static void
emit(json_object *ev)
{
	const char	*s;
	size_t		 len, off = 0;
	ssize_t		 w;

	s = json_object_to_json_string_length(ev, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	while (off < len) {
		if ((w = write(1, s + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			/*
			 * The broker is gone: nobody will hear of this job.
			 * Stop as for SIGTERM, so that no tool is left behind.
			 */
			if (got_term == 0)
				got_term = 1;
			break;
		}
		off += (size_t)w;
	}
	while (off == len && write(1, "\n", 1) == -1 && errno == EINTR)
		;
	json_object_put(ev);
}

static void
emit_start(size_t index, pid_t pgid)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, "event", json_object_new_string("start"));
	json_object_object_add(ev, "index", json_object_new_int((int)index));
	json_object_object_add(ev, "pgid", json_object_new_int(pgid));
	emit(ev);
}

static void
emit_result(size_t index, json_object *result)
{
	json_object	*ev = json_object_new_object();

	json_object_object_add(ev, "event", json_object_new_string("result"));
	json_object_object_add(ev, "index", json_object_new_int((int)index));
	json_object_object_add(ev, "result", result);
	emit(ev);
}

/* The environment of a tool: ours plus CMDGATE_*.  Caller frees. */
static char **
tool_env(const char *ticket, const char *tool, json_object *params)
{
	size_t	  n = 0, i;
	char	**env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 4, sizeof(char *));
	for (i = 0; i < n; i++)
		env[i] = environ[i];
	if (asprintf(&env[n], "CMDGATE_TICKET=%s", ticket) == -1 ||
	    asprintf(&env[n + 1], "CMDGATE_TOOL=%s", tool) == -1 ||
	    asprintf(&env[n + 2], "CMDGATE_PARAMS=%s", params == NULL ? "{}" :
	    json_object_to_json_string_ext(params, JSON_C_TO_STRING_PLAIN)) ==
	    -1)
		abort();
	return env;
}

static void
result_common(json_object *r, const char *tool, int ok, int64_t t0)
{
	json_object_object_add(r, "tool", json_object_new_string(tool));
	json_object_object_add(r, "ok", json_object_new_boolean(ok));
	json_object_object_add(r, "duration_ms",
	    json_object_new_int64(now_ms() - t0));
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
 * Start the tool in a process group of its own, stdout and stderr on the
 * pipes, signals as a fresh process has them.  posix_spawn (a vfork and an
 * exec) copies no page tables, and says why the exec failed: 0 or errno.
 */
static int
spawn_tool(pid_t *pid, char **argv, char **env, int out, int err)
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
	if ((rc = posix_spawn_file_actions_adddup2(&fa, out, 1)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, err, 2)) == 0 &&
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

static json_object *
run_exec(const char *ticket, json_object *cmd, size_t index, size_t cap,
    const sigset_t *waitmask)
{
	json_object	*argvj, *params = NULL, *r, *parsed;
	const char	*tool;
	char		**argv, **env;
	struct tail	 out = { NULL, 0, cap, 0 }, err = { NULL, 0, cap, 0 };
	struct pollfd	 pfd[2];
	struct timespec	 ts;
	int		 po[2], pe[2], status = 0, timed_out = 0;
	int		 exec_errno = 0, reaped = 0, killed = 0;
	int64_t		 t0 = now_ms(), deadline, left, term_at = 0;
	size_t		 i, argc;
	pid_t		 pid;

	json_object_object_get_ex(cmd, "tool", &argvj);
	tool = json_object_get_string(argvj);
	json_object_object_get_ex(cmd, "params", &params);
	json_object_object_get_ex(cmd, "exec", &argvj);
	json_object_object_get_ex(cmd, "timeout_s", &r);
	deadline = t0 + json_object_get_int64(r) * 1000;
	argc = json_object_array_length(argvj);
	argv = calloc(argc + 1, sizeof(char *));
	for (i = 0; i < argc; i++)
		argv[i] = (char *)json_object_get_string(
		    json_object_array_get_idx(argvj, i));
	out.buf = malloc(cap + 1);
	err.buf = malloc(cap + 1);
	env = tool_env(ticket, tool, params);
	if (pipe2(po, O_CLOEXEC) == -1 || pipe2(pe, O_CLOEXEC) == -1)
		abort();
	if ((exec_errno = spawn_tool(&pid, argv, env, po[1], pe[1])) != 0)
		pid = -1;
	close(po[1]);
	close(pe[1]);
	if (pid > 0)
		emit_start(index, pid);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	pfd[0].fd = po[0];
	pfd[1].fd = pe[0];
	pfd[0].events = pfd[1].events = POLLIN;
	while (pid > 0 && (pfd[0].fd >= 0 || pfd[1].fd >= 0 || !reaped)) {
		if (got_term == 1) {
			kill(-pid, SIGTERM);
			got_term = 2;
			term_at = now_ms();
		}
		if (term_at > 0 && now_ms() - term_at >= kill_grace_ms &&
		    !killed) {
			kill(-pid, SIGKILL);	/* it ignored SIGTERM */
			killed = 1;
		}
		left = deadline - now_ms();
		if (term_at > 0 && !killed &&
		    term_at + kill_grace_ms - now_ms() < left)
			left = term_at + kill_grace_ms - now_ms();
		if (deadline - now_ms() <= 0 && !timed_out) {
			kill(-pid, SIGKILL);
			timed_out = 1;
		}
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = 1;
			/* Its output is in the pipes, unless it left heirs. */
			for (i = 0; i < 2; i++)
				if (pfd[i].fd >= 0) {
					drain(pfd[i].fd, i == 0 ? &out : &err);
					close(pfd[i].fd);
					pfd[i].fd = -1;
				}
			break;
		}
		ts.tv_sec = left > 0 ? left / 1000 : 0;
		ts.tv_nsec = left > 0 ? (left % 1000) * 1000000 : 100000000;
		if (ppoll(pfd, 2, &ts, waitmask) == -1 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++)
			if (pfd[i].fd >= 0 && (pfd[i].revents &
			    (POLLIN | POLLHUP | POLLERR)) &&
			    drain(pfd[i].fd, i == 0 ? &out : &err) == 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
	}
	if (pid > 0 && !reaped)
		waitpid(pid, &status, 0);
	r = json_object_new_object();
	result_common(r, tool, pid > 0 && !exec_errno && !timed_out &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 0, t0);
	if (WIFEXITED(status) && pid > 0)
		json_object_object_add(r, "exit_code",
		    json_object_new_int(WEXITSTATUS(status)));
	if (WIFSIGNALED(status) && pid > 0) {
		char name[32];

		snprintf(name, sizeof(name), "SIG%s",
		    sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(
		    WTERMSIG(status)) : "UNKNOWN");
		json_object_object_add(r, "signal",
		    json_object_new_string(name));
	}
	if (timed_out)
		json_object_object_add(r, "timed_out",
		    json_object_new_boolean(1));
	json_object_object_add(r, "stdout", utf8_string(out.buf, out.len));
	json_object_object_add(r, "stderr", utf8_string(err.buf, err.len));
	if (out.truncated || err.truncated)
		json_object_object_add(r, "truncated",
		    json_object_new_boolean(1));
	if (exec_errno != 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "cannot run '%s': %s", argv[0],
		    strerror(exec_errno));
		json_object_object_add(r, "error", json_object_new_string(msg));
	} else if (timed_out) {
		json_object_object_add(r, "error", json_object_new_string(
		    "timed out: the tool's process group was killed"));
	} else if (WIFSIGNALED(status)) {
		char msg[64];

		snprintf(msg, sizeof(msg), "killed by signal %d (SIG%s)",
		    WTERMSIG(status), sigabbrev_np(WTERMSIG(status)) ?
		    sigabbrev_np(WTERMSIG(status)) : "?");
		json_object_object_add(r, "error", json_object_new_string(msg));
	} else if (WEXITSTATUS(status) != 0) {
		char msg[64];

		snprintf(msg, sizeof(msg), "exited with status %d",
		    WEXITSTATUS(status));
		json_object_object_add(r, "error", json_object_new_string(msg));
	}
	if (exec_errno == 0 && !timed_out && !out.truncated && out.len > 0) {
		out.buf[out.len] = '\0';
		parsed = json_tokener_parse(out.buf);
		if (json_object_is_type(parsed, json_type_object) ||
		    json_object_is_type(parsed, json_type_array))
			json_object_object_add(r, "result", parsed);
		else
			json_object_put(parsed);
	}
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], "CMDGATE_", 8) == 0)
			free(env[i]);
	free(env);
	free(argv);
	free(out.buf);
	free(err.buf);
	return r;
}

static json_object *
fwd_fail(json_object *r, const char *fmt, const char *detail)
{
	char	msg[512];

	json_object_object_add(r, "ok", json_object_new_boolean(0));
	snprintf(msg, sizeof(msg), fmt, detail);
	json_object_object_add(r, "error", json_object_new_string(msg));
	return r;
}

/* Wait for fd until the deadline; 1 ready, 0 timed out, -1 cancelled. */
static int
fwd_wait(int fd, short events, int64_t deadline, const sigset_t *waitmask)
{
	struct pollfd	pfd = { fd, events, 0 };
	struct timespec	ts;
	int64_t		left;

	for (;;) {
		if (got_term)
			return -1;
		if ((left = deadline - now_ms()) <= 0)
			return 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		if (ppoll(&pfd, 1, &ts, waitmask) > 0)
			return 1;
	}
}

static json_object *
fwd_exchange(int fd, json_object *r, const char *tool, json_object *params,
    int64_t deadline, const sigset_t *waitmask)
{
	json_object	*req, *resp, *v;
	const char	*s;
	char		*buf = NULL, *nl;
	size_t		 len = 0, cap = 0, n;
	ssize_t		 got;
	int		 w;

	req = json_object_new_object();
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int(1));
	json_object_object_add(req, "method", json_object_new_string(tool));
	json_object_object_add(req, "params", params != NULL ?
	    json_object_get(params) : json_object_new_object());
	s = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &n);
	if (send(fd, s, n, MSG_NOSIGNAL) != (ssize_t)n ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		json_object_put(req);
		return fwd_fail(r, "upstream: send failed: %s", strerror(errno));
	}
	json_object_put(req);
	for (;;) {
		while ((nl = buf ? memchr(buf, '\n', len) : NULL) == NULL) {
			if ((w = fwd_wait(fd, POLLIN, deadline, waitmask)) <= 0) {
				free(buf);
				if (w == 0)
					json_object_object_add(r, "timed_out",
					    json_object_new_boolean(1));
				return fwd_fail(r, "upstream %s", w == 0 ?
				    "did not answer in time" : "call cancelled");
			}
			if (len + READ_CHUNK > cap) {
				cap = len + READ_CHUNK;
				if (cap > UPSTREAM_MAX) {
					free(buf);
					return fwd_fail(r, "upstream: answer "
					    "longer than %s", "64 MiB");
				}
				buf = realloc(buf, cap + 1);
			}
			got = recv(fd, buf + len, cap - len, 0);
			if (got == 0) {
				free(buf);
				return fwd_fail(r, "upstream closed the "
				    "connection %s", "before answering");
			}
			if (got > 0)
				len += (size_t)got;
		}
		*nl = '\0';
		resp = json_tokener_parse(buf);
		if (!json_object_is_type(resp, json_type_object)) {
			json_object_put(resp);
			free(buf);
			return fwd_fail(r, "upstream sent %s",
			    "something that is not JSON-RPC");
		}
		if (json_object_object_get_ex(resp, "id", &v) &&
		    json_object_get_int(v) == 1)
			break;
		json_object_put(resp);	/* a notification: not ours */
		n = (size_t)(nl - buf) + 1;
		memmove(buf, nl + 1, len - n);
		len -= n;
	}
	free(buf);
	if (json_object_object_get_ex(resp, "result", &v)) {
		json_object_object_add(r, "ok", json_object_new_boolean(1));
		json_object_object_add(r, "result", json_object_get(v));
	} else if (json_object_object_get_ex(resp, "error", &v)) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "upstream error %d: %s",
		    json_object_get_int(json_object_object_get(v, "code")),
		    json_object_get_string(json_object_object_get(v,
		    "message")));
		json_object_object_add(r, "ok", json_object_new_boolean(0));
		json_object_object_add(r, "error", json_object_new_string(msg));
		json_object_object_add(r, "upstream_error",
		    json_object_get(v));
	} else
		fwd_fail(r, "upstream sent %s", "an answer with neither "
		    "result nor error");
	json_object_put(resp);
	return r;
}

static json_object *
run_forward(json_object *cmd, size_t index, const sigset_t *waitmask)
{
	json_object	*v, *params = NULL, *r = json_object_new_object();
	struct addrinfo	 hints, *ai = NULL;
	const char	*tool, *addr;
	char		 host[256], *colon;
	int64_t		 t0 = now_ms(), deadline;
	int		 fd = -1, w, err = 0;
	socklen_t	 elen = sizeof(err);

	json_object_object_get_ex(cmd, "tool", &v);
	tool = json_object_get_string(v);
	json_object_object_get_ex(cmd, "params", &params);
	json_object_object_get_ex(cmd, "forward", &v);
	addr = json_object_get_string(v);
	json_object_object_get_ex(cmd, "timeout_s", &v);
	deadline = t0 + json_object_get_int64(v) * 1000;
	json_object_object_add(r, "tool", json_object_new_string(tool));
	emit_start(index, 0);
	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	*colon = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((w = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
		fwd_fail(r, "upstream: %s", gai_strerror(w));
		goto out;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1 || (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1 &&
	    errno != EINPROGRESS)) {
		fwd_fail(r, "upstream: cannot connect: %s", strerror(errno));
		goto out;
	}
	if ((w = fwd_wait(fd, POLLOUT, deadline, waitmask)) <= 0) {
		if (w == 0)
			json_object_object_add(r, "timed_out",
			    json_object_new_boolean(1));
		fwd_fail(r, "upstream: %s", w == 0 ? "connect timed out" :
		    "call cancelled");
		goto out;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
	if (err != 0) {
		fwd_fail(r, "upstream: cannot connect: %s", strerror(err));
		goto out;
	}
	fwd_exchange(fd, r, tool, params, deadline, waitmask);
out:
	if (fd != -1)
		close(fd);
	if (ai != NULL)
		freeaddrinfo(ai);
	json_object_object_add(r, "duration_ms",
	    json_object_new_int64(now_ms() - t0));
	return r;
}

static json_object *
read_spec(void)
{
	struct json_tokener	*tok = json_tokener_new();
	json_object		*spec = NULL;
	char			 buf[READ_CHUNK];
	size_t			 total = 0;
	ssize_t			 n;

	while ((n = read(SPEC_FD, buf, sizeof(buf))) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 || (total += (size_t)n) > SPEC_MAX)
			break;
		spec = json_tokener_parse_ex(tok, buf, (int)n);
		if (json_tokener_get_error(tok) != json_tokener_continue)
			break;
	}
	close(SPEC_FD);
	json_tokener_free(tok);
	return spec;
}

int
main(int argc, char **argv)
{
	json_object		*spec, *cmds, *cmd, *v, *r;
	struct sigaction	 sa;
	sigset_t		 block, waitmask;
	const char		*ticket;
	size_t			 i, n, cap;
	int			 fail_fast, ok;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("cmdgate-worker %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (argc != 1 || fcntl(SPEC_FD, F_GETFD) == -1) {
		fprintf(stderr, "cmdgate-worker: started by cmdgated, not by "
		    "hand (see cmdgated(8))\n");
		return EXIT_USAGE;
	}
	close_range(SPEC_FD + 1, ~0U, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a write to a gone broker fails */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGCHLD);
	if ((spec = read_spec()) == NULL ||
	    !json_object_object_get_ex(spec, "commands", &cmds)) {
		fprintf(stderr, "cmdgate-worker: no job spec on fd 3\n");
		return EXIT_USAGE;
	}
	ticket = json_object_get_string(json_object_object_get(spec, "ticket"));
	fail_fast = json_object_get_boolean(json_object_object_get(spec,
	    "fail_fast"));
	cap = (size_t)json_object_get_int64(json_object_object_get(spec,
	    "output_cap"));
	if (json_object_object_get_ex(spec, "kill_grace", &v))
		kill_grace_ms = json_object_get_int64(v) * 1000;
	n = json_object_array_length(cmds);
	for (i = 0; i < n && !got_term; i++) {
		cmd = json_object_array_get_idx(cmds, i);
		if (json_object_object_get_ex(cmd, "exec", &v))
			r = run_exec(ticket, cmd, i, cap, &waitmask);
		else
			r = run_forward(cmd, i, &waitmask);
		ok = json_object_get_boolean(json_object_object_get(r, "ok"));
		emit_result(i, r);
		if (!ok && fail_fast)
			break;
	}
	json_object_put(spec);
	return 0;
}
