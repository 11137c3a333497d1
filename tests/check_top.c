/* SPDX-License-Identifier: ISC */
/*
 * cmdgate top (cmdgate(1)): two named clients, a finished job and a
 * reload held by the editor's tests_running, as --once and the live
 * screen show them.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "testnet.h"
#include "cliutil.h"
#include "ckrun.h"

#define CALL(m, p) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" m "\"," \
	"\"params\":" p "}"

static struct client	*ed, *ag;

/* The broker on a table with a reload; editor-one holds tests_running,
 * agent-two ran t-000000 and waits for the held reload t-000001. */
static void
scenario(void)
{
	const char	*args[] = { "--tools", tools, NULL };
	json_object	*r;

	write_file(tools, "{\"tools\":[{\"name\":\"rebuild\",\"tier\":"
	    "\"heavy\",\"reload\":true,\"exec\":[\"true\"]},{\"name\":"
	    "\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\",\"hi\"]}]}",
	    0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	snprintf(port, sizeof(port), "%d", b.port);
	ed = client_unix(b.sock);
	ag = client_tcp(b.port);
	json_object_put(client_call(ed, CALL("set_client_name",
	    "{\"name\":\"editor-one\"}")));
	json_object_put(client_call(ed, CALL("report_editor_state",
	    "{\"tests_running\":true}")));
	json_object_put(client_call(ag, CALL("set_client_name",
	    "{\"name\":\"agent-two\"}")));
	r = client_call(ag, CALL("batch_execute",
	    "{\"commands\":[{\"tool\":\"echo\"}]}"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
	r = client_call(ag, CALL("batch_execute", "{\"async\":true,"
	    "\"label\":\"the held one\",\"commands\":[{\"tool\":\"rebuild\"}]}"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.ticket")),
	    "t-000001");
	json_object_put(r);
	assert_held("t-000001");
}

/* No line of s longer than width characters (ASCII here). */
static void
assert_fits(const char *s, size_t width)
{
	const char	*nl;

	for (; *s != '\0'; s = nl + 1) {
		ck_assert_ptr_nonnull(nl = strchr(s, '\n'));
		ck_assert_msg((size_t)(nl - s) <= width, "%.*s: over %zu",
		    (int)(nl - s), s, width);
	}
}

START_TEST(top_once)
{
	scenario();
	setenv("COLUMNS", "200", 1);
	ck_assert_int_eq(run(NULL, "top", "--once", NULL), 0);
	ck_assert_msg(strstr(cli_out, "editor-one") != NULL, "%s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "agent-two"));
	ck_assert_msg(strstr(cli_out, "CLIENTS 3") != NULL, "%s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "cmdgate-top"));
	ck_assert_ptr_nonnull(strstr(cli_out,
	    "holding reloads: tests_running (by editor-one)"));
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000001  agent-two"));
	ck_assert_ptr_nonnull(strstr(cli_out, "blocked_by tests_running"));
	ck_assert_ptr_nonnull(strstr(cli_out, "the held one"));
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000000  done"));
	ck_assert_ptr_nonnull(strstr(cli_out, "editor no probe"));
	/* Cut to the width, never wrapped. */
	setenv("COLUMNS", "30", 1);
	ck_assert_int_eq(run(NULL, "top", "--once", NULL), 0);
	assert_fits(cli_out, 30);
	ck_assert_ptr_nonnull(strstr(cli_out, "holding reloads: tests_runnin"));
	unsetenv("COLUMNS");
	ck_assert_int_eq(run(NULL, "top", "--bogus", NULL), 64);
	client_close(ed);
	client_close(ag);
}
END_TEST

/* ---- the live screen, under tmux ----------------------------------- */

static char	tmux_sock[256];

/* Run a tmux command line on the test's own server: its exit status. */
static int
tmux(const char *fmt, const char *arg)
{
	char	cmd[2048 + 512], line[2048];

	snprintf(line, sizeof(line), fmt, arg);
	snprintf(cmd, sizeof(cmd), "tmux -S %s %s", tmux_sock, line);
	return system(cmd);
}

/* The pane's text (cli_out) holds want within TN_TIMEOUT_MS. */
static int
pane_has(const char *want)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	char		 cmd[512];
	FILE		*f;
	size_t		 n;
	int		 i;

	snprintf(cmd, sizeof(cmd), "tmux -S %s capture-pane -p -t top",
	    tmux_sock);
	/* tmux has no event to await: look every 50 ms, bounded. */
	for (i = 0; i < TN_TIMEOUT_MS / 50; i++) {
		ck_assert_ptr_nonnull(f = popen(cmd, "r"));
		n = fread(cli_out, 1, sizeof(cli_out) - 1, f);
		cli_out[n] = '\0';
		pclose(f);
		if (strstr(cli_out, want) != NULL)
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The file path holds want (top's exit status, written at its end). */
static int
await_file(const char *path, const char *want)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	char		 buf[64];
	FILE		*f;
	size_t		 n;
	int		 i;

	for (i = 0; i < TN_TIMEOUT_MS / 50; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			buf[n] = '\0';
			fclose(f);
			if (strstr(buf, want) != NULL)
				return 1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Whatever happened, the test's tmux server goes. */
static void
tmux_teardown(void)
{
	if (*tmux_sock != '\0')
		tmux("kill-server 2>/dev/null%s", "");
	*tmux_sock = '\0';
}

START_TEST(top_live_tmux)
{
	const char	*args[] = { "--tools", tools, NULL };
	char		 cmd[1024], done[256];
	struct client	*late, *again;
	int		 i, gone = 0;

	if (system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: top_live_tmux: tmux is not installed "
		    "(apt-get install tmux)\n");
		return;
	}
	scenario();
	snprintf(tmux_sock, sizeof(tmux_sock), "%s",
	    broker_path(&b, "tmux.sock"));
	snprintf(done, sizeof(done), "%s", broker_path(&b, "top.status"));
	/* By the socket, which a restart keeps (not the TCP port). */
	snprintf(cmd, sizeof(cmd), "new-session -d -s top -x 100 -y 40 "
	    "'%s --socket %s top; echo exit=$? > %s'", getenv("CMDGATE"),
	    b.sock, done);
	ck_assert_int_eq(tmux("-f /dev/null %s", cmd), 0);
	ck_assert_msg(pane_has("agent-two"), "pane: %s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "editor-one"));
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000001"));
	ck_assert_ptr_nonnull(strstr(cli_out, "blocked_by tests_running"));
	ck_assert_ptr_nonnull(strstr(cli_out,
	    "holding reloads: tests_running (by editor-one)"));
	/* A new client shows up without a key: the broker said so. */
	late = client_unix(b.sock);
	json_object_put(client_call(late, CALL("set_client_name",
	    "{\"name\":\"late-three\"}")));
	ck_assert_msg(pane_has("late-three"), "pane: %s", cli_out);
	/* Narrower: cut, not wrapped. */
	ck_assert_int_eq(tmux("resize-window -t top -x %s -y 40", "40"), 0);
	ck_assert_msg(pane_has("holding reloads: tests_running (by"),
	    "pane: %s", cli_out);
	ck_assert_ptr_null(strstr(cli_out, "editor-one)"));
	/* The broker killed and started again: top carries on. */
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	again = client_unix(b.sock);
	json_object_put(client_call(again, CALL("set_client_name",
	    "{\"name\":\"after-kill\"}")));
	ck_assert_msg(pane_has("after-kill"), "pane: %s", cli_out);
	ck_assert_int_ne(access(done, F_OK), 0);
	client_close(again);
	ck_assert_int_eq(tmux("send-keys -t top %s", "q"), 0);
	for (i = 0; i < TN_TIMEOUT_MS / 50 && !gone; i++) {
		struct timespec	ts = { 0, 50 * 1000 * 1000 };

		gone = access(done, F_OK) == 0;
		if (!gone)
			nanosleep(&ts, NULL);
	}
	ck_assert_msg(gone, "top did not quit on q");
	ck_assert_int_eq(await_file(done, "exit=0"), 1);
	client_close(late);
	client_close(ed);
	client_close(ag);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("top");
	TCase	*tc = tcase_create("top");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, NULL, tmux_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, top_once);
	tcase_add_test(tc, top_live_tmux);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
