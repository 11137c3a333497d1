/* SPDX-License-Identifier: ISC */
/*
 * The worker's forward dialects, run directly (a spec on fd 3, events on
 * fd 1) against tiny loopback fakes: unity-mcp's WELCOME and frames,
 * jsonrpc-lsp's headers, connect retries, at-most-once, reload
 * readiness, await, cancel, and many-client upstreams side by side.
 * Run so, the worker has no editor link (no "link" in its spec): it
 * connects for each exchange itself; through the broker, its unity-mcp
 * exchanges go over the link (tests/broker/check_link.c).
 */
#include "config.h"

#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "../fakes/fakeup.h"
#include "ckrun.h"
#include "jsonl.h"
#include "jtemplate.h"

#define WELCOME	"WELCOME UNITY-MCP 1 FRAMING=1\n"
#define PONG	"{\"status\":\"success\",\"result\":{\"message\":\"pong\"}}"

/* The answer to a request other than a poll, a cancel or a ping. */
static void
serve_answer(int fd, json_object *m, const char *type)
{
	char	ans[256];

	snprintf(ans, sizeof(ans), "%s", strcmp(type, "run_tests") == 0 ?
	    "{\"status\":\"success\",\"result\":{\"data\":{\"job_id\":"
	    "\"j1\"}}}" : strcmp(type, "fail") == 0 ? "{\"status\":"
	    "\"success\",\"result\":{\"success\":false}}" :
	    strcmp(type, "bad") == 0 ? "{\"status\":\"error\",\"error\":"
	    "\"no scene\"}" : "{\"status\":\"success\",\"result\":"
	    "{\"v\":42}}");
	if (strcmp(type, "echo") == 0)
		snprintf(ans, sizeof(ans), "{\"status\":\"success\","
		    "\"result\":%s}", json_object_to_json_string_ext(
		    jpath_get(m, "params"), JSON_C_TO_STRING_PLAIN));
	frame_write(fd, ans);
}

/* "zero": a frame of length 0; "huge": a length of 1 TiB.  1 if sent. */
static int
serve_bad_frame(int fd, const char *type)
{
	static const unsigned char	zero[8], huge[8] = { 0, 0, 1 };

	if (strcmp(type, "zero") != 0 && strcmp(type, "huge") != 0)
		return 0;
	(void)!write(fd, strcmp(type, "zero") == 0 ? zero : huge, 8);
	return 1;
}

/*
 * A unity bridge: pings pong; run_tests gives job j1; get_test_job j1
 * is "running" until the third poll (or for ever when phase is 9),
 * then "succeeded" ("failed" when phase is 7);
 * cancel_test_job j1 counts; "fail" is success false; "bad" an error
 * envelope; "hang" reads and closes, and every connection after it
 * closes before WELCOME (phase 2) until the test says otherwise.
 */
static void
serve_unity(int fd)
{
	json_object	*m;
	const char	*type;
	char		 ans[256];
	int		 n;

	if (sh->phase == 2) {
		/* The bridge reloading: the connection closes at once. */
		return;
	}
	(void)!write(fd, WELCOME, strlen(WELCOME));
	while ((m = frame_read(fd)) != NULL) {
		type = fstr(m, "type");
		if (jpath_get(m, "ping") != NULL) {
			__atomic_add_fetch(&sh->pings, 1, __ATOMIC_SEQ_CST);
			frame_write(fd, PONG);
		} else if (strcmp(type, "get_editor_state") == 0) {
			snprintf(ans, sizeof(ans), "{\"status\":\"success\","
			    "\"result\":{\"data\":{\"compiling\":%s,"
			    "\"tests\":1}}}", sh->phase == 5 ? "true" :
			    "false");
			frame_write(fd, ans);
			tell('e');
		} else if (strcmp(type, "get_test_job") == 0) {
			n = __atomic_add_fetch(&sh->polls, 1, __ATOMIC_SEQ_CST);
			snprintf(ans, sizeof(ans), "{\"status\":\"success\","
			    "\"result\":{\"data\":{\"status\":\"%s\"}}}",
			    strcmp(fstr(m, "params.job_id"), "j1") != 0 ?
			    "wrong job" : n < 3 || sh->phase == 9 ? "running" :
			    sh->phase == 7 ? "failed" : "succeeded");
			frame_write(fd, ans);
			tell('p');
		} else if (strcmp(type, "cancel_test_job") == 0) {
			/* Its job, or (a cancel without params) none named. */
			if (jpath_get(m, "params.job_id") == NULL ||
			    strcmp(fstr(m, "params.job_id"), "j1") == 0)
				__atomic_add_fetch(&sh->cancels, 1,
				    __ATOMIC_SEQ_CST);
			frame_write(fd, "{\"status\":\"success\","
			    "\"result\":{}}");
		} else {
			__atomic_add_fetch(&sh->requests, 1, __ATOMIC_SEQ_CST);
			if (strcmp(type, "hang") == 0) {
				sh->phase = 2;
				json_object_put(m);
				return;
			}
			if (!serve_bad_frame(fd, type))
				serve_answer(fd, m, type);
		}
		json_object_put(m);
	}
}

#define UNITY(tool, extra)	"{\"tool\":\"" tool "\",\"params\":{\"a\":1}," \
	"\"timeout_s\":20,\"forward\":{\"to\":\"127.0.0.1:%d\"," \
	"\"dialect\":\"unity-mcp\",\"method\":\"" tool "\"," \
	"\"connect_timeout_s\":10" extra "}}"

/* A first line of phase 0: not a bridge; phase 3: an unknown framing;
 * phase 4: bytes that are not UTF-8. */
static void
serve_welcome(int fd)
{
	const char	*w = sh->phase == 3 ? "WELCOME UNITY-MCP 1 FRAMING=2\n" :
			    sh->phase == 4 ? "WELCOME \xff\xc3 1 FRAMING=1\n" :
			    "HTTP/1.1 400 Bad Request\r\n";
	char		 buf[64];

	(void)!write(fd, w, strlen(w));
	(void)!read(fd, buf, sizeof(buf));
}

START_TEST(unity_welcome_refused)
{
	json_object	*r;

	fake_start(0, serve_welcome);
	r = run(UNITY("x", ""));
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "WELCOME UNITY-MCP"));
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "HTTP/1.1 400"));
	ck_assert(!json_object_get_boolean(jpath_get(r, "sent")));
	json_object_put(r);
	sh->phase = 3;
	r = run(UNITY("x", ""));
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "unknown framing"));
	json_object_put(r);
	/* Quoted in the error, each bad byte is U+FFFD: the result is still
	 * strict JSON, which the broker takes (not a garbled worker). */
	sh->phase = 4;
	r = run(UNITY("x", ""));
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"),
	    "\"WELCOME \xef\xbf\xbd\xef\xbf\xbd 1 FRAMING=1\""));
	json_object_put(r);
}
END_TEST

START_TEST(unity_frames)
{
	json_object	*r;

	fake_start(0, serve_unity);
	r = run(UNITY("echo", ",\"params\":{\"mode\":\"EditMode\",\"n\":[1]}"));
	assert_result(r, 1, NULL);
	ck_assert_str_eq(fstr(r, "result.mode"), "EditMode");
	ck_assert_int_eq(json_object_get_int(jpath_get(r, "result.n.0")), 1);
	ck_assert(json_object_get_boolean(jpath_get(r, "sent")));
	json_object_put(r);
	r = run(UNITY("bad", ""));
	assert_result(r, 0, "upstream_error");
	ck_assert_str_eq(fstr(r, "upstream_error.status"), "error");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "no scene"));
	json_object_put(r);
	r = run(UNITY("fail", ""));
	assert_result(r, 0, "tool_failed");
	ck_assert_ptr_nonnull(jpath_get(r, "result.success"));
	json_object_put(r);
	r = run(UNITY("zero", ""));
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "length 0"));
	json_object_put(r);
	r = run(UNITY("huge", ""));
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "64 MiB"));
	json_object_put(r);
	ck_assert_int_eq(sh->requests, 5);
}
END_TEST

/* Wait for the worker's one line about a refused connect. */
static void
await_retry_line(int err)
{
	char	c;

	while (read(err, &c, 1) == 1)
		if (c == '\n')
			return;
	ck_abort_msg("the worker logged no retry");
}

/* Refused, then the bridge appears: the request goes out once. */
START_TEST(refused_then_up)
{
	json_object	*r;
	int		 out, err, port;
	pid_t		 pid;

	close(listen_on(0));	/* a port nobody listens on */
	port = fake_port;
	pid = worker_start(UNITY("x", ""), &out, &err);
	await_retry_line(err);
	fake_start(port, serve_unity);
	r = worker_result(pid, out);
	close(err);
	assert_result(r, 1, NULL);
	ck_assert_int_eq(json_object_get_int(jpath_get(r, "result.v")), 42);
	ck_assert_int_eq(sh->requests, 1);
	json_object_put(r);
}
END_TEST

START_TEST(refused_gives_up)
{
	json_object	*r;

	close(listen_on(0));
	r = run("{\"tool\":\"x\",\"timeout_s\":20,\"forward\":{\"to\":"
	    "\"127.0.0.1:%d\",\"connect_timeout_s\":1}}");
	assert_result(r, 0, "upstream_refused");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "refused"));
	ck_assert(!json_object_get_boolean(jpath_get(r, "sent")));
	json_object_put(r);
}
END_TEST

/*
 * Issue 35.4: an editor that is not running (its port refuses, and it was
 * never reached) is said to be so after a few seconds, not after the
 * whole connect window (10 s here), and not as "connect timed out".
 */
START_TEST(refused_not_running)
{
	json_object	*r;
	char		 want[128];
	time_t		 t0 = time(NULL);

	close(listen_on(0));
	r = run(UNITY("x", ""));
	assert_result(r, 0, "upstream_refused");
	snprintf(want, sizeof(want), "the editor is not running (connection "
	    "refused on 127.0.0.1:%d)", fake_port);
	ck_assert_str_eq(fstr(r, "error"), want);
	ck_assert_msg(time(NULL) - t0 < 9, "it waited the connect window");
	json_object_put(r);
}
END_TEST

/*
 * An editor reached a moment ago that now refuses is reloading: its
 * connect is tried again past those few seconds, until it is back.
 */
START_TEST(refused_after_seen_waits)
{
	struct timespec	 ts = { 3, 500 * 1000 * 1000 };
	json_object	*r;
	int		 out, err, port, status;
	pid_t		 pid;

	fake_start(0, serve_unity);
	json_object_put(run(UNITY("echo", "")));	/* reached: seen */
	port = fake_port;
	kill(-fake, SIGKILL);		/* the editor goes (to reload) */
	waitpid(fake, NULL, 0);
	fake = -1;
	pid = worker_start(UNITY("x", ""), &out, &err);
	await_retry_line(err);
	/* Nothing to await: that it has not given up is the point. */
	nanosleep(&ts, NULL);
	ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
	fake_start(port, serve_unity);
	r = worker_result(pid, out);
	close(err);
	assert_result(r, 1, NULL);
	json_object_put(r);
}
END_TEST

/* Written, then lost: never sent again, upstream_lost. */
START_TEST(lost_not_resent)
{
	json_object	*r;

	fake_start(0, serve_unity);
	r = run(UNITY("hang", ""));
	assert_result(r, 0, "upstream_lost");
	ck_assert(json_object_get_boolean(jpath_get(r, "sent")));
	ck_assert_int_eq(sh->requests, 1);
	json_object_put(r);
}
END_TEST

/*
 * A reload tool: the bridge closes after the request and greets nobody
 * for a while; the job ends when it answers the ping again.
 */
START_TEST(reload_waits_ready)
{
	json_object	*r;
	int		 out, err;
	pid_t		 pid;

	fake_start(0, serve_unity);
	pid = worker_start("{\"tool\":\"hang\",\"timeout_s\":20,\"reload\":"
	    "true,\"forward\":{\"to\":\"127.0.0.1:%d\",\"dialect\":"
	    "\"unity-mcp\"}}", &out, &err);
	await_retry_line(err);
	ck_assert_int_eq(sh->pings, 0);
	sh->phase = 0;		/* the bridge is back */
	r = worker_result(pid, out);
	close(err);
	assert_result(r, 1, NULL);
	ck_assert(json_object_get_boolean(jpath_get(r, "reloaded")));
	ck_assert(json_object_get_boolean(jpath_get(r, "sent")));
	ck_assert_int_eq(sh->requests, 1);
	ck_assert_int_ge(sh->pings, 1);
	json_object_put(r);
}
END_TEST

#define AWAIT	",\"await\":{\"call\":\"get_test_job\",\"params\":" \
	"{\"job_id\":\"{result.data.job_id}\"},\"until\":{\"field\":" \
	"\"result.data.status\",\"in\":[\"succeeded\",\"failed\"]," \
	"\"failed\":[\"failed\"]},\"every_ms\":50}"
#define CANCEL	",\"cancel\":{\"call\":\"cancel_test_job\",\"params\":" \
	"{\"job_id\":\"{result.data.job_id}\"}}"

START_TEST(await_until_status)
{
	json_object	*r;

	fake_start(0, serve_unity);
	r = run(UNITY("run_tests", AWAIT));
	assert_result(r, 1, NULL);
	ck_assert_int_eq(json_object_get_int(jpath_get(r, "polls")), 3);
	ck_assert_str_eq(fstr(r, "result.data.status"), "succeeded");
	ck_assert_int_eq(sh->requests, 1);
	json_object_put(r);
}
END_TEST

/* A final status named in until.failed: tool_failed, the answer kept. */
START_TEST(await_failed_status)
{
	json_object	*r;

	sh->phase = 7;
	fake_start(0, serve_unity);
	r = run(UNITY("run_tests", AWAIT));
	assert_result(r, 0, "tool_failed");
	ck_assert_int_eq(json_object_get_int(jpath_get(r, "polls")), 3);
	ck_assert_str_eq(fstr(r, "result.data.status"), "failed");
	json_object_put(r);
}
END_TEST

/* The cancel call, with params (_i 0) and without (_i 1: {}). */
START_TEST(cancel_sends_cancel_call)
{
	json_object	*r;
	int		 out;
	pid_t		 pid;

	sh->phase = 9;		/* the run never ends */
	fake_start(0, serve_unity);
	pid = worker_start(_i == 0 ? UNITY("run_tests", AWAIT CANCEL) :
	    UNITY("run_tests", AWAIT ",\"cancel\":{\"call\":"
	    "\"cancel_test_job\"}"), &out, NULL);
	await_note('p');
	kill(pid, SIGTERM);
	r = worker_result(pid, out);
	assert_result(r, 0, "cancelled");
	ck_assert_int_eq(sh->cancels, 1);
	ck_assert_int_ge(json_object_get_int(jpath_get(r, "polls")), 1);
	json_object_put(r);
}
END_TEST

/* jsonrpc-lsp: headers (Content-Type too), a notification, a request of
 * the server's own, the answer. */
static void
serve_lsp(int fd)
{
	char		 hdr[512], body[4096], ans[512], msg[256];
	size_t		 off = 0;
	long		 n;
	json_object	*m;

	while (off < sizeof(hdr) - 1 && read(fd, hdr + off, 1) == 1) {
		hdr[++off] = '\0';
		if (off >= 4 && strcmp(hdr + off - 4, "\r\n\r\n") == 0)
			break;
	}
	if (sscanf(hdr, "Content-Length: %ld", &n) != 1 || n <= 0 ||
	    n >= (long)sizeof(body) || read_all(fd, body, (size_t)n) == -1)
		return;
	body[n] = '\0';
	m = json_tokener_parse(body);
	__atomic_add_fetch(&sh->requests, 1, __ATOMIC_SEQ_CST);
	if (strcmp(fstr(m, "method"), "nolength") == 0) {
		snprintf(ans, sizeof(ans), "Content-Type: x\r\n\r\n{}");
		(void)!write(fd, ans, strlen(ans));
		json_object_put(m);
		return;
	}
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"method\":\"log\"}");
	snprintf(ans, sizeof(ans), "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", strlen(msg), msg);
	(void)!write(fd, ans, strlen(ans));
	/* A request of the server's own, with our request's id: not ours. */
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
	    "\"method\":\"window/workDoneProgress/create\",\"params\":{}}",
	    fstr(m, "id"));
	snprintf(ans, sizeof(ans), "Content-Length: %zu\r\n\r\n%s",
	    strlen(msg), msg);
	(void)!write(fd, ans, strlen(ans));
	snprintf(msg, sizeof(msg), "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":"
	    "{\"method\":\"%s\",\"x\":%s}}", fstr(m, "id"), fstr(m, "method"),
	    json_object_to_json_string(jpath_get(m, "params.x")));
	snprintf(ans, sizeof(ans), "Content-Length: %zu\r\n\r\n%s",
	    strlen(msg), msg);
	(void)!write(fd, ans, strlen(ans));
	json_object_put(m);
}

START_TEST(lsp_framing)
{
	json_object	*r;

	fake_start(0, serve_lsp);
	r = run("{\"tool\":\"compile\",\"params\":{\"x\":7},\"timeout_s\":20,"
	    "\"forward\":{\"to\":\"127.0.0.1:%d\",\"dialect\":\"jsonrpc-lsp\","
	    "\"method\":\"compile-now\"}}");
	assert_result(r, 1, NULL);
	ck_assert_str_eq(fstr(r, "result.method"), "compile-now");
	ck_assert_int_eq(json_object_get_int(jpath_get(r, "result.x")), 7);
	json_object_put(r);
	r = run("{\"tool\":\"nolength\",\"timeout_s\":20,\"forward\":{"
	    "\"to\":\"127.0.0.1:%d\",\"dialect\":\"jsonrpc-lsp\"}}");
	assert_result(r, 0, "upstream_protocol");
	ck_assert_ptr_nonnull(strstr(fstr(r, "error"), "Content-Length"));
	json_object_put(r);
}
END_TEST

/* A jsonrpc upstream that holds each connection a while. */
static void
serve_slow(int fd)
{
	char		 buf[4096];
	const char	*a = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";

	if (read(fd, buf, sizeof(buf)) <= 0)
		return;
	usleep(300000);	/* long enough for a second worker to come */
	(void)!write(fd, a, strlen(a));
}

/* Two workers at once against one upstream: sh->overlap says whether
 * their exchanges overlapped. */
static void
two_workers(const char *cmd)
{
	json_object	*r;
	int		 o1, o2;
	pid_t		 p1, p2;

	p1 = worker_start(cmd, &o1, NULL);
	p2 = worker_start(cmd, &o2, NULL);
	r = worker_result(p1, o1);
	assert_result(r, 1, NULL);
	json_object_put(r);
	r = worker_result(p2, o2);
	assert_result(r, 1, NULL);
	json_object_put(r);
	ck_assert_int_eq(sh->conns, 2);
}

/* A JSON-RPC upstream serves many: no lock, the two run side by side. */
START_TEST(no_lock_for_many_client_upstreams)
{
	fake_start(0, serve_slow);
	two_workers("{\"tool\":\"x\",\"timeout_s\":20,\"forward\":"
	    "{\"to\":\"127.0.0.1:%d\"}}");
	ck_assert_msg(sh->overlap, "the exchanges were serialised");
}
END_TEST

/* The next editor event (caller puts). */
static json_object *
editor_event(struct jsonl *jl)
{
	json_object	*ev;

	ck_assert_int_eq(jsonl_json(jl, 20000, &ev), JSONL_MSG);
	ck_assert_str_eq(fstr(ev, "event"), "editor");
	return ev;
}

/*
 * Probe mode: one line at start, none while nothing changes, one per
 * change, unreachable when the bridge goes; SIGTERM ends it.
 */
START_TEST(probe_reports_changes)
{
	struct jsonl	 jl;
	json_object	*ev;
	char		 spec[1024];
	int		 out, status;
	pid_t		 pid;

	fake_start(0, serve_unity);
	snprintf(spec, sizeof(spec), "{\"lock_dir\":\"%s\",\"probe\":{"
	    "\"to\":\"127.0.0.1:%d\",\"dialect\":\"unity-mcp\",\"call\":"
	    "\"get_editor_state\",\"params\":{},\"every_ms\":50,\"flags\":{"
	    "\"compiling\":\"result.data.compiling\",\"tests_running\":"
	    "\"result.data.tests\",\"editor_busy\":\"result.nothing\"}}}",
	    lockdir, fake_port);
	pid = worker_spawn(spec, &out, NULL);
	jsonl_init(&jl, out, 1 << 20);
	ev = editor_event(&jl);
	ck_assert(json_object_get_boolean(jpath_get(ev, "reachable")));
	ck_assert(!json_object_get_boolean(jpath_get(ev, "flags.compiling")));
	ck_assert_ptr_nonnull(jpath_get(ev, "flags.tests_running"));
	ck_assert(!json_object_get_boolean(jpath_get(ev,
	    "flags.tests_running")));
	ck_assert_ptr_nonnull(jpath_get(ev, "flags.editor_busy"));
	json_object_put(ev);
	await_note('e');
	await_note('e');	/* polls that changed nothing: no line */
	sh->phase = 5;
	ev = editor_event(&jl);
	ck_assert(json_object_get_boolean(jpath_get(ev, "flags.compiling")));
	json_object_put(ev);
	kill(-fake, SIGKILL);
	waitpid(fake, NULL, 0);
	fake = -1;
	ev = editor_event(&jl);
	ck_assert(!json_object_get_boolean(jpath_get(ev, "reachable")));
	ck_assert_ptr_nonnull(strstr(fstr(ev, "error"), "refused"));
	json_object_put(ev);
	kill(pid, SIGTERM);
	ck_assert_int_eq(jsonl_json(&jl, 20000, &ev), JSONL_EOF);
	jsonl_free(&jl);
	close(out);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* The bridge's first line is not UTF-8: the probe's line quoting it is
 * still strict JSON, which the broker takes. */
START_TEST(probe_error_not_utf8)
{
	struct jsonl	 jl;
	json_object	*ev;
	char		 spec[1024];
	int		 out, status;
	pid_t		 pid;

	sh->phase = 4;
	fake_start(0, serve_welcome);
	snprintf(spec, sizeof(spec), "{\"lock_dir\":\"%s\",\"probe\":{"
	    "\"to\":\"127.0.0.1:%d\",\"dialect\":\"unity-mcp\",\"call\":"
	    "\"get_editor_state\",\"params\":{},\"every_ms\":50}}", lockdir,
	    fake_port);
	pid = worker_spawn(spec, &out, NULL);
	jsonl_init(&jl, out, 1 << 20);
	ev = editor_event(&jl);
	ck_assert(!json_object_get_boolean(jpath_get(ev, "reachable")));
	ck_assert_ptr_nonnull(strstr(fstr(ev, "error"),
	    "WELCOME \xef\xbf\xbd\xef\xbf\xbd 1"));
	json_object_put(ev);
	kill(pid, SIGTERM);
	ck_assert_int_eq(jsonl_json(&jl, 20000, &ev), JSONL_EOF);
	jsonl_free(&jl);
	close(out);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("dialects");
	TCase	*tc = tcase_create("dialects");

	tcase_add_checked_fixture(tc, dia_setup, dia_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unity_welcome_refused);
	tcase_add_test(tc, unity_frames);
	tcase_add_test(tc, refused_then_up);
	tcase_add_test(tc, refused_gives_up);
	tcase_add_test(tc, refused_not_running);
	tcase_add_test(tc, refused_after_seen_waits);
	tcase_add_test(tc, lost_not_resent);
	tcase_add_test(tc, reload_waits_ready);
	tcase_add_test(tc, await_until_status);
	tcase_add_test(tc, await_failed_status);
	tcase_add_loop_test(tc, cancel_sends_cancel_call, 0, 2);
	tcase_add_test(tc, lsp_framing);
	tcase_add_test(tc, no_lock_for_many_client_upstreams);
	tcase_add_test(tc, probe_reports_changes);
	tcase_add_test(tc, probe_error_not_utf8);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
