/* SPDX-License-Identifier: ISC */
/*
 * Issue 18.3: a batch_execute repeated with the same idempotency key (and
 * agent) within --result-ttl answers the first job with deduplicated:
 * true whatever state it is in (queued, running, done, failed,
 * cancelled), async and sync, through MCP tools/call with a key, and
 * after a broker restart (the key is in the store).
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

#define REPEAT	"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"batch_execute\"," \
		"\"params\":{\"commands\":%s,\"async\":%s,\"agent\":\"a1\"," \
		"\"idempotency_key\":\"%s\"}}"

/* Submit commands with key: its ticket in t. */
static void
keyed(char t[32], const char *commands, const char *key)
{
	char	more[128];

	snprintf(more, sizeof(more), "\"idempotency_key\":\"%s\","
	    "\"agent\":\"a1\",\"notify\":true", key);
	submit(t, commands, more);
}

/* Submit commands with key again, async: the first job, deduplicated. */
static void
again_async(const char *t, const char *commands, const char *key,
    const char *status)
{
	json_object	*r;

	r = callf(REPEAT, commands, "true", key);
	ck_assert_str_eq(str(r, "result.ticket"), t);
	ck_assert_str_eq(str(r, "result.status"), status);
	ck_assert(json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
}

/* The same, sync, on a finished job: its final object, deduplicated. */
static void
again_sync(const char *t, const char *commands, const char *key,
    const char *status)
{
	json_object	*r;

	r = callf(REPEAT, commands, "false", key);
	ck_assert_str_eq(str(r, "result.ticket"), t);
	ck_assert_str_eq(str(r, "result.status"), status);
	ck_assert(json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
}

/* The sync repeat of an unfinished job, sent on a connection of its own. */
static struct client *
again_sync_send(const char *commands, const char *key)
{
	struct client	*c2 = client_tcp(b.port);
	char		 line[1024];

	snprintf(line, sizeof(line), REPEAT "\n", commands, "false", key);
	client_send(c2, line);
	return c2;
}

/* Its answer, once the job ended. */
static void
again_sync_end(struct client *c2, const char *t, const char *status)
{
	json_object	*r;
	char		*l;

	ck_assert_ptr_nonnull(l = client_line(c2));
	r = json_tokener_parse(l);
	free(l);
	ck_assert_str_eq(str(r, "result.ticket"), t);
	ck_assert_str_eq(str(r, "result.status"), status);
	ck_assert(json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
	client_close(c2);
}

static const char	*hold = "[{\"tool\":\"run_tests\"}]";
static const char	*echo = "[{\"tool\":\"echo\",\"params\":{\"text\":"
			    "\"once\"}}]";

START_TEST(idem_queued_and_running)
{
	char		 run[32], q[32];
	struct client	*s1, *s2;
	json_object	*r;

	start_with("heavy", NULL);
	keyed(run, hold, "kr");
	await_status(run, "running");
	keyed(q, hold, "kq");
	again_async(run, hold, "kr", "running");
	again_async(q, hold, "kq", "queued");
	s1 = again_sync_send(hold, "kr");
	s2 = again_sync_send(hold, "kq");
	/* Both are waited on (a ping after each is answered first). */
	r = client_call(s1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\"}");
	json_object_put(r);
	r = client_call(s2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\"}");
	json_object_put(r);
	release();
	again_sync_end(s1, run, "done");
	await_status(q, "running");
	release();
	again_sync_end(s2, q, "done");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"list_jobs\"}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")), 2);
	json_object_put(r);
}
END_TEST

START_TEST(idem_finished)
{
	char		 d[32], f[32], run[32], x[32];
	json_object	*r;

	start_with("heavy", NULL);
	keyed(d, echo, "kd");
	json_object_put(wait_done(d));
	keyed(f, "[{\"tool\":\"fail\"}]", "kf");
	json_object_put(wait_done(f));
	submit(run, hold, "\"notify\":true");
	await_status(run, "running");
	keyed(x, hold, "kx");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", x);
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
	release();
	wait_end(run, "done");
	again_async(d, echo, "kd", "done");
	again_sync(d, echo, "kd", "done");
	again_async(f, "[{\"tool\":\"fail\"}]", "kf", "failed");
	again_sync(f, "[{\"tool\":\"fail\"}]", "kf", "failed");
	again_async(x, hold, "kx", "cancelled");
	again_sync(x, hold, "kx", "cancelled");
	/* The key lives in the store: the same after a restart. */
	client_close(c);
	c = NULL;
	crash_restart();
	again_async(d, echo, "kd", "done");
	again_sync(d, echo, "kd", "done");
	again_sync(x, hold, "kx", "cancelled");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"list_jobs\"}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")), 4);
	json_object_put(r);
}
END_TEST

/* A first call is not deduplicated; a repeated tools/call with a key is. */
START_TEST(idem_mcp)
{
	json_object	*r;
	const char	*call = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
			    "\"tools/call\",\"params\":{\"name\":\"echo\","
			    "\"arguments\":{\"text\":\"once\"},\"_meta\":{"
			    "\"cmdgate/idempotency_key\":\"m1\"}}}";

	start_with("heavy", NULL);
	r = callf(call, 1);
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	ck_assert(!json_object_get_boolean(jpath(r,
	    "result.structuredContent.deduplicated")));
	json_object_put(r);
	r = callf(call, 2);
	ck_assert_str_eq(str(r, "result.structuredContent.ticket"),
	    "t-000000");
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.structuredContent.deduplicated")));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":%s}}", echo);
	ck_assert_ptr_null(jpath(r, "result.deduplicated"));
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("idem");
	TCase	*tc = tcase_create("idem");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, idem_queued_and_running);
	tcase_add_test(tc, idem_finished);
	tcase_add_test(tc, idem_mcp);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
