/* SPDX-License-Identifier: ISC */
/*
 * cmdgate mcp against the review of issue 18 (tests/RELIABILITY.md,
 * "Bridge review fixes (session 6)"): a request the broker refuses by
 * size, one that kills the connection, the bound on held requests, a
 * reconnection to a broker that does not answer, a cancellation while
 * the broker is away, the client's ids, batches, and stdio that is a
 * regular file.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "testnet.h"
#include "cliutil.h"
#include "ckrun.h"
#include "util.h"

#define INIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"," \
		"\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":" \
		"{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n" \
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"

/*
 * cmdgate ARGS mcp in the background (ARGS NULL-ended; NULL: --socket,
 * the broker's).  stdin, stdout and stderr piped unless *infd or
 * *outfd is already an fd (>= 0), which it gets instead.
 */
static pid_t
spawn_mcp(const char **args, int *infd, int *outfd, int *errfd)
{
	const char	*argv[16] = { getenv("CMDGATE") };
	int		 i[2] = { -1, -1 }, o[2] = { -1, -1 }, e[2], n = 1;
	pid_t		 pid;

	if (args == NULL) {
		argv[n++] = "--socket";
		argv[n++] = b.sock;
	}
	while (args != NULL && *args != NULL)
		argv[n++] = *args++;
	argv[n++] = "mcp";
	argv[n] = NULL;
	/* Close-on-exec: no broker started meanwhile may hold them. */
	if (*infd < 0)
		ck_assert_int_eq(pipe2(i, O_CLOEXEC), 0);
	if (*outfd < 0)
		ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		unsetenv("CMDGATE_SOCKET");
		unsetenv("CMDGATE_TOKEN_FILE");
		unsetenv("CMDGATE_INSTANCE");
		dup2(*infd >= 0 ? *infd : i[0], 0);
		dup2(*outfd >= 0 ? *outfd : o[1], 1);
		dup2(e[1], 2);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	if (*infd < 0) {
		close(i[0]);
		*infd = i[1];
	}
	if (*outfd < 0) {
		close(o[1]);
		*outfd = o[0];
	}
	close(e[1]);
	*errfd = e[0];
	return pid;
}

static void
send_line(int fd, const char *line)
{
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
}

static int
count_of(const char *hay, const char *needle)
{
	int	n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

/* The line of cli_out that holds want, or NULL. */
static json_object *
out_line(const char *want)
{
	const char	*p = strstr(cli_out, want), *s, *e;
	json_object	*o;
	char		*line;

	if (p == NULL)
		return NULL;
	for (s = p; s > cli_out && s[-1] != '\n'; s--)
		;
	e = strchr(p, '\n');
	line = strndup(s, e != NULL ? (size_t)(e - s) : strlen(s));
	o = json_tokener_parse(line);
	free(line);
	return o;
}

/* Wait for pid (its stderr errfd ends when it exits): its exit status. */
static int
reap(pid_t pid, int errfd)
{
	int	status;

	await_err(errfd, "\x01never");	/* bounded: until EOF */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * Review item 1: a request above the broker's --max-message.  The
 * broker answers message_too_large (id null) and closes; the bridge
 * gives that error to the request, with its id, connects again once,
 * and refuses as long a request itself from then on, without losing the
 * connection again.  Before, it sent the request again on every new
 * connection, about ten times a second for ever.
 */
START_TEST(mcp_too_large)
{
	const char	*extra[] = { "--max-message", "2048", NULL };
	char		 big[4096], line[4400];
	json_object	*r;
	pid_t		 pid;
	int		 in = -1, out = -1, err;

	start(extra);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
	    "{\"text\":\"%s\"}}}\n", big);
	send_line(in, line);
	ck_assert_msg(await_out(out, "\"id\":5"), "stdout: %.300s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":5"));
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32600);
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "message_too_large");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(r,
	    "error.data.reason")), "2048"));
	json_object_put(r);
	/* Back on a new connection: a ping is answered. */
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":6"), "stdout: %.300s", cli_out);
	/* The same size again: refused by the bridge, the connection kept. */
	line[strlen("{\"jsonrpc\":\"2.0\",\"id\":") ] = '7';
	send_line(in, line);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":8"), "stdout: %.300s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":7"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "message_too_large");
	json_object_put(r);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":null"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_int_eq(count_of(cli_err, "broker lost"), 1);
	close(out);
	close(err);
}
END_TEST

/* A fake broker on a Unix socket: accept within TN_TIMEOUT_MS. */
static int
fake_accept(int lfd)
{
	struct pollfd	pfd = { lfd, POLLIN, 0 };

	ck_assert_int_eq(poll(&pfd, 1, TN_TIMEOUT_MS), 1);
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* The next line the bridge sends the fake broker on fd (caller frees). */
static char *
fake_line(int fd)
{
	char		*line = NULL;
	char		 c;
	size_t		 n = 0, cap = 0;
	struct pollfd	 pfd = { fd, POLLIN, 0 };

	for (;;) {
		ck_assert_int_eq(poll(&pfd, 1, TN_TIMEOUT_MS), 1);
		if (read(fd, &c, 1) != 1)
			break;
		if (n + 2 > cap)
			line = realloc(line, cap = cap * 2 + 256);
		if (c == '\n')
			break;
		line[n++] = c;
	}
	ck_assert_ptr_nonnull(line);
	line[n] = '\0';
	return line;
}

/*
 * Review item 1, the rest: a request that kills the connection (here a
 * fake broker closes it on reading "boom") is sent again once, and after
 * the second quick loss answered connection_lost and not sent again; the
 * backoff does not go back to 100 ms after a connection that did not
 * last (the try after the second loss comes 200 ms or more after it).
 */
START_TEST(mcp_killer_request)
{
	struct sockaddr_un	 sun;
	const char		*args[] = { "--socket", NULL, NULL };
	char			*l;
	json_object		*r;
	int64_t			 t0;
	int			 lfd, c, in = -1, out = -1, err;
	pid_t			 pid;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s",
	    broker_path(&b, "fake.sock"));
	args[1] = broker_path(&b, "fake.sock");
	ck_assert_int_ge(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(args, &in, &out, &err);
	ck_assert_int_ge(c = fake_accept(lfd), 0);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"boom\"}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "boom"));
	free(l);
	close(c);
	ck_assert_int_ge(c = fake_accept(lfd), 0);	/* sent again */
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "boom"));
	free(l);
	close(c);
	t0 = util_monotonic_ms();
	ck_assert_int_ge(c = fake_accept(lfd), 0);	/* not again */
	ck_assert_int_ge(util_monotonic_ms() - t0, 180);
	ck_assert_msg(await_out(out, "\"id\":2"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":2"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "connection_lost");
	json_object_put(r);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"ping\""));
	free(l);
	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n");
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %s", cli_out);
	close(in);
	close(c);
	ck_assert_int_eq(reap(pid, err), 0);
	close(lfd);
	close(out);
	close(err);
}
END_TEST

/*
 * Review item 2: while the broker is away the bridge holds at most 1024
 * requests; the next is answered bridge_full at once, and the ones held
 * are answered once the broker is back.
 */
START_TEST(mcp_bounded)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 line[128];
	pid_t		 pid;
	int		 i, in = -1, out = -1, err;
	json_object	*r;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	for (i = 100; i <= 100 + 1024; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}\n", i);
		send_line(in, line);
	}
	ck_assert_msg(await_out(out, "\"id\":1124"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":1124"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "bridge_full");
	json_object_put(r);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":100,"));
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_out(out, "\"id\":1123,"), "stdout: %.300s",
	    cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "\"id\":100,"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/*
 * Review item 3: reconnecting does not block.  The broker's port is
 * taken by a listener that accepts and never answers; the bridge,
 * waiting for its authentication there (--reply-timeout 60), still reads
 * its client: stdin closed, it gives up and exits at once.  Before, it
 * sat in cg_connect's poll for the whole reply timeout.
 */
START_TEST(mcp_reconnect_nonblocking)
{
	struct sockaddr_in	 sin;
	const char		*args[] = { "--port", port, "--state-dir",
				    NULL, "--reply-timeout", "60", NULL };
	char			 dir[256], *l;
	int			 lfd, c, one = 1, in = -1, out = -1, err;
	pid_t			 pid;

	b.auth = 1;
	start(NULL);
	snprintf(dir, sizeof(dir), "%s", broker_path(&b, "state"));
	args[3] = dir;
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(args, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)b.port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_ge(c = fake_accept(lfd), 0);
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"authenticate\""));
	free(l);
	close(in);
	ck_assert_msg(await_err(err, "gave up"), "stderr: %s", cli_err);
	ck_assert_int_eq(reap(pid, err), 0);
	close(c);
	close(lfd);
	close(out);
	close(err);
}
END_TEST

static void
mcp_tools_reload(void)
{
	write_file(tools, "{\"tools\":[{\"name\":\"rebuild\",\"tier\":"
	    "\"heavy\",\"reload\":true,\"exec\":[\"echo\",\"rebuilt\"]}]}",
	    0600);
}

/* editor-state --tests-running holding reloads until *wfd is closed. */
static pid_t
mcp_hold(int *hfd, int *wfd)
{
	const char	*cli[] = { "editor-state", "--tests-running", "--",
			    "sh", "-c", NULL, NULL };
	static char	 cmd[512];
	pid_t		 hold;

	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	cli[5] = cmd;
	hold = spawn_cli(hfd, cli);
	ck_assert_int_ge(*wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	return hold;
}

/* The status of ticket once it ends; caller frees. */
static char *
mcp_job_end(const char *ticket)
{
	char		 line[256], *s;
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
	    "\"timeout_s\":10}}", ticket);
	r = broker_call(line);
	s = strdup(json_object_get_string(jpath(r, "status")));
	json_object_put(r);
	return s;
}

/*
 * Review item 4: a tools/call whose job is queued (held) when the broker
 * is killed, cancelled by the client while it is away.  The bridge sends
 * the call again with its key, then the cancellation: the job ends
 * cancelled, not done.  Before, the cancellation only dropped the call,
 * and the job ran after the restart.
 */
START_TEST(mcp_cancel_while_down)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid, hold;
	int		 in = -1, out = -1, err, hfd, wfd, status;
	char		*st;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	hold = mcp_hold(&hfd, &wfd);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rebuild\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
	/* The ping is read after the call's job is stored. */
	ck_assert_msg(await_out(out, "\"id\":8"), "stdout: %s", cli_out);
	assert_held("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}\n");
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	/* After the replay: the ping is answered once it is done. */
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":9"), "stdout: %s", cli_out);
	close(wfd);	/* the hold ends */
	st = mcp_job_end("t-000000");
	ck_assert_str_eq(st, "cancelled");
	free(st);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":7"));
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
	close(hfd);
}
END_TEST

/*
 * Review item 6: a client's id that looks like the bridge's own
 * ("cmdgate-bridge:...", what they were) is the client's: answered.
 */
START_TEST(mcp_client_ids)
{
	pid_t	pid;
	int	in = -1, out = -1, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":\"cmdgate-bridge:"
	    "tools\",\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":\"cmdgate-bridge:tools\""),
	    "stdout: %s", cli_out);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/* Wait, on the broker's status notifications, until ticket exists. */
static void
await_stored(const char *ticket)
{
	struct client	*c = client_unix(b.sock);
	json_object	*r;
	char		 line[256];
	int		 i, found = 0;

	json_object_put(client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"subscribe_status\",\"params\":{}}"));
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}",
	    ticket);
	for (i = 0; i < 20 && !found; i++) {
		r = client_call(c, line);
		found = jpath(r, "result") != NULL;
		json_object_put(r);
		if (!found)
			json_object_put(client_wait_method(c,
			    "notifications/status"));
	}
	client_close(c);
	ck_assert_msg(found, "%s never stored", ticket);
}

/*
 * Review item 9: a batch is followed like one request.  Its tools/call,
 * whose job is held when the broker is killed, has a key of the
 * bridge's: the batch sent again after the restart finds that job
 * (deduplicated, no t-000001), and the client gets one array answer.
 * Before, a batch was passed on as it was: never sent again, never
 * answered, and its tools/calls had no key.
 */
START_TEST(mcp_batch)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid, hold;
	int		 in = -1, out = -1, err, hfd, wfd, status;
	json_object	*r;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	hold = mcp_hold(&hfd, &wfd);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	send_line(in, "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rebuild\"}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]\n");
	await_stored("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	close(wfd);	/* the hold ends: the job runs, once */
	ck_assert_msg(await_out(out, "rebuilt"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("rebuilt"));
	ck_assert(json_object_is_type(r, json_type_array));
	ck_assert_int_eq(json_object_array_length(r), 2);
	json_object_put(r);
	ck_assert_ptr_nonnull(strstr(cli_out, "deduplicated"));
	ck_assert_ptr_null(strstr(cli_out, "t-000001"));
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
	close(hfd);
}
END_TEST

/*
 * Review item 9: stdin and stdout that are regular files (and /dev/null)
 * cannot be polled; the bridge reads and writes them itself: every
 * request in the file is answered into the output file, and it exits 0.
 * Before, it could not start.
 */
START_TEST(mcp_file_stdio)
{
	char		 in_path[256], out_path[256];
	int		 in, out, err, dn;
	pid_t		 pid;

	start(NULL);
	snprintf(in_path, sizeof(in_path), "%s", broker_path(&b, "in.jsonl"));
	snprintf(out_path, sizeof(out_path), "%s",
	    broker_path(&b, "out.jsonl"));
	write_file(in_path, INIT "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
	    "{\"text\":\"from a file\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 0600);
	ck_assert_int_ge(in = open(in_path, O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_ge(out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0600), 0);
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	ck_assert_int_eq(reap(pid, err), 0);
	close(in);
	close(out);
	close(err);
	ck_assert_int_ge(out = open(out_path, O_RDONLY | O_CLOEXEC), 0);
	fd_slurp(out, cli_out, OUT_MAX);
	ck_assert_msg(strstr(cli_out, "from a file") != NULL, "%s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "\"id\":3"));
	ck_assert_int_eq(count_of(cli_out, "\n"), 3);
	/* < /dev/null > /dev/null: nothing to do, exit 0. */
	ck_assert_int_ge(dn = open("/dev/null", O_RDWR | O_CLOEXEC), 0);
	in = out = dn;
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_str_eq(cli_err, "");
	close(dn);
	close(err);
}
END_TEST

/*
 * The list_changed hash and paging: a tools/list with a cursor (a later
 * page) is not what the bridge compares with the list it fetches on
 * reconnecting, so an unchanged table sends no list_changed.  (The
 * broker does not page tools/list today: this holds with or without
 * the guard; it keeps it so.)
 */
START_TEST(mcp_tools_paged)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid;
	int		 in = -1, out = -1, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/list\",\"params\":{\"cursor\":\"2\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":4"), "stdout: %s", cli_out);
	ck_assert_ptr_null(strstr(cli_out, "list_changed"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/*
 * A client that reads nothing of its stdout: once 16 MiB of answers wait
 * for it, the bridge reads neither the broker nor stdin until they are
 * read (the broker then stops reading it in turn), so its memory stays
 * bounded, and says so on stderr; every answer comes once the client
 * reads.  100 tools/list of 200 KB each fill it; pings of 10 KB sent
 * after that block (no room in stdin for 3 s) before 200 are written.
 * Before, the bridge read on and held every answer.
 */
START_TEST(mcp_stdout_unread)
{
	const char	*args[] = { "--tools", tools, NULL };
	static char	 big[200100], req[10200], buf[65536];
	struct pollfd	 pfd;
	size_t		 off = 0, len = 0;
	ssize_t		 w;
	int		 i = 0, in = -1, out = -1, err, blocked = 0, lines = 0;
	pid_t		 pid;

	memset(big, 0, sizeof(big));
	snprintf(big, sizeof(big), "{\"tools\":[{\"name\":\"big\","
	    "\"description\":\"");
	memset(big + strlen(big), 'd', 200000);
	strcat(big, "\",\"exec\":[\"true\"]}]}");
	write_file(tools, big, 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	for (i = 0; i < 100; i++) {
		snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/list\"}\n", 100 + i);
		send_line(in, req);
	}
	ck_assert_msg(await_err(err, "answers unread"), "stderr: %s", cli_err);
	ck_assert_int_eq(fcntl(in, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 200 && !blocked; ) {
		if (off == len) {
			len = (size_t)snprintf(req, sizeof(req), "{\"jsonrpc\":"
			    "\"2.0\",\"id\":%d,\"method\":\"ping\","
			    "\"params\":{\"_pad\":\"%010000d\"}}\n", 1000 + i, 0);
			off = 0;
			i++;
		}
		if ((w = write(in, req + off, len - off)) > 0) {
			off += (size_t)w;
			continue;
		}
		pfd.fd = in;
		pfd.events = POLLOUT;
		blocked = poll(&pfd, 1, 3000) == 0;
	}
	ck_assert_msg(blocked, "%d requests of 10 KB written, stdin never "
	    "blocked", i);
	/* Now read: every whole request is answered, and the bridge ends. */
	close(in);
	pfd.fd = out;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, TN_TIMEOUT_MS) == 1 &&
	    (w = read(out, buf, sizeof(buf))) > 0)
		while (w > 0)
			lines += buf[--w] == '\n';
	ck_assert_int_eq(reap(pid, err), 0);
	/* One answer a whole request, and one (an error) for a part of one. */
	ck_assert_int_eq(lines, 100 + (off == len ? i : off > 0 ? i : i - 1));
	close(out);
	close(err);
}
END_TEST

/*
 * A broker that reads nothing (SIGSTOP) while the client sends on: past
 * 16 MiB unread by the broker the bridge reads no more of its stdin, so
 * that notifications (which it does not hold) cannot grow it either:
 * 10 KB notifications block stdin (no room for 3 s) before 40 MB are
 * written.  Once the broker goes on (SIGCONT) the bridge ends normally.
 */
START_TEST(mcp_broker_stopped)
{
	static char	 req[10200];
	struct pollfd	 pfd;
	size_t		 off = 0, len = 0;
	ssize_t		 w;
	int		 i, in = -1, out = -1, err, blocked = 0;
	pid_t		 pid;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	ck_assert_int_eq(fcntl(in, F_SETFL, O_NONBLOCK), 0);
	len = (size_t)snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/pad\",\"params\":{\"_pad\":"
	    "\"%010000d\"}}\n", 0);
	for (i = 0; i < 4000 && !blocked; ) {
		if ((w = write(in, req + off, len - off)) > 0) {
			if ((off += (size_t)w) == len) {
				off = 0;
				i++;
			}
			continue;
		}
		pfd.fd = in;
		pfd.events = POLLOUT;
		blocked = poll(&pfd, 1, 3000) == 0;
	}
	ck_assert_int_eq(kill(b.pid, SIGCONT), 0);
	ck_assert_msg(blocked, "%d notifications of 10 KB written to a "
	    "stopped broker, stdin never blocked", i);
	ck_assert_int_eq(fcntl(in, F_SETFL, 0), 0);
	ck_assert_int_eq(write(in, req + off, len - off), (ssize_t)(len - off));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("mcpbridge");
	TCase	*tc = tcase_create("mcpbridge");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mcp_too_large);
	tcase_add_test(tc, mcp_killer_request);
	tcase_add_test(tc, mcp_bounded);
	tcase_add_test(tc, mcp_reconnect_nonblocking);
	tcase_add_test(tc, mcp_cancel_while_down);
	tcase_add_test(tc, mcp_client_ids);
	tcase_add_test(tc, mcp_batch);
	tcase_add_test(tc, mcp_file_stdio);
	tcase_add_test(tc, mcp_tools_paged);
	tcase_add_test(tc, mcp_stdout_unread);
	tcase_add_test(tc, mcp_broker_stopped);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
