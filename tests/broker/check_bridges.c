/* SPDX-License-Identifier: ISC */
/*
 * Editor bridges (issue 12): the fake bridges (fake_unity, fake_uloop)
 * on their own wire first, then the shipped tables (etc/tools/
 * unity-mcp.json, uloop.json, mcp-http.json) end to end through a real
 * cmdgated against the fakes and the real server-everything.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "fakeutil.h"
#include "jobsutil.h"
#include "jstrict.h"
#include "testnet.h"

static struct fake	 fk;
static pid_t		 node = -1;	/* server-everything */

static void
fk_setup(void)
{
	setup();
	fk.pid = -1;
}

static void
fk_teardown(void)
{
	if (node > 0) {
		kill(node, SIGTERM);
		waitpid(node, NULL, 0);
		node = -1;
	}
	fake_stop(&fk);
	teardown();
}

static int
connect_refused(int port)
{
	int	fd = broker_dial(port);

	if (fd != -1)
		close(fd);
	return fd == -1 && errno == ECONNREFUSED;
}

/* Submit on client who (c stays as it was). */
static void
submit_as(struct client *who, char ticket[32], const char *commands)
{
	struct client	*was = c;

	c = who;
	submit(ticket, commands, NULL);
	c = was;
}

/* poll_job's result on client who: status and blocked_by checked. */
static void
assert_job(struct client *who, const char *ticket, const char *status,
    const char *blocked_by)
{
	struct client	*was = c;
	json_object	*r;

	c = who;
	r = poll_job(ticket);
	c = was;
	ck_assert_msg(strcmp(str(r, "result.status"), status) == 0,
	    "%s is %s, not %s: %.400s", ticket, str(r, "result.status"),
	    status, json_object_to_json_string(r));
	if (blocked_by != NULL)
		ck_assert_str_eq(str(r, "result.blocked_by"), blocked_by);
	json_object_put(r);
}

/* The fake unity-mcp bridge speaks its wire (BRIDGES.md). */
START_TEST(fake_unity_wire)
{
	struct client	*u, *v;
	json_object	*r;
	char		 job[32];

	fake_start(&fk, "FAKE_UNITY", "-s", b.dir, NULL);
	u = unity_open(fk.port);
	r = unity_call(u, "ping");
	ck_assert_str_eq(jstrict_to_string(r),
	    "{\"status\":\"success\",\"result\":{\"message\":\"pong\"}}");
	json_object_put(r);
	r = unity_call(u, "{\"type\":\"run_tests\",\"params\":"
	    "{\"mode\":\"EditMode\"}}");
	ck_assert_str_eq(str(r, "status"), "success");
	ck_assert_str_eq(str(r, "result.data.status"), "running");
	snprintf(job, sizeof(job), "%s", str(r, "result.data.job_id"));
	json_object_put(r);
	/* A second run while one is active: busy, as the tool's failure. */
	r = unity_call(u, "{\"type\":\"run_tests\",\"params\":{}}");
	ck_assert_str_eq(str(r, "status"), "success");
	ck_assert(!json_object_get_boolean(jpath(r, "result.success")));
	ck_assert_str_eq(str(r, "result.data.reason"), "tests_running");
	json_object_put(r);
	r = unity_call(u, "{\"type\":\"get_editor_state\",\"params\":{}}");
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.data.tests.is_running")));
	ck_assert(!json_object_get_boolean(jpath(r,
	    "result.data.compilation.is_compiling")));
	json_object_put(r);
	fake_ctl(&fk, "end-tests succeeded");
	r = unity_call(u, "{\"type\":\"get_test_job\",\"params\":{\"job_id\":"
	    "\"job-1\"}}");
	ck_assert_str_eq(str(r, "result.data.status"), "succeeded");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.data.result.summary.passed")), 3);
	json_object_put(r);
	r = unity_call(u, "{\"type\":\"no_such_command\",\"params\":{}}");
	ck_assert_str_eq(str(r, "status"), "error");
	json_object_put(r);
	/* One client at a time: a new connection closes the old one. */
	v = unity_open(fk.port);
	ck_assert(client_eof(u));
	client_close(u);
	fake_await(&fk, "cut 1");
	r = unity_call(v, "{\"type\":\"refresh_unity\",\"params\":"
	    "{\"compile\":\"request\"}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.success")));
	json_object_put(r);
	fake_await(&fk, "reload start");
	ck_assert(client_eof(v));
	client_close(v);
	ck_assert(connect_refused(fk.port));
	fake_ctl(&fk, "reload-done");
	v = unity_open(fk.port);
	client_close(v);
	ck_assert_int_eq(fake_count(&fk, "recv run_tests "), 2);
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv ping"), 1);
	ck_assert_ptr_nonnull(strstr(job, "job-"));
}
END_TEST

/* The JSON in file path (caller puts). */
static json_object *
read_json(const char *path)
{
	char		 buf[4096];
	json_object	*o;
	int		 fd = open(path, O_RDONLY);

	ck_assert_msg(fd != -1, "%s: %s", path, strerror(errno));
	fd_slurp(fd, buf, sizeof(buf));
	ck_assert_msg(jstrict_parse_str(buf, &o) == 0, "%s: %s", path, buf);
	return o;
}

/*
 * The fake's status file: named by the Assets path's SHA-1 as the real
 * one, "reloading" while it reloads (issue 17 reads it).
 */
START_TEST(fake_unity_status_file)
{
	char		 path[512];
	json_object	*o;

	fake_start(&fk, "FAKE_UNITY", "-s", b.dir, "-P", "/p", NULL);
	/* SHA-1("/p/Assets") begins 7ea39498 (sha1sum). */
	snprintf(path, sizeof(path), "%s/unity-mcp-status-%s.json", b.dir,
	    "7ea39498");
	o = read_json(path);
	ck_assert_int_eq(json_object_get_int(jpath(o, "unity_port")), fk.port);
	ck_assert(!json_object_get_boolean(jpath(o, "reloading")));
	ck_assert_str_eq(str(o, "project_path"), "/p/Assets");
	ck_assert_str_eq(str(o, "reason"), "ready");
	json_object_put(o);
	fake_ctl(&fk, "reload");
	o = read_json(path);
	ck_assert(json_object_get_boolean(jpath(o, "reloading")));
	json_object_put(o);
	fake_ctl(&fk, "reload-done");
	o = read_json(path);
	ck_assert(!json_object_get_boolean(jpath(o, "reloading")));
	json_object_put(o);
}
END_TEST

/* The fake uLoopMCP bridge, newline (0) and Content-Length (1) framing. */
START_TEST(fake_uloop_wire)
{
	struct client	*u;
	json_object	*r;
	json_object	*(*call)(struct client *, const char *);

	if (_i == 0) {
		fake_start(&fk, "FAKE_ULOOP", NULL);
		call = client_call;
	} else {
		fake_start(&fk, "FAKE_ULOOP", "-l", NULL);
		call = lsp_call;
	}
	u = client_tcp(fk.port);
	r = call(u, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set-client-name\",\"params\":{\"ClientName\":\"cmdgate\"}}");
	ck_assert_ptr_nonnull(jpath(r, "result.Ver"));
	json_object_put(r);
	r = call(u, "{\"jsonrpc\":\"2.0\",\"id\":\"ts_1\",\"method\":\"ping\","
	    "\"params\":{\"Message\":\"hi\"}}");
	ck_assert_str_eq(str(r, "id"), "ts_1");
	ck_assert_str_eq(str(r, "result.Message"), "hi");
	json_object_put(r);
	r = call(u, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32601);
	json_object_put(r);
	/* compile answers once the control channel ends it. */
	client_send(u, _i == 0 ? "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"compile\",\"params\":{}}\n" : "Content-Length: 55\r\n\r\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"compile\",\"params\":{}}");
	fake_await(&fk, "recv compile ");
	fake_ctl(&fk, "end-compile");
	r = call(u, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"get-logs\","
	    "\"params\":{}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 3);
	ck_assert(json_object_get_boolean(jpath(r, "result.Success")));
	json_object_put(r);
	client_close(u);
	ck_assert_int_eq(fake_count(&fk, "recv compile "), 1);
}
END_TEST

/*
 * Issue 12's scenario through etc/tools/unity-mcp.json: agent A's tests
 * run upstream asynchronously; agent B's compile is held by them; the
 * run ends; the compile runs and the editor reloads (-n: its connection
 * drops unanswered, connects are refused); both jobs end done and the
 * editor received each command once.
 */
START_TEST(unity_scenario)
{
	struct client	*cb;
	char		 ta[32], tb[32];
	json_object	*r;

	fake_start(&fk, "FAKE_UNITY", "-n", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(NULL);
	cb = client_tcp(b.port);
	submit(ta, "[{\"tool\":\"run_tests\",\"params\":{\"mode\":"
	    "\"EditMode\"}}]", NULL);
	fake_await(&fk, "recv run_tests ");
	fake_await(&fk, "recv get_test_job ");
	assert_job(c, ta, "running", NULL);
	submit_as(cb, tb, "[{\"tool\":\"refresh_unity\",\"params\":"
	    "{\"compile\":\"request\"}}]");
	assert_job(cb, tb, "queued", "tests_running");
	fake_ctl(&fk, "end-tests succeeded");
	r = wait_done(ta);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.result.data.status"), "succeeded");
	ck_assert_int_ge(json_object_get_int(jpath(r, "results.0.polls")), 1);
	json_object_put(r);
	fake_await(&fk, "recv refresh_unity ");
	fake_await(&fk, "reload start");
	/* The compile's job waits for the editor to come back. */
	assert_job(cb, tb, "running", NULL);
	fake_ctl(&fk, "reload-done");
	r = wait_done(tb);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.reloaded")));
	ck_assert(json_object_get_boolean(jpath(r, "results.0.sent")));
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run_tests "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	/* The workers and the probe took turns: none cut another off. */
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
	client_close(cb);
}
END_TEST

/* Whether queue_status says tests_running holds reloads. */
static int
tests_held(void)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
			    "\"queue_status\"}");
	int		 held = json_object_get_boolean(jpath(r,
			    "result.busy.tests_running"));

	json_object_put(r);
	return held;
}

/*
 * A test run started in the editor's UI, seen by the probe; a compile
 * submitted then is held by it (its ticket in t).
 */
static void
probe_holds_compile(char t[32])
{
	int	i;

	fake_ctl(&fk, "start-tests-ui");
	/* Each probe poll after the run began, until the broker saw it. */
	for (i = 0; i < 5 && !tests_held(); i++)
		fake_await(&fk, "recv get_editor_state ");
	ck_assert_msg(tests_held(), "the probe's tests_running never held");
	submit(t, "[{\"tool\":\"refresh_unity\",\"params\":"
	    "{\"compile\":\"request\"}}]", NULL);
	assert_job(c, t, "queued", "tests_running");
}

/*
 * A run started in the editor's own UI, seen by the table's editor
 * probe (get_editor_state), holds a reload job the same way; the reload
 * runs once the run ends, and holds across the editor's reload.
 */
START_TEST(unity_probe_holds_reload)
{
	char		 t[32], r[32];
	json_object	*o;

	fake_start(&fk, "FAKE_UNITY", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(NULL);
	fake_await(&fk, "recv get_editor_state ");
	ck_assert(!tests_held());
	probe_holds_compile(t);
	fake_ctl(&fk, "end-tests succeeded");
	/*
	 * The bridge answers the compile, then reloads: the job (so the
	 * guard) holds until the editor is back and idle; a read sent now
	 * waits for the editor too (connects refused meanwhile).
	 */
	fake_await(&fk, "recv refresh_unity ");
	fake_await(&fk, "reload start");
	assert_job(c, t, "running", NULL);
	submit(r, "[{\"tool\":\"get_project_info\"}]", NULL);
	fake_ctl(&fk, "reload-done");
	wait_end(r, "done");
	o = wait_done(t);
	ck_assert_msg(strcmp(str(o, "status"), "done") == 0, "%.800s",
	    json_object_to_json_string(o));
	ck_assert_str_eq(str(o, "results.0.result.data.activity.phase"),
	    "idle");
	json_object_put(o);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv get_project_info "), 1);
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
}
END_TEST

/*
 * Issue 31.3: a job's read that holds the bridge's lock past the probe's
 * deadline (a slow answer while the editor's main thread runs tests)
 * leaves the probe unable to ask, which is no news: tests_running stays
 * up, the held compile stays held, and the editor counts as reachable.
 */
START_TEST(unity_probe_locked_out_keeps_flags)
{
	char		 t[32], rd[32];
	json_object	*o;

	fake_start(&fk, "FAKE_UNITY", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(NULL);
	probe_holds_compile(t);
	fake_ctl(&fk, "stall read_console");
	submit(rd, "[{\"tool\":\"read_console\",\"params\":{}}]", NULL);
	fake_await(&fk, "stalled read_console");
	/* The probe's call behind it ends (5 s), whatever it says. */
	ck_assert_int_eq(broker_await_log(&b, "an earlier call was not "
	    "answered"), 1);
	ck_assert(tests_held());
	ck_assert_int_eq(broker_log_count(&b, "editor probe: could not ask "
	    "the editor"), 1);
	assert_job(c, t, "queued", "tests_running");
	o = callf("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	    "\"queue_status\"}");
	ck_assert(json_object_get_boolean(jpath(o, "result.editor.reachable")));
	ck_assert_ptr_nonnull(strstr(str(o, "result.editor.error"),
	    "earlier call"));
	json_object_put(o);
	ck_assert_int_eq(broker_log_count(&b, "editor probe: unreachable"), 0);
	/* The read answers; the probe asks again and the run goes on. */
	fake_ctl(&fk, "unstall");
	wait_end(rd, "done");
	fake_await(&fk, "recv get_editor_state ");
	ck_assert(tests_held());
	fake_ctl(&fk, "end-tests succeeded");
	fake_await(&fk, "recv refresh_unity ");
	fake_await(&fk, "reload start");
	fake_ctl(&fk, "reload-done");
	wait_end(t, "done");
}
END_TEST

/*
 * Issue 33: the broker polls the editor over its link; a bridge that
 * goes away (the editor quit, or hangs in a reload) makes it unreachable,
 * which keeps what it last said: tests_running still holds the compile,
 * and the status says the editor is unreachable.
 */
START_TEST(unity_probe_unreachable_keeps_flags)
{
	char		 t[32];
	json_object	*o;

	fake_start(&fk, "FAKE_UNITY", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(NULL);
	ck_assert_int_eq(broker_await_log(&b, "editor probe: polls "
	    "127.0.0.1:"), 1);
	probe_holds_compile(t);
	fake_stop(&fk);
	ck_assert_int_eq(broker_await_log(&b, "editor probe: unreachable"),
	    1);
	ck_assert(tests_held());
	assert_job(c, t, "queued", "tests_running");
	o = callf("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	    "\"server_status\"}");
	ck_assert(json_object_get_boolean(jpath(o,
	    "result.editor_unreachable")));
	ck_assert(!json_object_get_boolean(jpath(o,
	    "result.editor.reachable")));
	json_object_put(o);
}
END_TEST

/* tools/call name with arguments, sent on who without reading. */
static void
mcp_send(struct client *who, const char *name, const char *args)
{
	char	line[1024];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
	    "\"arguments\":%s}}\n", name, args);
	client_send(who, line);
}

/* The answer to mcp_send: its job (structuredContent; caller puts). */
static json_object *
mcp_job(struct client *who)
{
	char		*line = client_line(who);
	json_object	*r, *job;

	ck_assert_msg(line != NULL, "no tools/call answer");
	ck_assert_int_eq(jstrict_parse_str(line, &r), 0);
	free(line);
	job = json_object_get(jpath(r, "result.structuredContent"));
	ck_assert_msg(job != NULL, "%.400s", json_object_to_json_string(r));
	json_object_put(r);
	return job;
}

/* MCP wait_job on who until ticket ends (bounded): the job (caller puts). */
static json_object *
mcp_wait(struct client *who, const char *ticket)
{
	char		 args[128];
	json_object	*job = NULL;
	int		 i;

	snprintf(args, sizeof(args), "{\"ticket\":\"%s\",\"timeout_s\":5}",
	    ticket);
	for (i = 0; i < 20; i++) {
		json_object_put(job);
		mcp_send(who, "wait_job", args);
		job = mcp_job(who);
		if (strcmp(str(job, "status"), "running") != 0 &&
		    strcmp(str(job, "status"), "queued") != 0)
			return job;
	}
	ck_abort_msg("%s never ended", ticket);
	return NULL;
}

/* The same scenario through MCP tools/call (--call-timeout 1). */
START_TEST(unity_scenario_mcp)
{
	const char	*args[] = { "--call-timeout", "1", NULL };
	struct client	*cb;
	char		 ta[32], tb[32];
	json_object	*job;

	fake_start(&fk, "FAKE_UNITY", "-n", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(args);
	cb = client_tcp(b.port);
	/* A's tests: after a second the answer is the job, running. */
	mcp_send(c, "run_tests", "{\"mode\":\"PlayMode\"}");
	fake_await(&fk, "recv run_tests ");
	job = mcp_job(c);
	ck_assert_str_eq(str(job, "status"), "running");
	snprintf(ta, sizeof(ta), "%s", str(job, "ticket"));
	json_object_put(job);
	/* B's compile: held by A's tests. */
	mcp_send(cb, "refresh_unity", "{\"compile\":\"request\"}");
	job = mcp_job(cb);
	ck_assert_str_eq(str(job, "status"), "queued");
	ck_assert_str_eq(str(job, "blocked_by"), "tests_running");
	snprintf(tb, sizeof(tb), "%s", str(job, "ticket"));
	json_object_put(job);
	fake_ctl(&fk, "end-tests failed");
	job = mcp_wait(c, ta);
	ck_assert_str_eq(str(job, "status"), "failed");
	ck_assert_str_eq(str(job, "results.0.result.data.status"), "failed");
	json_object_put(job);
	fake_await(&fk, "reload start");
	fake_ctl(&fk, "reload-done");
	job = mcp_wait(cb, tb);
	ck_assert_str_eq(str(job, "status"), "done");
	json_object_put(job);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run_tests "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv refresh_unity "), 1);
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
	client_close(cb);
}
END_TEST

/*
 * A forwarded screenshot (etc/tools/unity-mcp.json's manage_camera, its
 * "image") reaches an MCP client as an image, the rest of the editor's
 * answer as text without the picture's base64; one without includeImage
 * is text alone.
 */
START_TEST(unity_screenshot_image)
{
	char		*line;
	json_object	*r;

	fake_start(&fk, "FAKE_UNITY", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	start_tools(NULL);
	mcp_send(c, "manage_camera", "{\"action\":\"screenshot\","
	    "\"includeImage\":true}");
	ck_assert_ptr_nonnull(line = client_line(c));
	ck_assert_int_eq(jstrict_parse_str(line, &r), 0);
	free(line);
	ck_assert_str_eq(str(r, "result.content.1.type"), "image");
	ck_assert_str_eq(str(r, "result.content.1.mimeType"), "image/png");
	ck_assert_ptr_nonnull(strstr(str(r, "result.content.1.data"),
	    "iVBORw0KGgo"));
	ck_assert_ptr_nonnull(strstr(str(r, "result.content.0.text"),
	    "Screenshots/shot.png"));
	ck_assert_ptr_null(strstr(str(r, "result.content.0.text"),
	    "imageBase64"));
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	mcp_send(c, "manage_camera", "{\"action\":\"screenshot\"}");
	ck_assert_ptr_nonnull(line = client_line(c));
	ck_assert_int_eq(jstrict_parse_str(line, &r), 0);
	free(line);
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.content")),
	    1);
	ck_assert_ptr_nonnull(strstr(str(r, "result.content.0.text"),
	    "\"isAsync\":true"));
	json_object_put(r);
}
END_TEST

/* cmdgate with args to its exit status want: its output (caller puts). */
static json_object *
cli(int want, const char *a1, const char *a2, const char *a3)
{
	int	out;
	pid_t	pid = cli_spawn(b.port, &out, a1, a2, a3, NULL);

	return cli_end(pid, out, want);
}

/*
 * etc/tools/uloop.json against the uLoopMCP fake through cmdgate submit,
 * with Content-Length framing (as shipped) and with newline framing
 * (dialect jsonrpc, uLoopMCP up to 0.26): A's run-tests holds B's
 * compile; the compile answers and the editor reloads (-c); a read
 * after it goes through once the editor is back.
 */
START_TEST(uloop_submit)
{
	char		 tb[32];
	json_object	*r;
	pid_t		 pa;
	int		 outa;

	fake_start(&fk, "FAKE_ULOOP", "-c", _i == 0 ? "-l" : NULL, NULL);
	table_for(tools, "uloop.json", fk.port, _i == 0 ? NULL : "\"jsonrpc-lsp\"",
	    "\"jsonrpc\"");
	start_tools(NULL);
	pa = cli_spawn(b.port, &outa, "submit", "run-tests", "--agent", "A",
	    "TestMode=EditMode", NULL);
	fake_await(&fk, "recv run-tests ");
	r = cli(0, "submit", "compile", "--async");
	snprintf(tb, sizeof(tb), "%s", str(r, "ticket"));
	json_object_put(r);
	/* 3: still queued (cmdgate(1)). */
	r = cli(3, "poll", tb, NULL);
	ck_assert_str_eq(str(r, "status"), "queued");
	ck_assert_str_eq(str(r, "blocked_by"), "tests_running");
	json_object_put(r);
	fake_ctl(&fk, "end-tests succeeded");
	r = cli_end(pa, outa, 0);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "results.0.result.PassedCount")), 3);
	json_object_put(r);
	fake_await(&fk, "recv compile ");
	fake_ctl(&fk, "end-compile");
	fake_await(&fk, "reload start");
	r = cli(0, "wait", tb, NULL);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.result.Success")));
	json_object_put(r);
	pa = cli_spawn(b.port, &outa, "submit", "get-logs", NULL);
	fake_ctl(&fk, "reload-done");
	r = cli_end(pa, outa, 0);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv run-tests "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv compile "), 1);
	ck_assert_int_eq(fake_count(&fk, "recv get-logs "), 1);
}
END_TEST

/* server-everything's entry under dir or a directory above, in path. */
static int
everything_find(char *path, size_t len)
{
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 dir[1024], *slash;

	if (realpath(src != NULL ? src : ".", dir) == NULL)
		return -1;
	for (;;) {
		snprintf(path, len, "%s/node_modules/@modelcontextprotocol/"
		    "server-everything/dist/index.js", dir);
		if (access(path, R_OK) == 0)
			return 0;
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			return -1;
		*slash = '\0';
	}
}

/*
 * Start server-everything (streamableHttp) on a free loopback port, as
 * tests/mcp-http.sh does (tests/loopback.mjs says the port on fd 3): the
 * port, or 0 when node or the package is missing.
 */
static int
everything_start(void)
{
	const char	*src = getenv("CMDGATE_SRCDIR");
	char		 ev[1200], pre[1100], *line = NULL;
	struct jsonl	 jl;
	int		 sp[2], port = 0;

	if (everything_find(ev, sizeof(ev)) == -1 ||
	    system("node --version >/dev/null 2>&1") != 0)
		return 0;
	snprintf(pre, sizeof(pre), "%s/tests/scripts/loopback.mjs", src ? src : ".");
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	if ((node = fork()) == 0) {
		dup2(sp[1], 3);
		dup2(open("/dev/null", O_WRONLY), 1);
		dup2(1, 2);
		setenv("PORT", "0", 1);
		setenv("LISTENING_FD", "3", 1);
		execlp("node", "node", "--import", pre, ev, "streamableHttp",
		    (char *)NULL);
		_exit(127);
	}
	close(sp[1]);
	jsonl_init(&jl, sp[0], 256);
	if (jsonl_line(&jl, TN_TIMEOUT_MS, &line, NULL) == JSONL_MSG &&
	    strncmp(line, "LISTENING ", 10) == 0)
		port = atoi(line + 10);
	free(line);
	jsonl_free(&jl);
	close(sp[0]);
	ck_assert_msg(port > 0, "server-everything did not start");
	return port;
}

/*
 * etc/tools/mcp-http.json against the real server-everything: echo, and
 * sum (get-sum under another name); skipped, saying so, without node or
 * the package (npm install, package.json).
 */
START_TEST(mcp_http_table)
{
	char		 addr[64];
	int		 port = everything_start();
	json_object	*r;

	if (port == 0) {
		fprintf(stderr, "mcp_http_table: skipped: node or "
		    "@modelcontextprotocol/server-everything missing "
		    "(npm install)\n");
		return;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	table_for(tools, "mcp-http.json", 0, "127.0.0.1:3001", addr);
	start_tools(NULL);
	r = h3_run("[{\"tool\":\"echo\",\"params\":{\"message\":\"hi\"}},"
	    "{\"tool\":\"sum\",\"params\":{\"a\":2,\"b\":3}}]");
	ck_assert_msg(strcmp(str(r, "status"), "done") == 0, "%.600s",
	    json_object_to_json_string(r));
	ck_assert_str_eq(str(r, "results.0.result.content.0.text"), "Echo: hi");
	ck_assert_ptr_nonnull(strstr(str(r, "results.1.result.content.0.text"),
	    "5"));
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("bridges");
	TCase	*tc = tcase_create("fakes");

	tcase_add_checked_fixture(tc, fk_setup, fk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fake_unity_wire);
	tcase_add_test(tc, fake_unity_status_file);
	tcase_add_loop_test(tc, fake_uloop_wire, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("unity-mcp");
	tcase_add_checked_fixture(tc, fk_setup, fk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unity_scenario);
	tcase_add_test(tc, unity_probe_holds_reload);
	tcase_add_test(tc, unity_probe_locked_out_keeps_flags);
	tcase_add_test(tc, unity_probe_unreachable_keeps_flags);
	tcase_add_test(tc, unity_scenario_mcp);
	tcase_add_test(tc, unity_screenshot_image);
	suite_add_tcase(s, tc);
	tc = tcase_create("uloop");
	tcase_add_checked_fixture(tc, fk_setup, fk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, uloop_submit, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("mcp-http");
	tcase_add_checked_fixture(tc, fk_setup, fk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mcp_http_table);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
