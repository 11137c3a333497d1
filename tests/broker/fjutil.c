/* SPDX-License-Identifier: ISC */
/*
 * What the face job and editor state suites share (check_facejob,
 * check_edstate): a server with its engine in this process, on a
 * temporary state dir, its workers real cmdgate-workers; the loop run
 * until what a test awaits, bounded by TN_TIMEOUT_MS.  Two tables: exec
 * tools (hold and rebuild block on a FIFO), and the shipped
 * unity-mcp.json against the fake bridge (tests/fake_unity.c).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "../../src/daemon/daemon.h"
#include "../../src/engine/internal.h"
#include "engine.h"
#include "faces.h"
#include "fakeutil.h"
#include "fjutil.h"
#include "proc.h"
#include "server.h"
#include "testnet.h"
#include "tools.h"
#include "util.h"

#define TICK_MS		50	/* the loop wakes at least this often */

struct event_base	*base;
static struct event	*tick;
struct options		 opt;
struct server		 srv;
struct fake		 fk;
char			 dir[64], fifo[128];
static char		 tools[128];

void
on_news(void *arg, const struct facejob_news *n)
{
	struct got	*g = arg;

	g->n++;
	g->ev = n->event;
	snprintf(g->ticket, sizeof(g->ticket), "%s", n->ticket != NULL ?
	    n->ticket : "(null)");
	g->ok = n->ok;
	g->attached = n->attached;
	g->code = n->code;
	snprintf(g->type, sizeof(g->type), "%s", n->type != NULL ? n->type :
	    "");
	snprintf(g->why, sizeof(g->why), "%s", n->why != NULL ? n->why : "");
	json_object_put(g->result);
	g->result = json_object_get(n->result);
}

static void
on_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

/* Run the loop until cond(arg). */
void
loop_until(int (*cond)(void *), void *arg, const char *what)
{
	int64_t	deadline = util_monotonic_ms() + TN_TIMEOUT_MS;

	while (!cond(arg)) {
		ck_assert_msg(util_monotonic_ms() < deadline, "no %s within "
		    "%d ms", what, TN_TIMEOUT_MS);
		event_base_loop(base, EVLOOP_ONCE);
	}
}

static int
told(void *arg)
{
	return ((struct got *)arg)->n > 0;
}

/* Wait for g's news: it is event ev, once. */
void
await_news(struct got *g, enum facejob_event ev)
{
	loop_until(told, g, "news");
	ck_assert_int_eq(g->n, 1);
	ck_assert_msg(g->ev == ev, "news %d (%s), not %d", g->ev, g->why, ev);
}

void
got_free(struct got *g)
{
	json_object_put(g->result);
	g->result = NULL;
}

int
ended(void *arg)
{
	return !job_pending(srv.jobs, *(uint64_t *)arg);
}

int
running(void *arg)
{
	struct job	*j = job_find(srv.jobs, *(uint64_t *)arg);

	return j != NULL && j->status == JOB_RUNNING;
}

int
queued(void *arg)
{
	struct job	*j = job_find(srv.jobs, *(uint64_t *)arg);

	return j != NULL && j->status == JOB_QUEUED;
}

/* How many lines of the fake's log begin with prefix, all of it read. */
int
fake_seen(const char *prefix)
{
	fake_ctl(&fk, "compiling 0");	/* it is not: a sync point */
	fake_await(&fk, "ctl compiling 0");
	return fake_count(&fk, prefix);
}

void
await_ended(uint64_t num)
{
	loop_until(ended, &num, "end of the job");
}

void
await_running(uint64_t num)
{
	loop_until(running, &num, "start of the job");
}

/* facejob_start with params as JSON text (NULL: none); no news yet. */
struct facejob *
start(struct got *g, const char *agent, const char *tool,
    const char *params, uint64_t hold_ms, int want_first)
{
	return start_on(0, g, agent, tool, params, hold_ms, want_first);
}

struct facejob *
start_on(uint64_t conn, struct got *g, const char *agent, const char *tool,
    const char *params, uint64_t hold_ms, int want_first)
{
	struct facejob_req	 req;
	struct facejob		*fj;
	json_object		*p = params != NULL ?
				    json_tokener_parse(params) : NULL;

	ck_assert(params == NULL || p != NULL);
	memset(g, 0, sizeof(*g));
	memset(&req, 0, sizeof(req));
	req.conn = conn;
	req.agent = agent;
	req.tool = tool;
	req.params = p;
	req.hold_ms = hold_ms;
	req.want_first = want_first;
	fj = facejob_start(&srv, &req, on_news, g);
	json_object_put(p);
	ck_assert_ptr_nonnull(fj);
	ck_assert_int_eq(g->n, 0);	/* never from facejob_start */
	return fj;
}

/* The result member at path (dots), as a string. */
const char *
res_str(struct got *g, const char *path)
{
	json_object	*v = jpath(g->result, path);

	ck_assert_msg(v != NULL, "no %s in %s", path,
	    json_object_to_json_string(g->result));
	return json_object_get_string(v);
}

/* How many jobs the store has ever taken. */
uint64_t
njobs(void)
{
	uint64_t	n = 0;
	int		i;

	for (i = 0; i < JOB_NSTATUS; i++)
		n += srv.jobs->count[i];
	return n;
}

/* The blocked tool's FIFO opened for writing (and closed): it ends. */
static int
released(void *arg)
{
	int	fd = open(fifo, O_WRONLY | O_NONBLOCK);

	(void)arg;
	if (fd == -1) {
		ck_assert_int_eq(errno, ENXIO);	/* no reader yet */
		return 0;
	}
	close(fd);
	return 1;
}

/* The loop runs meanwhile: the tool's worker may still need its spec. */
void
release(void)
{
	loop_until(released, NULL, "reader of the FIFO");
}

static int
fake_logged(void *prefix)
{
	return fake_poll(&fk, prefix);
}

/*
 * The built cmdgate-worker, beside $CMDGATED's src/ (the suite's own
 * executable is in tests/broker/, where launch_find_worker would not
 * find workers/), unless $CMDGATE_WORKER names one.
 */
static void
worker_beside_broker(void)
{
	const char	*broker = getenv("CMDGATED"), *slash;
	char		 path[PATH_MAX];

	if (getenv("CMDGATE_WORKER") != NULL || broker == NULL ||
	    (slash = strrchr(broker, '/')) == NULL)
		return;
	snprintf(path, sizeof(path), "%.*s/../workers/cmdgate-worker",
	    (int)(slash - broker), broker);
	setenv("CMDGATE_WORKER", path, 1);
}

/* fake_await with the loop running: the job that makes it log runs. */
void
await_fake(const char *prefix)
{
	loop_until(fake_logged, (void *)prefix, prefix);
}

/* The server on table (a file), its engine open, with --sync sync. */
static void
server_up(const char *sync)
{
	char		 state[128], err[1024];
	char		*argv[] = { "cmdgated", "--state-dir", state, "--tools",
			    tools, "--kill-grace", "1", "--sync", (char *)sync,
			    NULL };
	struct tooltab	*tab;

	snprintf(state, sizeof(state), "%s/state", dir);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(options_parse(&opt, 9, argv, stdout, err,
	    sizeof(err)), OPT_RUN);
	ck_assert_msg(tooltab_load_file(tools, &tab, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_ptr_nonnull(base = event_base_new());
	tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	event_add(tick, &(struct timeval){ 0, TICK_MS * 1000 });
	server_init(&srv, base, &opt, tab);
	worker_beside_broker();
	ck_assert_msg(launch_find_worker(&srv.worker_path, err,
	    sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(server_jobs_open(&srv), 0);
}

void
setup_exec(void)
{
	char	json[2048];

	snprintf(dir, sizeof(dir), "/tmp/cgfj.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/release", dir);
	snprintf(tools, sizeof(tools), "%s/tools.json", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	snprintf(json, sizeof(json), "{\"tools\":["
	    "{\"name\":\"hold\",\"tier\":\"heavy\",\"busy\":\"tests_running\","
	    " \"exec\":[\"sh\",\"-c\",\"cat %s >/dev/null\"]},"
	    "{\"name\":\"later\",\"tier\":\"heavy\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"required\":"
	    "[\"text\"],\"properties\":{\"text\":{\"type\":\"string\"},"
	    "\"n\":{\"type\":\"integer\"}}}},"
	    "{\"name\":\"echo\",\"tier\":\"instant\",\"exec\":[\"echo\","
	    "\"{text}\"],\"params\":{\"type\":\"object\",\"required\":"
	    "[\"text\"],\"properties\":{\"text\":{\"type\":\"string\"}}}},"
	    "{\"name\":\"locked\",\"enabled\":false,\"exec\":[\"true\"]},"
	    "{\"name\":\"rebuild\",\"reload\":true,\"exec\":[\"sh\",\"-c\","
	    "\"cat %s >/dev/null\"]}"
	    "]}", fifo, fifo);
	write_file(tools, json, 0600);
	fk.pid = 0;
	server_up("full");
}

static void
unity_up(const char *sync)
{
	snprintf(dir, sizeof(dir), "/tmp/cgfj.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	fifo[0] = '\0';
	snprintf(tools, sizeof(tools), "%s/tools.json", dir);
	fake_start(&fk, "FAKE_UNITY", NULL);
	table_for(tools, "unity-mcp.json", fk.port, NULL, NULL);
	server_up(sync);
}

void
setup_unity(void)
{
	unity_up("full");
}

void
setup_unity_group(void)
{
	unity_up("group");
}

static int
idle(void *arg)
{
	(void)arg;
	return jobs_idle(srv.jobs) && !edprobe_alive(srv.probe);
}

void
teardown(void)
{
	char	cmd[128];

	jobs_shutdown(srv.jobs);
	server_probe_stop(&srv);
	loop_until(idle, NULL, "exit of every worker");
	server_free(&srv);
	event_free(tick);
	event_base_free(base);
	options_free(&opt);
	if (fk.pid > 0)
		fake_stop(&fk);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* What a subscriber to the editor state saw. */
