/* SPDX-License-Identifier: ISC */
/* Dispatch: JSON-RPC envelope, every error path, the methods of issue 2. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "authlimit.h"
#include "conn.h"
#include "options.h"
#include "rpc.h"
#include "server.h"
#include "tools.h"
#include "ckrun.h"

static struct options	 opt;
static struct server	 srv;
static struct evbuffer	*out;
static struct conn	*c;

static void
setup(void)
{
	char	*argv[] = { "cmdgated", "--state-dir", "/nonexistent", NULL };
	char	 err[256];

	ck_assert_int_eq(options_parse(&opt, 3, argv, stdout, err,
	    sizeof(err)), OPT_RUN);
	server_init(&srv, NULL, &opt, tooltab_default());
	out = evbuffer_new();
	c = server_conn_new(&srv, NULL, out, 0, "test");
}

static void
teardown(void)
{
	server_free(&srv);
	evbuffer_free(out);
	options_free(&opt);
}

/* Send one line; return the one answer (caller puts) or NULL for none. */
static json_object *
call(const char *line)
{
	char		*s;
	size_t		 n;
	json_object	*r;

	conn_message(c, line, strlen(line));
	s = evbuffer_readln(out, &n, EVBUFFER_EOL_LF);
	if (s == NULL)
		return NULL;
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	r = json_tokener_parse(s);
	ck_assert_msg(r != NULL, "answer is not JSON: %s", s);
	free(s);
	return r;
}

static json_object *
get(json_object *o, const char *path)
{
	char		 buf[256], *tok, *save;
	json_object	*v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok != NULL;
	    tok = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(v, tok, &v))
			ck_abort_msg("no member %s in %s", path,
			    json_object_to_json_string(o));
	return v;
}

static const char *
gets(json_object *o, const char *path)
{
	return json_object_get_string(get(o, path));
}

/* The answer is an error with this code and type, and all data members. */
static void
assert_error(json_object *r, int code, const char *type, const char *cmd)
{
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_get_int(get(r, "error.code")), code);
	ck_assert_str_eq(gets(r, "error.data.type"), type);
	ck_assert(json_object_get_string_len(get(r, "error.data.reason")) > 0);
	ck_assert(json_object_is_type(get(r, "error.message"),
	    json_type_string));
	if (cmd == NULL)
		ck_assert_ptr_null(get(r, "error.data.command"));
	else
		ck_assert_str_eq(gets(r, "error.data.command"), cmd);
}

static void
expect_error(const char *line, int code, const char *type, const char *cmd)
{
	json_object	*r = call(line);

	assert_error(r, code, type, cmd);
	json_object_put(r);
}

static void
expect_alive(void)
{
	json_object	*r = call("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"ping\"}");

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_get_int(get(r, "id")), 7);
	ck_assert(json_object_is_type(get(r, "result"), json_type_object));
	json_object_put(r);
}

START_TEST(ping_echo)
{
	json_object *r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"hello\"}}");

	ck_assert_str_eq(gets(r, "jsonrpc"), "2.0");
	ck_assert_str_eq(gets(r, "result.message"), "hello");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	ck_assert_int_eq(json_object_object_length(get(r, "result")), 0);
	json_object_put(r);
}
END_TEST

START_TEST(parse_errors)
{
	expect_error("{\"jsonrpc\":", RPC_PARSE_ERROR, "parse_error", NULL);
	expect_alive();
	expect_error("nope", RPC_PARSE_ERROR, "parse_error", NULL);
	expect_error("{} x", RPC_PARSE_ERROR, "parse_error", NULL);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}",
	    RPC_PARSE_ERROR, "parse_error", NULL);
	expect_alive();
}
END_TEST

START_TEST(parse_error_depth)
{
	char	buf[300];

	memset(buf, '[', 200);
	buf[200] = '\0';
	expect_error(buf, RPC_PARSE_ERROR, "parse_error", NULL);
	expect_alive();
}
END_TEST

START_TEST(invalid_requests)
{
	json_object	*r;

	expect_error("42", RPC_INVALID_REQUEST, "invalid_request", NULL);
	expect_error("\"x\"", RPC_INVALID_REQUEST, "invalid_request", NULL);
	expect_error("{\"id\":1,\"method\":\"ping\"}", RPC_INVALID_REQUEST,
	    "invalid_request", "ping");
	expect_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID_REQUEST, "invalid_request", "ping");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	    RPC_INVALID_REQUEST, "invalid_request", NULL);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
	assert_error(r, RPC_INVALID_REQUEST, "invalid_request", "ping");
	ck_assert_ptr_null(get(r, "id"));
	json_object_put(r);
	/* The id of an invalid request is kept when it is a valid id. */
	r = call("{\"jsonrpc\":\"2.0\",\"id\":\"k\",\"method\":[]}");
	ck_assert_str_eq(gets(r, "id"), "k");
	json_object_put(r);
	expect_alive();
}
END_TEST

START_TEST(ids_echoed)
{
	static const char *ids[] = {
		"18446744073709551615", "9223372036854775807",
		"-9223372036854775808", "0", "\"abc\"", "null", "\"\"",
	};
	char		 line[256];
	size_t		 i;
	json_object	*r;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"ping\"}", ids[i]);
		r = call(line);
		ck_assert_str_eq(json_object_to_json_string_ext(get(r, "id"),
		    JSON_C_TO_STRING_PLAIN), ids[i]);
		json_object_put(r);
	}
}
END_TEST

START_TEST(notifications_silent)
{
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"\"}}"));
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"ping\","
	    "\"params\":[1]}"));
	ck_assert_ptr_null(call("[{\"jsonrpc\":\"2.0\",\"method\":\"ping\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]"));
	expect_alive();
}
END_TEST

START_TEST(batches)
{
	json_object	*r, *e;
	size_t		 i, seen = 0;

	r = call("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
	    "3]");
	ck_assert(json_object_is_type(r, json_type_array));
	ck_assert_uint_eq(json_object_array_length(r), 3);
	for (i = 0; i < 3; i++) {
		e = json_object_array_get_idx(r, i);
		if (json_object_get_int(get(e, "id")) == 1) {
			ck_assert(json_object_object_get_ex(e, "result", NULL));
			seen |= 1;
		} else if (json_object_get_int(get(e, "id")) == 2) {
			assert_error(e, RPC_METHOD_NOT_FOUND,
			    "method_not_found", "nope");
			seen |= 2;
		} else {
			assert_error(e, RPC_INVALID_REQUEST,
			    "invalid_request", NULL);
			seen |= 4;
		}
	}
	ck_assert_uint_eq(seen, 7);
	json_object_put(r);
	expect_error("[]", RPC_INVALID_REQUEST, "invalid_request", NULL);
	expect_error("[ ]", RPC_INVALID_REQUEST, "invalid_request", NULL);
	expect_alive();
}
END_TEST

START_TEST(params_and_methods)
{
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":[1]}", RPC_INVALID_PARAMS, "invalid_params", "ping");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":\"x\"}", RPC_INVALID_PARAMS, "invalid_params", "ping");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"frobnicate\"}",
	    RPC_METHOD_NOT_FOUND, "method_not_found", "frobnicate");
	expect_alive();
}
END_TEST

START_TEST(client_name)
{
	json_object	*r;
	char		 line[256], name[80];

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set_client_name\","
	    "\"params\":{\"name\":\"agent \xc3\xa9 1\"}}");
	ck_assert_str_eq(gets(r, "result.name"), "agent \xc3\xa9 1");
	ck_assert_uint_eq(json_object_get_uint64(get(r, "result.client_id")),
	    c->id);
	ck_assert_str_eq(c->name, "agent \xc3\xa9 1");
	json_object_put(r);
	memset(name, 'n', 64);
	name[64] = '\0';
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"%s\"}}", name);
	r = call(line);
	ck_assert_str_eq(gets(r, "result.name"), name);
	json_object_put(r);
	strcat(name, "n");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"%s\"}}", name);
	expect_error(line, RPC_INVALID_PARAMS, "invalid_params",
	    "set_client_name");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"\"}}",
	    RPC_INVALID_PARAMS, "invalid_params", "set_client_name");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"a\\nb\"}}",
	    RPC_INVALID_PARAMS, "invalid_params", "set_client_name");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":7}}",
	    RPC_INVALID_PARAMS, "invalid_params", "set_client_name");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\"}", RPC_INVALID_PARAMS, "invalid_params",
	    "set_client_name");
	/* Refused names leave the last good one in place. */
	ck_assert_uint_eq(strlen(c->name), 64);
}
END_TEST

/* Set a token and connect again over TCP, or a Unix socket. */
static void
use_token(const char *tok, int is_unix)
{
	srv.token = strdup(tok);
	srv.tokenlen = strlen(tok);
	server_conn_free(&srv, c);
	c = server_conn_new(&srv, NULL, out, is_unix, "test");
}

START_TEST(auth_required)
{
	json_object	*r;

	use_token("s3cret", 0);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
	    RPC_UNAUTHORIZED, "unauthorized", "ping");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{}}", RPC_UNAUTHORIZED, "unauthorized", "initialize");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}",
	    RPC_UNAUTHORIZED, "unauthorized", "nope");
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"authenticate\","
	    "\"params\":{\"token\":\"s3cret\"}}");
	ck_assert(json_object_get_boolean(get(r, "result.authenticated")));
	json_object_put(r);
	expect_alive();
	ck_assert_int_eq(c->closing, 0);
}
END_TEST

START_TEST(auth_three_strikes)
{
	static const char *bad[] = { "s3cre", "s3cret!", "S3CRET" };
	char	line[160];
	int	i;

	use_token("s3cret", 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(c->closing, 0);
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"authenticate\",\"params\":{\"token\":"
		    "\"%s\"}}", bad[i]);
		expect_error(line, RPC_UNAUTHORIZED, "unauthorized",
		    "authenticate");
	}
	ck_assert_int_eq(c->closing, 1);
	ck_assert_int_eq(c->authenticated, 0);
}
END_TEST

START_TEST(auth_unix_trusted)
{
	use_token("s3cret", 1);
	expect_alive();
	ck_assert(server_token_ok(&srv, "s3cret", 6));
	ck_assert(!server_token_ok(&srv, "s3cretX", 7));
	ck_assert(!server_token_ok(&srv, "", 0));
}
END_TEST

START_TEST(details_and_list)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_tool_details\","
	    "\"params\":{\"name\":\"shell\"}}");
	ck_assert_str_eq(gets(r, "result.name"), "shell");
	ck_assert(!json_object_get_boolean(get(r, "result.enabled")));
	ck_assert_str_eq(gets(r, "result.tier"), "heavy");
	ck_assert_int_eq(json_object_get_int(get(r, "result.timeout_s")), 600);
	ck_assert_str_eq(gets(r, "result.params.type"), "object");
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

START_TEST(mcp_initialize)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"inspector\",\"version\":\"1\"}}}");
	ck_assert_str_eq(gets(r, "result.protocolVersion"), "2025-03-26");
	ck_assert(json_object_get_boolean(
	    get(r, "result.capabilities.tools.listChanged")));
	ck_assert_str_eq(gets(r, "result.serverInfo.name"), "cmdgate");
	ck_assert_str_eq(gets(r, "result.serverInfo.version"),
	    PACKAGE_VERSION);
	ck_assert_str_eq(c->name, "inspector");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"1999-01-01\"}}");
	ck_assert_str_eq(gets(r, "result.protocolVersion"), "2025-06-18");
	json_object_put(r);
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}"));
}
END_TEST

START_TEST(mcp_tools_list)
{
	json_object	*r, *list, *t;
	size_t		 i, n;
	int		 saw_echo = 0, saw_poll = 0;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	list = get(r, "result.tools");
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		t = json_object_array_get_idx(list, i);
		ck_assert_str_ne(gets(t, "name"), "shell");
		ck_assert_str_eq(gets(t, "inputSchema.type"), "object");
		saw_echo |= strcmp(gets(t, "name"), "echo") == 0;
		saw_poll |= strcmp(gets(t, "name"), "poll_job") == 0;
	}
	ck_assert(saw_echo && saw_poll);
	json_object_put(r);
}
END_TEST

START_TEST(server_status)
{
	json_object	*r;

	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server_status\"}");
	ck_assert_str_eq(gets(r, "result.version"), PACKAGE_VERSION);
	ck_assert_int_eq(json_object_get_int(get(r, "result.clients")), 1);
	ck_assert_str_eq(gets(r, "result.store.path"), "/nonexistent/store");
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

/* A batch of n pings, ids 0 to n - 1.  Caller frees. */
static char *
ping_batch(size_t n)
{
	char	*line = malloc(64 * n + 16);
	size_t	 i, off = 0;

	line[off++] = '[';
	for (i = 0; i < n; i++)
		off += (size_t)sprintf(line + off, "%s{\"jsonrpc\":\"2.0\","
		    "\"id\":%zu,\"method\":\"ping\"}", i > 0 ? "," : "", i);
	strcpy(line + off, "]");
	return line;
}

/* A batch of at most --max-rpc-batch requests; beyond, one -32600. */
START_TEST(batch_cap)
{
	json_object	*r;
	char		*line;

	ck_assert_uint_eq(opt.max_rpc_batch, 100);
	line = ping_batch(101);
	r = call(line);
	free(line);
	assert_error(r, RPC_INVALID_REQUEST, "invalid_request", NULL);
	ck_assert_ptr_nonnull(strstr(gets(r, "error.data.reason"),
	    "--max-rpc-batch"));
	ck_assert_ptr_null(get(r, "id"));
	json_object_put(r);
	line = ping_batch(100);
	r = call(line);
	free(line);
	ck_assert(json_object_is_type(r, json_type_array));
	ck_assert_uint_eq(json_object_array_length(r), 100);
	json_object_put(r);
	expect_alive();
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
	ck_assert_ptr_nonnull(strstr(gets(r, "error.data.reason"),
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
	ck_assert_ptr_nonnull(strstr(gets(r, "error.data.reason"),
	    "--max-waits-total 3"));
	json_object_put(r);
	/* Once answered, the room is back (no store here: another error). */
	conn_complete(p[0], NULL, NULL);
	ck_assert_uint_eq(srv.cs.npending, 2);
	free(evbuffer_readln(out, NULL, EVBUFFER_EOL_LF));
	r = call(wait);
	ck_assert_str_ne(gets(r, "error.data.type"), "too_many_waits");
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

/* RFC 8259 and RFC 3629 on input: what json-c alone let through. */
START_TEST(strict_json)
{
	static const char *bad[] = {
		"\xed\xa0\x80",		/* a surrogate in UTF-8 */
		"\xc0\xaf",		/* overlong */
		"\xf4\x90\x80\x80",	/* above U+10FFFF */
		"\\ud800",		/* a lone surrogate escape */
	};
	static const char *numbers[] = {
		"NaN", "Infinity", "-Infinity", "1e999",
		"18446744073709551616", "-9223372036854775809",
	};
	char		 line[256];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"ping\",\"params\":{\"message\":\"a%sb\"}}",
		    bad[i]);
		expect_error(line, RPC_PARSE_ERROR, "parse_error", NULL);
	}
	for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"ping\",\"params\":{\"message\":%s}}",
		    numbers[i]);
		expect_error(line, RPC_PARSE_ERROR, "parse_error", NULL);
		/* An id that would be clamped is refused, not changed. */
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"ping\"}", numbers[i]);
		expect_error(line, RPC_PARSE_ERROR, "parse_error", NULL);
	}
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"a\\u0000b\":1}}", RPC_PARSE_ERROR, "parse_error",
	    NULL);
	expect_alive();
}
END_TEST

/* JSON that is no request at all is -32600, JSON null included. */
START_TEST(not_requests)
{
	static const char *values[] = { "null", "true", "false", "\"x\"",
	    "-1.5", "0" };
	json_object	*r;
	size_t		 i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		expect_error(values[i], RPC_INVALID_REQUEST, "invalid_request",
		    NULL);
	r = call("[null,1,{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
	ck_assert_uint_eq(json_object_array_length(r), 3);
	assert_error(json_object_array_get_idx(r, 0), RPC_INVALID_REQUEST,
	    "invalid_request", NULL);
	assert_error(json_object_array_get_idx(r, 1), RPC_INVALID_REQUEST,
	    "invalid_request", NULL);
	json_object_put(r);
	expect_alive();
}
END_TEST

/* U+0000 in a method name or in any string of params is refused. */
START_TEST(nul_refused)
{
	json_object	*r;

	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\\u0000xyz\"}", RPC_INVALID_REQUEST, "invalid_request",
	    NULL);
	expect_error("{\"jsonrpc\":\"2.0\\u0000\",\"id\":1,\"method\":"
	    "\"ping\"}", RPC_INVALID_REQUEST, "invalid_request", "ping");
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"safe\\u0000; rm\"}}]}}");
	assert_error(r, RPC_INVALID_PARAMS, "invalid_params", "batch_execute");
	ck_assert_ptr_nonnull(strstr(gets(r, "error.data.reason"),
	    "params.commands[0].params.text holds U+0000"));
	json_object_put(r);
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"\\u0000\"}}", RPC_INVALID_PARAMS,
	    "invalid_params", "ping");
	/* Not answered as a notification, like every other error. */
	ck_assert_ptr_null(call("{\"jsonrpc\":\"2.0\",\"method\":\"ping\","
	    "\"params\":{\"message\":\"\\u0000\"}}"));
	/* An id is only echoed: U+0000 in it comes back as it went. */
	r = call("{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":"
	    "\"ping\"}");
	ck_assert_int_eq(json_object_get_string_len(get(r, "id")), 3);
	json_object_put(r);
	expect_alive();
}
END_TEST

/* Wrong tokens per address: lockouts that double, shared by an address. */
START_TEST(auth_limit_per_address)
{
	struct authlimit	*al = authlimit_new();
	int64_t			 t = 1000000;
	char			 peer[64];
	int			 i;

	ck_assert_int_eq(authlimit_failed(al, "127.0.0.1:4000", t), 0);
	ck_assert_int_eq(authlimit_failed(al, "127.0.0.2:4001", t), 0);
	/* The third from the loopback, whatever its address or family. */
	ck_assert_int_eq(authlimit_failed(al, "[::1]:4002", t), 1);
	ck_assert_int_eq(authlimit_locked(al, "127.9.9.9:1", t + 500), 1);
	ck_assert_int_eq(authlimit_locked(al, "[::ffff:127.0.0.1]:1", t), 1);
	ck_assert_int_eq(authlimit_locked(al, "10.0.0.1:1", t), 0);
	ck_assert_int_eq(authlimit_locked(al, "127.0.0.1:4000", t + 1000), 0);
	ck_assert_int_eq(authlimit_failed(al, "127.0.0.1:4000", t + 1000), 2);
	ck_assert_int_eq(authlimit_failed(al, "127.0.0.1:4000", t + 3000), 4);
	for (i = 0; i < 10; i++)
		authlimit_failed(al, "127.0.0.1:4000", t + 10000);
	ck_assert_int_eq(authlimit_locked(al, "127.0.0.1:9", t + 10000),
	    AUTHLIMIT_LOCK_MAX_S);
	/* IPv6 counts by /64. */
	for (i = 0; i < 3; i++) {
		snprintf(peer, sizeof(peer), "[2001:db8::%d]:5", i + 1);
		authlimit_failed(al, peer, t);
	}
	ck_assert_int_eq(authlimit_locked(al, "[2001:db8::ffff]:5", t), 1);
	ck_assert_int_eq(authlimit_locked(al, "[2001:db8:0:1::1]:5", t), 0);
	/* Forgotten after a quiet while. */
	t += (AUTHLIMIT_LOCK_MAX_S + AUTHLIMIT_FORGET_S) * 1000LL;
	ck_assert_int_eq(authlimit_failed(al, "127.0.0.1:4000", t), 0);
	/* A full table reuses the oldest entry, and stays bounded. */
	for (i = 0; i < 3 * AUTHLIMIT_PEERS; i++) {
		snprintf(peer, sizeof(peer), "10.%d.%d.1:80", i / 250, i % 250);
		authlimit_failed(al, peer, t + i);
	}
	ck_assert_int_eq(authlimit_failed(al, "10.0.0.1:80", t + 5000), 0);
	ck_assert_int_eq(authlimit_failed(al, "10.0.0.1:80", t + 5000), 0);
	/* The most recent ones are kept: a third wrong token locks. */
	ck_assert_int_eq(authlimit_failed(al, "10.3.17.1:80", t + 5000), 0);
	ck_assert_int_eq(authlimit_failed(al, "10.3.17.1:80", t + 5000), 1);
	authlimit_free(al);
}
END_TEST

static Suite *
rpc_suite(void)
{
	Suite	*s = suite_create("rpc");
	TCase	*tc = tcase_create("rpc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ping_echo);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, parse_error_depth);
	tcase_add_test(tc, invalid_requests);
	tcase_add_test(tc, ids_echoed);
	tcase_add_test(tc, notifications_silent);
	tcase_add_test(tc, batches);
	tcase_add_test(tc, params_and_methods);
	tcase_add_test(tc, client_name);
	tcase_add_test(tc, auth_required);
	tcase_add_test(tc, auth_three_strikes);
	tcase_add_test(tc, auth_unix_trusted);
	tcase_add_test(tc, details_and_list);
	tcase_add_test(tc, editor_state);
	tcase_add_test(tc, mcp_initialize);
	tcase_add_test(tc, mcp_tools_list);
	tcase_add_test(tc, server_status);
	tcase_add_test(tc, tools_changed_notification);
	tcase_add_test(tc, unread_output_bound);
	tcase_add_test(tc, batch_cap);
	tcase_add_test(tc, waits_capped);
	tcase_add_test(tc, conn_table);
	tcase_add_test(tc, strict_json);
	tcase_add_test(tc, not_requests);
	tcase_add_test(tc, nul_refused);
	tcase_add_test(tc, auth_limit_per_address);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(rpc_suite());
}
