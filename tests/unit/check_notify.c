/* SPDX-License-Identifier: ISC */
/*
 * An exec tool's notify descriptor lines (workers/notify.c): the parser,
 * the rate bound, long and bad lines, and what is not UTF-8.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "../../workers/notify.h"
#include "ckrun.h"

START_TEST(parse_lines)
{
	static const struct {
		const char	*line;
		int		 kind;
		double		 p, t;
		const char	*msg;
	} cases[] = {
		{ "progress 50/100 halfway there", NOTIFY_PROGRESS, 50, 100,
		  "halfway there" },
		{ "progress 3", NOTIFY_PROGRESS, 3, 0, "" },
		{ "progress 1.25/2.5", NOTIFY_PROGRESS, 1.25, 2.5, "" },
		{ "progress 7/8\r", NOTIFY_PROGRESS, 7, 8, "" },
		{ "progress 7/8 ", NOTIFY_PROGRESS, 7, 8, "" },
		{ "log info hello world", NOTIFY_LOG, 0, 0, "hello world" },
		{ "log emergency", NOTIFY_LOG, 0, 0, "" },
		{ "progress -1/10", NOTIFY_BAD, 0, 0, NULL },
		{ "progress 5/0", NOTIFY_BAD, 0, 0, NULL },
		{ "progress 5/", NOTIFY_BAD, 0, 0, NULL },
		{ "progress 5x", NOTIFY_BAD, 0, 0, NULL },
		{ "progress .5", NOTIFY_BAD, 0, 0, NULL },
		{ "progress 1e3", NOTIFY_BAD, 0, 0, NULL },
		{ "progress", NOTIFY_BAD, 0, 0, NULL },
		{ "progress  5", NOTIFY_BAD, 0, 0, NULL },
		{ "log loud x", NOTIFY_BAD, 0, 0, NULL },
		{ "log INFO x", NOTIFY_BAD, 0, 0, NULL },
		{ "log", NOTIFY_BAD, 0, 0, NULL },
		{ "logger info x", NOTIFY_BAD, 0, 0, NULL },
		{ "", NOTIFY_BAD, 0, 0, NULL },
		{ "hello", NOTIFY_BAD, 0, 0, NULL },
	};
	struct notify_line	 l;
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = notify_parse(cases[i].line, strlen(cases[i].line), &l);
		ck_assert_msg((int)l.kind == cases[i].kind && (rc == 0) ==
		    (cases[i].kind != NOTIFY_BAD), "'%s': kind %d",
		    cases[i].line, l.kind);
		if (cases[i].msg == NULL)
			continue;
		ck_assert_msg(l.msglen == strlen(cases[i].msg) &&
		    memcmp(l.msg, cases[i].msg, l.msglen) == 0, "'%s': "
		    "message '%.*s'", cases[i].line, (int)l.msglen, l.msg);
		if (l.kind == NOTIFY_PROGRESS) {
			ck_assert(l.progress == cases[i].p);
			ck_assert(l.total == cases[i].t);
		}
	}
}
END_TEST

static json_object	*emitted;

static void
collect(json_object *ev)
{
	json_object_array_add(emitted, ev);
}

/* Feed text to a notify through a pipe; what it emitted, then ended. */
static void
feed(const char *text, size_t len, int end)
{
	struct notify	n;
	int		p[2];
	size_t		off = 0;
	ssize_t		w;

	ck_assert_int_eq(pipe2(p, O_NONBLOCK), 0);
	notify_init(&n, p[0], 2, collect);
	while (off < len) {
		w = write(p[1], text + off, len - off);
		if (w > 0)
			off += (size_t)w;
		notify_read(&n, 1000);
	}
	close(p[1]);
	if (end)
		notify_end(&n, 1000);
	else {
		while (notify_read(&n, 1000) != 0)
			;
		ck_assert_int_eq(n.fd, -1);
		json_object_put(n.pending);
	}
}

static const char *
ev_str(size_t i, const char *key)
{
	return json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(emitted, i), key));
}

/* Beyond NOTIFY_RATE a second, log lines are counted and progress is
 * coalesced to the latest; what waits is sent at the end. */
START_TEST(rate_bounded)
{
	char	*text;
	size_t	 len = 0, i, n;
	int	 k;

	text = malloc(200 * 32);
	for (k = 0; k < 150; k++)
		len += (size_t)sprintf(text + len, "log info line %d\n", k);
	for (k = 1; k <= 50; k++)
		len += (size_t)sprintf(text + len, "progress %d/50\n", k);
	emitted = json_object_new_array();
	feed(text, len, 1);
	free(text);
	n = json_object_array_length(emitted);
	ck_assert_uint_eq(n, NOTIFY_RATE + 2);
	for (i = 0; i < NOTIFY_RATE; i++) {
		ck_assert_str_eq(ev_str(i, "event"), "log");
		ck_assert_int_eq(json_object_get_int(json_object_object_get(
		    json_object_array_get_idx(emitted, i), "index")), 2);
	}
	ck_assert_str_eq(ev_str(n - 2, "event"), "progress");
	ck_assert_str_eq(ev_str(n - 2, "progress"), "50");
	ck_assert_str_eq(ev_str(n - 1, "level"), "warning");
	ck_assert_str_eq(ev_str(n - 1, "message"), "100 log lines dropped");
	json_object_put(emitted);
}
END_TEST

/* A line over NOTIFY_LINE_MAX is ignored (said once); one of exactly
 * that many bytes is taken; other lines are said once, at debug. */
START_TEST(long_and_bad_lines)
{
	char	*text = malloc(3 * NOTIFY_LINE_MAX);
	size_t	 len = 0;

	memset(text, 'x', NOTIFY_LINE_MAX + 1);
	len = NOTIFY_LINE_MAX + 1;
	len += (size_t)sprintf(text + len, "\nlog notice after\n");
	memcpy(text + len, "log info ", 9);
	memset(text + len + 9, 'y', NOTIFY_LINE_MAX - 9);
	len += NOTIFY_LINE_MAX;
	len += (size_t)sprintf(text + len, "\nbad 1\nbad 2\nprogress 1");
	emitted = json_object_new_array();
	feed(text, len, 1);
	free(text);
	ck_assert_uint_eq(json_object_array_length(emitted), 5);
	ck_assert_str_eq(ev_str(0, "level"), "warning");
	ck_assert(strstr(ev_str(0, "message"), "over 4096 bytes") != NULL);
	ck_assert_str_eq(ev_str(1, "message"), "after");
	ck_assert_uint_eq(strlen(ev_str(2, "message")), NOTIFY_LINE_MAX - 9);
	ck_assert_str_eq(ev_str(3, "level"), "debug");
	/* The last line, without its newline, counts at the end. */
	ck_assert_str_eq(ev_str(4, "event"), "progress");
	json_object_put(emitted);
	/* Without the end, an unfinished line is not taken. */
	emitted = json_object_new_array();
	feed("progress 1", 10, 0);
	ck_assert_uint_eq(json_object_array_length(emitted), 0);
	json_object_put(emitted);
}
END_TEST

/* Bytes that are not UTF-8 become U+FFFD in the event. */
START_TEST(message_utf8)
{
	emitted = json_object_new_array();
	feed("log info a\xff" "b\n", 13, 1);
	ck_assert_uint_eq(json_object_array_length(emitted), 1);
	ck_assert_str_eq(ev_str(0, "message"), "a\xef\xbf\xbd" "b");
	json_object_put(emitted);
}
END_TEST

static Suite *
notify_suite(void)
{
	Suite	*s = suite_create("notify");
	TCase	*tc = tcase_create("lines");

	tcase_add_test(tc, parse_lines);
	tcase_add_test(tc, rate_bounded);
	tcase_add_test(tc, long_and_bad_lines);
	tcase_add_test(tc, message_utf8);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(notify_suite());
}
