/* SPDX-License-Identifier: ISC */
/*
 * Dispatch: JSON-RPC envelope, every error path, client names and
 * authentication (fixture in rpcutil.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jstrict.h"
#include "net.h"
#include "options.h"
#include "rpcutil.h"
#include "server.h"
#include "tools.h"

START_TEST(ping_echo)
{
	json_object *r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"hello\"}}");

	ck_assert_str_eq(getstr(r, "jsonrpc"), "2.0");
	ck_assert_str_eq(getstr(r, "result.message"), "hello");
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
	ck_assert_str_eq(getstr(r, "id"), "k");
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
	ck_assert_str_eq(getstr(r, "result.name"), "agent \xc3\xa9 1");
	ck_assert_uint_eq(json_object_get_uint64(get(r, "result.client_id")),
	    c->id);
	ck_assert_str_eq(c->name, "agent \xc3\xa9 1");
	json_object_put(r);
	memset(name, 'n', 64);
	name[64] = '\0';
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"set_client_name\",\"params\":{\"name\":\"%s\"}}", name);
	r = call(line);
	ck_assert_str_eq(getstr(r, "result.name"), name);
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
	ck_assert_ptr_nonnull(strstr(getstr(r, "error.data.reason"),
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
	ck_assert_ptr_nonnull(strstr(getstr(r, "error.data.reason"),
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

/*
 * An error whose reason quotes what a client sent (an HTTP header that
 * is not UTF-8, http.c http_error_reply), or a quote cut inside a character: the
 * answer is still JSON, RFC 8259's UTF-8, each bad byte U+FFFD.
 */
START_TEST(error_reason_utf8)
{
	json_object	*r, *back;
	const char	*s;

	r = rpc_error_response(NULL, RPC_SECURITY_BLOCKED, "forbidden_host",
	    NULL, "Host 'caf\xe9' is not this broker; cut '\xc3'");
	s = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
	ck_assert_int_eq(jstrict_parse(s, strlen(s), &back), 0);
	ck_assert_str_eq(getstr(back, "error.data.reason"), "Host "
	    "'caf\xef\xbf\xbd' is not this broker; cut '\xef\xbf\xbd'");
	ck_assert_str_eq(getstr(back, "error.message"), "Host "
	    "'caf\xef\xbf\xbd' is not this broker; cut '\xef\xbf\xbd'");
	json_object_put(back);
	json_object_put(r);
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
	tcase_add_test(tc, batch_cap);
	tcase_add_test(tc, strict_json);
	tcase_add_test(tc, not_requests);
	tcase_add_test(tc, nul_refused);
	tcase_add_test(tc, auth_limit_per_address);
	tcase_add_test(tc, error_reason_utf8);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(rpc_suite());
}
