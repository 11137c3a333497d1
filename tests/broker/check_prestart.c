/* SPDX-License-Identifier: ISC */
/*
 * A worker's tool before the broker knows its group (the fault shim,
 * tests/fault.c, holds the worker's start event or its spec's read): the
 * tool never outlives its worker, however the worker ends.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "faultutil.h"

/*
 * A worker that garbles its event socket before it has told its tool's
 * group (the shim writes the garbage and holds the start event; a tool
 * cannot reach that socket): the broker, which cannot kill a group it
 * does not know, has the worker end it.
 */
START_TEST(garbled_before_start)
{
	char		 tools[1024], t[32];
	json_object	*r;
	int		 pid;

	shim_prepare();
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"garble\","
	    "\"exec\":[\"sh\",\"-c\",\"echo $$ >%s; kill -USR2 $PPID; "
	    "exec sleep 30\"]}]}", broker_path(&b, "tool.pid"));
	arm("garble", 1);
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
	arm("garble", 0);
}
END_TEST

/* A worker that sends garbage is killed, its job failed, and the broker
 * serves on: the next job runs. */
START_TEST(garbled_worker_message)
{
	char		 t[32];
	json_object	*r;

	shim_prepare();
	shim_start("{\"tools\":[{\"name\":\"t\",\"exec\":[\"sh\",\"-c\","
	    "\"kill -USR2 $PPID\"]}]}", "garble", NULL);
	submit_tool("t", t);
	r = on_ticket("wait_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "failed");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(jpath(r,
	    "result.error")), "garbled"));
	json_object_put(r);
	arm("garble", 0);
	submit_tool("t", t);
	r = on_ticket("wait_job", t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
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
 * process), here forged by the shim in its worker's event socket:
 * garbled, and the group is never recorded.
 */
START_TEST(start_group_one_refused)
{
	char		 tools[512], t[32];
	const char	*e;
	json_object	*r;

	shim_prepare();
	snprintf(tools, sizeof(tools), "{\"tools\":[{\"name\":\"forge\","
	    "\"exec\":[\"true\"]}]}");
	shim_start(tools, "pgid1", NULL);
	submit_tool("forge", t);
	r = on_ticket("wait_job", t);
	e = json_object_get_string(jpath(r, "result.error"));
	ck_assert_msg(e != NULL && strstr(e, "garbled start from the worker") !=
	    NULL, "%s", json_object_to_json_string(r));
	json_object_put(r);
	arm("pgid1", 0);
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
prestart_suite(void)
{
	Suite	*s = suite_create("prestart");
	TCase	*tc = tcase_create("prestart");

	tcase_add_checked_fixture(tc, fault_setup, fault_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, garbled_before_start);
	tcase_add_test(tc, garbled_worker_message);
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
	return ck_run(prestart_suite());
}
