/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end: the real broker with real workers.  Tools that must
 * stay running block on a FIFO the test opens when it wants them to end,
 * so every wait is on an event, not on time.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "testnet.h"
#include "ckrun.h"

static struct broker	 b;
static struct client	*c;
static char		 fifo[256], tools[256];
static pid_t		 upstream = -1;
static int		 upstream_port;

static void
setup(void)
{
	broker_prepare(&b);
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	c = NULL;
	upstream_port = 9;	/* discard: nobody listens */
}

static void
teardown(void)
{
	client_close(c);
	if (upstream > 0) {
		kill(upstream, SIGKILL);
		waitpid(upstream, NULL, 0);
		upstream = -1;
	}
	broker_stop(&b);
}

/* The test table: {FIFO} and {PORT} are filled in. */
static void
write_tools(const char *test_tier)
{
	char	json[4096];

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"run_tests\",\"tier\":\"%s\",\"busy\":\"tests_running\","
	    " \"exec\":[\"sh\",\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"stubborn\",\"tier\":\"smooth\",\"busy\":"
	    "\"tests_running\",\"exec\":[\"sh\",\"-c\",\"trap '' TERM; "
	    "touch %s.started; cat %s >/dev/null\"]},"
	    "{\"name\":\"refresh\",\"tier\":\"heavy\",\"busy\":\"compiling\","
	    " \"reload\":{\"param\":\"compile\",\"not_in\":[\"none\"]},"
	    " \"tier_rules\":[{\"param\":\"compile\",\"in\":[\"none\"],"
	    "\"tier\":\"smooth\"}],"
	    " \"exec\":[\"echo\",\"{\\\"refreshed\\\":\\\"{compile}\\\"}\"],"
	    " \"params\":{\"type\":\"object\",\"properties\":{\"compile\":"
	    "{\"type\":\"string\",\"default\":\"request\"}}}},"
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"required\":"
	    "[\"text\"],\"properties\":{\"text\":{\"type\":\"string\"},"
	    "\"n\":{\"type\":\"integer\"}}}},"
	    "{\"name\":\"fail\",\"exec\":[\"sh\",\"-c\",\"exit 3\"]},"
	    "{\"name\":\"missing\",\"exec\":[\"/nonexistent/tool\"]},"
	    "{\"name\":\"pipe\",\"exec\":[\"sh\",\"-c\",\"yes | head -n 1\"]},"
	    "{\"name\":\"crash\",\"exec\":[\"sh\",\"-c\",\"kill -SEGV $$\"]},"
	    "{\"name\":\"flood\",\"exec\":[\"head\",\"-c\",\"1073741824\","
	    "\"/dev/zero\"]},"
	    "{\"name\":\"slow\",\"timeout_s\":1,\"exec\":[\"sleep\",\"30\"]},"
	    "{\"name\":\"env\",\"exec\":[\"env\"]},"
	    "{\"name\":\"garble\",\"exec\":[\"sh\",\"-c\",\"echo '{not json' "
	    ">/proc/$PPID/fd/1; sleep 30\"]},"
	    "{\"name\":\"locked\",\"enabled\":false,\"exec\":[\"true\"]},"
	    "{\"name\":\"answer\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"oops\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"hangup\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"reset\",\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"silent\",\"timeout_s\":1,\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"refused\",\"forward\":\"127.0.0.1:1\"}"
	    "]}", test_tier, fifo, fifo, fifo, upstream_port, upstream_port,
	    upstream_port, upstream_port, upstream_port);
	write_file(tools, json, 0600);
}

/* The broker on the tools file, kill grace 1 s, and extra; c to it. */
static void
start_tools(const char **extra)
{
	const char	*args[16] = { "--tools", tools, "--kill-grace", "1" };
	int		 n = 4;

	while (extra != NULL && *extra != NULL)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
}

/* SIGKILL the broker, then start it again on its state; c to it. */
static void
crash_restart(void)
{
	broker_kill(&b, SIGKILL);
	start_tools(NULL);
}

static void
start_with(const char *test_tier, const char **extra)
{
	write_tools(test_tier);
	start_tools(extra);
}

static json_object *
callf(const char *fmt, ...)
{
	char	line[8192];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return client_call(c, line);
}

static const char *
str(json_object *o, const char *path)
{
	json_object	*v = jpath(o, path);

	ck_assert_msg(v != NULL, "no %s in %.300s", path,
	    json_object_to_json_string(o));
	return json_object_get_string(v);
}

/* Submit asynchronously; the ticket (static buffer per call site). */
static void
submit(char ticket[32], const char *commands, const char *more)
{
	json_object	*r;

	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":%s,\"async\":true%s%s}}", commands,
	    more != NULL ? "," : "", more != NULL ? more : "");
	ck_assert_msg(jpath(r, "result.ticket") != NULL, "submit: %.300s",
	    json_object_to_json_string(r));
	snprintf(ticket, 32, "%s", str(r, "result.ticket"));
	json_object_put(r);
}

static json_object *
poll_job(const char *ticket)
{
	return callf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"poll_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", ticket);
}

/* wait_job until it ends (bounded); the job object.  Caller puts. */
static json_object *
wait_done(const char *ticket)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    ticket);
	json_object	*job = json_object_get(jpath(r, "result"));

	ck_assert_msg(job != NULL, "wait_job: %.300s",
	    json_object_to_json_string(r));
	json_object_put(r);
	return job;
}

/* wait_done, and the job ended as status. */
static void
wait_end(const char *ticket, const char *status)
{
	json_object	*r = wait_done(ticket);

	ck_assert_msg(strcmp(str(r, "status"), status) == 0,
	    "%s ended %s, not %s", ticket, str(r, "status"), status);
	json_object_put(r);
}

/* Read notifications until ticket reaches status. */
static void
await_status(const char *ticket, const char *status)
{
	json_object	*n;
	int		 ok = 0;

	while (!ok && (n = client_wait_method(c, "notifications/job")) != NULL) {
		ok = strcmp(str(n, "params.ticket"), ticket) == 0 &&
		    strcmp(str(n, "params.status"), status) == 0;
		json_object_put(n);
	}
	ck_assert_msg(ok, "%s never became %s", ticket, status);
}

/* Let every tool blocked on the FIFO finish. */
static void
release(void)
{
	int	fd = open(fifo, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void
assert_error(json_object *r, int code, const char *type)
{
	ck_assert_msg(jpath(r, "error.code") != NULL, "not an error: %.300s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(str(r, "error.data.type"), type);
	ck_assert(json_object_object_get_ex(jpath(r, "error.data"), "command",
	    NULL));
	json_object_put(r);
}

static void
guard_scenario(const char *test_tier)
{
	char		 tests[32], reload[32], other[32];
	json_object	*r;

	start_with(test_tier, NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{\"compile\":"
	    "\"request\"}}]", NULL);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "heavy");
	json_object_put(r);
	/* The held reload does not hold back an instant job behind it. */
	submit(other, "[{\"tool\":\"echo\",\"params\":{\"text\":\"x\"}}]",
	    NULL);
	wait_end(other, "done");
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	json_object_put(r);
	release();
	r = wait_done(reload);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.result.refreshed"), "request");
	ck_assert(jpath(r, "blocked_by") != NULL ||
	    json_object_object_get_ex(r, "blocked_by", NULL));
	json_object_put(r);
	wait_end(tests, "done");
}

START_TEST(guard_heavy_tests)
{
	guard_scenario("heavy");
}
END_TEST

START_TEST(guard_smooth_tests)
{
	guard_scenario("smooth");
}
END_TEST

/* Instant jobs never hold heavy ones: only the guard explains the hold. */
START_TEST(guard_instant_tests)
{
	guard_scenario("instant");
}
END_TEST

START_TEST(editor_flags_hold_reloads)
{
	struct client	*ed;
	char		 reload[32];
	json_object	*r;

	start_with("heavy", NULL);
	ed = client_unix(b.sock);
	r = client_call(ed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"compiling\":true}}");
	json_object_put(r);
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.blocked_by"), "compiling");
	json_object_put(r);
	/* The flags go with the connection; the reload then runs. */
	client_close(ed);
	wait_end(reload, "done");
}
END_TEST

START_TEST(classification_on_submit)
{
	char		 t[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"refresh\",\"params\":{\"compile\":\"none\"}}]",
	    NULL);
	r = poll_job(t);
	ck_assert(!json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "smooth");
	json_object_put(r);
	submit(t, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	r = poll_job(t);
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	json_object_put(r);
	/* No params at all: the default "request" still makes a reload. */
	submit(t, "[{\"tool\":\"refresh\"}]", NULL);
	r = poll_job(t);
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "heavy");
	json_object_put(r);
	r = wait_done(t);
	json_object_put(r);
}
END_TEST

START_TEST(cancel_stubborn_worker)
{
	char		 tests[32], reload[32], marker[300];
	json_object	*r;

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"stubborn\"}]", "\"notify\":true");
	await_status(tests, "running");
	/* Its tool runs (and ignores SIGTERM) before the cancel comes. */
	snprintf(marker, sizeof(marker), "%s.started", fifo);
	ck_assert_int_eq(wait_for_file(marker), 0);
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}},{\"tool\":\"echo\","
	    "\"params\":{\"text\":\"after\"}}]", "\"label\":\"rebuild\"");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", tests);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "running");
	json_object_put(r);
	/* The tool ignores SIGTERM: its worker lives, the reload waits. */
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	r = wait_done(tests);
	ck_assert_str_eq(str(r, "status"), "cancelled");
	ck_assert_str_eq(str(r, "error"), "cancelled");
	json_object_put(r);
	r = wait_done(reload);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "label"), "rebuild");
	ck_assert_str_eq(str(r, "results.1.stdout"), "after\n");
	json_object_put(r);
	/* Finished: cancel says no. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", tests);
	ck_assert(!json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
}
END_TEST

START_TEST(cancel_queued)
{
	char		 tests[32], q[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	submit(q, "[{\"tool\":\"run_tests\"}]", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", q);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
	release();
	wait_end(tests, "done");
}
END_TEST

START_TEST(failures_and_results)
{
	char		 t[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"fail\"},{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"still runs\"}}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_int_eq(json_object_get_int(jpath(r, "failed_at_command")), 0);
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.exit_code")),
	    3);
	ck_assert_str_eq(str(r, "results.1.stdout"), "still runs\n");
	json_object_put(r);
	/* A program that cannot be run: said why, with no exit code. */
	submit(t, "[{\"tool\":\"missing\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error"), "cannot run "
	    "'/nonexistent/tool': No such file or directory");
	ck_assert_ptr_null(jpath(r, "results.0.exit_code"));
	json_object_put(r);
	/* Tools get SIGPIPE as a fresh process has it: "yes" ends. */
	submit(t, "[{\"tool\":\"pipe\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.stdout"), "y\n");
	/* Not "yes: standard output: Broken pipe", as with it ignored. */
	ck_assert_str_eq(str(r, "results.0.stderr"), "");
	json_object_put(r);
	submit(t, "[{\"tool\":\"fail\"},{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"x\"}}]", "\"atomic\":true");
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_int_eq(json_object_array_length(jpath(r, "results")), 1);
	ck_assert(!json_object_get_boolean(jpath(r, "rolled_back")));
	ck_assert(json_object_get_boolean(jpath(r, "atomic")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"crash\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.signal"), "SIGSEGV");
	json_object_put(r);
	submit(t, "[{\"tool\":\"slow\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.timed_out")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"flood\"}]", NULL);
	r = wait_done(t);
	ck_assert_msg(strcmp(str(r, "status"), "done") == 0, "flood: %.300s",
	    json_object_to_json_string(jpath(r, "error")));
	ck_assert(json_object_get_boolean(jpath(r, "results.0.truncated")));
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stdout")), 65536);
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

/* A fake upstream: answers "answer", errors "oops", closes on "hangup",
 * resets on "reset", says nothing to "silent". */
static void
start_upstream(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			lfd = socket(AF_INET, SOCK_STREAM, 0), fd;
	char			buf[4096];
	ssize_t			n;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);
	getsockname(lfd, (struct sockaddr *)&sin, &len);
	upstream_port = ntohs(sin.sin_port);
	if ((upstream = fork()) != 0) {
		close(lfd);
		return;
	}
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, "\"answer\"") != NULL) {
			const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"
			    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"v\":42}}\n";
			(void)!write(fd, m, strlen(m));
		} else if (strstr(buf, "\"oops\"") != NULL) {
			const char *m = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
			    "{\"code\":-32000,\"message\":\"no scene\"}}\n";
			(void)!write(fd, m, strlen(m));
		} else if (strstr(buf, "\"silent\"") != NULL) {
			pause();
		} else if (strstr(buf, "\"reset\"") != NULL) {
			struct linger lg = { 1, 0 };

			/* Close with a reset, as with the request unread. */
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(fd);
	}
}

/* The broker's one child process: the worker of the running job. */
static pid_t
worker_pid(void)
{
	char	path[64], buf[64];
	FILE	*f;
	int	pid = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", b.pid,
	    b.pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(buf, sizeof(buf), f) != NULL)
			pid = atoi(buf);
		fclose(f);
	}
	return pid;
}

START_TEST(worker_killed_by_signal)
{
	char		 t[32];
	json_object	*r;
	pid_t		 pid;
	struct timespec	 ts = { 0, 10 * 1000000 };
	int		 i, fd = 0;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	ck_assert_int_gt(pid = worker_pid(), 0);
	/* SIGABRT, not SIGSEGV: a worker built with ASan catches SIGSEGV
	 * itself and exits 1 instead of dying by the signal. */
	kill(pid, SIGABRT);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "SIGABRT"));
	json_object_put(r);
	/* Its tool was killed with it: soon nobody reads the FIFO. */
	for (i = 0; i < 200 && (fd = open(fifo, O_WRONLY | O_NONBLOCK)) != -1;
	    i++) {
		close(fd);
		nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(errno, ENXIO);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

/* Whatever a parameter holds, it stays one argument: no shell. */
START_TEST(no_shell_in_templates)
{
	char		 t[32], marker[128], params[2048];
	json_object	*r;

	snprintf(marker, sizeof(marker), "%.100s", broker_path(&b, "pwned"));
	start_with("heavy", NULL);
	snprintf(params, sizeof(params), "[{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"$(touch %s); `touch %s` | touch %s > %s\"}}]",
	    marker, marker, marker, marker);
	submit(t, params, NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.stdout"), "$(touch "));
	json_object_put(r);
	ck_assert_int_eq(access(marker, F_OK), -1);
}
END_TEST

/* Tools see the documented environment, not the broker's. */
START_TEST(scrubbed_environment)
{
	char		 t[32];
	const char	*env;
	json_object	*r;

	setenv("CMDGATE_TEST_SECRET", "hunter2", 1);
	start_with("heavy", NULL);
	unsetenv("CMDGATE_TEST_SECRET");
	submit(t, "[{\"tool\":\"env\"}]", NULL);
	r = wait_done(t);
	env = str(r, "results.0.stdout");
	ck_assert_ptr_null(strstr(env, "CMDGATE_TEST_SECRET"));
	ck_assert_ptr_null(strstr(env, "NOTIFY_SOCKET"));
	ck_assert_ptr_nonnull(strstr(env, "PATH="));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_TICKET=t-000000\n"));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_TOOL=env\n"));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_PARAMS={}\n"));
	json_object_put(r);
}
END_TEST

/* A tool that writes into its worker's event pipe garbles it. */
START_TEST(garbled_worker_message)
{
	char		 t[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"garble\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "garbled"));
	json_object_put(r);
	submit(t, "[{\"tool\":\"echo\",\"params\":{\"text\":\"on\"}}]", NULL);
	wait_end(t, "done");
}
END_TEST

START_TEST(forward_tools)
{
	char		 t[32];
	json_object	*r;

	start_upstream();
	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"answer\",\"params\":{\"a\":1}}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.result.v")),
	    42);
	json_object_put(r);
	submit(t, "[{\"tool\":\"oops\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"), "no scene"));
	json_object_put(r);
	submit(t, "[{\"tool\":\"hangup\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"), "closed"));
	json_object_put(r);
	/* A reset is the upstream closing too (it was "read failed"). */
	submit(t, "[{\"tool\":\"reset\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"), "closed"));
	json_object_put(r);
	submit(t, "[{\"tool\":\"silent\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.timed_out")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"refused\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"), "refused"));
	json_object_put(r);
}
END_TEST

START_TEST(validation_errors)
{
	const char	*args[] = { "--max-batch", "2", NULL };

	start_with("heavy", args);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{}}"), -32602, "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"fail\"},"
	    "{\"tool\":\"fail\"},{\"tool\":\"fail\"}]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"nope\"}]}}"),
	    -32602, "unknown_tool");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"locked\"}]}}"),
	    -32001, "security_blocked");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"echo\"}]}}"),
	    -32602, "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"echo\","
	    "\"params\":{\"text\":\"a\",\"n\":\"x\"}}]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"poll_job\",\"params\":{\"ticket\":\"t-999999\"}}"), -32002,
	    "unknown_ticket");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"cancel_job\",\"params\":{\"ticket\":\"bogus\"}}"), -32002,
	    "unknown_ticket");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"t-000000\",\"timeout_s\":"
	    "3601}}"), -32602, "invalid_params");
}
END_TEST

START_TEST(queue_full)
{
	const char	*args[] = { "--max-queued", "1", NULL };
	char		 t1[32], t2[32];

	start_with("heavy", args);
	submit(t1, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t1, "running");
	submit(t2, "[{\"tool\":\"run_tests\"}]", NULL);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":"
	    "\"run_tests\"}],\"async\":true}}"), -32003, "queue_full");
	release();
}
END_TEST

START_TEST(idempotency)
{
	char		 t1[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t1, "[{\"tool\":\"echo\",\"params\":{\"text\":\"once\"}}]",
	    "\"idempotency_key\":\"k1\",\"agent\":\"a1\"");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"once\"}}],\"async\":true,\"idempotency_key\":\"k1\","
	    "\"agent\":\"a1\"}}");
	ck_assert_str_eq(str(r, "result.ticket"), t1);
	ck_assert(json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
	/* Another agent's key is another job. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"once\"}}],\"async\":true,\"idempotency_key\":\"k1\","
	    "\"agent\":\"a2\"}}");
	ck_assert_str_ne(str(r, "result.ticket"), t1);
	ck_assert(!json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
}
END_TEST

START_TEST(sync_execute_and_list)
{
	json_object	*r;

	start_with("heavy", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"set_client_name\","
	    "\"params\":{\"name\":\"lister\"}}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"sync\"}}]}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 5);
	ck_assert_str_eq(str(r, "result.status"), "done");
	ck_assert_str_eq(str(r, "result.agent"), "lister");
	ck_assert_str_eq(str(r, "result.results.0.stdout"), "sync\n");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"fail\"}],\"agent\":\"x\"}}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"agent\":\"lister\"}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"status\":[\"failed\"]}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	ck_assert_str_eq(str(r, "result.jobs.0.agent"), "x");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"limit\":1}}");
	ck_assert_str_eq(str(r, "result.next"), "t-000000");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"limit\":1,\"after\":\"t-000000\"}}");
	ck_assert_str_eq(str(r, "result.jobs.0.ticket"), "t-000001");
	ck_assert_ptr_null(jpath(r, "result.next"));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.done")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.failed")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.store.jobs")), 2);
	json_object_put(r);
}
END_TEST

/* A waiting answer does not hold back the ones behind it. */
START_TEST(wait_does_not_block)
{
	char		 t[32], *l;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", NULL);
	client_send(c, "{\"jsonrpc\":\"2.0\",\"id\":100,\"method\":\"wait_job\","
	    "\"params\":{\"ticket\":\"");
	client_send(c, t);
	client_send(c, "\"}}\n{\"jsonrpc\":\"2.0\",\"id\":101,\"method\":"
	    "\"ping\"}\n");
	l = client_line(c);
	ck_assert_ptr_nonnull(strstr(l, "\"id\":101"));
	free(l);
	release();
	l = client_line(c);
	ck_assert_ptr_nonnull(strstr(l, "\"id\":100"));
	ck_assert_ptr_nonnull(strstr(l, "\"status\":\"done\""));
	free(l);
}
END_TEST

START_TEST(mcp_tools_call)
{
	json_object	*r;

	start_with("heavy", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"mcp\"}}}");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	ck_assert_str_eq(str(r, "result.content.0.type"), "text");
	ck_assert_ptr_nonnull(strstr(str(r, "result.content.0.text"),
	    "mcp\\n"));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"fail\"}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"queue_status\"}}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.structuredContent.queued")), 0);
	json_object_put(r);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"nope\"}}"), -32602,
	    "unknown_tool");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"locked\"}}"), -32001,
	    "security_blocked");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}"),
	    -32602, "invalid_params");
}
END_TEST

/* kill -9 mid-job, restart: cmdgate-protocol(7), Durability. */
START_TEST(kill9_restart)
{
	char		 running[32], q1[32], q2[32], next[32];
	json_object	*r = NULL;
	const char	*st;
	struct timespec	 ts = { 0, 20 * 1000000 };
	int		 i;

	start_with("heavy", NULL);
	submit(running, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(running, "running");
	submit(q1, "[{\"tool\":\"run_tests\"}]", NULL);
	submit(q2, "[{\"tool\":\"refresh\"}]", NULL);
	client_close(c);
	c = NULL;
	crash_restart();
	r = poll_job(running);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_int_eq(strncmp(str(r, "result.error"),
	    "interrupted by broker restart", 29), 0);
	json_object_put(r);
	r = NULL;
	/*
	 * q1 starts once the old worker is gone; only then is its tool the
	 * one reading the FIFO.  No event tells a new connection, so poll.
	 */
	for (i = 0, st = ""; i < 500 && strcmp(st, "running") != 0; i++) {
		json_object_put(r);
		r = poll_job(q1);
		st = str(r, "result.status");
		if (strcmp(st, "running") != 0)
			nanosleep(&ts, NULL);
	}
	ck_assert_str_eq(st, "running");
	json_object_put(r);
	release();
	wait_end(q1, "done");
	wait_end(q2, "done");
	submit(next, "[{\"tool\":\"echo\",\"params\":{\"text\":\"n\"}}]", NULL);
	/*
	 * After a kill the counter goes on from the high-water mark kept
	 * beside the store (cmdgated(8)): past every ticket issued.
	 */
	ck_assert_str_eq(next, "t-001000");
	/*
	 * Nothing of the killed run is left: its worker was stopped by the
	 * new broker (or stopped itself on finding the broker gone), and
	 * took its tool along, so nobody reads the FIFO any more.
	 */
	ck_assert_int_eq(open(fifo, O_WRONLY | O_NONBLOCK), -1);
	ck_assert_int_eq(errno, ENXIO);
}
END_TEST

START_TEST(sigterm_interrupts_running)
{
	char		 t[32], q[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	submit(q, "[{\"tool\":\"run_tests\"}]", NULL);
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(broker_start(&b, (const char *[]){ "--tools", tools,
	    "--kill-grace", "1", NULL }, 0), 0);
	c = client_tcp(b.port);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_int_eq(strncmp(str(r, "result.error"),
	    "interrupted by broker shutdown", 30), 0);
	json_object_put(r);
	r = poll_job(q);
	ck_assert_str_ne(str(r, "result.status"), "failed");
	json_object_put(r);
	release();
	wait_end(q, "done");
}
END_TEST

START_TEST(storage_full)
{
	const char	*args[] = { "--map-size", "1048576", NULL };
	char		 t[32];
	char		*big = malloc(100000), line[120000];
	json_object	*r;
	int		 i, full = 0;

	start_with("heavy", args);
	memset(big, 'b', 99999);
	big[99999] = '\0';
	for (i = 0; i < 40 && !full; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
		    "\"label\":\"x\",\"commands\":[{\"tool\":\"echo\",\"params\":"
		    "{\"text\":\"%s\"}}]}}", big);
		r = client_call(c, line);
		if (jpath(r, "result.ticket") != NULL) {
			json_object *job;

			snprintf(t, sizeof(t), "%s", str(r, "result.ticket"));
			job = wait_done(t);
			/* Done, or failed for lack of room: said so. */
			if (strcmp(str(job, "status"), "failed") == 0) {
				ck_assert_int_eq(strncmp(str(job, "error"),
				    "storage_error", 13), 0);
				full = 1;
			}
			json_object_put(job);
		} else if (jpath(r, "error") != NULL) {
			ck_assert_int_eq(json_object_get_int(
			    jpath(r, "error.code")), -32004);
			ck_assert_str_eq(str(r, "error.data.type"),
			    "storage_error");
			full = 1;
		}
		json_object_put(r);
	}
	free(big);
	ck_assert_msg(full, "the store never filled");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"queue_status\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

/* Each queued job's place, found from either end of the queue. */
START_TEST(queue_positions)
{
	char		 tests[32], t[5][32];
	json_object	*r;
	int		 i, want[5] = { 0, 1, -1, 2, 3 };

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	for (i = 0; i < 5; i++)
		submit(t[i], "[{\"tool\":\"fail\"}]", NULL);
	for (i = 0; i < 5; i++) {
		r = poll_job(t[i]);
		ck_assert_str_eq(str(r, "result.status"), "queued");
		ck_assert_int_eq(json_object_get_int(jpath(r,
		    "result.position")), i);
		/* The running heavy job, then those queued before it. */
		ck_assert_int_eq(json_object_array_length(jpath(r,
		    "result.ahead")), i + 1);
		ck_assert_str_eq(str(r, "result.ahead.0.ticket"), tests);
		json_object_put(r);
	}
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", t[2]);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	json_object_put(r);
	for (i = 0; i < 5; i++) {
		r = poll_job(t[i]);
		if (want[i] < 0)
			ck_assert_str_eq(str(r, "result.status"), "cancelled");
		else
			ck_assert_int_eq(json_object_get_int(jpath(r,
			    "result.position")), want[i]);
		json_object_put(r);
	}
	release();
	wait_end(t[4], "failed");
}
END_TEST

/* The entry of a batch answer with the given id. */
static json_object *
batch_entry(json_object *arr, int id)
{
	size_t	i;

	for (i = 0; i < json_object_array_length(arr); i++)
		if (json_object_get_int(jpath(json_object_array_get_idx(arr,
		    i), "id")) == id)
			return json_object_array_get_idx(arr, i);
	ck_abort_msg("no answer with id %d", id);
	return NULL;
}

/*
 * Submits of one loop turn share one commit; one that does not fit fails
 * alone, takes no ticket, and the others are stored.
 */
START_TEST(group_commit_fails_alone)
{
	const char	*args[] = { "--map-size", "1048576", NULL };
	size_t		 bigsz = 900 * 1000, len = bigsz + 1000;
	char		*big = malloc(bigsz), *line = malloc(len);
	json_object	*r, *e;

	start_with("heavy", args);
	memset(big, 'b', bigsz - 1);
	big[bigsz - 1] = '\0';
#define GROUP_SMALL(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":" \
	"\"batch_execute\",\"params\":{\"async\":true,\"commands\":" \
	"[{\"tool\":\"echo\",\"params\":{\"text\":\"s\"}}]}}"
	snprintf(line, len, "[" GROUP_SMALL(1) ",{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
	    "\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":\"%s\"}}]}},"
	    GROUP_SMALL(3) "]", big);
#undef GROUP_SMALL
	r = client_call(c, line);
	ck_assert_int_eq(json_object_get_type(r), json_type_array);
	ck_assert_str_eq(str(batch_entry(r, 1), "result.ticket"), "t-000000");
	e = batch_entry(r, 2);
	ck_assert_int_eq(json_object_get_int(jpath(e, "error.code")), -32004);
	ck_assert_str_eq(str(e, "error.data.type"), "storage_error");
	ck_assert_str_eq(str(batch_entry(r, 3), "result.ticket"), "t-000001");
	json_object_put(r);
	r = wait_done("t-000001");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	free(big);
	free(line);
}
END_TEST

/*
 * A submit's answer comes before the answer to the next request on the
 * connection, which already sees the job.
 */
START_TEST(submit_answered_in_order)
{
	const char	*two = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"echo\",\"params\":{\"text\":\"o\"}}]}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"list_jobs\"}";
	json_object	*r;
	char		*line;

	start_with("heavy", NULL);
	r = client_call(c, two);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 1);
	ck_assert_str_eq(str(r, "result.ticket"), "t-000000");
	json_object_put(r);
	ck_assert_ptr_nonnull(line = client_line(c));
	r = json_tokener_parse(line);
	free(line);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 2);
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
}
END_TEST

START_TEST(results_expire)
{
	const char	*args[] = { "--result-ttl", "1", NULL };
	char		 t[32];
	json_object	*r;
	int		 i, gone = 0;
	struct timespec	 ts = { 0, 100 * 1000000 };

	start_with("heavy", args);
	submit(t, "[{\"tool\":\"echo\",\"params\":{\"text\":\"e\"}}]", NULL);
	r = wait_done(t);
	json_object_put(r);
	/* Expiry has no event a client can wait on: poll, bounded. */
	for (i = 0; i < 50 && !gone; i++) {
		r = poll_job(t);
		gone = jpath(r, "error") != NULL;
		json_object_put(r);
		if (!gone)
			nanosleep(&ts, NULL);
	}
	ck_assert(gone);
}
END_TEST

START_TEST(sync_group)
{
	const char	*args[] = { "--sync", "group", NULL };
	json_object	*r;

	start_with("heavy", args);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"g\"}}]}}");
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

/* ---- H4: the guard within a pass, held reloads first, shutdown ---------
 * answers, MCP wait_job (issues 19.1, 19.4, 19.12, 11 section 5). */

/* A batch_execute request line (async, notify) for commands. */
static void
submit_line(char *buf, size_t len, int id, const char *commands)
{
	snprintf(buf, len, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":%s,\"async\":true,"
	    "\"notify\":true}}", id, commands);
}

/* The ticket in answer r (borrowed) to the request of id. */
static void
ticket_of(json_object *r, int id, char ticket[32])
{
	json_object	*a;
	size_t		 i, n = json_object_is_type(r, json_type_array) ?
			    json_object_array_length(r) : 1;

	for (i = 0; i < n; i++) {
		a = json_object_is_type(r, json_type_array) ?
		    json_object_array_get_idx(r, i) : r;
		if (json_object_get_int(jpath(a, "id")) == id) {
			snprintf(ticket, 32, "%s", str(a, "result.ticket"));
			return;
		}
	}
	ck_abort_msg("no answer to request %d in %.300s", id,
	    json_object_to_json_string(r));
}

/* The next answer on cl; notifications before it are kept for later. */
static json_object *
read_answer(struct client *cl)
{
	json_object	*r;
	char		*s;

	for (;;) {
		ck_assert_ptr_nonnull(s = client_line(cl));
		ck_assert_ptr_nonnull(r = json_tokener_parse(s));
		free(s);
		if (json_object_object_get_ex(r, "id", NULL))
			return r;
		json_object_array_add(cl->notes, r);
	}
}

/*
 * tests (instant, holds tests_running) was started in the same scheduling
 * pass as reload, which came after it: the reload must wait for it.
 */
static void
assert_reload_held(const char *tests, const char *reload)
{
	json_object	*r;

	ck_assert_int_lt(strcmp(tests, reload), 0);
	await_status(tests, "running");
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	release();
	wait_end(reload, "done");
	wait_end(tests, "done");
}

/* Issue 19.1: both submits of one JSON-RPC batch array. */
START_TEST(guard_same_pass_batch)
{
	char		 a[512], bl[512], line[1100], tests[32], reload[32];
	json_object	*r;

	start_with("instant", NULL);
	submit_line(a, sizeof(a), 1, "[{\"tool\":\"run_tests\"}]");
	submit_line(bl, sizeof(bl), 2, "[{\"tool\":\"refresh\","
	    "\"params\":{}}]");
	snprintf(line, sizeof(line), "[%s,%s]", a, bl);
	r = client_call(c, line);
	ticket_of(r, 1, tests);
	ticket_of(r, 2, reload);
	json_object_put(r);
	assert_reload_held(tests, reload);
}
END_TEST

/*
 * Issue 19.1: two clients' submits read in one loop turn (the broker is
 * stopped while both are sent, so that one epoll round sees both), stored
 * in one group commit and scheduled in one pass.
 */
START_TEST(guard_same_pass_turn)
{
	struct client	*c2;
	char		 line[512], tests[32], reload[32];
	json_object	*r;

	start_with("instant", NULL);
	c2 = client_tcp(b.port);
	r = client_call(c2, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"ping\"}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	json_object_put(r);
	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	submit_line(line, sizeof(line) - 1, 1, "[{\"tool\":\"run_tests\"}]");
	strcat(line, "\n");
	client_send(c, line);
	submit_line(line, sizeof(line) - 1, 2, "[{\"tool\":\"refresh\","
	    "\"params\":{}}]");
	strcat(line, "\n");
	client_send(c2, line);
	ck_assert_int_eq(kill(b.pid, SIGCONT), 0);
	r = read_answer(c);
	ticket_of(r, 1, tests);
	json_object_put(r);
	r = read_answer(c2);
	ticket_of(r, 2, reload);
	json_object_put(r);
	client_close(c2);
	assert_reload_held(tests, reload);
}
END_TEST

/*
 * Issue 19.4: a reload held by a running test job goes before the test
 * jobs submitted after it; other jobs still pass it.
 */
START_TEST(held_reload_before_later_tests)
{
	char		 t1[32], reload[32], t2[32], other[32];
	json_object	*r, *rl;

	start_with("smooth", NULL);
	submit(t1, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t1, "running");
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	submit(t2, "[{\"tool\":\"run_tests\"}]", NULL);
	submit(other, "[{\"tool\":\"echo\",\"params\":{\"text\":\"x\"}}]",
	    NULL);
	wait_end(other, "done");
	r = poll_job(t2);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.position")), 1);
	json_object_put(r);
	/* The first gap: t1 ends, the reload runs, then t2. */
	release();
	rl = wait_done(reload);
	ck_assert_str_eq(str(rl, "status"), "done");
	release();
	r = wait_done(t2);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_le(str(rl, "finished_at"), str(r, "started_at"));
	json_object_put(r);
	json_object_put(rl);
	wait_end(t1, "done");
}
END_TEST

/*
 * Issue 19.12: on SIGTERM, a client waiting for a running job gets the
 * job's final state and then the shutdown notice, not EOF: with --sync
 * full and --sync group alike.
 */
START_TEST(shutdown_answers_waiters)
{
	const char	*args[] = { "--sync", _i ? "group" : "full", NULL };
	char		 t[32], line[256], *s;
	json_object	*r, *m;
	int		 answered = 0, noticed = 0;

	start_with("heavy", args);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
	    "\"timeout_s\":60}}\n", t);
	client_send(c, line);
	/* Answered after the wait_job was read: the wait is registered. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 8);
	json_object_put(r);
	ck_assert_int_eq(kill(b.pid, SIGTERM), 0);
	while ((s = client_line(c)) != NULL) {
		r = json_tokener_parse(s);
		free(s);
		ck_assert_ptr_nonnull(r);
		if (json_object_get_int(jpath(r, "id")) == 7) {
			ck_assert_str_eq(str(r, "result.status"), "failed");
			ck_assert_int_eq(strncmp(str(r, "result.error"),
			    "interrupted by broker shutdown", 30), 0);
			ck_assert(!noticed);
			answered = 1;
		}
		if ((m = jpath(r, "method")) != NULL && strcmp(
		    json_object_get_string(m),
		    "notifications/server/shutdown") == 0)
			noticed = 1;
		json_object_put(r);
	}
	ck_assert_msg(answered, "the waiter got no answer (sync %s)", args[1]);
	ck_assert_msg(noticed, "no shutdown notice (sync %s)", args[1]);
	/* It is stopping already: wait for its exit (signal 0 sends none). */
	ck_assert_int_eq(broker_signal_wait(&b, 0), 0);
}
END_TEST

/* Issue 11 section 5: MCP wait_job on a finished job answers at once. */
START_TEST(mcp_wait_finished)
{
	char		 t[32], f[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"echo\",\"params\":{\"text\":\"w\"}}]", NULL);
	submit(f, "[{\"tool\":\"fail\"}]", NULL);
	json_object_put(wait_done(t));
	json_object_put(wait_done(f));
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"wait_job\",\"arguments\":{\"ticket\":"
	    "\"%s\"}}}", t);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 4);
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	ck_assert_str_eq(str(r, "result.content.0.type"), "text");
	ck_assert_ptr_nonnull(strstr(str(r, "result.content.0.text"),
	    "\"status\":\"done\""));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"wait_job\",\"arguments\":{\"ticket\":"
	    "\"%s\",\"timeout_s\":5}}}", f);
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "failed");
	json_object_put(r);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"wait_job\",\"arguments\":"
	    "{\"ticket\":\"t-999999\"}}}"), -32002, "unknown_ticket");
}
END_TEST

/*
 * Issue 19.2, the broker's half: editor flags held when the broker stops
 * keep holding reloads after its restart until --editor-grace passes (or
 * their holder reports again); then the reload runs and the record goes.
 */
START_TEST(editor_flags_outlive_restart)
{
	const char	*args[] = { "--tools", tools, "--kill-grace", "1",
			    "--editor-grace", "1", NULL };
	struct client	*ed;
	char		 reload[32], flags[300];
	json_object	*r;

	start_with("heavy", NULL);
	snprintf(flags, sizeof(flags), "%s", broker_path(&b, "state/editor-flags"));
	ed = client_unix(b.sock);
	json_object_put(client_call(ed, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"report_editor_state\",\"params\":"
	    "{\"tests_running\":true}}"));
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	ck_assert_int_eq(access(flags, F_OK), 0);
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	client_close(ed);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"queue_status\"}");
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.busy.tests_running")));
	json_object_put(r);
	wait_end(reload, "done");
	ck_assert_int_eq(access(flags, F_OK), -1);
	ck_assert_int_eq(broker_log_count(&b, "--editor-grace passed"), 1);
}
END_TEST

/* ---- tools and workers (h3) ------------------------------------------ */

/*
 * The table of this block: %1$s is the temp dir, %2$s the FIFO, %3$d an
 * IPv4 upstream's port, %4$d an IPv6 one's.
 */
static const char h3_table[] = "{\"tools\":["
    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\",\"{text}\"],"
    " \"params\":{\"properties\":{\"text\":{\"type\":\"string\"}}}},"
    "{\"name\":\"echo_dash\",\"tier\":\"instant\",\"allow_dash\":[\"text\"],"
    " \"exec\":[\"echo\",\"{text}\"]},"
    "{\"name\":\"where\",\"tier\":\"instant\",\"exec\":[\"pwd\"]},"
    "{\"name\":\"where_cwd\",\"tier\":\"instant\",\"cwd\":\"%1$s\","
    " \"exec\":[\"pwd\"]},"
    "{\"name\":\"where_gone\",\"tier\":\"instant\",\"cwd\":\"%1$s/gone\","
    " \"exec\":[\"pwd\"]},"
    "{\"name\":\"nofile\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"ulimit -n\"]},"
    "{\"name\":\"stubborn\",\"tier\":\"smooth\",\"exec\":[\"sh\",\"-c\","
    " \"trap '' TERM; echo $$ >%1$s/t.tmp; mv %1$s/t.tmp %1$s/tool.pid; "
    "cat %2$s >/dev/null\"]},"
    "{\"name\":\"leaver\",\"tier\":\"smooth\",\"exec\":[\"sh\",\"-c\","
    " \"(setsid sh -c 'echo $$ >%1$s/l.tmp; mv %1$s/l.tmp %1$s/left.pid; "
    "exec sleep 60' &); until [ -e %1$s/left.pid ]; do sleep 0.01; done; "
    "[ -z \\\"$1\\\" ] || cat %2$s\", \"sh\", \"{block}\"],"
    " \"params\":{\"properties\":{\"block\":{\"default\":\"\"}}}},"
    "{\"name\":\"big_params\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"test -z \\\"$CMDGATE_PARAMS\\\" && wc -c <\\\"$CMDGATE_PARAMS_FILE\\\"\"]},"
    "{\"name\":\"small_params\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"echo \\\"$CMDGATE_PARAMS\\\"; cat \\\"$CMDGATE_PARAMS_FILE\\\"\"]},"
    "{\"name\":\"cat_bad\",\"tier\":\"instant\",\"exec\":[\"cat\","
    " \"%1$s/bad.json\"]},"
    "{\"name\":\"ignore\",\"tier\":\"instant\",\"exec\":[\"true\"]},"
    "{\"name\":\"print\",\"tier\":\"instant\",\"exec\":[\"printf\",\"%%s\","
    " \"{out}\"],\"allow_dash\":[\"out\"]},"
    "{\"name\":\"ctl\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
    " \"printf '{\\\"a\\\":\\\"'; head -c 179990 /dev/zero | tr '\\\\0' "
    "'\\\\1'; printf '\\\"}'; head -c 179990 /dev/zero | tr '\\\\0' "
    "'\\\\1' >&2\"]},"
    "{\"name\":\"blocker\",\"tier\":\"heavy\",\"exec\":[\"cat\",\"%2$s\"]},"
    "{\"name\":\"victim\",\"tier\":\"heavy\",\"enabled\":%5$s,"
    " \"exec\":[\"true\"]},"
    "{\"name\":\"fwd\",\"forward\":\"127.0.0.1:%3$d\"},"
    "{\"name\":\"fwd6\",\"forward\":\"[::1]:%4$d\"}"
    "]}";

static void
h3_write_tools(int port4, int port6, int victim)
{
	char	json[8192];

	mkdir(broker_path(&b, "gone"), 0700);
	snprintf(json, sizeof(json), h3_table, b.dir, fifo, port4, port6,
	    victim ? "true" : "false");
	write_file(tools, json, 0600);
}

static void
h3_start(const char **extra, int port4, int port6)
{
	h3_write_tools(port4, port6, 1);
	start_tools(extra);
}

/* Submit and wait for the end; the job object (caller puts). */
static json_object *
h3_run(const char *commands)
{
	char	t[32];

	submit(t, commands, NULL);
	return wait_done(t);
}

/* The pid a tool wrote into the temp dir (awaited, bounded). */
static pid_t
h3_pid_file(const char *name)
{
	char	path[256];
	FILE	*f;
	int	pid = -1;

	snprintf(path, sizeof(path), "%s", broker_path(&b, name));
	ck_assert_int_eq(wait_for_file(path), 0);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
	fclose(f);
	return pid;
}

/* Whether pid ends within ms (a pidfd: no polling of /proc). */
static int
h3_gone_within(pid_t pid, int ms)
{
	struct pollfd	pfd;
	int		fd = pidfd_open(pid, 0), rc;

	if (fd == -1)
		return errno == ESRCH;
	pfd.fd = fd;
	pfd.events = POLLIN;
	rc = poll(&pfd, 1, ms) == 1;
	close(fd);
	if (!rc)
		kill(pid, SIGKILL);	/* leave nothing behind */
	return rc;
}

/* Issue 11 §1: a value that would become an option is refused. */
START_TEST(h3_dash_arguments)
{
	json_object	*r;

	h3_start(NULL, 9, 9);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"--version\"}}]}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32602);
	ck_assert_str_eq(str(r, "error.data.type"), "invalid_params");
	ck_assert_msg(strstr(json_object_to_json_string(r),
	    "parameter \\\"text\\\" starts with '-'") != NULL, "%s",
	    json_object_to_json_string(r));
	json_object_put(r);
	r = h3_run("[{\"tool\":\"echo_dash\",\"params\":{\"text\":\"-n\"}}]");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	r = h3_run("[{\"tool\":\"echo\",\"params\":{\"text\":\"a-b\"}}]");
	ck_assert_str_eq(str(r, "results.0.stdout"), "a-b\n");
	json_object_put(r);
}
END_TEST

/* Issue 11 §1: the table's cwd, else the state dir; never ours. */
START_TEST(h3_tool_cwd)
{
	char		 want[PATH_MAX], line[PATH_MAX + 2];
	json_object	*r;

	h3_start(NULL, 9, 9);
	r = h3_run("[{\"tool\":\"where\"}]");
	ck_assert_ptr_nonnull(realpath(broker_path(&b, "state"), want));
	snprintf(line, sizeof(line), "%s\n", want);
	ck_assert_str_eq(str(r, "results.0.stdout"), line);
	json_object_put(r);
	r = h3_run("[{\"tool\":\"where_cwd\"}]");
	snprintf(line, sizeof(line), "%s\n", b.dir);
	ck_assert_str_eq(str(r, "results.0.stdout"), line);
	json_object_put(r);
	/* Its directory removed since the table was loaded: said so. */
	ck_assert_int_eq(rmdir(broker_path(&b, "gone")), 0);
	r = h3_run("[{\"tool\":\"where_gone\"}]");
	ck_assert_str_eq(str(r, "status"), "failed");
	snprintf(line, sizeof(line), "cannot run 'pwd' in %s/gone: No such "
	    "file", b.dir);
	ck_assert_msg(strstr(str(r, "results.0.error"), line) != NULL, "%s",
	    str(r, "results.0.error"));
	json_object_put(r);
}
END_TEST

/* Issue 11 §1: tools get the open-files limit the broker was given. */
START_TEST(h3_tool_nofile)
{
	struct rlimit	 rl, low;
	json_object	*r;
	char		 want[32];

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 300) {
		fprintf(stderr, "h3_tool_nofile: skipped: hard limit %llu\n",
		    (unsigned long long)rl.rlim_max);
		return;
	}
	low = rl;
	low.rlim_cur = 256;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	h3_start(NULL, 9, 9);
	setrlimit(RLIMIT_NOFILE, &rl);
	r = h3_run("[{\"tool\":\"nofile\"}]");
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)low.rlim_cur);
	ck_assert_str_eq(str(r, "results.0.stdout"), want);
	json_object_put(r);
}
END_TEST

/*
 * Issue 11 §5: the broker dies by SIGKILL mid-job; its worker notices and
 * ends the tool (which ignores SIGTERM) after --kill-grace 1.
 */
START_TEST(h3_broker_killed)
{
	char	t[32];
	pid_t	tool;

	h3_start(NULL, 9, 9);
	submit(t, "[{\"tool\":\"stubborn\"}]", NULL);
	tool = h3_pid_file("tool.pid");
	client_close(c);
	c = NULL;
	broker_kill(&b, SIGKILL);
	ck_assert_msg(h3_gone_within(tool, 1000 + 4000),
	    "the tool outlived its broker");
}
END_TEST

/*
 * Issue 11 §5, issue 19 "background child": a tool that double-forks a
 * sleeper into a session of its own; the sleeper is gone when the job has
 * ended (normal exit) or has been cancelled.
 */
START_TEST(h3_leftovers_killed)
{
	char		 t[32];
	json_object	*r;
	pid_t		 left;

	h3_start(NULL, 9, 9);
	r = h3_run("[{\"tool\":\"leaver\"}]");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	left = h3_pid_file("left.pid");
	ck_assert_msg(h3_gone_within(left, 0), "a setsid() child outlived "
	    "its command");
	unlink(broker_path(&b, "left.pid"));
	submit(t, "[{\"tool\":\"leaver\",\"params\":{\"block\":\"1\"}}]",
	    "\"notify\":true");
	left = h3_pid_file("left.pid");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", t);
	json_object_put(r);
	await_status(t, "cancelled");
	ck_assert_msg(h3_gone_within(left, 0), "a setsid() child outlived "
	    "its cancelled command");
}
END_TEST

/* Issue 19.10: 200 KiB of params reach exec tools, by file. */
START_TEST(h3_large_params)
{
	size_t		 n = 200 * 1024;
	char		*line = malloc(n + 512), want[32];
	json_object	*r;
	int		 k;

	h3_start(NULL, 9, 9);
	for (k = 0; k < 2; k++) {
		int off = snprintf(line, n + 512, "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"batch_execute\",\"params\":{\"commands\":[{"
		    "\"tool\":\"%s\",\"params\":{\"blob\":\"",
		    k == 0 ? "ignore" : "big_params");

		memset(line + off, 'x', n);
		snprintf(line + off + n, 512, "\"}}]}}");
		r = client_call(c, line);
		ck_assert_msg(jpath(r, "result.status") != NULL, "%.300s",
		    json_object_to_json_string(r));
		ck_assert_str_eq(str(r, "result.status"), "done");
		if (k == 1) {
			/* {"blob":"x..."} */
			snprintf(want, sizeof(want), "%zu\n", n + 11);
			ck_assert_str_eq(str(r, "result.results.0.stdout"),
			    want);
		}
		json_object_put(r);
	}
	free(line);
	r = h3_run("[{\"tool\":\"small_params\",\"params\":{\"a\":1}}]");
	ck_assert_str_eq(str(r, "results.0.stdout"), "{\"a\":1}\n{\"a\":1}");
	json_object_put(r);
}
END_TEST

/* A loopback upstream that takes the request slowly, then answers. */
static void
h3_upstream(int family)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	int			 lfd, fd, small = 4096;
	char			 buf[4096], ans[128];
	size_t			 total = 0;
	ssize_t			 n;

	lfd = socket(family, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&ss, family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&ss, &len);
	upstream_port = ntohs(family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if ((upstream = fork()) != 0) {
		close(lfd);
		return;
	}
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		total = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			total += (size_t)n;
			if (buf[n - 1] == '\n')
				break;
		}
		snprintf(ans, sizeof(ans), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"result\":{\"bytes\":%zu}}\n", total);
		(void)!write(fd, ans, strlen(ans));
		close(fd);
	}
}

/* Issue 19.11: a 4 MB request reaches a slow upstream whole. */
START_TEST(h3_forward_large_request)
{
	const char	*args[] = { "--max-message", "8388608", NULL };
	size_t		 n = 4 * 1024 * 1024;
	char		*line = malloc(n + 512);
	json_object	*r;
	int		 off;

	h3_upstream(AF_INET);
	h3_start(args, upstream_port, 9);
	off = snprintf(line, n + 512, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"fwd\","
	    "\"params\":{\"blob\":\"");
	memset(line + off, 'y', n);
	snprintf(line + off + n, 512, "\"}}]}}");
	r = client_call(c, line);
	free(line);
	ck_assert_msg(jpath(r, "result.results.0.ok") != NULL &&
	    json_object_get_boolean(jpath(r, "result.results.0.ok")), "%.500s",
	    json_object_to_json_string(r));
	/* {"jsonrpc":"2.0","id":1,"method":"fwd","params":{"blob":"y..."}}\n */
	ck_assert_int_eq(json_object_get_int64(jpath(r,
	    "result.results.0.result.bytes")), (int64_t)(n + strlen(
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fwd\",\"params\":"
	    "{\"blob\":\"\"}}\n")));
	json_object_put(r);
}
END_TEST

/* Issue 11 §5: forward to [::1]:PORT. */
START_TEST(h3_forward_ipv6)
{
	json_object	*r;
	int		 fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin6,
	    sizeof(sin6)) == -1) {
		fprintf(stderr, "h3_forward_ipv6: skipped: no IPv6 loopback "
		    "(%s)\n", strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	close(fd);
	h3_upstream(AF_INET6);
	h3_start(NULL, 9, upstream_port);
	r = h3_run("[{\"tool\":\"fwd6\",\"params\":{}}]");
	ck_assert_msg(json_object_get_boolean(jpath(r, "results.0.ok")),
	    "%.500s", json_object_to_json_string(r));
	ck_assert_ptr_nonnull(jpath(r, "results.0.result.bytes"));
	json_object_put(r);
}
END_TEST

static const struct {
	const char	*out;		/* the tool's stdout, JSON-escaped */
	const char	*result;	/* the result expected, or NULL */
} h3_outputs[] = {
	{ "{\\\"a\\\":1}", "{\"a\":1}" },
	{ " \\n\\t{\\\"a\\\":[1,2]} \\r\\n", "{\"a\":[1,2]}" },
	{ "{\\\"a\\\":1}\\n{\\\"b\\\":2}\\n", NULL },
	{ "{\\\"a\\\":1} trailing", NULL },
	{ "{'a':1,}", NULL },
	{ "[1,2,]", NULL },
	{ "{\\\"a\\\":NaN}", NULL },
	{ "{\\\"a\\\":\\\"\\u0001\\\"}", NULL },	/* a raw control byte */
	{ "{\\\"a\\\":1} // note", NULL },
	{ "\\\"just a string\\\"", NULL },
};

/* Issue 19.9: result only when the whole stdout is one JSON value. */
START_TEST(h3_strict_stdout)
{
	json_object	*r, *want;
	char		 cmds[512];

	h3_start(NULL, 9, 9);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"print\",\"params\":"
	    "{\"out\":\"%s\"}}]", h3_outputs[_i].out);
	r = h3_run(cmds);
	ck_assert_str_eq(str(r, "status"), "done");
	if (h3_outputs[_i].result == NULL)
		ck_assert_msg(jpath(r, "results.0.result") == NULL,
		    "case %d: %s", _i, json_object_to_json_string(r));
	else {
		want = json_tokener_parse(h3_outputs[_i].result);
		ck_assert_msg(json_object_equal(jpath(r, "results.0.result"),
		    want), "case %d: %s", _i, json_object_to_json_string(r));
		json_object_put(want);
	}
	json_object_put(r);
}
END_TEST

/* Issue 19.9: invalid UTF-8 inside a JSON string is no result. */
START_TEST(h3_stdout_bad_utf8)
{
	json_object	*r;

	h3_start(NULL, 9, 9);
	write_file(broker_path(&b, "bad.json"), "{\"a\":\"\xed\xa0\x80\"}",
	    0600);
	r = h3_run("[{\"tool\":\"cat_bad\"}]");
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_null(jpath(r, "results.0.result"));
	json_object_put(r);
}
END_TEST

/*
 * Issue 19.9: control bytes in a tool's output, within --output-cap, do
 * not fail the job as a message too long.
 */
START_TEST(h3_control_bytes)
{
	const char	*args[] = { "--output-cap", "180000", NULL };
	struct timeval	 tv = { 50, 0 };
	json_object	*r;

	h3_start(args, 9, 9);
	/* Megabytes of \u0001 escapes take a while under valgrind. */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = h3_run("[{\"tool\":\"ctl\"}]");
	ck_assert_msg(strcmp(str(r, "status"), "done") == 0, "%.300s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stdout")), 179998);
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stderr")), 179990);
	ck_assert_ptr_null(jpath(r, "results.0.result"));
	json_object_put(r);
}
END_TEST

/* Nested arrays n deep around 0, as text.  Caller frees. */
static char *
h3_nested(int n)
{
	char	*s = malloc((size_t)n * 2 + 2);
	int	 i;

	for (i = 0; i < n; i++)
		s[i] = '[';
	s[n] = '0';
	for (i = 0; i < n; i++)
		s[n + 1 + i] = ']';
	s[2 * n + 1] = '\0';
	return s;
}

/*
 * Issue 19.7: params nested 31 deep run, poll, list, and survive a
 * restart while queued; tool output nested 29 to 31 deep is a result.
 */
START_TEST(h3_deep_json)
{
	char		*deep, cmds[1024], t[32], blk[32];
	json_object	*r;
	int		 d;

	h3_start(NULL, 9, 9);
	deep = h3_nested(30);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"ignore\",\"params\":"
	    "{\"d\":%s}}]", deep);
	free(deep);
	submit(t, cmds, NULL);
	wait_end(t, "done");
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"list_jobs\","
	    "\"params\":{}}");
	ck_assert_msg(strstr(json_object_to_json_string(r), t) != NULL,
	    "list_jobs lacks %s", t);
	json_object_put(r);
	/* Queued with deep params across a kill -9 and a restart. */
	submit(blk, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(blk, "running");
	deep = h3_nested(30);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"victim\",\"params\":"
	    "{\"d\":%s}}]", deep);
	free(deep);
	submit(t, cmds, NULL);
	client_close(c);
	crash_restart();
	wait_end(t, "done");
	for (d = 29; d <= 31; d++) {
		deep = h3_nested(d);
		snprintf(cmds, sizeof(cmds), "[{\"tool\":\"print\",\"params\":"
		    "{\"out\":\"%s\"}}]", deep);
		free(deep);
		r = h3_run(cmds);
		ck_assert_msg(strcmp(str(r, "status"), "done") == 0 &&
		    jpath(r, "results.0.result") != NULL, "depth %d: %.300s",
		    d, json_object_to_json_string(r));
		json_object_put(r);
	}
}
END_TEST

/*
 * Issue 19 "also worth a decision": a queued job whose tool a SIGHUP
 * disabled fails when its turn comes, with the reason.
 */
START_TEST(h3_disabled_while_queued)
{
	char		 blk[32], vic[32];
	json_object	*r;

	h3_start(NULL, 9, 9);
	submit(blk, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(blk, "running");
	submit(vic, "[{\"tool\":\"victim\"}]", NULL);
	r = poll_job(vic);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	json_object_put(r);
	h3_write_tools(9, 9, 0);
	kill(b.pid, SIGHUP);
	json_object_put(client_wait_method(c, "notifications/tools/list_changed"));
	release();
	r = wait_done(vic);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "tool 'victim' was "
	    "disabled"));
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("jobs");
	TCase	*tc = tcase_create("jobs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, guard_heavy_tests);
	tcase_add_test(tc, guard_smooth_tests);
	tcase_add_test(tc, guard_instant_tests);
	tcase_add_test(tc, editor_flags_hold_reloads);
	tcase_add_test(tc, classification_on_submit);
	tcase_add_test(tc, cancel_stubborn_worker);
	tcase_add_test(tc, cancel_queued);
	tcase_add_test(tc, failures_and_results);
	tcase_add_test(tc, worker_killed_by_signal);
	tcase_add_test(tc, garbled_worker_message);
	tcase_add_test(tc, no_shell_in_templates);
	tcase_add_test(tc, scrubbed_environment);
	tcase_add_test(tc, forward_tools);
	tcase_add_test(tc, validation_errors);
	tcase_add_test(tc, queue_full);
	tcase_add_test(tc, idempotency);
	tcase_add_test(tc, sync_execute_and_list);
	tcase_add_test(tc, wait_does_not_block);
	tcase_add_test(tc, mcp_tools_call);
	tcase_add_test(tc, kill9_restart);
	tcase_add_test(tc, sigterm_interrupts_running);
	tcase_add_test(tc, storage_full);
	tcase_add_test(tc, group_commit_fails_alone);
	tcase_add_test(tc, queue_positions);
	tcase_add_test(tc, submit_answered_in_order);
	tcase_add_test(tc, results_expire);
	tcase_add_test(tc, sync_group);
	/* H4 */
	tcase_add_test(tc, guard_same_pass_batch);
	tcase_add_test(tc, guard_same_pass_turn);
	tcase_add_test(tc, held_reload_before_later_tests);
	tcase_add_loop_test(tc, shutdown_answers_waiters, 0, 2);
	tcase_add_test(tc, mcp_wait_finished);
	tcase_add_test(tc, editor_flags_outlive_restart);
	/* tools and workers (h3) */
	tcase_add_test(tc, h3_dash_arguments);
	tcase_add_test(tc, h3_tool_cwd);
	tcase_add_test(tc, h3_tool_nofile);
	tcase_add_test(tc, h3_broker_killed);
	tcase_add_test(tc, h3_leftovers_killed);
	tcase_add_test(tc, h3_large_params);
	tcase_add_test(tc, h3_forward_large_request);
	tcase_add_test(tc, h3_forward_ipv6);
	tcase_add_loop_test(tc, h3_strict_stdout, 0,
	    sizeof(h3_outputs) / sizeof(h3_outputs[0]));
	tcase_add_test(tc, h3_stdout_bad_utf8);
	tcase_add_test(tc, h3_control_bytes);
	tcase_add_test(tc, h3_deep_json);
	tcase_add_test(tc, h3_disabled_while_queued);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
