/* SPDX-License-Identifier: ISC */
/*
 * Editor bridges (issue 12): the fake bridges on their own wire first,
 * then the shipped tables (etc/tools/unity-mcp.json, uloop.json) end to
 * end through a real cmdgated against them.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "jstrict.h"
#include "testnet.h"
#include "jobsutil.h"
#include "fakeutil.h"
#include "ckrun.h"

static struct fake	 fk;

static void
fk_setup(void)
{
	setup();
	fk.pid = -1;
}

static void
fk_teardown(void)
{
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

/* The fake's status file: named by the Assets path's SHA-1, as the real. */
START_TEST(fake_unity_status_file)
{
	char		 path[512], *s;
	json_object	*o;
	FILE		*f;
	long		 n;

	fake_start(&fk, "FAKE_UNITY", "-s", b.dir, "-P", "/p", NULL);
	/* SHA-1("/p/Assets") begins 7ea39498 (sha1sum). */
	snprintf(path, sizeof(path), "%s/unity-mcp-status-%s.json", b.dir,
	    "7ea39498");
	ck_assert_msg((f = fopen(path, "r")) != NULL, "%s: %s", path,
	    strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	ck_assert_int_eq(jstrict_parse_str(s, &o), 0);
	free(s);
	ck_assert_int_eq(json_object_get_int(jpath(o, "unity_port")), fk.port);
	ck_assert(!json_object_get_boolean(jpath(o, "reloading")));
	ck_assert_str_eq(str(o, "project_path"), "/p/Assets");
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
	return ck_run(s);
}
