/* SPDX-License-Identifier: ISC */
/*
 * The real cmdgated on a free loopback port with a temporary state dir,
 * spoken to over TCP and its Unix socket.  Each bad-input test checks the
 * exact error and that a fresh connection is still served afterwards.
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

#include "testnet.h"
#include "ckrun.h"

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

static struct broker	b;

static void
setup(void)
{
	broker_prepare(&b);
}

static void
teardown(void)
{
	broker_stop(&b);
}

static void
start(const char **args)
{
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
}

static void
assert_pong(struct client *c)
{
	json_object	*r = client_call(c, PING);

	ck_assert_ptr_nonnull(jpath(r, "result"));
	ck_assert_int_eq(json_object_get_int(jpath(r, "id")), 1);
	json_object_put(r);
}

/* A new connection is served: the broker survived what came before. */
static void
assert_serves(void)
{
	struct client	*c = client_tcp(b.port);

	assert_pong(c);
	client_close(c);
}

static void
assert_error(json_object *r, int code, const char *type)
{
	ck_assert_msg(r != NULL, "no answer");
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), code);
	ck_assert_str_eq(json_object_get_string(jpath(r, "error.data.type")),
	    type);
	ck_assert(json_object_object_get_ex(jpath(r, "error.data"), "command",
	    NULL));
	ck_assert_ptr_nonnull(jpath(r, "error.data.reason"));
}

START_TEST(tcp_and_unix)
{
	struct client	*t, *u;
	json_object	*r;
	struct stat	 st;

	start(NULL);
	t = client_tcp(b.port);
	u = client_unix(b.sock);
	assert_pong(t);
	assert_pong(u);
	ck_assert_int_eq(stat(b.sock, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0660);
	r = client_call(u, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"server_status\"}");
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.clients")), 2);
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.pid")), b.pid);
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.listen")),
	    2);
	/* Run from the build tree, it found the worker it built. */
	ck_assert_ptr_nonnull(strstr(json_object_get_string(
	    jpath(r, "result.worker")), "/workers/cmdgate-worker"));
	json_object_put(r);
	client_close(t);
	client_close(u);
}
END_TEST

START_TEST(split_and_pipelined)
{
	struct client	*c;
	char		*l;
	int		 i;

	start(NULL);
	c = client_tcp(b.port);
	client_send(c, "{\"jsonrpc\":\"2.0\",");
	client_send(c, "\"id\":1,\"method\":\"ping\"}\r\n\n{\"jsonrpc\":\"2.0\","
	    "\"id\":2,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"ping\"}\n");
	for (i = 1; i <= 3; i++) {
		char want[64];

		l = client_line(c);
		ck_assert_ptr_nonnull(l);
		snprintf(want, sizeof(want), "\"id\":%d,", i);
		ck_assert_msg(strstr(l, want) != NULL, "%s: not id %d", l, i);
		free(l);
	}
	client_close(c);
}
END_TEST

START_TEST(bad_json_keeps_connection)
{
	struct client	*c;
	json_object	*r;

	start(NULL);
	c = client_tcp(b.port);
	r = client_call(c, "{not json");
	assert_error(r, -32700, "parse_error");
	ck_assert_ptr_null(jpath(r, "id"));
	json_object_put(r);
	r = client_call(c, "[]");
	assert_error(r, -32600, "invalid_request");
	json_object_put(r);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"nope\"}");
	assert_error(r, -32601, "method_not_found");
	json_object_put(r);
	assert_pong(c);
	client_close(c);
	assert_serves();
}
END_TEST

START_TEST(oversize_line_closes)
{
	const char	*args[] = { "--max-message", "1024", NULL };
	struct client	*c;
	char		 big[1500];
	json_object	*r;
	char		*l;

	start(args);
	c = client_tcp(b.port);
	/* No newline: the error comes as soon as the limit passes. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	client_send(c, big);
	l = client_line(c);
	ck_assert_ptr_nonnull(l);
	r = json_tokener_parse(l);
	free(l);
	assert_error(r, -32600, "message_too_large");
	ck_assert_ptr_null(jpath(r, "id"));
	json_object_put(r);
	ck_assert(client_eof(c));
	client_close(c);
	assert_serves();
}
END_TEST

/* A Content-Length over the limit: message_too_large, then a close. */
static void
lsp_too_large(const char *head)
{
	struct client	*c = client_tcp(b.port);
	char		*s;

	client_send(c, head);
	free(client_line(c));
	free(client_line(c));
	s = client_read(c, c->jl.len);
	ck_assert_ptr_nonnull(strstr(s, "message_too_large"));
	free(s);
	ck_assert(client_eof(c));
	client_close(c);
}

START_TEST(lsp_framing)
{
	const char	*args[] = { "--max-message", "1024", NULL };
	const char	*body = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}";
	struct client	*c;
	char		 frame[256], *h, *s;
	size_t		 n = 0;

	start(args);
	c = client_unix(b.sock);
	snprintf(frame, sizeof(frame), "content-length: %zu\r\nContent-Type: "
	    "application/vscode-jsonrpc\r\n\r\n%s", strlen(body), body);
	client_send(c, frame);
	h = client_line(c);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(sscanf(h, "Content-Length: %zu\r", &n), 1);
	free(h);
	h = client_line(c);
	ck_assert_str_eq(h, "\r");
	free(h);
	s = client_read(c, n);
	ck_assert_str_eq(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
	free(s);
	/* A bad header: -32600 and a close. */
	client_send(c, "Content-Length: many\r\n\r\n");
	h = client_line(c);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(sscanf(h, "Content-Length: %zu\r", &n), 1);
	free(h);
	free(client_line(c));
	s = client_read(c, n);
	ck_assert_ptr_nonnull(strstr(s, "\"code\":-32600"));
	ck_assert_ptr_nonnull(strstr(s, "\"type\":\"invalid_request\""));
	free(s);
	ck_assert(client_eof(c));
	client_close(c);
	/* Too large a Content-Length: message_too_large and a close. */
	lsp_too_large("Content-Length: 5000\r\n\r\n");
	/* Above 2^40 too, and without waiting for the end of the headers. */
	lsp_too_large("Content-Length: 2199023255552\r\n");
	assert_serves();
}
END_TEST

static json_object *
auth_try(struct client *c, const char *token)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"authenticate\",\"params\":{\"token\":\"%s\"}}",
	    token);
	return client_call(c, line);
}

/* Authenticate on fresh connections until the lockout ends; the tries. */
static int
auth_until_accepted(const char *token)
{
	struct timespec	 ts = { 0, 100 * 1000 * 1000 };
	struct client	*c;
	json_object	*r;
	int		 tries, ok = 0;

	for (tries = 1; tries <= 100 && !ok; tries++) {
		c = client_tcp(b.port);
		r = auth_try(c, token);
		ok = jpath(r, "result") != NULL;
		if (!ok) {
			assert_error(r, -32005, "unauthorized");
			ck_assert_ptr_nonnull(strstr(json_object_get_string(
			    jpath(r, "error.data.reason")), "try again in"));
			nanosleep(&ts, NULL);	/* time is what it waits for */
		}
		json_object_put(r);
		client_close(c);
	}
	ck_assert_msg(ok, "still locked out after 10 s");
	return tries - 1;
}

/*
 * Three wrong tokens from one address (the loopback, here) lock it out:
 * for 1 s, then 2 s, ... whatever the connection, the right token too.
 * Each lockout is logged once, not each try.
 */
static void
auth_locked_out(void)
{
	struct client	*c;
	json_object	*r;

	ck_assert_int_eq(broker_log_count(&b, "wrong token from 127.0.0.1"),
	    1);
	ck_assert_int_eq(broker_log_count(&b, "3 wrong tokens from loopback "
	    "(0 tries refused during its last lockout); refusing it for 1 s"),
	    1);
	c = client_tcp(b.port);
	r = auth_try(c, "hunter2-token");
	assert_error(r, -32005, "unauthorized");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(
	    jpath(r, "error.data.reason")), "try again in 1 s"));
	json_object_put(r);
	client_close(c);
	ck_assert_int_gt(auth_until_accepted("hunter2-token"), 1);
	/* The next wrong token doubles the lockout. */
	c = client_tcp(b.port);
	r = auth_try(c, "guess");
	assert_error(r, -32005, "unauthorized");
	json_object_put(r);
	r = auth_try(c, "hunter2-token");
	ck_assert_ptr_nonnull(strstr(json_object_get_string(
	    jpath(r, "error.data.reason")), "try again in 2 s"));
	json_object_put(r);
	client_close(c);
	ck_assert_int_eq(broker_log_count(&b, "4 wrong tokens from loopback"),
	    1);
	ck_assert_int_eq(broker_log_count(&b, "refusing it for 2 s"), 1);
	ck_assert_int_eq(broker_log_count(&b, "wrong token from"), 1);
	/* A Unix-socket client is not concerned. */
	c = client_unix(b.sock);
	assert_pong(c);
	client_close(c);
}

START_TEST(auth_token)
{
	const char	*args[] = { "--token-file", NULL, NULL };
	struct client	*c, *u;
	json_object	*r;
	char		 path[256];
	int		 i;

	snprintf(path, sizeof(path), "%s", broker_path(&b, "token"));
	write_file(path, "  hunter2-token \nsecond line\n", 0600);
	args[1] = path;
	start(args);
	c = client_tcp(b.port);
	r = client_call(c, PING);
	assert_error(r, -32005, "unauthorized");
	json_object_put(r);
	r = client_auth(c, "hunter2-token");
	ck_assert(json_object_get_boolean(jpath(r, "result.authenticated")));
	json_object_put(r);
	assert_pong(c);
	client_close(c);
	/* Unix-socket clients are trusted by the socket's permissions. */
	u = client_unix(b.sock);
	assert_pong(u);
	client_close(u);
	/* Three wrong tokens: the third answer, then the close. */
	c = client_tcp(b.port);
	for (i = 0; i < 3; i++) {
		r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"authenticate\",\"params\":{\"token\":\"guess\"}}");
		assert_error(r, -32005, "unauthorized");
		json_object_put(r);
	}
	ck_assert(client_eof(c));
	client_close(c);
	/* The token never reaches the log. */
	ck_assert_int_eq(broker_log_count(&b, "guess"), 0);
	ck_assert_int_eq(broker_log_count(&b, "hunter2"), 0);
	auth_locked_out();
}
END_TEST

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

START_TEST(editor_flags_follow_connection)
{
	struct client	*ed, *other;
	json_object	*r;
	int		 i, busy = 1;

	start(NULL);
	ed = client_tcp(b.port);
	other = client_unix(b.sock);
	r = client_call(ed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"tests_running\":true}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.busy.tests_running")));
	json_object_put(r);
	r = client_call(other, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.busy.tests_running")));
	json_object_put(r);
	client_close(ed);
	/* The close is seen within a bounded number of round trips. */
	for (i = 0; i < 10000 && busy; i++) {
		r = client_call(other, "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"report_editor_state\"}");
		busy = json_object_get_boolean(
		    jpath(r, "result.busy.tests_running"));
		json_object_put(r);
	}
	ck_assert_int_eq(busy, 0);
	client_close(other);
}
END_TEST

START_TEST(max_clients)
{
	const char	*args[] = { "--max-clients", "2", NULL };
	struct client	*a, *c, *extra;

	start(args);
	a = client_tcp(b.port);
	c = client_unix(b.sock);
	assert_pong(a);
	assert_pong(c);
	extra = client_tcp(b.port);
	ck_assert(client_eof(extra));
	client_close(extra);
	assert_pong(a);
	client_close(c);
	client_close(a);
}
END_TEST

/* A client that never reads does not slow the others down. */
START_TEST(non_reader_does_not_block)
{
	struct client	*lazy, *c;
	char		*burst;
	size_t		 i, n = 20000, len = strlen(PING) + 1;
	int		 flags = MSG_NOSIGNAL | MSG_DONTWAIT;
	size_t		 sent = 0;
	ssize_t		 w;

	start(NULL);
	lazy = client_tcp(b.port);
	burst = malloc(n * len);
	for (i = 0; i < n; i++) {
		memcpy(burst + i * len, PING, len - 1);
		burst[i * len + len - 1] = '\n';
	}
	/* Push until the broker stops reading this client. */
	for (i = 0; i < 50; i++) {
		w = send(lazy->fd, burst, n * len, flags);
		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	free(burst);
	ck_assert_uint_gt(sent, 0);
	c = client_tcp(b.port);
	for (i = 0; i < 100; i++)
		assert_pong(c);
	client_close(c);
	client_close(lazy);
	assert_serves();
}
END_TEST

/* Out of descriptors: accepting pauses instead of spinning. */
START_TEST(emfile_pauses_accept)
{
	struct client	*first, *more[40];
	json_object	*r;
	int		 i, n = 0;

	ck_assert_int_eq(broker_start(&b, NULL, 32), 0);
	first = client_tcp(b.port);
	assert_pong(first);
	for (i = 0; i < 40; i++)
		more[n++] = client_tcp(b.port);	/* backlog takes them */
	/* Some connections are waiting in the backlog, unaccepted (the
	 * broker may answer the ping before it tries to accept them). */
	ck_assert_int_ge(broker_await_log(&b, "pausing new connections"), 1);
	assert_pong(first);
	ck_assert_int_le(broker_log_count(&b, "pausing new connections"), 3);
	for (i = 0; i < n; i++)
		client_close(more[i]);
	/* Once descriptors are free, new clients are served again. */
	r = client_call(first, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server_status\"}");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
	client_close(first);
	assert_serves();
}
END_TEST

START_TEST(batch_over_the_wire)
{
	struct client	*c;
	json_object	*r;
	char		*l;

	start(NULL);
	c = client_tcp(b.port);
	r = client_call(c, "[{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":"
	    "\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]");
	ck_assert(json_object_is_type(r, json_type_array));
	ck_assert_int_eq(json_object_array_length(r), 1);
	json_object_put(r);
	/* All notifications: no answer at all; the next answer is the ping. */
	client_send(c, "[{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]\n");
	client_send(c, PING "\n");
	l = client_line(c);
	ck_assert_ptr_nonnull(strstr(l, "\"id\":1,\"result\""));
	free(l);
	client_close(c);
}
END_TEST

START_TEST(mcp_handshake)
{
	struct client	*c;
	json_object	*r;

	start(NULL);
	c = client_tcp(b.port);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
	    "\"version\":\"0\"}}}");
	ck_assert_str_eq(json_object_get_string(
	    jpath(r, "result.serverInfo.name")), "cmdgate");
	json_object_put(r);
	client_send(c, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n");
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"tools/list\"}");
	ck_assert_int_ge(json_object_array_length(jpath(r, "result.tools")), 3);
	json_object_put(r);
	client_close(c);
}
END_TEST

/*
 * A socket whose connect fails for another reason than ECONNREFUSED may
 * be a live broker's (EACCES for another user's, EAGAIN for a busy one):
 * the broker refuses to start (69) and leaves it alone.
 */
START_TEST(busy_socket_not_stolen)
{
	struct sockaddr_un	 sun;
	struct stat		 before, after;
	int			 lfd, fds[64], n = 0, i;

	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.100s", b.sock);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(lfd, 0), 0);
	/* Fill its backlog: a further connect gets EAGAIN. */
	for (i = 0; i < 64; i++) {
		fds[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(fds[n], (struct sockaddr *)&sun,
		    sizeof(sun)) == -1) {
			ck_assert_int_eq(errno, EAGAIN);
			close(fds[n]);
			break;
		}
		n++;
	}
	ck_assert_int_lt(i, 64);
	ck_assert_int_eq(stat(b.sock, &before), 0);
	ck_assert_int_eq(broker_start(&b, NULL, 0), 69);
	ck_assert_int_ge(broker_log_count(&b, "it may be a live broker's"), 1);
	ck_assert_int_eq(stat(b.sock, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(lfd);
	unlink(b.sock);
	/* A refused socket is stale: replaced, and the broker starts. */
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(lfd);
	start(NULL);
	assert_serves();
}
END_TEST

/* A client that has not authenticated hears no broadcast. */
START_TEST(no_broadcast_before_auth)
{
	const char	*args[] = { "--token-file", NULL, "--tools", NULL,
			    NULL };
	struct client	*a, *u;
	json_object	*r;
	char		 token[256], tools[256], *l;

	snprintf(token, sizeof(token), "%s", broker_path(&b, "token"));
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	write_file(token, "sesame\n", 0600);
	write_file(tools, "{\"tools\":[{\"name\":\"a\",\"exec\":[\"true\"]}]}",
	    0600);
	args[1] = token;
	args[3] = tools;
	start(args);
	a = client_tcp(b.port);
	u = client_tcp(b.port);
	r = client_auth(a, "sesame");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
	write_file(tools, "{\"tools\":[{\"name\":\"b\",\"exec\":[\"true\"]}]}",
	    0600);
	kill(b.pid, SIGHUP);
	r = client_wait_method(a, "notifications/tools/list_changed");
	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	/* The first thing u reads is the answer to its own request. */
	r = client_call(u, PING);
	assert_error(r, -32005, "unauthorized");
	json_object_put(r);
	ck_assert_int_eq(json_object_array_length(u->notes), 0);
	/* At shutdown: the notice for a, only the close for u. */
	kill(b.pid, SIGTERM);
	r = client_wait_method(a, "notifications/server/shutdown");
	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	l = client_line(u);
	ck_assert_msg(l == NULL, "unauthenticated client got %s", l);
	ck_assert_uint_eq(u->jl.len, 0);
	ck_assert_int_eq(broker_signal_wait(&b, 0), 0);
	client_close(a);
	client_close(u);
}
END_TEST

/* Stop the broker between loop turns, so that what is sent meanwhile is
 * read in one turn when it goes on. */
static void
broker_pause(void)
{
	siginfo_t	si;

	ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
	ck_assert_int_eq(waitid(P_PID, (id_t)b.pid, &si, WSTOPPED | WNOWAIT),
	    0);
}

/*
 * A batch that sets flag, pings, and reports the broker-wide flags.
 * Caller frees.
 */
static char *
flag_batch(const char *flag)
{
	char	*batch = malloc(100 * 64), *p = batch;
	int	 i;

	p += sprintf(p, "[{\"jsonrpc\":\"2.0\",\"id\":\"set\",\"method\":"
	    "\"report_editor_state\",\"params\":{\"%s\":true}}", flag);
	for (i = 0; i < 98; i++)
		p += sprintf(p, ",{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"ping\"}", i);
	sprintf(p, ",{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":"
	    "\"report_editor_state\"}]\n");
	return batch;
}

/* Both flags were set when the batch's last request ran. */
static void
assert_saw_both(struct client *c)
{
	json_object	*r = client_call(c, ""), *e, *last = NULL;
	size_t		 i;

	ck_assert_uint_eq(json_object_array_length(r), 100);
	for (i = 0; i < 100; i++) {
		e = json_object_array_get_idx(r, i);
		if (json_object_is_type(jpath(e, "id"), json_type_string) &&
		    strcmp(json_object_get_string(jpath(e, "id")), "last") == 0)
			last = e;
	}
	ck_assert_ptr_nonnull(last);
	ck_assert(json_object_get_boolean(jpath(last,
	    "result.busy.tests_running")));
	ck_assert(json_object_get_boolean(jpath(last,
	    "result.busy.compiling")));
	json_object_put(r);
}

/*
 * Big batches do not hold the loop: two sent at the same moment are
 * answered part by part, in turns, so the last request of each sees the
 * first of the other (answered whole, one batch would run before the
 * other starts).
 */
START_TEST(batch_interleaved)
{
	struct client	*a, *o;
	char		*ba, *bo;
	int		 i;

	start(NULL);
	a = client_tcp(b.port);
	o = client_tcp(b.port);
	assert_pong(a);
	assert_pong(o);
	ba = flag_batch("tests_running");
	bo = flag_batch("compiling");
	broker_pause();
	client_send(a, ba);
	client_send(o, bo);
	kill(b.pid, SIGCONT);
	free(ba);
	free(bo);
	assert_saw_both(a);
	assert_saw_both(o);
	/* Gone in the middle of a batch: an EOF, then a reset. */
	for (i = 0; i < 2; i++) {
		struct linger	 rst = { 1, 0 };
		struct client	*gone = client_tcp(b.port);

		ba = flag_batch("busy");
		client_send(gone, ba);
		free(ba);
		if (i == 0)
			shutdown(gone->fd, SHUT_WR);
		else
			setsockopt(gone->fd, SOL_SOCKET, SO_LINGER, &rst,
			    sizeof(rst));
		client_close(gone);
	}
	assert_pong(a);
	client_close(a);
	client_close(o);
	assert_serves();
}
END_TEST

/* The next thing c reads is a last error of this type, then the close. */
static void
assert_expired(struct client *c, int code, const char *type)
{
	json_object	*r;
	char		*l = client_line(c);

	ck_assert_msg(l != NULL, "no last error before the close");
	r = json_tokener_parse(l);
	free(l);
	assert_error(r, code, type);
	ck_assert_ptr_null(jpath(r, "id"));
	json_object_put(r);
	ck_assert(client_eof(c));
}

/*
 * --idle-timeout closes a client that sends no complete request: silent,
 * or dribbling a partial line.  Not one that waits for an answer, holds
 * editor flags or is an MCP session.
 */
START_TEST(idle_timeout)
{
	const char	*args[] = { "--idle-timeout", "1", NULL };
	struct client	*idle, *slow, *waiter, *editor, *mcp;
	json_object	*r;
	char		 line[256];

	start(args);
	idle = client_tcp(b.port);
	slow = client_tcp(b.port);
	waiter = client_tcp(b.port);
	editor = client_unix(b.sock);
	mcp = client_tcp(b.port);
	r = client_call(editor, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"report_editor_state\",\"params\":{\"compiling\":true}}");
	json_object_put(r);
	r = client_call(mcp, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\"}}}");
	json_object_put(r);
	r = client_call(waiter, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"sleep\",\"params\":{\"seconds\":3}}]}}");
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\",\"timeout_s\":20}}",
	    json_object_get_string(jpath(r, "result.ticket")));
	json_object_put(r);
	client_send(slow, "{\"jsonrpc\":");
	/* Answered after 3 s: the wait kept the connection. */
	r = client_call(waiter, line);
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "done");
	json_object_put(r);
	assert_pong(waiter);
	assert_pong(editor);
	assert_pong(mcp);
	assert_expired(idle, -32600, "idle_timeout");
	assert_expired(slow, -32600, "idle_timeout");
	ck_assert_int_ge(broker_log_count(&b, "(--idle-timeout), closed"), 2);
	/* Without a wait, the waiter is idle again. */
	assert_expired(waiter, -32600, "idle_timeout");
	client_close(idle);
	client_close(slow);
	client_close(waiter);
	client_close(editor);
	client_close(mcp);
	assert_serves();
}
END_TEST

/* With a token, a TCP client has --auth-timeout seconds to give it. */
START_TEST(auth_timeout)
{
	const char	*args[] = { "--token-file", NULL, "--auth-timeout", "1",
			    NULL };
	struct client	*late, *ok, *u;
	json_object	*r;
	char		 token[256];

	snprintf(token, sizeof(token), "%s", broker_path(&b, "token"));
	write_file(token, "sesame\n", 0600);
	args[1] = token;
	start(args);
	late = client_tcp(b.port);
	ok = client_tcp(b.port);
	u = client_unix(b.sock);
	r = client_auth(ok, "sesame");
	ck_assert_ptr_nonnull(jpath(r, "result"));
	json_object_put(r);
	r = client_call(late, PING);
	assert_error(r, -32005, "unauthorized");
	json_object_put(r);
	assert_expired(late, -32005, "unauthorized");
	ck_assert_int_eq(broker_log_count(&b, "not authenticated within 1 s"),
	    1);
	assert_pong(ok);
	assert_pong(u);
	client_close(late);
	client_close(ok);
	client_close(u);
}
END_TEST

/*
 * Unfinished messages of all clients together are capped: past
 * --max-partial, the client holding the most is told and closed; the
 * others go on.
 */
START_TEST(partial_cap)
{
	const char	*args[] = { "--max-message", "4096", "--max-partial",
			    "4096", NULL };
	struct client	*big, *small;
	json_object	*r;
	char		 buf[3100];

	start(args);
	big = client_tcp(b.port);
	small = client_tcp(b.port);
	memset(buf, 'x', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	client_send(big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"");
	client_send(big, buf);
	assert_serves();	/* big's bytes are read by now */
	buf[2000] = '\0';
	client_send(small, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"");
	client_send(small, buf);
	assert_expired(big, -32600, "message_too_large");
	r = client_call(small, "\"}}");
	ck_assert_uint_eq(strlen(json_object_get_string(
	    jpath(r, "result.message"))), 2000);
	json_object_put(r);
	ck_assert_int_eq(broker_log_count(&b, "--max-partial"), 1);
	client_close(big);
	client_close(small);
	assert_serves();
}
END_TEST

/* How many clients server_status counts, from a fresh connection. */
static int
clients_now(void)
{
	struct client	*c = client_unix(b.sock);
	json_object	*r;
	int		 n;

	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"server_status\"}");
	n = json_object_get_int(jpath(r, "result.clients"));
	json_object_put(r);
	client_close(c);
	return n;
}

/*
 * A client that reads nothing is closed when idle, and dropped when it
 * does not read that last error either: it holds no slot for ever.
 */
START_TEST(non_reader_dropped)
{
	const char	*args[] = { "--idle-timeout", "1", NULL };
	struct timespec	 ts = { 0, 200 * 1000 * 1000 };
	struct client	*lazy;
	char		*ping, *text;
	size_t		 i, len, off;
	ssize_t		 w;
	int		 tries, small = 16 * 1024;

	start(args);
	lazy = client_tcp(b.port);
	setsockopt(lazy->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	text = malloc(64 * 1024 + 1);
	memset(text, 'a', 64 * 1024);
	text[64 * 1024] = '\0';
	if (asprintf(&ping, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
	    "\"params\":{\"message\":\"%s\"}}\n", text) == -1)
		ck_abort_msg("asprintf");
	free(text);
	len = strlen(ping);
	/*
	 * 300 answers of 64 KiB (19 MiB) are more than the sockets hold: the
	 * broker stops reading this client before it has sent them all.
	 */
	for (i = 0, off = 0; i < 300; ) {
		struct pollfd	pfd = { lazy->fd, POLLOUT, 0 };

		w = send(lazy->fd, ping + off, len - off, MSG_NOSIGNAL |
		    MSG_DONTWAIT);
		if (w > 0 && (off += (size_t)w) == len) {
			off = 0;
			i++;
		} else if (w <= 0 && poll(&pfd, 1, 2000) == 0)
			break;
	}
	ck_assert_uint_lt(i, 300);
	free(ping);
	/* Idle after 1 s, dropped 5 s later: time is what this waits for. */
	for (tries = 0; tries < 50 && clients_now() > 1; tries++)
		nanosleep(&ts, NULL);
	ck_assert_int_eq(clients_now(), 1);
	ck_assert_int_eq(broker_log_count(&b, "did not read its last answer "
	    "in time, dropped"), 1);
	client_close(lazy);
}
END_TEST

static Suite *
integration_suite(void)
{
	Suite	*s = suite_create("integration");
	TCase	*tc = tcase_create("broker");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tcp_and_unix);
	tcase_add_test(tc, split_and_pipelined);
	tcase_add_test(tc, bad_json_keeps_connection);
	tcase_add_test(tc, oversize_line_closes);
	tcase_add_test(tc, lsp_framing);
	tcase_add_test(tc, auth_token);
	tcase_add_test(tc, exit_statuses);
	tcase_add_test(tc, address_in_use);
	tcase_add_test(tc, sighup_reload);
	tcase_add_test(tc, sigterm_shutdown);
	tcase_add_test(tc, sigint_exits_zero);
	tcase_add_test(tc, editor_flags_follow_connection);
	tcase_add_test(tc, max_clients);
	tcase_add_test(tc, non_reader_does_not_block);
	tcase_add_test(tc, emfile_pauses_accept);
	tcase_add_test(tc, batch_over_the_wire);
	tcase_add_test(tc, mcp_handshake);
	tcase_add_test(tc, busy_socket_not_stolen);
	tcase_add_test(tc, no_broadcast_before_auth);
	tcase_add_test(tc, batch_interleaved);
	tcase_add_test(tc, idle_timeout);
	tcase_add_test(tc, auth_timeout);
	tcase_add_test(tc, partial_cap);
	tcase_add_test(tc, non_reader_dropped);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(integration_suite());
}
