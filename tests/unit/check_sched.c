/* SPDX-License-Identifier: ISC */
/* The scheduling decision: jobs + live workers + holders in, starts out. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>

#include "../../src/daemon/daemon.h"
#include "ckrun.h"
#include "net.h"
#include "policy.h"
#include "server.h"
#include "tools.h"

#define T	SCHED_BUSY_BIT(BUSY_TESTS_RUNNING)
#define C	SCHED_BUSY_BIT(BUSY_COMPILING)
#define I	{ TIER_INSTANT, 0, 0 }
#define S	{ TIER_SMOOTH, 0, 0 }
#define H	{ TIER_HEAVY, 0, 0 }
#define R	{ TIER_HEAVY, 1, 0 }
#define IT	{ TIER_INSTANT, 0, T }	/* an instant test job */
#define IC	{ TIER_INSTANT, 0, C }
#define ST	{ TIER_SMOOTH, 0, T }
#define HT	{ TIER_HEAVY, 0, T }
#define END	{ -1, 0, 0 }
#define FREE	{ 0, 0, 0 }		/* nothing holds reloads */
#define TESTS	{ 1, 0, 0 }
#define COMP	{ 0, 1, 0 }
#define EDIT	{ 0, 0, 1 }

static const struct {
	const char		*name;
	struct sched_job	 jobs[8];
	struct sched_state	 st;
	int			 want[8];	/* indexes, -1 ends */
} cases[] = {
	{ "instant starts at once",
	  { I, I, END }, { 0, 0, 0, 16, FREE }, { 0, 1, -1 } },
	{ "instant starts beside a heavy job",
	  { I, END }, { 1, 0, 1, 16, FREE }, { 0, -1 } },
	{ "max workers bounds everything",
	  { I, I, I, END }, { 0, 0, 14, 16, FREE }, { 0, 1, -1 } },
	{ "smooth jobs run together",
	  { S, S, S, END }, { 0, 0, 0, 16, FREE }, { 0, 1, 2, -1 } },
	{ "one heavy at a time",
	  { H, H, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "heavy waits for running smooth, and smooth behind it waits",
	  { H, S, END }, { 0, 1, 1, 16, FREE }, { -1 } },
	{ "smooth before heavy runs; heavy waits for it",
	  { S, H, S, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "no smooth while heavy runs",
	  { S, I, END }, { 1, 0, 1, 16, FREE }, { 1, -1 } },
	{ "heavy jobs in ticket order",
	  { H, H, END }, { 1, 0, 1, 16, FREE }, { -1 } },
	{ "reload starts when nothing holds",
	  { R, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "guard holds the reload, not the jobs behind it",
	  { R, S, H, END }, { 0, 0, 0, 16, TESTS }, { 1, -1 } },
	{ "guard holds the reload; a heavy behind it may start",
	  { R, H, S, END }, { 0, 0, 1, 16, COMP }, { 1, -1 } },
	{ "editor_busy holds the reload",
	  { R, I, END }, { 0, 0, 0, 16, EDIT }, { 1, -1 } },
	{ "an unheld reload is heavy: smooth behind it waits",
	  { R, S, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "a reload waits for a running smooth job",
	  { R, I, END }, { 0, 1, 1, 16, FREE }, { 1, -1 } },
	{ "instant reload is scheduled as heavy",
	  { { TIER_INSTANT, 1, 0 }, S, END }, { 0, 0, 0, 16, FREE },
	  { 0, -1 } },
	/* Issue 19.1: a job started in the pass holds the guard in it. */
	{ "an instant test job started in the pass holds the reload",
	  { IT, R, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "an instant compiling job started in the pass holds the reload",
	  { IC, R, I, END }, { 0, 0, 0, 16, FREE }, { 0, 2, -1 } },
	{ "a heavy test job started in the pass holds the reload",
	  { HT, R, I, END }, { 0, 0, 0, 16, FREE }, { 0, 2, -1 } },
	{ "a reload started first is not held by a later test job",
	  { R, IT, END }, { 0, 0, 0, 16, FREE }, { 0, 1, -1 } },
	/* Issue 19.4: a held reload goes before test jobs behind it. */
	{ "a held reload holds back test jobs behind it",
	  { R, ST, S, IT, I, END }, { 0, 1, 1, 16, TESTS }, { 2, 4, -1 } },
	{ "test jobs ahead of a held reload still start",
	  { ST, R, ST, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "a reload held by a job of the pass holds back later test jobs",
	  { IT, R, IT, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
	{ "the gap: nothing holds, the reload starts before test jobs",
	  { R, ST, HT, END }, { 0, 0, 0, 16, FREE }, { 0, -1 } },
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
	sched_hold(&b, SCHED_BUSY_BIT(BUSY_COMPILING));
	ck_assert_str_eq(sched_guard(&b), "compiling");
	sched_hold(&b, SCHED_BUSY_BIT(BUSY_TESTS_RUNNING));
	ck_assert_str_eq(sched_guard(&b), "tests_running");
}
END_TEST

/* Reloads stay held while any connection holds a flag, however many
 * held it and in whatever order they leave. */
START_TEST(holds_counted)
{
	char			*argv[] = { "cmdgated", "--state-dir",
				    "/nonexistent", NULL };
	char			 err[256];
	struct options		 opt;
	struct server		 srv;
	struct evbuffer		*out = evbuffer_new();
	struct conn		*a, *b;
	struct editor_flags	 t = { 1, 0, 0 }, f;

	ck_assert_int_eq(options_parse(&opt, 3, argv, stdout, err,
	    sizeof(err)), OPT_RUN);
	server_init(&srv, NULL, &opt, tooltab_default());
	a = server_conn_new(&srv, NULL, out, 0, "a");
	b = server_conn_new(&srv, NULL, out, 0, "b");
	server_set_editor(&srv, a, &t);
	server_set_editor(&srv, b, &t);
	server_set_editor(&srv, a, &t);		/* again: still one hold */
	server_conn_free(&srv, a);
	edflags_get(&srv.holds, &f);
	ck_assert_int_eq(f.tests_running, 1);
	ck_assert_int_eq(f.compiling, 0);
	server_conn_free(&srv, b);
	edflags_get(&srv.holds, &f);
	ck_assert_int_eq(f.tests_running, 0);
	ck_assert_uint_eq(srv.holds.tests_running, 0);
	server_free(&srv);
	evbuffer_free(out);
	options_free(&opt);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sched");
	TCase	*tc = tcase_create("sched");

	tcase_add_loop_test(tc, decide, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, guard_order);
	tcase_add_test(tc, holds_counted);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
