/* SPDX-License-Identifier: ISC */
/*
 * Load: many idle connections, a long queue polled by many clients, a
 * client that never reads and one that sends a byte at a time.  The broker
 * must keep answering and its memory must stay bounded.  Prints ping
 * latency under load and RSS.  LOAD_CONNS, LOAD_JOBS and LOAD_POLLERS set
 * the counts (default 2000, 200, 20; "make load" uses 10000, 1000, 100).
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>

#include "ckrun.h"
#include "testnet.h"

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define NJOBS_MAX	1000
#define NPOLLERS_MAX	100

static struct broker	b;

static void
setup(void)
{
	broker_prepare(&b);
}

static void
teardown(void)
{
	broker_stop(&b);
}

/* A broker built with ASan keeps freed memory in quarantine: its RSS says
 * nothing about ours. */
static int
under_asan(pid_t pid)
{
	char	 path[64], line[512];
	int	 asan = 0;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (!asan && fgets(line, sizeof(line), f) != NULL)
		asan = strstr(line, "libasan") != NULL;
	fclose(f);
	return asan;
}

static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b2)
{
	double	x = *(const double *)a, y = *(const double *)b2;

	return x < y ? -1 : x > y;
}

/* Ping n times; the median and the largest round trip, in ms. */
static void
ping_latency(struct client *c, int n, double *median, double *max)
{
	double	*t = calloc((size_t)n, sizeof(double)), t0;
	int	 i;
	json_object *r;

	for (i = 0; i < n; i++) {
		t0 = now_ms();
		r = client_call(c, PING);
		t[i] = now_ms() - t0;
		ck_assert_ptr_nonnull(jpath(r, "result"));
		json_object_put(r);
	}
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	*median = t[n / 2];
	*max = t[n - 1];
	free(t);
}

START_TEST(load)
{
	const char	*env = getenv("LOAD_CONNS");
	const char	*ej = getenv("LOAD_JOBS"), *ep = getenv("LOAD_POLLERS");
	int		 nconns = env ? atoi(env) : 2000, i, *fds, lazy, slow;
	int		 NJOBS = ej ? atoi(ej) : 200, NPOLLERS = ep ? atoi(ep) : 20;
	const char	*args[] = { "--max-clients", "100000", "--tools", NULL,
			    "--max-queued", "100000", NULL };
	char		 tools[256], line[256], tickets[NJOBS_MAX][32];
	struct rlimit	 rl;
	struct client	*c, *pollers[NPOLLERS_MAX];
	double		 med0, max0, med1, max1, med2, max2;
	long		 rss0, rss1, rss2;
	json_object	*r;
	char		*burst;
	size_t		 blen = 20000 * (strlen(PING) + 1);

	ck_assert(NJOBS > 0 && NJOBS <= NJOBS_MAX);
	ck_assert(NPOLLERS > 0 && NPOLLERS <= NPOLLERS_MAX);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	ck_assert_msg(rl.rlim_cur > (rlim_t)nconns + 100, "RLIMIT_NOFILE %lu "
	    "is below %d connections", (unsigned long)rl.rlim_cur, nconns);
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	write_file(tools, "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\","
	    "\"exec\":[\"sleep\",\"3600\"]},{\"name\":\"work\",\"tier\":"
	    "\"heavy\",\"exec\":[\"true\"]}]}", 0600);
	args[3] = tools;
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
	c = client_tcp(b.port);
	ping_latency(c, 200, &med0, &max0);
	rss0 = rss_kib(b.pid);

	/* Idle connections. */
	fds = calloc((size_t)nconns, sizeof(int));
	for (i = 0; i < nconns; i++)
		ck_assert_msg((fds[i] = broker_dial(b.port)) != -1, "connection %d: %s",
		    i, strerror(errno));
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"server_status\"}");
	ck_assert_int_ge(json_object_get_int(jpath(r, "result.clients")),
	    nconns);
	json_object_put(r);
	rss1 = rss_kib(b.pid);
	ping_latency(c, 200, &med1, &max1);

	/* A client that never reads, and one that sends a byte at a time. */
	lazy = broker_dial(b.port);
	burst = malloc(blen);
	for (i = 0; i < 20000; i++) {
		memcpy(burst + (size_t)i * (strlen(PING) + 1), PING,
		    strlen(PING));
		burst[(size_t)i * (strlen(PING) + 1) + strlen(PING)] = '\n';
	}
	fcntl(lazy, F_SETFL, O_NONBLOCK);
	(void)!send(lazy, burst, blen, MSG_NOSIGNAL);
	free(burst);
	slow = broker_dial(b.port);
	(void)!send(slow, "{\"jsonrpc\":\"2.0\",", 17, MSG_NOSIGNAL);

	/* A long queue behind a job that holds it, polled by many. */
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"hold\"}]}}");
	json_object_put(r);
	for (i = 0; i < NJOBS; i++) {
		r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"work\"}]}}");
		snprintf(tickets[i], sizeof(tickets[i]), "%s",
		    json_object_get_string(jpath(r, "result.ticket")));
		json_object_put(r);
	}
	for (i = 0; i < NPOLLERS; i++)
		pollers[i] = client_tcp(b.port);
	for (i = 0; i < NJOBS * 5; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":5,"
		    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}",
		    tickets[i % NJOBS]);
		r = client_call(pollers[i % NPOLLERS], line);
		ck_assert_str_eq(json_object_get_string(jpath(r,
		    "result.status")), "queued");
		json_object_put(r);
	}
	ping_latency(c, 200, &med2, &max2);
	rss2 = rss_kib(b.pid);
	printf("load: %d idle connections, %d queued jobs polled by %d "
	    "clients, one client not reading, one sending slowly\n",
	    nconns, NJOBS, NPOLLERS);
	printf("load: ping median/max ms: idle %.3f/%.3f, with connections "
	    "%.3f/%.3f, with the queue %.3f/%.3f\n", med0, max0, med1, max1,
	    med2, max2);
	printf("load: RSS KiB: idle %ld, with connections %ld (%.2f KiB "
	    "each), at the end %ld\n", rss0, rss1,
	    (double)(rss1 - rss0) / nconns, rss2);
	fflush(stdout);
	/* Bounded: per connection, and in all. */
	if (under_asan(b.pid))
		printf("load: the broker runs under ASan: RSS not checked\n");
	else {
		ck_assert_int_lt((rss1 - rss0) / nconns, 64);
		ck_assert_int_lt(rss2, rss1 + 64 * 1024);
	}
	for (i = 0; i < NPOLLERS; i++)
		client_close(pollers[i]);
	for (i = 0; i < nconns; i++)
		close(fds[i]);
	free(fds);
	close(lazy);
	close(slow);
	r = client_call(c, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"cancel_job\",\"params\":{\"ticket\":\"t-000000\"}}");
	json_object_put(r);
	client_close(c);
}
END_TEST

static Suite *
load_suite(void)
{
	Suite	*s = suite_create("load");
	TCase	*tc = tcase_create("load");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, load);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return ck_run(load_suite());
}
