/* SPDX-License-Identifier: ISC */
/* The scheduling decision: jobs + live workers + holders in, starts out. */
#include "config.h"

#include <string.h>

#include <check.h>

#include "scheduler.h"
#include "ckrun.h"

#define I	{ TIER_INSTANT, 0 }
#define S	{ TIER_SMOOTH, 0 }
#define H	{ TIER_HEAVY, 0 }
#define R	{ TIER_HEAVY, 1 }
#define END	{ -1, 0 }

static const struct {
	const char		*name;
	struct sched_job	 jobs[8];
	struct sched_state	 st;
	int			 want[8];	/* indexes, -1 ends */
} cases[] = {
	{ "instant starts at once",
	  { I, I, END }, { 0, 0, 0, 16, NULL }, { 0, 1, -1 } },
	{ "instant starts beside a heavy job",
	  { I, END }, { 1, 0, 1, 16, NULL }, { 0, -1 } },
	{ "max workers bounds everything",
	  { I, I, I, END }, { 0, 0, 14, 16, NULL }, { 0, 1, -1 } },
	{ "smooth jobs run together",
	  { S, S, S, END }, { 0, 0, 0, 16, NULL }, { 0, 1, 2, -1 } },
	{ "one heavy at a time",
	  { H, H, END }, { 0, 0, 0, 16, NULL }, { 0, -1 } },
	{ "heavy waits for running smooth, and smooth behind it waits",
	  { H, S, END }, { 0, 1, 1, 16, NULL }, { -1 } },
	{ "smooth before heavy runs; heavy waits for it",
	  { S, H, S, END }, { 0, 0, 0, 16, NULL }, { 0, -1 } },
	{ "no smooth while heavy runs",
	  { S, I, END }, { 1, 0, 1, 16, NULL }, { 1, -1 } },
	{ "heavy jobs in ticket order",
	  { H, H, END }, { 1, 0, 1, 16, NULL }, { -1 } },
	{ "reload starts when nothing holds",
	  { R, END }, { 0, 0, 0, 16, NULL }, { 0, -1 } },
	{ "guard holds the reload, not the jobs behind it",
	  { R, S, H, END }, { 0, 0, 0, 16, "tests_running" }, { 1, -1 } },
	{ "guard holds the reload; a heavy behind it may start",
	  { R, H, S, END }, { 0, 0, 1, 16, "compiling" }, { 1, -1 } },
	{ "an unheld reload is heavy: smooth behind it waits",
	  { R, S, END }, { 0, 0, 0, 16, NULL }, { 0, -1 } },
	{ "a reload waits for a running smooth job",
	  { R, I, END }, { 0, 1, 1, 16, NULL }, { 1, -1 } },
	{ "instant reload is scheduled as heavy",
	  { { TIER_INSTANT, 1 }, S, END }, { 0, 0, 0, 16, NULL }, { 0, -1 } },
};

START_TEST(decide)
{
	size_t	start[8], n = 0, got, k;

	while (n < 8 && (int)cases[_i].jobs[n].tier != -1)
		n++;
	got = sched_decide(cases[_i].jobs, n, &cases[_i].st, start);
	for (k = 0; k < got; k++)
		ck_assert_msg(cases[_i].want[k] == (int)start[k],
		    "%s: start #%zu is job %zu, want %d", cases[_i].name, k,
		    start[k], cases[_i].want[k]);
	ck_assert_msg(cases[_i].want[got] == -1, "%s: started %zu jobs",
	    cases[_i].name, got);
}
END_TEST

START_TEST(guard_order)
{
	struct sched_busy	b = { 1, 1, 1 };

	ck_assert_str_eq(sched_guard(&b), "tests_running");
	b.tests_running = 0;
	ck_assert_str_eq(sched_guard(&b), "compiling");
	b.compiling = 0;
	ck_assert_str_eq(sched_guard(&b), "editor_busy");
	b.editor_busy = 0;
	ck_assert_ptr_null(sched_guard(&b));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sched");
	TCase	*tc = tcase_create("sched");

	tcase_add_loop_test(tc, decide, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, guard_order);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
