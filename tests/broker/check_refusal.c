/* SPDX-License-Identifier: ISC */
/*
 * After the store refused a change (a full disk or map, a failed sync,
 * under the fault shim, tests/fault.c): what clients see meanwhile is as
 * stored, the retry backs off, a map that may grow grows, and nothing
 * spins or stalls.
 */
#include "config.h"

#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "faultutil.h"

/* Submit a job that sleeps for a second: its ticket into t. */
static void
submit_sleep(char t[32])
{
	json_object	*r;

	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":1}}]}}");
	snprintf(t, 32, "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	json_object_put(r);
}

/*
 * A fresh broker, logging at debug, whose job of submit_sleep() runs with
 * its tool's group stored (a progress record the store refused would
 * fail it): the next change the store sees is the job's end.
 */
static void
sleep_job_running(char t[32])
{
	const char	*args[] = { "--log-level", "debug", NULL };

	shim_prepare();
	start_shimmed(args);
	submit_sleep(t);
	ck_assert_int_ge(broker_await_log(&b, "t-000000 tool started"), 1);
}

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
	char		 cmds[1024], line[2048], t[32];
	json_object	*r;
	size_t		 len = 0;
	int		 i;

	shim_prepare();
	args[1] = tool_table(
	    "{\"tools\":[{\"name\":\"big\",\"tier\":\"instant\","
	    "\"exec\":[\"sh\",\"-c\",\"yes aaaaaaaaaaaaaaa | head -c "
	    "60000\"]}]}");
	start_shimmed(args);
	for (i = 0; i < 24; i++)
		len += (size_t)snprintf(cmds + len, sizeof(cmds) - len,
		    "%s{\"tool\":\"big\"}", i > 0 ? "," : "");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":[%s]}}",
	    cmds);
	json_object_put(taken(line, t));
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
 * An async batch_execute (id 3) of tool with a text of 1,500,000 bytes,
 * larger than a 1 MiB map's room, between before and after (a JSON-RPC
 * batch's other members, or ""); the caller frees it.
 */
static char *
big_submit(const char *before, const char *tool, const char *after)
{
	size_t	 n = 1500000, len = strlen(before) + strlen(after) + n + 256;
	char	*line = malloc(len), *text = malloc(n + 1);

	ck_assert(line != NULL && text != NULL);
	memset(text, 'a', n);
	text[n] = '\0';
	snprintf(line, len, "%s{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"%s\",\"params\":{\"text\":\"%s\"}}]}}%s", before,
	    tool, text, after);
	free(text);
	return line;
}

/*
 * A submit larger than the map's free room, while --map-size-max lets
 * it grow: the map grows and the job is taken (the failed put inside the
 * group's retry used to hide the full map: storage_error).
 */
START_TEST(map_full_submit_grows)
{
	const char	*args[] = { "--map-size", "1048576", "--map-size-max",
			    "67108864", "--max-message", "4194304", NULL };
	char		*line;
	json_object	*r;

	shim_prepare();
	start_shimmed(args);
	line = big_submit("", "echo", "");
	r = client_call(c, line);
	free(line);
	ck_assert_msg(jpath(r, "result.ticket") != NULL, "the map could grow "
	    "to 64 MiB, yet: %.300s", json_object_to_json_string(r));
	json_object_put(r);
	ck_assert_int_ge(broker_log_count(&b, "the store's map was full: "
	    "grown"), 1);
}
END_TEST

/*
 * A queued job's cancel that finds the map full, while --map-size-max
 * lets it grow: the map grows and the job is cancelled (the cancel used
 * to fail with storage_error, the job left queued).
 */
START_TEST(map_full_cancel_grows)
{
	const char	*args[] = { "--tools", NULL, "--map-size", "1048576",
			    "--map-size-max", "67108864", "--max-message",
			    "4194304", NULL };
	char		*line, t[32];
	json_object	*r;

	shim_prepare();
	args[1] = tool_table(
	    "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\","
	    "\"exec\":[\"sleep\",\"30\"]},{\"name\":\"big\",\"tier\":"
	    "\"heavy\",\"exec\":[\"echo\",\"{text}\"],\"params\":{\"type\":"
	    "\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}}]}");
	start_shimmed(args);
	submit_tool("hold", t);
	line = big_submit("", "big", "");
	json_object_put(taken(line, t));
	free(line);
	r = on_ticket("cancel_job", t);
	ck_assert_msg(jpath(r, "result.cancelled") != NULL &&
	    json_object_get_boolean(jpath(r, "result.cancelled")), "the map "
	    "could grow to 64 MiB, yet: %.300s",
	    json_object_to_json_string(r));
	json_object_put(r);
	r = on_ticket("poll_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "cancelled");
	json_object_put(r);
	ck_assert_int_gt(broker_log_count(&b, "a cancel: the store's map was "
	    "full: grown"), 0);
}
END_TEST

/*
 * A heavy job's end and the next heavy job's start share a commit, which
 * a full disk refuses, while it would take the start alone: the next job
 * stays queued until the end is stored.  (The start used to be stored
 * alone, then the end refused: the store, and so queue_status and the
 * first job's poll, had both running at once.)
 */
START_TEST(end_refused_holds_next_start)
{
	const char	*args[] = { "--tools", NULL, NULL }, *why;
	json_object	*r, *a;
	char		 t[32];

	shim_prepare();
	args[1] = tool_table(
	    "{\"tools\":[{\"name\":\"big\",\"tier\":\"heavy\","
	    "\"exec\":[\"sh\",\"-c\",\"yes aaaaaaaaaaaaaaa | head -c "
	    "60000\"]},{\"name\":\"hold\",\"tier\":\"heavy\","
	    "\"exec\":[\"sleep\",\"30\"]}]}");
	start_shimmed(args);
	arm("enospcbig", 1);
	/* One request: both queued before the first can end. */
	r = client_call(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"big\"}]}},{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"batch_execute\",\"params\":{\"async\":true,"
	    "\"commands\":[{\"tool\":\"hold\"}]}}]");
	ck_assert_msg(json_object_array_length(r) == 2 &&
	    jpath(json_object_array_get_idx(r, 1), "result.ticket") != NULL,
	    "%.300s", json_object_to_json_string(r));
	snprintf(t, sizeof(t), "%s", json_object_get_string(jpath(
	    json_object_array_get_idx(r, 1), "result.ticket")));
	json_object_put(r);
	ck_assert_int_ge(broker_await_log(&b, "t-000000: the store refused "
	    "the change"), 1);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"queue_status\"}");
	ck_assert_msg(json_object_get_int(jpath(r, "result.running")) == 1 &&
	    strcmp(json_object_get_string(jpath(r, "result.heavy_active")),
	    "t-000000") == 0 &&
	    json_object_get_int(jpath(r, "result.queued")) == 1, "two heavy "
	    "jobs stored as running: %s", json_object_to_json_string(r));
	json_object_put(r);
	/* Queued behind the job as stored, running. */
	r = on_ticket("poll_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "queued");
	a = jpath(r, "result.ahead");
	ck_assert_msg(json_object_array_length(a) == 1 &&
	    strcmp(json_object_get_string(jpath(json_object_array_get_idx(a,
	    0), "ticket")), "t-000000") == 0 &&
	    strcmp(json_object_get_string(jpath(json_object_array_get_idx(a,
	    0), "status")), "running") == 0, "%s",
	    json_object_to_json_string(r));
	json_object_put(r);
	/*
	 * Room again: the end is stored, then the next job starts.  (A
	 * worker slow to exit, under sanitizers, has its last result stored
	 * alone first: refused, it fails the job, as cmdgated(8) says.)
	 */
	arm("enospcbig", 0);
	r = on_ticket("wait_job", "t-000000");
	why = json_object_get_string(jpath(r, "result.error"));
	ck_assert_msg(strcmp(json_object_get_string(jpath(r, "result.status")),
	    "done") == 0 || (why != NULL && strstr(why, "storage_error") !=
	    NULL), "%s", json_object_to_json_string(r));
	json_object_put(r);
	ck_assert_int_ge(broker_await_log(&b, "t-000001 running"), 1);
}
END_TEST

/*
 * Submits of one turn, one too large for a map that may not grow, so that
 * the group is stored again with a nested transaction each; the first
 * nested commit fails (ENOMEM): that submit fails alone, the next is
 * stored and told so.  (The failed commit used to abort the group's own
 * transaction too: the next submit was then committed on its own, yet
 * told storage_error with the rest, and stayed in the store.)
 */
START_TEST(nested_commit_fails_alone)
{
	const char	*args[] = { "--map-size", "1048576", "--map-size-max",
			    "1048576", "--max-message", "4194304", NULL };
	char		*line;
	json_object	*r, *a;

	shim_prepare();
	start_shimmed(args);
	line = big_submit("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"echo\",\"params\":{\"text\":\"a\"}}]}},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"batch_execute\","
	    "\"params\":{\"async\":true,\"commands\":[{\"tool\":\"echo\","
	    "\"params\":{\"text\":\"b\"}}]}},", "echo", "]");
	arm("nestfail", 1);
	r = client_call(c, line);
	free(line);
	ck_assert_int_eq(json_object_array_length(r), 3);
	assert_storage_error(json_object_array_get_idx(r, 0),
	    "Cannot allocate memory");
	a = json_object_array_get_idx(r, 1);
	ck_assert_msg(jpath(a, "result.ticket") != NULL, "stored, yet: %s",
	    json_object_to_json_string(a));
	/* The failed one's ticket was given back. */
	ck_assert_str_eq(json_object_get_string(jpath(a, "result.ticket")),
	    "t-000000");
	assert_storage_error(json_object_array_get_idx(r, 2), "MDB_MAP_FULL");
	json_object_put(r);
	ck_assert_int_ne(access(broker_path(&b, "nestfail"), F_OK), 0);
	wait_done("t-000000");
}
END_TEST

/*
 * No worker can be spawned (a passing process limit): the job that found
 * it fails, saying so, and nothing else starts for a second; the others
 * are tried then, not all failed in the same pass, nor left queued until
 * something else runs the scheduler.
 */
START_TEST(spawn_failure_waits)
{
	const char	*args[] = { "--max-workers", "8", NULL };
	json_object	*r;
	char		 t[16];
	int		 i;

	shim_prepare();
	arm("nosubreaper", 1);
	start_shimmed(args);
	ck_assert_int_ge(broker_await_log(&b, "no fork server: prctl "
	    "PR_SET_CHILD_SUBREAPER"), 1);
	arm("eagain", 1);
	r = client_call(c, "[" SUBMIT "," SUBMIT "," SUBMIT "," SUBMIT "]");
	ck_assert_int_eq(json_object_array_length(r), 4);
	json_object_put(r);
	ck_assert_int_ge(broker_await_log(&b, "t-000000: cannot start a "
	    "worker"), 1);
	arm("eagain", 0);
	for (i = 1; i < 4; i++) {
		snprintf(t, sizeof(t), "t-%06d", i);
		r = on_ticket("wait_job", t);
		ck_assert_msg(strcmp(json_object_get_string(jpath(r,
		    "result.status")), "done") == 0, "%s, queued beside the "
		    "job that found the limit: %.300s", t,
		    json_object_to_json_string(r));
		json_object_put(r);
	}
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
	json_object	*r;

	shim_prepare();
	args[1] = tool_table(
	    "{\"tools\":[{\"name\":\"nap\",\"tier\":\"instant\","
	    "\"exec\":[\"sleep\",\"1\"]}]}");
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
	char		 t[4][32];
	json_object	*r;
	int		 i, killed, again;

	shim_prepare();
	args[1] = tool_table(
	    "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\","
	    "\"exec\":[\"sleep\",\"60\"]},{\"name\":\"q\",\"tier\":\"smooth\","
	    "\"exec\":[\"true\"]}]}");
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

/*
 * A full disk takes no record, smaller or not: a job whose end it refused
 * waits whole, and is stored done, with its result, once there is room
 * (it used to be failed, its results dropped, for a passing ENOSPC).
 */
START_TEST(end_kept_whole_on_full_disk)
{
	json_object	*r;
	char		 t[32];

	sleep_job_running(t);
	arm("enospc", 1);
	ck_assert_int_ge(broker_await_log(&b, "the store refused the change"),
	    1);
	arm("enospc", 0);
	r = on_ticket("wait_job", t);
	ck_assert_msg(strcmp(json_object_get_string(jpath(r, "result.status")),
	    "done") == 0 && json_object_array_length(jpath(r,
	    "result.results")) == 1, "a passing ENOSPC cost the job its end: "
	    "%.400s", json_object_to_json_string(r));
	json_object_put(r);
	ck_assert_int_eq(broker_log_count(&b, "results dropped"), 0);
}
END_TEST

/*
 * SIGTERM while an end the store refused waits: the stop stores it, if
 * the store takes it by then, so that the restart does not record the
 * finished job as interrupted.
 */
START_TEST(end_stored_at_stop)
{
	const char	*args[] = { "--log-level", "debug", NULL };
	json_object	*r;
	char		 t[32];

	sleep_job_running(t);
	arm("enospc", 1);
	/* Refused at the end and at the first retry: the next is 2 s on. */
	ck_assert_int_ge(broker_await_log(&b, "the store still refuses"), 1);
	arm("enospc", 0);
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	start_shimmed(args);
	r = on_ticket("wait_job", t);
	ck_assert_msg(strcmp(json_object_get_string(jpath(r, "result.status")),
	    "done") == 0, "the end that waited was lost at the stop: %.300s",
	    json_object_to_json_string(r));
	json_object_put(r);
}
END_TEST

/*
 * An end the store refused, stored at its retry, changes what
 * queue_status answers: the status subscribers are told so then (they
 * were told before only of the end the store had not taken).
 */
START_TEST(status_after_stored_end)
{
	struct client	*sub;
	json_object	*r, *n;
	char		 t[32];
	int		 running;

	sleep_job_running(t);
	sub = client_unix(b.sock);
	r = client_call(sub, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"subscribe_status\"}");
	ck_assert(json_object_get_boolean(jpath(r, "result.subscribed")));
	json_object_put(r);
	arm("enospc", 1);
	/* Refused at its end, then at the first retry, which changes
	 * nothing: every note of the end in memory is sent by then. */
	ck_assert_int_ge(broker_await_log(&b, "the store still refuses"), 1);
	r = client_call(sub, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"queue_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.running")), 1);
	json_object_put(r);
	json_object_put(sub->notes);	/* read before that answer */
	sub->notes = json_object_new_array();
	arm("enospc", 0);
	ck_assert_int_ge(broker_await_log(&b, "the store takes changes again"),
	    1);
	n = client_wait_method(sub, "notifications/status");
	ck_assert_msg(n != NULL, "the stored end changed queue_status, but no "
	    "notifications/status said so");
	json_object_put(n);
	r = client_call(sub, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"queue_status\"}");
	running = json_object_get_int(jpath(r, "result.running"));
	json_object_put(r);
	client_close(sub);
	ck_assert_int_eq(running, 0);
}
END_TEST

/*
 * A restart on a full disk cannot record the jobs it interrupted: it does
 * not start (exit 78) and leaves the store as it was; once the disk has
 * room, the next start records them.
 */
START_TEST(recovery_refused_on_full_disk)
{
	json_object	*r;
	char		 t[32];

	r = taken("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":30}}]}}", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
	client_close(c);
	c = NULL;
	broker_kill(&b, SIGKILL);
	arm("enospc", 1);
	ck_assert_int_eq(start_shimmed_status(NULL), 78);
	ck_assert_int_ge(broker_log_count(&b, "store: recovery failed"), 1);
	arm("enospc", 0);
	start_shimmed(NULL);
	r = on_ticket("wait_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "failed");
	ck_assert_msg(strncmp(json_object_get_string(jpath(r,
	    "result.error")), "interrupted by broker restart", 29) == 0,
	    "%.300s", json_object_to_json_string(r));
	json_object_put(r);
}
END_TEST

static Suite *
refusal_suite(void)
{
	Suite	*s = suite_create("refusal");
	TCase	*tc = tcase_create("refusal");

	tcase_add_checked_fixture(tc, fault_setup, fault_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, end_kept_whole_on_full_disk);
	tcase_add_test(tc, end_stored_at_stop);
	tcase_add_test(tc, status_after_stored_end);
	tcase_add_test(tc, expiry_after_failed_sync);
	tcase_add_test(tc, map_full_result_grows);
	tcase_add_test(tc, map_full_submit_grows);
	tcase_add_test(tc, map_full_cancel_grows);
	tcase_add_test(tc, end_refused_holds_next_start);
	tcase_add_test(tc, nested_commit_fails_alone);
	tcase_add_test(tc, spawn_failure_waits);
	tcase_add_test(tc, backoff_per_retry);
	tcase_add_test(tc, refused_start_ends_the_pass);
	tcase_add_test(tc, recovery_refused_on_full_disk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(refusal_suite());
}
