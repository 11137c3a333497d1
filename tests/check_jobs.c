/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end: the real broker with real workers.  Tools that must
 * stay running block on a FIFO the test opens when it wants them to end,
 * so every wait is on an event, not on time.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
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
	    "{\"name\":\"silent\",\"timeout_s\":1,\"forward\":\"127.0.0.1:%d\"},"
	    "{\"name\":\"refused\",\"forward\":\"127.0.0.1:1\"}"
	    "]}", test_tier, fifo, fifo, fifo, upstream_port, upstream_port,
	    upstream_port, upstream_port);
	write_file(tools, json, 0600);
}

static void
start_with(const char *test_tier, const char **extra)
{
	const char	*args[16] = { "--tools", tools, "--kill-grace", "1" };
	int		 n = 4;

	write_tools(test_tier);
	while (extra != NULL && *extra != NULL)
		args[n++] = *extra++;
	args[n] = NULL;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
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
	r = wait_done(other);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
	r = wait_done(tests);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
	r = wait_done(reload);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
	submit(t, "[{\"tool\":\"refresh\"}]", NULL);
	r = poll_job(t);
	ck_assert(!json_object_get_boolean(jpath(r, "result.causes_reload")));
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
	r = wait_done(tests);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
 * says nothing to "silent". */
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
	kill(pid, SIGSEGV);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "SIGSEGV"));
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
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
	int		 status, i;

	start_with("heavy", NULL);
	submit(running, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(running, "running");
	submit(q1, "[{\"tool\":\"run_tests\"}]", NULL);
	submit(q2, "[{\"tool\":\"refresh\"}]", NULL);
	client_close(c);
	c = NULL;
	kill(b.pid, SIGKILL);
	waitpid(b.pid, &status, 0);
	close(b.pidfd);
	b.pid = -1;
	b.pidfd = -1;
	ck_assert_int_eq(broker_start(&b, (const char *[]){ "--tools", tools,
	    "--kill-grace", "1", NULL }, 0), 0);
	c = client_tcp(b.port);
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
	r = wait_done(q1);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	r = wait_done(q2);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	submit(next, "[{\"tool\":\"echo\",\"params\":{\"text\":\"n\"}}]", NULL);
	ck_assert_str_eq(next, "t-000003");
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
	r = wait_done(q);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
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
	r = wait_done(t[4]);
	ck_assert_str_eq(str(r, "status"), "failed");
	json_object_put(r);
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
	suite_add_tcase(s, tc);
	return ck_run(s);
}
