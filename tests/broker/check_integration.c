/* SPDX-License-Identifier: ISC */
/*
 * The real cmdgated on a free loopback port with a temporary state dir,
 * spoken to over TCP and its Unix socket: framing, connections, batches
 * and notifications.  Each bad-input test checks the exact error and that
 * a fresh connection is still served afterwards (fixture in integutil.c).
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

/* A table with a reload that tests_running holds (etc/tools/demo.json). */
static const char held_table[] = "{\"tools\":[{\"name\":\"rebuild\","
    "\"tier\":\"heavy\",\"reload\":true,\"exec\":[\"true\"]}]}";

/* The client of list_clients' answer r named name, or NULL. */
static json_object *
client_named(json_object *r, const char *name)
{
	json_object	*list = jpath(r, "result.clients"), *o, *n;
	size_t		 i;

	for (i = 0; i < json_object_array_length(list); i++) {
		o = json_object_array_get_idx(list, i);
		if (json_object_object_get_ex(o, "name", &n) && n != NULL &&
		    strcmp(json_object_get_string(n), name) == 0)
			return o;
	}
	return NULL;
}

#define CALL(m, p) "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" m "\"," \
	"\"params\":" p "}"

START_TEST(list_clients)
{
	const char	*args[] = { "--tools", NULL, NULL };
	char		 path[256];
	struct client	*ed, *ag;
	json_object	*r, *o;

	snprintf(path, sizeof(path), "%s", broker_path(&b, "tools.json"));
	write_file(path, held_table, 0600);
	args[1] = path;
	start(args);
	ed = client_tcp(b.port);
	ag = client_unix(b.sock);
	json_object_put(client_call(ed, CALL("set_client_name",
	    "{\"name\":\"editor-one\"}")));
	json_object_put(client_call(ed, CALL("report_editor_state",
	    "{\"tests_running\":true}")));
	json_object_put(client_call(ag, CALL("set_client_name",
	    "{\"name\":\"agent-two\"}")));
	r = client_call(ag, CALL("batch_execute", "{\"async\":true,"
	    "\"commands\":[{\"tool\":\"rebuild\"}]}"));
	ck_assert_str_eq(json_object_get_string(jpath(r, "result.status")),
	    "queued");
	json_object_put(r);
	r = client_call(ag, CALL("list_clients", "{}"));
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.clients")),
	    2);
	ck_assert_ptr_nonnull(o = client_named(r, "editor-one"));
	ck_assert_str_eq(json_object_get_string(jpath(o, "face")), "cmdgate");
	ck_assert_int_eq(strncmp(json_object_get_string(jpath(o, "peer")),
	    "127.0.0.1:", 10), 0);
	ck_assert(json_object_get_boolean(jpath(o, "editor.tests_running")));
	ck_assert_int_eq(json_object_get_int(jpath(o, "jobs_in_flight")), 0);
	ck_assert(!json_object_get_boolean(jpath(o, "session")));
	ck_assert_ptr_nonnull(o = client_named(r, "agent-two"));
	ck_assert_int_eq(json_object_get_int(jpath(o, "jobs_in_flight")), 1);
	ck_assert_int_eq(json_object_get_int(jpath(o, "waits")), 0);
	ck_assert(!json_object_get_boolean(jpath(o, "editor.tests_running")));
	ck_assert_int_eq((int)strlen(json_object_get_string(jpath(o,
	    "since"))), 24);
	ck_assert_int_gt(json_object_get_int(jpath(o, "id")), 0);
	json_object_put(r);
	/* A subscriber hears that something changed: a client named. */
	r = client_call(ed, CALL("subscribe_status", "{}"));
	ck_assert(json_object_get_boolean(jpath(r, "result.subscribed")));
	json_object_put(r);
	client_send(ag, CALL("set_client_name", "{\"name\":\"agent-2\"}")
	    "\n");
	ck_assert_ptr_nonnull(r = client_wait_method(ed,
	    "notifications/status"));
	ck_assert_ptr_nonnull(jpath(r, "params.timestamp"));
	json_object_put(r);
	client_close(ed);
	client_close(ag);
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
	struct client	*first, *more[40], *c;
	json_object	*r;
	char		*l = NULL;
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
	/*
	 * The broker first accepts and closes the dead connections left in
	 * its backlog, a few descriptors at a time.  Under valgrind a
	 * client may also be reset meanwhile: valgrind keeps the top
	 * descriptors for itself, so an accept the kernel completed into
	 * one of them is closed by valgrind and reported as EMFILE.  So
	 * up to six tries, each a new connection.
	 */
	for (i = 0; i < 6 && l == NULL; i++) {
		c = client_tcp(b.port);
		client_send(c, PING "\n");
		l = client_line(c);
		client_close(c);
	}
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(strstr(l, "\"result\""));
	free(l);
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
	tcase_add_test(tc, editor_flags_follow_connection);
	tcase_add_test(tc, max_clients);
	tcase_add_test(tc, non_reader_does_not_block);
	tcase_add_test(tc, emfile_pauses_accept);
	tcase_add_test(tc, batch_over_the_wire);
	tcase_add_test(tc, mcp_handshake);
	tcase_add_test(tc, busy_socket_not_stolen);
	tcase_add_test(tc, batch_interleaved);
	tcase_add_test(tc, list_clients);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(integration_suite());
}
