/* SPDX-License-Identifier: ISC */
/*
 * Faults injected under the real broker with a preload shim (tests/fault.c):
 * a full disk and a failed sync at commit.  The caller gets storage_error,
 * nothing is half-applied, the broker keeps serving.
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
#include "testnet.h"

#define SUBMIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"echo\"," \
		"\"params\":{\"text\":\"x\"}}]}}"

static struct broker	 b;
static struct client	*c;

/* The broker under the shim, with args; c to it. */
static void
start_shimmed(const char **args)
{
	const char	*shim = getenv("CMDGATE_FAULT_SHIM");
	const char	*asan = getenv("ASAN_OPTIONS");
	char		 opts[512];

	ck_assert_msg(shim != NULL, "CMDGATE_FAULT_SHIM is not set");
	/* The broker inherits these; the test itself is already loaded. */
	setenv("LD_PRELOAD", shim, 1);
	setenv("CMDGATE_FAULT_DIR", b.dir, 1);
	snprintf(opts, sizeof(opts), "%s%sverify_asan_link_order=0",
	    asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	unsetenv("LD_PRELOAD");
	c = client_tcp(b.port);
}

static void
setup(void)
{
	broker_prepare(&b);
	start_shimmed(NULL);
}

static void
teardown(void)
{
	client_close(c);
	broker_stop(&b);
}

static void
arm(const char *fault, int on)
{
	const char	*path = broker_path(&b, fault);

	if (on)
		write_file(path, "", 0600);
	else
		ck_assert_int_eq(unlink(path), 0);
}

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
 * Workers under the shim too: their environment is cleared, so a script
 * in the test's dir (CMDGATE_WORKER) sets it up and runs the real one.
 */
static void
shim_workers(int on)
{
	static char	 saved[PATH_MAX];
	static int	 had;
	const char	*w = getenv("CMDGATE_WORKER");
	const char	*asan = getenv("ASAN_OPTIONS");
	char		 real[PATH_MAX], text[3 * PATH_MAX], *script;

	if (!on) {
		if (had)
			setenv("CMDGATE_WORKER", saved, 1);
		else
			unsetenv("CMDGATE_WORKER");
		return;
	}
	if ((had = w != NULL))
		snprintf(saved, sizeof(saved), "%s", w);
	ck_assert_ptr_nonnull(realpath(w != NULL && *w != '\0' ? w :
	    "workers/cmdgate-worker", real));
	snprintf(text, sizeof(text), "#!/bin/sh\nLD_PRELOAD='%s' "
	    "CMDGATE_FAULT_DIR='%s' ASAN_OPTIONS='%s%sverify_asan_link_order=0'"
	    " exec '%s' \"$@\"\n", getenv("CMDGATE_FAULT_SHIM"), b.dir,
	    asan ? asan : "", asan ? ":" : "", real);
	script = strdup(broker_path(&b, "shimmed-worker"));
	write_file(script, text, 0700);
	setenv("CMDGATE_WORKER", script, 1);
	free(script);
}

/* A fresh broker in a fresh dir is coming: b.dir names it for the table. */
static void
shim_prepare(void)
{
	client_close(c);
	broker_stop(&b);
	broker_prepare(&b);
}

/*
 * Start it with the tool table tools, fault armed (if not NULL), and its
 * workers under the shim; with --kill-grace grace if it is not NULL.  c
 * to it.
 */
static void
shim_start(const char *tools, const char *fault, const char *grace)
{
	const char	*args[] = { "--tools", NULL, "--kill-grace", grace,
			    NULL };
	char		 table[256];

	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, tools, 0600);
	args[1] = table;
	if (grace == NULL)
		args[2] = NULL;
	if (fault != NULL)
		arm(fault, 1);
	shim_workers(1);
	start_shimmed(args);
	shim_workers(0);
}

/* Submit one async job of tool: its ticket into t. */
static void
submit_tool(const char *tool, char t[32])
{
	char		 line[256];
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"%s\"}]}}", tool);
	r = client_call(c, line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	snprintf(t, 32, "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	json_object_put(r);
}

/* Call method on ticket t (cancel_job, wait_job): the answer. */
static json_object *
on_ticket(const char *method, const char *t)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"%s\",\"params\":{\"ticket\":\"%s\"%s}}", method, t,
	    strcmp(method, "wait_job") == 0 ? ",\"timeout_s\":20" : "");
	return client_call(c, line);
}

/*
 * Whether the tool pid (a group leader) ends within 10 s; if not, it is
 * killed, and the worker the test stopped is let go.
 */
static int
tool_ends(pid_t pid, pid_t stopped)
{
	int	ended = pid_ends_within(pid, 10000);

	if (!ended && stopped > 0)
		kill(stopped, SIGCONT);
	return ended;
}

/*
 * A tool that garbles its worker's pipe before the worker has told its
 * group (the shim holds the start event): the broker, which cannot kill
 * a group it does not know, has the worker end it.
 */
START_TEST(garbled_before_start)
{
	char		 tools[1024], t[32];
	json_object	*r;
	int		 pid;

	shim_prepare();
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"garble\","
	    "\"exec\":[\"sh\",\"-c\",\"echo $$ >%s; echo '{not json' "
	    ">/proc/$PPID/fd/1; exec sleep 30\"]}]}",
	    broker_path(&b, "tool.pid"));
	shim_start(tools, "startlate", NULL);
	submit_tool("garble", t);
	r = on_ticket("wait_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "failed");
	ck_assert_msg(strstr(json_object_get_string(jpath(r, "result.error")),
	    "garbled message from the worker") != NULL, "error: %s",
	    json_object_get_string(jpath(r, "result.error")));
	json_object_put(r);
	pid = broker_file_number(&b, "tool.pid");
	/* Its group goes with the worker (the grace is 5 s by default). */
	ck_assert_msg(tool_ends(pid, 0), "the tool (%d) outlived its garbled "
	    "worker", pid);
	arm("startlate", 0);
}
END_TEST

/*
 * A worker killed by the kill timer before it told its tool's group (a
 * starved worker: stopped here, the shim holding its start event): the
 * tool goes with it, not to pid 1.
 */
START_TEST(killed_before_start)
{
	char		 tools[1024], fifo[256], stat[512], t[32], *p;
	json_object	*r;
	FILE		*f;
	int		 pid, worker = -1;

	shim_prepare();
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"block\","
	    "\"exec\":[\"sh\",\"-c\",\"echo $$ >%s; exec cat %s\"]}]}",
	    broker_path(&b, "tool.pid"), fifo);
	shim_start(tools, "startlate", "1");
	submit_tool("block", t);
	pid = broker_file_number(&b, "tool.pid");
	/* Its worker is its parent ("PID (comm) S PPID ..."). */
	snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
	ck_assert_ptr_nonnull(f = fopen(stat, "r"));
	ck_assert_ptr_nonnull(fgets(stat, sizeof(stat), f));
	fclose(f);
	ck_assert_ptr_nonnull(p = strrchr(stat, ')'));
	ck_assert_int_eq(sscanf(p + 1, " %*c %d", &worker), 1);
	/* Starved: it hears no SIGTERM, and the kill timer comes. */
	ck_assert_int_eq(kill(worker, SIGSTOP), 0);
	r = on_ticket("cancel_job", t);
	ck_assert_msg(json_object_get_boolean(jpath(r, "result.cancelled")),
	    "%s", json_object_to_json_string(r));
	json_object_put(r);
	ck_assert_msg(tool_ends(pid, worker), "the tool (%d) outlived its "
	    "killed worker", pid);
	arm("startlate", 0);
}
END_TEST

/*
 * A worker killed from outside (the OOM killer, say) before its start
 * event was written: the broker finds the tool it was not told of among
 * the processes orphaned to it, and ends it.
 */
START_TEST(lost_before_start)
{
	char		 tools[1024], fifo[256], wfile[256], t[32];
	json_object	*r;
	pid_t		 pid;

	shim_prepare();
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(wfile, sizeof(wfile), "%s", broker_path(&b, "worker.pid"));
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"block\","
	    "\"exec\":[\"sh\",\"-c\",\"echo $PPID >%s; echo $$ >%s; "
	    "exec cat %s\"]}]}", wfile, broker_path(&b, "tool.pid"), fifo);
	shim_start(tools, "startlate", NULL);
	submit_tool("block", t);
	pid = broker_file_number(&b, "tool.pid");
	ck_assert_int_eq(kill(broker_file_number(&b, "worker.pid"), SIGKILL),
	    0);
	r = on_ticket("wait_job", t);
	/* First, so that a failure leaves no tool behind. */
	ck_assert_msg(tool_ends(pid, 0), "the tool (%d) outlived its lost "
	    "worker", pid);
	ck_assert_msg(strstr(json_object_get_string(jpath(r, "result.error")),
	    "SIGKILL") != NULL, "%s", json_object_to_json_string(r));
	json_object_put(r);
	arm("startlate", 0);
}
END_TEST

/*
 * A start event naming process group 1 (kill(-1) would reach every
 * process), here forged by the tool in its worker's pipe: garbled, and
 * the group is never recorded.
 */
START_TEST(start_group_one_refused)
{
	char		 tools[512], t[32];
	const char	*e;
	json_object	*r;

	shim_prepare();
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"forge\","
	    "\"exec\":[\"sh\",\"-c\",\"echo '{\\\"event\\\":\\\"start\\\","
	    "\\\"index\\\":0,\\\"pgid\\\":1}' >/proc/$PPID/fd/1\"]}]}");
	shim_start(tools, NULL, NULL);
	submit_tool("forge", t);
	r = on_ticket("wait_job", t);
	e = json_object_get_string(jpath(r, "result.error"));
	ck_assert_msg(e != NULL && strstr(e, "garbled start from the worker") !=
	    NULL, "%s", json_object_to_json_string(r));
	json_object_put(r);
}
END_TEST

/*
 * A job cancelled while its worker reads the spec (the shim holds the
 * read until the SIGTERM): the worker starts no tool, and the job ends
 * cancelled with no result.
 */
START_TEST(cancelled_before_start)
{
	char		 tools[1024], marker[256], t[32];
	json_object	*r;

	shim_prepare();
	snprintf(marker, sizeof(marker), "%s", broker_path(&b, "started"));
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"mark\","
	    "\"exec\":[\"sh\",\"-c\",\"touch %s; exec sleep 30\"]}]}",
	    marker);
	shim_start(tools, "speclate", NULL);
	submit_tool("mark", t);
	/* The worker waits in its spec's read, SIGTERM blocked. */
	ck_assert_int_eq(wait_for_file(broker_path(&b, "speclate.held")), 0);
	r = on_ticket("cancel_job", t);
	ck_assert_msg(json_object_get_boolean(jpath(r, "result.cancelled")),
	    "%s", json_object_to_json_string(r));
	json_object_put(r);
	r = on_ticket("wait_job", t);
	ck_assert_msg(json_object_array_length(jpath(r, "result.results")) ==
	    0 && access(marker, F_OK) == -1, "a tool ran after the cancel: "
	    "%s", json_object_to_json_string(r));
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "cancelled");
	json_object_put(r);
	/* It got the SIGTERM it waited for, and exited on its own. */
	ck_assert_int_eq(broker_log_count(&b, "lost: killed by signal"), 0);
	arm("speclate", 0);
}
END_TEST

static Suite *
faults_suite(void)
{
	Suite	*s = suite_create("faults");
	TCase	*tc = tcase_create("faults");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, disk_full_at_commit);
	tcase_add_test(tc, disk_full_fails_the_group);
	tcase_add_test(tc, sync_failure_is_fail_stop);
	tcase_add_test(tc, disk_full_while_running);
	tcase_add_test(tc, unstored_result_not_shown);
	tcase_add_test(tc, spawn_fails);
	tcase_add_test(tc, spec_pipe_fails);
	tcase_add_test(tc, garbled_before_start);
	tcase_add_test(tc, killed_before_start);
	tcase_add_test(tc, lost_before_start);
	tcase_add_test(tc, start_group_one_refused);
	tcase_add_test(tc, cancelled_before_start);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(faults_suite());
}
