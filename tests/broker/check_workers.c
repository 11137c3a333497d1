/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end: workers and tools -- arguments, cwd, limits, the
 * environment, leftovers, strict stdout (helpers in jobsutil.c).
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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
#include "proclist.h"
#include "testnet.h"

START_TEST(worker_killed_by_signal)
{
	char		 t[32];
	json_object	*r;
	pid_t		 pid;
	struct timespec	 ts = { 0, 10 * 1000000 };
	int		 i, fd = 0;

	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"run_tests\"}]", "\"notify\":true");
	await_status(t, "running");
	ck_assert_int_gt(pid = worker_pid(), 0);
	/* SIGABRT, not SIGSEGV: a worker built with ASan catches SIGSEGV
	 * itself and exits 1 instead of dying by the signal. */
	kill(pid, SIGABRT);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "SIGABRT"));
	json_object_put(r);
	/* Its tool was killed with it: soon nobody reads the FIFO. */
	for (i = 0; i < 200 && (fd = open(fifo, O_WRONLY | O_NONBLOCK)) != -1;
	    i++) {
		close(fd);
		nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(errno, ENXIO);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
}
END_TEST

/*
 * A tool spawned just as its worker died (SIGABRT) and not yet past its
 * exec then: its environment does not show the job's ticket yet, so the
 * first look for the worker's orphans misses it; a later look finds it
 * and kills it (it stayed blocked on the FIFO for ever, outliving the
 * broker: seen in CI under load).  The worker here is a script that
 * starts such a late tool and kills itself (the spare one, whose spec
 * never comes, just exits).
 */
START_TEST(tool_exec_after_worker_died)
{
	static char	 text[2048];
	char		 path[PATH_MAX], buf[32], t[32];
	json_object	*r;
	struct pollfd	 p;

	snprintf(text, sizeof(text), "#!/bin/sh\n"
	    "d='%s'\n"
	    "spec=$(cat <&3)\n"
	    "[ -n \"$spec\" ] || exit 0\n"
	    "(sleep 0.02; exec env CMDGATE_TICKET=late sh -c "
	    "\"echo \\$\\$ >$d/late.tmp; mv $d/late.tmp $d/late.pid; "
	    "exec cat $d/release >/dev/null\") &\n"
	    "kill -ABRT $$\n", b.dir);
	snprintf(path, sizeof(path), "%s/worker.sh", b.dir);
	write_file(path, text, 0700);
	setenv("CMDGATE_WORKER", path, 1);
	start_with("heavy", NULL);
	unsetenv("CMDGATE_WORKER");
	submit(t, "[{\"tool\":\"run_tests\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	json_object_put(r);
	snprintf(path, sizeof(path), "%s/late.pid", b.dir);
	ck_assert_int_eq(wait_for_file(path), 0);
	fd_slurp(open(path, O_RDONLY), buf, sizeof(buf));
	p.fd = (int)syscall(SYS_pidfd_open, atoi(buf), 0);
	p.events = POLLIN;
	/* Gone already (-1), or goes soon. */
	ck_assert_msg(p.fd == -1 || poll(&p, 1, TN_TIMEOUT_MS) == 1,
	    "the late tool %d outlived its worker", atoi(buf));
	if (p.fd != -1)
		close(p.fd);
	ck_assert_int_eq(broker_log_count(&b, "outlived its worker: "
	    "SIGKILL"), 1);
}
END_TEST

/*
 * sh with the environment env, running: it says so on its stdout, then
 * waits to read its stdin (*in, the caller closes it).  Its environment
 * shows in /proc only once its exec is over, which neither posix_spawn's
 * return nor a close-on-exec descriptor waits for.
 */
static pid_t
spawn_shell(char **env, int *in)
{
	char				*argv[] = { "sh", "-c", "echo; read x",
					    NULL }, c;
	posix_spawn_file_actions_t	 fa;
	int				 i[2], o[2];
	pid_t				 pid;

	ck_assert_int_eq(pipe2(i, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, i[0], 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	ck_assert_int_eq(posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, env),
	    0);
	posix_spawn_file_actions_destroy(&fa);
	close(i[0]);
	close(o[1]);
	ck_assert_int_eq(read(o[0], &c, 1), 1);
	close(o[0]);
	*in = i[1];
	return pid;
}

/*
 * How the broker knows a tool left by a dead worker: its children from
 * /proc, and CMDGATE_TICKET in the environment they were started with,
 * wherever it is (here after an entry longer than any buffer).
 */
START_TEST(tool_environment_seen)
{
	static char	 big[70000];
	char		*env[] = { big, "CMDGATE_TICKET=t-000001", NULL };
	char		*near[] = { "CMDGATE_TICKETS=1", "X=CMDGATE_TICKET=", NULL };
	pid_t		 pid[2], *list;
	size_t		 n, i, mine = 0;
	int		 status, in[2];

	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "BIG=", 4);
	pid[0] = spawn_shell(env, &in[0]);
	pid[1] = spawn_shell(near, &in[1]);
	ck_assert(proc_environ_has(pid[0], "CMDGATE_TICKET="));
	ck_assert(proc_environ_has(pid[0], "BIG=xxx"));
	ck_assert(!proc_environ_has(pid[0], "CMDGATE_TOOL="));
	ck_assert(!proc_environ_has(pid[1], "CMDGATE_TICKET="));
	list = proc_children(getpid(), &n);
	for (i = 0; i < n; i++)
		mine += list[i] == pid[0] || list[i] == pid[1];
	free(list);
	ck_assert_uint_eq(mine, 2);
	for (i = 0; i < 2; i++) {
		kill(pid[i], SIGKILL);
		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		close(in[i]);
	}
}
END_TEST

/* Whatever a parameter holds, it stays one argument: no shell. */
START_TEST(no_shell_in_templates)
{
	char		 t[32], marker[128], params[2048];
	json_object	*r;

	snprintf(marker, sizeof(marker), "%.100s", broker_path(&b, "pwned"));
	start_with("heavy", NULL);
	snprintf(params, sizeof(params), "[{\"tool\":\"echo\",\"params\":"
	    "{\"text\":\"$(touch %s); `touch %s` | touch %s > %s\"}}]",
	    marker, marker, marker, marker);
	submit(t, params, NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.stdout"), "$(touch "));
	json_object_put(r);
	ck_assert_int_eq(access(marker, F_OK), -1);
}
END_TEST

/* Tools see the documented environment, not the broker's. */
START_TEST(scrubbed_environment)
{
	char		 t[32];
	const char	*env;
	json_object	*r;

	setenv("CMDGATE_TEST_SECRET", "hunter2", 1);
	start_with("heavy", NULL);
	unsetenv("CMDGATE_TEST_SECRET");
	submit(t, "[{\"tool\":\"env\"}]", NULL);
	r = wait_done(t);
	env = str(r, "results.0.stdout");
	ck_assert_ptr_null(strstr(env, "CMDGATE_TEST_SECRET"));
	ck_assert_ptr_null(strstr(env, "NOTIFY_SOCKET"));
	ck_assert_ptr_nonnull(strstr(env, "PATH="));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_TICKET=t-000000\n"));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_TOOL=env\n"));
	ck_assert_ptr_nonnull(strstr(env, "CMDGATE_PARAMS={}\n"));
	json_object_put(r);
}
END_TEST

/* Issue 11 §1: a value that would become an option is refused. */
START_TEST(dash_arguments)
{
	json_object	*r;

	h3_start(NULL, 9, 9);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\","
	    "\"params\":{\"commands\":[{\"tool\":\"echo\",\"params\":{\"text\":"
	    "\"--version\"}}]}}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32602);
	ck_assert_str_eq(str(r, "error.data.type"), "invalid_params");
	ck_assert_msg(strstr(json_object_to_json_string(r),
	    "parameter \\\"text\\\" starts with '-'") != NULL, "%s",
	    json_object_to_json_string(r));
	json_object_put(r);
	r = h3_run("[{\"tool\":\"echo_dash\",\"params\":{\"text\":\"-n\"}}]");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	r = h3_run("[{\"tool\":\"echo\",\"params\":{\"text\":\"a-b\"}}]");
	ck_assert_str_eq(str(r, "results.0.stdout"), "a-b\n");
	json_object_put(r);
}
END_TEST

/* Issue 11 §1: the table's cwd, else the state dir; never ours. */
START_TEST(tool_cwd)
{
	char		 want[PATH_MAX], line[PATH_MAX + 2];
	json_object	*r;

	h3_start(NULL, 9, 9);
	r = h3_run("[{\"tool\":\"where\"}]");
	ck_assert_ptr_nonnull(realpath(broker_path(&b, "state"), want));
	snprintf(line, sizeof(line), "%s\n", want);
	ck_assert_str_eq(str(r, "results.0.stdout"), line);
	json_object_put(r);
	r = h3_run("[{\"tool\":\"where_cwd\"}]");
	snprintf(line, sizeof(line), "%s\n", b.dir);
	ck_assert_str_eq(str(r, "results.0.stdout"), line);
	json_object_put(r);
	/* Its directory removed since the table was loaded: said so. */
	ck_assert_int_eq(rmdir(broker_path(&b, "gone")), 0);
	r = h3_run("[{\"tool\":\"where_gone\"}]");
	ck_assert_str_eq(str(r, "status"), "failed");
	snprintf(line, sizeof(line), "cannot run 'pwd' in %s/gone: No such "
	    "file", b.dir);
	ck_assert_msg(strstr(str(r, "results.0.error"), line) != NULL, "%s",
	    str(r, "results.0.error"));
	json_object_put(r);
}
END_TEST

/* Issue 11 §1: tools get the open-files limit the broker was given. */
START_TEST(tool_nofile)
{
	struct rlimit	 rl, low;
	json_object	*r;
	char		 want[32];

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 300) {
		fprintf(stderr, "h3_tool_nofile: skipped: hard limit %llu\n",
		    (unsigned long long)rl.rlim_max);
		return;
	}
	low = rl;
	low.rlim_cur = 256;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	h3_start(NULL, 9, 9);
	setrlimit(RLIMIT_NOFILE, &rl);
	r = h3_run("[{\"tool\":\"nofile\"}]");
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)low.rlim_cur);
	ck_assert_str_eq(str(r, "results.0.stdout"), want);
	json_object_put(r);
}
END_TEST

/*
 * Issue 11 §5: the broker dies by SIGKILL mid-job; its worker notices and
 * ends the tool (which ignores SIGTERM) after --kill-grace 1.
 */
START_TEST(broker_killed)
{
	char	t[32];
	pid_t	tool;

	h3_start(NULL, 9, 9);
	submit(t, "[{\"tool\":\"stubborn\"}]", NULL);
	tool = broker_file_number(&b, "tool.pid");
	client_close(c);
	c = NULL;
	broker_kill(&b, SIGKILL);
	ck_assert_msg(pid_ends_within(tool, 1000 + 4000),
	    "the tool outlived its broker");
}
END_TEST

/*
 * Issue 11 §5, issue 19 "background child": a tool that double-forks a
 * sleeper into a session of its own; the sleeper is gone when the job has
 * ended (normal exit) or has been cancelled.
 */
START_TEST(leftovers_killed)
{
	char		 t[32];
	json_object	*r;
	pid_t		 left;

	h3_start(NULL, 9, 9);
	r = h3_run("[{\"tool\":\"leaver\"}]");
	ck_assert_str_eq(str(r, "status"), "done");
	json_object_put(r);
	left = broker_file_number(&b, "left.pid");
	ck_assert_msg(pid_ends_within(left, 0), "a setsid() child outlived "
	    "its command");
	unlink(broker_path(&b, "left.pid"));
	submit(t, "[{\"tool\":\"leaver\",\"params\":{\"block\":\"1\"}}]",
	    "\"notify\":true");
	left = broker_file_number(&b, "left.pid");
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"cancel_job\","
	    "\"params\":{\"ticket\":\"%s\"}}", t);
	json_object_put(r);
	await_status(t, "cancelled");
	ck_assert_msg(pid_ends_within(left, 0), "a setsid() child outlived "
	    "its cancelled command");
}
END_TEST

/* Issue 19.10: 200 KiB of params reach exec tools, by file. */
START_TEST(large_params)
{
	size_t		 n = 200 * 1024;
	char		*line = malloc(n + 512), want[32];
	json_object	*r;
	int		 k;

	h3_start(NULL, 9, 9);
	for (k = 0; k < 2; k++) {
		int off = snprintf(line, n + 512, "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"batch_execute\",\"params\":{\"commands\":[{"
		    "\"tool\":\"%s\",\"params\":{\"blob\":\"",
		    k == 0 ? "ignore" : "big_params");

		memset(line + off, 'x', n);
		snprintf(line + off + n, 512, "\"}}]}}");
		r = client_call(c, line);
		ck_assert_msg(jpath(r, "result.status") != NULL, "%.300s",
		    json_object_to_json_string(r));
		ck_assert_str_eq(str(r, "result.status"), "done");
		if (k == 1) {
			/* {"blob":"x..."} */
			snprintf(want, sizeof(want), "%zu\n", n + 11);
			ck_assert_str_eq(str(r, "result.results.0.stdout"),
			    want);
		}
		json_object_put(r);
	}
	free(line);
	r = h3_run("[{\"tool\":\"small_params\",\"params\":{\"a\":1}}]");
	ck_assert_str_eq(str(r, "results.0.stdout"), "{\"a\":1}\n{\"a\":1}");
	json_object_put(r);
}
END_TEST

static const struct {
	const char	*out;		/* the tool's stdout, JSON-escaped */
	const char	*result;	/* the result expected, or NULL */
} h3_outputs[] = {
	{ "{\\\"a\\\":1}", "{\"a\":1}" },
	{ " \\n\\t{\\\"a\\\":[1,2]} \\r\\n", "{\"a\":[1,2]}" },
	{ "{\\\"a\\\":1}\\n{\\\"b\\\":2}\\n", NULL },
	{ "{\\\"a\\\":1} trailing", NULL },
	{ "{'a':1,}", NULL },
	{ "[1,2,]", NULL },
	{ "{\\\"a\\\":NaN}", NULL },
	{ "{\\\"a\\\":\\\"\\u0001\\\"}", NULL },	/* a raw control byte */
	{ "{\\\"a\\\":1} // note", NULL },
	{ "\\\"just a string\\\"", NULL },
};

/* Issue 19.9: result only when the whole stdout is one JSON value. */
START_TEST(strict_stdout)
{
	json_object	*r, *want;
	char		 cmds[512];

	h3_start(NULL, 9, 9);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"print\",\"params\":"
	    "{\"out\":\"%s\"}}]", h3_outputs[_i].out);
	r = h3_run(cmds);
	ck_assert_str_eq(str(r, "status"), "done");
	if (h3_outputs[_i].result == NULL)
		ck_assert_msg(jpath(r, "results.0.result") == NULL,
		    "case %d: %s", _i, json_object_to_json_string(r));
	else {
		want = json_tokener_parse(h3_outputs[_i].result);
		ck_assert_msg(json_object_equal(jpath(r, "results.0.result"),
		    want), "case %d: %s", _i, json_object_to_json_string(r));
		json_object_put(want);
	}
	json_object_put(r);
}
END_TEST

/* Issue 19.9: invalid UTF-8 inside a JSON string is no result. */
START_TEST(stdout_bad_utf8)
{
	json_object	*r;

	h3_start(NULL, 9, 9);
	write_file(broker_path(&b, "bad.json"), "{\"a\":\"\xed\xa0\x80\"}",
	    0600);
	r = h3_run("[{\"tool\":\"cat_bad\"}]");
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_null(jpath(r, "results.0.result"));
	json_object_put(r);
}
END_TEST

/*
 * Issue 19.9: control bytes in a tool's output, within --output-cap, do
 * not fail the job as a message too long.
 */
START_TEST(control_bytes)
{
	const char	*args[] = { "--output-cap", "180000", NULL };
	struct timeval	 tv = { 50, 0 };
	json_object	*r;

	h3_start(args, 9, 9);
	/* Megabytes of \u0001 escapes take a while under valgrind. */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = h3_run("[{\"tool\":\"ctl\"}]");
	ck_assert_msg(strcmp(str(r, "status"), "done") == 0, "%.300s",
	    json_object_to_json_string(r));
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stdout")), 179998);
	ck_assert_int_eq(json_object_get_string_len(jpath(r,
	    "results.0.stderr")), 179990);
	ck_assert_ptr_null(jpath(r, "results.0.result"));
	json_object_put(r);
}
END_TEST

/* Nested arrays n deep around 0, as text.  Caller frees. */
static char *
h3_nested(int n)
{
	char	*s = malloc((size_t)n * 2 + 2);
	int	 i;

	for (i = 0; i < n; i++)
		s[i] = '[';
	s[n] = '0';
	for (i = 0; i < n; i++)
		s[n + 1 + i] = ']';
	s[2 * n + 1] = '\0';
	return s;
}

/*
 * Issue 19.7: params nested 31 deep run, poll, list, and survive a
 * restart while queued; tool output nested 29 to 31 deep is a result.
 */
START_TEST(deep_json)
{
	char		*deep, cmds[1024], t[32], blk[32];
	json_object	*r;
	int		 d;

	h3_start(NULL, 9, 9);
	deep = h3_nested(30);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"ignore\",\"params\":"
	    "{\"d\":%s}}]", deep);
	free(deep);
	submit(t, cmds, NULL);
	wait_end(t, "done");
	r = poll_job(t);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"list_jobs\","
	    "\"params\":{}}");
	ck_assert_msg(strstr(json_object_to_json_string(r), t) != NULL,
	    "list_jobs lacks %s", t);
	json_object_put(r);
	/* Queued with deep params across a kill -9 and a restart. */
	submit(blk, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(blk, "running");
	deep = h3_nested(30);
	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"victim\",\"params\":"
	    "{\"d\":%s}}]", deep);
	free(deep);
	submit(t, cmds, NULL);
	client_close(c);
	crash_restart();
	wait_end(t, "done");
	for (d = 29; d <= 31; d++) {
		deep = h3_nested(d);
		snprintf(cmds, sizeof(cmds), "[{\"tool\":\"print\",\"params\":"
		    "{\"out\":\"%s\"}}]", deep);
		free(deep);
		r = h3_run(cmds);
		ck_assert_msg(strcmp(str(r, "status"), "done") == 0 &&
		    jpath(r, "results.0.result") != NULL, "depth %d: %.300s",
		    d, json_object_to_json_string(r));
		json_object_put(r);
	}
}
END_TEST

/*
 * Issue 19 "also worth a decision": a queued job whose tool a SIGHUP
 * disabled fails when its turn comes, with the reason.
 */
START_TEST(disabled_while_queued)
{
	char		 blk[32], vic[32];
	json_object	*r;

	h3_start(NULL, 9, 9);
	submit(blk, "[{\"tool\":\"blocker\"}]", "\"notify\":true");
	await_status(blk, "running");
	submit(vic, "[{\"tool\":\"victim\"}]", NULL);
	r = poll_job(vic);
	ck_assert_str_eq(str(r, "result.status"), "queued");
	json_object_put(r);
	h3_write_tools(9, 9, 0);
	kill(b.pid, SIGHUP);
	json_object_put(client_wait_method(c, "notifications/tools/list_changed"));
	release();
	r = wait_done(vic);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "error"), "tool 'victim' was "
	    "disabled"));
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("workers");
	TCase	*tc = tcase_create("workers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, worker_killed_by_signal);
	tcase_add_test(tc, tool_exec_after_worker_died);
	tcase_add_test(tc, tool_environment_seen);
	tcase_add_test(tc, no_shell_in_templates);
	tcase_add_test(tc, scrubbed_environment);
	tcase_add_test(tc, dash_arguments);
	tcase_add_test(tc, tool_cwd);
	tcase_add_test(tc, tool_nofile);
	tcase_add_test(tc, broker_killed);
	tcase_add_test(tc, leftovers_killed);
	tcase_add_test(tc, large_params);
	tcase_add_loop_test(tc, strict_stdout, 0,
	    sizeof(h3_outputs) / sizeof(h3_outputs[0]));
	tcase_add_test(tc, stdout_bad_utf8);
	tcase_add_test(tc, control_bytes);
	tcase_add_test(tc, deep_json);
	tcase_add_test(tc, disabled_while_queued);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
