/* SPDX-License-Identifier: ISC */
/*
 * Faults injected under the real broker with a preload shim (tests/fault.c):
 * a full disk and a failed sync at commit, a failed spawn or spec write.
 * The caller gets storage_error, nothing is half-applied, the broker keeps
 * serving.
 */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "faultutil.h"

START_TEST(disk_full_at_commit)
{
	json_object	*r, *r2;

	ck_assert_str_eq(submit_ticket(&r), "t-000000");
	json_object_put(r);
	wait_done("t-000000");
	arm("enospc", 1);
	r = client_call(c, SUBMIT);
	assert_storage_error(r, "No space left on device");
	json_object_put(r);
	assert_serving();
	arm("enospc", 0);
	/* Nothing of the failed submit remains: the counter did not move. */
	ck_assert_str_eq(submit_ticket(&r2), "t-000001");
	json_object_put(r2);
}
END_TEST

/*
 * Submits of one loop turn share a commit: when writing it fails, every
 * one of them gets storage_error and none is queued.
 */
START_TEST(disk_full_fails_the_group)
{
	json_object	*r;
	size_t		 i;

	arm("enospc", 1);
	r = client_call(c, "[" SUBMIT "," SUBMIT "," SUBMIT "]");
	ck_assert_int_eq(json_object_array_length(r), 3);
	for (i = 0; i < 3; i++)
		assert_storage_error(json_object_array_get_idx(r, i),
		    "No space left on device");
	json_object_put(r);
	arm("enospc", 0);
	ck_assert_str_eq(submit_ticket(&r), "t-000000");
	json_object_put(r);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"list_jobs\"}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")), 1);
	json_object_put(r);
}
END_TEST

START_TEST(sync_failure_is_fail_stop)
{
	json_object	*r;

	arm("eio", 1);
	r = client_call(c, SUBMIT);
	assert_storage_error(r, "Input/output error");
	json_object_put(r);
	arm("eio", 0);
	/* The disk claims to be fine again; the broker no longer believes. */
	r = client_call(c, SUBMIT);
	assert_storage_error(r, "an earlier sync to disk failed");
	json_object_put(r);
	assert_serving();
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"poll_job\",\"params\":{\"ticket\":\"t-000000\"}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32002);
	json_object_put(r);
}
END_TEST

/*
 * The disk fills while a job runs: its end cannot be stored, so nobody
 * hears of it (every view shows the job running, as stored), nothing new
 * starts, and the broker keeps serving; once the disk has room the end is
 * stored and told.
 */
START_TEST(disk_full_while_running)
{
	json_object	*r, *l;
	char		 t[32], line[256];
	size_t		 i;
	int		 inflight = 0;

	r = taken("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":1}}]}}", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
	arm("enospc", 1);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":3}}",
	    t);
	r = client_call(c, line);
	/* As stored: still running, though its worker is gone. */
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
	assert_serving();
	/* Counted as it is stored: running, not yet over. */
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"server_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.running")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.jobs_by_status.done")), 0);
	json_object_put(r);
	/* And so in queue_status and list_clients. */
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"queue_status\"}");
	ck_assert_msg(json_object_get_int(jpath(r, "result.running")) == 1 &&
	    json_object_get_int(jpath(r, "result.smooth_in_flight")) == 1,
	    "queue_status tells of an end the store refused: %s",
	    json_object_to_json_string(r));
	json_object_put(r);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"list_clients\"}");
	l = jpath(r, "result.clients");
	for (i = 0; i < json_object_array_length(l); i++)
		inflight += json_object_get_int(jpath(
		    json_object_array_get_idx(l, i), "jobs_in_flight"));
	ck_assert_msg(inflight == 1, "list_clients tells of an end the store "
	    "refused: %s", json_object_to_json_string(r));
	json_object_put(r);
	arm("enospc", 0);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    t);
	r = client_call(c, line);
	ck_assert_str_ne(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
	ck_assert_int_ge(broker_log_count(&b, "the store takes changes again"),
	    1);
	/* Retried with backoff, and said once, not at every try. */
	ck_assert_int_eq(broker_log_count(&b, "the store refused the change"),
	    1);
}
END_TEST

static json_object *
submit_wait(void)
{
	char	t[32], line[256];

	json_object_put(taken(SUBMIT, t));
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    t);
	return client_call(c, line);
}

/*
 * No process can be started: the job fails saying so; later ones run.
 * (A broker that cannot be a child subreaper has no fork server: it
 * spawns each worker, which the shim can make fail.)
 */
START_TEST(spawn_fails)
{
	json_object	*r;

	client_close(c);
	broker_stop(&b);
	broker_prepare(&b);
	arm("nosubreaper", 1);
	start_shimmed(NULL);
	ck_assert_int_ge(broker_await_log(&b, "no fork server: prctl "
	    "PR_SET_CHILD_SUBREAPER"), 1);
	arm("eagain", 1);
	r = submit_wait();
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "failed");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(r,
	    "result.error")), "cannot start a worker: Resource temporarily"));
	json_object_put(r);
	arm("eagain", 0);
	r = submit_wait();
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
}
END_TEST

/*
 * clone(2) with CLONE_PARENT refused (a seccomp filter): the fork server
 * forks each worker twice over, jobs run, the log says so once, and
 * server_status counts them.
 */
START_TEST(clone_refused_forks_twice)
{
	json_object	*r;
	int		 i;

	shim_prepare();
	shim_start("{\"tools\":[{\"name\":\"echo\",\"tier\":\"heavy\","
	    "\"exec\":[\"echo\",\"{text}\"],\"params\":{\"properties\":"
	    "{\"text\":{\"type\":\"string\"}}}}]}", "noclone", NULL);
	for (i = 0; i < 2; i++) {
		r = submit_wait();
		ck_assert_str_eq(json_object_get_string(jpath(r,
		    "result.status")), "done");
		json_object_put(r);
	}
	ck_assert_int_eq(broker_log_count(&b, "forks each worker twice over"),
	    1);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"server_status\"}");
	ck_assert_int_ge(json_object_get_int(jpath(r,
	    "result.fork_server.workers_forked_twice")), 2);
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.fork_server.workers_forked_twice")),
	    json_object_get_int(jpath(r, "result.fork_server.workers_forked")));
	json_object_put(r);
	arm("noclone", 0);
}
END_TEST

/* The spec cannot reach the worker: the job fails, the broker goes on. */
START_TEST(spec_pipe_fails)
{
	json_object	*r;

	arm("epipe", 1);
	r = submit_wait();
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "failed");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(r,
	    "result.error")), "worker exited with status 64"));
	json_object_put(r);
	ck_assert_int_ge(broker_log_count(&b, "its job spec could not be "
	    "written"), 1);
	arm("epipe", 0);
	r = submit_wait();
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
}
END_TEST

/* The next message on c: an answer (the test asks for no notes). */
static json_object *
next_answer(struct client *cl)
{
	char		*s = client_line(cl);
	json_object	*r;

	ck_assert_msg(s != NULL, "no answer");
	r = json_tokener_parse(s);
	ck_assert_msg(r != NULL, "not JSON: %.200s", s);
	free(s);
	return r;
}

/*
 * A command's result whose commit fails is never shown: polls of the
 * running job, answered all along, show only what the store has, though
 * the record in memory had the result until the worker was stopped.
 */
START_TEST(unstored_result_not_shown)
{
	const char	*args[] = { "--tools", NULL, NULL };
	char		 tools[1024], fifo[256], polls[100 * 128];
	char		 line[128];
	json_object	*r;
	size_t		 len = 0;
	int		 fd, i, round, seen = 0;

	client_close(c);
	broker_stop(&b);
	broker_prepare(&b);
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"hold\","
	    "\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\",\"cat %s "
	    ">/dev/null; echo held\"]},{\"name\":\"nap\",\"tier\":"
	    "\"instant\",\"exec\":[\"sleep\",\"30\"]}]}", fifo);
	args[1] = tool_table(tools);
	start_shimmed(args);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"hold\"},{\"tool\":\"nap\"}]}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}\n",
	    json_object_get_string(jpath(r, "result.ticket")));
	json_object_put(r);
	for (i = 0; i < 100; i++)
		len += (size_t)snprintf(polls + len, sizeof(polls) - len, "%s",
		    line);
	arm("enospc", 1);
	ck_assert_int_ne(fd = open(fifo, O_WRONLY), -1);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	/* Polls all along, until the job's end could not be stored either. */
	for (round = 0; round < 1000 && broker_log_count(&b,
	    "the store refused the change") == 0; round++) {
		polls[len] = '\0';
		client_send(c, polls);
		for (i = 0; i < 100; i++, seen++) {
			r = next_answer(c);
			ck_assert_msg(json_object_get_int(jpath(r,
			    "result.progress.completed")) == 0 &&
			    json_object_array_length(jpath(r,
			    "result.results")) == 0, "poll %d shows a result "
			    "that is not stored: %.300s", seen,
			    json_object_to_json_string(r));
			json_object_put(r);
		}
	}
	ck_assert_int_ge(broker_log_count(&b, "its progress could not be "
	    "recorded"), 1);
	arm("enospc", 0);
}
END_TEST

static Suite *
faults_suite(void)
{
	Suite	*s = suite_create("faults");
	TCase	*tc = tcase_create("faults");

	tcase_add_checked_fixture(tc, fault_setup, fault_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, disk_full_at_commit);
	tcase_add_test(tc, disk_full_fails_the_group);
	tcase_add_test(tc, sync_failure_is_fail_stop);
	tcase_add_test(tc, disk_full_while_running);
	tcase_add_test(tc, unstored_result_not_shown);
	tcase_add_test(tc, spawn_fails);
	tcase_add_test(tc, clone_refused_forks_twice);
	tcase_add_test(tc, spec_pipe_fails);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(faults_suite());
}
