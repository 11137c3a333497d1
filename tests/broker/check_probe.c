/* SPDX-License-Identifier: ISC */
/*
 * The editor probe in the broker (issue 12, item 4), and what a job's
 * worker is given for the upstream members (B12 section 2).  The broker
 * runs CMDGATE_WORKER, here a script: for a job it saves the spec and
 * execs the real worker; for the probe of an editor no link carries it
 * saves the spec and copies to its output the event lines the test
 * writes into a FIFO.  An editor a link carries is polled by the broker
 * itself (issue 33): no worker.
 */
#include "config.h"

#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"

/* A dialect no editor link carries: a worker polls (the script). */
#define EDITOR	"{\"to\":\"127.0.0.1:9\",\"dialect\":\"jsonrpc\"," \
		"\"call\":\"get_editor_state\",\"every_ms\":%d,\"flags\":" \
		"{\"compiling\":\"result.data.compilation.is_compiling\"," \
		"\"tests_running\":\"result.data.tests.is_running\"}}"
/* One the editor link carries: the broker polls, nothing listens. */
#define EDITOR_LINKED "{\"to\":\"127.0.0.1:1\",\"dialect\":\"unity-mcp\"," \
		"\"call\":\"get_editor_state\",\"every_ms\":%d,\"flags\":" \
		"{\"tests_running\":\"result.data.tests.is_running\"}}"
#define HELD	"{\"event\":\"editor\",\"reachable\":true,\"flags\":" \
		"{\"compiling\":false,\"tests_running\":true," \
		"\"editor_busy\":false}}"
#define FREE	"{\"event\":\"editor\",\"reachable\":true,\"flags\":" \
		"{\"compiling\":false,\"tests_running\":false," \
		"\"editor_busy\":false}}"
#define REFRESH	"[{\"tool\":\"refresh\"}]"

static int	probe_in = -1;	/* the probe's FIFO, held open both ways */
static const char *editor_fmt = EDITOR;

static const char script[] =
    "#!/bin/sh\n"
    "# check_probe's worker: a job's spec goes on to the real worker;\n"
    "# a probe's makes this the probe, its lines from a FIFO.\n"
    "d='%s'\n"
    "spec=$(cat <&3)\n"
    "case $spec in\n"
    "*'\"probe\":'*)\n"
    "\tprintf '%%s' \"$spec\" >$d/probe-spec.tmp\n"
    "\tmv $d/probe-spec.tmp $d/probe-spec\n"
    "\techo $$ >$d/probe.pid.tmp\n"
    "\t[ -e $d/stubborn ] && trap '' TERM\n"
    "\tmv $d/probe.pid.tmp $d/probe.pid\n"
    "\texec cat $d/probe-in ;;\n"
    "*)\n"
    "\tprintf '%%s' \"$spec\" >$d/job-spec.tmp\n"
    "\tmv $d/job-spec.tmp $d/job-spec\n"
    "\texec '%s' 3<$d/job-spec ;;\n"
    "esac\n";

/* The worker script, the FIFO, CMDGATE_WORKER pointing at the script. */
static void
probe_setup(void)
{
	static char	 text[2 * PATH_MAX + 1024];
	char		 real[PATH_MAX + 32], path[PATH_MAX];
	char		*cmdgated = getenv("CMDGATED");
	char		*top = getenv("CMDGATE_BUILDDIR");

	setup();
	ck_assert_ptr_nonnull(cmdgated);
	/* The built worker; $CMDGATED may be a wrapper elsewhere (make
	 * valgrind's tests/scripts/valgrind-cmdgated.sh). */
	snprintf(path, sizeof(path), "%s", cmdgated);
	*strrchr(path, '/') = '\0';
	if (top != NULL)
		snprintf(real, sizeof(real), "%s/workers/cmdgate-worker", top);
	else
		snprintf(real, sizeof(real), "%s/../workers/cmdgate-worker",
		    path);
	snprintf(text, sizeof(text), script, b.dir, real);
	snprintf(path, sizeof(path), "%s/worker.sh", b.dir);
	write_file(path, text, 0700);
	setenv("CMDGATE_WORKER", path, 1);
	snprintf(path, sizeof(path), "%s/probe-in", b.dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	/* Both ways: never blocks, and a restarted probe reads on. */
	probe_in = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(probe_in, 0);
}

static void
probe_teardown(void)
{
	teardown();
	unsetenv("CMDGATE_WORKER");
	if (probe_in != -1)
		close(probe_in);
	probe_in = -1;
}

/* The table: refresh (a reload), echo; editor (every_ms) when > 0. */
static void
write_table(int every_ms, const char *more)
{
	char	editor[512], json[4096];

	snprintf(editor, sizeof(editor), editor_fmt, every_ms);
	snprintf(json, sizeof(json), "{%s%s%s\"tools\":["
	    "{\"name\":\"refresh\",\"reload\":true,\"exec\":[\"true\"]},"
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"hi\"]}%s]}", every_ms > 0 ? "\"editor\":" : "",
	    every_ms > 0 ? editor : "", every_ms > 0 ? "," : "",
	    more != NULL ? more : "");
	write_file(tools, json, 0600);
}

static void
start(int every_ms, const char *more, const char **extra)
{
	write_table(every_ms, more);
	start_tools(extra);
}

static void
probe_say(const char *line)
{
	char	buf[1024];
	int	n = snprintf(buf, sizeof(buf), "%s\n", line);

	ck_assert_int_eq(write(probe_in, buf, (size_t)n), n);
}

/* The pid of the probe now running (waited for); its file removed. */
static pid_t
probe_pid(void)
{
	char	path[PATH_MAX], buf[32];
	int	fd;

	snprintf(path, sizeof(path), "%s/probe.pid", b.dir);
	ck_assert_msg(wait_for_file(path) == 0, "no probe started");
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fd_slurp(fd, buf, sizeof(buf));
	unlink(path);
	return (pid_t)atoi(buf);
}

/* A spec the script saved (probe-spec, job-spec); caller puts. */
static json_object *
saved_spec(const char *name)
{
	char		 path[PATH_MAX];
	json_object	*o;

	snprintf(path, sizeof(path), "%s/%s", b.dir, name);
	ck_assert_msg(wait_for_file(path) == 0, "no %s", name);
	o = json_object_from_file(path);
	ck_assert_ptr_nonnull(o);
	return o;
}

/* Wait (inotify, bounded) until the log has n lines holding needle. */
static void
await_log_n(const char *needle, int n)
{
	struct pollfd	pfd;
	char		buf[4096];
	int		fd;

	fd = inotify_init1(IN_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(inotify_add_watch(fd, b.log, IN_MODIFY), 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (broker_log_count(&b, needle) < n &&
	    poll(&pfd, 1, TN_TIMEOUT_MS) == 1)
		(void)!read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_msg(broker_log_count(&b, needle) >= n, "the log has not "
	    "%d lines with '%s'", n, needle);
}

static json_object *
queue_status(void)
{
	return callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"queue_status\"}");
}

/* The probe's flags hold a reload as a client's do, with blocked_by. */
START_TEST(flags_hold_reload)
{
	json_object	*r, *spec;
	char		 t[32], path[PATH_MAX], dir[PATH_MAX], buf[256];
	const char	*mw[] = { "--max-workers", "1", NULL };
	int		 fd;

	start(250, NULL, mw);
	(void)probe_pid();
	spec = saved_spec("probe-spec");
	ck_assert_int_eq(json_object_get_int(jpath(spec, "broker")), b.pid);
	ck_assert_ptr_nonnull(realpath(broker_path(&b, "state"), dir));
	ck_assert_str_eq(str(spec, "lock_dir"), dir);
	ck_assert_int_eq(json_object_get_int(jpath(spec, "probe.every_ms")),
	    250);
	ck_assert_str_eq(str(spec, "probe.call"), "get_editor_state");
	ck_assert_ptr_null(jpath(spec, "commands"));
	json_object_put(spec);
	probe_say(HELD);
	ck_assert_int_eq(broker_await_log(&b, "editor probe: the editor "
	    "answers"), 1);
	/* Not a job: --max-workers 1 still runs one. */
	submit(t, "[{\"tool\":\"echo\"}]", NULL);
	wait_end(t, "done");
	submit(t, REFRESH, NULL);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	r = queue_status();
	ck_assert(json_object_get_boolean(jpath(r, "result.editor.probe")));
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.editor.reachable")));
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.busy.tests_running")));
	ck_assert_ptr_nonnull(jpath(r, "result.editor.since"));
	ck_assert_ptr_null(jpath(r, "result.editor.error"));
	json_object_put(r);
	/* Kept for a restart as a client's flags are. */
	snprintf(path, sizeof(path), "%s", broker_path(&b,
	    "state/editor-flags"));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fd_slurp(fd, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"tests_running\":true"));
	probe_say(FREE);
	wait_end(t, "done");
}
END_TEST

/*
 * reachable: false keeps what the editor last said (issue 33: a test
 * run does not end because the editor stopped answering) and shows the
 * error; its next answer is news again.
 */
START_TEST(unreachable_keeps_last_known)
{
	json_object	*r;
	char		 t[32];

	start(1000, NULL, NULL);
	(void)probe_pid();
	probe_say(HELD);
	ck_assert_int_eq(broker_await_log(&b, "the editor answers"), 1);
	submit(t, REFRESH, NULL);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	probe_say("{\"event\":\"editor\",\"reachable\":false,\"error\":"
	    "\"127.0.0.1:9: connection refused\"}");
	ck_assert_int_eq(broker_await_log(&b, "editor probe: unreachable: "
	    "127.0.0.1:9: connection refused; what it last said stands"), 1);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"server_status\"}");
	ck_assert(json_object_get_boolean(jpath(r, "result.editor.probe")));
	ck_assert(!json_object_get_boolean(jpath(r,
	    "result.editor.reachable")));
	ck_assert_ptr_nonnull(jpath(r, "result.editor.reachable"));
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.editor_unreachable")));
	ck_assert_str_eq(str(r, "result.editor.error"),
	    "127.0.0.1:9: connection refused");
	json_object_put(r);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	probe_say(FREE);
	wait_end(t, "done");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"server_status\"}");
	ck_assert(!json_object_get_boolean(jpath(r,
	    "result.editor_unreachable")));
	json_object_put(r);
}
END_TEST

/*
 * asked: false (a job's exchange held the bridge's lock all the poll
 * long): nothing is known, so the flags and reachability stand.
 */
START_TEST(unasked_keeps_flags)
{
	json_object	*r;
	char		 t[32];

	start(1000, NULL, NULL);
	(void)probe_pid();
	probe_say(HELD);
	ck_assert_int_eq(broker_await_log(&b, "the editor answers"), 1);
	submit(t, REFRESH, NULL);
	probe_say("{\"event\":\"editor\",\"asked\":false,\"error\":"
	    "\"127.0.0.1:9: another exchange held its lock until the "
	    "deadline\"}");
	ck_assert_int_eq(broker_await_log(&b, "editor probe: could not ask "
	    "the editor (127.0.0.1:9: another exchange held its lock"), 1);
	r = queue_status();
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.busy.tests_running")));
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.editor.reachable")));
	ck_assert_ptr_nonnull(strstr(str(r, "result.editor.error"),
	    "held its lock"));
	json_object_put(r);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	/* Its next answer ends the error. */
	probe_say(FREE);
	wait_end(t, "done");
	r = queue_status();
	ck_assert_ptr_null(jpath(r, "result.editor.error"));
	json_object_put(r);
}
END_TEST

/* A probe that dies is restarted (1 s, then 2 s), logged once. */
START_TEST(dead_probe_restarts)
{
	json_object	*r;
	pid_t		 p1, p2, p3;
	char		 again[64];

	start(1000, NULL, NULL);
	p1 = probe_pid();
	probe_say(HELD);
	ck_assert_int_eq(broker_await_log(&b, "the editor answers"), 1);
	ck_assert_int_eq(kill(p1, SIGKILL), 0);
	ck_assert_int_eq(broker_await_log(&b, "killed by signal 9; "
	    "restarting it in 1000 ms"), 1);
	/* The probe died, not the editor's test run: it stands. */
	r = queue_status();
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.busy.tests_running")));
	ck_assert_ptr_null(jpath(r, "result.editor.reachable"));
	ck_assert_ptr_nonnull(strstr(str(r, "result.editor.error"),
	    "killed by signal 9"));
	json_object_put(r);
	p2 = probe_pid();
	ck_assert_int_ne(p1, p2);
	ck_assert_int_eq(kill(p2, SIGKILL), 0);
	p3 = probe_pid();	/* after 2 s */
	ck_assert_int_ne(p2, p3);
	ck_assert_int_eq(broker_log_count(&b, "restarting it in"), 1);
	probe_say(FREE);
	snprintf(again, sizeof(again), "worker %d reports again", (int)p3);
	ck_assert_int_eq(broker_await_log(&b, again), 1);
	r = queue_status();
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.editor.reachable")));
	json_object_put(r);
}
END_TEST

/* SIGHUP with a changed editor replaces the probe; without, stops it. */
START_TEST(sighup_restarts_probe)
{
	json_object	*r, *spec;
	pid_t		 p1, p2;

	start(1000, NULL, NULL);
	p1 = probe_pid();
	write_table(1000, ",{\"name\":\"x\",\"exec\":[\"true\"]}");
	kill(b.pid, SIGHUP);
	ck_assert_int_eq(broker_await_log(&b, "loaded (3 tools)"), 1);
	ck_assert_int_eq(broker_log_count(&b, "editor changed"), 0);
	write_table(2000, NULL);
	kill(b.pid, SIGHUP);
	ck_assert_int_eq(broker_await_log(&b, "editor changed: stopping "
	    "worker"), 1);
	p2 = probe_pid();
	ck_assert_int_ne(p1, p2);
	ck_assert_int_eq(kill(p1, 0), -1);
	spec = saved_spec("probe-spec");
	ck_assert_int_eq(json_object_get_int(jpath(spec, "probe.every_ms")),
	    2000);
	json_object_put(spec);
	write_table(0, NULL);
	kill(b.pid, SIGHUP);
	await_log_n("editor changed: stopping worker", 2);
	r = queue_status();
	ck_assert(!json_object_get_boolean(jpath(r, "result.editor.probe")));
	ck_assert_ptr_null(jpath(r, "result.editor.reachable"));
	json_object_put(r);
}
END_TEST

/* The broker stops its probe before it exits, SIGKILL if need be. */
START_TEST(stopped_at_shutdown)
{
	char	path[PATH_MAX];
	pid_t	p;

	snprintf(path, sizeof(path), "%s/stubborn", b.dir);
	if (_i == 1)
		write_file(path, "", 0600);
	start(1000, NULL, NULL);
	p = probe_pid();
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(kill(p, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_int_eq(broker_log_count(&b, "editor probe: worker"), 1 + _i);
	ck_assert_int_eq(broker_log_count(&b, "still alive after "
	    "--kill-grace: SIGKILL"), _i);
}
END_TEST

#define FWD_TOOLS ",{\"name\":\"run_tests\",\"params\":{\"type\":\"object\"," \
	"\"properties\":{\"mode\":{\"type\":\"string\",\"default\":" \
	"\"EditMode\"},\"n\":{\"type\":\"integer\"}}},\"forward\":" \
	"{\"to\":\"127.0.0.1:1\",\"dialect\":\"unity-mcp\"," \
	"\"connect_timeout_s\":1,\"params\":" \
	"{\"mode\":\"{mode}\",\"label\":\"n={n}\"},\"await\":{\"call\":" \
	"\"get_test_job\",\"params\":{\"job_id\":\"{result.data.job_id}\"}," \
	"\"until\":{\"field\":\"result.data.status\",\"in\":[\"done\"]}}}}," \
	"{\"name\":\"compile\",\"reload\":true,\"forward\":\"127.0.0.1:1\"}"

/* The spec: lock_dir, the filled-in forward, reload. */
START_TEST(job_spec_forward)
{
	json_object	*spec, *f;
	char		 t[32], dir[PATH_MAX];

	start(0, FWD_TOOLS, NULL);
	submit(t, "[{\"tool\":\"run_tests\",\"params\":{\"n\":2}}]", NULL);
	spec = saved_spec("job-spec");
	ck_assert_ptr_nonnull(realpath(broker_path(&b, "state"), dir));
	ck_assert_str_eq(str(spec, "lock_dir"), dir);
	f = jpath(spec, "commands.0.forward");
	ck_assert_str_eq(json_object_to_json_string_ext(f,
	    JSON_C_TO_STRING_PLAIN), "{\"to\":\"127.0.0.1:1\",\"dialect\":"
	    "\"unity-mcp\",\"method\":\"run_tests\",\"params\":{\"mode\":"
	    "\"EditMode\",\"label\":\"n=2\"},\"connect_timeout_s\":1,"
	    "\"await\":{\"call\":\"get_test_job\",\"params\":{\"job_id\":"
	    "\"{result.data.job_id}\"},\"until\":{\"field\":"
	    "\"result.data.status\",\"in\":[\"done\"]}}}");
	ck_assert_str_eq(str(spec, "commands.0.params.n"), "2");
	ck_assert(!json_object_get_boolean(jpath(spec, "commands.0.reload")));
	ck_assert_ptr_nonnull(jpath(spec, "commands.0.reload"));
	json_object_put(spec);
	json_object_put(wait_done(t));
	unlink(broker_path(&b, "job-spec"));
	submit(t, "[{\"tool\":\"compile\"}]", NULL);
	spec = saved_spec("job-spec");
	ck_assert_str_eq(str(spec, "commands.0.forward"), "127.0.0.1:1");
	ck_assert(json_object_get_boolean(jpath(spec, "commands.0.reload")));
	json_object_put(spec);
	json_object_put(wait_done(t));
}
END_TEST

/* A template path without a value is refused at submit, named. */
START_TEST(template_error_at_submit)
{
	json_object	*r;

	start(0, FWD_TOOLS, NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"run_tests\"}]}}");
	ck_assert_ptr_nonnull(strstr(str(r, "error.data.reason"),
	    "commands[0] (run_tests): forward.params: {n}: no such value"));
	ck_assert_str_eq(str(r, "error.data.command"), "run_tests");
	assert_error(r, -32602, "invalid_params");
}
END_TEST

/*
 * An editor whose bridge an editor link carries (unity-mcp) is polled by
 * the broker itself over that link: no probe worker starts; what the
 * polls say is the probe's as the worker's lines are (nothing listens:
 * unreachable).
 */
START_TEST(linked_probe_in_broker)
{
	json_object	*r;
	char		 path[PATH_MAX];

	editor_fmt = EDITOR_LINKED;
	start(100, NULL, NULL);
	ck_assert_int_eq(broker_await_log(&b, "editor probe: polls "
	    "127.0.0.1:1 over its editor link"), 1);
	ck_assert_int_eq(broker_await_log(&b, "editor probe: unreachable: "
	    "127.0.0.1:1"), 1);
	r = queue_status();
	ck_assert(json_object_get_boolean(jpath(r, "result.editor.probe")));
	ck_assert(!json_object_get_boolean(jpath(r,
	    "result.editor.reachable")));
	ck_assert_ptr_nonnull(jpath(r, "result.editor.reachable"));
	ck_assert_ptr_nonnull(strstr(str(r, "result.editor.error"),
	    "127.0.0.1:1"));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"server_status\"}");
	ck_assert_int_eq(json_object_array_length(jpath(r,
	    "result.editor_links")), 1);
	json_object_put(r);
	snprintf(path, sizeof(path), "%s/probe-spec", b.dir);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

static Suite *
probe_suite(void)
{
	Suite	*s = suite_create("probe");
	TCase	*tc = tcase_create("probe");

	tcase_add_checked_fixture(tc, probe_setup, probe_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, flags_hold_reload);
	tcase_add_test(tc, unreachable_keeps_last_known);
	tcase_add_test(tc, unasked_keeps_flags);
	tcase_add_test(tc, dead_probe_restarts);
	tcase_add_test(tc, sighup_restarts_probe);
	tcase_add_loop_test(tc, stopped_at_shutdown, 0, 2);
	tcase_add_test(tc, job_spec_forward);
	tcase_add_test(tc, template_error_at_submit);
	tcase_add_test(tc, linked_probe_in_broker);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(probe_suite());
}
