/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "jstrict.h"
#include "testnet.h"

/* The number in path once a whole line of it is there, or -1. */
static int
line_number(const char *path)
{
	char	buf[64];
	FILE	*f;
	int	n;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fgets(buf, sizeof(buf), f) != NULL && strchr(buf, '\n') != NULL ?
	    atoi(buf) : -1;
	fclose(f);
	return n;
}

int
broker_file_number(struct broker *b, const char *name)
{
	struct pollfd	 pfd = { -1, POLLIN, 0 };
	struct timespec	 t0, t;
	char		 path[256], ev[4096];
	int		 n, left = BROKER_TIMEOUT_MS;

	snprintf(path, sizeof(path), "%s", broker_path(b, name));
	/* Created before it is written ("echo $$ >f"): a closed write or a
	 * rename in the dir says when to look again (watch, then look). */
	ck_assert_int_ne(pfd.fd = inotify_init1(IN_CLOEXEC), -1);
	ck_assert_int_ne(inotify_add_watch(pfd.fd, b->dir, IN_CLOSE_WRITE |
	    IN_MOVED_TO), -1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = line_number(path)) == -1 && left > 0) {
		ck_assert_msg(poll(&pfd, 1, left) == 1, "no line in %s", path);
		(void)!read(pfd.fd, ev, sizeof(ev));
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = BROKER_TIMEOUT_MS - (int)((t.tv_sec - t0.tv_sec) *
		    1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
	}
	close(pfd.fd);
	ck_assert_msg(n != -1, "no line in %s", path);
	return n;
}

int
pid_ends_within(pid_t pid, int ms)
{
	struct pollfd	pfd = { -1, POLLIN, 0 };
	int		ended;

	if ((pfd.fd = pidfd_open(pid, 0)) == -1)
		return errno == ESRCH;
	ended = poll(&pfd, 1, ms) == 1;
	if (!ended) {
		/* Through the pidfd: never another process that got its pid;
		 * its group only if it leads one. */
		if (getpgid(pid) == pid)
			kill(-pid, SIGKILL);
		pidfd_send_signal(pfd.fd, SIGKILL, NULL, 0);
	}
	close(pfd.fd);
	return ended;
}

void
write_file(const char *path, const char *text, int mode)
{
	int	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_msg(fd != -1, "open %s", path);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	fchmod(fd, mode);
	close(fd);
}

void
fd_slurp(int fd, char *buf, size_t size)
{
	size_t	n = 0;
	ssize_t	r;

	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
}

void
args_collect(const char **args, int n, int max, const char *first,
    va_list ap)
{
	for (args[n] = first; args[n] != NULL && n < max - 2;
	    args[++n] = va_arg(ap, const char *))
		;
	args[n + 1] = NULL;
}

void
broker_prepare(struct broker *b)
{
	ck_assert_msg(broker_mkdir(b) == 0, "temp dir and notify socket: %s",
	    strerror(errno));
}

static void
tn_spawn(struct broker *b, const char **args, int with_defaults, int nofile)
{
	struct broker_how	how = { with_defaults, NULL, with_defaults, 1,
				    nofile };

	ck_assert_msg(getenv("CMDGATED") != NULL,
	    "CMDGATED is not set (run via make check)");
	ck_assert_int_gt(broker_spawn(b, args, &how), 0);
	ck_assert_int_ge(b->pidfd, 0);
}

int
broker_start(struct broker *b, const char **args, int nofile)
{
	tn_spawn(b, args, 1, nofile);
	if (broker_ready(b) == -1) {
		int rc = broker_reap(b, TN_TIMEOUT_MS);

		ck_assert_msg(rc != -2, "broker neither ready (with its "
		    "address) nor exited; STATUS=%s", b->status);
		return rc;
	}
	return 0;
}

int
broker_run(struct broker *b, const char **args)
{
	int	rc;

	tn_spawn(b, args, 0, 0);
	rc = broker_reap(b, TN_TIMEOUT_MS);
	ck_assert_msg(rc != -2, "cmdgated did not exit");
	return rc;
}

int
broker_signal_wait(struct broker *b, int sig)
{
	int	rc;

	kill(b->pid, sig);
	rc = broker_reap(b, TN_TIMEOUT_MS);
	ck_assert_msg(rc != -2, "cmdgated did not exit after signal %d", sig);
	return rc;
}

/*
 * A clean stop exits 0: under the sanitizers, an error or a leak found at
 * exit changes the status and fails the test.  And it leaves no process
 * behind.
 */
void
broker_stop(struct broker *b)
{
	char	strays[1024];
	int	rc = 0, n;

	if (b->pid > 0 && (rc = broker_reap(b, 0)) == -2)
		rc = broker_kill(b, SIGTERM);
	ck_assert_msg(rc == 0, "cmdgated exited with %d; its log is %s", rc,
	    b->log);
	/* Nothing it started may outlive it: no tool, worker or fork server. */
	n = broker_strays(b, strays, sizeof(strays));
	broker_rmdir(b);
	ck_assert_msg(n == 0, "%d process(es) outlived cmdgated: %s", n,
	    strays);
}

/*
 * Wait for c's socket as long as its SO_RCVTIMEO (a test may lengthen
 * it): each read, not each line, is bounded, as with a blocking recv.
 */
static int
client_wait(void *arg, int fd, int ms)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	struct timeval	tv;
	socklen_t	len = sizeof(tv);
	int		n;

	(void)arg;	/* ms is always -1: no limit per line */
	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) == -1)
		return JSONL_WAIT_ERROR;
	ms = tv.tv_sec == 0 && tv.tv_usec == 0 ? -1 :
	    (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
	if ((n = poll(&pfd, 1, ms)) == 0)
		errno = EAGAIN;
	if (n == -1 && errno == EINTR)
		return 0;
	return n > 0 ? 1 : JSONL_WAIT_ERROR;
}

static struct client *
client_new(int fd)
{
	struct client	*c = calloc(1, sizeof(*c));
	struct timeval	 tv = { TN_READ_MS / 1000, 0 };
	struct timeval	 stv = { TN_TIMEOUT_MS / 1000, 0 };
	int		 one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &stv, sizeof(stv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	jsonl_init(&c->jl, fd, TN_BUF);
	c->jl.wait = client_wait;
	c->notes = json_object_new_array();
	return c;
}

struct client *
client_tcp(int port)
{
	int	fd = broker_dial(port);

	ck_assert_msg(fd != -1, "connect 127.0.0.1:%d: %s", port,
	    strerror(errno));
	return client_new(fd);
}

struct client *
client_unix(const char *path)
{
	struct sockaddr_un	sun;
	int			fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
	    "connect %s: %s", path, strerror(errno));
	return client_new(fd);
}

void
client_close(struct client *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	jsonl_free(&c->jl);
	json_object_put(c->notes);
	free(c);
}

void
client_send(struct client *c, const char *s)
{
	ck_assert_msg(jsonl_send(c->fd, s, strlen(s)) == 0, "send: %s",
	    strerror(errno));
}

char *
client_line(struct client *c)
{
	char	*line;

	return jsonl_line(&c->jl, -1, &line, NULL) == JSONL_MSG ? line : NULL;
}

char *
client_read(struct client *c, size_t n)
{
	char	*s;

	return jsonl_take(&c->jl, -1, n, &s) == JSONL_MSG ? s : NULL;
}

json_object *
client_call(struct client *c, const char *line)
{
	char		*s, *msg;
	json_object	*r;

	/* One write: a second small one would wait out delayed ACKs. */
	if (asprintf(&msg, "%s\n", line) == -1)
		ck_abort_msg("asprintf");
	client_send(c, msg);
	free(msg);
	for (;;) {
		s = client_line(c);
		ck_assert_msg(s != NULL, "no answer to %.200s", line);
		jstrict_parse_str(s, &r);
		ck_assert_msg(r != NULL, "answer is not JSON: %.200s", s);
		free(s);
		if (json_object_is_type(r, json_type_array) ||
		    json_object_object_get_ex(r, "id", NULL))
			return r;
		json_object_array_add(c->notes, r);
	}
}

json_object *
client_auth(struct client *c, const char *token)
{
	char	line[512];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"authenticate\",\"params\":{\"token\":\"%s\"}}", token);
	return client_call(c, line);
}

json_object *
client_wait_method(struct client *c, const char *method)
{
	json_object	*r, *m;
	char		*s;

	while (json_object_array_length(c->notes) > 0) {
		r = json_object_get(json_object_array_get_idx(c->notes, 0));
		json_object_array_del_idx(c->notes, 0, 1);
		if (json_object_object_get_ex(r, "method", &m) &&
		    strcmp(json_object_get_string(m), method) == 0)
			return r;
		json_object_put(r);
	}
	while ((s = client_line(c)) != NULL) {
		jstrict_parse_str(s, &r);
		free(s);
		if (r != NULL && json_object_object_get_ex(r, "method", &m) &&
		    strcmp(json_object_get_string(m), method) == 0)
			return r;
		json_object_put(r);
	}
	return NULL;
}

int
client_eof(struct client *c)
{
	char	buf[4096];
	ssize_t	n;

	c->jl.len = 0;
	while ((n = recv(c->fd, buf, sizeof(buf), 0)) > 0)
		;
	return n == 0 || (n == -1 && errno == ECONNRESET);
}

json_object *
jpath(json_object *o, const char *path)
{
	char		 buf[256], *tok, *save;
	json_object	*v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok != NULL;
	    tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(v, json_type_array)) {
			if (*tok < '0' || *tok > '9' || (size_t)atoi(tok) >=
			    json_object_array_length(v))
				return NULL;
			v = json_object_array_get_idx(v, (size_t)atoi(tok));
		} else if (!json_object_object_get_ex(v, tok, &v))
			return NULL;
	}
	return v;
}
