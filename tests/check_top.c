/* SPDX-License-Identifier: ISC */
/*
 * cmdgate top (cmdgate(1)): two named clients, a finished job and a
 * reload held by the editor's tests_running, as --once and the live
 * screen show them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int
main(void)
{
	Suite	*s = suite_create("top");
	TCase	*tc = tcase_create("top");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, top_once);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
