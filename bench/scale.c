/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench scale (make bench-scale): the submit rate as the queue
 * grows to BENCH_SCALE_MAX (default 1,000,000) queued jobs, each level
 * against the rate at an empty queue, and the restart time at each level.
 * The queue is filled through the wire, in JSON-RPC batches under
 * --sync none, behind a heavy job that runs for an hour.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench.h"
#include "broker.h"
#include "peers.h"
#include "table.h"

#define LEVELS		5
#define MAXR		64
#define CLIENTS		16
#define NONE_N		400	/* submits per client in a --sync none window */
#define FULL_N		400	/* the same under --sync full */
#define WARM_N		10	/* the same, untimed, before each window */
#define FILL_BATCH	100	/* submits in one JSON-RPC batch */
#define FILL_DEPTH	4	/* batches in flight */
#define MILLION		1000000
#define RESTART_MAX_S	600	/* the longest a restart may take */

static const char *const map[] = { "--map-size", "4294967296", NULL };

struct level {
	long	queued;
	double	none[MAXR], full[MAXR], restart[2 * MAXR];
	double	enone[MAXR], efull[MAXR];	/* the empty broker's, beside */
	long	rss;
};

/* A broker on a state of its own: its queue, its probe job. */
struct side {
	struct broker	 b;
	const char	*state;
	long		 probe;
};

/*
 * Start the broker on state: seconds from exec to a poll_job of the queued
 * job probe answered (a queued job: a finished one may have expired).
 */
static double
restart(struct broker *b, const char *sync, const char *state, long probe)
{
	json_object	*o;
	char		 line[160];
	double		 t0 = now();
	int		 fd;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"poll_job\",\"params\":{\"ticket\":\"t-%06ld\"}}\n", probe);
	broker_launch(b, tmp("hold.json"), sync, state, map, RESTART_MAX_S);
	if ((fd = broker_dial(b->port)) == -1)
		die("dial: %s", strerror(errno));
	o = rpc(fd, line);
	t0 = now() - t0;
	if (json_object_object_get(o, "result") == NULL)
		die("poll_job after a restart failed: %s",
		    json_object_to_json_string(o));
	json_object_put(o);
	close(fd);
	return t0;
}

/* How many jobs wait in the broker's queue (queue_status). */
static long
queued(int port)
{
	json_object	*o;
	long		 n;
	int		 fd;

	if ((fd = broker_dial(port)) == -1)
		die("dial: %s", strerror(errno));
	o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"queue_status\",\"params\":{}}\n");
	n = atol(result_str(o, "queued"));
	json_object_put(o);
	close(fd);
	return n;
}

/* A JSON-RPC batch of k submits, one line, at buf: its length. */
static size_t
batch(char *buf, int k)
{
	size_t	one = strlen(SUBMIT) - 1, len = 0;
	int	i;

	buf[len++] = '[';
	for (i = 0; i < k; i++) {
		memcpy(buf + len, SUBMIT, one);
		len += one;
		buf[len++] = i + 1 < k ? ',' : ']';
	}
	buf[len++] = '\n';
	return len;
}

/* Submit n more jobs, FILL_DEPTH batches of FILL_BATCH in flight. */
static void
fill(int port, long n)
{
	char	*win = malloc(FILL_DEPTH * (FILL_BATCH * strlen(SUBMIT) + 2));
	size_t	 len = 0;
	long	 done = 0, next = 100000, k;
	int	 fd = broker_dial(port), i;

	if (fd == -1 || win == NULL)
		die("fill: %s", strerror(errno));
	for (i = 0; i < FILL_DEPTH; i++)
		len += batch(win + len, FILL_BATCH);
	while (n - done >= FILL_DEPTH * FILL_BATCH) {
		xfer(fd, win, len, FILL_DEPTH);
		if ((done += FILL_DEPTH * FILL_BATCH) >= next) {
			fprintf(stderr, "  %ld submitted\n", done);
			next += 100000;
		}
	}
	for (; done < n; done += k) {
		k = n - done < FILL_BATCH ? n - done : FILL_BATCH;
		xfer(fd, win, batch(win, (int)k), 1);
	}
	close(fd);
	free(win);
}

/*
 * Fill the queue up to n jobs.  A second pass tops it up when the first
 * job filled started (nothing ran: a restart failed the job that did);
 * die if the queue still falls short.
 */
static void
fill_to(int port, long n)
{
	long	q = queued(port);
	int	pass;

	for (pass = 0; pass < 3 && q < n; pass++) {
		fill(port, n - q);
		q = queued(port);
	}
	if (q < n)
		die("the queue holds %ld jobs, not %ld: submits failed", q, n);
}

/* Submit one job: its ticket's number. */
static long
ticket_now(int port)
{
	json_object	*o;
	long		 n;
	int		 fd;

	if ((fd = broker_dial(port)) == -1)
		die("dial: %s", strerror(errno));
	o = rpc(fd, SUBMIT);
	if (strncmp(result_str(o, "ticket"), "t-", 2) != 0)
		die("a submit failed: %s", json_object_to_json_string(o));
	n = atol(result_str(o, "ticket") + 2);
	json_object_put(o);
	close(fd);
	return n;
}

/* Cancel the queued jobs from ticket number lo to hi, 100 a batch. */
static void
cancel(int port, long lo, long hi)
{
	char	*b = malloc(FILL_BATCH * 128 + 4);
	size_t	 len;
	long	 t;
	int	 fd = broker_dial(port), k;

	if (fd == -1 || b == NULL)
		die("cancel: %s", strerror(errno));
	for (t = lo; t <= hi; ) {
		len = 0;
		b[len++] = '[';
		for (k = 0; t <= hi && k < FILL_BATCH; t++, k++)
			len += (size_t)snprintf(b + len, 128, "%s{\"jsonrpc\":"
			    "\"2.0\",\"id\":1,\"method\":\"cancel_job\","
			    "\"params\":{\"ticket\":\"t-%06ld\"}}",
			    k > 0 ? "," : "", t);
		b[len++] = ']';
		b[len++] = '\n';
		xfer(fd, b, len, 1);
	}
	close(fd);
	free(b);
}

/*
 * CLIENTS clients submit n jobs each, as fast as they can: submits per
 * second.  A few untimed submits first, so that a broker just started is
 * measured warm.  The jobs are cancelled after, so that the next window
 * finds the queue as long as this one did.
 */
static double
window(int port, int n)
{
	long	first = ticket_now(port);
	double	rate;

	concurrent(port, SUBMIT, 1, CLIENTS, WARM_N);
	rate = concurrent(port, SUBMIT, 1, CLIENTS, n);
	cancel(port, first, first + (long)CLIENTS * (WARM_N + n));
	return rate;
}

/* Restart s under sync and run its window of n a client: the rate. */
static double
side_window(struct side *s, const char *sync, int n, double *ms)
{
	double	t;

	broker_stop(&s->b);
	t = restart(&s->b, sync, s->state, s->probe) * 1e3;
	if (ms != NULL)
		*ms = t;
	return window(s->b.port, n);
}

/*
 * The full broker's window and the empty one's, one right after the
 * other, restarted under sync; the empty one first when swap is set.
 */
static void
pair(struct side *f, struct side *e, const char *sync, int n, int swap,
    double *fr, double *er, double *ms)
{
	if (swap)
		*er = side_window(e, sync, n, NULL);
	*fr = side_window(f, sync, n, ms);
	if (!swap)
		*er = side_window(e, sync, n, NULL);
}

/*
 * At one level: rounds times, the full broker restarted under --sync
 * full (timed) and its window beside the empty broker's, then the same
 * under --sync none: each window of the level has the empty queue's
 * beside it, in time, which of the two first alternating from round to
 * round.  The brokers left running are --sync none ones.
 */
static void
measure(struct side *f, struct side *e, struct level *l)
{
	int	r;

	l->queued = queued(f->b.port);
	f->probe = ticket_now(f->b.port);	/* stays queued, at the end */
	for (r = 0; r < rounds; r++) {
		pair(f, e, "full", FULL_N, r % 2, &l->full[r], &l->efull[r],
		    &l->restart[2 * r]);
		pair(f, e, "none", NONE_N, r % 2, &l->none[r], &l->enone[r],
		    &l->restart[2 * r + 1]);
	}
	l->rss = rss_kib(f->b.pid);
	fprintf(stderr, "  %ld queued: %.0f/s --sync none (empty %.0f/s), "
	    "%.0f/s full (empty %.0f/s), restart %.0f ms\n", l->queued,
	    summarize(l->none, rounds).med, summarize(l->enone, rounds).med,
	    summarize(l->full, rounds).med, summarize(l->efull, rounds).med,
	    summarize(l->restart, 2 * rounds).med);
}

static void
rows(const struct level *l, int n)
{
	char	what[128];
	double	per;
	int	i, top;

	for (i = 1; i < n; i++) {
		top = l[i].queued >= MILLION;
		snprintf(what, sizeof(what), "submits, --sync none, %d clients, "
		    "%ld queued", CLIENTS, l[i].queued);
		table_row(what, "/s", l[i].none, "at an empty queue", l[i].enone,
		    rounds, top ? GOAL_RATIO_GE : GOAL_NONE, 0.9,
		    top ? ">= 0.9x" : NULL);
		snprintf(what, sizeof(what), "submits, --sync full, %d clients, "
		    "%ld queued", CLIENTS, l[i].queued);
		table_row(what, "/s", l[i].full, "at an empty queue", l[i].efull,
		    rounds, top ? GOAL_RATIO_GE : GOAL_NONE, 0.9,
		    top ? ">= 0.9x" : NULL);
	}
	for (i = 0; i < n; i++) {
		top = l[i].queued >= MILLION;
		snprintf(what, sizeof(what), "restart with %ld queued, exec to "
		    "a poll_job answered", l[i].queued);
		table_row(what, "ms", l[i].restart, NULL, NULL, 2 * rounds,
		    top ? GOAL_LE : GOAL_NONE, 500, top ? "<= 500 ms" : NULL);
	}
	per = (l[n - 1].rss - l[0].rss) * 1024.0 /
	    (l[n - 1].queued > l[0].queued ? l[n - 1].queued - l[0].queued : 1);
	snprintf(what, sizeof(what), "broker RSS per queued job, %ld to %ld "
	    "queued (after a restart)", l[0].queued, l[n - 1].queued);
	table_row(what, "bytes", &per, NULL, NULL, 1, GOAL_NONE, 0, NULL);
}

int
scale_main(void)
{
	static struct level	 l[LEVELS];
	static const long	 at[] = { 0, 10000, 100000, MILLION };
	struct side		 f, e;
	char			 what[256], state[512], estate[512];
	long			 max;
	double			 t0 = now();
	int			 n = 0, i;

	setup();
	if (rounds > MAXR / 2)
		rounds = MAXR / 2;
	max = getenv("BENCH_SCALE_MAX") ? atol(getenv("BENCH_SCALE_MAX")) :
	    MILLION;
	if (max < 1000 || max > 5 * MILLION)
		die("BENCH_SCALE_MAX must be from 1000 to 5000000");
	snprintf(state, sizeof(state), "%s", tmp("scale-state"));
	snprintf(estate, sizeof(estate), "%s", tmp("scale-empty"));
	f.state = state;
	e.state = estate;
	start_held(&f.b, "none", state, map);
	start_held(&e.b, "none", estate, map);
	e.probe = ticket_now(e.b.port);
	for (i = 0; i < 4 && at[i] <= max; i++) {
		fill_to(f.b.port, at[i]);
		measure(&f, &e, &l[n++]);
	}
	if (at[n - 1] < max) {
		fill_to(f.b.port, max);
		measure(&f, &e, &l[n++]);
	}
	broker_stop(&f.b);
	broker_stop(&e.b);
	rows(l, n);
	snprintf(what, sizeof(what), "`make bench-scale`: up to %ld queued, %d "
	    "windows a level (%d clients), %.0f s in all; medians [min-max]",
	    max, rounds, CLIENTS, now() - t0);
	finish("bench-scale", what, 1);
	return 0;
}
