/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the small helpers and the programs under test -- cmdgated,
 * a loopback floor, beanstalkd -- started and stopped (see bench.c).
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "broker.h"
#include "jsonl.h"
#include "peers.h"

extern char	**environ;
char		  tmpdir[] = "/tmp/cmdgate-bench-XXXXXX";
pid_t		  bench_pid;

/* ---- small helpers -------------------------------------------------- */

double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
die(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	fprintf(stderr, "cmdgate-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	/*
	 * A forked client of the bench's ends alone: the bench's exit handler
	 * would remove the temp dir (the brokers' state) under the others.
	 */
	if (bench_pid != 0 && getpid() != bench_pid)
		_exit(1);
	exit(1);
}

int
free_port(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	getsockname(fd, (struct sockaddr *)&sin, &len);
	port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

/* Wait (bounded) until something accepts on port. */
void
await_port(int port)
{
	struct timespec	ts = { 0, 2000000 };
	int		i, fd;

	for (i = 0; i < 5000; i++) {
		if ((fd = broker_dial(port)) != -1) {
			close(fd);
			return;
		}
		nanosleep(&ts, NULL);
	}
	die("nothing listens on port %d", port);
}

pid_t
spawn(char *const argv[], char *const envp[])
{
	posix_spawn_file_actions_t	fa;
	pid_t				pid;

	/* Their chatter (tsp prints job ids) would bury the figures. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv,
	    envp ? envp : environ) != 0)
		die("cannot run %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

int
run_wait(char *const argv[], char *const envp[])
{
	int	st;

	waitpid(spawn(argv, envp), &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void
stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Send s, read until n newline-ended lines arrived. */
void
xfer(int fd, const char *s, size_t len, int lines)
{
	char	buf[65536];
	ssize_t	r;
	int	seen = 0;

	if (len > 0 && send(fd, s, len, MSG_NOSIGNAL) != (ssize_t)len)
		die("send: %s", strerror(errno));
	while (seen < lines) {
		if ((r = recv(fd, buf, sizeof(buf), 0)) <= 0)
			die("recv: connection closed");
		for (ssize_t i = 0; i < r; i++)
			seen += buf[i] == '\n';
	}
}

/* One request, one answer line, returned parsed. */
json_object *
rpc(int fd, const char *line)
{
	struct jsonl		 jl;
	enum jsonl_status	 st;
	json_object		*o;

	if (jsonl_send(fd, line, strlen(line)) == -1)
		die("send: %s", strerror(errno));
	jsonl_init(&jl, fd, 1 << 16);
	st = jsonl_json(&jl, -1, &o);
	jsonl_free(&jl);
	if (st != JSONL_MSG)
		die("rpc: %s", jsonl_strerror(st));
	return o;
}

const char *
result_str(json_object *o, const char *name)
{
	json_object	*v = json_object_object_get(json_object_object_get(o,
			    "result"), name);

	return v != NULL ? json_object_get_string(v) : "";
}

/* clients processes, each n sequential requests; operations per second. */
double
concurrent(int port, const char *req, int lines, int clients, int n)
{
	int	go[2], i, k, st;
	pid_t	pids[64];
	char	c;
	double	t0;

	if (pipe(go) == -1)
		die("pipe");
	for (i = 0; i < clients; i++) {
		if ((pids[i] = fork()) == 0) {
			int fd = broker_dial(port);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			if (read(go[0], &c, 1) < 0 || fd == -1)
				_exit(1);
			for (k = 0; k < n; k++)
				xfer(fd, req, strlen(req), lines);
			_exit(0);
		}
	}
	close(go[0]);
	t0 = now();
	close(go[1]);		/* everyone starts */
	for (i = 0; i < clients; i++) {
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("a client failed");
	}
	return (double)clients * n / (now() - t0);
}

/* ---- the programs under test ----------------------------------------- */

/* Dial port until it answers, up to wait_s seconds or the broker's exit. */
static void
await_broker(struct broker *b, int port, int wait_s)
{
	struct pollfd	pfd = { b->pidfd, POLLIN, 0 };
	double		end = now() + wait_s;
	int		fd;

	while ((fd = broker_dial(port)) == -1) {
		if (now() > end || poll(&pfd, 1, 1) != 0)
			die("cmdgated did not become ready in %d s", wait_s);
	}
	close(fd);
	b->port = port;
}

/*
 * cmdgated with the bench's flags and state; ready when this returns.
 * wait_s 0: ready by its READY=1 (within BROKER_TIMEOUT_MS); else on a
 * port of ours, answering within wait_s seconds (a long restart).
 */
void
broker_launch(struct broker *b, const char *tools, const char *sync,
    const char *state, const char *const *extra, int wait_s)
{
	struct broker_how	 how = { 1, state, 0, 0, 0 };
	const char		*argv[40];
	char			 listen[32];
	int			 n = 0, port = free_port();

	if (wait_s > 0) {
		/* No defaults: our port, so that no READY need be awaited. */
		how.defaults = 0;
		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		argv[n++] = "--listen";
		argv[n++] = listen;
		argv[n++] = "--state-dir";
		argv[n++] = state;
		argv[n++] = "--no-auth";
	}
	argv[n++] = "--sync";
	argv[n++] = sync;
	argv[n++] = "--log-level";
	argv[n++] = "error";
	argv[n++] = "--max-queued";
	argv[n++] = "10000000";
	argv[n++] = "--max-clients";
	argv[n++] = "100000";
	if (tools != NULL) {
		argv[n++] = "--tools";
		argv[n++] = tools;
	}
	while (extra != NULL && *extra != NULL && n < 39)
		argv[n++] = *extra++;
	argv[n] = NULL;
	/* --no-auth comes with the defaults: a loopback bench. */
	if (broker_mkdir(b) == -1)
		die("broker temp dir: %s", strerror(errno));
	if (broker_spawn(b, argv, &how) == -1)
		die("cannot start cmdgated");
	if (wait_s > 0)
		await_broker(b, port, wait_s);
	else if (broker_ready(b) == -1)
		die("cmdgated did not become ready");
}

void
broker_start(struct broker *b, const char *tools, const char *sync,
    const char *state, const char *const *extra)
{
	broker_launch(b, tools, sync, state, extra, 0);
}

void
broker_stop(struct broker *b)
{
	broker_kill(b, SIGTERM);
	broker_rmdir(b);
}

void
rmtree(const char *path)
{
	char	*argv[] = { "rm", "-rf", (char *)path, NULL };

	run_wait(argv, NULL);
}

const char *
tmp(const char *name)
{
	static char	buf[8][512];
	static int	k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

void
write_text(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* One field of /proc/PID/schedstat of each of pid's threads, summed. */
static double
schedstat_s(pid_t pid)
{
	char		 path[300];
	DIR		*d;
	struct dirent	*de;
	FILE		*f;
	unsigned long long ns, sum = 0;
	int		 seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
		    (int)pid, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			sum += ns;
			seen++;
		}
		fclose(f);
	}
	closedir(d);
	return seen ? sum / 1e9 : -1;
}

/* utime + stime of pid from /proc/PID/stat, in seconds, or -1. */
static double
stat_s(pid_t pid)
{
	char			 path[64], buf[1024], *p;
	unsigned long long	 ut, st;
	FILE			*f;
	size_t			 n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields 14 and 15, counted after the command's closing ')'. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 2,
	    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	    &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

/*
 * CPU time pid has used so far, in seconds: the scheduler's nanosecond
 * count when the kernel keeps it, else utime + stime (clock ticks).
 */
double
cpu_s(pid_t pid)
{
	double	s = schedstat_s(pid);

	if (s < 0 && (s = stat_s(pid)) < 0)
		die("no CPU time for process %d", (int)pid);
	return s;
}

pid_t
beanstalkd_start(int *port, const char *binlog)
{
	char	p[16], *argv[10];
	pid_t	pid;
	int	n = 0;

	*port = free_port();
	snprintf(p, sizeof(p), "%d", *port);
	argv[n++] = "beanstalkd";
	argv[n++] = "-l";
	argv[n++] = "127.0.0.1";
	argv[n++] = "-p";
	argv[n++] = p;
	if (binlog != NULL) {
		argv[n++] = "-b";
		argv[n++] = (char *)binlog;
		argv[n++] = "-f0";
	}
	argv[n] = NULL;
	/* A server of ours: it dies with the bench, whatever ends it. */
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid == -1)
		die("fork: %s", strerror(errno));
	await_port(*port);
	return pid;
}
