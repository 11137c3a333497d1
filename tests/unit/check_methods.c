/* SPDX-License-Identifier: ISC */
/*
 * Dispatch: the methods -- details and lists, editor state, MCP, server
 * status, the output and wait bounds, the connection table (fixture in
 * rpcutil.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "mcpver.h"
#include "methods.h"
#include "net.h"
#include "options.h"
#include "rpcutil.h"
#include "server.h"
#include "tools.h"

START_TEST(details_and_list)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_tool_details\","
	    "\"params\":{\"name\":\"shell\"}}");
	ck_assert_str_eq(getstr(r, "result.name"), "shell");
	ck_assert(!json_object_get_boolean(get(r, "result.enabled")));
	ck_assert_str_eq(getstr(r, "result.tier"), "heavy");
	ck_assert_int_eq(json_object_get_int(get(r, "result.timeout_s")), 600);
	ck_assert_str_eq(getstr(r, "result.params.type"), "object");
	json_object_put(r);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"get_tool_details\",\"params\":{\"name\":\"nope\"}}",
	    RPC_INVALID_PARAMS, "unknown_tool", "nope");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"get_tool_details\",\"params\":{}}",
	    RPC_INVALID_PARAMS, "invalid_params", "get_tool_details");
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_tools\"}");
	ck_assert_uint_eq(json_object_array_length(get(r, "result.tools")),
	    srv.tools->ntools);
	json_object_put(r);
}
END_TEST

START_TEST(editor_state)
{
	struct conn		*c2 = server_conn_new(&srv, NULL, out, 0,
				    "test2");
	struct editor_flags	 cf = { 0, 1, 0 };
	json_object		*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"tests_running\":true}}");
	ck_assert(json_object_get_boolean(get(r, "result.busy.tests_running")));
	ck_assert(!json_object_get_boolean(get(r, "result.busy.compiling")));
	ck_assert(!json_object_get_boolean(get(r, "result.busy.editor_busy")));
	json_object_put(r);
	server_set_editor(&srv, c2, &cf);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"busy\":true}}");
	ck_assert(json_object_get_boolean(get(r, "result.busy.tests_running")));
	ck_assert(json_object_get_boolean(get(r, "result.busy.compiling")));
	ck_assert(json_object_get_boolean(get(r, "result.busy.editor_busy")));
	json_object_put(r);
	/* Flags belong to their connection and go with it. */
	server_conn_free(&srv, c2);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"tests_running\":false}}");
	ck_assert(!json_object_get_boolean(get(r, "result.busy.compiling")));
	ck_assert(!json_object_get_boolean(
	    get(r, "result.busy.tests_running")));
	ck_assert(json_object_get_boolean(get(r, "result.busy.editor_busy")));
	json_object_put(r);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"busy\":1}}",
	    RPC_INVALID_PARAMS, "invalid_params", "report_editor_state");
	ck_assert_int_eq(c->editor.busy, 1);
}
END_TEST

START_TEST(initialize_versions)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"inspector\",\"version\":\"1\"}}}");
	ck_assert_str_eq(getstr(r, "result.protocolVersion"), "2025-03-26");
	ck_assert(json_object_get_boolean(
	    get(r, "result.capabilities.tools.listChanged")));
	ck_assert_str_eq(getstr(r, "result.serverInfo.name"), "cmdgate");
	ck_assert_str_eq(getstr(r, "result.serverInfo.version"),
	    PACKAGE_VERSION);
	ck_assert_str_eq(c->name, "inspector");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	ck_assert_str_eq(getstr(r, "result.protocolVersion"), "2025-11-25");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\"}}");
	ck_assert_str_eq(getstr(r, "result.protocolVersion"), "2025-11-25");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2024-11-05\"}}");
	ck_assert_str_eq(getstr(r, "result.protocolVersion"), "2024-11-05");
	json_object_put(r);
	ck_assert(mcp_version_ok("2025-06-18"));
	ck_assert(!mcp_version_ok("2025-06-19"));
	ck_assert_str_eq(mcp_version_newest(), "2025-11-25");
	ck_assert_str_eq(mcp_versions_list()[3], "2024-11-05");
	ck_assert_ptr_null(mcp_versions_list()[4]);
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}"));
}
END_TEST

START_TEST(tools_list_shape)
{
	json_object	*r, *list, *t;
	size_t		 i, n;
	int		 saw_echo = 0, saw_poll = 0;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	list = get(r, "result.tools");
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(list, i);
		ck_assert_str_ne(getstr(t, "name"), "shell");
		ck_assert_str_eq(getstr(t, "inputSchema.type"), "object");
		saw_echo |= strcmp(getstr(t, "name"), "echo") == 0;
		saw_poll |= strcmp(getstr(t, "name"), "poll_job") == 0;
	}
	ck_assert(saw_echo && saw_poll);
	json_object_put(r);
}
END_TEST

/* The tool named name in a tools/list answer r. */
static json_object *
listed(json_object *r, const char *name)
{
	json_object	*list = get(r, "result.tools"), *t;
	size_t		 i;

	for (i = 0; i < json_object_array_length(list); i++) {
		t = json_object_array_get_idx(list, i);
		if (strcmp(getstr(t, "name"), name) == 0)
			return t;
	}
	ck_abort_msg("tools/list lacks %s", name);
	return NULL;
}

static const char *
plain(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* Issue 13: title, annotations (defaults, overrides), outputSchema. */
START_TEST(mcp_tools_catalogue)
{
	struct tooltab	*tab;
	json_object	*r, *t;
	char		 e[512];

	ck_assert_int_eq(tooltab_load_string("{\"tools\":["
	    "{\"name\":\"look\",\"tier\":\"instant\",\"exec\":[\"x\"],"
	    " \"title\":\"Look around\"},"
	    "{\"name\":\"maybe\",\"tier\":\"instant\",\"exec\":[\"x\"],"
	    " \"tier_rules\":[{\"param\":\"p\",\"in\":[\"y\"],"
	    "\"tier\":\"smooth\"}]},"
	    "{\"name\":\"build\",\"tier\":\"heavy\",\"exec\":[\"x\"],"
	    " \"output_schema\":{\"type\":\"object\",\"properties\":"
	    "{\"ok\":{\"type\":\"boolean\"}}}},"
	    "{\"name\":\"reload\",\"reload\":true,\"exec\":[\"x\"],"
	    " \"annotations\":{\"idempotentHint\":true}},"
	    "{\"name\":\"tame\",\"reload\":true,\"exec\":[\"x\"],"
	    " \"annotations\":{\"destructiveHint\":false,\"title\":\"Tame\"}}"
	    "]}", "t.json", &tab, e, sizeof(e)), 0);
	tooltab_free(srv.tools);
	srv.tools = tab;
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	t = listed(r, "look");
	ck_assert_str_eq(getstr(t, "title"), "Look around");
	ck_assert_str_eq(plain(get(t, "annotations")),
	    "{\"title\":\"Look around\",\"readOnlyHint\":true}");
	ck_assert(!json_object_object_get_ex(t, "outputSchema", NULL));
	ck_assert_str_eq(plain(get(listed(r, "maybe"), "annotations")),
	    "{\"readOnlyHint\":false}");
	t = listed(r, "build");
	ck_assert(!json_object_object_get_ex(t, "title", NULL));
	ck_assert_str_eq(plain(get(t, "annotations")),
	    "{\"readOnlyHint\":false}");
	ck_assert_str_eq(plain(get(t, "outputSchema")), "{\"type\":\"object\","
	    "\"properties\":{\"ok\":{\"type\":\"boolean\"}}}");
	t = listed(r, "reload");
	ck_assert_str_eq(plain(get(t, "annotations")), "{\"readOnlyHint\":"
	    "false,\"destructiveHint\":true,\"idempotentHint\":true}");
	t = listed(r, "tame");
	ck_assert_str_eq(plain(get(t, "annotations")), "{\"readOnlyHint\":"
	    "false,\"destructiveHint\":false,\"title\":\"Tame\"}");
	t = listed(r, "poll_job");
	ck_assert_str_eq(getstr(t, "title"), "Poll a job");
	ck_assert(json_object_get_boolean(get(t, "annotations.readOnlyHint")));
	ck_assert(json_object_get_boolean(get(listed(r, "wait_job"),
	    "annotations.readOnlyHint")));
	ck_assert(json_object_get_boolean(get(listed(r, "queue_status"),
	    "annotations.readOnlyHint")));
	t = listed(r, "cancel_job");
	ck_assert(!json_object_get_boolean(get(t, "annotations.readOnlyHint")));
	ck_assert(!json_object_get_boolean(get(t,
	    "annotations.destructiveHint")));
	ck_assert(json_object_get_boolean(get(t,
	    "annotations.idempotentHint")));
	json_object_put(r);
}
END_TEST

/*
 * Issue 13: the output of an mcp-http upstream is its structuredContent,
 * else the JSON object its first text holds; a truncated stdout is named.
 */
START_TEST(mcp_structured_sources)
{
	static const struct {
		const char	*tool, *result, *want;
	} cases[] = {
		{ "up", "{\"structuredContent\":{\"v\":2},\"content\":[]}",
		  "{\"v\":2}" },
		{ "up", "{\"content\":[{\"type\":\"text\",\"text\":"
		  "\"{\\\"v\\\":1}\"}]}", "{\"v\":1}" },
		{ "up", "{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}",
		  "its upstream's result is not a JSON object" },
		{ "up", "{\"structuredContent\":{\"v\":\"x\"}}",
		  "output.v must be integer" },
		{ "ex", NULL, "its standard output is not a JSON object (the "
		  "output was truncated)" },
	};
	struct tooltab	*tab;
	json_object	*job, *r;
	const char	*text;
	char		 e[512], json[512];
	size_t		 i;

	ck_assert_int_eq(tooltab_load_string("{\"tools\":["
	    "{\"name\":\"up\",\"forward\":{\"to\":\"http://127.0.0.1:1/mcp\","
	    " \"dialect\":\"mcp-http\"},\"output_schema\":{\"type\":"
	    "\"object\",\"properties\":{\"v\":{\"type\":\"integer\"}}}},"
	    "{\"name\":\"ex\",\"exec\":[\"x\"],\"output_schema\":"
	    "{\"type\":\"object\"}}]}", "t.json", &tab, e, sizeof(e)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), "{\"status\":\"done\",\"commands\":"
		    "[{\"tool\":\"%s\"}],\"results\":[{\"tool\":\"%s\","
		    "\"ok\":true%s%s}]}", cases[i].tool, cases[i].tool,
		    cases[i].result != NULL ? ",\"result\":" :
		    ",\"stdout\":\"{\",\"truncated\":true",
		    cases[i].result != NULL ? cases[i].result : "");
		ck_assert_ptr_nonnull(job = json_tokener_parse(json));
		r = mcp_job_result(tab, job, 1);
		text = getstr(json_object_array_get_idx(get(r, "content"), 0),
		    "text");
		ck_assert_msg(strstr(text, cases[i].want) != NULL,
		    "case %zu: %s", i, text);
		ck_assert_int_eq(json_object_get_boolean(get(r, "isError")),
		    cases[i].want[0] != '{');
		json_object_put(r);
	}
	tooltab_free(tab);
}
END_TEST

/*
 * Issue 35.1: a tool without an output_schema answers with what it
 * printed (an exec tool's stdout, an MCP upstream's content), a failure
 * with why as text, a job not yet ended with how to get its result; the
 * ticket and status in _meta, the job in structuredContent.
 */
START_TEST(mcp_result_reads)
{
	static const struct {
		const char	*job, *text, *status;
		int		 is_error;
	} cases[] = {
		{ "\"status\":\"done\",\"results\":[{\"tool\":\"ex\",\"ok\":"
		  "true,\"stdout\":\"hello\\n\",\"stderr\":\"\"}]",
		  "hello\n", "done", 0 },
		{ "\"status\":\"done\",\"results\":[{\"tool\":\"up\",\"ok\":"
		  "true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
		  "\"upstream words\"}]}}]", "upstream words", "done", 0 },
		{ "\"status\":\"done\",\"results\":[{\"tool\":\"rpc\",\"ok\":"
		  "true,\"result\":{\"v\":1}}]", "{\"v\":1}", "done", 0 },
		{ "\"status\":\"failed\",\"error\":\"command 0 (ex) failed: "
		  "exited with status 3\",\"failed_at_command\":0,\"results\":"
		  "[{\"tool\":\"ex\",\"ok\":false,\"stdout\":\"\",\"stderr\":"
		  "\"no such file\\n\",\"error\":\"exited with status 3\"}]",
		  "ex failed: exited with status 3\nstderr:\nno such file\n",
		  "failed", 1 },
		{ "\"status\":\"cancelled\",\"error\":\"cancelled\"",
		  "t-000007 cancelled: cancelled", "cancelled", 1 },
		{ "\"status\":\"queued\",\"position\":2,\"blocked_by\":"
		  "\"tests_running\"", "t-000007 is queued, position 2, "
		  "blocked by tests_running and has not finished: call wait_job "
		  "with {\"ticket\": \"t-000007\"} for its result", "queued", 0 },
	};
	struct tooltab	*tab;
	json_object	*job, *r;
	char		 e[512], json[1024];
	size_t		 i;

	ck_assert_int_eq(tooltab_load_string("{\"tools\":["
	    "{\"name\":\"up\",\"forward\":{\"to\":\"http://127.0.0.1:1/mcp\","
	    " \"dialect\":\"mcp-http\"}},"
	    "{\"name\":\"rpc\",\"forward\":{\"to\":\"127.0.0.1:1\","
	    " \"method\":\"m\"}},"
	    "{\"name\":\"ex\",\"exec\":[\"x\"]}]}", "t.json", &tab, e,
	    sizeof(e)), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), "{\"ticket\":\"t-000007\",%s}",
		    cases[i].job);
		ck_assert_ptr_nonnull(job = json_tokener_parse(json));
		r = mcp_job_result(tab, job, 1);
		ck_assert_str_eq(getstr(json_object_array_get_idx(get(r,
		    "content"), 0), "text"), cases[i].text);
		ck_assert_int_eq(json_object_get_boolean(get(r, "isError")),
		    cases[i].is_error);
		ck_assert_str_eq(getstr(r, "_meta.cmdgate/ticket"), "t-000007");
		ck_assert_str_eq(getstr(r, "_meta.cmdgate/status"),
		    cases[i].status);
		ck_assert_str_eq(getstr(r, "structuredContent.status"),
		    cases[i].status);
		json_object_put(r);
	}
	tooltab_free(tab);
}
END_TEST

START_TEST(server_status)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server_status\"}");
	ck_assert_str_eq(getstr(r, "result.version"), PACKAGE_VERSION);
	ck_assert_int_eq(json_object_get_int(get(r, "result.clients")), 1);
	ck_assert_str_eq(getstr(r, "result.store.path"), "/nonexistent/store");
	ck_assert_uint_eq(json_object_get_uint64(
	    get(r, "result.store.map_size_bytes")), opt.map_size);
	ck_assert(json_object_is_type(get(r, "result.jobs_by_status.queued"),
	    json_type_int));
	ck_assert(json_object_is_type(get(r, "result.listen"),
	    json_type_array));
	json_object_put(r);
}
END_TEST

START_TEST(tools_changed_notification)
{
	struct tooltab	*tab;
	char		 err[256], *s;
	size_t		 n;

	/* The same content again: nobody is told. */
	server_set_tools(&srv, tooltab_default());
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	ck_assert_int_eq(tooltab_load_string("{\"tools\":[{\"name\":\"t\","
	    "\"exec\":[\"true\"]}]}", "x.json", &tab, err, sizeof(err)), 0);
	server_set_tools(&srv, tab);
	s = evbuffer_readln(out, &n, EVBUFFER_EOL_LF);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s, "\"method\":"
	    "\"notifications/tools/list_changed\""));
	ck_assert_ptr_nonnull(strstr(s, "\"timestamp\":\""));
	ck_assert_ptr_null(strstr(s, "\"id\""));
	free(s);
}
END_TEST

/* A client whose unread output passes the bound is dropped, not grown. */
START_TEST(unread_output_bound)
{
	json_object	*big;
	char		*text = malloc(1 << 20);
	int		 i;

	memset(text, 'z', (1 << 20) - 1);
	text[(1 << 20) - 1] = '\0';
	big = json_object_new_string(text);
	free(text);
	for (i = 0; i < 63; i++)
		server_broadcast(&srv, big);
	ck_assert_int_eq(c->dead, 0);
	for (i = 0; i < 3; i++)
		server_broadcast(&srv, big);
	ck_assert_int_eq(c->dead, 1);
	ck_assert_uint_le(evbuffer_get_length(out), CONN_OUT_MAX + (2 << 20));
	json_object_put(big);
}
END_TEST

/* Answers left outstanding are capped per connection and in all. */
START_TEST(waits_capped)
{
	struct conn		*c2 = server_conn_new(&srv, NULL, out, 0,
				    "test2");
	struct conn_pending	*p[3];
	struct rpc_req		 req;
	json_object		*r;
	const char		*wait = "{\"jsonrpc\":\"2.0\",\"id\":4,"
				    "\"method\":\"wait_job\",\"params\":"
				    "{\"ticket\":\"t-000000\"}}";

	opt.max_waits = 2;
	opt.max_waits_total = 3;
	memset(&req, 0, sizeof(req));
	req.conn = c;
	req.method = "wait_job";
	p[0] = conn_defer(&req, NULL, NULL);
	p[1] = conn_defer(&req, NULL, NULL);
	ck_assert_uint_eq(c->npending, 2);
	r = call(wait);
	assert_error(r, RPC_QUEUE_FULL, "too_many_waits", "wait_job");
	ck_assert_ptr_nonnull(strstr(getstr(r, "error.data.reason"),
	    "--max-waits 2"));
	json_object_put(r);
	/* Methods that answer at once are not limited. */
	expect_alive();
	req.conn = c2;
	p[2] = conn_defer(&req, NULL, NULL);
	ck_assert_uint_eq(srv.cs.npending, 3);
	c->npending = 0;	/* only the total is full now */
	r = call(wait);
	c->npending = 2;
	assert_error(r, RPC_QUEUE_FULL, "too_many_waits", "wait_job");
	ck_assert_ptr_nonnull(strstr(getstr(r, "error.data.reason"),
	    "--max-waits-total 3"));
	json_object_put(r);
	/* Once answered, the room is back (no store here: another error). */
	conn_complete(p[0], NULL, NULL);
	ck_assert_uint_eq(srv.cs.npending, 2);
	free(evbuffer_readln(out, NULL, EVBUFFER_EOL_LF));
	r = call(wait);
	ck_assert_str_ne(getstr(r, "error.data.type"), "too_many_waits");
	json_object_put(r);
	conn_complete(p[1], NULL, NULL);
	conn_complete(p[2], NULL, NULL);
	ck_assert_uint_eq(srv.cs.npending, 0);
	ck_assert_uint_eq(c->npending, 0);
}
END_TEST

/* The table of connections by id: found while open, gone once freed,
 * across the doublings of the table. */
START_TEST(conn_table)
{
	enum { N = 5000 };
	struct conn	**cs = calloc(N, sizeof(*cs));
	uint64_t	 *ids = calloc(N, sizeof(*ids));
	size_t		  i;

	ck_assert_ptr_nonnull(cs);
	ck_assert_ptr_nonnull(ids);
	ck_assert_ptr_eq(server_conn_find(&srv, c->id), c);
	for (i = 0; i < N; i++) {
		cs[i] = server_conn_new(&srv, NULL, out, 0, "many");
		ids[i] = cs[i]->id;
	}
	ck_assert_uint_ge(srv.nbuckets, srv.nconns);
	for (i = 0; i < N; i += 2)
		server_conn_free(&srv, cs[i]);
	for (i = 0; i < N; i++)
		ck_assert_ptr_eq(server_conn_find(&srv, ids[i]),
		    i % 2 == 0 ? NULL : cs[i]);
	ck_assert_ptr_eq(server_conn_find(&srv, c->id), c);
	ck_assert_ptr_null(server_conn_find(&srv, ids[N - 1] + 1));
	free(cs);
	free(ids);
}
END_TEST

static Suite *
methods_suite(void)
{
	Suite	*s = suite_create("methods");
	TCase	*tc = tcase_create("methods");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, details_and_list);
	tcase_add_test(tc, editor_state);
	tcase_add_test(tc, initialize_versions);
	tcase_add_test(tc, tools_list_shape);
	tcase_add_test(tc, mcp_tools_catalogue);
	tcase_add_test(tc, mcp_structured_sources);
	tcase_add_test(tc, mcp_result_reads);
	tcase_add_test(tc, server_status);
	tcase_add_test(tc, tools_changed_notification);
	tcase_add_test(tc, unread_output_bound);
	tcase_add_test(tc, waits_capped);
	tcase_add_test(tc, conn_table);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(methods_suite());
}
