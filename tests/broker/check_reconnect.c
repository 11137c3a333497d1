/* SPDX-License-Identifier: ISC */
/*
 * cmdgate(1) commands that outlive the broker (issue 18): wait and the
 * mcp bridge across a broker killed and started again.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

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
#include "testnet.h"

/* cmdgate --socket wait TICKET in the background: stdout, stderr piped. */
static pid_t
spawn_wait(const char *ticket, int *outfd, int *errfd)
{
	const char	*argv[] = { getenv("CMDGATE"), "--socket", b.sock,
			    "wait", ticket, "--timeout", "60", NULL };
	int		 o[2], e[2];
	pid_t		 pid;

	/* Close-on-exec: no broker started meanwhile may hold them. */
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(o[0]);
		close(e[0]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(o[1]);
	close(e[1]);
	*outfd = o[0];
	*errfd = e[0];
	return pid;
}

/*
 * A broker (args) whose tool table has one reload tool, rebuild, and
 * editor-state --tests-running held until *wfd (the fifo's writer) is
 * closed: its pid, *hfd its output.  A rebuild job stays queued.
 */
static pid_t
start_held(const char **args, int *hfd, int *wfd)
{
	const char	*cli[] = { "editor-state", "--tests-running", "--",
			    "sh", "-c", NULL, NULL };
	char		 cmd[512];
	pid_t		 hold;

	write_file(tools, "{\"tools\":[{\"name\":\"rebuild\",\"tier\":"
	    "\"heavy\",\"reload\":true,\"exec\":[\"echo\",\"rebuilt\"]}]}",
	    0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	cli[5] = cmd;
	await_err(-1, NULL);
	hold = spawn_cli(hfd, cli);
	ck_assert_int_ge(*wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	return hold;
}

/* cmdgate mcp (pid) exits 0 at the end of its input (in). */
static void
mcp_end(pid_t pid, int in, int out, int err)
{
	int	status;

	close(in);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	close(out);
	close(err);
}

/*
 * Issue 18.2: cmdgate wait outlives the broker.  The job, held by
 * editor-state, stays queued while the broker is killed (SIGKILL) and
 * started again; wait reconnects, says so on one line, keeps waiting on
 * the ticket, and exits 0 with the job once it is done.
 */
START_TEST(wait_survives_restart)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		*p;
	json_object	*r;
	pid_t		 hold, waiter;
	int		 hfd, ofd, wfd, efd, status;

	hold = start_held(args, &hfd, &wfd);
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":"
	    "\"rebuild\"}],\"async\":true}}");
	json_object_put(r);
	assert_held("t-000000");
	cli_out[0] = '\0';
	waiter = spawn_wait("t-000000", &ofd, &efd);
	/* It waits: it has shown the job queued. */
	ck_assert_msg(await_out(ofd, "queued"), "stdout: %s", cli_out);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	/*
	 * The holder is back before its hold ends: were it to end first, the
	 * restarted broker would keep the last run's tests_running for
	 * --editor-grace (10 s), as a restart should, and the job would
	 * start only then.
	 */
	ck_assert_msg(await_err(hfd, "editor-state: reconnected"),
	    "holder's stderr: %s", cli_err);
	await_err(-1, NULL);
	ck_assert_msg(await_err(efd, "reconnected after"), "stderr: %s",
	    cli_err);
	close(wfd);	/* the hold ends: the job runs */
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	ck_assert_msg(await_out(ofd, "rebuilt"), "stdout: %s", cli_out);
	ck_assert_int_eq(waitpid(waiter, &status, 0), waiter);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000000 done"));
	/* One line for the outage, none per try. */
	ck_assert_ptr_nonnull(p = strstr(cli_err, "broker lost"));
	ck_assert_ptr_null(strstr(p + 1, "broker lost"));
	ck_assert_ptr_eq(strchr(cli_err, '\n'), cli_err + strlen(cli_err) - 1);
	close(ofd);
	close(efd);
	close(hfd);
}
END_TEST

/*
 * cmdgate --socket path mcp in the background: stdin, stdout, stderr
 * piped.
 */
static pid_t
spawn_mcp_at(const char *path, int *infd, int *outfd, int *errfd)
{
	const char	*argv[] = { getenv("CMDGATE"), "--socket", path, "mcp",
			    NULL };
	int		 i[2], o[2], e[2];
	pid_t		 pid;

	/* Close-on-exec: no broker started meanwhile may hold them. */
	ck_assert_int_eq(pipe2(i, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(i[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(i[1]);
		close(o[0]);
		close(e[0]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(i[0]);
	close(o[1]);
	close(e[1]);
	*infd = i[1];
	*outfd = o[0];
	*errfd = e[0];
	return pid;
}

/* cmdgate --socket mcp on the broker's socket. */
static pid_t
spawn_mcp(int *infd, int *outfd, int *errfd)
{
	return spawn_mcp_at(b.sock, infd, outfd, errfd);
}

static void
send_line(int fd, const char *line)
{
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
}

/* How many times needle is in hay. */
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

/*
 * Issue 18.1: cmdgate mcp outlives the broker (SIGKILL, then started
 * again with one more tool).  A request sent while it is away is answered
 * once it is back, the client's initialize and logging/setLevel are
 * replayed but their answers kept from the client, the changed tool list is announced with
 * notifications/tools/list_changed, stderr has one line for the outage,
 * and the bridge exits 0 when stdin ends.
 */
START_TEST(mcp_bridge_survives_restart)
{
	const char	*args[] = { "--tools", tools, NULL };
	pid_t		 pid;
	int		 in, out, err;

	start(NULL);
	cli_out[0] = '\0';
	await_err(-1, NULL);
	pid = spawn_mcp(&in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":"
	    "{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\","
	    "\"params\":{\"level\":\"debug\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":4"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "\"id\":2"));
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
	    "\"carried\"}}}\n");
	write_file(tools, "{\"tools\":[{\"name\":\"echo\",\"tier\":\"instant\","
	    "\"exec\":[\"echo\",\"{text}\"],\"params\":{\"type\":\"object\","
	    "\"properties\":{\"text\":{\"type\":\"string\"}}}},{\"name\":"
	    "\"extra\",\"exec\":[\"true\"]}]}", 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_out(out, "carried"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out,
	    "\"method\":\"notifications/tools/list_changed\""));
	ck_assert_ptr_nonnull(strstr(cli_out, "\"id\":3"));
	ck_assert_int_eq(count_of(cli_out, "\"serverInfo\""), 1);
	ck_assert_int_eq(count_of(cli_out, "\"id\":4"), 1);
	ck_assert_ptr_null(strstr(cli_out, "cmdgate-bridge"));
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	ck_assert_int_eq(count_of(cli_err, "broker lost"), 1);
	mcp_end(pid, in, out, err);
}
END_TEST

/*
 * The progress values of token's notifications/progress in out, in
 * order: how many, at most max, into v.
 */
static size_t
progress_of(const char *out, const char *token, double *v, size_t max)
{
	json_object	*msg, *p, *t;
	const char	*nl;
	size_t		 n = 0;
	char		 line[4096];

	for (; *out != '\0' && n < max; out = *nl != '\0' ? nl + 1 : nl) {
		if ((nl = strchr(out, '\n')) == NULL)
			nl = out + strlen(out);
		if ((size_t)(nl - out) >= sizeof(line))
			continue;
		memcpy(line, out, (size_t)(nl - out));
		line[nl - out] = '\0';
		if ((msg = json_tokener_parse(line)) == NULL)
			continue;
		if (json_object_object_get_ex(msg, "params", &p) &&
		    json_object_object_get_ex(p, "progressToken", &t) &&
		    strcmp(json_object_get_string(t), token) == 0 &&
		    json_object_object_get_ex(p, "progress", &t))
			v[n++] = json_object_get_double(t);
		json_object_put(msg);
	}
	return n;
}

/*
 * cmdgate mcp (its stdio into *in, *out, *err), initialized, with a
 * tools/call of rebuild (id 5, progressToken "tok") held by start_held()'s
 * editor-state: once it has told 0 (queued) and 0.5 (blocked by
 * tests_running), the broker is killed (SIGKILL).  Its pid.
 */
static pid_t
mcp_call_held(int *in, int *out, int *err)
{
	pid_t	pid;

	cli_out[0] = '\0';
	pid = spawn_mcp(in, out, err);
	send_line(*in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":"
	    "\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":5,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"rebuild\","
	    "\"arguments\":{},\"_meta\":{\"progressToken\":\"tok\"}}}\n");
	ck_assert_msg(await_out(*out, "blocked by tests_running"), "stdout: "
	    "%s", cli_out);
	assert_held("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	return pid;
}

/*
 * The MCP specification: a progress notification's "progress" MUST
 * increase with each notification of its token.  A tools/call whose job
 * waits (held by editor-state) while the broker is killed and started
 * again is sent again by cmdgate mcp, and the new broker's watch of the
 * same job (found by its idempotency key) starts from 0 ("queued") once
 * more; the bridge passes on only what goes beyond what the client saw.
 */
START_TEST(mcp_progress_survives_restart)
{
	const char	*args[] = { "--tools", tools, NULL };
	double		 v[64];
	size_t		 i, n;
	pid_t		 hold, pid;
	int		 hfd, wfd, in, out, err, status;

	hold = start_held(args, &hfd, &wfd);
	pid = mcp_call_held(&in, &out, &err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	assert_held("t-000000");
	close(wfd);	/* the hold ends: the job runs */
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	ck_assert_msg(await_out(out, "\"id\":5"), "stdout: %s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000000"));
	n = progress_of(cli_out, "tok", v, 64);
	ck_assert_msg(n >= 3, "stdout: %s", cli_out);
	for (i = 1; i < n; i++)
		ck_assert_msg(v[i] > v[i - 1], "progress %g after %g (#%zu): "
		    "%s", v[i], v[i - 1], i, cli_out);
	ck_assert_double_eq(v[n - 1], 99);
	mcp_end(pid, in, out, err);
	close(hfd);
}
END_TEST

/*
 * A tools/call with a progressToken, held by editor-state, whose client
 * cancels it while the broker is away: the bridge sends it again (for
 * its job to be cancelled) without its token, then the cancellation, and
 * forgets it.  Before, the new broker's watch sent 0 (queued) and 0.5
 * (blocked) for the token before it read the cancellation, after the 0
 * and 0.5 the client saw.
 */
START_TEST(mcp_progress_cancelled_away)
{
	const char	*args[] = { "--tools", tools, NULL };
	json_object	*r;
	double		 v[64];
	pid_t		 hold, pid;
	int		 hfd, wfd, in, out, err, status;

	hold = start_held(args, &hfd, &wfd);
	pid = mcp_call_held(&in, &out, &err);
	ck_assert_msg(await_err(err, "reconnecting"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":5}}\n");
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	/* Answered after the replay: the broker has read it all. */
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":9"), "stdout: %s", cli_out);
	close(wfd);
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"t-000000\","
	    "\"timeout_s\":10}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "status")),
	    "cancelled");
	json_object_put(r);
	ck_assert_msg(progress_of(cli_out, "tok", v, 64) == 2, "stdout: %s",
	    cli_out);
	mcp_end(pid, in, out, err);
	close(hfd);
}
END_TEST

/* ---- submit --wait across a restart under its batch_execute ------- */

#define RELAY_SEEN	65536	/* what a relay keeps of a client's bytes */

/* Write all of buf to fd: 0, or -1. */
static int
relay_write(int fd, const char *buf, ssize_t n)
{
	ssize_t	w;

	for (; n > 0; buf += w, n -= w)
		if ((w = write(fd, buf, (size_t)n)) <= 0)
			return -1;
	return 0;
}

/* What a relay keeps from the first connection that does it. */
enum relay_mode {
	RELAY_ANSWER,	/* the broker's answer to a batch_execute */
	RELAY_CANCEL	/* the client's notifications/cancelled */
};

/*
 * Relay between client c and broker s until either ends.  RELAY_ANSWER:
 * once the client has sent a batch_execute (the first the relay saw,
 * *held 0), the broker's answer is kept from it: 'H' on ev once the
 * whole line is in, then a byte from go, then the connection is dropped
 * unanswered.  RELAY_CANCEL: the first read of the client's that holds a
 * notifications/cancelled is not passed on (the bridge writes it alone):
 * 'H' on ev, a byte from go, the connection dropped, as by a broker that
 * died before reading it.
 */
static void
relay(int c, int s, int *held, enum relay_mode mode, int ev, int go)
{
	struct pollfd	 p[2] = { { c, POLLIN, 0 }, { s, POLLIN, 0 } };
	static char	 seen[RELAY_SEEN + 1];
	char		 buf[65536];
	size_t		 nseen = 0;
	ssize_t		 n;
	int		 armed = 0;

	for (;;) {
		if (poll(p, 2, -1) == -1)
			return;
		if (p[0].revents != 0) {
			if ((n = read(c, buf, sizeof(buf))) <= 0)
				return;
			if (mode == RELAY_CANCEL && !*held && memmem(buf,
			    (size_t)n, "notifications/cancelled", 23) != NULL) {
				*held = 1;
				(void)write(ev, "H", 1);
				(void)read(go, buf, 1);
				return;
			}
			if (relay_write(s, buf, n) == -1)
				return;
			if (nseen + (size_t)n <= RELAY_SEEN) {
				memcpy(seen + nseen, buf, (size_t)n);
				seen[nseen += (size_t)n] = '\0';
			}
			armed = mode == RELAY_ANSWER && !*held &&
			    strstr(seen, "\"batch_execute\"");
		}
		if (p[1].revents != 0) {
			if ((n = read(s, buf, sizeof(buf))) <= 0)
				return;
			if (armed && memchr(buf, '\n', (size_t)n) != NULL) {
				*held = 1;
				(void)write(ev, "H", 1);
				(void)read(go, buf, 1);
				return;
			}
			if (!armed && relay_write(c, buf, n) == -1)
				return;
		}
	}
}

/* The relay process: accept on lfd, one connection at a time. */
static void
relay_main(int lfd, enum relay_mode mode, int ev, int go)
{
	struct sockaddr_un	 sun;
	int			 c, s, held = 0;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(b.sock) >= sizeof(sun.sun_path))
		_exit(1);
	memcpy(sun.sun_path, b.sock, strlen(b.sock) + 1);
	for (;;) {
		if ((c = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) != -1 &&
		    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			relay(c, s, &held, mode, ev, go);
		close(s);
		close(c);
	}
}

/*
 * A relay from the Unix socket path to the broker's (each connection
 * dialled anew, so it follows a restart), in a child that dies with
 * this process: its pid; *ev reads its 'H', *go releases it.
 */
static pid_t
relay_start(const char *path, enum relay_mode mode, int *ev, int *go)
{
	struct sockaddr_un	 sun;
	int			 lfd, e[2], g[2];
	pid_t			 pid;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(path), sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path) + 1);
	ck_assert_int_ge(lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(g, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(e[0]);
		close(g[1]);
		relay_main(lfd, mode, e[1], g[0]);
	}
	ck_assert_int_gt(pid, 0);
	close(lfd);
	close(e[1]);
	close(g[0]);
	*ev = e[0];
	*go = g[1];
	return pid;
}

/* cmdgate --socket path args... (NULL-ended) in the background: its
 * stdout and stderr piped. */
static pid_t
spawn_at(const char *path, const char **args, int *outfd, int *errfd)
{
	const char	*argv[32] = { getenv("CMDGATE"), "--socket", path };
	int		 n = 3, o[2], e[2];
	pid_t		 pid;

	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	close(o[1]);
	close(e[1]);
	*outfd = o[0];
	*errfd = e[0];
	return pid;
}

/*
 * Review item 8: the broker killed (SIGKILL) and started again after it
 * stored a submit's job and before the answer reached cmdgate submit
 * --wait (a relay holds the answer, then drops the connection): the
 * submit reconnects and sends the batch again with its own idempotency
 * key, finds the job the first one stored, and waits for it: exit 0,
 * one job, and its tool ran once.
 */
START_TEST(submit_survives_restart)
{
	const char	*args[] = { "--tools", tools, NULL };
	const char	*hold_args[] = { "editor-state", "--tests-running",
			    "--", "sh", "-c", NULL, NULL };
	const char	*sub[] = { "submit", "mark", "--timeout", "60", NULL };
	char		 json[1024], cmd[512], mark[256], proxy[256], c;
	struct pollfd	 pfd;
	json_object	*r;
	pid_t		 relay_pid, hold, submit;
	int		 ev, go, hfd, wfd, ofd, efd, status;

	snprintf(mark, sizeof(mark), "%s", broker_path(&b, "mark"));
	snprintf(proxy, sizeof(proxy), "%s", broker_path(&b, "relay.sock"));
	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"mark\","
	    "\"tier\":\"heavy\",\"reload\":true,\"exec\":[\"sh\",\"-c\","
	    "\"echo ran >> %s\"]}]}", mark);
	write_file(tools, json, 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	/* Before the FIFO is open: the relay must not hold its end. */
	relay_pid = relay_start(proxy, RELAY_ANSWER, &ev, &go);
	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	hold_args[5] = cmd;
	await_err(-1, NULL);
	hold = spawn_cli(&hfd, hold_args);
	ck_assert_int_ge(wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	submit = spawn_at(proxy, sub, &ofd, &efd);
	/* The job is stored (held: it does not run); its answer held. */
	pfd.fd = ev;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, TN_TIMEOUT_MS), 1);
	ck_assert_int_eq(read(ev, &c, 1), 1);
	assert_held("t-000000");
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_int_eq(write(go, "C", 1), 1);
	ck_assert_msg(await_err(efd, "reconnected after"), "stderr: %s",
	    cli_err);
	close(wfd);	/* the hold ends: the job runs */
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	cli_out[0] = '\0';
	ck_assert_msg(await_out(ofd, "t-000000 done"), "stdout: %s", cli_out);
	ck_assert_int_eq(waitpid(submit, &status, 0), submit);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(count_of(cli_err, "broker lost"), 1);
	/* One job, run once. */
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"list_jobs\",\"params\":{}}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "jobs")), 1);
	json_object_put(r);
	fd_slurp(open(mark, O_RDONLY | O_CLOEXEC), json, sizeof(json));
	ck_assert_str_eq(json, "ran\n");
	kill(relay_pid, SIGKILL);
	ck_assert_int_eq(waitpid(relay_pid, &status, 0), relay_pid);
	close(ev);
	close(go);
	close(ofd);
	close(efd);
	close(hfd);
}
END_TEST

/* The status of ticket once it ends (wait_job); caller frees. */
static char *
job_end(const char *ticket)
{
	char		 line[256], *st;
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
	    "\"timeout_s\":10}}", ticket);
	r = broker_call(line);
	st = strdup(json_object_get_string(jpath(r, "status")));
	json_object_put(r);
	return st;
}

/*
 * editor-state --tests-running holding reloads until *wfd is closed: its
 * pid, *hfd its output.  A relay, if any, is started before: it must not
 * hold the FIFO's end.
 */
static pid_t
held_on(int *hfd, int *wfd)
{
	const char	*hold_args[] = { "editor-state", "--tests-running",
			    "--", "sh", "-c", NULL, NULL };
	static char	 cmd[512];
	pid_t		 hold;

	snprintf(cmd, sizeof(cmd), "cat %s >/dev/null", fifo);
	hold_args[5] = cmd;
	await_err(-1, NULL);
	hold = spawn_cli(hfd, hold_args);
	ck_assert_int_ge(*wfd = open(fifo, O_WRONLY | O_CLOEXEC), 0);
	return hold;
}

/* The client's initialize, a tools/call of tool (id 7) and a ping (8). */
static void
mcp_call(int in, const char *tool)
{
	char	line[1024];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":"
	    "\"t\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n", tool);
	send_line(in, line);
}

/*
 * Issue 31.8: the client cancels a tools/call whose job is stored and
 * held, and the broker dies before it reads the cancellation (a relay
 * keeps the line from it, then drops the connection; the broker is
 * killed and started again).  The bridge held the call until the broker
 * read its cancellation: it sends the call again with its key, then the
 * cancellation, and the job ends cancelled; the client hears nothing of
 * the call.  Before, the call was forgotten once the cancellation was
 * written, the replay had neither, and the job ran (done).
 */
START_TEST(mcp_cancel_unread)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 proxy[256], c, *st;
	struct pollfd	 pfd;
	pid_t		 relay_pid, hold, pid;
	int		 ev, go, hfd, wfd, in, out, err, status;

	write_file(tools, "{\"tools\":[{\"name\":\"rebuild\",\"tier\":"
	    "\"heavy\",\"reload\":true,\"exec\":[\"echo\",\"rebuilt\"]}]}",
	    0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(proxy, sizeof(proxy), "%s", broker_path(&b, "relay.sock"));
	relay_pid = relay_start(proxy, RELAY_CANCEL, &ev, &go);
	hold = held_on(&hfd, &wfd);
	cli_out[0] = '\0';
	pid = spawn_mcp_at(proxy, &in, &out, &err);
	mcp_call(in, "rebuild");
	/* The ping is read after the call's job is stored. */
	ck_assert_msg(await_out(out, "\"id\":8"), "stdout: %s", cli_out);
	assert_held("t-000000");
	send_line(in, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":7}}\n");
	pfd.fd = ev;
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, TN_TIMEOUT_MS), 1);
	ck_assert_int_eq(read(ev, &c, 1), 1);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_int_eq(write(go, "C", 1), 1);
	ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
	    cli_err);
	/* After the replay: the ping is answered once it is read. */
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n");
	ck_assert_msg(await_out(out, "\"id\":9"), "stdout: %s", cli_out);
	close(wfd);	/* the hold ends */
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	st = job_end("t-000000");
	ck_assert_str_eq(st, "cancelled");
	free(st);
	ck_assert_ptr_null(strstr(cli_out, "\"id\":7"));
	mcp_end(pid, in, out, err);
	kill(relay_pid, SIGKILL);
	ck_assert_int_eq(waitpid(relay_pid, &status, 0), relay_pid);
	close(ev);
	close(go);
	close(hfd);
}
END_TEST

/*
 * Issue 31, connection_lost: a tools/call whose job is stored and held
 * while the broker is killed twice in quick succession (each time within
 * 2 s of the call's sending, the second after the new broker read the
 * call again).  The broker showed it read the call each time, so it is
 * not what kills it: sent a third time with its key, it gets its job's
 * result once the hold ends: one job, its tool run once.  Before, the
 * second loss answered it connection_lost, and its job ran all the same
 * (a client calling again would run it twice).
 */
START_TEST(mcp_two_quick_losses)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 json[1024], mark[256], ping[128];
	json_object	*r;
	pid_t		 hold, pid;
	int		 hfd, wfd, in, out, err, status, i;

	snprintf(mark, sizeof(mark), "%s", broker_path(&b, "mark"));
	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"mark\","
	    "\"tier\":\"heavy\",\"reload\":true,\"exec\":[\"sh\",\"-c\","
	    "\"echo ran >> %s\"]}]}", mark);
	write_file(tools, json, 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	hold = held_on(&hfd, &wfd);
	cli_out[0] = '\0';
	pid = spawn_mcp(&in, &out, &err);
	mcp_call(in, "mark");
	ck_assert_msg(await_out(out, "\"id\":8"), "stdout: %s", cli_out);
	assert_held("t-000000");
	for (i = 0; i < 2; i++) {
		await_err(-1, NULL);
		ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
		ck_assert_int_eq(broker_start(&b, args, 0), 0);
		ck_assert_msg(await_err(err, "reconnected after"), "stderr: %s",
		    cli_err);
		/* Answered after the replay: the broker read the call. */
		snprintf(ping, sizeof(ping), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}\n", 10 + i);
		send_line(in, ping);
		snprintf(ping, sizeof(ping), "\"id\":%d", 10 + i);
		ck_assert_msg(await_out(out, ping), "stdout: %s", cli_out);
	}
	close(wfd);	/* the hold ends: the job runs */
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	ck_assert_msg(await_out(out, "\"id\":7"), "stdout: %s", cli_out);
	ck_assert_msg(strstr(cli_out, "connection_lost") == NULL &&
	    strstr(cli_out, "\"id\":7,\"result\"") != NULL, "stdout: %s",
	    cli_out);
	r = broker_call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"list_jobs\",\"params\":{}}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "jobs")), 1);
	json_object_put(r);
	fd_slurp(open(mark, O_RDONLY | O_CLOEXEC), json, sizeof(json));
	ck_assert_str_eq(json, "ran\n");
	mcp_end(pid, in, out, err);
	close(hfd);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("reconnect");
	TCase	*tc = tcase_create("reconnect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wait_survives_restart);
	tcase_add_test(tc, mcp_bridge_survives_restart);
	tcase_add_test(tc, mcp_progress_survives_restart);
	tcase_add_test(tc, mcp_progress_cancelled_away);
	tcase_add_test(tc, submit_survives_restart);
	tcase_add_test(tc, mcp_cancel_unread);
	tcase_add_test(tc, mcp_two_quick_losses);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
