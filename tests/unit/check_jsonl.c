/* SPDX-License-Identifier: ISC */
/* The JSON-lines reader, on socketpairs: framing, limits, time, peers. */
#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jsonl.h"
#include "util.h"

static int	sv[2];		/* sv[0] is read, sv[1] is the peer */
static struct jsonl j;

/* A wait function that sends the rest of a line on its second call. */
struct split {
	const char	*rest;
	int		 calls;
};

static void
setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	jsonl_init(&j, sv[0], 1024);
}

static void
teardown(void)
{
	jsonl_free(&j);
	close(sv[0]);
	if (sv[1] != -1)
		close(sv[1]);
}

static void
peer_send(const char *s)
{
	ck_assert_int_eq(jsonl_send(sv[1], s, strlen(s)), 0);
}

static void
peer_close(void)
{
	close(sv[1]);
	sv[1] = -1;
}

static void
want_line(const char *want)
{
	char	*line;
	size_t	 n;

	ck_assert_int_eq(jsonl_line(&j, 5000, &line, &n), JSONL_MSG);
	ck_assert_str_eq(line, want);
	ck_assert_uint_eq(n, strlen(want));
	free(line);
}

static int
split_wait(void *arg, int fd, int ms)
{
	struct split	*sp = arg;
	struct pollfd	 pfd = { fd, POLLIN, 0 };

	if (sp->calls++ == 1)
		peer_send(sp->rest);
	return poll(&pfd, 1, ms) > 0;
}

static int
cancel_wait(void *arg, int fd, int ms)
{
	(void)arg;
	(void)fd;
	(void)ms;
	return JSONL_WAIT_CANCEL;
}

START_TEST(split_line)
{
	struct split	sp = { "\"b\":2}\n", 0 };

	j.wait = split_wait;
	j.arg = &sp;
	peer_send("{\"a\":1,");
	want_line("{\"a\":1,\"b\":2}");
	ck_assert_int_ge(sp.calls, 2);	/* it took two reads */
}
END_TEST

START_TEST(two_in_one_read)
{
	size_t	n;

	peer_send("1\n[2]\n");
	want_line("1");
	want_line("[2]");
	jsonl_rest(&j, &n);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(too_long)
{
	char	*line;

	j.max = 8;
	peer_send("123456789\n");
	ck_assert_int_eq(jsonl_line(&j, 5000, &line, NULL), JSONL_TOO_LONG);
	ck_assert_ptr_null(line);
}
END_TEST

START_TEST(too_long_without_newline)
{
	char	*line;

	j.max = 8;
	peer_send("123456789");	/* no newline: it never ends in time */
	ck_assert_int_eq(jsonl_line(&j, 5000, &line, NULL), JSONL_TOO_LONG);
	j.max = 1024;
	peer_send("\n");
	want_line("123456789");
}
END_TEST

START_TEST(eof_mid_line)
{
	char	*line;

	peer_send("{\"a\":");
	peer_close();
	ck_assert_int_eq(jsonl_line(&j, 5000, &line, NULL), JSONL_EOF);
	ck_assert_ptr_null(line);
}
END_TEST

START_TEST(bounded_timeout)
{
	int64_t	 t0 = util_monotonic_ms(), dt;
	char	*line;

	peer_send("no newline");
	ck_assert_int_eq(jsonl_line(&j, 100, &line, NULL), JSONL_TIMEOUT);
	dt = util_monotonic_ms() - t0;
	ck_assert_int_ge(dt, 100);
	ck_assert_int_lt(dt, 2000);
	/* What came stays for the next call. */
	peer_send("\n");
	want_line("no newline");
}
END_TEST

START_TEST(take_body_and_rest)
{
	const char	*rest;
	char		*body;
	size_t		 n;

	peer_send("Content-Length: 5\r\n\r\nhello{\"next\"");
	want_line("Content-Length: 5\r");
	want_line("\r");
	ck_assert_int_eq(jsonl_take(&j, 5000, 5, &body), JSONL_MSG);
	ck_assert_str_eq(body, "hello");
	free(body);
	rest = jsonl_rest(&j, &n);
	ck_assert_uint_eq(n, 7);
	ck_assert_int_eq(memcmp(rest, "{\"next\"", 7), 0);
	j.max = 4;
	ck_assert_int_eq(jsonl_take(&j, 5000, 5, &body), JSONL_TOO_LONG);
}
END_TEST

START_TEST(json_lines)
{
	json_object	*v;

	peer_send("{,}\n{\"id\":7}\n");
	ck_assert_int_eq(jsonl_json(&j, 5000, &v), JSONL_BAD_JSON);
	ck_assert_ptr_null(v);
	ck_assert_int_ne(j.jerr, 0);
	ck_assert_int_eq(jsonl_json(&j, 5000, &v), JSONL_MSG);
	ck_assert_int_eq(j.jerr, 0);
	ck_assert(jsonl_is_answer(v, 7));
	json_object_put(v);
}
END_TEST

START_TEST(answers)
{
	static const struct {
		const char	*msg;
		int		 want;
	} c[] = {
		{ "{\"id\":3,\"result\":1}", 1 },
		{ "{\"id\":4,\"result\":1}", 0 },
		{ "{\"id\":\"3\",\"result\":1}", 0 },
		{ "{\"id\":null,\"error\":{}}", 1 },
		{ "{\"id\":null,\"result\":1}", 0 },
		{ "{\"method\":\"x\"}", 0 },
		{ "[3]", 0 },
	};
	json_object	*v;
	size_t		 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		v = json_tokener_parse(c[i].msg);
		ck_assert_msg(jsonl_is_answer(v, 3) == c[i].want, "%s",
		    c[i].msg);
		json_object_put(v);
	}
}
END_TEST

START_TEST(cancelled)
{
	char	*line;

	j.wait = cancel_wait;
	ck_assert_int_eq(jsonl_line(&j, -1, &line, NULL), JSONL_CANCELLED);
	ck_assert_str_eq(jsonl_strerror(JSONL_CANCELLED), "cancelled");
}
END_TEST

START_TEST(send_to_closed_peer)
{
	peer_close();
	/* MSG_NOSIGNAL: EPIPE, and no SIGPIPE to kill the test. */
	ck_assert_int_eq(jsonl_send(sv[0], "x\n", 2), -1);
	ck_assert_int_eq(errno, EPIPE);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("jsonl");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, split_line);
	tcase_add_test(tc, two_in_one_read);
	tcase_add_test(tc, too_long);
	tcase_add_test(tc, too_long_without_newline);
	tcase_add_test(tc, eof_mid_line);
	tcase_add_test(tc, bounded_timeout);
	tcase_add_test(tc, take_body_and_rest);
	tcase_add_test(tc, json_lines);
	tcase_add_test(tc, answers);
	tcase_add_test(tc, cancelled);
	tcase_add_test(tc, send_to_closed_peer);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
