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

#define SUBMIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"echo\"," \
		"\"params\":{\"text\":\"x\"}}]}}"

static const char *
submit_ticket(json_object **r)
{
	*r = client_call(c, SUBMIT);
	ck_assert_msg(jpath(*r, "result.ticket") != NULL, "%.300s",
	    json_object_to_json_string(*r));
	return json_object_get_string(jpath(*r, "result.ticket"));
}

static void
assert_storage_error(json_object *r, const char *why)
{
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32004);
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "storage_error");
	ck_assert_msg(strstr(json_object_get_string(jpath(r,
	    "error.data.reason")), why) != NULL, "reason: %s",
	    json_object_get_string(jpath(r, "error.data.reason")));
}

static void
assert_serving(void)
{
	json_object	*r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"server_status\"}");

	ck_assert_ptr_nonnull(jpath(r, "result.store"));
	json_object_put(r);
}

static void
wait_done(const char *ticket)
{
	char		 line[256];
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    ticket);
	r = client_call(c, line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
}

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
 * hears of it, nothing new starts, and the broker keeps serving; once the
 * disk has room the end is stored and told.
 */
START_TEST(disk_full_while_running)
{
	json_object	*r;
	char		 t[32], line[256];

	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":1}}]}}");
	snprintf(t, sizeof(t), "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
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

/*
 * What clients see of running jobs is what is stored: a job whose end the
 * store refused is still running in queue_status and list_clients, as in
 * poll_job and server_status.
 */
START_TEST(unstored_end_still_running)
{
	json_object	*r, *me = NULL;
	char		 t[32], line[256];
	size_t		 i;

	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":1}}]}}");
	snprintf(t, sizeof(t), "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	json_object_put(r);
	arm("enospc", 1);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":3}}",
	    t);
	r = client_call(c, line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
	ck_assert_int_ge(broker_await_log(&b, "the store refused the change"),
	    1);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"queue_status\"}");
	ck_assert_msg(json_object_get_int(jpath(r, "result.running")) == 1 &&
	    json_object_get_int(jpath(r, "result.smooth_in_flight")) == 1,
	    "queue_status tells of an end the store refused: %s",
	    json_object_to_json_string(r));
	json_object_put(r);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"list_clients\"}");
	for (i = 0; i < json_object_array_length(jpath(r, "result.clients"));
	    i++)
		if (json_object_get_int(jpath(json_object_array_get_idx(
		    jpath(r, "result.clients"), i), "jobs_in_flight")) > 0)
			me = json_object_array_get_idx(jpath(r,
			    "result.clients"), i);
	ck_assert_msg(me != NULL, "list_clients tells of an end the store "
	    "refused: %s", json_object_to_json_string(r));
	json_object_put(r);
	arm("enospc", 0);
}
END_TEST

/* CPU ticks (utime + stime) the broker used so far. */
static long
broker_ticks(void)
{
	char	path[64], buf[2048], *p;
	long	ut = 0, st = 0;
	FILE	*f;
	int	i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)b.pid);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_ptr_nonnull(p = strrchr(buf, ')'));
	for (i = 3; i < 14 && p != NULL; i++)	/* to field 14, utime */
		p = strchr(p + 1, ' ');
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p + 1, "%ld %ld", &ut, &st), 2);
	return ut + st;
}

/*
 * After a failed sync the store takes no writes: a finished job that is
 * due to expire is kept, said once, and the expiry timer is not armed
 * again (it used to fire at once, for ever: a core spinning).
 */
START_TEST(expiry_after_failed_sync)
{
	const char	*args[] = { "--result-ttl", "1", NULL };
	json_object	*r;
	long		 t0;

	shim_prepare();
	start_shimmed(args);
	ck_assert_str_eq(submit_ticket(&r), "t-000000");
	json_object_put(r);
	wait_done("t-000000");
	arm("eio", 1);
	r = client_call(c, SUBMIT);
	assert_storage_error(r, "Input/output error");
	json_object_put(r);
	arm("eio", 0);
	ck_assert_int_eq(broker_await_log(&b, "expired jobs are kept until "
	    "cmdgated is restarted"), 1);
	/* A spinning timer shows only over time: one second of it. */
	t0 = broker_ticks();
	sleep(1);
	ck_assert_msg(broker_ticks() - t0 < sysconf(_SC_CLK_TCK) / 4, "the "
	    "broker used %ld CPU ticks (%ld a second) in 1 s of idling",
	    broker_ticks() - t0, (long)sysconf(_SC_CLK_TCK));
	assert_serving();
	ck_assert_int_eq(broker_log_count(&b, "expired jobs are kept"), 1);
}
END_TEST

/*
 * A result that finds the map full, while --map-size-max lets it grow:
 * the map grows and the job goes on (it used to be killed and failed,
 * its results dropped).
 */
START_TEST(map_full_result_grows)
{
	const char	*args[] = { "--tools", NULL, "--map-size", "1048576",
			    "--map-size-max", "67108864", NULL };
	char		 table[256], cmds[1024], line[2048], t[32];
	json_object	*r;
	size_t		 len = 0;
	int		 i;

	shim_prepare();
	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, "{\"tools\":[{\"name\":\"big\",\"tier\":\"instant\","
	    "\"exec\":[\"sh\",\"-c\",\"yes aaaaaaaaaaaaaaa | head -c "
	    "60000\"]}]}", 0600);
	args[1] = table;
	start_shimmed(args);
	for (i = 0; i < 24; i++)
		len += (size_t)snprintf(cmds + len, sizeof(cmds) - len,
		    "%s{\"tool\":\"big\"}", i > 0 ? "," : "");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":[%s]}}",
	    cmds);
	r = client_call(c, line);
	ck_assert_msg(jpath(r, "result.ticket") != NULL, "%.300s",
	    json_object_to_json_string(r));
	snprintf(t, sizeof(t), "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	json_object_put(r);
	r = on_ticket("wait_job", t);
	ck_assert_msg(strcmp(json_object_get_string(jpath(r, "result.status")),
	    "done") == 0, "the map could grow, yet: %.400s",
	    json_object_to_json_string(r));
	json_object_put(r);
	ck_assert_int_ge(broker_log_count(&b, "the store's map was full: "
	    "grown"), 1);
}
END_TEST

/*
 * No worker can be spawned: the jobs picked fail, and those the pass did
 * not pick (over --max-workers) are tried next, not left queued until
 * something else runs the scheduler.
 */
START_TEST(spawn_failure_goes_on)
{
	const char	*args[] = { "--max-workers", "2", NULL };
	json_object	*r;

	shim_prepare();
	arm("nosubreaper", 1);
	start_shimmed(args);
	ck_assert_int_ge(broker_await_log(&b, "no fork server: prctl "
	    "PR_SET_CHILD_SUBREAPER"), 1);
	arm("eagain", 1);
	r = client_call(c, "[" SUBMIT "," SUBMIT "," SUBMIT "]");
	ck_assert_int_eq(json_object_array_length(r), 3);
	json_object_put(r);
	ck_assert_int_ge(broker_await_log(&b, "cannot start a worker"), 1);
	arm("eagain", 0);
	r = on_ticket("wait_job", "t-000002");
	ck_assert_msg(strcmp(json_object_get_string(jpath(r, "result.status")),
	    "queued") != 0, "t-000002 stays queued: %.300s",
	    json_object_to_json_string(r));
	json_object_put(r);
}
END_TEST

/*
 * The retry of refused changes backs off once per retry (1 s, 2, 4, ...),
 * not once per change refused: three ends refused at once, then the
 * first retry refused too, say 2 s, and not yet 4.
 */
START_TEST(backoff_per_retry)
{
	const char	*args[] = { "--tools", NULL, "--log-level", "debug",
			    NULL };
	char		 table[256];
	json_object	*r;

	shim_prepare();
	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, "{\"tools\":[{\"name\":\"nap\",\"tier\":\"instant\","
	    "\"exec\":[\"sleep\",\"1\"]}]}", 0600);
	args[1] = table;
	start_shimmed(args);
#define NAP "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
	    "\"params\":{\"async\":true,\"commands\":[{\"tool\":\"nap\"}]}}"
	r = client_call(c, "[" NAP "," NAP "," NAP "]");
	ck_assert_int_eq(json_object_array_length(r), 3);
	json_object_put(r);
	arm("enospc", 1);
	ck_assert_int_ge(broker_await_log(&b, "still refuses (No space left "
	    "on device); retrying in 2s"), 1);
	ck_assert_msg(broker_log_count(&b, "retrying in 4s") == 0, "the "
	    "backoff grew per refused end, not per retry");
	arm("enospc", 0);
}
END_TEST

static json_object *
submit_wait(void)
{
	json_object	*r;
	char		 t[32], line[256];

	r = client_call(c, SUBMIT);
	snprintf(t, sizeof(t), "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	json_object_put(r);
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
	char		 tools[1024], fifo[256], table[256], polls[100 * 128];
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
	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, tools, 0600);
	args[1] = table;
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

/*
 * A start the store refuses (the disk is full) ends the scheduler's pass:
 * the jobs picked beside it are not tried too, each taking a worker only
 * to kill it.  Three smooth jobs are queued behind a heavy one at a stop;
 * the broker comes back on a full disk, and its first pass picks all
 * three.
 */
START_TEST(refused_start_ends_the_pass)
{
	const char	*args[] = { "--tools", NULL, "--max-workers", "8",
			    "--log-level", "debug", NULL };
	char		 table[256], t[4][32];
	json_object	*r;
	int		 i, killed, again;

	shim_prepare();
	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\","
	    "\"exec\":[\"sleep\",\"60\"]},{\"name\":\"q\",\"tier\":\"smooth\","
	    "\"exec\":[\"true\"]}]}", 0600);
	args[1] = table;
	start_shimmed(args);
	submit_tool("hold", t[0]);
	for (i = 1; i < 4; i++) {
		r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,"
		    "\"commands\":[{\"tool\":\"q\"}]}}");
		ck_assert_str_eq(json_object_get_string(jpath(r,
		    "result.status")), "queued");
		snprintf(t[i], sizeof(t[i]), "%s", json_object_get_string(
		    jpath(r, "result.ticket")));
		json_object_put(r);
	}
	client_close(c);
	/* The heavy job is recorded failed at the stop; the rest stay. */
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	arm("enospc", 1);
	start_shimmed(args);
	ck_assert_int_ge(broker_await_log(&b, "lost: killed by signal 9"), 1);
	arm("enospc", 0);
	for (i = 1; i < 4; i++) {
		r = on_ticket("wait_job", t[i]);
		ck_assert_str_eq(json_object_get_string(jpath(r,
		    "result.status")), "done");
		json_object_put(r);
	}
	/* One worker stopped for each pass the store refused, not three. */
	killed = broker_log_count(&b, "lost: killed by signal 9");
	again = broker_log_count(&b, "the store still refuses");
	ck_assert_msg(killed == 1 + again, "%d workers killed for %d refused "
	    "passes: starts were tried after the store refused one in the "
	    "same pass", killed, 1 + again);
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
	tcase_add_test(tc, unstored_end_still_running);
	tcase_add_test(tc, expiry_after_failed_sync);
	tcase_add_test(tc, map_full_result_grows);
	tcase_add_test(tc, spawn_failure_goes_on);
	tcase_add_test(tc, backoff_per_retry);
	tcase_add_test(tc, unstored_result_not_shown);
	tcase_add_test(tc, spawn_fails);
	tcase_add_test(tc, spec_pipe_fails);
	tcase_add_test(tc, refused_start_ends_the_pass);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(faults_suite());
}
