/* SPDX-License-Identifier: ISC */
/* JSON templates: paths, whole and embedded references, checks. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jstrict.h"
#include "jtemplate.h"

static json_object *
J(const char *s)
{
	json_object	*o = NULL;

	ck_assert_msg(jstrict_parse_str(s, &o) == 0, "bad test JSON: %s", s);
	return o;
}

/* Expand tmpl over ctx and compare with want (NULL: must fail). */
static void
expect(const char *tmpl, const char *ctx, const char *want)
{
	json_object	*t = J(tmpl), *c = J(ctx), *r;
	char		 err[256] = "";

	r = jtemplate_expand(t, c, err, sizeof(err));
	if (want == NULL)
		ck_assert_msg(r == NULL && err[0] != '\0',
		    "%s expanded to %s", tmpl, r ? jstrict_to_string(r) : "");
	else {
		ck_assert_msg(r != NULL, "%s: %s", tmpl, err);
		ck_assert_str_eq(jstrict_to_string(r), want);
	}
	json_object_put(r);
	json_object_put(t);
	json_object_put(c);
}

START_TEST(paths)
{
	json_object	*c = J("{\"result\":{\"data\":{\"job_id\":\"j1\","
			    "\"list\":[1,{\"x\":true}],\"n\":null}}}");

	ck_assert_str_eq(json_object_get_string(jpath_get(c,
	    "result.data.job_id")), "j1");
	ck_assert(json_object_get_boolean(jpath_get(c,
	    "result.data.list.1.x")));
	ck_assert_int_eq(json_object_get_int(jpath_get(c,
	    "result.data.list.0")), 1);
	ck_assert_ptr_null(jpath_get(c, "result.data.list.2"));
	ck_assert_ptr_null(jpath_get(c, "result.data.job_id.x"));
	ck_assert_ptr_null(jpath_get(c, "result.data."));
	ck_assert_ptr_null(jpath_get(c, "result..data"));
	ck_assert_ptr_null(jpath_get(c, "result.data.n"));
	ck_assert_ptr_null(jpath_get(c, "nothing"));
	json_object_put(c);
}
END_TEST

START_TEST(whole_keeps_type)
{
	expect("{\"mode\":\"{mode}\",\"n\":\"{n}\",\"o\":\"{o}\"}",
	    "{\"mode\":\"EditMode\",\"n\":3,\"o\":{\"a\":[1]}}",
	    "{\"mode\":\"EditMode\",\"n\":3,\"o\":{\"a\":[1]}}");
	expect("\"{result.data.job_id}\"",
	    "{\"result\":{\"data\":{\"job_id\":42}}}", "42");
}
END_TEST

START_TEST(whole_absent_left_out)
{
	expect("{\"mode\":\"{mode}\",\"names\":\"{names}\",\"k\":1}",
	    "{\"mode\":\"PlayMode\"}", "{\"mode\":\"PlayMode\",\"k\":1}");
	expect("[\"{a}\",\"{b}\",\"c\"]", "{\"b\":false}", "[false,\"c\"]");
	expect("\"{gone}\"", "{}", NULL);
	expect("{\"x\":\"{n}\"}", "{\"n\":null}", "{}");
}
END_TEST

START_TEST(embedded)
{
	expect("\"tests in {dir}: {n} ({o})\"",
	    "{\"dir\":\"a b\",\"n\":2,\"o\":{\"k\":\"v\"}}",
	    "\"tests in a b: 2 ({\\\"k\\\":\\\"v\\\"})\"");
	expect("\"{{literal}} {x}\"", "{\"x\":\"y\"}", "\"{literal} y\"");
	expect("\"{ not a ref } {} {-x}\"", "{}",
	    "\"{ not a ref } {} {-x}\"");
	expect("\"id-{missing}\"", "{}", NULL);
	expect("\"{a..b}\"", "{}", NULL);
}
END_TEST

START_TEST(names_not_expanded)
{
	expect("{\"{k}\":\"{k}\"}", "{\"k\":\"v\"}", "{\"{k}\":\"v\"}");
}
END_TEST

START_TEST(check_names)
{
	static const char *const first[] = { "result", "mode", NULL };
	json_object	*t;
	char		 err[256];

	t = J("{\"a\":\"{result.data.id}\",\"b\":[\"x {mode}\"],\"c\":2}");
	ck_assert_int_eq(jtemplate_check(t, first, err, sizeof(err)), 0);
	json_object_put(t);
	t = J("{\"a\":[{\"b\":\"{other}\"}]}");
	ck_assert_int_eq(jtemplate_check(t, first, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "{other}"));
	ck_assert_int_eq(jtemplate_check(t, NULL, err, sizeof(err)), 0);
	json_object_put(t);
	t = J("\"{result..x}\"");
	ck_assert_int_eq(jtemplate_check(t, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a path"));
	json_object_put(t);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("jtemplate");
	TCase	*tc = tcase_create("jtemplate");

	tcase_add_test(tc, paths);
	tcase_add_test(tc, whole_keeps_type);
	tcase_add_test(tc, whole_absent_left_out);
	tcase_add_test(tc, embedded);
	tcase_add_test(tc, names_not_expanded);
	tcase_add_test(tc, check_names);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
