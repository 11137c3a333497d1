/* SPDX-License-Identifier: ISC */
/* What the cmdgate(1) suites share: a broker, and cmdgate run on it. */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "cliutil.h"
#include "testnet.h"

struct broker	b;
char		tools[256], fifo[256], port[16];
char		cli_out[OUT_MAX], cli_err[OUT_MAX];

void
setup(void)
{
	broker_prepare(&b);
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
}

void
teardown(void)
{
	broker_stop(&b);
}

void
start(const char **extra)
{
	const char	*args[16] = { "--tools", tools };
	char		 json[2048];
	int		 n = 2;

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"properties\":"
	    "{\"text\":{\"type\":\"string\",\"default\":\"\"},\"n\":"
	    "{\"type\":\"integer\"}}}},"
	    "{\"name\":\"count\",\"exec\":[\"echo\",\"{n}\"],\"params\":"
	    "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	    "\"integer\"}},\"required\":[\"n\"]}},"
	    "{\"name\":\"fail\",\"exec\":[\"sh\",\"-c\",\"exit 3\"]},"
	    "{\"name\":\"block\",\"busy\":\"tests_running\",\"exec\":[\"sh\","
	    "\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"locked\",\"enabled\":false,\"exec\":[\"true\"]},"
	    "{\"name\":\"rebuild\",\"tier\":\"heavy\",\"reload\":true,"
	    "\"exec\":[\"true\"]}"
	    "]}", fifo);
	write_file(tools, json, 0600);
	while (extra != NULL && *extra != NULL)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(port, sizeof(port), "%d", b.port);
}

/*
 * Run cmdgate with args (NULL-ended) and input on stdin; its exit status,
 * stdout in cli_out, stderr in cli_err.
 */
int
run(const char *input, const char *first, ...)
{
	const char	*argv[64];
	const char	*bin = getenv("CMDGATE");
	va_list		 ap;
	int		 in[2], o[2], e[2], status;
	pid_t		 pid;

	ck_assert_ptr_nonnull(bin);
	argv[0] = bin;
	va_start(ap, first);
	args_collect(argv, 1, 64, first, ap);
	va_end(ap);
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(o), 0);
	ck_assert_int_eq(pipe(e), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(in[1]);
		close(o[0]);
		close(e[0]);
		setenv("CMDGATE_PORT", port, 1);
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		execv(bin, (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(o[1]);
	close(e[1]);
	if (input != NULL)
		ck_assert_int_eq(write(in[1], input, strlen(input)),
		    (ssize_t)strlen(input));
	close(in[1]);
	fd_slurp(o[0], cli_out, OUT_MAX);
	fd_slurp(e[0], cli_err, OUT_MAX);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

json_object *
out_json(void)
{
	json_object	*o = json_tokener_parse(cli_out);

	ck_assert_msg(o != NULL, "not JSON: %.300s", cli_out);
	return o;
}

/*
 * Start cmdgate --socket (the broker's, the same across its restarts)
 * with args (NULL-ended) in the background; its stderr on *errfd.
 */
pid_t
spawn_cli(int *errfd, const char **args)
{
	const char	*argv[32] = { getenv("CMDGATE"), "--socket", b.sock };
	int		 n = 3, e[2];
	pid_t		 pid;

	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	ck_assert_int_eq(pipe(e), 0);
	if ((pid = fork()) == 0) {
		dup2(e[1], 2);
		close(e[0]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(e[1]);
	*errfd = e[0];
	return pid;
}

/* Read fd into cli_err until it holds want (bounded by TN_TIMEOUT_MS). */
int
await_err(int fd, const char *want)
{
	static size_t	 n;
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	ssize_t		 r;

	if (want == NULL) {
		n = 0;
		cli_err[0] = '\0';
		return 1;
	}
	while (strstr(cli_err, want) == NULL) {
		if (poll(&pfd, 1, TN_TIMEOUT_MS) != 1 ||
		    (r = read(fd, cli_err + n, OUT_MAX - 1 - n)) <= 0)
			return 0;
		n += (size_t)r;
		cli_err[n] = '\0';
	}
	return 1;
}

/* A Unix-socket JSON-RPC call to the broker; the result (caller puts). */
json_object *
broker_call(const char *line)
{
	struct client	*c = client_unix(b.sock);
	json_object	*r = client_call(c, line), *res;

	res = json_object_get(jpath(r, "result"));
	ck_assert_msg(res != NULL, "%s: %.300s", line,
	    json_object_to_json_string(r));
	json_object_put(r);
	client_close(c);
	return res;
}

/* ticket is queued, held by tests_running. */
void
assert_held(const char *ticket)
{
	char		 line[256];
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}", ticket);
	r = broker_call(line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "status")), "queued");
	ck_assert_str_eq(json_object_get_string(jpath(r, "blocked_by")),
	    "tests_running");
	json_object_put(r);
}

/* Read fd into cli_out until it holds want (bounded by TN_TIMEOUT_MS). */
int
await_out(int fd, const char *want)
{
	size_t		 n = strlen(cli_out);
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	ssize_t		 r;

	while (strstr(cli_out, want) == NULL) {
		if (poll(&pfd, 1, TN_TIMEOUT_MS) != 1 ||
		    (r = read(fd, cli_out + n, OUT_MAX - 1 - n)) <= 0)
			return 0;
		n += (size_t)r;
		cli_out[n] = '\0';
	}
	return 1;
}

/* The squatter's connection c: what it reads to rec, each line answered. */
static void
squat_serve(int c, int rec)
{
	static const char	 no[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
				    "\"error\":{\"code\":-32005,\"message\":"
				    "\"Unauthorized\"}}\n";
	char			 buf[4096];
	ssize_t			 n, i;

	while ((n = read(c, buf, sizeof(buf))) > 0) {
		if (write(rec, buf, (size_t)n) != n)
			return;
		for (i = 0; i < n; i++)
			if (buf[i] == '\n' &&
			    write(c, no, sizeof(no) - 1) == -1)
				return;
	}
}

/* The fds squat_main keeps: rec and ready, as 3 and 4. */
#define SQUAT_REC	3
#define SQUAT_READY	4

/*
 * The squatter's child: uid's from the socket on, its port to ready.  It
 * holds none of the test's fds (a client's stdin would never end).
 */
static void
squat_main(uid_t uid, int port, int rec, int ready)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 lfd, c, one = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if ((rec = fcntl(rec, F_DUPFD, SQUAT_READY + 1)) == -1 ||
	    (ready = fcntl(ready, F_DUPFD, SQUAT_READY + 1)) == -1 ||
	    dup2(rec, SQUAT_REC) == -1 || dup2(ready, SQUAT_READY) == -1)
		_exit(1);
	close_range(SQUAT_READY + 1, ~0U, 0);
	rec = SQUAT_REC;
	ready = SQUAT_READY;
	if (setgid(uid) == -1 || setuid(uid) == -1 ||
	    (lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		_exit(1);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 4) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &len) == -1)
		_exit(1);
	port = ntohs(sin.sin_port);
	if (write(ready, &port, sizeof(port)) != sizeof(port))
		_exit(1);
	close(ready);
	while ((c = accept(lfd, NULL, NULL)) != -1) {
		squat_serve(c, rec);
		close(c);
	}
	_exit(1);
}

void
squat_start(struct squat *sq, uid_t uid, int port)
{
	int	r[2], p[2];

	memset(sq, 0, sizeof(*sq));
	ck_assert_int_eq(pipe2(r, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	if ((sq->pid = fork()) == 0) {
		close(r[0]);
		close(p[0]);
		squat_main(uid, port, r[1], p[1]);
	}
	ck_assert_int_gt(sq->pid, 0);
	close(r[1]);
	close(p[1]);
	ck_assert_msg(read(p[0], &sq->port, sizeof(sq->port)) ==
	    sizeof(sq->port), "no listener of uid %u on port %d",
	    (unsigned)uid, port);
	close(p[0]);
	sq->rec = r[0];
}

/* Read what the squatter read, into seen; 0 at its end or TN_TIMEOUT_MS. */
static int
squat_read(struct squat *sq)
{
	struct pollfd	pfd = { sq->rec, POLLIN, 0 };
	ssize_t		r;

	if (poll(&pfd, 1, TN_TIMEOUT_MS) != 1 || (r = read(sq->rec,
	    sq->seen + sq->n, sizeof(sq->seen) - 1 - sq->n)) <= 0)
		return 0;
	sq->n += (size_t)r;
	sq->seen[sq->n] = '\0';
	return 1;
}

int
squat_await(struct squat *sq, const char *want, int n)
{
	const char	*p;
	int		 k;

	for (;;) {
		for (k = 0, p = sq->seen; (p = strstr(p, want)) != NULL; p++)
			k++;
		if (k >= n)
			return 1;
		if (!squat_read(sq))
			return 0;
	}
}

void
squat_stop(struct squat *sq)
{
	int	status;

	kill(sq->pid, SIGKILL);
	ck_assert_int_eq(waitpid(sq->pid, &status, 0), sq->pid);
	while (squat_read(sq))
		;
	close(sq->rec);
}
