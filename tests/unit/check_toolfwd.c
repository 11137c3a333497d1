/* SPDX-License-Identifier: ISC */
/*
 * The upstream members of a tool table (cmdgate.tools(5), issue 12):
 * forward's object form, its templates, the editor probe; what a command
 * of such a tool records.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "tools.h"

static char	err[1024];

/* A table of one tool "t" with the given params schema and forward. */
static struct tooltab *
load_tool(const char *schema, const char *forward, const char *editor)
{
	struct tooltab	*tab = NULL;
	char		 json[4096];

	snprintf(json, sizeof(json), "{%s%s%s\"tools\":[{\"name\":\"t\","
	    "%s%s%s\"forward\":%s}]}", editor ? "\"editor\":" : "",
	    editor ? editor : "", editor ? "," : "", schema ? "\"params\":" :
	    "", schema ? schema : "", schema ? "," : "", forward);
	err[0] = '\0';
	if (tooltab_load_string(json, "t.json", &tab, err, sizeof(err)) == -1)
		return NULL;
	return tab;
}

#define SCHEMA	"{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":" \
		"\"string\",\"default\":\"EditMode\"},\"names\":{\"type\":" \
		"\"array\"},\"n\":{\"type\":\"integer\"}}}"
#define UNITY	"{\"to\":\"127.0.0.1:6400\",\"dialect\":\"unity-mcp\","
#define PROBE	"{\"to\":\"127.0.0.1:6400\",\"dialect\":\"unity-mcp\"," \
		"\"call\":\"get_editor_state\","

START_TEST(forward_object_good)
{
	struct tooltab		*tab;
	const struct tool	*t;

	tab = load_tool(SCHEMA, UNITY "\"method\":\"run_tests\","
	    "\"params\":{\"mode\":\"{mode}\",\"testNames\":\"{names}\","
	    "\"label\":\"run {mode} {{x}}\"},\"connect_timeout_s\":5,"
	    "\"idempotent\":false,"
	    "\"ready\":{\"call\":\"get_editor_state\",\"params\":{}},"
	    "\"await\":{\"call\":\"get_test_job\",\"params\":{\"job_id\":"
	    "\"{result.data.job_id}\",\"m\":\"{mode}\"},\"until\":{\"field\":"
	    "\"result.data.status\",\"in\":[\"succeeded\",\"failed\"],"
	    "\"failed\":[\"failed\"]},\"every_ms\":50},\"cancel\":{\"call\":"
	    "\"cancel_test_job\",\"params\":{\"job_id\":"
	    "\"{result.data.job_id}\"}}}", NULL);
	ck_assert_msg(tab != NULL, "%s", err);
	t = tooltab_find(tab, "t");
	ck_assert_str_eq(t->forward, "127.0.0.1:6400");
	ck_assert_ptr_nonnull(t->forward_json);
	ck_assert_ptr_null(tab->editor);
	tooltab_free(tab);
	/* mcp-http: a URL; the other dialects, IPv6 in brackets. */
	tab = load_tool(NULL, "{\"to\":\"http://[::1]:3001/mcp\","
	    "\"dialect\":\"mcp-http\"}", NULL);
	ck_assert_msg(tab != NULL, "%s", err);
	tooltab_free(tab);
	tab = load_tool(NULL, "{\"to\":\"[::1]:8700\",\"dialect\":"
	    "\"jsonrpc-lsp\",\"params\":{\"any\":\"{whatever.x}\"}}", NULL);
	ck_assert_msg(tab != NULL, "no schema: any name: %s", err);
	tooltab_free(tab);
	/* A wait that ends on a flag or a number, not only a status. */
	tab = load_tool(NULL, UNITY "\"await\":{\"call\":\"s\",\"until\":"
	    "{\"field\":\"result.busy\",\"in\":[false,0],\"failed\":"
	    "[2.5]}}}", NULL);
	ck_assert_msg(tab != NULL, "boolean until: %s", err);
	tooltab_free(tab);
}
END_TEST

static const struct {
	const char	*schema;
	const char	*forward;
	const char	*want;
} bad_forwards[] = {
	{ NULL, "1", "field 'forward': must be \"HOST:PORT\" or an object" },
	{ NULL, "{\"to\":\"h:1\",\"x\":1}",
	  "tool 't': field 'forward': unknown member 'x'" },
	{ NULL, "{\"dialect\":\"jsonrpc\"}", "field 'forward': needs \"to\"" },
	{ NULL, "{\"to\":\"h\"}", "field 'forward.to': 'h' is not HOST:PORT" },
	{ NULL, "{\"to\":\"h:1\",\"dialect\":\"grpc\"}",
	  "field 'forward.dialect': 'grpc' is none of" },
	{ NULL, "{\"to\":\"h:1\",\"dialect\":7}",
	  "field 'forward.dialect': \"dialect\" must be a non-empty string" },
	{ NULL, "{\"to\":\"h:1\",\"dialect\":\"mcp-http\"}",
	  "field 'forward.to': 'h:1' is not http://" },
	{ NULL, "{\"to\":\"http://h:1\",\"dialect\":\"mcp-http\"}",
	  "field 'forward.to'" },
	{ NULL, "{\"to\":\"http://h:1/mcp\"}", "field 'forward.to'" },
	{ NULL, "{\"to\":\"h:1\",\"method\":\"\"}",
	  "field 'forward': \"method\" must be a non-empty string" },
	{ NULL, "{\"to\":\"h:1\",\"connect_timeout_s\":0}",
	  "\"connect_timeout_s\" must be a whole number from 1 to 3600" },
	{ NULL, "{\"to\":\"h:1\",\"connect_timeout_s\":\"5\"}",
	  "\"connect_timeout_s\" must be a whole number" },
	{ NULL, "{\"to\":\"h:1\",\"idempotent\":\"yes\"}",
	  "field 'forward': \"idempotent\" must be true or false" },
	{ NULL, "{\"to\":\"h:1\",\"params\":[1]}",
	  "field 'forward.params': must be an object" },
	{ SCHEMA, "{\"to\":\"h:1\",\"params\":{\"m\":\"{modee}\"}}",
	  "field 'forward.params': {modee}: \"modee\" is none of the names" },
	{ SCHEMA, "{\"to\":\"h:1\",\"params\":{\"m\":\"{result.x}\"}}",
	  "field 'forward.params': {result.x}" },
	{ NULL, "{\"to\":\"h:1\",\"params\":{\"m\":\"{a..b}\"}}",
	  "field 'forward.params': {a..b}: not a path" },
	{ NULL, "{\"to\":\"h:1\",\"ready\":{\"params\":{}}}",
	  "field 'forward.ready': needs \"call\"" },
	{ NULL, "{\"to\":\"h:1\",\"ready\":{\"call\":\"c\",\"every_ms\":5}}",
	  "field 'forward.ready': unknown member 'every_ms'" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\"}}",
	  "field 'forward.await': needs \"until\"" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"status\",\"in\":[\"x\"]}}}",
	  "field 'forward.await.until': \"field\" 'status' must be a dotted "
	  "path that starts with result" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\"}}}",
	  "field 'forward.await.until': needs \"in\"" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[]}}}",
	  "\"in\" must be a non-empty list of strings, numbers or booleans" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[\"a\"],\"failed\":[null]}}}",
	  "\"failed\" must be a non-empty list of strings, numbers or "
	  "booleans" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[{\"a\":1}]}}}",
	  "\"in\" must be a non-empty list of strings, numbers or booleans" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[\"a\"]},\"every_ms\":49}}",
	  "field 'forward.await': \"every_ms\" must be a whole number from 50 "
	  "to 60000" },
	{ NULL, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[\"a\"]},\"every_ms\":60001}}",
	  "\"every_ms\" must be a whole number from 50 to 60000" },
	{ SCHEMA, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"params\":"
	  "{\"id\":\"{job}\"},\"until\":{\"field\":\"result.s\",\"in\":"
	  "[\"a\"]}}}", "field 'forward.await.params': {job}: \"job\" is none" },
	{ NULL, "{\"to\":\"h:1\",\"cancel\":{\"call\":\"c\"}}",
	  "field 'forward.cancel': only a forward with \"await\"" },
	{ SCHEMA, "{\"to\":\"h:1\",\"await\":{\"call\":\"c\",\"until\":"
	  "{\"field\":\"result.s\",\"in\":[\"a\"]}},\"cancel\":{\"call\":\"x\","
	  "\"params\":{\"id\":\"{jobs.0}\"}}}",
	  "field 'forward.cancel.params': {jobs.0}" },
};

START_TEST(forward_object_bad)
{
	struct tooltab	*tab = load_tool(bad_forwards[_i].schema,
	    bad_forwards[_i].forward, NULL);

	ck_assert_msg(tab == NULL, "forward %d accepted", _i);
	ck_assert_msg(strstr(err, bad_forwards[_i].want) != NULL,
	    "forward %d: error '%s' lacks '%s'", _i, err, bad_forwards[_i].want);
	ck_assert_msg(strncmp(err, "t.json: tool 't': field '", 25) == 0,
	    "error '%s' does not name the file, tool and field", err);
}
END_TEST

START_TEST(editor_good)
{
	struct tooltab	*tab;

	tab = load_tool(NULL, "\"h:1\"", PROBE "\"params\":{},\"every_ms\":"
	    "250,\"flags\":{\"compiling\":\"result.data.compilation."
	    "is_compiling\",\"tests_running\":\"result.data.tests.is_running\","
	    "\"editor_busy\":\"result.data.assets.refresh.0.busy\"}}");
	ck_assert_msg(tab != NULL, "%s", err);
	ck_assert_ptr_nonnull(tab->editor);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(
	    tab->editor, "call")), "get_editor_state");
	tooltab_free(tab);
}
END_TEST

static const struct {
	const char	*editor;
	const char	*want;
} bad_editors[] = {
	{ "[]", "field 'editor': must be an object" },
	{ PROBE "\"flags\":{\"compiling\":\"result.c\"},\"x\":1}",
	  "field 'editor': unknown member 'x'" },
	{ "{\"to\":\"h:1\",\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor': needs \"call\"" },
	{ "{\"call\":\"c\",\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor': needs \"to\"" },
	{ "{\"to\":\"h:1:2\",\"call\":\"c\",\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor.to'" },
	{ PROBE "\"every_ms\":10,\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor': \"every_ms\" must be a whole number from 50" },
	{ PROBE "\"params\":{\"a\":\"{x}\"},\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor.params': must be an object without templates" },
	{ PROBE "\"params\":1,\"flags\":{\"compiling\":\"r\"}}",
	  "field 'editor.params'" },
	{ PROBE "\"every_ms\":1000}", "field 'editor': needs \"flags\"" },
	{ PROBE "\"flags\":{}}", "field 'editor.flags': must be an object" },
	{ PROBE "\"flags\":{\"busy\":\"result.b\"}}",
	  "field 'editor.flags': 'busy' is none of compiling, tests_running, "
	  "editor_busy" },
	{ PROBE "\"flags\":{\"compiling\":\"result..c\"}}",
	  "field 'editor.flags': 'compiling' must be a dotted path" },
	{ PROBE "\"flags\":{\"compiling\":\"result.is-c\"}}",
	  "'compiling' must be a dotted path" },
	{ PROBE "\"flags\":{\"compiling\":true}}",
	  "'compiling' must be a dotted path" },
	{ PROBE "\"flags\":{\"tests_running\":\"data.tests.is_running\"}}",
	  "'tests_running' must be a dotted path that starts with result" },
	{ PROBE "\"flags\":{\"tests_running\":\"results.x\"}}",
	  "'tests_running' must be a dotted path that starts with result" },
};

START_TEST(editor_bad)
{
	struct tooltab	*tab = load_tool(NULL, "\"h:1\"",
	    bad_editors[_i].editor);

	ck_assert_msg(tab == NULL, "editor %d accepted", _i);
	ck_assert_msg(strstr(err, bad_editors[_i].want) != NULL,
	    "editor %d: error '%s' lacks '%s'", _i, err, bad_editors[_i].want);
	ck_assert_msg(strncmp(err, "t.json: table: field '", 22) == 0,
	    "error '%s' does not name the file and field", err);
}
END_TEST

/* A change of any new member is a change of the table (SIGHUP). */
START_TEST(same_sees_new_members)
{
	struct tooltab	*a, *b, *c, *d;

	a = load_tool(NULL, UNITY "\"await\":{\"call\":\"g\",\"until\":"
	    "{\"field\":\"result.s\",\"in\":[\"done\"]}}}", NULL);
	b = load_tool(NULL, UNITY "\"await\":{\"call\":\"g\",\"until\":"
	    "{\"field\":\"result.s\",\"in\":[\"done\",\"failed\"]}}}", NULL);
	c = load_tool(NULL, UNITY "\"await\":{\"call\":\"g\",\"until\":"
	    "{\"field\":\"result.s\",\"in\":[\"done\"]}}}",
	    PROBE "\"flags\":{\"compiling\":\"result.c\"}}");
	d = load_tool(NULL, UNITY "\"await\":{\"call\":\"g\",\"until\":"
	    "{\"field\":\"result.s\",\"in\":[\"done\"]}}}",
	    PROBE "\"flags\":{\"compiling\":\"result.d\"}}");
	ck_assert(a && b && c && d);
	ck_assert(!tooltab_same(a, b));
	ck_assert(!tooltab_same(a, c));
	ck_assert(!tooltab_same(c, d));
	ck_assert(tooltab_same(c, c));
	tooltab_free(a);
	tooltab_free(b);
	tooltab_free(c);
	tooltab_free(d);
}
END_TEST

START_TEST(details_show_forward)
{
	struct tooltab	*tab;
	json_object	*d, *f;

	tab = load_tool(NULL, UNITY "\"method\":\"m\"}", NULL);
	ck_assert_msg(tab != NULL, "%s", err);
	d = tool_details(tooltab_find(tab, "t"));
	f = json_object_object_get(d, "forward");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(f,
	    "dialect")), "unity-mcp");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(f,
	    "method")), "m");
	json_object_put(d);
	tooltab_free(tab);
	tab = load_tool(NULL, "\"h:1\"", NULL);
	d = tool_details(tooltab_find(tab, "t"));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(d,
	    "forward")), "h:1");
	json_object_put(d);
	tooltab_free(tab);
}
END_TEST

/* The record's forward: defaults filled, params expanded with defaults. */
START_TEST(command_forward)
{
	struct tooltab	*tab;
	json_object	*p, *f;
	const char	*s;

	tab = load_tool(SCHEMA, UNITY "\"params\":{\"mode\":\"{mode}\","
	    "\"testNames\":\"{names}\",\"label\":\"{mode}/{n}\"},"
	    "\"await\":{\"call\":\"g\",\"until\":{\"field\":\"result.s\","
	    "\"in\":[\"done\"]}}}", NULL);
	ck_assert_msg(tab != NULL, "%s", err);
	p = json_tokener_parse("{\"n\":3}");
	ck_assert_int_eq(tool_forward_command(tooltab_find(tab, "t"), p, &f,
	    err, sizeof(err)), 0);
	s = json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN);
	ck_assert_str_eq(s, "{\"to\":\"127.0.0.1:6400\",\"dialect\":"
	    "\"unity-mcp\",\"method\":\"t\",\"params\":{\"mode\":\"EditMode\","
	    "\"label\":\"EditMode\\/3\"},\"connect_timeout_s\":30,\"await\":"
	    "{\"call\":\"g\",\"until\":{\"field\":\"result.s\",\"in\":"
	    "[\"done\"]}}}");
	json_object_put(f);
	json_object_put(p);
	/* An embedded {n} without a value is an error naming it. */
	ck_assert_int_eq(tool_forward_command(tooltab_find(tab, "t"), NULL,
	    &f, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "{n}"));
	tooltab_free(tab);
	/* The shorthand stays a string; without params no "params". */
	tab = load_tool(NULL, "{\"to\":\"h:1\",\"connect_timeout_s\":9}", NULL);
	ck_assert_int_eq(tool_forward_command(tooltab_find(tab, "t"), NULL,
	    &f, err, sizeof(err)), 0);
	ck_assert_str_eq(json_object_to_json_string_ext(f,
	    JSON_C_TO_STRING_PLAIN), "{\"to\":\"h:1\",\"dialect\":\"jsonrpc\","
	    "\"method\":\"t\",\"connect_timeout_s\":9}");
	json_object_put(f);
	tooltab_free(tab);
	tab = load_tool(NULL, "\"h:1\"", NULL);
	ck_assert_int_eq(tool_forward_command(tooltab_find(tab, "t"), NULL,
	    &f, err, sizeof(err)), 0);
	ck_assert_str_eq(json_object_get_string(f), "h:1");
	json_object_put(f);
	tooltab_free(tab);
}
END_TEST

static Suite *
toolfwd_suite(void)
{
	Suite	*s = suite_create("toolfwd");
	TCase	*tc = tcase_create("toolfwd");

	tcase_add_test(tc, forward_object_good);
	tcase_add_loop_test(tc, forward_object_bad, 0,
	    sizeof(bad_forwards) / sizeof(bad_forwards[0]));
	tcase_add_test(tc, editor_good);
	tcase_add_loop_test(tc, editor_bad, 0,
	    sizeof(bad_editors) / sizeof(bad_editors[0]));
	tcase_add_test(tc, same_sees_new_members);
	tcase_add_test(tc, details_show_forward);
	tcase_add_test(tc, command_forward);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(toolfwd_suite());
}
