/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end: the reload guard, tier scheduling and editor flags
 * (helpers in jobsutil.c).
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

static void
guard_scenario(const char *test_tier)
{
	char		 tests[32], reload[32], other[32];
	json_object	*r;

	start_with(test_tier, NULL);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{\"compile\":"
	    "\"request\"}}]", NULL);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "heavy");
	json_object_put(r);
	/* The held reload does not hold back an instant job behind it. */
	submit(other, "[{\"tool\":\"echo\",\"params\":{\"text\":\"x\"}}]",
	    NULL);
	wait_end(other, "done");
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	json_object_put(r);
	release();
	r = wait_done(reload);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_eq(str(r, "results.0.result.refreshed"), "request");
	ck_assert(jpath(r, "blocked_by") != NULL ||
	    json_object_object_get_ex(r, "blocked_by", NULL));
	json_object_put(r);
	wait_end(tests, "done");
}

START_TEST(guard_heavy_tests)
{
	guard_scenario("heavy");
}
END_TEST

START_TEST(guard_smooth_tests)
{
	guard_scenario("smooth");
}
END_TEST

/* Instant jobs never hold heavy ones: only the guard explains the hold. */
START_TEST(guard_instant_tests)
{
	guard_scenario("instant");
}
END_TEST

START_TEST(editor_flags_hold_reloads)
{
	struct client	*ed;
	char		 reload[32];
	json_object	*r;

	start_with("heavy", NULL);
	ed = client_unix(b.sock);
	r = client_call(ed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"compiling\":true}}");
	json_object_put(r);
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.blocked_by"), "compiling");
	json_object_put(r);
	/* The flags go with the connection; the reload then runs. */
	client_close(ed);
	wait_end(reload, "done");
}
END_TEST

START_TEST(classification_on_submit)
{
	char		 t[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"refresh\",\"params\":{\"compile\":\"none\"}}]",
	    NULL);
	r = poll_job(t);
	ck_assert(!json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "smooth");
	json_object_put(r);
	submit(t, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	r = poll_job(t);
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	json_object_put(r);
	/* No params at all: the default "request" still makes a reload. */
	submit(t, "[{\"tool\":\"refresh\"}]", NULL);
	r = poll_job(t);
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "heavy");
	json_object_put(r);
	r = wait_done(t);
	json_object_put(r);
}
END_TEST

/* ---- H4: the guard within a pass, held reloads first, shutdown ---------
 * answers, MCP wait_job (issues 19.1, 19.4, 19.12, 11 section 5). */

/* A batch_execute request line (async, notify) for commands. */
static void
submit_line(char *buf, size_t len, int id, const char *commands)
{
	snprintf(buf, len, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":%s,\"async\":true,"
	    "\"notify\":true}}", id, commands);
}

/* The ticket in answer r (borrowed) to the request of id. */
static void
ticket_of(json_object *r, int id, char ticket[32])
{
	json_object	*a;
	size_t		 i, n = json_object_is_type(r, json_type_array) ?
			    json_object_array_length(r) : 1;

	for (i = 0; i < n; i++) {
		a = json_object_is_type(r, json_type_array) ?
		    json_object_array_get_idx(r, i) : r;
		if (json_object_get_int(jpath(a, "id")) == id) {
			snprintf(ticket, 32, "%s", str(a, "result.ticket"));
			return;
		}
	}
	ck_abort_msg("no answer to request %d in %.300s", id,
	    json_object_to_json_string(r));
}

/* The next answer on cl; notifications before it are kept for later. */
static json_object *
read_answer(struct client *cl)
{
	json_object	*r;
	char		*s;

	for (;;) {
		ck_assert_ptr_nonnull(s = client_line(cl));
		ck_assert_ptr_nonnull(r = json_tokener_parse(s));
		free(s);
		if (json_object_object_get_ex(r, "id", NULL))
			return r;
		json_object_array_add(cl->notes, r);
	}
}

/*
 * tests (instant, holds tests_running) was started in the same scheduling
 * pass as reload, which came after it: the reload must wait for it.
 */
static void
assert_reload_held(const char *tests, const char *reload)
{
	json_object	*r;

	ck_assert_int_lt(strcmp(tests, reload), 0);
	await_status(tests, "running");
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	release();
	wait_end(reload, "done");
	wait_end(tests, "done");
}

/* Issue 19.1: both submits of one JSON-RPC batch array. */
START_TEST(guard_same_pass_batch)
{
	char		 a[512], bl[512], line[1100], tests[32], reload[32];
	json_object	*r;

	start_with("instant", NULL);
	submit_line(a, sizeof(a), 1, "[{\"tool\":\"run_tests\"}]");
	submit_line(bl, sizeof(bl), 2, "[{\"tool\":\"refresh\","
	    "\"params\":{}}]");
	snprintf(line, sizeof(line), "[%s,%s]", a, bl);
	r = client_call(c, line);
	ticket_of(r, 1, tests);
	ticket_of(r, 2, reload);
	json_object_put(r);
	assert_reload_held(tests, reload);
}
END_TEST

/*
 * Issue 19.1: two clients' submits read in one loop turn (the broker is
 * stopped while both are sent, so that one epoll round sees both), stored
 * in one group commit and scheduled in one pass.
 */
START_TEST(guard_same_pass_turn)
{
	struct client	*c2;
	char		 line[512], tests[32], reload[32];
	json_object	*r;

	start_with("instant", NULL);
	c2 = client_tcp(b.port);
	r = client_call(c2, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"ping\"}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
	json_object_put(r);
	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	submit_line(line, sizeof(line) - 1, 1, "[{\"tool\":\"run_tests\"}]");
	strcat(line, "\n");
	client_send(c, line);
	submit_line(line, sizeof(line) - 1, 2, "[{\"tool\":\"refresh\","
	    "\"params\":{}}]");
	strcat(line, "\n");
	client_send(c2, line);
	ck_assert_int_eq(kill(b.pid, SIGCONT), 0);
	r = read_answer(c);
	ticket_of(r, 1, tests);
	json_object_put(r);
	r = read_answer(c2);
	ticket_of(r, 2, reload);
	json_object_put(r);
	client_close(c2);
	assert_reload_held(tests, reload);
}
END_TEST

/*
 * Issue 19.4: a reload held by a running test job goes before the test
 * jobs submitted after it; other jobs still pass it.
 */
START_TEST(held_reload_before_later_tests)
{
	char		 t1[32], reload[32], t2[32], other[32];
	json_object	*r, *rl;

	start_with("smooth", NULL);
	submit(t1, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t1, "running");
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	submit(t2, "[{\"tool\":\"run_tests\"}]", NULL);
	submit(other, "[{\"tool\":\"echo\",\"params\":{\"text\":\"x\"}}]",
	    NULL);
	wait_end(other, "done");
	r = poll_job(t2);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.position")), 1);
	json_object_put(r);
	/* The first gap: t1 ends, the reload runs, then t2. */
	release();
	rl = wait_done(reload);
	ck_assert_str_eq(str(rl, "status"), "done");
	release();
	r = wait_done(t2);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_str_le(str(rl, "finished_at"), str(r, "started_at"));
	json_object_put(r);
	json_object_put(rl);
	wait_end(t1, "done");
}
END_TEST

/*
 * Issue 19.12: on SIGTERM, a client waiting for a running job gets the
 * job's final state and then the shutdown notice, not EOF: with --sync
 * full and --sync group alike.
 */
START_TEST(shutdown_answers_waiters)
{
	const char	*args[] = { "--sync", _i ? "group" : "full", NULL };
	char		 t[32], line[256], *s;
	json_object	*r, *m;
	int		 answered = 0, noticed = 0;

	start_with("heavy", args);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
	    "\"timeout_s\":60}}\n", t);
	client_send(c, line);
	/* Answered after the wait_job was read: the wait is registered. */
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 8);
	json_object_put(r);
	ck_assert_int_eq(kill(b.pid, SIGTERM), 0);
	while ((s = client_line(c)) != NULL) {
		r = json_tokener_parse(s);
		free(s);
		ck_assert_ptr_nonnull(r);
		if (json_object_get_int(jpath(r, "id")) == 7) {
			ck_assert_str_eq(str(r, "result.status"), "failed");
			ck_assert_int_eq(strncmp(str(r, "result.error"),
			    "interrupted by broker shutdown", 30), 0);
			ck_assert(!noticed);
			answered = 1;
		}
		if ((m = jpath(r, "method")) != NULL && strcmp(
		    json_object_get_string(m),
		    "notifications/server/shutdown") == 0)
			noticed = 1;
		json_object_put(r);
	}
	ck_assert_msg(answered, "the waiter got no answer (sync %s)", args[1]);
	ck_assert_msg(noticed, "no shutdown notice (sync %s)", args[1]);
	/* It is stopping already: wait for its exit (signal 0 sends none). */
	ck_assert_int_eq(broker_signal_wait(&b, 0), 0);
}
END_TEST

/* Issue 11 section 5: MCP wait_job on a finished job answers at once. */
START_TEST(mcp_wait_finished)
{
	char		 t[32], f[32];
	json_object	*r;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"echo\",\"params\":{\"text\":\"w\"}}]", NULL);
	submit(f, "[{\"tool\":\"fail\"}]", NULL);
	json_object_put(wait_done(t));
	json_object_put(wait_done(f));
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"wait_job\",\"arguments\":{\"ticket\":"
	    "\"%s\"}}}", t);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 4);
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "done");
	ck_assert_str_eq(str(r, "result.content.0.type"), "text");
	/* As the call would have answered: what the tool printed. */
	ck_assert_str_eq(str(r, "result.content.0.text"), "w\n");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"wait_job\",\"arguments\":{\"ticket\":"
	    "\"%s\",\"timeout_s\":5}}}", f);
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.status"), "failed");
	json_object_put(r);
	assert_error(callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"wait_job\",\"arguments\":"
	    "{\"ticket\":\"t-999999\"}}}"), -32002, "unknown_ticket");
}
END_TEST

/*
 * Issue 19.2, the broker's half: editor flags held when the broker stops
 * keep holding reloads after its restart until --editor-grace passes (or
 * their holder reports again); then the reload runs and the record goes.
 */
START_TEST(editor_flags_outlive_restart)
{
	const char	*args[] = { "--tools", tools, "--kill-grace", "1",
			    "--editor-grace", "1", NULL };
	struct client	*ed;
	char		 reload[32], flags[300];
	json_object	*r;

	start_with("heavy", NULL);
	snprintf(flags, sizeof(flags), "%s", broker_path(&b, "state/editor-flags"));
	ed = client_unix(b.sock);
	json_object_put(client_call(ed, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"report_editor_state\",\"params\":"
	    "{\"tests_running\":true}}"));
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	ck_assert_int_eq(access(flags, F_OK), 0);
	client_close(c);
	c = NULL;
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	client_close(ed);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
	r = poll_job(reload);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"queue_status\"}");
	ck_assert(json_object_get_boolean(jpath(r,
	    "result.busy.tests_running")));
	json_object_put(r);
	wait_end(reload, "done");
	ck_assert_int_eq(access(flags, F_OK), -1);
	ck_assert_int_eq(broker_log_count(&b, "--editor-grace passed"), 1);
}
END_TEST

/* Report flags (a JSON object's members) on a client of its own. */
static struct client *
report(struct client *ed, const char *flags)
{
	char	line[256];

	if (ed == NULL)
		ed = client_unix(b.sock);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"report_editor_state\",\"params\":{%s}}", flags);
	json_object_put(client_call(ed, line));
	return ed;
}

/* Whether the file at path holds needle. */
static int
file_has(const char *path, const char *needle)
{
	char	buf[512];
	int	fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return 0;
	fd_slurp(fd, buf, sizeof(buf));
	return strstr(buf, needle) != NULL;
}

/* The restarted broker still holds reload on tests_running. */
static void
assert_held(const char *reload)
{
	json_object	*r = poll_job(reload);

	ck_assert_msg(strcmp(str(r, "result.status"), "queued") == 0,
	    "%s is %s", reload, str(r, "result.status"));
	ck_assert_str_eq(str(r, "result.blocked_by"), "tests_running");
	json_object_put(r);
}

/*
 * Issue 31.7: a flag restored at start stays recorded while its grace
 * runs, whatever other flags do meanwhile: a second restart within
 * --editor-grace still holds the reload.
 */
START_TEST(editor_flags_second_restart)
{
	const char	*grace[] = { "--editor-grace", "60", NULL };
	const char	*args[] = { "--tools", tools, "--kill-grace", "1",
			    "--editor-grace", "1", NULL };
	struct client	*ed;
	char		 reload[32], flags[300];

	start_with("heavy", grace);
	snprintf(flags, sizeof(flags), "%s",
	    broker_path(&b, "state/editor-flags"));
	ed = report(NULL, "\"tests_running\":true");
	submit(reload, "[{\"tool\":\"refresh\",\"params\":{}}]", NULL);
	client_close(c);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	client_close(ed);
	start_tools(grace);
	assert_held(reload);
	/* Another client's flag comes and goes; the restored one stays. */
	ed = report(NULL, "\"compiling\":true");
	report(ed, "\"compiling\":false");
	ck_assert(file_has(flags, "\"tests_running\":true"));
	client_close(c);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	client_close(ed);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
	assert_held(reload);
	wait_end(reload, "done");
	ck_assert_int_eq(access(flags, F_OK), -1);
}
END_TEST

/* The test table with refresh made a reload whatever its params. */
static void
refresh_always_reload(void)
{
	static const char	*rule = "\"reload\":{\"param\":\"compile\","
				    "\"not_in\":[\"none\"]}";
	char			 buf[8192], *at;
	int			 fd = open(tools, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	fd_slurp(fd, buf, sizeof(buf));
	ck_assert_ptr_nonnull(at = strstr(buf, rule));
	memmove(at + strlen("\"reload\":true"), at + strlen(rule),
	    strlen(at + strlen(rule)) + 1);
	memcpy(at, "\"reload\":true", strlen("\"reload\":true"));
	write_file(tools, buf, 0600);
}

/*
 * Issue 31, look at: a SIGHUP that makes a tool a reload holds the jobs
 * of it already queued as reloads: held by the guard when their turn
 * comes, and run as reloads once it lets them.
 */
START_TEST(sighup_makes_queued_reload)
{
	const char	*one[] = { "--max-workers", "1", NULL };
	struct client	*ed;
	char		 tests[32], smooth[32];
	json_object	*r;

	start_with("heavy", one);
	submit(tests, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(tests, "running");
	/* The editor's own test run outlasts the job's. */
	ed = report(NULL, "\"tests_running\":true");
	submit(smooth, "[{\"tool\":\"refresh\",\"params\":{\"compile\":"
	    "\"none\"}}]", NULL);
	r = poll_job(smooth);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert(!json_object_get_boolean(jpath(r, "result.causes_reload")));
	json_object_put(r);
	refresh_always_reload();
	kill(b.pid, SIGHUP);
	ck_assert_int_eq(broker_await_log(&b, "tools.json loaded ("), 1);
	release();
	wait_end(tests, "done");
	assert_held(smooth);
	r = poll_job(smooth);
	ck_assert(json_object_get_boolean(jpath(r, "result.causes_reload")));
	ck_assert_str_eq(str(r, "result.tier"), "heavy");
	json_object_put(r);
	report(ed, "\"tests_running\":false");
	r = wait_done(smooth);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert(json_object_get_boolean(jpath(r, "causes_reload")));
	json_object_put(r);
	client_close(ed);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("guard");
	TCase	*tc = tcase_create("guard");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, guard_heavy_tests);
	tcase_add_test(tc, guard_smooth_tests);
	tcase_add_test(tc, guard_instant_tests);
	tcase_add_test(tc, editor_flags_hold_reloads);
	tcase_add_test(tc, classification_on_submit);
	tcase_add_test(tc, guard_same_pass_batch);
	tcase_add_test(tc, guard_same_pass_turn);
	tcase_add_test(tc, held_reload_before_later_tests);
	tcase_add_loop_test(tc, shutdown_answers_waiters, 0, 2);
	tcase_add_test(tc, mcp_wait_finished);
	tcase_add_test(tc, editor_flags_outlive_restart);
	tcase_add_test(tc, editor_flags_second_restart);
	tcase_add_test(tc, sighup_makes_queued_reload);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
