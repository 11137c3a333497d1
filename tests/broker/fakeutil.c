/* SPDX-License-Identifier: ISC */
/* The test's side of the fake editor bridges: see fakeutil.h. */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "fakeutil.h"
#include "jstrict.h"

#define FAKE_LINE_MAX	(1024 * 1024)

static void
fake_spawn(struct fake *f, const char **argv)
{
	int	in[2], out[2];

	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	/* A socket: jsonl reads with recv(2). */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    out), 0);
	if ((f->pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(f->pid, 0);
	close(in[0]);
	close(out[1]);
	f->ctl = in[1];
	f->outfd = out[0];
	jsonl_init(&f->out, f->outfd, FAKE_LINE_MAX);
}

void
fake_start(struct fake *f, const char *env, ...)
{
	const char	*argv[16];
	va_list		 ap;
	int		 n = 1;

	memset(f, 0, sizeof(*f));
	argv[0] = getenv(env);
	ck_assert_msg(argv[0] != NULL, "%s is not set (run via make check)",
	    env);
	va_start(ap, env);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	fake_spawn(f, argv);
	fake_await(f, "port ");
	/* Its first line. */
	f->port = atoi(f->log + strlen("port "));
	ck_assert_int_gt(f->port, 0);
}

/*
 * A NUL byte a fake printed (a string it was sent) is kept as the six
 * characters \u0000: the log is searched as C strings.
 */
static void
fake_append(struct fake *f, const char *line, size_t n)
{
	size_t	i;

	f->log = realloc(f->log, f->loglen + 6 * n + 2);
	ck_assert_ptr_nonnull(f->log);
	for (i = 0; i < n; i++)
		if (line[i] != '\0')
			f->log[f->loglen++] = line[i];
		else {
			memcpy(f->log + f->loglen, "\\u0000", 6);
			f->loglen += 6;
		}
	f->log[f->loglen++] = '\n';
	f->log[f->loglen] = '\0';
}

/* The first line at or after from that begins with prefix: its end. */
static size_t
fake_find(struct fake *f, size_t from, const char *prefix)
{
	const char	*p = f->log + from, *nl;

	for (; p < f->log + f->loglen; p = nl + 1) {
		nl = strchr(p, '\n');
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return (size_t)(nl + 1 - f->log);
	}
	return 0;
}

void
fake_await(struct fake *f, const char *prefix)
{
	enum jsonl_status	 st;
	size_t			 end, n;
	char			*line;

	while (f->log == NULL || (end = fake_find(f, f->seen, prefix)) == 0) {
		st = jsonl_line(&f->out, TN_TIMEOUT_MS, &line, &n);
		ck_assert_msg(st == JSONL_MSG, "fake: no \"%s\" (%s); log:\n%s",
		    prefix, jsonl_strerror(st), f->log ? f->log : "");
		fake_append(f, line, n);
		free(line);
	}
	f->seen = end;
}

int
fake_poll(struct fake *f, const char *prefix)
{
	enum jsonl_status	 st;
	size_t			 end, n;
	char			*line;

	while (f->log == NULL || (end = fake_find(f, f->seen, prefix)) == 0) {
		st = jsonl_line(&f->out, 0, &line, &n);
		if (st == JSONL_TIMEOUT)
			return 0;
		ck_assert_msg(st == JSONL_MSG, "fake: %s; log:\n%s",
		    jsonl_strerror(st), f->log ? f->log : "");
		fake_append(f, line, n);
		free(line);
	}
	f->seen = end;
	return 1;
}

void
fake_ctl(struct fake *f, const char *line)
{
	char	buf[256];
	size_t	seen = f->seen;

	snprintf(buf, sizeof(buf), "%s\n", line);
	ck_assert_int_eq(write(f->ctl, buf, strlen(buf)),
	    (ssize_t)strlen(buf));
	snprintf(buf, sizeof(buf), "ctl %s", line);
	fake_await(f, buf);
	/* A control line is no event of the editor: keep the place. */
	f->seen = seen;
}

int
fake_count(struct fake *f, const char *prefix)
{
	size_t	from = 0, end;
	int	n = 0;

	while (f->log != NULL && (end = fake_find(f, from, prefix)) != 0) {
		n++;
		from = end;
	}
	return n;
}

void
fake_stop(struct fake *f)
{
	int	i, status;

	if (f->pid <= 0)
		return;
	close(f->ctl);
	for (i = 0; i < TN_TIMEOUT_MS / 10; i++) {
		if (waitpid(f->pid, &status, WNOHANG) == f->pid)
			break;
		usleep(10000);
	}
	if (i == TN_TIMEOUT_MS / 10) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, &status, 0);
	}
	f->pid = -1;
	jsonl_free(&f->out);
	close(f->outfd);
	free(f->log);
	f->log = NULL;
}

struct client *
unity_open(int port)
{
	struct client	*c = client_tcp(port);
	char		*line = client_line(c);

	ck_assert_msg(line != NULL, "no WELCOME from 127.0.0.1:%d", port);
	ck_assert_str_eq(line, "WELCOME UNITY-MCP 1 FRAMING=1");
	free(line);
	return c;
}

json_object *
unity_call(struct client *c, const char *payload)
{
	unsigned char	 hdr[8];
	uint64_t	 n = strlen(payload);
	char		*s;
	json_object	*r;
	int		 i;

	for (i = 0; i < 8; i++)
		hdr[i] = (unsigned char)(n >> (56 - 8 * i));
	ck_assert_int_eq(jsonl_send(c->fd, (char *)hdr, 8), 0);
	ck_assert_int_eq(jsonl_send(c->fd, payload, n), 0);
	s = client_read(c, 8);
	ck_assert_msg(s != NULL, "no answer to %s", payload);
	for (n = 0, i = 0; i < 8; i++)
		n = n << 8 | (unsigned char)s[i];
	free(s);
	ck_assert(n > 0 && n < 1024 * 1024);
	s = client_read(c, n);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(jstrict_parse_str(s, &r) == 0, "not JSON: %s", s);
	free(s);
	return r;
}

json_object *
lsp_call(struct client *c, const char *body)
{
	char		 head[64], *line, *s;
	size_t		 n = 0;
	json_object	*r;

	snprintf(head, sizeof(head), "Content-Length: %zu\r\n\r\n",
	    strlen(body));
	client_send(c, head);
	client_send(c, body);
	while ((line = client_line(c)) != NULL && strcmp(line, "\r") != 0) {
		if (strncmp(line, "Content-Length: ", 16) == 0)
			n = strtoul(line + 16, NULL, 10);
		free(line);
	}
	ck_assert_msg(line != NULL && n > 0, "no LSP answer to %s", body);
	free(line);
	s = client_read(c, n);
	ck_assert_ptr_nonnull(s);
	ck_assert_msg(jstrict_parse_str(s, &r) == 0, "not JSON: %s", s);
	free(s);
	return r;
}

/* s with every from replaced by to.  Caller frees. */
char *
subst(const char *s, const char *from, const char *to)
{
	size_t		 n = strlen(s) + 1, fl = strlen(from), tl = strlen(to);
	const char	*p;
	char		*out, *o;

	for (p = s; (p = strstr(p, from)) != NULL; p += fl)
		n += tl;
	o = out = malloc(n);
	ck_assert_ptr_nonnull(out);
	for (p = s; (p = strstr(s, from)) != NULL; s = p + fl) {
		memcpy(o, s, (size_t)(p - s));
		o += p - s;
		memcpy(o, to, tl);
		o += tl;
	}
	strcpy(o, s);
	return out;
}

/*
 * The shipped table etc/tools/NAME as the broker's: its bridge ports
 * (6400, 8700) are the fake's, and from is to (when from is not NULL).
 */
void
table_for(const char *out, const char *name, int port, const char *from,
    const char *to)
{
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 path[1024], addr[32], text[32768], *a, *t;
	FILE		*f;
	size_t		 n;

	snprintf(path, sizeof(path), "%s/etc/tools/%s", src ? src : ".", name);
	ck_assert_msg((f = fopen(path, "r")) != NULL, "%s", path);
	n = fread(text, 1, sizeof(text) - 1, f);
	ck_assert(n > 0 && n < sizeof(text) - 1);
	text[n] = '\0';
	fclose(f);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	a = subst(text, "127.0.0.1:6400", addr);
	t = subst(a, "127.0.0.1:8700", addr);
	free(a);
	if (from != NULL) {
		a = t;
		t = subst(a, from, to);
		free(a);
	}
	write_file(out, t, 0600);
	free(t);
}

/* cmdgate (CMDGATE) with args on the broker's port: its pid, stdout in *out. */
pid_t
cli_spawn(int port, int *out, const char *first, ...)
{
	const char	*argv[32] = { getenv("CMDGATE"), "--json" };
	char		 portstr[16];
	va_list		 ap;
	int		 o[2];
	pid_t		 pid;

	ck_assert_ptr_nonnull(argv[0]);
	va_start(ap, first);
	args_collect(argv, 2, 32, first, ap);
	va_end(ap);
	snprintf(portstr, sizeof(portstr), "%d", port);
	ck_assert_int_eq(pipe(o), 0);
	if ((pid = fork()) == 0) {
		dup2(o[1], 1);
		close(o[0]);
		setenv("CMDGATE_PORT", portstr, 1);
		unsetenv("CMDGATE_SOCKET");
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(o[1]);
	*out = o[0];
	return pid;
}

/* Its exit status is want; its output as JSON (caller puts). */
json_object *
cli_end(pid_t pid, int out, int want)
{
	char		 buf[65536];
	json_object	*r;
	int		 status;

	fd_slurp(out, buf, sizeof(buf));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == want,
	    "cmdgate: status %d, not %d: %s", status, want, buf);
	ck_assert_msg(jstrict_parse_str(buf, &r) == 0, "not JSON: %s", buf);
	return r;
}
