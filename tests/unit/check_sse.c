/* SPDX-License-Identifier: ISC */
/* Server-Sent Events: the reader's fields, line ends, splits, limits;
 * the writer. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "ckrun.h"
#include "sse.h"

/* The events seen, one "type|id|data" line each. */
static char	seen[4096];
static int	nseen;
static int	stop_at;	/* stop the feed at this event (0: never) */

static int
record(void *arg, const char *event, const char *id, const char *data,
    size_t len)
{
	size_t	n = strlen(seen);

	(void)arg;
	ck_assert_uint_eq(strlen(data), len);
	snprintf(seen + n, sizeof(seen) - n, "%s|%s|%s\n", event, id, data);
	return ++nseen == stop_at;
}

/* Feed s whole, then byte by byte: both must see the same events. */
static void
feed_both(const char *s, size_t max, const char *want)
{
	struct sse	rd;
	size_t		i, len = strlen(s);

	seen[0] = '\0';
	nseen = 0;
	sse_init(&rd, max, record, NULL);
	ck_assert_int_eq(sse_feed(&rd, s, len), SSE_OK);
	sse_free(&rd);
	ck_assert_str_eq(seen, want);
	seen[0] = '\0';
	nseen = 0;
	sse_init(&rd, max, record, NULL);
	for (i = 0; i < len; i++)
		ck_assert_int_eq(sse_feed(&rd, s + i, 1), SSE_OK);
	sse_free(&rd);
	ck_assert_str_eq(seen, want);
}

START_TEST(fields)
{
	feed_both("data: {\"a\":1}\n\n"
	    "event: ping\nid: 7\ndata:x\n\n"
	    ": a comment\nretry: 10\nunknown: y\ndata: after\n\n",
	    1024,
	    "message||{\"a\":1}\n"
	    "ping|7|x\n"
	    "message|7|after\n");
}
END_TEST

START_TEST(multiline_data)
{
	/* Joined with \n; only one leading space is dropped. */
	feed_both("data: one\ndata:  two\ndata\n\n", 1024,
	    "message||one\n two\n\n");
}
END_TEST

START_TEST(line_ends)
{
	/* CRLF, CR and LF, mixed; a CR split from its LF across feeds. */
	feed_both("data: a\r\n\r\ndata: b\r\rdata: c\n\n", 1024,
	    "message||a\nmessage||b\nmessage||c\n");
}
END_TEST

START_TEST(no_data_no_event)
{
	/* A blank line with no data, an id alone: nothing dispatched. */
	feed_both("\n\nid: 3\n\nevent: x\n\ndata: y\n\n", 1024,
	    "message|3|y\n");
}
END_TEST

START_TEST(byte_order_mark)
{
	feed_both("\xef\xbb\xbf" "data: a\n\n", 1024, "message||a\n");
	/* Only at the very start; a near-mark is data. */
	feed_both("\xef\xbb" "data: a\n\n", 1024, "");
	feed_both("data: \xef\xbb\xbf\n\n", 1024, "message||\xef\xbb\xbf\n");
}
END_TEST

START_TEST(unfinished_event)
{
	/* No blank line yet: nothing dispatched. */
	feed_both("data: a\n", 1024, "");
}
END_TEST

START_TEST(too_long)
{
	struct sse	rd;
	char		buf[64];

	/* A line over the limit, whether it ends or not. */
	memset(buf, 'x', sizeof(buf));
	sse_init(&rd, 16, record, NULL);
	ck_assert_int_eq(sse_feed(&rd, buf, sizeof(buf)), SSE_TOO_LONG);
	sse_free(&rd);
	/* Data over the limit across many short lines. */
	sse_init(&rd, 16, record, NULL);
	ck_assert_int_eq(sse_feed(&rd, "data: 12345\ndata: 12345\n", 24),
	    SSE_OK);
	ck_assert_int_eq(sse_feed(&rd, "data: 12345\n", 12), SSE_TOO_LONG);
	sse_free(&rd);
	ck_assert_str_eq(sse_strerror(SSE_TOO_LONG),
	    "event longer than the limit");
}
END_TEST

START_TEST(stop)
{
	struct sse	rd;
	const char	*s = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

	seen[0] = '\0';
	nseen = 0;
	stop_at = 2;
	sse_init(&rd, 1024, record, NULL);
	ck_assert_int_eq(sse_feed(&rd, s, strlen(s)), SSE_STOP);
	sse_free(&rd);
	stop_at = 0;
	ck_assert_str_eq(seen, "message||1\nmessage||2\n");
}
END_TEST

START_TEST(last_id)
{
	struct sse	rd;

	sse_init(&rd, 1024, record, NULL);
	ck_assert_str_eq(sse_last_id(&rd), "");
	ck_assert_int_eq(sse_feed(&rd, "id: abc\ndata: x\n\n", 17), SSE_OK);
	ck_assert_str_eq(sse_last_id(&rd), "abc");
	sse_free(&rd);
}
END_TEST

/* The writer: fields in order, a data line per line, read back whole. */
START_TEST(writer)
{
	char	*ev;
	size_t	 n;

	ev = sse_event(NULL, "3-0", 500, "", 0, &n);
	ck_assert_str_eq(ev, "id: 3-0\nretry: 500\ndata: \n\n");
	ck_assert_uint_eq(n, strlen(ev));
	free(ev);
	ev = sse_event("message", "3-1", 0, "{\"a\":1}", 7, &n);
	ck_assert_str_eq(ev, "event: message\nid: 3-1\ndata: {\"a\":1}\n\n");
	feed_both(ev, 1024, "message|3-1|{\"a\":1}\n");
	free(ev);
	ev = sse_event(NULL, NULL, 0, "one\ntwo\r\nthree", 14, &n);
	ck_assert_str_eq(ev, "data: one\ndata: two\ndata: three\n\n");
	feed_both(ev, 1024, "message||one\ntwo\nthree\n");
	free(ev);
}
END_TEST

/* The ids of cmdgated's streams, "NUM-SEQ", and what is none of ours. */
START_TEST(id_parse)
{
	static const char *bad[] = { "", "-", "1-", "-1", "1", "a-1",
	    "1-a", "1-2-3", " 1-2", "1-2 ", "+1-2", "99999999999999999999-1",
	    NULL };
	uint64_t	num, seq;
	size_t		i;

	ck_assert_int_eq(sse_id_parse("0-0", &num, &seq), 0);
	ck_assert_uint_eq(num, 0);
	ck_assert_uint_eq(seq, 0);
	ck_assert_int_eq(sse_id_parse("12-345", &num, &seq), 0);
	ck_assert_uint_eq(num, 12);
	ck_assert_uint_eq(seq, 345);
	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(sse_id_parse(bad[i], &num, &seq) == -1,
		    "'%s' taken", bad[i]);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sse");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, fields);
	tcase_add_test(tc, multiline_data);
	tcase_add_test(tc, line_ends);
	tcase_add_test(tc, no_data_no_event);
	tcase_add_test(tc, byte_order_mark);
	tcase_add_test(tc, unfinished_event);
	tcase_add_test(tc, too_long);
	tcase_add_test(tc, stop);
	tcase_add_test(tc, last_id);
	tcase_add_test(tc, writer);
	tcase_add_test(tc, id_parse);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
