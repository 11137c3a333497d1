/* SPDX-License-Identifier: ISC */
/*
 * Progress, logging and cancellation of MCP tools/call jobs (issue 13),
 * on the real broker over its TCP newline JSON-RPC: exec tools' notify
 * descriptor lines, notifications/progress, logging/setLevel and
 * notifications/message, and notifications/cancelled.  The line protocol
 * alone is in check_notify.
 */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "../../workers/notify.h"
#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"

static const char *scripts[][2] = {
	{ "prog.sh",
	  "printf 'progress 0/100\\n' >&4\n"
	  "printf 'progress 50/100 halfway\\n' >&4\n"
	  "printf 'log info hello\\n' >&4\n"
	  "printf 'log debug quiet\\n' >&4\n"
	  "printf 'log warning careful\\n' >&4\n"
	  "printf 'not a notify line\\n' >&4\n"
	  "printf 'progress 25/100 backwards\\n' >&4\n"
	  "printf 'progress 100/100\\n' >&4\n" },
	{ "plain.sh",
	  "echo \"notify=$CMDGATE_NOTIFY_FD\"\n" },
	{ "heir.sh",
	  "sleep 60 </dev/null >/dev/null 2>&1 &\n"
	  "printf 'progress 10/100 left a child\\n' >&4\n" },
	{ "flood.sh",
	  "yes 'log warning spam' | head -n 20000 >&4\n"
	  "yes 'progress 5/10' | head -n 20000 >&4\n" },
	{ "long.sh",
	  "head -c 5000 /dev/zero | tr '\\0' x >&4\n"
	  "printf '\\nlog warning after\\n' >&4\n" },
};

static const char table[] = "{\"tools\":["
    "{\"name\":\"prog\",\"tier\":\"instant\",\"exec\":[\"sh\",\"%1$s/prog.sh\"]},"
    "{\"name\":\"plain\",\"tier\":\"instant\",\"exec\":[\"sh\",\"%1$s/plain.sh\"]},"
    "{\"name\":\"heir\",\"tier\":\"instant\",\"exec\":[\"sh\",\"%1$s/heir.sh\"]},"
    "{\"name\":\"flood\",\"tier\":\"instant\",\"exec\":[\"sh\",\"%1$s/flood.sh\"]},"
    "{\"name\":\"long\",\"tier\":\"instant\",\"exec\":[\"sh\",\"%1$s/long.sh\"]},"
    "{\"name\":\"fail\",\"tier\":\"instant\",\"exec\":[\"false\"]},"
    "{\"name\":\"blocker\",\"tier\":\"heavy\",\"busy\":\"tests_running\","
    " \"exec\":[\"cat\",\"%2$s\"]},"
    "{\"name\":\"reload\",\"tier\":\"heavy\",\"reload\":true,"
    " \"exec\":[\"true\"]},"
    "{\"name\":\"later\",\"tier\":\"smooth\",\"exec\":[\"true\"]}"
    "]}";

static void
start_progress(void)
{
	char	json[4096];
	size_t	i;

	for (i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
		write_file(broker_path(&b, scripts[i][0]), scripts[i][1], 0700);
	snprintf(json, sizeof(json), table, b.dir, fifo);
	write_file(tools, json, 0600);
	start_tools(NULL);
}

static json_object *
cl_call(struct client *cl, const char *fmt, ...)
{
	char	line[8192];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return client_call(cl, line);
}

static void
set_level(struct client *cl, const char *level)
{
	json_object	*r = cl_call(cl, "{\"jsonrpc\":\"2.0\",\"id\":90,"
	    "\"method\":\"logging/setLevel\",\"params\":{\"level\":\"%s\"}}",
	    level);

	ck_assert_msg(json_object_is_type(jpath(r, "result"),
	    json_type_object), "setLevel: %s", json_object_to_json_string(r));
	json_object_put(r);
}

/* tools/call of tool on cl with token (JSON, or NULL); its answer. */
static json_object *
tool_call(struct client *cl, int id, const char *tool, const char *token)
{
	if (token == NULL)
		return cl_call(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"%s\"}}", id, tool);
	return cl_call(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"_meta\":"
	    "{\"progressToken\":%s}}}", id, tool, token);
}

/* Send a tools/call on cl without waiting for its answer. */
static void
tool_send(struct client *cl, int id, const char *tool, const char *token)
{
	char	line[1024];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"%s\",\"_meta\":"
	    "{\"progressToken\":%s}}}\n", id, tool, token);
	client_send(cl, line);
}

/* Read cl until the answer of a request (notifications kept in notes). */
static json_object *
answer_of(struct client *cl)
{
	json_object	*r;
	char		*s;

	for (;;) {
		s = client_line(cl);
		ck_assert_msg(s != NULL, "no answer");
		r = json_tokener_parse(s);
		free(s);
		ck_assert(r != NULL);
		if (json_object_object_get_ex(r, "id", NULL))
			return r;
		json_object_array_add(cl->notes, r);
	}
}

/* Read cl until a notifications/progress whose message is msg. */
static json_object *
await_progress(struct client *cl, const char *msg)
{
	json_object	*n;

	while ((n = client_wait_method(cl, "notifications/progress")) != NULL) {
		if (strcmp(str(n, "params.message"), msg) == 0)
			return n;
		json_object_put(n);
	}
	ck_abort_msg("no progress '%s'", msg);
	return NULL;
}

static const char *
method_of(json_object *n)
{
	json_object	*m = jpath(n, "method");

	return m != NULL ? json_object_get_string(m) : "";
}

/*
 * The progress notifications in cl's notes: each with token (JSON text)
 * and total 100, strictly increasing above floor; how many.
 */
static int
check_progress(struct client *cl, const char *token, double floor)
{
	json_object	*n;
	size_t		 i;
	double		 v, last = floor;
	int		 count = 0;

	for (i = 0; i < json_object_array_length(cl->notes); i++) {
		n = json_object_array_get_idx(cl->notes, i);
		if (strcmp(method_of(n), "notifications/progress") != 0)
			continue;
		ck_assert_str_eq(json_object_to_json_string_ext(jpath(n,
		    "params.progressToken"), JSON_C_TO_STRING_PLAIN), token);
		ck_assert_int_eq(json_object_get_int(jpath(n, "params.total")),
		    100);
		v = json_object_get_double(jpath(n, "params.progress"));
		ck_assert_msg(v > last, "progress %g after %g", v, last);
		last = v;
		count++;
	}
	return count;
}

/* The progress note of cl's notes with message msg, or NULL (borrowed). */
static json_object *
progress_note(struct client *cl, const char *msg)
{
	json_object	*n;
	size_t		 i;

	for (i = 0; i < json_object_array_length(cl->notes); i++) {
		n = json_object_array_get_idx(cl->notes, i);
		if (strcmp(method_of(n), "notifications/progress") == 0 &&
		    strcmp(str(n, "params.message"), msg) == 0)
			return n;
	}
	return NULL;
}

/* How many log notes of cl have data.message msg (level, if not NULL). */
static int
log_count(struct client *cl, const char *level, const char *msg)
{
	json_object	*n;
	size_t		 i;
	int		 count = 0;

	for (i = 0; i < json_object_array_length(cl->notes); i++) {
		n = json_object_array_get_idx(cl->notes, i);
		if (strcmp(method_of(n), "notifications/message") != 0)
			continue;
		ck_assert_str_eq(str(n, "params.logger"), "cmdgate");
		ck_assert(jpath(n, "params.data.ticket") != NULL);
		if (strcmp(str(n, "params.data.message"), msg) == 0 &&
		    (level == NULL || strcmp(str(n, "params.level"),
		    level) == 0))
			count++;
	}
	return count;
}

static void
notes_clear(struct client *cl)
{
	json_object_put(cl->notes);
	cl->notes = json_object_new_array();
}

/* The tool's own progress and log lines reach the client before the
 * answer; the levels below the connection's do not. */
START_TEST(tool_progress_and_log)
{
	json_object	*r, *n;

	start_progress();
	r = cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-03-26\"}}");
	ck_assert(json_object_is_type(jpath(r, "result.capabilities.logging"),
	    json_type_object));
	json_object_put(r);
	set_level(c, "info");
	r = tool_call(c, 2, "prog", "\"tok-1\"");
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 2);
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	ck_assert_int_eq(check_progress(c, "\"tok-1\"", -1), 5);
	ck_assert(progress_note(c, "queued, position 0") != NULL);
	ck_assert(progress_note(c, "running") != NULL);
	n = progress_note(c, "halfway");
	ck_assert(n != NULL);
	ck_assert(json_object_get_double(jpath(n, "params.progress")) == 49.5);
	/* The tool's 100% leaves room for its end. */
	n = progress_note(c, "done");
	ck_assert_msg(n != NULL, "the end's progress was not sent after the "
	    "tool's 100%%");
	ck_assert(json_object_get_double(jpath(n, "params.progress")) == 99);
	/* 25 after 50 would not increase: not sent. */
	ck_assert(progress_note(c, "backwards") == NULL);
	ck_assert_int_eq(log_count(c, "info", "hello"), 1);
	ck_assert_int_eq(log_count(c, "warning", "careful"), 1);
	ck_assert_int_eq(log_count(c, NULL, "quiet"), 0);
	ck_assert_int_eq(log_count(c, "info", "started"), 1);
	ck_assert_int_eq(log_count(c, "info", "finished"), 1);
	ck_assert_int_eq(log_count(c, NULL, "queued, position 0"), 0);
	/* The ignored line is said at debug only. */
	ck_assert_int_eq(log_count(c, NULL, "a line on the notify descriptor "
	    "that is neither progress nor log was ignored"), 0);
	notes_clear(c);
	/* An integer token; the debug level shows every line. */
	set_level(c, "debug");
	r = tool_call(c, 3, "prog", "42");
	json_object_put(r);
	ck_assert_int_eq(check_progress(c, "42", -1), 5);
	ck_assert_int_eq(log_count(c, "debug", "quiet"), 1);
	ck_assert_int_eq(log_count(c, "debug", "queued, position 0"), 1);
	ck_assert_int_eq(log_count(c, "debug", "a line on the notify "
	    "descriptor that is neither progress nor log was ignored"), 1);
	notes_clear(c);
	/* Without a token: log lines, no progress. */
	r = tool_call(c, 4, "prog", NULL);
	json_object_put(r);
	ck_assert_int_eq(check_progress(c, "0", -1), 0);
	ck_assert_int_eq(log_count(c, "info", "hello"), 1);
}
END_TEST

/* The default level is warning: info lines and the job's own news are
 * not sent; a failed call says so at error. */
START_TEST(default_level_warning)
{
	json_object	*r;

	start_progress();
	r = tool_call(c, 2, "prog", NULL);
	json_object_put(r);
	ck_assert_int_eq(log_count(c, NULL, "hello"), 0);
	ck_assert_int_eq(log_count(c, NULL, "started"), 0);
	ck_assert_int_eq(log_count(c, "warning", "careful"), 1);
	notes_clear(c);
	r = tool_call(c, 3, "fail", "\"f\"");
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	ck_assert(progress_note(c, "failed") != NULL);
	ck_assert_int_eq(json_object_get_double(jpath(progress_note(c,
	    "failed"), "params.progress")), 99);
	ck_assert_int_eq(log_count(c, "error", "failed: command 0 (fail) "
	    "failed: exited with status 1"), 1);
}
END_TEST

static void
assert_invalid(json_object *r, const char *what)
{
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32602);
	ck_assert_str_eq(str(r, "error.data.type"), "invalid_params");
	ck_assert_msg(strstr(str(r, "error.data.reason"), what) != NULL,
	    "reason does not name %s: %s", what, str(r, "error.data.reason"));
	json_object_put(r);
}

/* A progressToken that is not a string or an integer, and an unknown
 * level, are refused with -32602 naming them; nothing runs. */
START_TEST(bad_token_and_level)
{
	static const char *bad[] = { "1.5", "true", "null", "{}", "[1]" };
	json_object	*r;
	size_t		 i;

	start_progress();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(tool_call(c, 2, "prog", bad[i]),
		    "progressToken");
	assert_invalid(cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"prog\",\"_meta\":5}}"),
	    "_meta");
	assert_invalid(cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}"), "level");
	assert_invalid(cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"logging/setLevel\",\"params\":{\"level\":3}}"), "level");
	assert_invalid(cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"logging/setLevel\",\"params\":{}}"), "level");
	r = cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"list_jobs\"}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")),
	    0);
	json_object_put(r);
}
END_TEST

/* A reload held by a running test run: queued, then blocked by
 * tests_running, then running and done, each higher. */
START_TEST(queued_then_blocked)
{
	struct client	*c2;
	json_object	*n, *r;
	char		 t[32];

	start_progress();
	submit(t, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(t, "running");
	c2 = client_tcp(b.port);
	tool_send(c2, 5, "reload", "\"r\"");
	n = await_progress(c2, "queued, position 0");
	ck_assert(json_object_get_double(jpath(n, "params.progress")) == 0);
	json_object_put(n);
	n = await_progress(c2, "blocked by tests_running");
	ck_assert(json_object_get_double(jpath(n, "params.progress")) == 0.5);
	json_object_put(n);
	release();
	r = answer_of(c2);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 5);
	json_object_put(r);
	ck_assert_int_eq(check_progress(c2, "\"r\"", 0.5), 2);
	ck_assert(json_object_get_double(jpath(progress_note(c2, "running"),
	    "params.progress")) == 1);
	ck_assert(json_object_get_double(jpath(progress_note(c2, "done"),
	    "params.progress")) == 99);
	client_close(c2);
	wait_end(t, "done");
}
END_TEST

/* A smooth job waits while a heavy one holds the slot: queued, not
 * blocked (it is no reload). */
START_TEST(queued_behind_heavy)
{
	struct client	*c2;
	json_object	*n, *r;
	char		 t[32];

	start_progress();
	submit(t, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(t, "running");
	c2 = client_tcp(b.port);
	set_level(c2, "debug");
	tool_send(c2, 6, "later", "\"s\"");
	n = await_progress(c2, "queued, position 0");
	json_object_put(n);
	release();
	r = answer_of(c2);
	json_object_put(r);
	ck_assert(progress_note(c2, "running") != NULL);
	ck_assert_int_eq(log_count(c2, NULL, "blocked by tests_running"), 0);
	client_close(c2);
	wait_end(t, "done");
}
END_TEST

/* The ticket the debug log of cl's notes names (static). */
static const char *
ticket_of(struct client *cl)
{
	static char	 t[32];
	json_object	*n;
	char		*s;

	while ((s = client_line(cl)) != NULL) {
		n = json_tokener_parse(s);
		free(s);
		ck_assert(n != NULL);
		if (strcmp(method_of(n), "notifications/message") == 0) {
			snprintf(t, sizeof(t), "%s", str(n,
			    "params.data.ticket"));
			json_object_put(n);
			return t;
		}
		json_object_array_add(cl->notes, n);
	}
	ck_abort_msg("no ticket");
	return NULL;
}

/* The next answer on cl is the ping's: the cancelled call has none. */
static void
no_answer_for(struct client *cl, int cancelled)
{
	json_object	*r = cl_call(cl, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"ping\"}", cancelled + 100);

	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), cancelled + 100);
	json_object_put(r);
}

static void
cancel_call(struct client *cl, int id)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%d,"
	    "\"reason\":\"test\"}}\n", id);
	client_send(cl, line);
}

/* notifications/cancelled: the running job is cancelled, and the call
 * gets no answer. */
START_TEST(cancel_running)
{
	struct client	*c2;
	json_object	*n;
	const char	*t;

	start_progress();
	c2 = client_tcp(b.port);
	set_level(c2, "debug");
	tool_send(c2, 7, "blocker", "\"c\"");
	t = ticket_of(c2);
	n = await_progress(c2, "running");
	json_object_put(n);
	cancel_call(c2, 7);
	wait_end(t, "cancelled");
	no_answer_for(c2, 7);
	/* An id nobody waits for is ignored. */
	cancel_call(c2, 999);
	no_answer_for(c2, 999);
	client_close(c2);
}
END_TEST

/* A job cancelled by someone else: its call is answered, after a
 * notice that says so. */
START_TEST(cancelled_by_cancel_job)
{
	struct client	*c2;
	json_object	*n, *r;
	const char	*t;

	start_progress();
	c2 = client_tcp(b.port);
	set_level(c2, "debug");
	tool_send(c2, 9, "blocker", "\"k\"");
	t = ticket_of(c2);
	n = await_progress(c2, "running");
	json_object_put(n);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", t);
	json_object_put(r);
	r = answer_of(c2);
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 9);
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	json_object_put(r);
	ck_assert_int_eq(log_count(c2, "notice", "cancelled"), 1);
	client_close(c2);
}
END_TEST

/* The same for a job still queued: cancelled at once. */
START_TEST(cancel_queued)
{
	struct client	*c2;
	json_object	*n, *r;
	const char	*t;
	char		 held[32];

	start_progress();
	submit(held, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(held, "running");
	c2 = client_tcp(b.port);
	set_level(c2, "debug");
	tool_send(c2, 8, "later", "\"q\"");
	t = ticket_of(c2);
	n = await_progress(c2, "queued, position 0");
	json_object_put(n);
	cancel_call(c2, 8);
	no_answer_for(c2, 8);
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	json_object_put(r);
	release();
	wait_end(held, "done");
	client_close(c2);
}
END_TEST

/* Cancelled in the same batch, before its submit is stored: the job is
 * cancelled once stored, and the batch has no answer for it. */
START_TEST(cancel_in_batch)
{
	json_object	*r;

	start_progress();
	client_send(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"blocker\"}},"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":1}}]\n");
	no_answer_for(c, 1);
	wait_end("t-000000", "cancelled");
	r = cl_call(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"list_jobs\"}");
	ck_assert_uint_eq(json_object_array_length(jpath(r, "result.jobs")),
	    1);
	json_object_put(r);
}
END_TEST

/* A tool that never touches the notify descriptor runs as before; it
 * has it as descriptor 4, named in CMDGATE_NOTIFY_FD. */
START_TEST(tool_ignores_fd)
{
	json_object	*r;

	start_progress();
	r = tool_call(c, 2, "plain", "\"p\"");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_str_eq(str(r, "result.structuredContent.results.0.stdout"),
	    "notify=4\n");
	json_object_put(r);
	ck_assert_int_eq(check_progress(c, "\"p\"", -1), 3);
}
END_TEST

/* A child left holding the notify descriptor does not hold the job. */
START_TEST(heir_holds_fd)
{
	json_object	*r;

	start_progress();
	r = tool_call(c, 2, "heir", "\"h\"");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_int_lt(json_object_get_int(jpath(r,
	    "result.structuredContent.results.0.duration_ms")), 30000);
	json_object_put(r);
	ck_assert(progress_note(c, "left a child") != NULL);
}
END_TEST

/* A flood is bounded: at most NOTIFY_RATE events a second, the rest
 * counted; a line over 4096 bytes is ignored. */
START_TEST(flood_and_long)
{
	json_object	*r;
	int64_t		 ms;
	int		 spam;

	start_progress();
	r = tool_call(c, 2, "flood", "\"x\"");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ms = json_object_get_int64(jpath(r,
	    "result.structuredContent.results.0.duration_ms"));
	json_object_put(r);
	spam = log_count(c, "warning", "spam");
	ck_assert_int_ge(spam, 1);
	ck_assert_int_le(spam, NOTIFY_RATE * (ms / 1000 + 2));
	ck_assert_int_lt(check_progress(c, "\"x\"", -1),
	    NOTIFY_RATE * (ms / 1000 + 2) + 4);
	notes_clear(c);
	r = tool_call(c, 3, "long", NULL);
	json_object_put(r);
	ck_assert_int_eq(log_count(c, "warning", "after"), 1);
	ck_assert_int_eq(log_count(c, "warning", "a line over 4096 bytes on "
	    "the notify descriptor was ignored"), 1);
}
END_TEST

static Suite *
progress_suite(void)
{
	Suite	*s = suite_create("progress");
	TCase	*tb = tcase_create("broker");

	tcase_add_checked_fixture(tb, setup, teardown);
	tcase_set_timeout(tb, 60);
	tcase_add_test(tb, tool_progress_and_log);
	tcase_add_test(tb, default_level_warning);
	tcase_add_test(tb, bad_token_and_level);
	tcase_add_test(tb, queued_then_blocked);
	tcase_add_test(tb, queued_behind_heavy);
	tcase_add_test(tb, cancel_running);
	tcase_add_test(tb, cancel_queued);
	tcase_add_test(tb, cancel_in_batch);
	tcase_add_test(tb, cancelled_by_cancel_job);
	tcase_add_test(tb, tool_ignores_fd);
	tcase_add_test(tb, heir_holds_fd);
	tcase_add_test(tb, flood_and_long);
	suite_add_tcase(s, tb);
	return s;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return ck_run(progress_suite());
}
