/* SPDX-License-Identifier: ISC */
/*
 * The broker under the fault shim (tests/fault.c), for the suites that
 * inject faults: check_faults (the store) and check_prestart (a worker's
 * tool before the broker knows its group).
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "faultutil.h"

struct broker	 b;
struct client	*c;

int
start_shimmed_status(const char **args)
{
	const char	*shim = getenv("CMDGATE_FAULT_SHIM");
	const char	*asan = getenv("ASAN_OPTIONS");
	char		 opts[512];
	int		 rc;

	ck_assert_msg(shim != NULL, "CMDGATE_FAULT_SHIM is not set");
	/* The broker inherits these; the test itself is already loaded. */
	setenv("LD_PRELOAD", shim, 1);
	setenv("CMDGATE_FAULT_DIR", b.dir, 1);
	snprintf(opts, sizeof(opts), "%s%sverify_asan_link_order=0",
	    asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	rc = broker_start(&b, args, 0);
	unsetenv("LD_PRELOAD");
	return rc;
}

/* The broker under the shim, with args; c to it. */
void
start_shimmed(const char **args)
{
	ck_assert_int_eq(start_shimmed_status(args), 0);
	c = client_tcp(b.port);
}

void
fault_setup(void)
{
	broker_prepare(&b);
	start_shimmed(NULL);
}

void
fault_teardown(void)
{
	client_close(c);
	broker_stop(&b);
}

void
arm(const char *fault, int on)
{
	const char	*path = broker_path(&b, fault);

	if (on)
		write_file(path, "", 0600);
	else
		ck_assert_int_eq(unlink(path), 0);
}

/*
 * Workers under the shim too: their environment is cleared, so a script
 * in the test's dir (CMDGATE_WORKER) sets it up and runs the real one.
 */
static void
shim_workers(int on)
{
	static char	 saved[PATH_MAX];
	static int	 had;
	const char	*w = getenv("CMDGATE_WORKER");
	const char	*asan = getenv("ASAN_OPTIONS");
	char		 real[PATH_MAX], text[3 * PATH_MAX], *script;

	if (!on) {
		if (had)
			setenv("CMDGATE_WORKER", saved, 1);
		else
			unsetenv("CMDGATE_WORKER");
		return;
	}
	if ((had = w != NULL))
		snprintf(saved, sizeof(saved), "%s", w);
	ck_assert_ptr_nonnull(realpath(w != NULL && *w != '\0' ? w :
	    "workers/cmdgate-worker", real));
	snprintf(text, sizeof(text), "#!/bin/sh\nLD_PRELOAD='%s' "
	    "CMDGATE_FAULT_DIR='%s' ASAN_OPTIONS='%s%sverify_asan_link_order=0'"
	    " exec '%s' \"$@\"\n", getenv("CMDGATE_FAULT_SHIM"), b.dir,
	    asan ? asan : "", asan ? ":" : "", real);
	script = strdup(broker_path(&b, "shimmed-worker"));
	write_file(script, text, 0700);
	setenv("CMDGATE_WORKER", script, 1);
	free(script);
}

/* A fresh broker in a fresh dir is coming: b.dir names it for the table. */
void
shim_prepare(void)
{
	client_close(c);
	broker_stop(&b);
	broker_prepare(&b);
}

/*
 * Start it with the tool table tools, fault armed (if not NULL), and its
 * workers under the shim; with --kill-grace grace if it is not NULL.  c
 * to it.
 */
const char *
tool_table(const char *json)
{
	static char	table[256];

	snprintf(table, sizeof(table), "%s", broker_path(&b, "tools.json"));
	write_file(table, json, 0600);
	return table;
}

void
shim_start(const char *tools, const char *fault, const char *grace)
{
	const char	*args[] = { "--tools", NULL, "--kill-grace", grace,
			    NULL };

	args[1] = tool_table(tools);
	if (grace == NULL)
		args[2] = NULL;
	if (fault != NULL)
		arm(fault, 1);
	shim_workers(1);
	start_shimmed(args);
	shim_workers(0);
}

json_object *
taken(const char *line, char t[32])
{
	json_object	*r = client_call(c, line);

	ck_assert_msg(jpath(r, "result.ticket") != NULL, "%.300s",
	    json_object_to_json_string(r));
	snprintf(t, 32, "%s", json_object_get_string(jpath(r,
	    "result.ticket")));
	return r;
}

/* Submit one async job of tool: its ticket into t. */
void
submit_tool(const char *tool, char t[32])
{
	char		 line[256];
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"%s\"}]}}", tool);
	r = taken(line, t);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "running");
	json_object_put(r);
}

/* Call method on ticket t (cancel_job, wait_job): the answer. */
json_object *
on_ticket(const char *method, const char *t)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"%s\",\"params\":{\"ticket\":\"%s\"%s}}", method, t,
	    strcmp(method, "wait_job") == 0 ? ",\"timeout_s\":20" : "");
	return client_call(c, line);
}

/*
 * Whether the tool pid (a group leader) ends within 10 s; if not, it is
 * killed, and the worker the test stopped is let go.
 */
int
tool_ends(pid_t pid, pid_t stopped)
{
	int	ended = pid_ends_within(pid, 10000);

	if (!ended && stopped > 0)
		kill(stopped, SIGCONT);
	return ended;
}

const char *
submit_ticket(json_object **r)
{
	char	t[32];

	*r = taken(SUBMIT, t);
	return json_object_get_string(jpath(*r, "result.ticket"));
}

void
assert_storage_error(json_object *r, const char *why)
{
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32004);
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    "storage_error");
	ck_assert_msg(strstr(json_object_get_string(jpath(r,
	    "error.data.reason")), why) != NULL, "reason: %s",
	    json_object_get_string(jpath(r, "error.data.reason")));
}

void
assert_serving(void)
{
	json_object	*r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"server_status\"}");

	ck_assert_ptr_nonnull(jpath(r, "result.store"));
	json_object_put(r);
}

void
wait_done(const char *ticket)
{
	char		 line[256];
	json_object	*r;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    ticket);
	r = client_call(c, line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
}
