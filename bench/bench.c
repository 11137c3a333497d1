/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: cmdgate side by side with a loopback floor, beanstalkd,
 * task-spooler and nq, on this machine, in one run.  Each figure is the
 * median of ROUNDS rounds (A and B alternating), with min-max; ratios are
 * of medians from the same run.  See bench/README.
 */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "broker.h"
#include "jsonl.h"
#include "store.h"
#include "ticket.h"
#include "peers.h"

#define ROUNDS		5
#define RTT_N		2000
#define PIPE_N		200000
#define PIPE_DEPTH	64
#define SUBMIT_N	400
#define CLIENTS	16
#define TRUE_N		500

static const char *cmdgated;

/* ---- measurements ------------------------------------------------------ */

/* Median round trip of n sequential requests, in microseconds. */
static double
rtt_us(int port, const char *req, int n)
{
	double	*t = calloc((size_t)n, sizeof(double)), t0, med;
	int	 fd = broker_dial(port), i;

	if (fd == -1)
		die("dial %d", port);
	for (i = 0; i < n; i++) {
		t0 = now();
		xfer(fd, req, strlen(req), 1);
		t[i] = (now() - t0) * 1e6;
	}
	close(fd);
	med = summarize(t, n).med;
	free(t);
	return med;
}

/* Requests per second with depth requests in flight. */
static double
pipelined(int port, const char *req, int total, int depth)
{
	size_t	len = strlen(req);
	char	*batch = malloc(len * (size_t)depth);
	int	 fd = broker_dial(port), i, done = 0;
	double	 t0;

	for (i = 0; i < depth; i++)
		memcpy(batch + len * (size_t)i, req, len);
	t0 = now();
	/* Keep depth in flight: send a window, read it, repeat. */
	while (done < total) {
		xfer(fd, batch, len * (size_t)depth, depth);
		done += depth;
	}
	close(fd);
	free(batch);
	return total / (now() - t0);
}

/* clients processes, each n sequential requests; operations per second. */
static double
concurrent(int port, const char *req, int lines, int clients, int n)
{
	int	go[2], i, k, st;
	pid_t	pids[64];
	char	c;
	double	t0;

	if (pipe(go) == -1)
		die("pipe");
	for (i = 0; i < clients; i++) {
		if ((pids[i] = fork()) == 0) {
			int fd = broker_dial(port);

			close(go[1]);
			if (read(go[0], &c, 1) < 0 || fd == -1)
				_exit(1);
			for (k = 0; k < n; k++)
				xfer(fd, req, strlen(req), lines);
			_exit(0);
		}
	}
	close(go[0]);
	t0 = now();
	close(go[1]);		/* everyone starts */
	for (i = 0; i < clients; i++) {
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("a client failed");
	}
	return (double)clients * n / (now() - t0);
}

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
#define BPUT	"put 0 0 60 1\r\nx\r\n"
#define SUBMIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"queued\"}]}}\n"

static const char *hold_tools =
    "{\"tools\":[{\"name\":\"hold\",\"tier\":\"heavy\",\"exec\":[\"sleep\","
    "\"3600\"]},{\"name\":\"queued\",\"tier\":\"heavy\",\"exec\":"
    "[\"true\"]}]}";

static void
bench_rtt(void)
{
	struct broker	b;
	double		f[ROUNDS], c[ROUNDS], q[ROUNDS], p[ROUNDS];
	pid_t		fl, bs;
	int		fport, bport, r;

	printf("\n1. Request round trip (%d sequential, median per round)\n",
	    RTT_N);
	fl = floor_start(&fport);
	bs = beanstalkd_start(&bport, NULL);
	broker_start(&b, NULL, "full", tmp("rtt-state"));
	for (r = 0; r < ROUNDS; r++) {
		f[r] = rtt_us(fport, PING, RTT_N);
		c[r] = rtt_us(b.port, PING, RTT_N);
		q[r] = rtt_us(bport, BPUT, RTT_N);
	}
	for (r = 0; r < ROUNDS; r++)
		p[r] = pipelined(b.port, PING, PIPE_N, PIPE_DEPTH);
	report("loopback ping-pong floor", "us", summarize(f, ROUNDS));
	report("cmdgate ping", "us", summarize(c, ROUNDS));
	report("beanstalkd put (no binlog)", "us", summarize(q, ROUNDS));
	ratio("cmdgate ping / floor", summarize(c, ROUNDS).med /
	    summarize(f, ROUNDS).med, "<= 1.3x");
	ratio("cmdgate ping / beanstalkd put", summarize(c, ROUNDS).med /
	    summarize(q, ROUNDS).med, "none");
	report("cmdgate pipelined ping, 64 in flight", "req/s",
	    summarize(p, ROUNDS));
	printf("  %-44s %10s     (target >= 300000 req/s)\n", "", "");
	broker_stop(&b);
	stop(bs);
	stop(fl);
}

static void
bench_submits(const char *sync, int durable)
{
	struct broker	b;
	double		c1[ROUNDS], c16[ROUNDS], q1[ROUNDS], q16[ROUNDS];
	char		state[64], label[128], binlogdir[512];
	const char	*binlog = NULL;
	int		r, fd, bport;
	pid_t		bs;
	json_object	*o;

	/* tmp() rotates its buffers: keep a copy that outlives the loop. */
	if (durable) {
		snprintf(binlogdir, sizeof(binlogdir), "%s", tmp("binlog"));
		binlog = binlogdir;
	}
	printf("\n2. Durable submits per second, --sync %s vs beanstalkd %s\n",
	    sync, binlog ? "-b DIR -f0" : "without binlog");
	write_text(tmp("hold.json"), hold_tools);
	for (r = 0; r < ROUNDS; r++) {
		snprintf(state, sizeof(state), "sub-%s-%d", sync, r);
		broker_start(&b, tmp("hold.json"), sync, tmp(state));
		/* A held heavy job: every submit then only queues. */
		fd = broker_dial(b.port);
		o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"hold\"}]}}\n");
		json_object_put(o);
		close(fd);
		c1[r] = concurrent(b.port, SUBMIT, 1, 1, SUBMIT_N);
		c16[r] = concurrent(b.port, SUBMIT, 1, CLIENTS,
		    SUBMIT_N / 4);
		broker_stop(&b);
		rmtree(tmp(state));
		if (binlog != NULL) {
			rmtree(binlog);
			mkdir(binlog, 0700);
		}
		bs = beanstalkd_start(&bport, binlog);
		q1[r] = concurrent(bport, BPUT, 1, 1, SUBMIT_N);
		q16[r] = concurrent(bport, BPUT, 1, CLIENTS, SUBMIT_N / 4);
		stop(bs);
	}
	snprintf(label, sizeof(label), "cmdgate, 1 client");
	report(label, "/s", summarize(c1, ROUNDS));
	report("cmdgate, 16 clients", "/s", summarize(c16, ROUNDS));
	report("beanstalkd put, 1 client", "/s", summarize(q1, ROUNDS));
	report("beanstalkd put, 16 clients", "/s", summarize(q16, ROUNDS));
	ratio("cmdgate / beanstalkd, 1 client", summarize(c1, ROUNDS).med /
	    summarize(q1, ROUNDS).med, "none");
	ratio("cmdgate / beanstalkd, 16 clients", summarize(c16, ROUNDS).med /
	    summarize(q16, ROUNDS).med, binlog ? ">= 3x" : "none");
}

/* 500 /bin/true jobs through cmdgate: submit all, wait for all. */
static double
cmdgate_true(const char *tier)
{
	struct broker	 b;
	char		 json[512], state[64], line[256];
	char		(*tickets)[32] = calloc(TRUE_N, 32);
	json_object	*o;
	double		 t0, t;
	int		 fd, i;

	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"true\","
	    "\"tier\":\"%s\",\"exec\":[\"/bin/true\"]}]}", tier);
	write_text(tmp("true.json"), json);
	snprintf(state, sizeof(state), "true-%s", tier);
	broker_start(&b, tmp("true.json"), "full", tmp(state));
	fd = broker_dial(b.port);
	t0 = now();
	for (i = 0; i < TRUE_N; i++) {
		o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"true\"}]}}\n");
		snprintf(tickets[i], 32, "%s", json_object_get_string(
		    json_object_object_get(json_object_object_get(o,
		    "result"), "ticket")));
		json_object_put(o);
	}
	for (i = 0; i < TRUE_N; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,"
		    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\","
		    "\"timeout_s\":600}}\n", tickets[i]);
		o = rpc(fd, line);
		if (strcmp(json_object_get_string(json_object_object_get(
		    json_object_object_get(o, "result"), "status")), "done"))
			die("%s did not finish", tickets[i]);
		json_object_put(o);
	}
	t = now() - t0;
	close(fd);
	broker_stop(&b);
	rmtree(tmp(state));
	free(tickets);
	return TRUE_N / t;
}

static double
tsp_true(const char *slots)
{
	char	 sock[300], env0[400], *envp[] = { env0, "PATH=/usr/bin:/bin",
		    NULL };
	char	*set[] = { "tsp", "-S", (char *)slots, NULL };
	char	*add[] = { "tsp", "/bin/true", NULL };
	char	*wait[] = { "tsp", "-w", NULL };
	char	*kill_[] = { "tsp", "-K", NULL };
	double	 t0, t;
	int	 i;

	snprintf(sock, sizeof(sock), "%s", tmp("tsp.sock"));
	snprintf(env0, sizeof(env0), "TS_SOCKET=%s", sock);
	run_wait(set, envp);
	t0 = now();
	for (i = 0; i < TRUE_N; i++)
		run_wait(add, envp);
	run_wait(wait, envp);	/* the last job */
	if (strcmp(slots, "1") != 0)
		run_wait(wait, envp);
	t = now() - t0;
	run_wait(kill_, envp);
	return TRUE_N / t;
}

static double
nq_true(void)
{
	char	 env0[400], *envp[] = { env0, "PATH=/usr/bin:/bin", NULL };
	char	*add[] = { "nq", "-q", "/bin/true", NULL };
	char	*wait[] = { "nq", "-q", "-w", NULL };
	double	 t0, t;
	int	 i;

	rmtree(tmp("nq"));
	mkdir(tmp("nq"), 0700);
	snprintf(env0, sizeof(env0), "NQDIR=%s", tmp("nq"));
	t0 = now();
	for (i = 0; i < TRUE_N; i++)
		run_wait(add, envp);
	run_wait(wait, envp);
	t = now() - t0;
	return TRUE_N / t;
}

static double
spawn_true(void)
{
	char	*argv[] = { "/bin/true", NULL };
	double	 t0 = now();
	int	 i;

	for (i = 0; i < TRUE_N; i++)
		run_wait(argv, NULL);
	return TRUE_N / (now() - t0);
}

static void
bench_true(void)
{
	double	h[ROUNDS], s[ROUNDS], t1[ROUNDS], t2[ROUNDS], n[ROUNDS];
	double	f[ROUNDS];
	int	r;

	printf("\n3. %d jobs of /bin/true, submit to done (jobs/s)\n", TRUE_N);
	for (r = 0; r < ROUNDS; r++) {
		h[r] = cmdgate_true("heavy");
		t1[r] = tsp_true("1");
		s[r] = cmdgate_true("smooth");
		t2[r] = tsp_true("2");
		n[r] = nq_true();
		f[r] = spawn_true();
	}
	report("cmdgate heavy (serial)", "/s", summarize(h, ROUNDS));
	report("cmdgate smooth (parallel)", "/s", summarize(s, ROUNDS));
	report("task-spooler, 1 slot", "/s", summarize(t1, ROUNDS));
	report("task-spooler, 2 slots", "/s", summarize(t2, ROUNDS));
	report("nq", "/s", summarize(n, ROUNDS));
	report("posix_spawn loop (floor)", "/s", summarize(f, ROUNDS));
	ratio("cmdgate heavy / task-spooler 1 slot", summarize(h, ROUNDS).med /
	    summarize(t1, ROUNDS).med, ">= 2x");
	ratio("cmdgate heavy / nq", summarize(h, ROUNDS).med /
	    summarize(n, ROUNDS).med, ">= 4x");
	ratio("cmdgate smooth / task-spooler 2 slots",
	    summarize(s, ROUNDS).med / summarize(t2, ROUNDS).med, "none");
}

/* A store with nfinished finished and nqueued queued jobs, written
 * directly through the store's own functions. */
static void
prefill(const char *state, int nfinished, int nqueued)
{
	struct store		*st;
	struct store_conf	 conf = { 1ULL << 32, 1ULL << 32, SYNC_NONE, 0 };
	char			*moved, *damage, json[1024];
	char			 ticket[TICKET_LEN];
	uint64_t		 num;
	int			 i, rc;
	int64_t			 expire = (int64_t)time(NULL) * 1000 +
				    86400000;

	mkdir(state, 0700);
	if ((rc = store_open(&st, state, &conf, &moved, &damage)))
		die("store: %s", store_strerror(rc));
	for (i = 0; i < nfinished + nqueued; i++) {
		int fin = i < nfinished;

		if (i % 1000 == 0 && (rc = store_begin(st)) != 0)
			die("store: %s", store_strerror(rc));
		store_take_ticket(st, &num);
		ticket_format(ticket, sizeof(ticket), num);
		snprintf(json, sizeof(json), "{\"ticket\":\"%s\","
		    "\"status\":\"%s\",\"tier\":\"heavy\",\"causes_reload\":"
		    "false,\"agent\":\"bench\",\"label\":\"\",\"atomic\":false,"
		    "\"fail_fast\":false,\"created_at\":\"2026-01-01T00:00:00."
		    "000Z\",\"commands\":[{\"tool\":\"hold\",\"tier\":\"heavy\","
		    "\"causes_reload\":false,\"exec\":[\"sleep\",\"3600\"],"
		    "\"timeout_s\":600}],\"results\":[%s]}",
		    ticket, fin ? "done" : "queued",
		    fin ? "{\"tool\":\"hold\",\"ok\":true,\"duration_ms\":1,"
		    "\"exit_code\":0,\"stdout\":\"\",\"stderr\":\"\"}" : "");
		if ((rc = store_job_put(st, num, fin ? 'd' : 'q',
		    fin ? expire : 0, json)) != 0)
			die("store: %s", store_strerror(rc));
		if ((i % 1000 == 999 || i == nfinished + nqueued - 1) &&
		    (rc = store_commit(st)) != 0)
			die("store: %s", store_strerror(rc));
	}
	store_close(st);
}

/* Seconds from exec to the first poll_job answered. */
static double
restart_time(const char *state)
{
	char		 listen[32], *argv[13];
	int		 port = free_port(), fd = -1;
	double		 t0, t;
	pid_t		 pid;
	struct timespec	 ts = { 0, 200000 };
	json_object	*o;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	argv[0] = (char *)cmdgated;
	argv[1] = "--listen";
	argv[2] = listen;
	argv[3] = "--state-dir";
	argv[4] = (char *)state;
	argv[5] = "--log-level";
	argv[6] = "error";
	argv[7] = "--map-size";
	argv[8] = "4294967296";
	argv[9] = "--max-queued";
	argv[10] = "1000000";
	argv[11] = "--no-auth";
	argv[12] = NULL;
	t0 = now();
	pid = spawn(argv, NULL);
	while ((fd = broker_dial(port)) == -1)
		nanosleep(&ts, NULL);
	o = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"poll_job\","
	    "\"params\":{\"ticket\":\"t-000000\"}}\n");
	t = now() - t0;
	if (json_object_object_get(o, "result") == NULL)
		die("poll_job after restart failed");
	json_object_put(o);
	close(fd);
	stop(pid);
	return t;
}

static void
bench_restart(void)
{
	double	t[ROUNDS];
	int	r;

	printf("\n4. Restart with 100,000 finished and 1,000 queued jobs\n");
	prefill(tmp("restart"), 100000, 1000);
	for (r = 0; r < ROUNDS; r++)
		t[r] = restart_time(tmp("restart")) * 1e3;
	report("exec to first poll_job answered", "ms", summarize(t, ROUNDS));
	printf("  %-44s %10s     (target <= 200 ms)\n", "", "");
}

static int64_t
stdout_ns(json_object *job)
{
	json_object	*r = json_object_array_get_idx(json_object_object_get(
			    job, "results"), 0);

	return strtoll(json_object_get_string(json_object_object_get(r,
	    "stdout")), NULL, 10);
}

static void
bench_guard(void)
{
	struct broker	 b;
	double		 lat[20];
	json_object	*t, *rl;
	char		 line[256], tt[32], rt[32];
	int		 fd, i;

	printf("\n5. Guard latency: the last test worker's exit to the held "
	    "reload's start\n");
	write_text(tmp("guard.json"), "{\"tools\":[{\"name\":\"tests\","
	    "\"busy\":\"tests_running\",\"exec\":[\"sh\",\"-c\",\"sleep 0.05;"
	    " exec date +%s%N\"]},{\"name\":\"reload\",\"reload\":true,"
	    "\"exec\":[\"date\",\"+%s%N\"]}]}");
	broker_start(&b, tmp("guard.json"), "full", tmp("guard-state"));
	fd = broker_dial(b.port);
	for (i = 0; i < 20; i++) {
		t = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"tests\"}]}}\n");
		rl = rpc(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
		    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
		    "[{\"tool\":\"reload\"}]}}\n");
		snprintf(tt, sizeof(tt), "%s", json_object_get_string(
		    json_object_object_get(json_object_object_get(t,
		    "result"), "ticket")));
		snprintf(rt, sizeof(rt), "%s", json_object_get_string(
		    json_object_object_get(json_object_object_get(rl,
		    "result"), "ticket")));
		json_object_put(t);
		json_object_put(rl);
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":3,"
		    "\"method\":\"wait_job\",\"params\":{\"ticket\":\"%s\"}}\n",
		    rt);
		rl = rpc(fd, line);
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":4,"
		    "\"method\":\"poll_job\",\"params\":{\"ticket\":\"%s\"}}\n",
		    tt);
		t = rpc(fd, line);
		lat[i] = (stdout_ns(json_object_object_get(rl, "result")) -
		    stdout_ns(json_object_object_get(t, "result"))) / 1e6;
		json_object_put(t);
		json_object_put(rl);
	}
	close(fd);
	broker_stop(&b);
	report("median of 20 (includes the tools' own exit and exec)",
	    "ms", summarize(lat, 20));
	printf("  %-44s %10s     (target <= 5 ms median)\n", "", "");
}

static void
bench_memory(void)
{
	struct broker	 b;
	long		 idle, conns, jobs;
	int		*fds = calloc(1000, sizeof(int)), i;
	struct timespec	 ts = { 0, 100000000 };

	printf("\n6. Memory (RSS)\n");
	broker_start(&b, NULL, "full", tmp("mem-state"));
	nanosleep(&ts, NULL);
	idle = rss_kib(b.pid);
	for (i = 0; i < 1000; i++)
		fds[i] = broker_dial(b.port);
	json_object_put(rpc(fds[999], PING));	/* all accepted by now */
	conns = rss_kib(b.pid);
	for (i = 0; i < 1000; i++)
		close(fds[i]);
	broker_stop(&b);
	prefill(tmp("mem-jobs"), 10000, 0);
	broker_start(&b, NULL, "full", tmp("mem-jobs"));
	nanosleep(&ts, NULL);
	jobs = rss_kib(b.pid);
	broker_stop(&b);
	printf("  %-44s %10ld KiB   (target <= 8192 KiB)\n", "idle", idle);
	printf("  %-44s %10.2f KiB   (target <= 4 KiB)\n",
	    "per idle connection (1,000 open)", (conns - idle) / 1000.0);
	printf("  %-44s %10ld KiB\n", "per 10,000 stored finished jobs",
	    jobs - idle);
	free(fds);
}

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

int
main(int argc, char **argv)
{
	struct rlimit	rl;
	char		host[256];

	if ((cmdgated = getenv("CMDGATED")) == NULL)
		die("set CMDGATED to the broker to measure");
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp");
	signal(SIGPIPE, SIG_IGN);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	gethostname(host, sizeof(host));
	printf("cmdgate-bench: %s, %ld cores, %d rounds each, medians "
	    "[min-max]\n", host, sysconf(_SC_NPROCESSORS_ONLN), ROUNDS);
	if (want(argc, argv, 1))
		bench_rtt();
	if (want(argc, argv, 2)) {
		bench_submits("full", 1);
		bench_submits("none", 0);
	}
	if (want(argc, argv, 3))
		bench_true();
	if (want(argc, argv, 4))
		bench_restart();
	if (want(argc, argv, 5))
		bench_guard();
	if (want(argc, argv, 6))
		bench_memory();
	rmtree(tmpdir);
	return 0;
}
