/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "jstrict.h"
#include "testnet.h"

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

const char *
broker_path(struct broker *b, const char *name)
{
	static char	path[256];

	snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	return path;
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
broker_prepare(struct broker *b)
{
	struct sockaddr_un	sun;

	memset(b, 0, sizeof(*b));
	b->pid = -1;
	b->pidfd = -1;
	snprintf(b->dir, sizeof(b->dir), "/tmp/cmdgate-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(b->dir));
	snprintf(b->sock, sizeof(b->sock), "%s/sock", b->dir);
	snprintf(b->log, sizeof(b->log), "%s/log", b->dir);
	b->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/notify", b->dir);
	ck_assert_int_eq(bind(b->notify_fd, (struct sockaddr *)&sun,
	    sizeof(sun)), 0);
}

/* Whether args name a token file: then the test is about auth. */
static int
args_have_token(const char **args)
{
	while (args != NULL && *args != NULL)
		if (strcmp(*args++, "--token-file") == 0)
			return 1;
	return 0;
}

static pid_t
broker_spawn(struct broker *b, const char **args, int with_defaults,
    int nofile)
{
	const char	*argv[64];
	const char	*bin = getenv("CMDGATED");
	char		 notify[256];
	int		 n = 0, fd;
	pid_t		 pid;

	ck_assert_msg(bin != NULL, "CMDGATED is not set (run via make check)");
	argv[n++] = bin;
	if (with_defaults) {
		argv[n++] = "--listen";
		argv[n++] = "127.0.0.1:0";
		argv[n++] = "--state-dir";
		argv[n++] = strdup(broker_path(b, "state"));
		argv[n++] = "--socket";
		argv[n++] = b->sock;
		if (!b->auth && !args_have_token(args))
			argv[n++] = "--no-auth";
	}
	while (args != NULL && *args != NULL && n < 62)
		argv[n++] = *args++;
	argv[n] = NULL;
	snprintf(notify, sizeof(notify), "%s/notify", b->dir);
	if ((pid = fork()) == 0) {
		/* A failed test never leaves a broker behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setenv("NOTIFY_SOCKET", notify, 1);
		unsetenv("CMDGATE_PORT");
		if (nofile > 0) {
			struct rlimit rl = { (rlim_t)nofile, (rlim_t)nofile };

			setrlimit(RLIMIT_NOFILE, &rl);
		}
		fd = open(b->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(fd, 2);
		execv(bin, (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	if (with_defaults)
		free((char *)argv[4]);
	b->pid = pid;
	b->pidfd = pidfd_open(pid, 0);
	ck_assert_int_ge(b->pidfd, 0);
	return pid;
}

static int
broker_reap(struct broker *b, int timeout_ms)
{
	struct pollfd	pfd = { b->pidfd, POLLIN, 0 };
	int		status;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -2;
	ck_assert_int_eq(waitpid(b->pid, &status, 0), b->pid);
	close(b->pidfd);
	b->pidfd = -1;
	b->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
broker_notified(struct broker *b, const char *want)
{
	struct pollfd	 pfd[2] = { { b->notify_fd, POLLIN, 0 },
			    { b->pidfd, POLLIN, 0 } };
	char		 msg[1024], *st;
	ssize_t		 n;

	for (;;) {
		if (poll(pfd, b->pidfd >= 0 ? 2 : 1, TN_TIMEOUT_MS) <= 0)
			return -1;
		if (!(pfd[0].revents & POLLIN))
			return -1;	/* the broker exited */
		n = recv(b->notify_fd, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			return -1;
		msg[n] = '\0';
		if ((st = strstr(msg, "STATUS=")) != NULL)
			snprintf(b->status, sizeof(b->status), "%.*s",
			    (int)strcspn(st + 7, "\n"), st + 7);
		if (strstr(msg, want) != NULL)
			return 0;
	}
}

int
broker_start(struct broker *b, const char **args, int nofile)
{
	const char	*p;

	broker_spawn(b, args, 1, nofile);
	if (broker_notified(b, "READY=1") == -1) {
		int rc = broker_reap(b, TN_TIMEOUT_MS);

		ck_assert_msg(rc != -2, "broker neither ready nor exited");
		return rc;
	}
	p = strstr(b->status, "127.0.0.1:");
	ck_assert_msg(p != NULL, "STATUS lacks the address: %s", b->status);
	b->port = atoi(p + 10);
	ck_assert_int_gt(b->port, 0);
	return 0;
}

int
broker_run(struct broker *b, const char **args)
{
	int	rc;

	broker_spawn(b, args, 0, 0);
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
 * exit changes the status and fails the test.
 */
void
broker_stop(struct broker *b)
{
	int	rc = 0;

	if (b->pid > 0 && (rc = broker_reap(b, 0)) == -2) {
		kill(b->pid, SIGTERM);
		if ((rc = broker_reap(b, TN_TIMEOUT_MS)) == -2) {
			kill(b->pid, SIGKILL);
			broker_reap(b, TN_TIMEOUT_MS);
		}
	}
	close(b->notify_fd);
	ck_assert_msg(rc == 0, "cmdgated exited with %d; its log is %s", rc,
	    b->log);
	nftw(b->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int
wait_for_file(const char *path)
{
	char		 dir[512], buf[4096], *slash;
	struct pollfd	 pfd;
	int		 fd, rc = -1;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((fd = inotify_init1(IN_CLOEXEC)) == -1 ||
	    inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO) == -1)
		return -1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* Watch first, then look: a file made in between is not missed. */
	while (access(path, F_OK) != 0) {
		if (poll(&pfd, 1, TN_TIMEOUT_MS) != 1)
			goto out;
		(void)!read(fd, buf, sizeof(buf));
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int
broker_log_count(struct broker *b, const char *needle)
{
	FILE	*f = fopen(b->log, "r");
	char	 line[4096];
	int	 n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
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
	struct timeval	 tv = { TN_TIMEOUT_MS / 1000, 0 };
	int		 one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	jsonl_init(&c->jl, fd, TN_BUF);
	c->jl.wait = client_wait;
	c->notes = json_object_new_array();
	return c;
}

int
tcp_dial(int port)
{
	struct sockaddr_in	sin;
	int			fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd != -1 && connect(fd, (struct sockaddr *)&sin,
	    sizeof(sin)) == -1) {
		close(fd);
		fd = -1;
	}
	return fd;
}

struct client *
client_tcp(int port)
{
	int	fd = tcp_dial(port);

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
