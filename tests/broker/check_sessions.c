/* SPDX-License-Identifier: ISC */
/*
 * The real cmdgated: authentication over the wire and the timeouts and
 * caps that end idle, slow and unauthenticated sessions (fixture in
 * integutil.c).
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
sessions_suite(void)
{
	Suite	*s = suite_create("sessions");
	TCase	*tc = tcase_create("broker");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, auth_token);
	tcase_add_test(tc, no_broadcast_before_auth);
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
	return ck_run(sessions_suite());
}
