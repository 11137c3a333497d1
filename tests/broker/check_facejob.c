/* SPDX-License-Identifier: ISC */
/*
 * Face jobs (src/faces/facejob.c, cmdgated(8) Face jobs) in-process: driven
 * through facejob_start() as a listener face drives it (tests/fjutil.c);
 * and the turn's commits of the jobs they submit: an instant read's are
 * held, not synced, any other job's synced (cmdgated(8), The store).
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <json-c/json.h>

#include "../../src/engine/internal.h"
#include "ckrun.h"
#include "engine.h"
#include "faces.h"
#include "fjutil.h"
#include "net.h"
#include "store.h"

/* ---- exec tools -------------------------------------------------------- */

START_TEST(facejob_done)
{
	struct got	g;

	start(&g, "agent-a", "echo", "{\"text\":\"hi\"}", 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_str_eq(g.ticket, "t-000000");
	ck_assert_int_eq(g.ok, 1);
	ck_assert_int_eq(g.attached, 0);
	ck_assert_str_eq(res_str(&g, "tool"), "echo");
	ck_assert_str_eq(res_str(&g, "stdout"), "hi\n");
	got_free(&g);
	/* Done and told: the same command again is a new job. */
	start(&g, "agent-a", "echo", "{\"text\":\"hi\"}", 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_str_eq(g.ticket, "t-000001");
	ck_assert_int_eq(g.attached, 0);
	got_free(&g);
}
END_TEST

START_TEST(facejob_refused)
{
	static const struct {
		const char	*agent, *tool, *params, *type;
		int		 code;
	} bad[] = {
		{ "a", "nosuch", NULL, "unknown_tool", RPC_INVALID_PARAMS },
		{ "a", "locked", NULL, "security_blocked",
		    RPC_SECURITY_BLOCKED },
		{ "a", "echo", "{}", "invalid_params", RPC_INVALID_PARAMS },
		{ "a", "echo", "{\"text\":3}", "invalid_params",
		    RPC_INVALID_PARAMS },
		{ "a\tb", "echo", "{\"text\":\"x\"}", "invalid_params",
		    RPC_INVALID_PARAMS },
	};
	struct got	g;
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		start(&g, bad[i].agent, bad[i].tool, bad[i].params, HOLD_MS, 0);
		await_news(&g, FJ_REFUSED);
		ck_assert_int_eq(g.code, bad[i].code);
		ck_assert_str_eq(g.type, bad[i].type);
		ck_assert_str_eq(g.ticket, "(null)");
		ck_assert(strlen(g.why) > 0);
		got_free(&g);
	}
	ck_assert_uint_eq(njobs(), 0);
	/* An empty name is allowed: the job's agent is "anonymous". */
	start(&g, "", "echo", "{\"text\":\"x\"}", HOLD_MS, 0);
	await_news(&g, FJ_DONE);
	got_free(&g);
}
END_TEST

/*
 * Item 4: a command held longer than its client waits is answered
 * "held", naming its ticket and what holds it, and its repeat (same
 * agent, tool and params, in any member order) joins the job instead of
 * becoming a second one, until its result was given to a client once.
 */
START_TEST(facejob_held_repeat_attaches)
{
	struct got	h, g1, g2, g3, g4, g5;

	/* The first job of a store is t-000000: held like any other. */
	start(&h, "a", "hold", NULL, HOLD_MS, 0);
	await_news(&h, FJ_HELD);
	ck_assert_str_eq(h.ticket, "t-000000");
	ck_assert_msg(strncmp(h.why, "t-000000 is ", 12) == 0, "%s", h.why);
	await_running(0);
	start(&g1, "a", "later", "{\"text\":\"x\",\"n\":1}", HOLD_MS, 0);
	await_news(&g1, FJ_HELD);
	ck_assert_str_eq(g1.ticket, "t-000001");
	ck_assert_int_eq(g1.attached, 0);
	ck_assert_msg(strstr(g1.why, "t-000001 is queued behind t-000000") !=
	    NULL, "%s", g1.why);
	start(&g2, "a", "later", "{\"n\":1,\"text\":\"x\"}", HOLD_MS, 0);
	await_news(&g2, FJ_HELD);
	ck_assert_str_eq(g2.ticket, "t-000001");
	ck_assert_int_eq(g2.attached, 1);
	/* Another agent's, or other params: jobs of their own. */
	start(&g3, "b", "later", "{\"text\":\"x\",\"n\":1}", HOLD_MS, 0);
	await_news(&g3, FJ_HELD);
	ck_assert_str_eq(g3.ticket, "t-000002");
	ck_assert_msg(strstr(g3.why, "queued behind t-000001") != NULL, "%s",
	    g3.why);
	start(&g4, "a", "later", "{\"text\":\"x\",\"n\":2}", HOLD_MS, 0);
	await_news(&g4, FJ_HELD);
	ck_assert_str_eq(g4.ticket, "t-000003");
	/* The client comes again and waits this time. */
	start(&g5, "a", "later", "{\"text\":\"x\",\"n\":1}", 0, 0);
	release();
	await_news(&g5, FJ_DONE);
	ck_assert_str_eq(g5.ticket, "t-000001");
	ck_assert_int_eq(g5.attached, 1);
	ck_assert_int_eq(g5.ok, 1);
	ck_assert_str_eq(res_str(&g5, "stdout"), "x\n");
	ck_assert_uint_eq(njobs(), 4);
	got_free(&g5);
	/* Told once: the window is over, the same command is a new job. */
	start(&g5, "a", "later", "{\"text\":\"x\",\"n\":1}", 0, 0);
	await_news(&g5, FJ_DONE);
	ck_assert_str_eq(g5.ticket, "t-000004");
	ck_assert_int_eq(g5.attached, 0);
	got_free(&g5);
	got_free(&h);
}
END_TEST

/* A job that ended with nobody told keeps its result for a repeat. */
START_TEST(facejob_result_kept_for_repeat)
{
	struct got	 h, g;
	struct facejob	*fj;

	start(&h, "a", "hold", NULL, 0, 0);
	await_running(0);
	start(&g, "a", "later", "{\"text\":\"y\"}", HOLD_MS, 0);
	await_news(&g, FJ_HELD);
	/* And a client that went away: no news for it. */
	fj = start(&g, "a", "later", "{\"text\":\"y\"}", 0, 0);
	facejob_cancel(fj);
	release();
	await_ended(1);
	ck_assert_int_eq(g.n, 0);
	start(&g, "a", "later", "{\"text\":\"y\"}", HOLD_MS, 0);
	await_news(&g, FJ_DONE);
	ck_assert_str_eq(g.ticket, "t-000001");
	ck_assert_int_eq(g.attached, 1);
	ck_assert_str_eq(res_str(&g, "stdout"), "y\n");
	got_free(&g);
	start(&g, "a", "later", "{\"text\":\"y\"}", HOLD_MS, 0);
	await_news(&g, FJ_DONE);
	ck_assert_str_eq(g.ticket, "t-000002");
	ck_assert_int_eq(g.attached, 0);
	got_free(&g);
	got_free(&h);
}
END_TEST

/* The window also ends --result-ttl after the job ended (here 0 s). */
START_TEST(facejob_window_ttl)
{
	struct got	h, g;

	opt.result_ttl = 0;
	start(&h, "a", "hold", NULL, 0, 0);
	await_running(0);
	start(&g, "a", "later", "{\"text\":\"z\"}", HOLD_MS, 0);
	await_news(&g, FJ_HELD);
	release();
	await_ended(1);
	start(&g, "a", "later", "{\"text\":\"z\"}", HOLD_MS, 0);
	await_news(&g, FJ_DONE);
	ck_assert_str_eq(g.ticket, "t-000002");
	ck_assert_int_eq(g.attached, 0);
	got_free(&g);
	got_free(&h);
}
END_TEST

/* A job that ends without running its command: a result all the same. */
START_TEST(facejob_cancelled_job)
{
	struct got		 h, g;
	struct jobs_error	 err;
	json_object		*r = NULL;

	start(&h, "a", "hold", NULL, 0, 0);
	await_running(0);
	start(&g, "a", "later", "{\"text\":\"c\"}", 0, 0);
	loop_until(queued, &(uint64_t){ 1 }, "the job queued");
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(jobs_cancel(srv.jobs, 1, &r, &err), 0);
	json_object_put(r);
	await_news(&g, FJ_DONE);
	ck_assert_int_eq(g.ok, 0);
	ck_assert_str_eq(res_str(&g, "error_type"), "cancelled");
	ck_assert_str_eq(res_str(&g, "tool"), "later");
	got_free(&g);
	release();
	await_news(&h, FJ_DONE);
	got_free(&h);
}
END_TEST

/* A connection of the server's table, as a face's client has one. */
static struct conn *
client_conn(void)
{
	struct evbuffer	*out = evbuffer_new();

	ck_assert_ptr_nonnull(out);
	return server_conn_new(&srv, NULL, out, 0, "test");
}

/* Its client goes; its output buffer is the test's (no socket). */
static void
client_conn_free(struct conn *c)
{
	struct evbuffer	*out = c->out;

	server_conn_free(&srv, c);
	evbuffer_free(out);
}

/*
 * Issue 31, "one agent name": the unity-mcp face's clients all send
 * under one agent, so a repeat is a command of the same connection, or
 * of another once the first one's client is gone (as MCP for Unity's
 * server sends it again, on a new connection, after its own timeout);
 * another live client's identical command is a job of its own.
 */
START_TEST(facejob_repeat_per_connection)
{
	struct conn	*a = client_conn(), *b = client_conn(), *a2;
	struct got	 h, g1, g2, g3, g4, g5;
	const char	*cmd = "{\"text\":\"c\"}";

	start(&h, "u", "hold", NULL, 0, 0);
	await_running(0);
	start_on(a->id, &g1, "u", "later", cmd, HOLD_MS, 0);
	await_news(&g1, FJ_HELD);
	start_on(b->id, &g2, "u", "later", cmd, HOLD_MS, 0);
	await_news(&g2, FJ_HELD);
	ck_assert_int_eq(g2.attached, 0);
	ck_assert_str_ne(g2.ticket, g1.ticket);
	start_on(a->id, &g3, "u", "later", cmd, HOLD_MS, 0);
	await_news(&g3, FJ_HELD);
	ck_assert_int_eq(g3.attached, 1);
	ck_assert_str_eq(g3.ticket, g1.ticket);
	/* a's client half-closes and comes back on a new connection. */
	a->eof = 1;
	a2 = client_conn();
	start_on(a2->id, &g4, "u", "later", cmd, HOLD_MS, 0);
	await_news(&g4, FJ_HELD);
	ck_assert_int_eq(g4.attached, 1);
	ck_assert_str_eq(g4.ticket, g1.ticket);
	/* b's own window is b's still; the claimed one is a2's now. */
	client_conn_free(a);
	start_on(b->id, &g5, "u", "later", cmd, 0, 0);
	release();
	await_news(&g5, FJ_DONE);
	ck_assert_str_eq(g5.ticket, g2.ticket);
	ck_assert_int_eq(g5.attached, 1);
	got_free(&g5);
	start_on(a2->id, &g5, "u", "later", cmd, 0, 0);
	await_news(&g5, FJ_DONE);
	ck_assert_str_eq(g5.ticket, g1.ticket);
	ck_assert_int_eq(g5.attached, 1);
	got_free(&g5);
	ck_assert_uint_eq(njobs(), 3);
	client_conn_free(b);
	client_conn_free(a2);
	await_news(&h, FJ_DONE);
	got_free(&h);
}
END_TEST

/* Bytes in use on the heap as glibc counts them, small and mmapped. */
static size_t
heap_used(void)
{
	struct mallinfo2	mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

#define BIG	(1024 * 1024)	/* a big command's params */

/* Params of a later command of about BIG bytes, told apart by n. */
static char *
big_params(int n)
{
	char	*p = malloc(BIG + 64);
	int	 k;

	ck_assert_ptr_nonnull(p);
	k = snprintf(p, 64, "{\"n\":%d,\"text\":\"", n);
	memset(p + k, 'x', BIG);
	memcpy(p + k + BIG, "\"}", 3);
	return p;
}

/* Whether heap_used() sees a block: a sanitizer's or valgrind's
 * allocator is not glibc's to count. */
static int
heap_counted(void)
{
	char *volatile	p;
	size_t		before = heap_used();
	int		seen;

	p = malloc(BIG);
	ck_assert_ptr_nonnull(p);
	p[0] = 1;
	seen = heap_used() - before >= BIG;
	free(p);
	return seen;
}

/*
 * Issue 31.9: the repeat table keys a command by a fixed-size digest, so
 * that a queued face job costs the heap the same whatever its command:
 * four held 1 MiB commands leave it well under 1 MiB bigger, and a repeat
 * of one is still recognised.
 */
START_TEST(facejob_key_bounded)
{
	struct got	 h, g[4], r;
	size_t		 before;
	char		*p;
	int		 i, counted;

	start(&h, "a", "hold", NULL, 0, 0);
	await_running(0);
	counted = heap_counted();
	before = heap_used();
	for (i = 0; i < 4; i++) {
		start(&g[i], "a", "later", p = big_params(i), HOLD_MS, 0);
		free(p);
		await_news(&g[i], FJ_HELD);
		ck_assert_int_eq(g[i].attached, 0);
	}
	ck_assert_msg(!counted || heap_used() < before + BIG / 4, "4 held "
	    "commands of 1 MiB hold %zu bytes of the heap",
	    heap_used() - before);
	start(&r, "a", "later", p = big_params(1), HOLD_MS, 0);
	free(p);
	await_news(&r, FJ_HELD);
	ck_assert_int_eq(r.attached, 1);
	ck_assert_str_eq(r.ticket, g[1].ticket);
	ck_assert_uint_eq(njobs(), 5);
	release();
	await_news(&h, FJ_DONE);
	got_free(&h);
}
END_TEST

/* ---- unity-mcp.json against the fake bridge --------------------------- */

/*
 * run_tests answers with its job id at once: the face has that first
 * answer while the job goes on polling get_test_job; a re-sent run_tests
 * gets the same answer and is not sent to the editor again.
 */
START_TEST(facejob_first_answer)
{
	struct got	g1, g2, g3;
	char		id[64];

	start(&g1, "u", "run_tests", "{\"mode\":\"EditMode\"}", 0, 1);
	await_news(&g1, FJ_FIRST);
	ck_assert_str_eq(g1.ticket, "t-000000");
	snprintf(id, sizeof(id), "%s", res_str(&g1, "data.job_id"));
	ck_assert(strlen(id) > 0);
	ck_assert(running(&(uint64_t){ 0 }));
	/* The first answer is news, not a result: nothing stored. */
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(
	    job_find(srv.jobs, 0)->rec, "results")), 0);
	start(&g2, "u", "run_tests", "{\"mode\":\"EditMode\"}", 0, 1);
	await_news(&g2, FJ_FIRST);
	ck_assert_int_eq(g2.attached, 1);
	ck_assert_str_eq(res_str(&g2, "data.job_id"), id);
	start(&g3, "u", "run_tests", "{\"mode\":\"EditMode\"}", 0, 0);
	fake_ctl(&fk, "end-tests succeeded");
	await_news(&g3, FJ_DONE);
	ck_assert_str_eq(g3.ticket, "t-000000");
	ck_assert_int_eq(g3.attached, 1);
	ck_assert_int_eq(g3.ok, 1);
	ck_assert_str_eq(res_str(&g3, "result.data.status"), "succeeded");
	ck_assert_int_eq(fake_seen("recv run_tests "), 1);
	ck_assert_uint_eq(njobs(), 1);
	got_free(&g1);
	got_free(&g2);
	got_free(&g3);
}
END_TEST

/*
 * The compile asked for during a test run: held by the reload guard,
 * answered "held" in time, its re-sends joined to its job, sent to the
 * editor once, after the run.
 */
START_TEST(facejob_guard_held)
{
	struct got	t, g1, g2, g3;

	start(&t, "u", "run_tests", NULL, 0, 1);
	await_news(&t, FJ_FIRST);
	start(&g1, "v", "refresh_unity", "{\"compile\":\"request\"}", HOLD_MS,
	    0);
	await_news(&g1, FJ_HELD);
	ck_assert_str_eq(g1.ticket, "t-000001");
	ck_assert_msg(strstr(g1.why, "tests_running") != NULL &&
	    strstr(g1.why, "blocked_by") != NULL, "%s", g1.why);
	start(&g2, "v", "refresh_unity", "{\"compile\":\"request\"}", HOLD_MS,
	    0);
	await_news(&g2, FJ_HELD);
	ck_assert_int_eq(g2.attached, 1);
	ck_assert_int_eq(fake_seen("recv refresh_unity "), 0);
	start(&g3, "v", "refresh_unity", "{\"compile\":\"request\"}", 0, 0);
	fake_ctl(&fk, "end-tests succeeded");
	await_fake("reload start");
	fake_ctl(&fk, "reload-done");
	await_news(&g3, FJ_DONE);
	ck_assert_str_eq(g3.ticket, "t-000001");
	ck_assert_int_eq(g3.attached, 1);
	ck_assert_int_eq(g3.ok, 1);
	ck_assert_int_eq(fake_seen("recv refresh_unity "), 1);
	ck_assert_uint_eq(njobs(), 2);
	got_free(&t);
	got_free(&g1);
	got_free(&g2);
	got_free(&g3);
}
END_TEST

/* ---- the turn's commits: instant reads held, the others synced -------- */

/* How many times the store flushed to the disk. */
static uint64_t
syncs(void)
{
	struct store_info	si;

	ck_assert_int_eq(store_info(jobs_store(srv.jobs), &si), 0);
	return si.syncs;
}

static int
held(void)
{
	return store_held(jobs_store(srv.jobs));
}

/* Job num is in the store, status as a poll shows it. */
static void
assert_stored(uint64_t num, const char *status)
{
	struct jobs_error	 err;
	json_object		*v;
	char			 c, *json;
	int			 found;

	memset(&err, 0, sizeof(err));
	v = jobview_get(srv.jobs, num, 0, &found, &err);
	ck_assert_msg(v != NULL, "poll: %s", err.reason);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v,
	    "status")), status);
	json_object_put(v);
	ck_assert_int_eq(store_job_get(jobs_store(srv.jobs), num, &c, &json),
	    0);
	free(json);
}

/* The flush timer stays out of what a test counts. */
static void
no_flush_timer(void)
{
	srv.jobs->held_ms = 3600 * 1000;
}

/* An instant job that is no forward (echo runs a program) syncs. */
START_TEST(exec_instant_synced)
{
	struct got	g;
	uint64_t	s0;

	no_flush_timer();
	s0 = syncs();
	start(&g, "a", "echo", "{\"text\":\"hi\"}", 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_uint_gt(syncs(), s0);
	ck_assert(!held());
	got_free(&g);
}
END_TEST

/*
 * A read of the editor's (get_editor_state: a forward, instant) is a
 * ticket like any other, but none of its commits (queued, running, its
 * result and end) syncs the store: they are held, until a flush makes
 * them durable with one sync.
 */
START_TEST(read_not_synced)
{
	struct got	g;
	uint64_t	s0;

	no_flush_timer();
	s0 = syncs();
	start(&g, "u", "get_editor_state", NULL, 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_int_eq(g.ok, 1);
	ck_assert_uint_eq(syncs(), s0);
	ck_assert(held());
	assert_stored(0, "done");
	ck_assert_uint_eq(jobs_count(srv.jobs, JOB_DONE), 1);
	job_flush(srv.jobs);
	ck_assert_uint_eq(syncs(), s0 + 1);
	ck_assert(!held());
	assert_stored(0, "done");
	got_free(&g);
}
END_TEST

/*
 * A job that changes the editor (manage_editor stop: a smooth forward)
 * submitted in the turn of a read: that turn's commit is synced, and so
 * is the change's start, which takes along what the read had held.
 */
START_TEST(write_synced_with_read)
{
	struct got	r, w;
	uint64_t	s0, one = 1;

	no_flush_timer();
	s0 = syncs();
	start(&r, "u", "get_editor_state", NULL, 0, 0);
	start(&w, "u", "manage_editor", "{\"action\":\"stop\"}", 0, 0);
	loop_until(running, &one, "start of the change");
	ck_assert_uint_ge(syncs(), s0 + 2);	/* the submits, its start */
	ck_assert(!held());
	await_news(&r, FJ_DONE);
	await_news(&w, FJ_DONE);
	ck_assert_int_eq(w.ok, 1);
	assert_stored(0, "done");
	assert_stored(1, "done");
	got_free(&r);
	got_free(&w);
}
END_TEST

/* --sync group: a read's turns do not sync (nor hold answers for one). */
START_TEST(read_not_synced_group)
{
	struct got	g;
	uint64_t	s0;

	no_flush_timer();
	s0 = syncs();
	start(&g, "u", "read_console", NULL, 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_uint_eq(syncs(), s0);
	ck_assert(held());
	got_free(&g);
	start(&g, "u", "manage_editor", "{\"action\":\"pause\"}", 0, 0);
	await_news(&g, FJ_DONE);
	ck_assert_uint_gt(syncs(), s0);
	ck_assert(!held());
	assert_stored(0, "done");
	got_free(&g);
}
END_TEST

static Suite *
facejob_suite(void)
{
	Suite	*s = suite_create("facejob");
	TCase	*tc = tcase_create("exec");
	TCase	*tu = tcase_create("unity");
	TCase	*tg = tcase_create("unity-group");

	tcase_add_checked_fixture(tc, setup_exec, teardown);
	tcase_add_test(tc, facejob_done);
	tcase_add_test(tc, facejob_refused);
	tcase_add_test(tc, facejob_held_repeat_attaches);
	tcase_add_test(tc, facejob_result_kept_for_repeat);
	tcase_add_test(tc, facejob_window_ttl);
	tcase_add_test(tc, facejob_cancelled_job);
	tcase_add_test(tc, facejob_key_bounded);
	tcase_add_test(tc, facejob_repeat_per_connection);
	tcase_add_test(tc, exec_instant_synced);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tu, setup_unity, teardown);
	tcase_add_test(tu, facejob_first_answer);
	tcase_add_test(tu, facejob_guard_held);
	tcase_add_test(tu, read_not_synced);
	tcase_add_test(tu, write_synced_with_read);
	suite_add_tcase(s, tu);
	tcase_add_checked_fixture(tg, setup_unity_group, teardown);
	tcase_add_test(tg, read_not_synced_group);
	suite_add_tcase(s, tg);
	return s;
}

int
main(void)
{
	return ck_run(facejob_suite());
}
