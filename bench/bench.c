/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: cmdgate beside its floors (a loopback request/answer, a
 * process spawn), its peers (beanstalkd, task-spooler) and the editor it
 * stands before (a stand-in bridge, editor.c), on this machine, in one
 * run.  Every repetition of a figure runs next to its peer's; the table
 * shows the median and min-max of both and of their ratio, pair by pair,
 * and the targets of issues 15 and 33.  See bench/README.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench.h"
#include "broker.h"
#include "editor.h"
#include "peers.h"
#include "table.h"

#define MAXR		64
#define RTT_N		2000
#define SUBMIT_N	400
#define CLIENTS		16
#define GUARD_PER_ROUND	4

const char	*cmdgated, *stamp;
int		 rounds = 5, jobs = 500;
static char	*tsp_sock;	/* a task-spooler server runs there */

/* ---- 1. round trip ------------------------------------------------------ */

/*
 * n requests on each of nfd connections, one connection after the other
 * request by request, so that each pair saw the same moment of the
 * machine; the median round trip of each, in microseconds, into med.
 */
static void
rtt_us(const int *fd, const char *const *req, int nfd, int n, double *med)
{
	double	*t = calloc((size_t)(n * nfd), sizeof(double)), t0;
	int	 i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < nfd; k++) {
			t0 = now();
			xfer(fd[k], req[k], strlen(req[k]), 1);
			t[k * n + i] = (now() - t0) * 1e6;
		}
	for (k = 0; k < nfd; k++)
		med[k] = summarize(t + k * n, n).med;
	free(t);
}

/*
 * Put the bench and the servers on one CPU (the last) for the round trips
 * and the 1-client submits: on a VM a wakeup across CPUs can cost more
 * than the work measured (an IPI is a VM exit), and where each process
 * happened to land would decide the figure.  The bench's own set is kept
 * in old, to restore.
 */
static void
pin(const pid_t *pids, int n, cpu_set_t *old)
{
	cpu_set_t	one;
	int		i;

	sched_getaffinity(0, sizeof(*old), old);
	CPU_ZERO(&one);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
	sched_setaffinity(0, sizeof(one), &one);
	for (i = 0; i < n; i++)
		if (sched_setaffinity(pids[i], sizeof(one), &one) == -1)
			die("sched_setaffinity: %s", strerror(errno));
}

/* Undo pin(): the bench and the servers back on the set in old. */
static void
unpin(const pid_t *pids, int n, const cpu_set_t *old)
{
	int	i;

	sched_setaffinity(0, sizeof(*old), old);
	for (i = 0; i < n; i++)
		if (sched_setaffinity(pids[i], sizeof(*old), old) == -1)
			die("sched_setaffinity: %s", strerror(errno));
}

static void
bench_rtt(void)
{
	const char	*req[3] = { PING, PING, BPUT };
	struct broker	 b;
	double		 f[MAXR], c[MAXR], q[MAXR], m[3];
	int		 fd[3], fport, bport, r, k;
	pid_t		 pids[3];
	cpu_set_t	 old;

	pids[0] = floor_start(&fport);
	pids[1] = beanstalkd_start(&bport, NULL);
	broker_start(&b, NULL, "full", tmp("rtt-state"), NULL);
	pids[2] = b.pid;
	pin(pids, 3, &old);
	for (r = 0; r < rounds; r++) {
		fd[0] = broker_dial(fport);
		fd[1] = broker_dial(b.port);
		fd[2] = broker_dial(bport);
		if (fd[0] == -1 || fd[1] == -1 || fd[2] == -1)
			die("dial: %s", strerror(errno));
		rtt_us(fd, req, 3, RTT_N, m);
		f[r] = m[0];
		c[r] = m[1];
		q[r] = m[2];
		for (k = 0; k < 3; k++)
			close(fd[k]);
	}
	sched_setaffinity(0, sizeof(old), &old);
	broker_stop(&b);
	stop(pids[1]);
	stop(pids[0]);
	table_row("ping round trip", "us", c, "loopback floor", f, rounds,
	    GOAL_RATIO_LE, 1.2, "<= 1.2x");
	table_row("ping round trip", "us", c, "beanstalkd put, no binlog", q,
	    rounds, GOAL_NONE, 0, NULL);
}

/* ---- 2. submits --------------------------------------------------------- */

static const char *hold_tools =
    "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\",\"exec\":[\"sleep\","
    "\"3600\"]},{\"name\":\"queued\",\"tier\":\"heavy\",\"exec\":"
    "[\"sleep\",\"3600\"]}]}";

/*
 * A broker whose one heavy job runs for an hour: every submit only queues.
 * The queued jobs would run for an hour too, should one ever start (after
 * a restart, bench-scale's).
 */
void
start_held(struct broker *b, const char *sync, const char *state,
    const char *const *extra)
{
	int	fd;

	write_text(tmp("hold.json"), hold_tools);
	broker_start(b, tmp("hold.json"), sync, state, extra);
	if ((fd = broker_dial(b->port)) == -1)
		die("dial: %s", strerror(errno));
	json_object_put(rpc(fd, HOLD));
	close(fd);
}

struct submits {
	double	c1[MAXR], c16[MAXR], q1[MAXR], q16[MAXR], cc[MAXR], qc[MAXR];
};

/* One repetition: cmdgate and beanstalkd side by side, phase by phase. */
static void
submits_round(struct submits *s, int r, const char *sync, const char *binlog)
{
	struct broker	b;
	char		state[64];
	double		u, v;
	int		bport, total = SUBMIT_N + CLIENTS * (SUBMIT_N / 4);
	pid_t		bs, pids[2];
	cpu_set_t	old;

	snprintf(state, sizeof(state), "sub-%s-%d", sync, r);
	start_held(&b, sync, tmp(state), NULL);
	if (binlog != NULL) {
		rmtree(binlog);
		mkdir(binlog, 0700);
	}
	bs = beanstalkd_start(&bport, binlog);
	u = cpu_s(b.pid);
	v = cpu_s(bs);
	pids[0] = b.pid;
	pids[1] = bs;
	pin(pids, 2, &old);
	s->c1[r] = concurrent(b.port, SUBMIT, 1, 1, SUBMIT_N);
	s->q1[r] = concurrent(bport, BPUT, 1, 1, SUBMIT_N);
	unpin(pids, 2, &old);
	s->c16[r] = concurrent(b.port, SUBMIT, 1, CLIENTS, SUBMIT_N / 4);
	s->q16[r] = concurrent(bport, BPUT, 1, CLIENTS, SUBMIT_N / 4);
	s->cc[r] = (cpu_s(b.pid) - u) / total * 1e6;
	s->qc[r] = (cpu_s(bs) - v) / total * 1e6;
	broker_stop(&b);
	rmtree(tmp(state));
	stop(bs);
}

static void
bench_submits(const char *sync, int durable)
{
	struct submits	 s;
	const char	*kind = durable ? "durable submits" : "submits";
	char		 binlogdir[512], what[96], peer[64];
	int		 r;

	/* tmp() rotates its buffers: keep a copy that outlives the loop. */
	snprintf(binlogdir, sizeof(binlogdir), "%s", tmp("binlog"));
	snprintf(peer, sizeof(peer), "beanstalkd %s", durable ? "-f0" :
	    "no binlog");
	for (r = 0; r < rounds; r++)
		submits_round(&s, r, sync, durable ? binlogdir : NULL);
	snprintf(what, sizeof(what), "%s, --sync %s, 1 client", kind, sync);
	table_row(what, "/s", s.c1, peer, s.q1, rounds, GOAL_RATIO_GE, 1,
	    ">= 1x");
	snprintf(what, sizeof(what), "%s, --sync %s, %d clients", kind, sync,
	    CLIENTS);
	table_row(what, "/s", s.c16, peer, s.q16, rounds, GOAL_RATIO_GE,
	    durable ? 3 : 1, durable ? ">= 3x" : ">= 1x");
	snprintf(what, sizeof(what), "CPU per submit, --sync %s, both phases",
	    sync);
	table_row(what, "us", s.cc, peer, s.qc, rounds, GOAL_RATIO_LE, 1,
	    "<= 1x (item 4)");
}

/* ---- 3. jobs ------------------------------------------------------------ */

/* jobs /bin/true jobs through cmdgate: submit all, wait for all; jobs/s. */
static double
cmdgate_true(const char *tier, const char *sync, const char *slots)
{
	const char	*extra[] = { "--max-workers", slots, NULL };
	struct broker	 b;
	char		 json[512], state[64], line[256];
	char		(*tickets)[32] = calloc((size_t)jobs, 32);
	json_object	*o;
	double		 t0, t;
	int		 fd, i;

	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"true\","
	    "\"tier\":\"%s\",\"exec\":[\"/bin/true\"]}]}", tier);
	write_text(tmp("true.json"), json);
	snprintf(state, sizeof(state), "true-%s-%s", tier, sync);
	broker_start(&b, tmp("true.json"), sync, tmp(state),
	    slots != NULL ? extra : NULL);
	fd = broker_dial(b.port);
	t0 = now();
	for (i = 0; i < jobs; i++) {
		o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"true\"}]}}\n");
		snprintf(tickets[i], 32, "%s", result_str(o, "ticket"));
		json_object_put(o);
	}
	for (i = 0; i < jobs; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
		    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
		    "\"timeout_s\":600}}\n", tickets[i]);
		o = rpc(fd, line);
		if (strcmp(result_str(o, "status"), "done") != 0)
			die("%s did not finish", tickets[i]);
		json_object_put(o);
	}
	t = now() - t0;
	close(fd);
	broker_stop(&b);
	rmtree(tmp(state));
	free(tickets);
	return jobs / t;
}

/* task-spooler with slots slots: add every job, wait for the last. */
static double
tsp_true(const char *slots)
{
	static char	 sock[300];
	char		 env0[400], env1[400], *envp[] = { env0, env1,
			    "PATH=/usr/bin:/bin", NULL };
	char		*set[] = { "tsp", "-S", (char *)slots, NULL };
	char		*add[] = { "tsp", "/bin/true", NULL };
	char		*wait[] = { "tsp", "-w", NULL };
	char		*kill_[] = { "tsp", "-K", NULL };
	double		 t0, t;
	int		 i;

	snprintf(sock, sizeof(sock), "%s", tmp("tsp.sock"));
	snprintf(env0, sizeof(env0), "TS_SOCKET=%s", sock);
	/* Its jobs' output files (ts-out.*) go with the temp dir. */
	snprintf(env1, sizeof(env1), "TMPDIR=%s", tmpdir);
	tsp_sock = sock;
	run_wait(set, envp);
	t0 = now();
	for (i = 0; i < jobs; i++)
		run_wait(add, envp);
	run_wait(wait, envp);	/* the last job */
	if (strcmp(slots, "1") != 0)
		run_wait(wait, envp);
	t = now() - t0;
	run_wait(kill_, envp);
	tsp_sock = NULL;
	return jobs / t;
}

static void
bench_jobs(void)
{
	double	hn[MAXR], fl[MAXR], hf[MAXR], t1[MAXR], s2[MAXR], t2[MAXR];
	double	hg[MAXR];
	int	r;

	for (r = 0; r < rounds; r++) {
		hn[r] = cmdgate_true("heavy", "none", NULL);
		fl[r] = spawn_floor(jobs);
		hf[r] = cmdgate_true("heavy", "full", NULL);
		t1[r] = tsp_true("1");
		hg[r] = cmdgate_true("heavy", "group", NULL);
		s2[r] = cmdgate_true("smooth", "full", "2");
		t2[r] = tsp_true("2");
	}
	table_row("heavy serial /bin/true, --sync none", "jobs/s", hn,
	    "posix_spawn+wait", fl, rounds, GOAL_RATIO_GE, 0.8, ">= 0.8x");
	table_row("heavy serial /bin/true, --sync full", "jobs/s", hf,
	    "task-spooler 1 slot", t1, rounds, GOAL_RATIO_GE, 1.3, ">= 1.3x");
	table_row("heavy serial /bin/true, --sync group", "jobs/s", hg,
	    "task-spooler 1 slot", t1, rounds, GOAL_NONE, 0, NULL);
	table_row("smooth /bin/true, --max-workers 2, --sync full", "jobs/s",
	    s2, "task-spooler 2 slots", t2, rounds, GOAL_RATIO_GE, 1.5,
	    ">= 1.5x");
}

/* ---- 4. guard ----------------------------------------------------------- */

/* Wait for fd to be readable (bounded); die on timeout. */
static void
await_fd(int fd, const char *what)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };

	if (poll(&pfd, 1, BROKER_TIMEOUT_MS) != 1)
		die("no %s within %d ms", what, BROKER_TIMEOUT_MS);
}

/*
 * One guard release: a test job whose tool (cmdgate-stamp hold) names its
 * worker and waits, a reload job held behind it; the test tool is let go,
 * and the figure runs from its worker's exit (its pidfd) to the reload
 * tool's stamp.  Seconds.
 */
static double
guard_once(int fd, const char *out, const char *in)
{
	char		 line[256], rt[32], pid[32];
	json_object	*o;
	int		 ofd, ifd, pfd;
	ssize_t		 n;
	double		 t0;

	if ((ofd = open(out, O_RDONLY | O_NONBLOCK)) == -1)
		die("%s: %s", out, strerror(errno));
	json_object_put(rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"tests\"}]}}\n"));
	o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"reload\"}]}}\n");
	snprintf(rt, sizeof(rt), "%s", result_str(o, "ticket"));
	json_object_put(o);
	await_fd(ofd, "test tool");
	if ((n = read(ofd, pid, sizeof(pid) - 1)) <= 0)
		die("the test tool named no worker");
	pid[n] = '\0';
	close(ofd);
	if ((pfd = pidfd_open(atoi(pid), 0)) == -1)
		die("pidfd_open %s: %s", pid, strerror(errno));
	if ((ifd = open(in, O_WRONLY)) == -1 || write(ifd, "x", 1) != 1)
		die("%s: %s", in, strerror(errno));
	close(ifd);
	await_fd(pfd, "exit of the test worker");
	t0 = now();
	close(pfd);
	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"%s\"}}\n", rt);
	o = rpc(fd, line);
	if (strcmp(result_str(o, "status"), "done") != 0)
		die("the reload job %s did not finish", rt);
	t0 = strtoll(json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(json_object_object_get(
	    json_object_object_get(o, "result"), "results"), 0), "stdout")),
	    NULL, 10) / 1e9 - t0;
	json_object_put(o);
	return t0;
}

/* The tool table of the guard figure: FIFOs out and in for the test tool. */
static void
guard_tools(const char *path, const char *out, const char *in)
{
	char	json[2048];

	if (mkfifo(out, 0600) == -1 || mkfifo(in, 0600) == -1)
		die("mkfifo: %s", strerror(errno));
	/* An instant test job: only the guard holds the reload back. */
	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"tests\","
	    "\"tier\":\"instant\",\"busy\":\"tests_running\",\"exec\":"
	    "[\"%s\",\"hold\",\"%s\",\"%s\"]},{\"name\":\"reload\","
	    "\"reload\":true,\"exec\":[\"%s\"]}]}", stamp, out, in, stamp);
	write_text(path, json);
}

/*
 * Under --sync full (the default, which the target is for) and, beside it,
 * --sync none, which shows what the commits on the way cost.
 */
static void
bench_guard(void)
{
	struct broker	 b[2];
	char		 out[512], in[512];
	double		 g[MAXR * GUARD_PER_ROUND], f[MAXR * GUARD_PER_ROUND];
	double		 net[MAXR * GUARD_PER_ROUND];
	double		 nn[MAXR * GUARD_PER_ROUND], spawn;
	int		 fd[2], i, n = rounds * GUARD_PER_ROUND;

	snprintf(out, sizeof(out), "%s", tmp("guard-out"));
	snprintf(in, sizeof(in), "%s", tmp("guard-in"));
	guard_tools(tmp("guard.json"), out, in);
	broker_start(&b[0], tmp("guard.json"), "full", tmp("guard-full"), NULL);
	broker_start(&b[1], tmp("guard.json"), "none", tmp("guard-none"), NULL);
	if ((fd[0] = broker_dial(b[0].port)) == -1 ||
	    (fd[1] = broker_dial(b[1].port)) == -1)
		die("dial: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		g[i] = guard_once(fd[0], out, in) * 1e3;
		f[i] = stamp_floor(stamp) * 1e3;
		nn[i] = guard_once(fd[1], out, in) * 1e3;
	}
	for (i = 0; i < 2; i++) {
		close(fd[i]);
		broker_stop(&b[i]);
	}
	/* Less the spawn's median: one spawn's own noise is not the guard's. */
	spawn = summarize(f, n).med;
	for (i = 0; i < n; i++) {
		net[i] = g[i] - spawn;
		nn[i] -= spawn;
	}
	table_row("guard, --sync full: test worker exit to reload tool start",
	    "ms", g, "posix_spawn to the tool's start", f, n, GOAL_NONE, 0,
	    NULL);
	table_row("guard release, --sync full (the above less the spawn's median)",
	    "ms", net, NULL, NULL, n, GOAL_LE, 1, "<= 1 ms");
	table_row("guard release, --sync none (the same)", "ms", nn, NULL,
	    NULL, n, GOAL_NONE, 0, NULL);
}

/* ---- 5. memory ---------------------------------------------------------- */

/*
 * RSS of pid idle, and per connection with IDLE_N connections open (the
 * last one answered hello, so all were accepted before it).  KiB.
 */
static void
idle_rss(pid_t pid, int port, const char *hello, double *idle, double *per)
{
	int	*fds = calloc(IDLE_N, sizeof(int)), i;
	long	 conns;

	*idle = rss_kib(pid);
	for (i = 0; i < IDLE_N; i++)
		if ((fds[i] = broker_dial(port)) == -1)
			die("dial: %s", strerror(errno));
	xfer(fds[IDLE_N - 1], hello, strlen(hello), 1);
	conns = rss_kib(pid);
	for (i = 0; i < IDLE_N; i++)
		close(fds[i]);
	*per = (conns - *idle) / (double)IDLE_N;
	free(fds);
}

static void
bench_memory(void)
{
	struct broker	 b;
	struct timespec	 ts = { 0, 100000000 };
	double		 ci[MAXR], cp[MAXR], qi[MAXR], qp[MAXR];
	char		 state[64];
	int		 r, bport;
	pid_t		 bs;

	for (r = 0; r < rounds; r++) {
		snprintf(state, sizeof(state), "mem-%d", r);
		broker_start(&b, NULL, "full", tmp(state), NULL);
		bs = beanstalkd_start(&bport, NULL);
		nanosleep(&ts, NULL);	/* settled after start */
		idle_rss(b.pid, b.port, PING, &ci[r], &cp[r]);
		idle_rss(bs, bport, "use default\r\n", &qi[r], &qp[r]);
		broker_stop(&b);
		rmtree(tmp(state));
		stop(bs);
	}
	table_row("idle RSS", "KiB", ci, "beanstalkd", qi, rounds, GOAL_LE,
	    4096, "<= 4 MiB");
	table_row("RSS per idle connection, 1,000 open", "KiB", cp,
	    "beanstalkd", qp, rounds, GOAL_LE, 2, "<= 2 KiB");
}

/* ---- the run ------------------------------------------------------------ */

/* With no arguments every section runs; else the numbered ones. */
static int
want(int argc, char **argv, int section)
{
	int	i;

	if (argc < 2)
		return 1;
	for (i = 1; i < argc; i++)
		if (atoi(argv[i]) == section)
			return 1;
	return 0;
}

static int
env_int(const char *name, int def, int lo, int hi)
{
	const char	*s = getenv(name);
	int		 v;

	if (s == NULL || *s == '\0')
		return def;
	if ((v = atoi(s)) < lo || v > hi)
		die("%s must be from %d to %d", name, lo, hi);
	return v;
}

/* The value of environment variable name, or def when unset or empty. */
static const char *
env_or(const char *name, const char *def)
{
	const char	*s = getenv(name);

	return s != NULL && *s != '\0' ? s : def;
}

/* "Machine: ..., 2026-11-23 21:40 UTC, load 0.10" with no newline. */
void
machine_line(char *buf, size_t len)
{
	char		 model[256] = "unknown CPU", line[512], date[64], *p;
	double		 load[1] = { 0 };
	struct utsname	 u;
	time_t		 t = time(NULL);
	FILE		*f;

	if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "model name", 10) == 0 &&
			    (p = strchr(line, ':')) != NULL) {
				snprintf(model, sizeof(model), "%s", p + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	uname(&u);
	getloadavg(load, 1);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	snprintf(buf, len, "Machine: %s, %ld cores, %.0f GiB, Linux %s; %s; "
	    "load average %.2f at the start", model,
	    sysconf(_SC_NPROCESSORS_ONLN), (double)sysconf(_SC_PHYS_PAGES) *
	    sysconf(_SC_PAGESIZE) / (1 << 30), u.release, date, load[0]);
}

/* Print the table; with BENCH_RESULTS set and all of it run, save it too. */
void
finish(const char *section, const char *what, int whole)
{
	char	 head[1024], *table = table_take(), *text;
	char	*path = getenv("BENCH_RESULTS");

	machine_line(head, sizeof(head));
	if (table == NULL || asprintf(&text, "%s.\n\n%s.\n\n%s", head, what,
	    table) == -1)
		die("out of memory");
	printf("\n%s", text);
	if (whole && path != NULL && *path != '\0') {
		if (table_splice(path, section, text) == -1)
			die("%s: %s", path, strerror(errno));
		printf("\n(written to %s)\n", path);
	}
	free(table);
	free(text);
}

/*
 * At exit, a clean one or die()'s: stop the task-spooler server (a daemon,
 * not our child; the other servers die with the bench) and remove the
 * temp dir.
 */
static void
cleanup(void)
{
	char	 env0[400], *envp[] = { env0, NULL };
	char	*kill_[] = { "tsp", "-K", NULL };

	if (tsp_sock != NULL) {
		snprintf(env0, sizeof(env0), "TS_SOCKET=%s", tsp_sock);
		run_wait(kill_, envp);
		tsp_sock = NULL;
	}
	rmtree(tmpdir);
}

void
setup(void)
{
	struct rlimit	rl;

	if ((cmdgated = getenv("CMDGATED")) == NULL)
		die("set CMDGATED to the broker to measure");
	/* The tools run in the broker's directory: an absolute path. */
	if (getenv("CMDGATE_STAMP") == NULL ||
	    (stamp = realpath(getenv("CMDGATE_STAMP"), NULL)) == NULL)
		die("set CMDGATE_STAMP to bench/cmdgate-stamp");
	rounds = env_int("BENCH_ROUNDS", rounds, 1, MAXR);
	bench_pid = getpid();
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp");
	atexit(cleanup);
	signal(SIGPIPE, SIG_IGN);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int
main(int argc, char **argv)
{
	char	what[512];

	if (argc > 1 && strcmp(argv[1], "scale") == 0)
		return scale_main();
	setup();
	jobs = env_int("BENCH_JOBS", jobs, 10, 100000);
	fprintf(stderr, "cmdgate-bench: %d rounds, %d jobs a run\n", rounds,
	    jobs);
	if (want(argc, argv, 1))
		bench_rtt();
	if (want(argc, argv, 2)) {
		bench_submits("full", 1);
		bench_submits("group", 1);	/* as durable, one sync a turn */
		bench_submits("none", 0);
	}
	if (want(argc, argv, 3))
		bench_jobs();
	if (want(argc, argv, 4))
		bench_guard();
	if (want(argc, argv, 5))
		bench_memory();
	if (want(argc, argv, 6))
		bench_editor(0);
	if (want(argc, argv, 7))
		bench_editor(10);
	snprintf(what, sizeof(what), "`make bench`: %d repetitions, each "
	    "beside its peer's; %d jobs a run; editor path: %s calls a round "
	    "trip figure (%s with the 10 ms bridge); medians [min-max]", rounds,
	    jobs,
	    env_or("BENCH_CALLS", "100"), env_or("BENCH_SLOW_CALLS", "48"));
	finish("bench", what, argc < 2);
	return 0;
}
