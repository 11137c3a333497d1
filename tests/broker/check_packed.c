/* SPDX-License-Identifier: ISC */
/*
 * Queued jobs recovered from their status byte (store schema 2): the
 * record of such a job is read only when it is shown, cancelled or
 * started, so a damaged one is found then.  It never stops the broker or
 * the queue: views say it cannot be read, a cancel takes it, and at its
 * start it fails saying why, and the queue goes on; as it does after a
 * job whose tool left the table.
 */
#include "config.h"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <lmdb.h>

#include "ckrun.h"
#include "recutil.h"
#include "testnet.h"

#define HEAVY_PACKED	((char)0x82)	/* queued, heavy, no reload/busy */

/* The tools named submitted in order (tickets from 0), then a clean stop. */
static void
stopped_with(const char *first, ...)
{
	const char	*tool;
	va_list		 ap;
	int		 n = 0;

	start(NULL);
	va_start(ap, first);
	for (tool = first; tool != NULL; tool = va_arg(ap, const char *))
		ck_assert_int_eq(submit_num(tool, "{}"), n++);
	va_end(ap);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
}

/*
 * Schema 2 packs a queued job's class into its status byte.  A schema 1
 * store (its queued records say 'q') is read and goes on as schema 2; a
 * store of a newer schema is refused, its jobs untouched.
 */
START_TEST(schema_versions)
{
	json_object	*r;

	stopped_with("hold", "later", NULL);
	ck_assert_int_eq(schema(0), 2);
	ck_assert_int_eq(schema(3), 3);
	ck_assert_int_eq(run(NULL), 78);
	ck_assert_int_ge(broker_log_count(&b, "written by a newer cmdgated"),
	    1);
	ck_assert_int_eq(schema(1), 1);
	start(NULL);
	ck_assert_int_eq(schema(0), 2);
	r = wait_num(1);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

/*
 * A packed record that reads but has not the shape of a job, and a
 * first-schema one without results: shown, listed and cancelled while
 * queued, the broker serving on.
 */
START_TEST(damaged_while_queued)
{
	json_object	*r;

	stopped_with("hold", "hold", "later", "later", NULL);
	plant_one(2, HEAVY_PACKED, "{\"ticket\":\"t-000002\",\"status\":"
	    "\"queued\",\"agent\":\"eve\",\"label\":\"mine\"}");
	plant_one(3, 'q', "{\"ticket\":\"t-000003\",\"status\":\"queued\","
	    "\"tier\":\"heavy\",\"agent\":\"ann\",\"created_at\":"
	    "\"2026-01-01T00:00:00.000Z\",\"commands\":[{\"tool\":\"later\","
	    "\"exec\":[\"true\"],\"timeout_s\":60}]}");
	start(NULL);	/* t-000001 runs (hold) and holds the rest */
	r = poll_num(2);
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32004);
	ck_assert_ptr_nonnull(strstr(str(r, "error.data.reason"),
	    "malformed"));
	json_object_put(r);
	r = poll_num(3);	/* t-000002 ahead of it, unreadable */
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.progress.completed")), 0);
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_jobs\","
	    "\"params\":{\"agent\":\"x\"}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 0);
	json_object_put(r);
	ck_assert_int_eq(broker_log_count(&b, "t-000002: its stored record "
	    "cannot be read"), 1);	/* said once, not at every view */
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"t-000002\"}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	json_object_put(r);
	r = poll_num(2);
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	ck_assert_str_eq(str(r, "result.agent"), "eve");
	ck_assert_str_eq(str(r, "result.label"), "mine");
	json_object_put(r);
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.queued")), 1);
	json_object_put(r);
	release();
	r = wait_num(3);	/* the first-schema record runs */
	ck_assert_str_eq(str(r, "result.status"), "done");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.results")),
	    1);
	json_object_put(r);
}
END_TEST

/* A damaged packed record fails at its start; the job behind it runs. */
START_TEST(damaged_at_start_queue_goes_on)
{
	json_object	*r;

	stopped_with("hold", "later", "later", NULL);
	plant_one(1, HEAVY_PACKED, "{not json");
	start(NULL);
	r = wait_num(1);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "could not be read when it was to start (not JSON"));
	json_object_put(r);
	/* Nothing else happens: the failure itself starts the next one. */
	r = wait_num(2);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

/* A status byte that packs nothing valid: the record is still read. */
START_TEST(bad_byte_keeps_record)
{
	json_object	*r;

	stopped_with("hold", "later", NULL);
	plant_one(1, (char)0x83, "{\"ticket\":\"t-000001\",\"status\":"
	    "\"queued\",\"tier\":\"heavy\",\"agent\":\"eve\",\"label\":"
	    "\"mine\",\"created_at\":\"2026-01-01T00:00:00.000Z\","
	    "\"commands\":[{\"tool\":\"later\"}],\"results\":[]}");
	start(NULL);
	r = poll_num(1);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_str_eq(str(r, "result.agent"), "eve");
	ck_assert_str_eq(str(r, "result.label"), "mine");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "an unknown status"));
	json_object_put(r);
}
END_TEST

/*
 * A queued job whose tool left the table (SIGHUP) fails when it comes to
 * start; that failure, not a worker's end, starts the job behind it.
 */
START_TEST(tool_gone_queue_goes_on)
{
	json_object	*r;

	write_table("{\"name\":\"later\",\"tier\":\"heavy\",\"exec\":"
	    "[\"true\"]},{\"name\":\"other\",\"tier\":\"heavy\","
	    "\"exec\":[\"true\"]}");
	start(NULL);
	ck_assert_int_eq(submit_num("hold", "{}"), 0);
	ck_assert_int_eq(submit_num("later", "{}"), 1);
	ck_assert_int_eq(submit_num("other", "{}"), 2);
	write_table("{\"name\":\"other\",\"tier\":\"heavy\",\"exec\":"
	    "[\"true\"]}");
	kill(b.pid, SIGHUP);
	ck_assert_int_ge(broker_await_log(&b, "(2 tools)"), 1);
	release();
	r = wait_num(1);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "tool 'later' is no longer in the tool table"));
	json_object_put(r);
	r = wait_num(2);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("packed");
	TCase	*tc = tcase_create("packed");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, schema_versions);
	tcase_add_test(tc, damaged_while_queued);
	tcase_add_test(tc, damaged_at_start_queue_goes_on);
	tcase_add_test(tc, bad_byte_keeps_record);
	tcase_add_test(tc, tool_gone_queue_goes_on);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
