/* SPDX-License-Identifier: ISC */
/*
 * What MCP clients are told of the tools and given back (issue 13): the
 * table's title, annotations and output_schema, checked when it is
 * loaded; structuredContent from a real broker and real workers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"
#include "tools.h"

/* Tables refused, each with what its error must say. */
static const struct {
	const char	*json;
	const char	*want;
} bad_tables[] = {
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"title\":3}]}",
	  "tool 'a': field 'title': must be a string of 1 to 128 bytes" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"title\":\"\"}]}",
	  "tool 'a': field 'title': must be a string" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"title\":\"TTTTTTTTTT"
	  "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT"
	  "TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT\"}]}",
	  "tool 'a': field 'title': must be a string of 1 to 128 bytes" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"annotations\":[]}]}",
	  "tool 'a': field 'annotations': must be an object" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"annotations\":"
	  "{\"readonlyHint\":true}}]}", "tool 'a': field 'annotations': "
	  "unknown member 'readonlyHint'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"annotations\":"
	  "{\"destructiveHint\":\"yes\"}}]}", "tool 'a': field 'annotations': "
	  "destructiveHint: must be true or false" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"annotations\":"
	  "{\"title\":false}}]}", "tool 'a': field 'annotations': title: "
	  "must be a string" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "true}]}", "tool 'a': field 'output_schema': output_schema: a "
	  "schema must be an object" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "{}}]}", "tool 'a': field 'output_schema': output_schema.type: must "
	  "be \"object\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "{\"type\":\"array\"}}]}", "field 'output_schema': "
	  "output_schema.type: must be \"object\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"output_schema\":"
	  "{\"type\":\"object\",\"properties\":{\"n\":{\"minimum\":1}}}}]}",
	  "field 'output_schema': output_schema.n: unsupported schema "
	  "keyword 'minimum'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"content\":"
	  "\"html\"}]}", "tool 'a': field 'content': an exec tool's \"text\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"forward\":{\"to\":\"127.0.0.1:1\"},"
	  "\"content\":\"mcp\"}]}", "tool 'a': field 'content': an exec tool's" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"image\":"
	  "{\"at\":\"data\"}}]}", "tool 'a': field 'image': must be {\"at\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"image\":"
	  "{\"at\":\"/d\",\"mime_type\":\"text/plain\"}}]}",
	  "tool 'a': field 'image': must be {\"at\"" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"image\":"
	  "{\"at\":\"/d\",\"size\":1}}]}", "tool 'a': field 'image'" },
	{ "{\"tools\":[{\"name\":\"a\",\"exec\":[\"x\"],\"task\":"
	  "\"sometimes\"}]}", "tool 'a': field 'task': must be optional, "
	  "required or forbidden" },
};

START_TEST(bad_table)
{
	struct tooltab	*tab = NULL;
	char		 e[512] = "";

	ck_assert_msg(tooltab_load_string(bad_tables[_i].json, "t.json", &tab,
	    e, sizeof(e)) == -1, "table %d accepted", _i);
	ck_assert_msg(strstr(e, bad_tables[_i].want) != NULL,
	    "table %d: error '%s' lacks '%s'", _i, e, bad_tables[_i].want);
	ck_assert_msg(strncmp(e, "t.json: ", 8) == 0,
	    "error '%s' does not name the file", e);
}
END_TEST

/*
 * A tool with an output_schema: its stdout, a JSON object that matches,
 * is the structuredContent; anything else is a tool error that says why.
 */
static void
write_structured_tools(void)
{
	write_file(tools, "{\"tools\":["
	    "{\"name\":\"obj\",\"tier\":\"instant\",\"title\":\"Object\","
	    " \"exec\":[\"echo\",\"{\\\"answer\\\":42}\"],"
	    " \"output_schema\":{\"type\":\"object\",\"properties\":"
	    "{\"answer\":{\"type\":\"integer\"}},\"required\":[\"answer\"]}},"
	    "{\"name\":\"text\",\"exec\":[\"echo\",\"plain words\"],"
	    " \"output_schema\":{\"type\":\"object\"}},"
	    "{\"name\":\"list\",\"exec\":[\"echo\",\"[1,2]\"],"
	    " \"output_schema\":{\"type\":\"object\"}},"
	    "{\"name\":\"wrong\",\"exec\":[\"echo\",\"{\\\"answer\\\":\\\"x\\\"}\"],"
	    " \"output_schema\":{\"type\":\"object\",\"properties\":"
	    "{\"answer\":{\"type\":\"integer\"}}}},"
	    "{\"name\":\"bad_exit\",\"exec\":[\"sh\",\"-c\",\"echo '{}'; exit 2\"],"
	    " \"output_schema\":{\"type\":\"object\"}},"
	    "{\"name\":\"plain\",\"exec\":[\"echo\",\"{\\\"answer\\\":1}\"]}"
	    "]}", 0600);
}

/* tools/call of name: isError as expected, the first text containing
 * needle.  Caller puts. */
static json_object *
mcp_call(const char *name, int is_error, const char *needle)
{
	json_object	*r;

	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\"}}", name);
	ck_assert_msg(json_object_get_boolean(jpath(r, "result.isError")) ==
	    is_error, "%s: %s", name, json_object_to_json_string(r));
	ck_assert_msg(strstr(str(r, "result.content.0.text"), needle) != NULL,
	    "%s: %s", name, str(r, "result.content.0.text"));
	return r;
}

/*
 * "content": "mcp": what the tool prints is the call's result, its
 * blocks (an image, a resource) as they are, its isError and
 * structuredContent; output that is no MCP result is an error that says
 * so.
 */
START_TEST(mcp_content_as_made)
{
	json_object	*r;

	write_file(tools, "{\"tools\":["
	    "{\"name\":\"pic\",\"tier\":\"instant\",\"content\":\"mcp\","
	    " \"exec\":[\"printf\",\"%s\",\"{\\\"content\\\":[{\\\"type\\\":"
	    "\\\"text\\\",\\\"text\\\":\\\"a picture\\\"},{\\\"type\\\":"
	    "\\\"image\\\",\\\"data\\\":\\\"AAAA\\\",\\\"mimeType\\\":"
	    "\\\"image/png\\\"}],\\\"structuredContent\\\":{\\\"n\\\":1},"
	    "\\\"isError\\\":false}\"]},"
	    "{\"name\":\"words\",\"content\":\"mcp\",\"exec\":[\"echo\","
	    "\"plain words\"]}]}", 0600);
	start_tools(NULL);
	r = mcp_call("pic", 0, "a picture");
	ck_assert_str_eq(str(r, "result.content.1.type"), "image");
	ck_assert_str_eq(str(r, "result.content.1.data"), "AAAA");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.structuredContent.n")), 1);
	ck_assert_str_eq(str(r, "result._meta.cmdgate/status"), "done");
	json_object_put(r);
	json_object_put(mcp_call("words", 1, "tool 'words' says its output is "
	    "an MCP tool result (\"content\": \"mcp\"), but it is not"));
}
END_TEST

START_TEST(mcp_structured_content)
{
	json_object	*r;

	write_structured_tools();
	start_tools(NULL);
	r = mcp_call("obj", 0, "{\"answer\":42}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.structuredContent.answer")), 42);
	ck_assert_ptr_null(jpath(r, "result.structuredContent.status"));
	json_object_put(r);
	r = mcp_call("text", 1, "tool 'text' has an output_schema but its "
	    "standard output is not a JSON object");
	ck_assert_ptr_null(jpath(r, "result.structuredContent"));
	json_object_put(r);
	json_object_put(mcp_call("list", 1, "not a JSON object"));
	json_object_put(mcp_call("wrong", 1, "does not match its "
	    "output_schema: output.answer must be integer"));
	r = mcp_call("bad_exit", 1, "the job ended");
	ck_assert_ptr_null(jpath(r, "result.structuredContent"));
	json_object_put(r);
	/* Without an output_schema: what it printed, and the job. */
	r = mcp_call("plain", 0, "{\"answer\":1}");
	ck_assert_str_eq(str(r, "result.content.0.text"), "{\"answer\":1}\n");
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	json_object_put(r);
}
END_TEST

/*
 * MCP's json-schema-2020-12 conformance tool: the table loads (also with
 * -n), tools/list gives its schema as written ($schema, $defs,
 * additionalProperties), and a call is checked through its $ref.
 */
#define SCHEMA_2020_12_TOOL "{\"tools\":[{\"name\":" \
	"\"json_schema_2020_12_tool\"," \
	"\"tier\":\"instant\",\"exec\":[\"true\"],\"params\":{" \
	"\"$schema\":\"https://json-schema.org/draft/2020-12/schema\"," \
	"\"type\":\"object\",\"$defs\":{\"address\":{\"type\":\"object\"," \
	"\"properties\":{\"street\":{\"type\":\"string\"},\"city\":" \
	"{\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":" \
	"\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}}," \
	"\"additionalProperties\":false}}]}"

/* The tools/list entry of name.  Caller puts r. */
static json_object *
listed(json_object **r, const char *name)
{
	json_object	*list, *t;
	size_t		 i;

	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	list = jpath(*r, "result.tools");
	ck_assert_ptr_nonnull(list);
	for (i = 0; i < json_object_array_length(list); i++) {
		t = json_object_array_get_idx(list, i);
		if (strcmp(str(t, "name"), name) == 0)
			return t;
	}
	ck_abort_msg("tools/list lacks %s", name);
	return NULL;
}

START_TEST(json_schema_2020_12)
{
	const char	*check[] = { "-n", "--tools", tools, "--state-dir",
			    NULL, NULL };
	char		 state[256];
	json_object	*r, *t, *table;

	snprintf(state, sizeof(state), "%s", broker_path(&b, "st-n"));
	check[4] = state;
	write_file(tools, SCHEMA_2020_12_TOOL, 0600);
	ck_assert_int_eq(broker_run(&b, check), 0);
	start_tools(NULL);
	t = listed(&r, "json_schema_2020_12_tool");
	table = json_tokener_parse(SCHEMA_2020_12_TOOL);
	ck_assert_msg(json_object_equal(jpath(t, "inputSchema"),
	    jpath(table, "tools.0.params")), "%s",
	    json_object_to_json_string(t));
	json_object_put(table);
	ck_assert_str_eq(str(t, "inputSchema.$schema"),
	    "https://json-schema.org/draft/2020-12/schema");
	ck_assert_str_eq(str(t, "inputSchema.$defs.address.type"), "object");
	ck_assert_str_eq(str(t,
	    "inputSchema.$defs.address.properties.street.type"), "string");
	ck_assert_str_eq(str(t, "inputSchema.properties.address.$ref"),
	    "#/$defs/address");
	ck_assert(!json_object_get_boolean(jpath(t,
	    "inputSchema.additionalProperties")));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"json_schema_2020_12_tool\",\"arguments\":"
	    "{\"name\":\"n\",\"address\":{\"street\":\"s\",\"city\":\"c\"}}}}");
	ck_assert_msg(!json_object_get_boolean(jpath(r, "result.isError")),
	    "%s", json_object_to_json_string(r));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"json_schema_2020_12_tool\",\"arguments\":"
	    "{\"name\":\"n\",\"address\":{\"street\":[\"s\"]}}}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32602);
	ck_assert_str_eq(str(r, "error.data.type"), "invalid_params");
	/* Issue 35.2: the reason is the message, which clients show. */
	ck_assert_str_eq(str(r, "error.data.reason"),
	    "json_schema_2020_12_tool: params.address.street must be string");
	ck_assert_str_eq(str(r, "error.message"),
	    "json_schema_2020_12_tool: params.address.street must be string");
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("catalogue");
	TCase	*tc = tcase_create("table");

	tcase_add_loop_test(tc, bad_table, 0,
	    sizeof(bad_tables) / sizeof(bad_tables[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("structured");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mcp_structured_content);
	tcase_add_test(tc, mcp_content_as_made);
	tcase_add_test(tc, json_schema_2020_12);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
