/* SPDX-License-Identifier: ISC */
/*
 * MCP tasks over stdio (cmdgate mcp), what survives what: a task whose
 * job is held by the reload guard says so in its statusMessage, outlives
 * a kill -9 of the broker and of its client, and a new client process
 * gets its result by its id once the hold ends.
 */
#include "config.h"

#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "cliutil.h"
#include "mcputil.h"
#include "testnet.h"
#include "util.h"

/* initialize at 2025-11-25, the revision of the experimental tasks. */
#define INIT25	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"," \
		"\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":" \
		"{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n" \
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"

/* The result of the answer to id (a line of cli_out holding it); puts
 * nothing: *line is the caller's. */
static json_object *
answer(json_object **line, const char *id)
{
	json_object	*r;
	char		 want[32];

	snprintf(want, sizeof(want), "\"id\":%s,", id);
	ck_assert_ptr_nonnull(*line = out_line(want));
	ck_assert_msg(json_object_object_get_ex(*line, "result", &r),
	    "no result: %s", json_object_to_json_string(*line));
	return r;
}

/* The string at o.k1 (.k2 when not NULL), or "". */
static const char *
str_at(json_object *o, const char *k1, const char *k2)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, k1, &v) || (k2 != NULL &&
	    !json_object_object_get_ex(v, k2, &v)))
		return "";
	return json_object_get_string(v);
}

/* A new cmdgate mcp, initialized at 2025-11-25. */
static pid_t
client(int *in, int *out, int *err)
{
	pid_t	pid;

	*in = *out = -1;
	cli_out[0] = '\0';
	pid = spawn_mcp(NULL, in, out, err);
	send_line(*in, INIT25);
	ck_assert_msg(await_out(*out, "\"id\":1,"), "stdout: %s", cli_out);
	return pid;
}

START_TEST(task_survives_kill)
{
	const char	*args[] = { "--tools", tools, NULL };
	json_object	*line, *r, *t;
	pid_t		 pid, hold;
	int		 in, out, err, hfd, wfd, status;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	hold = mcp_hold(&hfd, &wfd);
	pid = client(&in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"rebuild\",\"task\":{\"ttl\":60000}}}\n");
	ck_assert_msg(await_out(out, "\"id\":2,"), "stdout: %s", cli_out);
	r = answer(&line, "2");
	ck_assert(json_object_object_get_ex(r, "task", &t));
	ck_assert_str_eq(str_at(t, "taskId", NULL), "t-000000");
	ck_assert_str_eq(str_at(t, "status", NULL), "working");
	ck_assert_msg(strstr(str_at(t, "statusMessage", NULL),
	    "blocked_by: tests_running") != NULL, "%s",
	    json_object_to_json_string(t));
	json_object_put(line);

	/* The broker and the client die; a new pair knows the task. */
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(in);
	close(out);
	close(err);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	pid = client(&in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\","
	    "\"params\":{\"taskId\":\"t-000000\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":3,"), "stdout: %s", cli_out);
	r = answer(&line, "3");
	ck_assert_str_eq(str_at(r, "status", NULL), "working");
	json_object_put(line);

	/* The hold ends (once its holder is back, not within the grace): the
	 * job runs once, and its result is the task's. */
	ck_assert_msg(await_err(hfd, "reconnected"), "stderr: %s", cli_err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/result\","
	    "\"params\":{\"taskId\":\"t-000000\"}}\n");
	close(wfd);
	ck_assert_msg(await_out(out, "\"id\":4,"), "stdout: %s", cli_out);
	r = answer(&line, "4");
	ck_assert_msg(strstr(json_object_to_json_string(r), "rebuilt") != NULL,
	    "%s", json_object_to_json_string(r));
	ck_assert(json_object_object_get_ex(r, "_meta", &t));
	ck_assert_str_eq(str_at(t, "io.modelcontextprotocol/related-task",
	    "taskId"), "t-000000");
	json_object_put(line);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tasks/get\","
	    "\"params\":{\"taskId\":\"t-000000\"}}\n");
	ck_assert_msg(await_out(out, "\"id\":5,"), "stdout: %s", cli_out);
	r = answer(&line, "5");
	ck_assert_str_eq(str_at(r, "status", NULL), "completed");
	json_object_put(line);
	ck_assert_int_eq(waitpid(hold, &status, 0), hold);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
	close(hfd);
}
END_TEST

#define META26	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":" \
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* Lines of cli_out holding both a and b. */
static int
lines_with(const char *a, const char *b)
{
	const char	*l = cli_out, *e;
	int		 n = 0;

	for (; *l != '\0'; l = *e == '\0' ? e : e + 1) {
		e = l + strcspn(l, "\n");
		if (memmem(l, (size_t)(e - l), a, strlen(a)) != NULL &&
		    memmem(l, (size_t)(e - l), b, strlen(b)) != NULL)
			n++;
	}
	return n;
}

/*
 * subscriptions/listen over stdio (2026-07-28, no initialize): its
 * acknowledgement, then a SIGHUP that changes the table is told on it,
 * naming it; once notifications/cancelled ends it, the next change is
 * not (the broadcast every client hears still is).
 */
START_TEST(listen_tools_stdio)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 line[512];
	pid_t		 pid;
	int		 i, in = -1, out = -1, err;

	mcp_tools_reload();
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	cli_out[0] = '\0';
	pid = spawn_mcp(NULL, &in, &out, &err);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"id\":\"l1\",\"method\":"
	    "\"subscriptions/listen\",\"params\":{\"notifications\":"
	    "{\"toolsListChanged\":true}," META26 "}}\n");
	ck_assert_msg(await_out(out, "acknowledged"), "stdout: %s", cli_out);
	ck_assert_int_eq(lines_with("\"toolsListChanged\":true", "\"l1\""), 1);
	write_file(tools, "{\"tools\":[{\"name\":\"two\",\"exec\":[\"true\"]}]}",
	    0600);
	ck_assert_int_eq(kill(b.pid, SIGHUP), 0);
	ck_assert_msg(await_out(out, "\"notifications/tools/list_changed\","
	    "\"params\":{\"_meta\""), "stdout: %s", cli_out);
	ck_assert_int_eq(lines_with("tools/list_changed", "\"l1\""), 1);
	send_line(in, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":\"l1\"}}\n");
	write_file(tools, "{\"tools\":[{\"name\":\"three\",\"exec\":"
	    "[\"true\"]}]}", 0600);
	ck_assert_int_eq(kill(b.pid, SIGHUP), 0);
	/* Asked until the table has changed: its news came before. */
	for (i = 0; i < 100 && strstr(cli_out, "\"name\":\"three\"") == NULL;
	    i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/list\",\"params\":{" META26 "}}\n",
		    100 + i);
		send_line(in, line);
		snprintf(line, sizeof(line), "\"id\":%d,", 100 + i);
		ck_assert_msg(await_out(out, line), "stdout: %s", cli_out);
	}
	ck_assert_ptr_nonnull(strstr(cli_out, "\"name\":\"three\""));
	ck_assert_int_eq(lines_with("tools/list_changed", "\"l1\""), 1);
	ck_assert_int_eq(count_of(cli_out, "tools/list_changed"), 3);
	close(in);
	ck_assert_int_eq(reap(pid, err), 0);
	close(out);
	close(err);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("mcptask");
	TCase	*tc = tcase_create("mcptask");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, task_survives_kill);
	tcase_add_test(tc, listen_tools_stdio);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
