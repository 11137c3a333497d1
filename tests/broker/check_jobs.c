/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end, the core lifecycle: submit, wait, cancel, results,
 * validation, the queue, restarts and storage.  The real broker with real
 * workers; tools that must stay running block on a FIFO the test opens
 * when it wants them to end, so every wait is on an event, not on time.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"

START_TEST(cancel_stubborn_worker)
{
	char		 tests[32], reload[32], marker[300];
	json_object	*r;

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"stubborn\"}]", "\"notify\":true");
	await_status(tests, "running");
	/* Its tool runs (and ignores SIGTERM) before the cancel comes. */
	snprintf(marker, sizeof(marker), "%s.started", fifo);
	ck_assert_int_eq(wait_for_file(marker), 0);
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}},{\"tool\":\"echo\","
	    "\"params\":{\"text\":\"after\"}}]", "\"label\":\"rebuild\"");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", tests);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "running");
	json_object_put(r);
	/* The tool ignores SIGTERM: its worker lives, the reload waits. */
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	r = wait_done(tests);
	ck_assert_str_eq(str(r, "status"), "cancelled");
	ck_assert_str_eq(str(r, "error"), "cancelled");
	json_object_put(r);
	r = wait_done(reload);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "label"), "rebuild");
	ck_assert_str_eq(str(r, "results.1.stdout"), "after\n");
	json_object_put(r);
	/* Finished: cancel says no. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", tests);
	ck_assert(!json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
}
END_TEST

START_TEST(cancel_queued)
{
	char		 tests[32], q[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	submit(q, "[{\"tool\":\"run_tests\"}]", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", q);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
	release();
	wait_end(tests, "done");
}
END_TEST

START_TEST(failures_and_results)
{
	char		 t[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"fail\"},{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"still runs\"}}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_int_eq(json_object_get_int(jpath(r, "failed_at_command")), 0);
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.exit_code")),
	    3);
	ck_assert_str_eq(str(r, "results.1.stdout"), "still runs\n");
	json_object_put(r);
	/* A program that cannot be run: said why, with no exit code. */
	submit(t, "[{\"tool\":\"missing\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error"), "cannot run "
	    "'/nonexistent/tool': No such file or directory");
	ck_assert_ptr_null(jpath(r, "results.0.exit_code"));
	json_object_put(r);
	/* Tools get SIGPIPE as a fresh process has it: "yes" ends. */
	submit(t, "[{\"tool\":\"pipe\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.stdout"), "y\n");
	/* Not "yes: standard output: Broken pipe", as with it ignored. */
	ck_assert_str_eq(str(r, "results.0.stderr"), "");
	json_object_put(r);
	submit(t, "[{\"tool\":\"fail\"},{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"x\"}}]", "\"atomic\":true");
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_int_eq(json_object_array_length(jpath(r, "results")), 1);
	ck_assert(!json_object_get_boolean(jpath(r, "rolled_back")));
	ck_assert(json_object_get_boolean(jpath(r, "atomic")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"crash\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.signal"), "SIGSEGV");
	json_object_put(r);
	submit(t, "[{\"tool\":\"slow\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.timed_out")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"flood\"}]", NULL);
	r = wait_done(t);
	ck_assert_msg(strcmp(str(r, "status"), "done") == 0, "flood: %.300s",
	    json_object_to_json_string(jpath(r, "error")));
	ck_assert(json_object_get_boolean(jpath(r, "results.0.truncated")));
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stdout")), 65536);
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

START_TEST(validation_errors)
{
	const char	*args[] = { "--max-batch", "2", NULL };

	start_with("heavy", args);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{}}"), -32602, "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"fail\"},"
	    "{\"tool\":\"fail\"},{\"tool\":\"fail\"}]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"nope\"}]}}"),
	    -32602, "unknown_tool");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"locked\"}]}}"),
	    -32001, "security_blocked");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"echo\"}]}}"),
	    -32602, "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"echo\","
	    "\"params\":{\"text\":\"a\",\"n\":\"x\"}}]}}"), -32602,
	    "invalid_params");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"poll_job\",\"params\":{\"ticket\":\"t-999999\"}}"), -32002,
	    "unknown_ticket");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"cancel_job\",\"params\":{\"ticket\":\"bogus\"}}"), -32002,
	    "unknown_ticket");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"t-000000\",\"timeout_s\":"
	    "3601}}"), -32602, "invalid_params");
}
END_TEST

START_TEST(queue_full)
{
	const char	*args[] = { "--max-queued", "1", NULL };
	char		 t1[32], t2[32];

	start_with("heavy", args);
	submit(t1, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t1, "running");
	submit(t2, "[{\"tool\":\"run_tests\"}]", NULL);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":"
	    "\"run_tests\"}],\"async\":true}}"), -32003, "queue_full");
	release();
}
END_TEST

START_TEST(idempotency)
{
	char		 t1[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t1, "[{\"tool\":\"echo\",\"params\":{\"text\":\"once\"}}]",
	    "\"idempotency_key\":\"k1\",\"agent\":\"a1\"");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"once\"}}],\"async\":true,\"idempotency_key\":\"k1\","
	    "\"agent\":\"a1\"}}");
	ck_assert_str_eq(str(r, "result.ticket"), t1);
	ck_assert(json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
	/* Another agent's key is another job. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"once\"}}],\"async\":true,\"idempotency_key\":\"k1\","
	    "\"agent\":\"a2\"}}");
	ck_assert_str_ne(str(r, "result.ticket"), t1);
	ck_assert(!json_object_get_boolean(jpath(r, "result.deduplicated")));
	json_object_put(r);
}
END_TEST

START_TEST(sync_execute_and_list)
{
	json_object	*r;

	start_with("heavy", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"set_client_name\","
	    "\"params\":{\"name\":\"lister\"}}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"sync\"}}]}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 5);
	ck_assert_str_eq(str(r, "result.status"), "done");
	ck_assert_str_eq(str(r, "result.agent"), "lister");
	ck_assert_str_eq(str(r, "result.results.0.stdout"), "sync\n");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"fail\"}],\"agent\":\"x\"}}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"agent\":\"lister\"}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"status\":[\"failed\"]}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	ck_assert_str_eq(str(r, "result.jobs.0.agent"), "x");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"limit\":1}}");
	ck_assert_str_eq(str(r, "result.next"), "t-000000");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"limit\":1,\"after\":\"t-000000\"}}");
	ck_assert_str_eq(str(r, "result.jobs.0.ticket"), "t-000001");
	ck_assert_ptr_null(jpath(r, "result.next"));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"server_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.done")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.failed")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.store.jobs")), 2);
	json_object_put(r);
}
END_TEST

/* A waiting answer does not hold back the ones behind it. */
START_TEST(wait_does_not_block)
{
	char		 t[32], *l;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", NULL);
	client_send(c, "{\"jsonrpc\":\"2.0\",\"id\":100,\"method\":\"wait_job\","
	    "\"params\":{\"ticket\":\"");
	client_send(c, t);
	client_send(c, "\"}}\n{\"jsonrpc\":\"2.0\",\"id\":101,\"method\":"
	    "\"ping\"}\n");
	l = client_line(c);
	ck_assert_ptr_nonnull(strstr(l, "\"id\":101"));
	free(l);
	release();
	l = client_line(c);
	ck_assert_ptr_nonnull(strstr(l, "\"id\":100"));
	ck_assert_ptr_nonnull(strstr(l, "\"status\":\"done\""));
	free(l);
}
END_TEST

START_TEST(mcp_tools_call)
{
	json_object	*r;

	start_with("heavy", NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"mcp\"}}}");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	ck_assert_str_eq(str(r, "result.content.0.type"), "text");
	ck_assert_str_eq(str(r, "result.content.0.text"), "mcp\n");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"fail\"}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"queue_status\"}}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.structuredContent.queued")), 0);
	json_object_put(r);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"nope\"}}"), -32602,
	    "unknown_tool");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"locked\"}}"), -32001,
	    "security_blocked");
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{}}}"),
	    -32602, "invalid_params");
}
END_TEST

/*
 * Issue 18.1: a tools/call with params._meta["cmdgate/idempotency_key"]
 * (cmdgate mcp gives one to every call) sent again finds its job: the
 * same ticket, no second run; another key is another job; a key that is
 * not a string of 1 to 256 bytes is refused.
 */
START_TEST(mcp_tools_call_key)
{
	char		 t1[32];
	json_object	*r;
	const char	*call = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
			    "\"tools/call\",\"params\":{\"name\":\"echo\","
			    "\"arguments\":{\"text\":\"once\"},\"_meta\":{"
			    "\"cmdgate/idempotency_key\":%s}}}";

	start_with("heavy", NULL);
	r = callf(call, 1, "\"k1\"");
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	snprintf(t1, sizeof(t1), "%s", str(r, "result.structuredContent."
	    "ticket"));
	json_object_put(r);
	r = callf(call, 2, "\"k1\"");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 2);
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.ticket"), t1);
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"list_jobs\","
	    "\"params\":{}}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
	r = callf(call, 4, "\"k2\"");
	ck_assert_str_ne(str(r, "result.structuredContent.ticket"), t1);
	json_object_put(r);
	assert_error(callf(call, 5, "7"), -32602, "invalid_params");
	assert_error(callf(call, 6, "\"\""), -32602, "invalid_params");
}
END_TEST

/* kill -9 mid-job, restart: cmdgate-protocol(7), Durability. */
START_TEST(kill9_restart)
{
	char		 running[32], q1[32], q2[32], next[32];
	json_object	*r = NULL;
	const char	*st;
	struct timespec	 ts = { 0, 20 * 1000000 };
	int		 i;

	start_with("heavy", NULL);
	submit(running, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(running, "running");
	submit(q1, "[{\"tool\":\"run_tests\"}]", NULL);
	submit(q2, "[{\"tool\":\"refresh\"}]", NULL);
	client_close(c);
	c = NULL;
	crash_restart();
	r = poll_job(running);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_int_eq(strncmp(str(r, "result.error"),
	    "interrupted by broker restart", 29), 0);
	json_object_put(r);
	r = NULL;
	/*
	 * q1 starts once the old worker is gone; only then is its tool the
	 * one reading the FIFO.  No event tells a new connection, so poll.
	 */
	for (i = 0, st = ""; i < 500 && strcmp(st, "running") != 0; i++) {
		json_object_put(r);
		r = poll_job(q1);
		st = str(r, "result.status");
		if (strcmp(st, "running") != 0)
			nanosleep(&ts, NULL);
	}
	ck_assert_str_eq(st, "running");
	json_object_put(r);
	release();
	wait_end(q1, "done");
	wait_end(q2, "done");
	submit(next, "[{\"tool\":\"echo\",\"params\":{\"text\":\"n\"}}]", NULL);
	/*
	 * After a kill the counter goes on from the high-water mark kept
	 * beside the store (cmdgated(8)): past every ticket issued.
	 */
	ck_assert_str_eq(next, "t-001000");
	/*
	 * Nothing of the killed run is left: its worker was stopped by the
	 * new broker (or stopped itself on finding the broker gone), and
	 * took its tool along, so nobody reads the FIFO any more.
	 */
	ck_assert_int_eq(open(fifo, O_WRONLY | O_NONBLOCK), -1);
	ck_assert_int_eq(errno, ENXIO);
}
END_TEST

START_TEST(sigterm_interrupts_running)
{
	char		 t[32], q[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	submit(q, "[{\"tool\":\"run_tests\"}]", NULL);
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	ck_assert_int_eq(broker_start(&b, (const char *[]){ "--tools", tools,
	    "--kill-grace", "1", NULL }, 0), 0);
	c = client_tcp(b.port);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_int_eq(strncmp(str(r, "result.error"),
	    "interrupted by broker shutdown", 30), 0);
	json_object_put(r);
	r = poll_job(q);
	ck_assert_str_ne(str(r, "result.status"), "failed");
	json_object_put(r);
	release();
	wait_end(q, "done");
}
END_TEST

START_TEST(storage_full)
{
	const char	*args[] = { "--map-size", "1048576", "--map-size-max",
			    "1048576", NULL };
	char		 t[32];
	char		*big = malloc(100000), line[120000];
	json_object	*r;
	int		 i, full = 0;

	start_with("heavy", args);
	memset(big, 'b', 99999);
	big[99999] = '\0';
	for (i = 0; i < 40 && !full; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
		    "\"label\":\"x\",\"commands\":[{\"tool\":\"echo\",\"params\":"
		    "{\"text\":\"%s\"}}]}}", big);
		r = client_call(c, line);
		if (jpath(r, "result.ticket") != NULL) {
			json_object *job;

			snprintf(t, sizeof(t), "%s", str(r, "result.ticket"));
			job = wait_done(t);
			/* Done, or failed for lack of room: said so. */
			if (strcmp(str(job, "status"), "failed") == 0) {
				ck_assert_int_eq(strncmp(str(job, "error"),
				    "storage_error", 13), 0);
				full = 1;
			}
			json_object_put(job);
		} else if (jpath(r, "error") != NULL) {
			ck_assert_int_eq(json_object_get_int(
			    jpath(r, "error.code")), -32004);
			ck_assert_str_eq(str(r, "error.data.type"),
			    "storage_error");
			full = 1;
		}
		json_object_put(r);
	}
	free(big);
	ck_assert_msg(full, "the store never filled");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"queue_status\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

/* Each queued job's place, found from either end of the queue. */
START_TEST(queue_positions)
{
	char		 tests[32], t[5][32];
	json_object	*r;
	int		 i, want[5] = { 0, 1, -1, 2, 3 };

	start_with("heavy", NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	for (i = 0; i < 5; i++)
		submit(t[i], "[{\"tool\":\"fail\"}]", NULL);
	for (i = 0; i < 5; i++) {
		r = poll_job(t[i]);
		ck_assert_str_eq(str(r, "result.status"), "queued");
		ck_assert_int_eq(json_object_get_int(jpath(r,
		    "result.position")), i);
		/* The running heavy job, then those queued before it. */
		ck_assert_int_eq(json_object_array_length(jpath(r,
		    "result.ahead")), i + 1);
		ck_assert_str_eq(str(r, "result.ahead.0.ticket"), tests);
		json_object_put(r);
	}
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", t[2]);
	ck_assert(json_object_get_boolean(jpath(r, "result.cancelled")));
	json_object_put(r);
	for (i = 0; i < 5; i++) {
		r = poll_job(t[i]);
		if (want[i] < 0)
			ck_assert_str_eq(str(r, "result.status"), "cancelled");
		else
			ck_assert_int_eq(json_object_get_int(jpath(r,
			    "result.position")), want[i]);
		json_object_put(r);
	}
	release();
	wait_end(t[4], "failed");
}
END_TEST

/* The entry of a batch answer with the given id. */
static json_object *
batch_entry(json_object *arr, int id)
{
	size_t	i;

	for (i = 0; i < json_object_array_length(arr); i++)
		if (json_object_get_int(jpath(json_object_array_get_idx(arr,
		    i), "id")) == id)
			return json_object_array_get_idx(arr, i);
	ck_abort_msg("no answer with id %d", id);
	return NULL;
}

/*
 * Submits of one loop turn share one commit; one that does not fit (the
 * map may not grow) fails alone, takes no ticket; the others are stored.
 */
START_TEST(group_commit_fails_alone)
{
	const char	*args[] = { "--map-size", "1048576", "--map-size-max",
			    "1048576", NULL };
	size_t		 bigsz = 900 * 1000, len = bigsz + 1000;
	char		*big = malloc(bigsz), *line = malloc(len);
	json_object	*r, *e;

	start_with("heavy", args);
	memset(big, 'b', bigsz - 1);
	big[bigsz - 1] = '\0';
#define GROUP_SMALL(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":" \
	"\"batch_execute\",\"params\":{\"async\":true,\"commands\":" \
	"[{\"tool\":\"echo\",\"params\":{\"text\":\"s\"}}]}}"
	snprintf(line, len, "[" GROUP_SMALL(1) ",{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
	    "\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":\"%s\"}}]}},"
	    GROUP_SMALL(3) "]", big);
#undef GROUP_SMALL
	r = client_call(c, line);
	ck_assert_int_eq(json_object_get_type(r), json_type_array);
	ck_assert_str_eq(str(batch_entry(r, 1), "result.ticket"), "t-000000");
	e = batch_entry(r, 2);
	ck_assert_int_eq(json_object_get_int(jpath(e, "error.code")), -32004);
	ck_assert_str_eq(str(e, "error.data.type"), "storage_error");
	ck_assert_str_eq(str(batch_entry(r, 3), "result.ticket"), "t-000001");
	json_object_put(r);
	r = wait_done("t-000001");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	free(big);
	free(line);
}
END_TEST

/*
 * A submit's answer comes before the answer to the next request on the
 * connection, which already sees the job.
 */
START_TEST(submit_answered_in_order)
{
	const char	*two = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"echo\",\"params\":{\"text\":\"o\"}}]}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"list_jobs\"}";
	json_object	*r;
	char		*line;

	start_with("heavy", NULL);
	r = client_call(c, two);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 1);
	ck_assert_str_eq(str(r, "result.ticket"), "t-000000");
	json_object_put(r);
	ck_assert_ptr_nonnull(line = client_line(c));
	r = json_tokener_parse(line);
	free(line);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 2);
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
}
END_TEST

START_TEST(results_expire)
{
	const char	*args[] = { "--result-ttl", "1", NULL };
	char		 t[32];
	json_object	*r;
	int		 i, gone = 0;
	struct timespec	 ts = { 0, 100 * 1000000 };

	start_with("heavy", args);
	submit(t, "[{\"tool\":\"echo\",\"params\":{\"text\":\"e\"}}]", NULL);
	r = wait_done(t);
	json_object_put(r);
	/* Expiry has no event a client can wait on: poll, bounded. */
	for (i = 0; i < 50 && !gone; i++) {
		r = poll_job(t);
		gone = jpath(r, "error") != NULL;
		json_object_put(r);
		if (!gone)
			nanosleep(&ts, NULL);
	}
	ck_assert(gone);
}
END_TEST

START_TEST(sync_group)
{
	const char	*args[] = { "--sync", "group", NULL };
	json_object	*r;

	start_with("heavy", args);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"g\"}}]}}");
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("jobs");
	TCase	*tc = tcase_create("jobs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cancel_stubborn_worker);
	tcase_add_test(tc, cancel_queued);
	tcase_add_test(tc, failures_and_results);
	tcase_add_test(tc, validation_errors);
	tcase_add_test(tc, queue_full);
	tcase_add_test(tc, idempotency);
	tcase_add_test(tc, sync_execute_and_list);
	tcase_add_test(tc, wait_does_not_block);
	tcase_add_test(tc, mcp_tools_call);
	tcase_add_test(tc, mcp_tools_call_key);
	tcase_add_test(tc, kill9_restart);
	tcase_add_test(tc, sigterm_interrupts_running);
	tcase_add_test(tc, storage_full);
	tcase_add_test(tc, group_commit_fails_alone);
	tcase_add_test(tc, queue_positions);
	tcase_add_test(tc, submit_answered_in_order);
	tcase_add_test(tc, results_expire);
	tcase_add_test(tc, sync_group);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
