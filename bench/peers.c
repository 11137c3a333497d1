/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the small helpers and the programs under test -- cmdgated,
 * a loopback floor, beanstalkd -- started and stopped (see bench.c).
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

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
#include "store.h"
#include "ticket.h"
#include "peers.h"

extern char	**environ;
char		  tmpdir[] = "/tmp/cmdgate-bench-XXXXXX";

/* ---- small helpers -------------------------------------------------- */

double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmpd(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3
summarize(double *v, int n)
{
	struct stat3	s;

	qsort(v, (size_t)n, sizeof(double), cmpd);
	s.med = v[n / 2];
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

void
report(const char *what, const char *unit, struct stat3 s)
{
	printf("  %-44s %10.1f %s  [%.1f-%.1f]\n", what, s.med, unit, s.min,
	    s.max);
}

void
ratio(const char *what, double r, const char *target)
{
	printf("  %-44s %10.2fx  (target %s)\n", what, r, target);
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

/* ---- the programs under test ----------------------------------------- */

/* cmdgated with the bench's flags and state; ready when this returns. */
void
broker_start(struct broker *b, const char *tools, const char *sync,
    const char *state)
{
	struct broker_how	 how = { 1, state, 0, 0, 0 };
	const char		*argv[16];
	int			 n = 0;

	argv[n++] = "--sync";
	argv[n++] = sync;
	argv[n++] = "--log-level";
	argv[n++] = "error";
	argv[n++] = "--max-queued";
	argv[n++] = "1000000";
	argv[n++] = "--max-clients";
	argv[n++] = "100000";
	if (tools != NULL) {
		argv[n++] = "--tools";
		argv[n++] = tools;
	}
	argv[n] = NULL;
	/* --no-auth comes with the defaults: a loopback bench. */
	if (broker_mkdir(b) == -1)
		die("broker temp dir: %s", strerror(errno));
	if (broker_spawn(b, argv, &how) == -1 || broker_ready(b) == -1)
		die("cmdgated did not become ready");
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

/* A loopback line echo server: the floor of a request/response. */
pid_t
floor_start(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	char			buf[65536];
	ssize_t			r;
	pid_t			pid;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(lfd, (struct sockaddr *)&sin, sizeof(sin));
	listen(lfd, 64);
	getsockname(lfd, (struct sockaddr *)&sin, &len);
	*port = ntohs(sin.sin_port);
	if ((pid = fork()) != 0) {
		close(lfd);
		return pid;
	}
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(0);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
			if (send(fd, buf, (size_t)r, MSG_NOSIGNAL) != r)
				break;
		close(fd);
	}
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
	pid = spawn(argv, NULL);
	await_port(*port);
	return pid;
}
