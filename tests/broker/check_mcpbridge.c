/* SPDX-License-Identifier: ISC */
/*
 * cmdgate mcp against the review of issue 18 (tests/RELIABILITY.md,
 * "Bridge review fixes (session 6)"): a request the broker refuses by
 * size, one that kills the connection, the bound on held requests, a
 * reconnection to a broker that does not answer, a cancellation while
 * the broker is away, the client's ids and progress across a new
 * connection.  check_mcpflow has the rest.
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

#include "ckrun.h"
#include "cliutil.h"
#include "mcputil.h"
#include "testnet.h"
#include "util.h"

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

/*
 * The same for a line the bridge does not hold (a notification of 4 KB)
 * while a request is in flight: the notification is what the broker
 * refused, so the request is not blamed (sent again, it gets its job's
 * result), the client gets the broker's error as it was, and a second
 * such line is refused by the bridge without an outage.
 */
START_TEST(mcp_too_large_notice)
{
	const char	*extra[] = { "--max-message", "2048", NULL };
	char		 big[4096], line[4400];
	json_object	*r;
	pid_t		 pid;
	int		 in = -1, out = -1, err, wfd;

	start(extra);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"block\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/pad\",\"params\":{\"_pad\":\"%s\"}}\n", big);
	await_stored("t-000000");
	send_line(in, line);
	ck_assert_msg(await_err(err, "reconnected"), "stderr: %s", cli_err);
	send_line(in, line);
	ck_assert_msg(await_out(out, "\"id\":null,\"error\":{\"code\":-32600,"
	    "\"message\":\"Invalid Request\""), "stdout: %.300s", cli_out);
	ck_assert_int_ge(wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	close(wfd);	/* the job ends */
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %.300s", cli_out);
	ck_assert_ptr_nonnull(r = out_line("\"id\":3"));
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
	ck_assert_int_eq(count_of(cli_out, "message_too_large"), 2);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_int_eq(count_of(cli_err, "broker lost"), 1);
	close(out);
	close(err);
}
END_TEST

/* A fake broker's socket at path, listening. */
static int
fake_listen(const char *path)
{
	struct sockaddr_un	sun;
	int			lfd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ck_assert_int_ge(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	return lfd;
}

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
 * A fake broker at fake.sock, and cmdgate mcp started on it: the bridge's
 * pid; *lfd listens, *c is the bridge's connection, the rest its stdio.
 */
static pid_t
fake_bridge(int *lfd, int *c, int *in, int *out, int *err)
{
	const char	*args[] = { "--socket", NULL, NULL };
	pid_t		 pid;

	args[1] = broker_path(&b, "fake.sock");
	*lfd = fake_listen(args[1]);
	cli_out[0] = '\0';
	cli_err[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(args, in, out, err);
	ck_assert_int_ge(*c = fake_accept(*lfd), 0);
	return pid;
}

/* The end of fake_bridge()'s test: the bridge exits 0 at its input's end. */
static void
fake_bridge_end(pid_t pid, int lfd, int c, int in, int out, int err)
{
	close(in);
	close(c);
	ck_assert_int_eq(reap(pid, err), 0);
	close(lfd);
	close(out);
	close(err);
}

/* The fake broker answers line (a request) on fd with an empty result. */
static void
fake_answer(int fd, const char *line)
{
	json_object	*msg = json_tokener_parse(line);
	char		 out[512];

	ck_assert_ptr_nonnull(msg);
	snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"result\":{}}\n", json_object_to_json_string(jpath(msg, "id")));
	json_object_put(msg);
	send_line(fd, out);
}

/*
 * Issue 31.8, MCP's side: a request the client cancelled gets no answer.
 * The fake broker answers a tools/call after reading its cancellation
 * (as a broker whose job ended before it read it would); the bridge,
 * holding the call until the broker showed it read the cancellation
 * (the read mark after it, answered), keeps that answer from the client.
 * Before, the call was forgotten once the cancellation was written and
 * the answer went to the client.
 */
START_TEST(mcp_cancelled_unanswered)
{
	char		*l;
	int		 lfd, c, in = -1, out = -1, err;
	pid_t		 pid;

	pid = fake_bridge(&lfd, &c, &in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"t\"}}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"id\":2"));
	free(l);
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "read:"));
	fake_answer(c, l);	/* the mark: the call was read */
	free(l);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "cancelled"));
	free(l);
	send_line(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "read:"));
	fake_answer(c, l);
	free(l);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"ping\"}\n");
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"id\":3"));
	fake_answer(c, l);
	free(l);
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %s", cli_out);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":2"));
	fake_bridge_end(pid, lfd, c, in, out, err);
}
END_TEST

/*
 * Review item 1, the rest: a request that kills the connection (here a
 * fake broker closes it on reading "boom") is sent again once, and after
 * the second quick loss answered connection_lost and not sent again; the
 * backoff does not go back to 100 ms after a connection that did not
 * last (the try after the second loss comes 200 ms or more after it).
 */
START_TEST(mcp_killer_request)
{
	char			*l;
	json_object		*r;
	int64_t			 t0;
	int			 lfd, c, in = -1, out = -1, err;
	pid_t			 pid;

	pid = fake_bridge(&lfd, &c, &in, &out, &err);
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
	fake_bridge_end(pid, lfd, c, in, out, err);
}
END_TEST

/*
 * A "broker" that sends a line longer than 64 MiB (the bound on the
 * client's lines) is dropped, with a line on stderr, and the bridge
 * connects again.  Before, the bridge kept reading it into memory.
 */
START_TEST(mcp_broker_line_bound)
{
	static char		 chunk[1024 * 1024];
	int			 lfd, c, c2, in = -1, out = -1, err, i;
	pid_t			 pid;

	pid = fake_bridge(&lfd, &c, &in, &out, &err);
	memset(chunk, 'x', sizeof(chunk));
	/* 80 MiB at most: the bridge closes the connection past 64. */
	for (i = 0; i < 80; i++)
		if (send(c, chunk, sizeof(chunk), MSG_NOSIGNAL) == -1)
			break;
	ck_assert_int_lt(i, 80);
	ck_assert_int_ge(c2 = fake_accept(lfd), 0);	/* connects again */
	ck_assert_msg(await_err(err, "broker lost"), "stderr: %s", cli_err);
	close(in);
	close(c);
	close(c2);
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

/* A ping with id and a pad of n bytes, and its newline; caller frees. */
static char *
padded_ping(int id, size_t n)
{
	char	*s = malloc(n + 128);
	int	 k;

	ck_assert_ptr_nonnull(s);
	k = snprintf(s, 128, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"ping\",\"params\":{\"_pad\":\"", id);
	memset(s + k, 'x', n);
	strcpy(s + k + n, "\"}}\n");
	return s;
}

/*
 * Review item 2, by bytes: while the broker is away, requests of 40 MB
 * and then 30 MB pass the 64 MiB the bridge holds: the second is answered
 * bridge_full at once, a small one after it is still taken.
 */
START_TEST(mcp_bounded_bytes)
{
	char	*big;
	pid_t	 pid;
	int	 in = -1, out = -1, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	send_line(in, big = padded_ping(2, 40 * 1000 * 1000));
	free(big);
	send_line(in, big = padded_ping(3, 30 * 1000 * 1000));
	free(big);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %.300s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "bridge_full"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":2"));
	ck_assert_ptr_null(strstr(cli_out, "\"id\":4"));
	close(out);
	close(err);
}
END_TEST

/*
 * Review item 3: reconnecting does not block.  The broker's port is
 * taken by a listener that accepts and never answers; the bridge,
 * waiting for the answer to its probe there (the ping before the token,
 * --reply-timeout 60), still reads its client: stdin closed, it gives up
 * and exits at once.  Before, it sat in cg_connect's poll for the whole
 * reply timeout.
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
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "probe\","
	    "\"method\":\"ping\""));
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

/*
 * Issue 31.1 under cmdgate mcp: while the broker is away another user
 * (nobody) takes its port.  Each try to get back pings it (the probe),
 * asks the kernel whose the listener is, and does not send the token:
 * stderr names both users once, the tries go on (two probes seen), and
 * the token, root's like the state dir, never reaches the listener.
 * Before, each try sent authenticate with the token first.
 */
START_TEST(mcp_token_not_to_squatter)
{
	const char	*args[] = { "--port", port, "--state-dir", NULL, NULL };
	char		 dir[256], tok[128];
	struct squat	 sq;
	int		 in = -1, out = -1, err;
	pid_t		 pid;

	b.auth = 1;
	start(NULL);
	snprintf(dir, sizeof(dir), "%s", broker_path(&b, "state"));
	args[3] = dir;
	fd_slurp(open(broker_path(&b, "state/token"), O_RDONLY | O_CLOEXEC),
	    tok, sizeof(tok));
	tok[strcspn(tok, "\n")] = '\0';
	ck_assert_uint_gt(strlen(tok), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(args, &in, &out, &err);
	send_line(in, INIT);
	ck_assert_msg(await_out(out, "\"id\":1"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	squat_start(&sq, 65534, b.port);
	ck_assert_msg(squat_await(&sq, "probe\",\"method\":\"ping\"", 2),
	    "seen: %s", sq.seen);
	ck_assert_msg(await_err(err, "is not the broker's"), "stderr: %s",
	    cli_err);
	close(in);
	ck_assert_msg(await_err(err, "gave up"), "stderr: %s", cli_err);
	ck_assert_int_eq(reap(pid, err), 0);
	squat_stop(&sq);
	ck_assert_ptr_null(strstr(sq.seen, tok));
	ck_assert_ptr_null(strstr(sq.seen, "authenticate"));
	ck_assert_msg(strstr(cli_err, "uid 65534") != NULL &&
	    strstr(cli_err, "uid 0 (root)") != NULL, "stderr: %s", cli_err);
	ck_assert_int_eq(count_of(cli_err, "is not the broker's"), 1);
	close(out);
	close(err);
}
END_TEST

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
 * A call the client makes and cancels while the broker is away reached
 * no broker: the bridge drops it, and it makes no job after the
 * restart.  Before, it was sent with its cancellation and its job
 * started (and was killed) after the restart.
 */
START_TEST(mcp_cancel_never_sent)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid;
	int		 in = -1, out = -1, err;
	char		*st;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, INIT "{\"jsonrpc\":\"2.0\",\"id\":8,"
	    "\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":8"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rebuild\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}\n");
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"rebuild\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":9"), "stdout: %s", cli_out);
	/* The first job is the second call's: the cancelled one made none. */
	st = mcp_job_end("t-000000");
	ck_assert_str_eq(st, "done");
	free(st);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":7"));
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

/*
 * The MCP specification: a progress notification's "progress" MUST
 * increase with each notification of its token.  A tools/call sent again
 * on a new connection is watched anew by the broker, from 0: the bridge
 * passes on a held request's progress only above the last the client saw
 * of its token (an integer one here, and a string one in a batch), and
 * any other token's as it came.  Before, 50 was followed by 1.
 */
START_TEST(mcp_progress_resent)
{
	char		*l;
	int		 lfd, c, in = -1, out = -1, err;
	pid_t		 pid;

	pid = fake_bridge(&lfd, &c, &in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"t\",\"_meta\":{\"progressToken\":7}}}\n"
	    "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"t\",\"_meta\":{\"progressToken\":\"b\"}}}]\n");
	free(fake_line(c));
	free(fake_line(c));
	send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":7,\"progress\":50}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":\"b\",\"progress\":10}}\n");
	ck_assert_msg(await_out(out, "\"progress\":10}"), "stdout: %s", cli_out);
	close(c);
	ck_assert_int_ge(c = fake_accept(lfd), 0);	/* both sent again */
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"id\":2"));
	free(l);
	ck_assert_ptr_nonnull(strstr(l = fake_line(c), "\"id\":3"));
	free(l);
	send_line(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":7,\"progress\":1}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":\"b\",\"progress\":10}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":\"7\",\"progress\":0}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":7,\"progress\":60}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
	    "\"params\":{\"progressToken\":\"b\",\"progress\":20}}\n"
	    "[{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]\n");
	ck_assert_msg(await_out(out, "\"id\":3"), "stdout: %s", cli_out);
	ck_assert_int_eq(count_of(cli_out, "\"progressToken\":7,"), 2);
	ck_assert_ptr_nonnull(strstr(strstr(cli_out, "\"progress\":50}"),
	    "\"progressToken\":7,\"progress\":60}"));
	ck_assert_int_eq(count_of(cli_out, "\"progressToken\":\"b\""), 2);
	ck_assert_int_eq(count_of(cli_out, "\"progress\":10}"), 1);
	ck_assert_int_eq(count_of(cli_out, "\"progressToken\":\"7\""), 1);
	fake_bridge_end(pid, lfd, c, in, out, err);
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

int
main(void)
{
	Suite	*s = suite_create("mcpbridge");
	TCase	*tc = tcase_create("mcpbridge");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mcp_too_large);
	tcase_add_test(tc, mcp_too_large_notice);
	tcase_add_test(tc, mcp_killer_request);
	tcase_add_test(tc, mcp_bounded);
	tcase_add_test(tc, mcp_bounded_bytes);
	tcase_add_test(tc, mcp_reconnect_nonblocking);
	tcase_add_test(tc, mcp_token_not_to_squatter);
	tcase_add_test(tc, mcp_cancel_while_down);
	tcase_add_test(tc, mcp_cancel_never_sent);
	tcase_add_test(tc, mcp_cancelled_unanswered);
	tcase_add_test(tc, mcp_broker_line_bound);
	tcase_add_test(tc, mcp_client_ids);
	tcase_add_test(tc, mcp_progress_resent);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
