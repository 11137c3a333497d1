/* SPDX-License-Identifier: ISC */
/* Framing: split reads, CRLF, several messages per read, limits, LSP. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "ckrun.h"
#include "net.h"

static struct framer	 fr;
static struct evbuffer	*in;

static void
setup(void)
{
	frame_init(&fr, 64);
	in = evbuffer_new();
}

static void
teardown(void)
{
	evbuffer_free(in);
}

static void
feed(const char *s)
{
	evbuffer_add(in, s, strlen(s));
}

/* Expect a message equal to want. */
static void
expect_msg(const char *want)
{
	char	*msg = NULL;
	size_t	 len = 0;

	ck_assert_int_eq(frame_next(&fr, in, &msg, &len), FRAME_MSG);
	ck_assert_str_eq(msg, want);
	ck_assert_uint_eq(len, strlen(want));
	free(msg);
}

static void
expect(enum frame_status want)
{
	char	*msg = NULL;
	size_t	 len;

	ck_assert_int_eq(frame_next(&fr, in, &msg, &len), want);
	ck_assert_ptr_null(msg);
}

START_TEST(line_split_reads)
{
	feed("{\"a\"");
	expect(FRAME_MORE);
	feed(":1");
	expect(FRAME_MORE);
	feed("}\n");
	expect_msg("{\"a\":1}");
	expect(FRAME_MORE);
	ck_assert_int_eq(fr.mode, FRAME_LINE);
}
END_TEST

START_TEST(line_crlf_and_blank)
{
	feed("\n\r\n  \n{\"x\":2}\r\n");
	expect_msg("{\"x\":2}");
	expect(FRAME_MORE);
}
END_TEST

START_TEST(line_several_per_read)
{
	feed("[1]\n[2]\n[3]");
	expect_msg("[1]");
	expect_msg("[2]");
	expect(FRAME_MORE);
	feed("\n");
	expect_msg("[3]");
}
END_TEST

START_TEST(line_exact_limit)
{
	char	line[64 + 3];

	memset(line, 'x', 64);
	strcpy(line + 64, "\r\n");
	feed(line);
	line[64] = '\0';
	expect_msg(line);
}
END_TEST

/* Too large as soon as the limit passes, with no newline in sight. */
START_TEST(line_oversize_early)
{
	char	line[66];

	memset(line, 'x', 65);
	line[65] = '\0';
	feed(line);
	expect(FRAME_TOO_LARGE);
}
END_TEST

START_TEST(line_oversize_with_newline)
{
	char	line[80];

	memset(line, 'y', 70);
	strcpy(line + 70, "\n");
	feed(line);
	expect(FRAME_TOO_LARGE);
}
END_TEST

START_TEST(line_cr_at_limit_waits)
{
	char	line[66];

	memset(line, 'x', 64);
	strcpy(line + 64, "\r");
	feed(line);
	expect(FRAME_MORE);
	feed("\n");
	line[64] = '\0';
	expect_msg(line);
}
END_TEST

START_TEST(lsp_basic)
{
	feed("Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 2\r\n");
	expect_msg("{\"a\":1}");
	ck_assert_int_eq(fr.mode, FRAME_LSP);
	expect(FRAME_MORE);
	feed("Content-Type: application/json\r\n\r\n[]");
	expect_msg("[]");
}
END_TEST

START_TEST(lsp_detect_split_and_case)
{
	feed("conTENT-len");
	expect(FRAME_MORE);
	ck_assert_int_eq(fr.mode, FRAME_UNKNOWN);
	feed("gth:3\r\n\r\n[1]");
	expect_msg("[1]");
}
END_TEST

START_TEST(lsp_body_split)
{
	feed("Content-Length: 10\r\n\r\n[1,2");
	expect(FRAME_MORE);
	feed(",3,4]");
	expect(FRAME_MORE);
	feed("]");
	expect_msg("[1,2,3,4]]");
}
END_TEST

START_TEST(lsp_missing_length)
{
	feed("Content-Length: 3\r\n\r\n[1]Content-Type: x\r\n\r\n");
	expect_msg("[1]");
	expect(FRAME_BAD_HEADER);
}
END_TEST

START_TEST(lsp_non_numeric)
{
	feed("Content-Length: 12a\r\n\r\n");
	expect(FRAME_BAD_HEADER);
}
END_TEST

START_TEST(lsp_empty_value)
{
	feed("Content-Length:\r\n\r\n");
	expect(FRAME_BAD_HEADER);
}
END_TEST

START_TEST(lsp_too_large)
{
	feed("Content-Length: 65\r\n\r\n");
	expect(FRAME_TOO_LARGE);
}
END_TEST

/* However large the number, it is too large, not a bad header. */
START_TEST(lsp_huge_length)
{
	static const char *lengths[] = { "1099511627777", "2000000000000",
	    "9223372036854775808", "99999999999999999999999999999999" };
	size_t	i;

	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		evbuffer_drain(in, evbuffer_get_length(in));
		frame_init(&fr, 64);
		feed("Content-Length: ");
		feed(lengths[i]);
		/* Known at the end of the header line, not of the headers. */
		feed("\r\n");
		expect(FRAME_TOO_LARGE);
	}
}
END_TEST

START_TEST(lsp_header_without_colon)
{
	feed("Content-Length: 2\r\nbogus\r\n\r\n");
	expect(FRAME_BAD_HEADER);
}
END_TEST

START_TEST(lsp_endless_headers)
{
	char	*junk = malloc(FRAME_LSP_HEADER_MAX + 2);

	feed("Content-Length: 2\r\nX-Pad: ");
	memset(junk, 'p', FRAME_LSP_HEADER_MAX + 1);
	junk[FRAME_LSP_HEADER_MAX + 1] = '\0';
	feed(junk);
	free(junk);
	expect(FRAME_BAD_HEADER);
}
END_TEST

START_TEST(write_both_framings)
{
	struct evbuffer	*out = evbuffer_new();
	char		 buf[64];
	size_t		 n;

	fr.mode = FRAME_LINE;
	frame_write(&fr, out, "{}", 2);
	fr.mode = FRAME_LSP;
	frame_write(&fr, out, "[]", 2);
	n = evbuffer_remove(out, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "{}\nContent-Length: 2\r\n\r\n[]");
	evbuffer_free(out);
}
END_TEST

/* A unity frame: 8-byte big-endian n, then body (n may lie). */
static void
feed_unity(unsigned long long n, const char *body)
{
	unsigned char	h[8];
	int		i;

	for (i = 7; i >= 0; i--, n >>= 8)
		h[i] = (unsigned char)(n & 0xff);
	evbuffer_add(in, h, sizeof(h));
	evbuffer_add(in, body, strlen(body));
}

START_TEST(unity_split_and_several)
{
	frame_init_unity(&fr, 64);
	evbuffer_add(in, "\0\0\0", 3);
	expect(FRAME_MORE);
	evbuffer_drain(in, 3);
	feed_unity(4, "pi");
	expect(FRAME_MORE);
	feed("ng");
	feed_unity(2, "{}");
	/* A line end means nothing inside a unity frame. */
	feed_unity(3, "a\nb");
	expect_msg("ping");
	expect_msg("{}");
	expect_msg("a\nb");
	expect(FRAME_MORE);
	ck_assert_int_eq(fr.mode, FRAME_UNITY);
}
END_TEST

/* The real bridge refuses a zero length; more than the limit is refused
 * from the header alone, before its body is waited for. */
START_TEST(unity_zero_and_too_large)
{
	frame_init_unity(&fr, 64);
	feed_unity(0, "");
	expect(FRAME_BAD_HEADER);
	evbuffer_drain(in, evbuffer_get_length(in));
	frame_init_unity(&fr, 64);
	feed_unity(64, "");
	expect(FRAME_MORE);
	evbuffer_drain(in, evbuffer_get_length(in));
	feed_unity(65, "");
	expect(FRAME_TOO_LARGE);
	evbuffer_drain(in, evbuffer_get_length(in));
	feed_unity(0xffffffffffffffffULL, "");
	expect(FRAME_TOO_LARGE);
}
END_TEST

START_TEST(unity_write)
{
	struct evbuffer	*out = evbuffer_new();
	unsigned char	 buf[64];
	size_t		 n;

	frame_init_unity(&fr, 64);
	frame_write(&fr, out, "pong", 4);
	n = evbuffer_remove(out, buf, sizeof(buf));
	ck_assert_uint_eq(n, 12);
	ck_assert_mem_eq(buf, "\0\0\0\0\0\0\0\4pong", 12);
	evbuffer_free(out);
}
END_TEST

static Suite *
frame_suite(void)
{
	Suite	*s = suite_create("frame");
	TCase	*tc = tcase_create("frame");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, line_split_reads);
	tcase_add_test(tc, line_crlf_and_blank);
	tcase_add_test(tc, line_several_per_read);
	tcase_add_test(tc, line_exact_limit);
	tcase_add_test(tc, line_oversize_early);
	tcase_add_test(tc, line_oversize_with_newline);
	tcase_add_test(tc, line_cr_at_limit_waits);
	tcase_add_test(tc, lsp_basic);
	tcase_add_test(tc, lsp_detect_split_and_case);
	tcase_add_test(tc, lsp_body_split);
	tcase_add_test(tc, lsp_missing_length);
	tcase_add_test(tc, lsp_non_numeric);
	tcase_add_test(tc, lsp_empty_value);
	tcase_add_test(tc, lsp_too_large);
	tcase_add_test(tc, lsp_huge_length);
	tcase_add_test(tc, lsp_header_without_colon);
	tcase_add_test(tc, lsp_endless_headers);
	tcase_add_test(tc, write_both_framings);
	tcase_add_test(tc, unity_split_and_several);
	tcase_add_test(tc, unity_zero_and_too_large);
	tcase_add_test(tc, unity_write);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(frame_suite());
}
