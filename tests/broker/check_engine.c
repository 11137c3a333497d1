/* SPDX-License-Identifier: ISC */
/*
 * Engine speed (issue 15): the spare worker (counted by --max-workers,
 * never reused, retired when idle, gone with a killed broker) and the
 * turn's commit (a job's end and the next start in one commit, nothing
 * told before its commit).  Helpers in jobsutil.c.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "jstrict.h"
#include "testnet.h"

#define MAX_CHILDREN	8

/* hold: heavy, until the FIFO is opened; ppid: its worker's pid and
 * name. */
static void
engine_tools(void)
{
	char	json[1024];

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"hold\",\"tier\":\"heavy\",\"exec\":[\"sh\",\"-c\","
	    "\"cat %s >/dev/null\"]},"
	    "{\"name\":\"ppid\",\"tier\":\"instant\",\"exec\":[\"sh\",\"-c\","
	    "\"echo $PPID $(cat /proc/$PPID/comm)\"]},"
	    "{\"name\":\"fail\",\"tier\":\"heavy\",\"exec\":[\"sh\",\"-c\","
	    "\"sleep 0.1; exit 3\"]},"
	    "{\"name\":\"nx\",\"tier\":\"heavy\",\"exec\":"
	    "[\"/nonexistent/cmdgate-test\"]}]}", fifo);
	write_file(tools, json, 0600);
}

static void
engine_start(const char *max_workers)
{
	const char	*extra[] = { "--log-level", "debug", "--max-workers",
			    max_workers, NULL };

	engine_tools();
	start_tools(extra);
}

/* The broker's workers now: how many, their pids in pids. */
static int
children(pid_t pids[MAX_CHILDREN])
{
	return broker_workers(pids, MAX_CHILDREN, NULL);
}

static void
ping(void)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"ping\"}");

	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}

/* Run the ppid tool: the pid of the worker that ran it; its name (ps's
 * COMMAND) in comm, if not NULL. */
static pid_t
run_ppid_named(char *comm, size_t size)
{
	json_object	*r;
	char		 t[32], name[32] = "";
	pid_t		 pid = 0;

	submit(t, "[{\"tool\":\"ppid\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_int_eq(sscanf(str(r, "results.0.stdout"), "%d %31s", &pid,
	    name), 2);
	json_object_put(r);
	ck_assert_int_gt(pid, 0);
	if (comm != NULL)
		snprintf(comm, size, "%s", name);
	return pid;
}

static pid_t
run_ppid(void)
{
	return run_ppid_named(NULL, 0);
}

/* Whether pid ends within ms (a pidfd: no polling of /proc). */
static int
gone_within(pid_t pid, int ms)
{
	struct pollfd	pfd;
	int		fd = pidfd_open(pid, 0), rc;

	if (fd == -1)
		return errno == ESRCH;
	pfd.fd = fd;
	pfd.events = POLLIN;
	rc = poll(&pfd, 1, ms) == 1;
	close(fd);
	if (!rc)
		kill(pid, SIGKILL);	/* leave nothing behind */
	return rc;
}

/* With --max-workers 1 a running job leaves no room for a spare. */
START_TEST(spare_counted_one)
{
	pid_t	pids[MAX_CHILDREN];
	char	t[32];

	engine_start("1");
	submit(t, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	await_status(t, "running");
	ping();		/* the spare's zero timer had its turn */
	ping();
	ck_assert_int_eq(children(pids), 1);
	ck_assert_int_eq(broker_log_count(&b, ": the spare"), 0);
	release();
	json_object_put(wait_done(t));
}
END_TEST

/*
 * With --max-workers 2: a running job and the spare; the next job takes
 * the spare (one more process is not started for it), and each job has a
 * worker of its own.
 */
START_TEST(spare_counted_taken_never_reused)
{
	pid_t	pids[MAX_CHILDREN], spare, w1, w2, w3;
	char	t[32];
	int	n;

	engine_start("2");
	submit(t, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	await_status(t, "running");
	ck_assert_int_ge(broker_await_log(&b, ": the spare"), 1);
	ck_assert_int_eq(n = children(pids), 2);
	spare = pids[1];
	w1 = run_ppid();
	ck_assert_int_eq(w1, spare);
	/* Both places are taken: no spare beside the two jobs. */
	ck_assert_int_le(children(pids), 2);
	release();
	json_object_put(wait_done(t));
	w2 = run_ppid();
	w3 = run_ppid();
	ck_assert_int_ne(w2, w1);
	ck_assert_int_ne(w3, w2);
	ck_assert_int_ne(w3, w1);
}
END_TEST

/* No job for a while: the spare goes, quietly. */
START_TEST(spare_retired_when_idle)
{
	pid_t	pids[MAX_CHILDREN], spare;
	char	reaped[64];

	engine_start("4");
	(void)run_ppid();
	ck_assert_int_ge(broker_await_log(&b, ": the spare"), 1);
	ck_assert_int_eq(children(pids), 1);
	spare = pids[0];
	ck_assert_int_ge(broker_await_log(&b, "the spare retires"), 1);
	ck_assert_msg(gone_within(spare, 5000), "the spare stayed");
	/* Reaped (it ended a moment before): no child of the broker left. */
	snprintf(reaped, sizeof(reaped), "worker %d exited", (int)spare);
	ck_assert_int_ge(broker_await_log(&b, reaped), 1);
	ck_assert_int_eq(children(pids), 0);
	ck_assert_int_eq(broker_log_count(&b, "no job spec"), 0);
	ck_assert_int_eq(broker_log_count(&b, "no worker of ours"), 0);
	/* The next job starts a worker of its own, as the first did. */
	ck_assert_int_ne(run_ppid(), spare);
}
END_TEST

/*
 * kill -9 of the broker: its spare sees the end of its spec pipe, its
 * fork server the end of its socket.
 */
START_TEST(spare_gone_with_broker)
{
	pid_t	pids[MAX_CHILDREN], spare, fk;

	engine_start("4");
	(void)run_ppid();
	ck_assert_int_ge(broker_await_log(&b, ": the spare"), 1);
	ck_assert_int_eq(broker_workers(pids, MAX_CHILDREN, &fk), 1);
	ck_assert_int_gt(fk, 0);
	spare = pids[0];
	client_close(c);
	c = NULL;
	broker_kill(&b, SIGKILL);
	ck_assert_msg(gone_within(spare, 3000), "the spare outlived its "
	    "broker");
	ck_assert_msg(gone_within(fk, 3000), "the fork server outlived its "
	    "broker");
}
END_TEST

/* server_status: the fork server's pid and how many workers it forked. */
static int64_t
forked(pid_t *pid)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":8,"
	    "\"method\":\"server_status\"}"), *fs;
	int64_t		 n;

	ck_assert_ptr_nonnull(fs = jpath(r, "result.fork_server"));
	*pid = json_object_get_int(json_object_object_get(fs, "pid"));
	n = json_object_get_int64(json_object_object_get(fs,
	    "workers_forked"));
	json_object_put(r);
	return n;
}

/* server_status: how many workers the fork server forked twice over. */
static int64_t
forked_twice(void)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":8,"
	    "\"method\":\"server_status\"}");
	int64_t		 n;

	n = json_object_get_int64(jpath(r,
	    "result.fork_server.workers_forked_twice"));
	ck_assert_ptr_nonnull(jpath(r,
	    "result.fork_server.workers_forked_twice"));
	json_object_put(r);
	return n;
}

/* The fork server's pid, once it says it is ready (the nth time). */
static pid_t
fork_server_ready(int nth)
{
	pid_t	pid, fk;

	/* "is back" follows the second "is ready". */
	ck_assert_int_ge(broker_await_log(&b, nth == 1 ? "is ready" :
	    "the fork server is back"), 1);
	ck_assert_int_ge(broker_log_count(&b, "is ready"), nth);
	(void)forked(&pid);
	(void)broker_workers(NULL, 0, &fk);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(pid, fk);
	return pid;
}

/*
 * Workers come from the fork server: each a fresh process, a child of
 * the broker (which reaps it), in a process group of its own, named
 * cmdgate-worker when it runs a job.
 */
START_TEST(workers_forked)
{
	pid_t	pids[MAX_CHILDREN], fk, pid, w1, w2;
	char	name[32];
	int64_t	n0;

	engine_start("4");
	fk = fork_server_ready(1);
	n0 = forked(&pid);
	w1 = run_ppid_named(name, sizeof(name));
	ck_assert_str_eq(name, "cmdgate-worker");
	w2 = run_ppid();
	ck_assert_int_ne(w1, w2);
	ck_assert_int_ge(forked(&pid) - n0, 2);
	ck_assert_int_eq(pid, fk);
	ck_assert_int_eq(forked_twice(), 0);	/* one clone each */
	/* The spare the second job left: the broker's, as forked. */
	ck_assert_int_ge(broker_await_log(&b, ": the spare"), 2);
	ck_assert_int_eq(children(pids), 1);
	pid = pids[0];
	ck_assert_int_eq(getpgid(pid), pid);
	ck_assert_int_eq(broker_log_count(&b, "no worker of ours"), 0);
}
END_TEST

/*
 * A worker program that cannot be a fork server (an older one, say):
 * after 3 starts that never got ready the broker stops trying, has no
 * fork server, and spawns every worker; jobs run throughout.
 */
START_TEST(fork_server_never_ready)
{
	json_object	*r;
	const char	*w = getenv("CMDGATE_WORKER");
	char		 real[PATH_MAX], text[PATH_MAX + 128];
	char		*script = strdup(broker_path(&b, "oldworker"));
	int		 i;

	ck_assert_ptr_nonnull(realpath(w != NULL && *w != '\0' ? w :
	    "workers/cmdgate-worker", real));
	snprintf(text, sizeof(text), "#!/bin/sh\n[ \"$1\" = --forker ] && "
	    "exit 64\nexec '%s' \"$@\"\n", real);
	write_file(script, text, 0700);
	setenv("CMDGATE_WORKER", script, 1);
	engine_start("4");
	if (w != NULL)
		setenv("CMDGATE_WORKER", w, 1);
	else
		unsetenv("CMDGATE_WORKER");
	(void)run_ppid();
	/* Its starts are FORKSRV_RETRY_S apart; each reap is logged. */
	for (i = 0; i < 4 && broker_await_log(&b, "ended 3 times before it "
	    "was ready") == 0; i++)
		;
	ck_assert_int_eq(broker_log_count(&b, "ended 3 times before it was "
	    "ready"), 1);
	ck_assert_int_eq(broker_log_count(&b, "the fork server exited"), 1);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	    "\"server_status\"}");
	ck_assert(json_object_object_get_ex(jpath(r, "result"), "fork_server",
	    NULL));
	ck_assert_ptr_null(jpath(r, "result.fork_server"));
	json_object_put(r);
	(void)run_ppid();
	free(script);
}
END_TEST

/*
 * The fork server dies: workers are spawned meanwhile, the jobs run, and
 * it is started again (FORKSRV_RETRY_S later).
 */
START_TEST(fork_server_lost)
{
	pid_t	fk, fk2, pid;
	int64_t	n;

	engine_start("4");
	fk = fork_server_ready(1);
	kill(fk, SIGKILL);
	ck_assert_int_ge(broker_await_log(&b, "the fork server exited"), 1);
	n = forked(&pid);
	ck_assert_int_eq(pid, 0);	/* null: not ready */
	(void)run_ppid();
	(void)run_ppid();
	ck_assert_int_eq(forked(&pid), n);
	fk2 = fork_server_ready(2);
	ck_assert_int_ne(fk2, fk);
	(void)run_ppid();
	ck_assert_int_gt(forked(&pid), n);
	ck_assert_int_eq(broker_log_count(&b, "the fork server exited"), 1);
}
END_TEST

/* Whether one line of the log holds both a and b. */
static int
log_line_with(const char *a, const char *bb)
{
	FILE	*f = fopen(b.log, "r");
	char	 line[4096];
	int	 found = 0;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, a) != NULL && strstr(line, bb) != NULL;
	fclose(f);
	return found;
}

/* Heavy jobs in a row: one's end and the next one's start, one commit. */
START_TEST(end_and_start_one_commit)
{
	char	t1[32], t2[32];

	engine_start("4");
	submit(t1, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	submit(t2, "[{\"tool\":\"ppid\"},{\"tool\":\"hold\"}]",
	    "\"notify\":true");
	await_status(t1, "running");
	release();
	await_status(t2, "running");
	ck_assert_msg(log_line_with("one commit for t-000001 running and",
	    "t-000000 done"), "t-000000's end and t-000001's start were "
	    "committed apart");
	release();
	json_object_put(wait_done(t2));
}
END_TEST

/*
 * Read c until bt is told running: whether a's end ("done") was heard
 * before, and in answered whether the answer of a's synchronous
 * batch_execute was.
 */
static int
end_heard_before_start(const char *a, const char *bt, int *answered)
{
	json_object	*r, *m;
	char		*s;
	int		 a_done = 0, b_running = 0;

	*answered = 0;
	while (!b_running && (s = client_line(c)) != NULL) {
		jstrict_parse_str(s, &r);
		ck_assert_msg(r != NULL, "not JSON: %s", s);
		free(s);
		if (json_object_object_get_ex(r, "method", &m) &&
		    strcmp(json_object_get_string(m), "notifications/job") ==
		    0) {
			if (strcmp(str(r, "params.ticket"), a) == 0 &&
			    strcmp(str(r, "params.status"), "done") == 0)
				a_done = 1;
			b_running = strcmp(str(r, "params.ticket"), bt) == 0 &&
			    strcmp(str(r, "params.status"), "running") == 0;
		} else if (jpath(r, "result.ticket") != NULL &&
		    strcmp(str(r, "result.ticket"), a) == 0 &&
		    strcmp(str(r, "result.status"), "done") == 0)
			*answered = 1;
		json_object_put(r);
	}
	ck_assert_msg(b_running, "%s was never told running", bt);
	return a_done;
}

/*
 * Heavy jobs in a row, notify: true: the first one's end, committed with
 * the next one's start, is told before it (heavy jobs never overlap).
 */
START_TEST(end_told_before_next_start)
{
	char	t1[32], t2[32];
	int	answered;

	engine_start("4");
	submit(t1, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	submit(t2, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	await_status(t1, "running");
	release();
	ck_assert_msg(end_heard_before_start(t1, t2, &answered), "%s was "
	    "told running before %s was told done", t2, t1);
	release();
	json_object_put(wait_done(t2));
}
END_TEST

/* The same, the first one awaited by a synchronous batch_execute. */
START_TEST(sync_answer_before_next_start)
{
	char	t2[32];
	int	answered;

	engine_start("4");
	client_send(c, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"hold\"}],"
	    "\"notify\":true}}\n");
	/* Its ticket, the first of a fresh store. */
	submit(t2, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	release();
	(void)end_heard_before_start("t-000000", t2, &answered);
	ck_assert_msg(answered, "the synchronous batch_execute of t-000000 "
	    "was answered after %s was told running", t2);
	release();
	json_object_put(wait_done(t2));
}
END_TEST

/*
 * The last result a worker sends (here a failure that stops an atomic
 * job) is stored with the job's end, in one commit.  (The tool takes
 * longer than a tool group's record waits, so that the record goes
 * alone and the result waits for the end, as long as an exit under
 * sanitizers takes.)
 */
START_TEST(last_result_with_end)
{
	char	t[32];

	engine_start("4");
	submit(t, "[{\"tool\":\"fail\"},{\"tool\":\"ppid\"}]",
	    "\"atomic\":true");
	wait_end(t, "failed");
	ck_assert_msg(log_line_with("t-000000 result", "t-000000 failed"),
	    "the last result and the end were committed apart");
}
END_TEST

/* A job whose first tool cannot be run still leaves a spare behind. */
START_TEST(spare_after_unstartable_tool)
{
	char	t[32];

	engine_start("4");
	submit(t, "[{\"tool\":\"nx\"}]", NULL);
	wait_end(t, "failed");
	ck_assert_int_ge(broker_await_log(&b, ": the spare"), 1);
}
END_TEST

/* SIGKILL the broker and start it again; c to the new one. */
static void
crash(void)
{
	client_close(c);
	c = NULL;
	crash_restart();
}

/*
 * Nothing is told before its commit: a job told running is running
 * after a kill -9 and restart (interrupted, not queued again), and a job
 * told done is done.
 */
START_TEST(told_means_stored)
{
	json_object	*r;
	char		 t[32];
	int		 i;

	engine_start("4");
	for (i = 0; i < 3; i++) {
		submit(t, "[{\"tool\":\"hold\"}]", "\"notify\":true");
		await_status(t, "running");
		crash();
		r = poll_job(t);
		ck_assert_str_eq(str(r, "result.status"), "failed");
		ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
		    "interrupted by broker restart"));
		json_object_put(r);
		r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"commands\":"
		    "[{\"tool\":\"ppid\"}]}}");
		ck_assert_str_eq(str(r, "result.status"), "done");
		snprintf(t, sizeof(t), "%s", str(r, "result.ticket"));
		json_object_put(r);
		crash();
		r = poll_job(t);
		ck_assert_str_eq(str(r, "result.status"), "done");
		ck_assert_ptr_nonnull(jpath(r, "result.results.0.stdout"));
		json_object_put(r);
	}
}
END_TEST

static Suite *
engine_suite(void)
{
	Suite	*s = suite_create("engine");
	TCase	*tc = tcase_create("engine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, spare_counted_one);
	tcase_add_test(tc, spare_counted_taken_never_reused);
	tcase_add_test(tc, spare_retired_when_idle);
	tcase_add_test(tc, spare_gone_with_broker);
	tcase_add_test(tc, workers_forked);
	tcase_add_test(tc, fork_server_lost);
	tcase_add_test(tc, fork_server_never_ready);
	tcase_add_test(tc, end_and_start_one_commit);
	tcase_add_test(tc, end_told_before_next_start);
	tcase_add_test(tc, sync_answer_before_next_start);
	tcase_add_test(tc, last_result_with_end);
	tcase_add_test(tc, spare_after_unstartable_tool);
	tcase_add_test(tc, told_means_stored);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(engine_suite());
}
