/* SPDX-License-Identifier: ISC */
/* Strict JSON: what RFC 8259 and RFC 3629 refuse, refused; the rest kept. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jstrict.h"
#include "umcp.h"

static const struct {
	const char	*text;
	size_t		 len;		/* 0: strlen */
	int		 want;
} cases[] = {
	{ "{\"a\":[1,2.5,\"x\",true,false,null]}", 0, JSTRICT_OK },
	{ " 42 \r\n", 0, JSTRICT_OK },
	{ "\"\\ud83d\\ude00 \xf0\x9f\x98\x80 \xe2\x82\xac\"", 0, JSTRICT_OK },
	{ "18446744073709551615", 0, JSTRICT_OK },
	{ "-9223372036854775808", 0, JSTRICT_OK },
	{ "1e308", 0, JSTRICT_OK },
	{ "\"a\\u0000b\"", 0, JSTRICT_OK },
	{ "", 0, JSTRICT_EMPTY },
	{ " \n", 0, JSTRICT_EMPTY },
	{ "NaN", 0, JSTRICT_SYNTAX },
	{ "[Infinity]", 0, JSTRICT_SYNTAX },
	{ "-Infinity", 0, JSTRICT_SYNTAX },
	{ "{'a':1}", 0, JSTRICT_SYNTAX },
	{ "[1,]", 0, JSTRICT_SYNTAX },
	{ "{\"a\":1,}", 0, JSTRICT_SYNTAX },
	{ "01", 0, JSTRICT_TRAILING },
	{ "1.", 0, JSTRICT_SYNTAX },
	{ "\"tab\there\"", 0, JSTRICT_SYNTAX },
	{ "/* c */ 1", 0, JSTRICT_SYNTAX },
	{ "\"\\x41\"", 0, JSTRICT_SYNTAX },
	{ "\"a\0b\"", 5, JSTRICT_SYNTAX },
	{ "{} {}", 0, JSTRICT_TRAILING },
	{ "\"\xed\xa0\x80\"", 0, JSTRICT_UTF8 },	/* surrogate */
	{ "\"\xc0\xaf\"", 0, JSTRICT_UTF8 },		/* overlong */
	{ "\"\xe0\x80\xaf\"", 0, JSTRICT_UTF8 },	/* overlong */
	{ "\"\xf4\x90\x80\x80\"", 0, JSTRICT_UTF8 },	/* > U+10FFFF */
	{ "\"\xff\"", 0, JSTRICT_UTF8 },
	{ "\"\xe2\x82\"", 0, JSTRICT_UTF8 },		/* cut short */
	{ "\"\\ud800\"", 0, JSTRICT_UTF8 },		/* lone high */
	{ "\"\\udc00x\"", 0, JSTRICT_UTF8 },		/* lone low */
	{ "\"\\ud800\\u0041\"", 0, JSTRICT_UTF8 },
	{ "18446744073709551616", 0, JSTRICT_NUMBER },
	{ "-9223372036854775809", 0, JSTRICT_NUMBER },
	{ "1e400", 0, JSTRICT_NUMBER },
	{ "-1e400", 0, JSTRICT_NUMBER },
	{ "{\"a\\u0000b\":1}", 0, JSTRICT_NULNAME },
	{ "{\"a\\\\u0000b\":1}", 0, JSTRICT_OK },
};

START_TEST(table)
{
	const char	*t = cases[_i].text;
	size_t		 len = cases[_i].len ? cases[_i].len : strlen(t);
	json_object	*v = NULL;
	int		 rc;

	rc = jstrict_parse(t, len, &v);
	ck_assert_msg(rc == cases[_i].want, "case %d (%s): got %d (%s), "
	    "want %d", _i, t, rc, jstrict_strerror(rc), cases[_i].want);
	if (rc == JSTRICT_OK)
		ck_assert_ptr_nonnull(v);
	else
		ck_assert_ptr_null(v);
	ck_assert_int_eq(jstrict_check(t, len), cases[_i].want);
	json_object_put(v);
}
END_TEST

/* "[[[...]]]" with n levels. */
static char *
nested(int n)
{
	static char	buf[512];
	int		i;

	for (i = 0; i < n; i++)
		buf[i] = '[';
	for (i = 0; i < n; i++)
		buf[n + i] = ']';
	buf[2 * n] = '\0';
	return buf;
}

START_TEST(depth_limit_is_json_cs_too)
{
	json_object	*v;

	ck_assert_int_eq(jstrict_parse_str(nested(JSTRICT_MAX_DEPTH), &v), 0);
	ck_assert_ptr_nonnull(v);
	json_object_put(v);
	ck_assert_int_eq(jstrict_parse_str(nested(JSTRICT_MAX_DEPTH + 1), &v),
	    JSTRICT_DEPTH);
	ck_assert_ptr_null(v);
}
END_TEST

START_TEST(integers_echo_exactly)
{
	static const char	*ints[] = { "18446744073709551615",
	    "-9223372036854775808", "9223372036854775807", "0", "-1" };
	json_object		*v;
	size_t			 i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		ck_assert_int_eq(jstrict_parse_str(ints[i], &v), 0);
		ck_assert_str_eq(jstrict_to_string(v), ints[i]);
		json_object_put(v);
	}
}
END_TEST

START_TEST(nul_found_anywhere)
{
	json_object	*v;

	ck_assert_int_eq(jstrict_parse_str("{\"a\":[1,{\"b\":\"x\\u0000\"}]}",
	    &v), 0);
	ck_assert(jstrict_has_nul(v));
	json_object_put(v);
	ck_assert_int_eq(jstrict_parse_str("{\"a\":[1,{\"b\":\"x\"}]}", &v), 0);
	ck_assert(!jstrict_has_nul(v));
	json_object_put(v);
}
END_TEST

START_TEST(strings_roundtrip)
{
	json_object	*v;

	ck_assert_int_eq(jstrict_parse_str("\"\\ud83d\\ude00\"", &v), 0);
	ck_assert_str_eq(json_object_get_string(v), "\xf0\x9f\x98\x80");
	json_object_put(v);
}
END_TEST

/*
 * Text that quotes bytes a client sent (an HTTP header) or that a quote
 * cut inside a character: a JSON string whose serialization is strict
 * JSON, each byte that begins no sequence U+FFFD, valid text untouched.
 */
START_TEST(string_of_any_bytes)
{
	static const struct {
		const char	*in, *out;
	} t[] = {
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "caf\xe9", "caf\xef\xbf\xbd" },
		{ "cut \xc3", "cut \xef\xbf\xbd" },
		{ "cut \xf0\x9f\x98", "cut \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80", "\xef\xbf\xbd"
		    "\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	json_object	*v, *back;
	const char	*s;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ck_assert_ptr_nonnull(v = jstrict_string(t[i].in));
		ck_assert_str_eq(json_object_get_string(v), t[i].out);
		s = jstrict_to_string(v);
		ck_assert_int_eq(jstrict_parse(s, strlen(s), &back), 0);
		json_object_put(back);
		json_object_put(v);
	}
}
END_TEST

/* Nothing at all, whatever the pointer: a library call with len 0. */
START_TEST(empty_without_buffer)
{
	json_object	*v = NULL;

	ck_assert_int_eq(jstrict_check(NULL, 0), JSTRICT_EMPTY);
	ck_assert_int_eq(jstrict_parse(NULL, 0, &v), JSTRICT_EMPTY);
	ck_assert_ptr_null(v);
}
END_TEST

/*
 * jstrict_is compares a string whole: one with a NUL inside is not the
 * word it begins with; so is a bridge's status envelope read.
 */
START_TEST(whole_strings)
{
	json_object	*m, *out = NULL;
	char		 err[256];

	ck_assert_int_eq(jstrict_parse_str("{\"status\":\"success\\u0000x\","
	    "\"result\":{}}", &m), 0);
	ck_assert(!jstrict_is(json_object_object_get(m, "status"), "success"));
	ck_assert_int_eq(umcp_envelope(m, &out, err, sizeof(err)), UP_PROTOCOL);
	ck_assert_ptr_null(out);
	json_object_put(m);
	ck_assert_int_eq(jstrict_parse_str("{\"status\":\"success\","
	    "\"result\":{\"a\":1}}", &m), 0);
	ck_assert(jstrict_is(json_object_object_get(m, "status"), "success"));
	ck_assert_int_eq(umcp_envelope(m, &out, err, sizeof(err)), UP_OK);
	ck_assert_ptr_nonnull(out);
	json_object_put(out);
	json_object_put(m);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("jstrict");
	TCase	*tc = tcase_create("core");

	tcase_add_loop_test(tc, table, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, depth_limit_is_json_cs_too);
	tcase_add_test(tc, integers_echo_exactly);
	tcase_add_test(tc, nul_found_anywhere);
	tcase_add_test(tc, strings_roundtrip);
	tcase_add_test(tc, string_of_any_bytes);
	tcase_add_test(tc, empty_without_buffer);
	tcase_add_test(tc, whole_strings);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
