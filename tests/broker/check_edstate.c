/* SPDX-License-Identifier: ISC */
/*
 * The editor state (src/faces/edstate.c, cmdgated(8) Editor state) in-process:
 * a subscriber told of each change, fed by reload jobs and the editor
 * probe (tests/fjutil.c).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "engine.h"
#include "faces.h"
#include "fjutil.h"

static struct edstate	 ed;
static int		 ed_n, ed_reloads;
static int64_t		 ed_job = -1;	/* a reload job: its end stored */

static void
on_edstate(void *arg)
{
	struct edstate	was = ed;

	(void)arg;
	ed_n++;
	edstate_get(&srv, &ed);
	ck_assert_msg(memcmp(&was, &ed, sizeof(ed)) != 0, "told of no change");
	ed_reloads += ed.reloading && !was.reloading;
	ck_assert_msg(ed_job < 0 || ed.reloading || !was.reloading ||
	    !job_pending(srv.jobs, (uint64_t)ed_job), "told that the reload "
	    "is over before its end was stored");
}

static void
on_nothing(void *arg)
{
	(void)arg;
}

/* The subscriber was told the state {reloading, reachable}. */
static int
ed_is(void *arg)
{
	const int	*want = arg;

	return ed.reloading == want[0] && ed.reachable == want[1];
}

static void
await_edstate(int reloading, int reachable)
{
	int	want[2] = { reloading, reachable };

	loop_until(ed_is, want, "editor state");
}

static struct edsub *
subscribe(void)
{
	ed_n = ed_reloads = 0;
	edstate_get(&srv, &ed);
	return edstate_subscribe(&srv, on_edstate, NULL);
}

/* ---- exec tools -------------------------------------------------------- */

/*
 * A reload job that runs is a reload, until its end is stored; without a
 * probe, reachable -1.
 */
START_TEST(edstate_reload_job)
{
	struct edsub	*sub = subscribe();
	struct got	 g;

	ck_assert_int_eq(ed.reloading, 0);
	ck_assert_int_eq(ed.reachable, -1);
	ed_job = (int64_t)njobs();
	start(&g, "a", "rebuild", NULL, 0, 0);
	await_edstate(1, -1);
	ck_assert_int_eq(ed_n, 1);
	release();
	await_news(&g, FJ_DONE);
	await_edstate(0, -1);
	ck_assert_int_eq(ed_n, 2);
	ed_job = -1;
	edstate_unsubscribe(sub);
	got_free(&g);
}
END_TEST

/* ---- unity-mcp.json against the fake bridge --------------------------- */

/*
 * The editor reloads on its own (a person pressed play): the probe finds
 * it unreachable after it had answered, which is a reload until it
 * answers again.
 */
START_TEST(edstate_probe_loss)
{
	struct edsub	*sub = subscribe(), *other;

	other = edstate_subscribe(&srv, on_nothing, NULL);
	await_edstate(0, 1);
	edstate_unsubscribe(other);
	fake_ctl(&fk, "reload");
	await_edstate(1, 0);
	fake_ctl(&fk, "reload-done");
	await_edstate(0, 1);
	ck_assert_int_eq(ed_reloads, 1);
	edstate_unsubscribe(sub);
}
END_TEST

/* cmdgate's own compile: reloading from its start to its end. */
START_TEST(edstate_compile_job)
{
	struct edsub	*sub = subscribe();
	struct got	 g;

	await_edstate(0, 1);
	start(&g, "v", "refresh_unity", "{\"compile\":\"request\"}", 0, 0);
	await_edstate(1, 1);
	await_fake("reload start");
	fake_ctl(&fk, "reload-done");
	await_news(&g, FJ_DONE);
	ck_assert_int_eq(g.ok, 1);
	await_edstate(0, 1);
	ck_assert_int_eq(ed_reloads, 1);
	edstate_unsubscribe(sub);
	got_free(&g);
}
END_TEST

static Suite *
edstate_suite(void)
{
	Suite	*s = suite_create("edstate");
	TCase	*tc = tcase_create("exec");
	TCase	*tu = tcase_create("unity");

	tcase_add_checked_fixture(tc, setup_exec, teardown);
	tcase_add_test(tc, edstate_reload_job);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tu, setup_unity, teardown);
	tcase_add_test(tu, edstate_probe_loss);
	tcase_add_test(tu, edstate_compile_job);
	suite_add_tcase(s, tu);
	return s;
}

int
main(void)
{
	return ck_run(edstate_suite());
}
