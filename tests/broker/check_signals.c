/* SPDX-License-Identifier: ISC */
/*
 * The real cmdgated as a process: exit statuses, a taken address, and
 * SIGHUP, SIGTERM and SIGINT (fixture in integutil.c).
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "integutil.h"
#include "testnet.h"

START_TEST(exit_statuses)
{
	const char	*bad_flag[] = { "--max-batch", "0", NULL };
	const char	*bad_tools[] = { "--tools", NULL, "--state-dir", NULL,
			    NULL };
	const char	*open_token[] = { "--token-file", NULL, "--state-dir",
			    NULL, NULL };
	const char	*check[] = { "-n", "--state-dir", NULL, NULL };
	const char	*file_dir[] = { "--state-dir", NULL, NULL };
	char		 tools[256], token[256], state[256], file[256];

	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	snprintf(token, sizeof(token), "%s", broker_path(&b, "token"));
	snprintf(state, sizeof(state), "%s", broker_path(&b, "st"));
	snprintf(file, sizeof(file), "%s", broker_path(&b, "afile"));
	write_file(tools, "{\"tools\":[{\"name\":\"x\"}]}", 0600);
	write_file(token, "t\n", 0644);
	write_file(file, "", 0600);
	bad_tools[1] = tools;
	bad_tools[3] = state;
	open_token[1] = token;
	open_token[3] = state;
	check[2] = state;
	file_dir[1] = file;
	ck_assert_int_eq(broker_run(&b, bad_flag), 64);
	ck_assert_int_eq(broker_run(&b, bad_tools), 78);
	ck_assert_int_ge(broker_log_count(&b, "cmdgated: "), 1);
	ck_assert_int_ge(broker_log_count(&b, "tools.json: tool 'x'"), 1);
	/* Why it stopped is said even at --log-level error. */
	{
		const char *quiet[] = { "--tools", tools, "--state-dir", state,
		    "--log-level", "error", NULL };
		int before = broker_log_count(&b, "tools.json: tool 'x'");

		ck_assert_int_eq(broker_run(&b, quiet), 78);
		ck_assert_int_eq(broker_log_count(&b, "tools.json: tool 'x'"),
		    before + 1);
	}
	/* Under systemd (JOURNAL_STREAM set) lines carry a <N> priority. */
	setenv("JOURNAL_STREAM", "8:1234", 1);
	ck_assert_int_eq(broker_run(&b, bad_tools), 78);
	unsetenv("JOURNAL_STREAM");
	ck_assert_int_ge(broker_log_count(&b, "<3>"), 1);
	ck_assert_int_eq(broker_run(&b, open_token), 78);
	ck_assert_int_ge(broker_log_count(&b, "lets group or others read"), 1);
	ck_assert_int_eq(broker_run(&b, file_dir), 78);
	ck_assert_int_eq(broker_run(&b, check), 0);
	/* The state dir was made, private. */
	{
		struct stat st;

		ck_assert_int_eq(stat(state, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
	}
}
END_TEST

START_TEST(address_in_use)
{
	struct broker	 b2;
	const char	*args[] = { "--listen", NULL, "--state-dir", NULL, NULL };
	char		 addr[64], state[256];

	start(NULL);
	broker_prepare(&b2);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", b.port);
	snprintf(state, sizeof(state), "%s", broker_path(&b2, "state"));
	args[1] = addr;
	args[3] = state;
	ck_assert_int_eq(broker_run(&b2, args), 69);
	broker_stop(&b2);
	assert_serves();
}
END_TEST

START_TEST(sighup_reload)
{
	const char	*args[] = { "--tools", NULL, NULL };
	struct client	*c, *quiet;
	json_object	*r;
	char		 tools[256];

	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	write_file(tools, "{\"tools\":[{\"name\":\"a\",\"exec\":[\"true\"]}]}",
	    0600);
	args[1] = tools;
	start(args);
	c = client_tcp(b.port);
	quiet = client_unix(b.sock);
	assert_pong(c);
	assert_pong(quiet);
	/* Same content: reloaded, nobody told. */
	kill(b.pid, SIGHUP);
	ck_assert_int_eq(broker_notified(&b, "RELOADING=1"), 0);
	ck_assert_int_eq(broker_notified(&b, "READY=1"), 0);
	/* Changed: every connection hears of it. */
	write_file(tools, "{\"tools\":[{\"name\":\"b\",\"exec\":[\"true\"]}]}",
	    0600);
	kill(b.pid, SIGHUP);
	r = client_wait_method(c, "notifications/tools/list_changed");
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(jpath(r, "params.timestamp"));
	json_object_put(r);
	r = client_wait_method(quiet, "notifications/tools/list_changed");
	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"get_tool_details\",\"params\":{\"name\":\"b\"}}");
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.name")), "b");
	json_object_put(r);
	/* A bad table is refused and the old one stays. */
	ck_assert_int_eq(broker_notified(&b, "READY=1"), 0);
	write_file(tools, "{\"tools\":[{\"name\":\"c\"}]}", 0600);
	kill(b.pid, SIGHUP);
	ck_assert_int_eq(broker_notified(&b, "RELOADING=1"), 0);
	ck_assert_int_eq(broker_notified(&b, "READY=1"), 0);
	ck_assert_int_ge(broker_log_count(&b, "tool table refused, keeping "
	    "the old one"), 1);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"list_tools\"}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.tools")), 1);
	ck_assert_str_eq(json_object_get_string(jpath(json_object_array_get_idx(
	    jpath(r, "result.tools"), 0), "name")), "b");
	json_object_put(r);
	client_close(c);
	client_close(quiet);
}
END_TEST

START_TEST(sigterm_shutdown)
{
	struct client	*c;
	json_object	*r;

	start(NULL);
	c = client_tcp(b.port);
	assert_pong(c);
	kill(b.pid, SIGTERM);
	ck_assert_int_eq(broker_notified(&b, "STOPPING=1"), 0);
	r = client_wait_method(c, "notifications/server/shutdown");
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(json_object_get_string(jpath(r, "params.reason")),
	    "stopping");
	json_object_put(r);
	ck_assert(client_eof(c));
	client_close(c);
	ck_assert_int_eq(broker_signal_wait(&b, 0), 0);
	ck_assert_int_eq(access(b.sock, F_OK), -1);
}
END_TEST

START_TEST(sigint_exits_zero)
{
	start(NULL);
	ck_assert_int_eq(broker_signal_wait(&b, SIGINT), 0);
}
END_TEST

static Suite *
signals_suite(void)
{
	Suite	*s = suite_create("signals");
	TCase	*tc = tcase_create("broker");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exit_statuses);
	tcase_add_test(tc, address_in_use);
	tcase_add_test(tc, sighup_reload);
	tcase_add_test(tc, sigterm_shutdown);
	tcase_add_test(tc, sigint_exits_zero);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(signals_suite());
}
