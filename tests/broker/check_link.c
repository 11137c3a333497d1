/* SPDX-License-Identifier: ISC */
/*
 * The editor link (issue 33): every exchange with MCP for Unity's bridge,
 * each job worker's and the editor probe's, goes over the broker's one
 * connection to it, in order, through a real cmdgated against fake_unity
 * (which, like the real bridge, serves one client at a time and answers
 * its frames one after another); the broker's reads of uLoopMCP's editor
 * go over one connection to fake_uloop, its workers' calls over their
 * own.
 */
#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "fakeutil.h"
#include "jobsutil.h"
#include "testnet.h"

#define NJOBS	12

static struct fake	 fk;

static void
lk_setup(void)
{
	setup();
	fk.pid = -1;
}

static void
lk_teardown(void)
{
	fake_stop(&fk);
	teardown();
}

/*
 * cmdgated with the shipped table etc/tools/table for fk's port and
 * tools more, tool (JSON objects; %d or %1$d: port) first in its list.
 */
static void
start_plus(const char *table, const char *tool, int port)
{
	char	obj[1024], with[1100];

	snprintf(obj, sizeof(obj), tool, port);
	snprintf(with, sizeof(with), "\"tools\": [%s,", obj);
	table_for(tools, table, fk.port, "\"tools\": [", with);
	start_tools(NULL);
}

/*
 * fake_unity, and cmdgated with the shipped unity-mcp table (its probe
 * too), slow_read, read_console with a 1 s timeout, and patient_read,
 * read_console with a 1 s connect_timeout_s and a 5 s timeout.
 */
static void
link_start(void)
{
	fake_start(&fk, "FAKE_UNITY", NULL);
	start_plus("unity-mcp.json", "{\"name\":\"slow_read\",\"forward\":"
	    "{\"to\":\"127.0.0.1:%1$d\",\"dialect\":\"unity-mcp\",\"method\":"
	    "\"read_console\"},\"tier\":\"instant\",\"timeout_s\":1},"
	    "{\"name\":\"patient_read\",\"forward\":{\"to\":"
	    "\"127.0.0.1:%1$d\",\"dialect\":\"unity-mcp\",\"method\":"
	    "\"read_console\",\"connect_timeout_s\":1},\"tier\":\"instant\","
	    "\"timeout_s\":5}", fk.port);
	fake_await(&fk, "recv get_editor_state ");
}

/* A read_console (tool) the editor holds its answer to: its ticket. */
static void
stalled_read(char rd[32], const char *tool)
{
	char	cmds[128];

	fake_ctl(&fk, "stall read_console");
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"%s\",\"params\":{}}]",
	    tool);
	submit(rd, cmds, NULL);
	fake_await(&fk, "stalled read_console");
}

/* get_project_info job p ends done with its own answer. */
static void
project_done(const char *p)
{
	json_object	*r = wait_done(p);

	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.result.data.projectName"),
	    "FakeProject");
	json_object_put(r);
}

/* A get_project_info submitted now (then, unstall: the stalled answer
 * goes) gets its own answer. */
static void
project_read(int unstall)
{
	char	p[32];

	submit(p, "[{\"tool\":\"get_project_info\"}]", NULL);
	if (unstall)
		fake_ctl(&fk, "unstall");
	project_done(p);
}

/* Whether the state dir holds a file whose name begins with prefix. */
static int
state_has(const char *prefix)
{
	DIR		*d = opendir(broker_path(&b, "state"));
	struct dirent	*e;
	int		 found = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			found = 1;
	closedir(d);
	return found;
}

/* server_status's editor_links[0] (caller puts the status). */
static json_object *
link_status(json_object **st)
{
	json_object	*links;

	*st = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"server_status\"}");
	links = jpath(*st, "result.editor_links");
	ck_assert_msg(links != NULL && json_object_array_length(links) == 1,
	    "%s", json_object_to_json_string(*st));
	return json_object_array_get_idx(links, 0);
}

/* The one link, of dialect, is open and connected once: its calls. */
static int
link_open_once(const char *dialect)
{
	json_object	*st, *l;
	int		 calls;

	l = link_status(&st);
	ck_assert_str_eq(str(l, "dialect"), dialect);
	ck_assert(json_object_get_boolean(jpath(l, "connected")));
	ck_assert_int_eq(json_object_get_int(jpath(l, "connects")), 1);
	calls = json_object_get_int(jpath(l, "calls"));
	json_object_put(st);
	return calls;
}

/* cmdgate top --once shows the link. */
static void
top_shows_link(void)
{
	char	buf[16384], want[128];
	int	out, status;
	pid_t	pid;

	setenv("COLUMNS", "200", 1);
	pid = cli_spawn(b.port, &out, "top", "--once", NULL);
	fd_slurp(out, buf, sizeof(buf));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(want, sizeof(want), "editor link 127.0.0.1:%d (unity-mcp): "
	    "connected, ", fk.port);
	ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, ", 1 connects, 0 lost"));
}

/*
 * Reads from many jobs at once and the probe's polls: one connection,
 * nobody cut off, each job its own answer, and no lock file.
 */
START_TEST(one_connection)
{
	char		 t[NJOBS][32];
	json_object	*r;
	int		 i;

	link_start();
	for (i = 0; i < NJOBS; i++)
		submit(t[i], i % 2 == 0 ? "[{\"tool\":\"get_project_info\"}]" :
		    "[{\"tool\":\"read_console\",\"params\":{}}]", NULL);
	for (i = 0; i < NJOBS; i++) {
		r = wait_done(t[i]);
		ck_assert_str_eq(str(r, "status"), "done");
		if (i % 2 == 0)
			ck_assert_str_eq(str(r, "results.0.result.data."
			    "projectName"), "FakeProject");
		else
			ck_assert_ptr_nonnull(jpath(r,
			    "results.0.result.data"));
		json_object_put(r);
	}
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
	ck_assert_int_eq(fake_count(&fk, "cut "), 0);
	ck_assert_int_eq(fake_count(&fk, "recv get_project_info "), NJOBS / 2);
	ck_assert_int_ge(link_open_once("unity-mcp"), NJOBS + 1);
	ck_assert(!state_has("upstream-"));
	top_shows_link();
}
END_TEST

/*
 * A read the editor is slow to answer: the call behind it waits for it
 * (the bridge answers in order), and each gets its own answer.
 */
START_TEST(in_order_behind_a_slow_read)
{
	char		 rd[32], p[32];
	json_object	*r;

	link_start();
	stalled_read(rd, "read_console");
	submit(p, "[{\"tool\":\"get_project_info\"}]", NULL);
	r = poll_job(p);
	ck_assert_str_eq(str(r, "result.status"), "running");
	json_object_put(r);
	ck_assert_int_eq(fake_count(&fk, "recv get_project_info "), 0);
	fake_ctl(&fk, "unstall");
	project_done(p);
	r = wait_done(rd);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_null(jpath(r, "results.0.result.data.projectName"));
	json_object_put(r);
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
}
END_TEST

/*
 * A call that timed out while the editor still held its answer: that
 * answer, when it comes, is nobody's, and the call behind it gets its
 * own.
 */
START_TEST(late_answer_is_nobodys)
{
	char		 rd[32];
	json_object	*r;

	link_start();
	stalled_read(rd, "slow_read");
	r = wait_done(rd);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error_type"), "upstream_timeout");
	json_object_put(r);
	project_read(1);
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
}
END_TEST

/*
 * A read written at once waits for its answer until its timeout, not
 * its connect_timeout_s: a slow_read behind it times out (1 s), and it
 * is still running, then gets its answer.
 */
START_TEST(answer_after_connect_timeout)
{
	char		 rd[32], slow[32];
	json_object	*r;

	link_start();
	stalled_read(rd, "patient_read");
	submit(slow, "[{\"tool\":\"slow_read\",\"params\":{}}]", NULL);
	r = wait_done(slow);
	ck_assert_str_eq(str(r, "results.0.error_type"), "upstream_timeout");
	json_object_put(r);
	r = poll_job(rd);
	ck_assert_str_eq(str(r, "result.status"), "running");
	json_object_put(r);
	fake_ctl(&fk, "unstall");
	r = wait_done(rd);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
}
END_TEST

/* server_status's fork_server.workers_forked. */
static int64_t
forked(void)
{
	json_object	*st = callf("{\"jsonrpc\":\"2.0\",\"id\":6,"
			    "\"method\":\"server_status\"}");
	int64_t		 n;

	ck_assert_msg(jpath(st, "result.fork_server.workers_forked") != NULL,
	    "%s", json_object_to_json_string(st));
	n = json_object_get_int64(jpath(st,
	    "result.fork_server.workers_forked"));
	json_object_put(st);
	return n;
}

/*
 * An instant read over an open link needs no worker: the broker sends it
 * and makes its result as a worker would.  A read that ended done is not
 * in the info log, one that failed is.
 */
START_TEST(read_without_worker)
{
	char		 t[32], line[64];
	json_object	*r;
	int64_t		 before;
	int		 i;

	link_start();
	before = forked();
	for (i = 0; i < 6; i++) {
		submit(t, "[{\"tool\":\"get_project_info\"}]", NULL);
		r = wait_done(t);
		ck_assert_str_eq(str(r, "status"), "done");
		ck_assert_str_eq(str(r, "results.0.tool"), "get_project_info");
		ck_assert(json_object_get_boolean(jpath(r, "results.0.ok")));
		ck_assert(json_object_get_boolean(jpath(r, "results.0.sent")));
		ck_assert_ptr_nonnull(jpath(r, "results.0.duration_ms"));
		ck_assert_str_eq(str(r, "results.0.result.data.projectName"),
		    "FakeProject");
		json_object_put(r);
		snprintf(line, sizeof(line), "%s done", t);
		ck_assert_int_eq(broker_log_count(&b, line), 0);
	}
	/* A tool-level failure is the worker's tool_failed too. */
	submit(t, "[{\"tool\":\"get_test_job\",\"params\":{\"job_id\":"
	    "\"none\"}}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error_type"), "tool_failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"),
	    "the tool reported a failure: Unknown job_id."));
	ck_assert(!json_object_get_boolean(jpath(r,
	    "results.0.result.success")));
	json_object_put(r);
	snprintf(line, sizeof(line), "%s failed: ", t);
	ck_assert_int_eq(broker_await_log(&b, line), 1);
	ck_assert_int_eq(forked(), before);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv get_project_info "), 6);
}
END_TEST

/*
 * Cancelled while the editor holds its answer: the job ends cancelled at
 * once; the answer, when it comes, is no one's, and the next read gets
 * its own.
 */
START_TEST(cancel_read_without_worker)
{
	char		 rd[32];
	json_object	*r;

	link_start();
	stalled_read(rd, "read_console");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", rd);
	json_object_put(r);
	r = wait_done(rd);
	ck_assert_str_eq(str(r, "status"), "cancelled");
	ck_assert_str_eq(str(r, "results.0.error_type"), "cancelled");
	json_object_put(r);
	project_read(1);
}
END_TEST

/*
 * An idempotent read lost when the editor reloads under it: a worker
 * takes it on and sends it again once the editor is back.
 */
START_TEST(lost_read_handed_to_worker)
{
	char		 rd[32];
	json_object	*r;

	link_start();
	stalled_read(rd, "read_console");
	fake_ctl(&fk, "reload");
	ck_assert_int_eq(broker_await_log(&b, "a worker takes it on"), 1);
	fake_ctl(&fk, "reload-done");
	r = wait_done(rd);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.ok")));
	json_object_put(r);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "recv read_console "), 2);
}
END_TEST

/*
 * A second bridge (another "to") gets a link of its own: each bridge
 * sees one connection, and neither's reads wait for the other's.
 */
START_TEST(second_bridge_own_link)
{
	struct fake	 fk2;
	char		 t[2][32];
	json_object	*r, *st, *links;
	int		 i;

	fake_start(&fk, "FAKE_UNITY", NULL);
	fake_start(&fk2, "FAKE_UNITY", NULL);
	start_plus("unity-mcp.json", "{\"name\":\"other_info\",\"forward\":"
	    "{\"to\":\"127.0.0.1:%d\",\"dialect\":\"unity-mcp\",\"method\":"
	    "\"get_project_info\"},\"tier\":\"instant\"}", fk2.port);
	stalled_read(t[0], "read_console");
	for (i = 0; i < 3; i++) {
		submit(t[1], "[{\"tool\":\"other_info\"}]", NULL);
		project_done(t[1]);
	}
	fake_ctl(&fk, "unstall");
	r = wait_done(t[0]);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	fake_ctl(&fk2, "sync");
	ck_assert_int_eq(fake_count(&fk2, "accept"), 1);
	ck_assert_int_eq(fake_count(&fk2, "recv get_project_info "), 3);
	fake_ctl(&fk, "sync");
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
	st = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"server_status\"}");
	links = jpath(st, "result.editor_links");
	ck_assert_int_eq(json_object_array_length(links), 2);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(json_object_get_int(jpath(
		    json_object_array_get_idx(links, i), "connects")), 1);
	json_object_put(st);
	fake_stop(&fk2);
}
END_TEST

/* ---- jsonrpc-lsp: uLoopMCP's editor ---------------------------------- */

/* fake_uloop (Content-Length frames) and the shipped uloop table with
 * no_such, a read of a method the editor does not know. */
static void
uloop_start(void)
{
	fake_start(&fk, "FAKE_ULOOP", "-l", NULL);
	start_plus("uloop.json", "{\"name\":\"no_such\",\"forward\":{\"to\":"
	    "\"127.0.0.1:%d\",\"dialect\":\"jsonrpc-lsp\",\"idempotent\":"
	    "true},\"tier\":\"instant\"}", fk.port);
}

/* A get-logs job t ends done with the editor's answer. */
static void
logs_done(const char *t)
{
	json_object	*r = wait_done(t);

	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.ok")));
	ck_assert(json_object_get_boolean(jpath(r, "results.0.sent")));
	ck_assert_ptr_nonnull(jpath(r, "results.0.result.Ver"));
	json_object_put(r);
}

/*
 * Reads of uLoopMCP's editor need no worker: the first opens the link,
 * every one goes over it, each gets the answer of its own id; an error
 * answer is the read's.
 */
START_TEST(uloop_reads_over_one_link)
{
	char		 t[NJOBS][32];
	json_object	*r;
	int64_t		 before;
	int		 i;

	uloop_start();
	before = forked();
	for (i = 0; i < NJOBS; i++)
		submit(t[i], "[{\"tool\":\"get-logs\"}]", NULL);
	for (i = 0; i < NJOBS; i++)
		logs_done(t[i]);
	submit(t[0], "[{\"tool\":\"no_such\"}]", NULL);
	r = wait_done(t[0]);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error_type"), "upstream_error");
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "results.0.upstream_error.code")), -32601);
	json_object_put(r);
	ck_assert_int_eq(forked(), before);
	for (i = 0; i < NJOBS; i++)
		fake_await(&fk, "recv get-logs ");
	ck_assert_int_eq(fake_count(&fk, "accept"), 1);
	ck_assert_int_eq(link_open_once("jsonrpc-lsp"), NJOBS + 1);
}
END_TEST

/*
 * A worker's long call (a test run the editor answers when it ends) goes
 * over a connection of its own: reads are not held behind it.
 */
START_TEST(uloop_read_beside_a_test_run)
{
	char		 run[32], rd[32];
	json_object	*r;

	uloop_start();
	submit(run, "[{\"tool\":\"run-tests\"}]", NULL);
	fake_await(&fk, "recv run-tests ");
	submit(rd, "[{\"tool\":\"get-logs\"}]", NULL);
	logs_done(rd);
	r = poll_job(run);
	ck_assert_str_eq(str(r, "result.status"), "running");
	json_object_put(r);
	fake_ctl(&fk, "end-tests succeeded");
	r = wait_done(run);
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	ck_assert_int_eq(fake_count(&fk, "accept"), 2);
}
END_TEST

/*
 * A read while the editor reloads (connects refused): a worker takes it
 * on, and it is answered once the editor is back.
 */
START_TEST(uloop_refused_read_handed_to_worker)
{
	char	rd[32];

	uloop_start();
	submit(rd, "[{\"tool\":\"get-logs\"}]", NULL);
	logs_done(rd);
	fake_ctl(&fk, "reload");
	submit(rd, "[{\"tool\":\"get-logs\"}]", NULL);
	ck_assert_int_eq(broker_await_log(&b, "a worker takes it on"), 1);
	fake_ctl(&fk, "reload-done");
	logs_done(rd);
	ck_assert_int_eq(broker_log_count(&b, "running: worker"), 1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("link");
	TCase	*tc = tcase_create("unity-mcp");

	tcase_add_checked_fixture(tc, lk_setup, lk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_connection);
	tcase_add_test(tc, in_order_behind_a_slow_read);
	tcase_add_test(tc, late_answer_is_nobodys);
	tcase_add_test(tc, answer_after_connect_timeout);
	tcase_add_test(tc, read_without_worker);
	tcase_add_test(tc, cancel_read_without_worker);
	tcase_add_test(tc, lost_read_handed_to_worker);
	tcase_add_test(tc, second_bridge_own_link);
	suite_add_tcase(s, tc);
	tc = tcase_create("jsonrpc-lsp");
	tcase_add_checked_fixture(tc, lk_setup, lk_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, uloop_reads_over_one_link);
	tcase_add_test(tc, uloop_read_beside_a_test_run);
	tcase_add_test(tc, uloop_refused_read_handed_to_worker);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
