/* SPDX-License-Identifier: ISC */
/*
 * A long queue through the broker (issue 15): positions, blocked_by and
 * the order jobs start in, read back over the protocol while the queue
 * holds many jobs of every class.  Correctness only; how the queue's cost
 * grows is the bench's (make bench-scale).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "jobsutil.h"
#include "testnet.h"

#define NJOBS		600	/* queued behind the held heavy job */
#define NCANCEL		100	/* cancelled from the middle */
#define CUT		100	/* ...from this one on */
#define NRUN		24	/* left to run at the end */

/* What job k of the queue is: a reload every 10th from 3, an instant job
 * with a busy label every 10th from 7, heavy jobs between. */
static const char *
kind(int k)
{
	return k % 10 == 3 ? "r" : k % 10 == 7 ? "i" : "h";
}

static void
write_queue_tools(void)
{
	char	json[2048];

	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"hold\",\"tier\":\"heavy\",\"busy\":\"tests_running\","
	    " \"exec\":[\"sh\",\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"h\",\"tier\":\"heavy\",\"exec\":[\"true\"]},"
	    "{\"name\":\"r\",\"tier\":\"heavy\",\"reload\":true,"
	    " \"exec\":[\"true\"]},"
	    "{\"name\":\"i\",\"tier\":\"instant\",\"busy\":\"compiling\","
	    " \"exec\":[\"true\"]}]}", fifo);
	write_file(tools, json, 0600);
}

static void
cancel(const char *ticket)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
	    "\"cancel_job\",\"params\":{\"ticket\":\"%s\"}}", ticket);

	ck_assert_msg(json_object_get_boolean(jpath(r, "result.cancelled")),
	    "cancel %s: %.200s", ticket, json_object_to_json_string(r));
	json_object_put(r);
}

/* poll_job of job k: queued at position pos, blocked_by as its kind. */
static void
assert_place(const char *ticket, int k, int pos)
{
	json_object	*r = poll_job(ticket);
	json_object	*bb = jpath(r, "result.blocked_by");

	ck_assert_str_eq(str(r, "result.status"), "queued");
	ck_assert_msg(json_object_get_int(jpath(r, "result.position")) == pos,
	    "job %d (%s) at %d, not %d", k, ticket,
	    json_object_get_int(jpath(r, "result.position")), pos);
	if (strcmp(kind(k), "r") == 0)
		ck_assert_str_eq(json_object_get_string(bb), "tests_running");
	else
		ck_assert_ptr_null(bb);
	json_object_put(r);
}

static int
queued(void)
{
	json_object	*r = callf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
	    "\"queue_status\"}");
	int		 n = json_object_get_int(jpath(r, "result.queued"));

	json_object_put(r);
	return n;
}

/*
 * The first n jobs all end done; no two heavy ones (h and r) overlap, and
 * the h jobs start in ticket order.  A reload may be passed: an i job
 * holding "compiling" holds it, and jobs without a busy label go by.
 */
static int
started_first(json_object *a, int ka, json_object *b, int kb)
{
	int	c = strcmp(str(a, "started_at"), str(b, "started_at"));

	return c < 0 || (c == 0 && ka < kb);
}

static void
assert_serial(char (*t)[32], int n)
{
	json_object	*r[NRUN];
	const char	*lastp = NULL;
	int		 k, m;

	ck_assert_int_le(n, NRUN);
	for (k = 0; k < n; k++) {
		r[k] = wait_done(t[k]);
		ck_assert_str_eq(str(r[k], "status"), "done");
		if (strcmp(kind(k), "h") != 0)
			continue;
		if (lastp != NULL)
			ck_assert_msg(strcmp(lastp, str(r[k], "started_at")) <= 0,
			    "%s started before an earlier heavy job", t[k]);
		lastp = str(r[k], "started_at");
	}
	/* Each pair once, the one that started first (or the lower ticket,
	 * in the same millisecond) first. */
	for (k = 0; k < n; k++)
		for (m = 0; m < n; m++)
			if (k != m && strcmp(kind(k), "i") != 0 &&
			    strcmp(kind(m), "i") != 0 &&
			    started_first(r[k], k, r[m], m))
				ck_assert_msg(strcmp(str(r[k], "finished_at"),
				    str(r[m], "started_at")) <= 0, "%s and %s "
				    "ran at once", t[k], t[m]);
	for (k = 0; k < n; k++)
		json_object_put(r[k]);
}

START_TEST(long_queue_places)
{
	static char	 t[NJOBS][32];
	char		 hold[32], cmd[64];
	int		 k, probe[] = { 0, 1, 2, 3, 7, 99, 200, 301, 457,
			    NJOBS - 2, NJOBS - 1 };
	size_t		 i;

	write_queue_tools();
	start_tools(NULL);
	submit(hold, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	await_status(hold, "running");
	for (k = 0; k < NJOBS; k++) {
		snprintf(cmd, sizeof(cmd), "[{\"tool\":\"%s\"}]", kind(k));
		submit(t[k], cmd, NULL);
	}
	ck_assert_int_eq(queued(), NJOBS);
	/* A held reload at 3 holds the busy instant jobs behind it. */
	for (i = 0; i < sizeof(probe) / sizeof(probe[0]); i++)
		assert_place(t[probe[i]], probe[i], probe[i]);
	for (k = CUT; k < CUT + NCANCEL; k++)
		cancel(t[k]);
	ck_assert_int_eq(queued(), NJOBS - NCANCEL);
	for (i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		k = probe[i];
		if (k >= CUT && k < CUT + NCANCEL)
			continue;
		assert_place(t[k], k, k < CUT ? k : k - NCANCEL);
	}
	for (k = NJOBS - 1; k >= NRUN; k--)
		if (k < CUT || k >= CUT + NCANCEL)
			cancel(t[k]);
	ck_assert_int_eq(queued(), NRUN);
	for (k = 0; k < NRUN; k++)
		assert_place(t[k], k, k);
	release();
	wait_end(hold, "done");
	assert_serial(t, NRUN);
	ck_assert_int_eq(queued(), 0);
}
END_TEST

/* poll_job of t: its ahead list names the running heavy job, then the
 * jobs queued before it, each with the agent and label of its record. */
static void
assert_ahead(const char *t, const char *running, char (*before)[32], int n)
{
	json_object	*r = poll_job(t), *a = jpath(r, "result.ahead"), *e;
	int		 k;

	ck_assert_int_eq((int)json_object_array_length(a), n + 1);
	ck_assert_str_eq(str(json_object_array_get_idx(a, 0), "ticket"),
	    running);
	for (k = 0; k < n; k++) {
		e = json_object_array_get_idx(a, (size_t)k + 1);
		ck_assert_str_eq(str(e, "ticket"), before[k]);
		ck_assert_str_eq(str(e, "agent"), "queue-agent");
		ck_assert_str_eq(str(e, "label"), "queue-label");
		ck_assert_str_eq(str(e, "status"), "queued");
	}
	json_object_put(r);
}

/* A queued job's record is the store's once it was answered: every view
 * of it (poll, ahead, list_jobs), its cancel and its run still see it. */
START_TEST(long_queue_records)
{
	static char	 t[40][32];
	char		 hold[32], cmd[64];
	json_object	*r;
	int		 k, n = 40;	/* ahead holds them all */

	write_queue_tools();
	start_tools(NULL);
	submit(hold, "[{\"tool\":\"hold\"}]", "\"notify\":true");
	await_status(hold, "running");
	for (k = 0; k < n; k++) {
		snprintf(cmd, sizeof(cmd), "[{\"tool\":\"%s\"}]", kind(k));
		submit(t[k], cmd, "\"agent\":\"queue-agent\","
		    "\"label\":\"queue-label\"");
	}
	assert_ahead(t[n - 1], hold, t, n - 1);
	r = callf("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"list_jobs\","
	    "\"params\":{\"status\":[\"queued\"],\"agent\":\"queue-agent\"}}");
	ck_assert_int_eq((int)json_object_array_length(jpath(r,
	    "result.jobs")), n);
	ck_assert_int_eq(json_object_get_int(jpath(r, "result.jobs.5.position")),
	    5);
	json_object_put(r);
	for (k = NRUN; k < n; k++)
		cancel(t[k]);
	r = poll_job(t[n - 1]);
	ck_assert_str_eq(str(r, "result.status"), "cancelled");
	ck_assert_str_eq(str(r, "result.label"), "queue-label");
	json_object_put(r);
	release();
	wait_end(hold, "done");
	assert_serial(t, NRUN);
	r = wait_done(t[NRUN - 1]);
	ck_assert_str_eq(str(r, "agent"), "queue-agent");
	ck_assert_int_eq((int)json_object_array_length(jpath(r, "results")), 1);
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("queue");
	TCase	*tc = tcase_create("queue");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, long_queue_places);
	tcase_add_test(tc, long_queue_records);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
