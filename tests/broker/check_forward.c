/* SPDX-License-Identifier: ISC */
/*
 * Jobs end to end: forward tools against loopback upstreams (helpers in
 * jobsutil.c).
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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
#include "testnet.h"

/* A fake upstream: answers "answer", errors "oops", closes on "hangup",
 * resets on "reset", says nothing to "silent"; closes on every other
 * "flaky" (the first, third, ...) and answers the rest. */
static void
start_upstream(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			lfd = socket(AF_INET, SOCK_STREAM, 0), fd;
	char			buf[4096];
	ssize_t			n;
	int			flaky = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 16), 0);
	getsockname(lfd, (struct sockaddr *)&sin, &len);
	upstream_port = ntohs(sin.sin_port);
	if ((upstream = fork()) != 0) {
		close(lfd);
		return;
	}
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, "\"answer\"") != NULL ||
		    (strstr(buf, "\"flaky\"") != NULL && flaky++ % 2 == 1)) {
			const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n"
			    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"v\":42}}\n";
			(void)!write(fd, m, strlen(m));
		} else if (strstr(buf, "\"oops\"") != NULL) {
			const char *m = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":"
			    "{\"code\":-32000,\"message\":\"no scene\"}}\n";
			(void)!write(fd, m, strlen(m));
		} else if (strstr(buf, "\"silent\"") != NULL) {
			pause();
		} else if (strstr(buf, "\"reset\"") != NULL) {
			struct linger lg = { 1, 0 };

			/* Close with a reset, as with the request unread. */
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(fd);
	}
}

/* Run a job of the one tool; it must fail with needle in its error. */
static void
assert_fails(const char *tool, const char *needle)
{
	char		 t[32], cmds[128];
	json_object	*r;

	snprintf(cmds, sizeof(cmds), "[{\"tool\":\"%s\"}]", tool);
	submit(t, cmds, NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_msg(strstr(str(r, "results.0.error"), needle) != NULL,
	    "%s: %s", tool, str(r, "results.0.error"));
	json_object_put(r);
}

START_TEST(forward_tools)
{
	char		 t[32];
	json_object	*r;

	start_upstream();
	start_with("heavy", NULL);
	submit(t, "[{\"tool\":\"answer\",\"params\":{\"a\":1}}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.result.v")),
	    42);
	json_object_put(r);
	assert_fails("oops", "no scene");
	assert_fails("hangup", "closed");
	/* A reset is the upstream closing too (it was "read failed"). */
	assert_fails("reset", "closed");
	submit(t, "[{\"tool\":\"silent\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.timed_out")));
	json_object_put(r);
	submit(t, "[{\"tool\":\"refused\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "results.0.error"), "refused"));
	json_object_put(r);
}
END_TEST

/* A loopback upstream that takes the request slowly, then answers. */
static void
h3_upstream(int family)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	int			 lfd, fd, small = 4096;
	char			 buf[4096], ans[128];
	size_t			 total = 0;
	ssize_t			 n;

	lfd = socket(family, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&ss, family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	getsockname(lfd, (struct sockaddr *)&ss, &len);
	upstream_port = ntohs(family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if ((upstream = fork()) != 0) {
		close(lfd);
		return;
	}
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			_exit(1);
		total = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			total += (size_t)n;
			if (buf[n - 1] == '\n')
				break;
		}
		snprintf(ans, sizeof(ans), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"result\":{\"bytes\":%zu}}\n", total);
		(void)!write(fd, ans, strlen(ans));
		close(fd);
	}
}

/* Issue 19.11: a 4 MB request reaches a slow upstream whole. */
/*
 * Issue 17 item 5: a request whose connection was lost after it was
 * written is sent again when the table says the call is idempotent (a
 * read); any other is reported as lost, never sent again blind.
 */
START_TEST(forward_idempotent_resent)
{
	char		 t[32], json[512];
	json_object	*r;

	start_upstream();
	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"read\",\"forward\":{\"to\":\"127.0.0.1:%d\","
	    "\"method\":\"flaky\",\"idempotent\":true}},"
	    "{\"name\":\"write\",\"forward\":{\"to\":\"127.0.0.1:%d\","
	    "\"method\":\"flaky\"}}]}", upstream_port, upstream_port);
	write_file(tools, json, 0600);
	start_tools(NULL);
	/* The first flaky is lost: sent again, the second is answered. */
	submit(t, "[{\"tool\":\"read\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.result.v")),
	    42);
	ck_assert_int_eq(json_object_get_int(jpath(r, "results.0.resent")), 1);
	json_object_put(r);
	/* The third is lost too: reported (sent again, it would be done). */
	submit(t, "[{\"tool\":\"write\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "failed");
	ck_assert_str_eq(str(r, "results.0.error_type"), "upstream_lost");
	ck_assert(json_object_get_boolean(jpath(r, "results.0.sent")));
	ck_assert_ptr_null(jpath(r, "results.0.resent"));
	json_object_put(r);
	/* The fourth is answered at once: write's was not sent again. */
	submit(t, "[{\"tool\":\"read\"}]", NULL);
	r = wait_done(t);
	ck_assert_str_eq(str(r, "status"), "done");
	ck_assert_ptr_null(jpath(r, "results.0.resent"));
	json_object_put(r);
}
END_TEST

START_TEST(forward_large_request)
{
	const char	*args[] = { "--max-message", "8388608", NULL };
	size_t		 n = 4 * 1024 * 1024;
	char		*line = malloc(n + 512);
	json_object	*r;
	int		 off;

	h3_upstream(AF_INET);
	h3_start(args, upstream_port, 9);
	off = snprintf(line, n + 512, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"commands\":[{\"tool\":\"fwd\","
	    "\"params\":{\"blob\":\"");
	memset(line + off, 'y', n);
	snprintf(line + off + n, 512, "\"}}]}}");
	r = client_call(c, line);
	free(line);
	ck_assert_msg(jpath(r, "result.results.0.ok") != NULL &&
	    json_object_get_boolean(jpath(r, "result.results.0.ok")), "%.500s",
	    json_object_to_json_string(r));
	/* {"jsonrpc":"2.0","id":1,"method":"fwd","params":{"blob":"y..."}}\n */
	ck_assert_int_eq(json_object_get_int64(jpath(r,
	    "result.results.0.result.bytes")), (int64_t)(n + strlen(
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fwd\",\"params\":"
	    "{\"blob\":\"\"}}\n")));
	json_object_put(r);
}
END_TEST

/* Issue 11 §5: forward to [::1]:PORT. */
START_TEST(forward_ipv6)
{
	json_object	*r;
	int		 fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin6,
	    sizeof(sin6)) == -1) {
		fprintf(stderr, "forward_ipv6: skipped: no IPv6 loopback "
		    "(%s)\n", strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	close(fd);
	h3_upstream(AF_INET6);
	h3_start(NULL, 9, upstream_port);
	r = h3_run("[{\"tool\":\"fwd6\",\"params\":{}}]");
	ck_assert_msg(json_object_get_boolean(jpath(r, "results.0.ok")),
	    "%.500s", json_object_to_json_string(r));
	ck_assert_ptr_nonnull(jpath(r, "results.0.result.bytes"));
	json_object_put(r);
}
END_TEST

/*
 * Issue 13: a forward tool with an output_schema answers MCP with the
 * upstream's result as structuredContent, or with why not.
 */
START_TEST(forward_structured)
{
	char		 json[1024];
	json_object	*r;

	start_upstream();
	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"answer\",\"forward\":\"127.0.0.1:%d\","
	    " \"output_schema\":{\"type\":\"object\",\"properties\":"
	    "{\"v\":{\"type\":\"integer\"}},\"required\":[\"v\"]}},"
	    "{\"name\":\"mismatch\",\"forward\":{\"to\":\"127.0.0.1:%d\","
	    " \"method\":\"answer\"},\"output_schema\":{\"type\":\"object\","
	    " \"required\":[\"w\"]}}]}", upstream_port, upstream_port);
	write_file(tools, json, 0600);
	start_tools(NULL);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"answer\"}}");
	ck_assert(!json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_int_eq(json_object_get_int(jpath(r,
	    "result.structuredContent.v")), 42);
	ck_assert_str_eq(str(r, "result.content.0.text"), "{\"v\":42}");
	json_object_put(r);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"mismatch\"}}");
	ck_assert(json_object_get_boolean(jpath(r, "result.isError")));
	ck_assert_ptr_null(jpath(r, "result.structuredContent"));
	ck_assert_msg(strstr(str(r, "result.content.0.text"), "the output of "
	    "tool 'mismatch' does not match its output_schema: output.w is "
	    "required") != NULL, "%s", str(r, "result.content.0.text"));
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("forward");
	TCase	*tc = tcase_create("forward");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, forward_tools);
	tcase_add_test(tc, forward_idempotent_resent);
	tcase_add_test(tc, forward_large_request);
	tcase_add_test(tc, forward_ipv6);
	tcase_add_test(tc, forward_structured);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
