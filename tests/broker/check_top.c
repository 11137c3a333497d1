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

#include "ckrun.h"
#include "cliutil.h"
#include "testnet.h"

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
	/* Issue 35.7: each job with its tools. */
	ck_assert_msg(strstr(cli_out, "t-000001  rebuild        agent-two")
	    != NULL, "%s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "blocked_by tests_running"));
	ck_assert_ptr_nonnull(strstr(cli_out, "the held one"));
	ck_assert_ptr_nonnull(strstr(cli_out,
	    "t-000000  done      echo             agent-two"));
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

/*
 * The tests' tmux server has its socket in a dir of its own, made and
 * removed by the parent (tmux_open, tmux_reap: an unchecked fixture, run
 * even when a test failed or timed out, which skips the checked
 * teardown); pids in it holds the server's and top's pids, killed by pid
 * when kill-server could not end them.
 */
static char	tmux_dir[64], tmux_sock[128];

static long	pane_start(const char *);

/* DIR/name.  Borrowed until 8 more calls. */
static const char *
tmux_path(const char *name)
{
	static char	path[8][256];
	static size_t	next;
	char		*p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", tmux_dir, name);
	return p;
}

static void
tmux_open(void)
{
	snprintf(tmux_dir, sizeof(tmux_dir), "/tmp/cmdgate-top.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmux_dir));
	snprintf(tmux_sock, sizeof(tmux_sock), "%s", tmux_path("tmux.sock"));
}

/* Run a tmux command line on the test's own server: its exit status. */
static int
tmux(const char *fmt, const char *arg)
{
	char	cmd[2048 + 512], line[2048];

	snprintf(line, sizeof(line), fmt, arg);
	snprintf(cmd, sizeof(cmd), "tmux -S %s %s", tmux_sock, line);
	return system(cmd);
}

/*
 * SIGKILL pid if /proc/PID/what (cmdline, environ) names the tests' dir:
 * it is still ours, not a process that took the pid since.
 */
static void
kill_if(long pid, const char *what)
{
	char	 path[64], buf[65536];
	size_t	 n, i;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	if (pid <= 1 || (f = fopen(path, "r")) == NULL)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	if (strstr(buf, tmux_dir) != NULL)
		kill((pid_t)pid, SIGKILL);
}

/* The tests' tmux server and the tops it ran go, whatever happened. */
static void
tmux_clean(void)
{
	long	 pid;
	FILE	*f;

	if (*tmux_dir == '\0')
		return;
	tmux("kill-server 2>/dev/null%s", "");
	if ((f = fopen(tmux_path("top.pid"), "r")) != NULL) {
		while (fscanf(f, "%ld", &pid) == 1)
			kill_if(pid, "environ");
		fclose(f);
	}
	if ((f = fopen(tmux_path("server.pid"), "r")) != NULL) {
		while (fscanf(f, "%ld", &pid) == 1)
			kill_if(pid, "cmdline");
		fclose(f);
	}
}

/* After the tests (in the parent: also when one failed), the dir too. */
static void
tmux_reap(void)
{
	const char	*names[] = { "top.sh", "top.pid", "top.last",
			    "server.pid", "top.status", "top.stty",
			    "tmux.sock" };
	size_t		 i;

	if (*tmux_dir == '\0')
		return;
	tmux_clean();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tmux_path(names[i]));
	rmdir(tmux_dir);
	*tmux_dir = '\0';
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

/* The file path holds want (top's exit status, written at its end):
 * its text in buf, 1; 0 after TN_TIMEOUT_MS. */
static int
await_file(const char *path, const char *want, char *buf, size_t len)
{
	struct timespec	 ts = { 0, 50 * 1000 * 1000 };
	FILE		*f;
	size_t		 n;
	int		 i;

	for (i = 0; i < TN_TIMEOUT_MS / 50; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(buf, 1, len - 1, f);
			buf[n] = '\0';
			fclose(f);
			if (strstr(buf, want) != NULL)
				return 1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * cmdgate top in a tmux session "top" of 100x40 (on the broker's socket,
 * which a restart keeps), its pid and the server's recorded; after it,
 * the pane writes its exit status and the terminal's mode, and stays.
 * top's pid, once it runs.
 */
static long
top_start(void)
{
	return pane_start("top");
}

/* The same with the cmdgate command what (words) instead of top. */
static long
pane_start(const char *what)
{
	char	script[2048], buf[64];

	unlink(tmux_path("top.last"));
	unlink(tmux_path("top.status"));
	unlink(tmux_path("top.stty"));
	/* CMDGATE_TEST_DIR marks top's environment for tmux_clean. */
	snprintf(script, sizeof(script), "export CMDGATE_TEST_DIR=%s\n"
	    "sh -c 'echo $$ >> \"$1\"; "
	    "echo $$ > \"$2\"; shift 2; exec \"$@\"' sh %s %s %s --socket %s "
	    "%s\necho exit=$? > %s\nstty -a > %s\nexec cat\n", tmux_dir,
	    tmux_path("top.pid"), tmux_path("top.last"), getenv("CMDGATE"),
	    b.sock, what, tmux_path("top.status"), tmux_path("top.stty"));
	write_file(tmux_path("top.sh"), script, 0600);
	ck_assert_int_eq(tmux("-f /dev/null new-session -d -s top -x 100 "
	    "-y 40 'sh %s'", tmux_path("top.sh")), 0);
	ck_assert_int_eq(tmux("display -p -t top '#{pid}' >> %s",
	    tmux_path("server.pid")), 0);
	ck_assert_int_eq(await_file(tmux_path("top.last"), "\n", buf,
	    sizeof(buf)), 1);
	return atol(buf);
}

/* top exited 0 and left the terminal as it found it: echo and line
 * editing on, the main screen, the cursor shown. */
static void
assert_top_restored(void)
{
	char	buf[4096];
	FILE	*f;
	size_t	n;

	ck_assert_msg(await_file(tmux_path("top.status"), "exit=", buf,
	    sizeof(buf)), "top did not exit");
	ck_assert_str_eq(buf, "exit=0\n");
	ck_assert_int_eq(await_file(tmux_path("top.stty"), "icanon", buf,
	    sizeof(buf)), 1);
	ck_assert_msg(strstr(buf, "-icanon") == NULL &&
	    strstr(buf, " echo ") != NULL, "stty: %s", buf);
	snprintf(buf, sizeof(buf), "tmux -S %s display -p -t top "
	    "'#{alternate_on} #{cursor_flag}'", tmux_sock);
	ck_assert_ptr_nonnull(f = popen(buf, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	pclose(f);
	ck_assert_str_eq(buf, "0 1\n");
}

START_TEST(top_live_tmux)
{
	const char	*args[] = { "--tools", tools, NULL };
	struct client	*late, *again;

	if (system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: top_live_tmux: tmux is not installed "
		    "(apt-get install tmux)\n");
		return;
	}
	scenario();
	top_start();
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
	ck_assert_int_ne(access(tmux_path("top.status"), F_OK), 0);
	client_close(again);
	ck_assert_int_eq(tmux("send-keys -t top %s", "q"), 0);
	assert_top_restored();
	client_close(late);
	client_close(ed);
	client_close(ag);
}
END_TEST

/*
 * While top waits for a broker that is gone, q (loop 0) or SIGTERM
 * (loop 1) ends it at once: exit 0, the terminal restored.
 */
START_TEST(top_quits_while_reconnecting)
{
	long	pid;

	if (system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: top_quits_while_reconnecting: tmux is "
		    "not installed (apt-get install tmux)\n");
		return;
	}
	scenario();
	pid = top_start();
	ck_assert_msg(pane_has("agent-two"), "pane: %s", cli_out);
	client_close(ed);
	client_close(ag);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(pane_has("reconnecting..."), "pane: %s", cli_out);
	if (_i == 0)
		ck_assert_int_eq(tmux("send-keys -t top %s", "q"), 0);
	else
		ck_assert_int_eq(kill((pid_t)pid, SIGTERM), 0);
	assert_top_restored();
}
END_TEST

/*
 * Issue 35.9, the README's walk-through: cmdgate wait on a held reload
 * while the broker goes and comes back.  The outage's line starts a line
 * of its own (it was glued to the progress line), the wait goes on, and
 * the queued job runs once after the restart: exit 0.
 */
START_TEST(wait_across_restart)
{
	/* No grace for editor flags held before the kill: the reload goes. */
	const char	*args[] = { "--tools", tools, "--editor-grace", "0",
			    NULL };
	const char	*at;
	char		 buf[64];

	if (system("tmux -V >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: wait_across_restart: tmux is not "
		    "installed (apt-get install tmux)\n");
		return;
	}
	scenario();
	pane_start("wait t-000001");
	ck_assert_msg(pane_has("blocked by tests_running"), "pane: %s",
	    cli_out);
	client_close(ed);
	client_close(ag);
	ck_assert_int_eq(broker_signal_wait(&b, SIGKILL), -1);
	ck_assert_msg(pane_has("reconnecting..."), "pane: %s", cli_out);
	at = strstr(cli_out, "cmdgate: broker lost");
	ck_assert_msg(at != NULL && (at == cli_out || at[-1] == '\n'),
	    "pane: %s", cli_out);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	ck_assert_msg(await_file(tmux_path("top.status"), "exit=", buf,
	    sizeof(buf)), "wait did not end");
	ck_assert_str_eq(buf, "exit=0\n");
	ck_assert_msg(pane_has("reconnected after"), "pane: %s", cli_out);
	ck_assert_ptr_nonnull(strstr(cli_out, "t-000001 done, 1 of 1 "
	    "commands"));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("top");
	TCase	*tc = tcase_create("top");

	tcase_add_unchecked_fixture(tc, tmux_open, tmux_reap);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, tmux_clean, tmux_clean);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, top_once);
	tcase_add_test(tc, top_live_tmux);
	tcase_add_loop_test(tc, top_quits_while_reconnecting, 0, 2);
	tcase_add_test(tc, wait_across_restart);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
