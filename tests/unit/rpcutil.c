/* SPDX-License-Identifier: ISC */
/*
 * The in-process server, connection and answer checks the dispatch suites
 * share (check_rpc, check_methods).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "../../src/daemon/daemon.h"
#include "ckrun.h"
#include "net.h"
#include "rpcutil.h"
#include "server.h"
#include "tools.h"

struct options	 opt;
struct server	 srv;
struct evbuffer	*out;
struct conn	*c;

void
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

void
teardown(void)
{
	server_free(&srv);
	evbuffer_free(out);
	options_free(&opt);
}

/* Send one line; return the one answer (caller puts) or NULL for none. */
json_object *
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

json_object *
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

const char *
getstr(json_object *o, const char *path)
{
	return json_object_get_string(get(o, path));
}

/* The answer is an error with this code and type, and all data members. */
void
assert_error(json_object *r, int code, const char *type, const char *cmd)
{
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_get_int(get(r, "error.code")), code);
	ck_assert_str_eq(getstr(r, "error.data.type"), type);
	ck_assert(json_object_get_string_len(get(r, "error.data.reason")) > 0);
	ck_assert(json_object_is_type(get(r, "error.message"),
	    json_type_string));
	if (cmd == NULL)
		ck_assert_ptr_null(get(r, "error.data.command"));
	else
		ck_assert_str_eq(getstr(r, "error.data.command"), cmd);
}

void
expect_error(const char *line, int code, const char *type, const char *cmd)
{
	json_object	*r = call(line);

	assert_error(r, code, type, cmd);
	json_object_put(r);
}

void
expect_alive(void)
{
	json_object	*r = call("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"ping\"}");

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_get_int(get(r, "id")), 7);
	ck_assert(json_object_is_type(get(r, "result"), json_type_object));
	json_object_put(r);
}
