/* SPDX-License-Identifier: ISC */
/*
 * MCP over Streamable HTTP: the limits on what a client holds open
 * (cmdgated(8), MCP over HTTP): connections, and a stream's unread
 * output.  The real cmdgated with --http on a free loopback port.
 */
#include "config.h"

#include <sys/socket.h>

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "httpcli.h"
#include "httpsuite.h"
#include "testnet.h"

#define JSON_HDRS	"Content-Type: application/json\r\n" \
			"Accept: application/json, text/event-stream\r\n"

static struct broker	b;
static char		tools[256];

static void
setup(void)
{
	broker_prepare(&b);
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
}

static void
teardown(void)
{
	broker_stop(&b);
}

/*
 * The broker with --http 127.0.0.1:0, with --token-file (token "sesame")
 * when token is set, and the args given; one tool: flood sends 4000-byte
 * log lines, 50 a second, for 10 s.
 */
static void
start_v(int token, const char *first, va_list ap)
{
	const char	*args[24] = { "--tools", tools, "--http",
			    "127.0.0.1:0" };
	char		 path[256];
	int		 n = 4;

	if (token) {
		snprintf(path, sizeof(path), "%s", broker_path(&b, "token"));
		write_file(path, "sesame\n", 0600);
		args[n++] = "--token-file";
		args[n++] = path;
	}
	args_collect(args, n, 24, first, ap);
	write_file(tools, "{\"tools\":[{\"name\":\"flood\",\"tier\":"
	    "\"smooth\",\"exec\":[\"sh\",\"-c\",\"x=$(printf %4000s . | "
	    "tr ' ' y); i=0; while [ $i -lt 500 ]; do echo \\\"log warning "
	    "$x\\\" >&$CMDGATE_NOTIFY_FD; i=$((i+1)); sleep 0.02; "
	    "done\"]}]}", 0600);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	http_port = http_port_of(&b);
}

static void
start(const char *first, ...)
{
	va_list	ap;

	va_start(ap, first);
	start_v(0, first, ap);
	va_end(ap);
}

static void
start_token(const char *first, ...)
{
	va_list	ap;

	va_start(ap, first);
	start_v(1, first, ap);
	va_end(ap);
}

/*
 * Read fd to its end (EOF or reset; each wait bounded): what came, or
 * NULL if it did not end in time.  Caller frees.
 */
static char *
read_to_end(int fd)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	char		*buf = calloc(1, 65536);
	size_t		 n = 0;
	ssize_t		 r;

	ck_assert_ptr_nonnull(buf);
	while (n < 65535) {
		if (poll(&pfd, 1, HC_TIMEOUT_MS) != 1) {
			free(buf);
			return NULL;
		}
		if ((r = read(fd, buf + n, 65535 - n)) <= 0)
			break;
		n += (size_t)r;
	}
	return buf;
}

/* A connection over the bound is closed before anything is said. */
static void
assert_closed_at_once(void)
{
	int	 fd = broker_dial(http_port);
	char	*r;

	ck_assert_int_ge(fd, 0);
	r = read_to_end(fd);
	ck_assert_msg(r != NULL && r[0] == '\0', "a connection over the "
	    "bound was %s", r == NULL ? "kept open" : r);
	free(r);
	close(fd);
}

/* Open connections: at most 2 x --max-clients + 16, idle or not. */
START_TEST(http_max_connections)
{
	char	 sid[64], req[1024], *r;
	int	 fds[20], i;

	start("--max-clients", "2", NULL);
	for (i = 0; i < 20; i++)
		ck_assert_int_ge(fds[i] = broker_dial(http_port), 0);
	assert_closed_at_once();
	assert_closed_at_once();
	ck_assert_int_eq(broker_log_count(&b, "connections open"), 1);
	/* The ones it took still work. */
	snprintf(req, sizeof(req), "POST /mcp HTTP/1.1\r\nHost: "
	    "127.0.0.1:%d\r\n" JSON_HDRS "Content-Length: %zu\r\n"
	    "Connection: close\r\n\r\n%s", http_port, strlen(INIT_BODY),
	    INIT_BODY);
	ck_assert_int_eq(write(fds[0], req, strlen(req)),
	    (ssize_t)strlen(req));
	r = read_to_end(fds[0]);
	ck_assert_msg(r != NULL && strncmp(r, "HTTP/1.1 200", 12) == 0,
	    "%s", r == NULL ? "no answer" : r);
	free(r);
	close(fds[0]);
	/* The broker closed that one: its place is taken by the next. */
	initialize(sid, NULL);
	ck_assert_int_ge(fds[0] = broker_dial(http_port), 0);
	assert_closed_at_once();
	close(fds[0]);
	for (i = 1; i < 20; i++)
		close(fds[i]);
}
END_TEST

/* The first len - 1 bytes fd sends (each wait bounded).  Caller frees. */
static char *
read_some(int fd, size_t len)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	char		*buf = calloc(1, len);
	size_t		 n = 0;
	ssize_t		 r;

	ck_assert_ptr_nonnull(buf);
	while (n < len - 1) {
		ck_assert_int_eq(poll(&pfd, 1, HC_TIMEOUT_MS), 1);
		ck_assert_int_gt(r = read(fd, buf + n, len - 1 - n), 0);
		n += (size_t)r;
	}
	return buf;
}

#define FLOOD(n)	"{\"jsonrpc\":\"2.0\",\"id\":" #n ",\"method\":" \
			"\"tools/call\",\"params\":{\"name\":\"flood\"," \
			"\"arguments\":{}}}"

/*
 * A client that stops reading its stream: past 2 MiB unread the broker
 * closes it, once, instead of buffering on; the events wait for a GET.
 */
START_TEST(http_unread_stream)
{
	char		 sid[64], id[32], req[512], want[64], *r;
	struct hc	*h;
	int		 fd;

	start(NULL);
	initialize(sid, NULL);
	h = post(sid, NULL, "[" FLOOD(1) "," FLOOD(2) "," FLOOD(3) ","
	    FLOOD(4) "," FLOOD(5) "," FLOOD(6) "," FLOOD(7) "," FLOOD(8) "]");
	assert_priming(h, id);
	ck_assert_int_gt(broker_await_log(&b, "bytes unread"), 0);
	ck_assert_int_eq(broker_log_count(&b, "bytes unread"), 1);
	hc_close(h);
	/* Read raw: the replay comes as one chunk larger than hc takes. */
	ck_assert_int_ge(fd = broker_dial(http_port), 0);
	snprintf(req, sizeof(req), "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d"
	    "\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
	    "Last-Event-ID: %s\r\nConnection: close\r\n\r\n", http_port, sid,
	    id);
	ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	r = read_some(fd, 16384);
	snprintf(want, sizeof(want), "\nevent: message\nid: %.*s-",
	    (int)strcspn(id, "-"), id);
	ck_assert_msg(strncmp(r, "HTTP/1.1 200", 12) == 0 &&
	    strstr(r, want) != NULL && strstr(r,
	    "\"notifications/message\"") != NULL, "%.600s", r);
	free(r);
	close(fd);
}
END_TEST

#define AUTH		"Authorization: Bearer sesame\r\n"
#define NSLOW		19	/* with the GET stream, 2 x 2 + 16 */

/*
 * Read what each of fds[n] says until at least want are closed or the
 * rounds run out, each round of 100 ms sending one more byte to those
 * still open when trickle is set (a slow client): how many are still
 * open.  None may have been answered.
 */
static int
await_closed_by(int *fds, int n, int want, int trickle)
{
	struct pollfd	 pfd[NSLOW];
	char		 c;
	int		 i, open = n, round;
	ssize_t		 r;

	ck_assert_int_le(n, NSLOW);
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ fds[i], POLLIN, 0 };
	for (round = 0; n - open < want && round < 100; round++) {
		/* The pace of the trickle: what the test waits for is the close. */
		if (poll(pfd, (nfds_t)n, 100) == -1)
			ck_abort_msg("poll");
		for (i = 0; i < n; i++) {
			if (pfd[i].fd == -1)
				continue;
			if (pfd[i].revents == 0) {
				if (trickle)
					(void)send(pfd[i].fd, "a", 1,
					    MSG_NOSIGNAL);
				continue;
			}
			r = read(pfd[i].fd, &c, 1);
			ck_assert_msg(r <= 0, "a connection that never sent "
			    "a whole request was answered");
			pfd[i].fd = -1;
			open--;
		}
	}
	return open;
}

static int
trickle_until_closed(int *fds, int n)
{
	return await_closed_by(fds, n, n, 1);
}

static int
await_closed(int *fds, int n, int want)
{
	return await_closed_by(fds, n, want, 0);
}

/*
 * Slow senders without the token hold no place past --auth-timeout,
 * however they trickle: each is closed, unanswered; the token holder's
 * stream, let in, outlives it, and the token holder gets in again.
 */
START_TEST(http_slow_senders)
{
	char		 sid[64], id[32], hdrs[256];
	struct hc	*g;
	json_object	*j;
	int		 fds[NSLOW], i;

	start_token("--auth-timeout", "1", "--max-clients", "2", NULL);
	initialize(sid, AUTH);
	snprintf(hdrs, sizeof(hdrs), "Accept: text/event-stream\r\n"
	    "Mcp-Session-Id: %s\r\n" AUTH, sid);
	g = hc_request(http_port, "GET", "/mcp", hdrs, NULL);
	ck_assert_ptr_nonnull(g);
	assert_priming(g, id);
	for (i = 0; i < NSLOW; i++) {
		ck_assert_int_ge(fds[i] = broker_dial(http_port), 0);
		ck_assert_int_eq(write(fds[i], "POST /mcp HTTP/1.1\r\nX-Slow: ",
		    29), 29);
	}
	ck_assert_int_eq(trickle_until_closed(fds, NSLOW), 0);
	ck_assert_int_eq(broker_log_count(&b, "(--auth-timeout), closed"),
	    NSLOW);
	for (i = 0; i < NSLOW; i++)
		close(fds[i]);
	initialize(sid, AUTH);
	write_file(tools, "{\"tools\":[{\"name\":\"other\",\"exec\":"
	    "[\"true\"]}]}", 0600);
	ck_assert_int_eq(kill(b.pid, SIGHUP), 0);
	j = next_message(g);
	ck_assert_str_eq(json_object_get_string(jpath(j, "method")),
	    "notifications/tools/list_changed");
	json_object_put(j);
	hc_close(g);
}
END_TEST

#define NBIG		8	/* requests that do not end, */
#define BIG_SENT	60000	/* the bytes of body each sends */

/*
 * Requests without the token whose bodies do not end count against
 * --max-partial with every client's unfinished messages: past it, the
 * connection holding the most is closed, unanswered, so that no more than
 * 4 of these (4 x 60 kB < 256 KiB) stay; the token holder gets in.
 */
START_TEST(http_partial_bodies)
{
	char	 head[512], sid[64], *body = malloc(BIG_SENT);
	int	 fds[NBIG], i, open;

	ck_assert_ptr_nonnull(body);
	memset(body, 'x', BIG_SENT);
	start_token("--max-message", "65536", "--max-partial", "262144",
	    "--auth-timeout", "3600", NULL);
	snprintf(head, sizeof(head), "POST /mcp HTTP/1.1\r\nHost: "
	    "127.0.0.1:%d\r\n" JSON_HDRS "Content-Length: 65536\r\n\r\n",
	    http_port);
	for (i = 0; i < NBIG; i++) {
		ck_assert_int_ge(fds[i] = broker_dial(http_port), 0);
		ck_assert_int_eq(write(fds[i], head, strlen(head)),
		    (ssize_t)strlen(head));
		/* It may be closed before it is all sent. */
		(void)send(fds[i], body, BIG_SENT, MSG_NOSIGNAL);
	}
	free(body);
	open = await_closed(fds, NBIG, NBIG - 4);
	ck_assert_int_le(open, 4);
	ck_assert_int_ge(broker_log_count(&b, "(--max-partial 262144 bytes "
	    "for all clients), and its request's"), NBIG - open);
	initialize(sid, AUTH);
	for (i = 0; i < NBIG; i++)
		close(fds[i]);
}
END_TEST

static Suite *
httplimits_suite(void)
{
	Suite	*s = suite_create("httplimits");
	TCase	*tc = tcase_create("httplimits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, http_max_connections);
	tcase_add_test(tc, http_unread_stream);
	tcase_add_test(tc, http_slow_senders);
	tcase_add_test(tc, http_partial_bodies);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(httplimits_suite());
}
