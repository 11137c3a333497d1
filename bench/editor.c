/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the editor path (issue 33), rows 6 and 7.  A stand-in
 * bridge (bench/cmdgate-bench-bridge: MCP for Unity's wire and uLoopMCP's)
 * answers at once (6) or after 10 ms a command (7); a broker in front of
 * it, with the unity-mcp and uloop faces and MCP over HTTP, forwards the
 * same reads to it.  Each figure of a path through cmdgate is measured
 * beside the same read straight to the bridge: round trips call by call in
 * turn, rates phase by phase.  See bench/README.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "broker.h"
#include "editor.h"
#include "peers.h"
#include "table.h"

#define MAXR		64
#define ED_NAGENT	7	/* the round trips' agents, in turn */
#define ED_RELAY_AGENT	6	/* the one through the plain relay */
#define ED_WARM		5	/* untimed calls of each agent first */
#define ED_SLOW_MS	10	/* a real editor's main thread, a command */

/*
 * The broker's table: the bridge's reads as the shipped tables have them
 * (etc/tools/unity-mcp.json, uloop.json), and its editor probe.
 */
#define ED_TOOLS "{\"editor\":{\"to\":\"127.0.0.1:%d\",\"dialect\":" \
	"\"unity-mcp\",\"call\":\"get_editor_state\",\"params\":{}," \
	"\"every_ms\":1000,\"flags\":{\"compiling\":" \
	"\"result.data.compilation.is_compiling\",\"tests_running\":" \
	"\"result.data.tests.is_running\",\"editor_busy\":" \
	"\"result.data.assets.refresh.is_refresh_in_progress\"}}," \
	"\"tools\":[{\"name\":\"get_editor_state\",\"forward\":{\"to\":" \
	"\"127.0.0.1:%d\",\"dialect\":\"unity-mcp\",\"idempotent\":true}," \
	"\"tier\":\"instant\",\"timeout_s\":30,\"params\":{\"type\":" \
	"\"object\",\"properties\":{}}},{\"name\":\"get-logs\",\"forward\":" \
	"{\"to\":\"127.0.0.1:%d\",\"dialect\":\"jsonrpc-lsp\",\"idempotent\":" \
	"true},\"tier\":\"instant\",\"timeout_s\":30,\"params\":{\"type\":" \
	"\"object\"}}]}"

/* The bridge and the broker in front of it. */
struct ed_run {
	pid_t		bridge;
	int		up, lp;		/* the bridge's two ports */
	struct broker	b;
	int		face_u, face_l, http;
	pid_t		relay;		/* the plain relay */
	int		delay_ms;	/* the bridge's, a command */
	int		rp;		/* its port */
	char		state[512];
};

/* The agents of the round trips: path and which port. */
enum ed_port { ED_BRIDGE_U, ED_BRIDGE_L, ED_FACE_U, ED_FACE_L, ED_HTTPP,
    ED_BROKER, ED_RELAY };

static const struct {
	enum ed_path	path;
	enum ed_port	port;
} ed_agents[ED_NAGENT] = {
	{ ED_UNITY, ED_BRIDGE_U },	/* 0: straight, MCP for Unity */
	{ ED_UNITY, ED_FACE_U },	/* 1: the unity-mcp face */
	{ ED_ULOOP, ED_BRIDGE_L },	/* 2: straight, uLoopMCP */
	{ ED_ULOOP, ED_FACE_L },	/* 3: the uloop face */
	{ ED_HTTP, ED_HTTPP },		/* 4: MCP over HTTP */
	{ ED_STDIO, ED_BROKER },	/* 5: cmdgate mcp */
	{ ED_UNITY, ED_RELAY },		/* 6: the plain relay, MCP for Unity */
};

static int	ed_calls = 100, ed_slow_calls = 48;

static int
ed_port(const struct ed_run *r, enum ed_port p)
{
	const int	ports[] = { r->up, r->lp, r->face_u, r->face_l,
			    r->http, r->b.port, r->rp };

	return ports[p];
}

/* ---- the bridge and the broker ------------------------------------- */

/* Read fd until a newline (bounded) into buf. */
static void
ed_read_line(int fd, char *buf, size_t len)
{
	struct pollfd	p = { fd, POLLIN, 0 };
	size_t		got = 0;
	ssize_t		n = 0;

	while (got == 0 || buf[got - 1] != '\n') {
		if (got + 1 >= len || poll(&p, 1, BROKER_TIMEOUT_MS) != 1 ||
		    (n = read(fd, buf + got, len - 1 - got)) <= 0)
			die("the bench bridge or relay did not say its ports");
		got += (size_t)n;
	}
	buf[got] = '\0';
}

/* bin with arg, dying with the bench, its first line into line. */
static pid_t
ed_spawn(const char *env, const char *arg1, const char *arg2, char *line,
    size_t len)
{
	const char	*bin = getenv(env);
	pid_t		 pid;
	int		 p[2];

	if (bin == NULL)
		die("set %s", env);
	if (pipe(p) == -1)
		die("pipe: %s", strerror(errno));
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(bin, bin, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	if (pid == -1)
		die("fork: %s", strerror(errno));
	close(p[1]);
	ed_read_line(p[0], line, len);
	close(p[0]);
	return pid;
}

/* cmdgate-bench-bridge --delay-ms delay. */
static void
ed_bridge_start(struct ed_run *r, int delay)
{
	char	d[16], line[128];

	snprintf(d, sizeof(d), "%d", delay);
	r->bridge = ed_spawn("CMDGATE_BENCH_BRIDGE", "--delay-ms", d, line,
	    sizeof(line));
	if (sscanf(line, "ports %d %d", &r->up, &r->lp) != 2)
		die("the bench bridge said %s", line);
}

/* cmdgate-bench-relay in front of the bridge's MCP for Unity port. */
static void
ed_relay_start(struct ed_run *r)
{
	char	p[16], line[128];

	snprintf(p, sizeof(p), "%d", r->up);
	r->relay = ed_spawn("CMDGATE_BENCH_RELAY", p, NULL, line,
	    sizeof(line));
	if (sscanf(line, "port %d", &r->rp) != 1)
		die("the bench relay said %s", line);
}

/* Three distinct free ports for the faces and HTTP. */
static void
ed_ports(struct ed_run *r)
{
	int	i;

	for (i = 0; i < 100; i++) {
		r->face_u = free_port();
		r->face_l = free_port();
		r->http = free_port();
		if (r->face_u != r->face_l && r->face_u != r->http &&
		    r->face_l != r->http)
			return;
	}
	die("no three free ports");
}

static void
ed_start(struct ed_run *r, int delay)
{
	const char	*extra[] = { "--listen", NULL, "--listen", NULL,
			    "--http", NULL, NULL };
	char		 json[2048], fu[48], fl[48], fh[48], tools[512];

	r->delay_ms = delay;
	ed_bridge_start(r, delay);
	ed_relay_start(r);
	ed_ports(r);
	snprintf(fu, sizeof(fu), "unity-mcp@127.0.0.1:%d", r->face_u);
	snprintf(fl, sizeof(fl), "uloop@127.0.0.1:%d", r->face_l);
	snprintf(fh, sizeof(fh), "127.0.0.1:%d", r->http);
	extra[1] = fu;
	extra[3] = fl;
	extra[5] = fh;
	snprintf(json, sizeof(json), ED_TOOLS, r->up, r->up, r->lp);
	snprintf(tools, sizeof(tools), "%s", tmp("editor.json"));
	write_text(tools, json);
	snprintf(r->state, sizeof(r->state), "%s", tmp("editor-state"));
	/* --sync full is the default, which the targets are for. */
	broker_start(&r->b, tools, "full", r->state, extra);
}

static void
ed_stop(struct ed_run *r)
{
	broker_stop(&r->b);
	rmtree(r->state);
	stop(r->relay);
	stop(r->bridge);
}

/* ---- round trips --------------------------------------------------- */

/*
 * One repetition: every agent of ed_agents, n calls each, one agent after
 * the other call by call, so that the paths saw the same moments; the
 * median round trip of each, in microseconds, into med.
 */
static void
ed_rtt(struct ed_run *r, int n, double *med)
{
	struct ed_agent	 a[ED_NAGENT];
	double		*t = calloc((size_t)(n * ED_NAGENT), sizeof(double));
	double		 t0;
	int		 i, k;

	if (t == NULL)
		die("out of memory");
	for (k = 0; k < ED_NAGENT; k++) {
		ed_open(&a[k], ed_agents[k].path, ed_port(r, ed_agents[k].port),
		    r->state);
		for (i = 0; i < ED_WARM; i++)
			ed_call(&a[k]);
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < ED_NAGENT; k++) {
			t0 = now();
			ed_call(&a[k]);
			t[k * n + i] = (now() - t0) * 1e6;
		}
	for (k = 0; k < ED_NAGENT; k++) {
		med[k] = summarize(t + k * n, n).med;
		ed_close(&a[k]);
	}
	free(t);
}

/* ---- rates --------------------------------------------------------- */

/* Read n bytes from fd, waiting at most BROKER_TIMEOUT_MS for each. */
static void
ed_await_bytes(int fd, int n, const char *what)
{
	struct pollfd	p = { fd, POLLIN, 0 };
	char		buf[64];
	ssize_t		got = 0;

	while (n > 0) {
		if (poll(&p, 1, BROKER_TIMEOUT_MS) != 1 ||
		    (got = read(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf))) <= 0)
			die("%d agents not %s", n, what);
		n -= (int)got;
	}
}

/* One agent's process: connect, say so, wait for the go, call, say so. */
static void
ed_agent_main(enum ed_path path, int port, int calls, int ready, int go,
    int done)
{
	struct ed_agent	a;
	char		c = 'x';
	int		i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ed_open(&a, path, port, NULL);
	ed_call(&a);			/* untimed, as the round trips' */
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 0)
		_exit(1);
	for (i = 0; i < calls; i++)
		ed_call(&a);
	if (write(done, &c, 1) != 1)
		_exit(1);
	ed_close(&a);
	_exit(0);
}

/*
 * agents processes, each with its own connection, total / agents calls
 * each, all at once: calls per second, from the go to the last agent's
 * last answer.
 */
static double
ed_rate(enum ed_path path, int port, int agents, int total)
{
	int	ready[2], go[2], done[2], i, st;
	pid_t	pids[16];
	double	t0;

	if (pipe(ready) == -1 || pipe(go) == -1 || pipe(done) == -1)
		die("pipe: %s", strerror(errno));
	for (i = 0; i < agents; i++) {
		if ((pids[i] = fork()) == 0) {
			close(go[1]);
			ed_agent_main(path, port, total / agents, ready[1],
			    go[0], done[1]);
		}
		if (pids[i] == -1)
			die("fork: %s", strerror(errno));
	}
	close(ready[1]);
	close(go[0]);
	close(done[1]);
	ed_await_bytes(ready[0], agents, "connected");
	t0 = now();
	close(go[1]);			/* everyone starts */
	ed_await_bytes(done[0], agents, "done");
	t0 = now() - t0;
	close(ready[0]);
	close(done[0]);
	for (i = 0; i < agents; i++)
		if (waitpid(pids[i], &st, 0) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			die("an agent failed");
	return agents * (total / agents) / t0;
}

/* ---- the rows ------------------------------------------------------ */

/* What each repetition measured. */
struct ed_figures {
	double	rtt[MAXR][ED_NAGENT];
	double	straight[4][MAXR], through[4][MAXR];	/* rates */
	double	relay[2][MAXR];		/* phases 0 and 1 through the relay */
};

/* The rate phases: through which face, how many agents. */
static const struct {
	enum ed_path	 path;
	enum ed_port	 bridge, face;
	int		 agents;
	const char	*name;
} ed_phases[4] = {
	{ ED_UNITY, ED_BRIDGE_U, ED_FACE_U, 4, "unity-mcp" },
	{ ED_UNITY, ED_BRIDGE_U, ED_FACE_U, 16, "unity-mcp" },
	{ ED_ULOOP, ED_BRIDGE_L, ED_FACE_L, 4, "uloop" },
	{ ED_ULOOP, ED_BRIDGE_L, ED_FACE_L, 16, "uloop" },
};

/* The round trips' pairs: through (agent), straight (agent), names. */
static const struct {
	int		 through, straight;
	const char	*what, *peer;
	double		 added;		/* the instant target, ms; 0: none */
} ed_pairs[4] = {
	{ 1, 0, "unity-mcp face (get_editor_state)",
	    "straight to the bridge", 0.25 },
	{ 3, 2, "uloop face (get-logs)", "straight to the bridge", 0.25 },
	{ 4, 0, "MCP over HTTP (tools/call get_editor_state)",
	    "get_editor_state straight to the bridge", 0.5 },
	{ 5, 0, "MCP over stdio, cmdgate mcp (tools/call get_editor_state)",
	    "get_editor_state straight to the bridge", 0 },
};

/* What b adds to a: b / a - 1 in % with a slow bridge (times or rates),
 * else b - a in ms (round trips in us). */
static double
ed_added(double a, double b, int delay)
{
	return delay > 0 ? (b / a - 1) * 100 : (b - a) / 1e3;
}

/* The round trips, instant bridge: each pair, and what the path adds. */
static void
ed_rtt_rows(const struct ed_figures *f, int k)
{
	double	thr[MAXR], str[MAXR], add[MAXR], lim = ed_pairs[k].added;
	char	what[128], target[48];
	int	r;

	for (r = 0; r < rounds; r++) {
		thr[r] = f->rtt[r][ed_pairs[k].through];
		str[r] = f->rtt[r][ed_pairs[k].straight];
		add[r] = ed_added(str[r], thr[r], 0);
	}
	snprintf(what, sizeof(what), "round trip, instant bridge, %s",
	    ed_pairs[k].what);
	table_row(what, "us", thr, ed_pairs[k].peer, str, rounds, GOAL_NONE,
	    0, NULL);
	snprintf(what, sizeof(what), "added to the bridge's round trip "
	    "(median less median), %s", ed_pairs[k].what);
	snprintf(target, sizeof(target), "<= %g ms", lim);
	table_row(what, "ms", add, NULL, NULL, rounds, lim > 0 ? GOAL_LE :
	    GOAL_NONE, lim, lim > 0 ? target : NULL);
}

/* The round trips, slow bridge: each pair, and the gateway's share. */
static void
ed_slow_rtt_rows(const struct ed_figures *f, int k)
{
	double	thr[MAXR], str[MAXR], share[MAXR];
	char	what[128];
	int	r;

	for (r = 0; r < rounds; r++) {
		thr[r] = f->rtt[r][ed_pairs[k].through] / 1e3;
		str[r] = f->rtt[r][ed_pairs[k].straight] / 1e3;
		share[r] = ed_added(str[r], thr[r], ED_SLOW_MS);
	}
	snprintf(what, sizeof(what), "round trip, %d ms bridge, %s",
	    ED_SLOW_MS, ed_pairs[k].what);
	table_row(what, "ms", thr, ed_pairs[k].peer, str, rounds, GOAL_NONE,
	    0, NULL);
	snprintf(what, sizeof(what), "gateway's share of a call (through / "
	    "straight - 1), %d ms bridge, %s", ED_SLOW_MS, ed_pairs[k].what);
	table_row(what, "%", share, NULL, NULL, rounds, GOAL_LE, 3, "<= 3%");
}

/* The rates: agents through a face against one agent straight. */
static void
ed_rate_rows(const struct ed_figures *f, int k, int delay)
{
	double	share[MAXR];
	char	what[128], bridge[32];
	int	r;

	if (delay > 0)
		snprintf(bridge, sizeof(bridge), "%d ms bridge", delay);
	else
		snprintf(bridge, sizeof(bridge), "instant bridge");
	snprintf(what, sizeof(what), "calls, %s, %d agents at once through "
	    "the %s face", bridge, ed_phases[k].agents, ed_phases[k].name);
	table_row(what, "/s", f->through[k], "1 agent straight to the bridge",
	    f->straight[k], rounds, delay > 0 ? GOAL_NONE : GOAL_RATIO_GE,
	    0.9, delay > 0 ? NULL : ">= 0.9x");
	if (delay == 0)
		return;
	for (r = 0; r < rounds; r++)
		share[r] = ed_added(f->through[k][r], f->straight[k][r],
		    delay);
	snprintf(what, sizeof(what), "gateway's share of a call (straight / "
	    "through - 1), %s, %d agents, %s face", bridge,
	    ed_phases[k].agents, ed_phases[k].name);
	table_row(what, "%", share, NULL, NULL, rounds, GOAL_LE, 3, "<= 3%");
}

/*
 * The floor of the rates: the same agents through a relay that moves
 * frames and does nothing else, beside the straight agent and beside
 * cmdgate.
 */
static void
ed_relay_rows(const struct ed_figures *f, int k)
{
	char	what[160];

	snprintf(what, sizeof(what), "calls, instant bridge, %d agents at "
	    "once through a plain relay (bench/relay.c: one connection to "
	    "the bridge, no store, no JSON)", ed_phases[k].agents);
	table_row(what, "/s", f->relay[k], "1 agent straight to the bridge",
	    f->straight[k], rounds, GOAL_NONE, 0, NULL);
	snprintf(what, sizeof(what), "calls, instant bridge, %d agents at "
	    "once through the unity-mcp face, against the plain relay",
	    ed_phases[k].agents);
	table_row(what, "/s", f->through[k], "the plain relay",
	    f->relay[k], rounds, GOAL_NONE, 0, NULL);
}

/*
 * The floor of the round trips: the unity-mcp read through the plain
 * relay (agent ED_RELAY_AGENT) beside the same read straight to the bridge
 * (agent 0), which is what any gateway of its own process costs here in
 * system calls and wakeups alone; then the unity-mcp face (agent 1)
 * against the relay, which is cmdgate's own part.  No target: they say
 * how much of a target the machine leaves to the gateway's work.
 */
static void
ed_relay_rtt_rows(const struct ed_figures *f, int delay)
{
	static const char *const added[2][2] = {
		{ "added to the bridge's round trip (median less median), %s, "
		    "the plain relay", "added by the unity-mcp face to the "
		    "plain relay's round trip (median less median), %s" },
		{ "gateway's share of a call (through / straight - 1), %s, "
		    "the plain relay", "the unity-mcp face against the plain "
		    "relay (face / relay - 1), %s" },
	};
	double	 thr[MAXR], str[MAXR], relay[MAXR], face[MAXR];
	double	*fig[2] = { relay, face }, unit = delay > 0 ? 1e3 : 1;
	char	 what[128], bridge[32];
	int	 r, k;

	for (r = 0; r < rounds; r++) {
		thr[r] = f->rtt[r][ED_RELAY_AGENT] / unit;
		str[r] = f->rtt[r][0] / unit;
		relay[r] = ed_added(str[r], thr[r], delay);
		face[r] = ed_added(thr[r], f->rtt[r][1] / unit, delay);
	}
	if (delay > 0)
		snprintf(bridge, sizeof(bridge), "%d ms bridge", delay);
	else
		snprintf(bridge, sizeof(bridge), "instant bridge");
	snprintf(what, sizeof(what), "round trip, %s, plain relay, "
	    "bench/relay.c (get_editor_state)", bridge);
	table_row(what, delay > 0 ? "ms" : "us", thr,
	    "straight to the bridge", str, rounds, GOAL_NONE, 0, NULL);
	for (k = 0; k < 2; k++) {
		snprintf(what, sizeof(what), added[delay > 0][k], bridge);
		table_row(what, delay > 0 ? "%" : "ms", fig[k], NULL, NULL,
		    rounds, GOAL_NONE, 0, NULL);
	}
}

static int
ed_env(const char *name, int def)
{
	const char	*s = getenv(name);
	int		 v;

	if (s == NULL || *s == '\0')
		return def;
	if ((v = atoi(s)) < 16 || v > 100000)
		die("%s must be from 16 to 100000", name);
	return v;
}

/*
 * One agent straight to the bridge, the bench, the agent and the bridge
 * on one CPU (the last), as row 2 pins its 1-client phases: unpinned, a
 * ping-pong's rate depends on whether the two landed on one CPU or two (a
 * wakeup across CPUs is a VM exit here), and swung between about 17,000
 * and 31,000 calls/s from one phase to the next.
 */
static double
ed_straight_rate(struct ed_run *r, int k, int calls)
{
	cpu_set_t	old, one;
	double		rate;

	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&one);
	CPU_SET(sysconf(_SC_NPROCESSORS_ONLN) - 1, &one);
	if (sched_setaffinity(0, sizeof(one), &one) == -1 ||
	    sched_setaffinity(r->bridge, sizeof(one), &one) == -1)
		die("sched_setaffinity: %s", strerror(errno));
	rate = ed_rate(ed_phases[k].path, ed_port(r, ed_phases[k].bridge), 1,
	    calls);
	if (sched_setaffinity(0, sizeof(old), &old) == -1 ||
	    sched_setaffinity(r->bridge, sizeof(old), &old) == -1)
		die("sched_setaffinity: %s", strerror(errno));
	return rate;
}

/*
 * One repetition's rate phases: each face's agents beside one agent
 * straight to the same port of the bridge, which of the two goes first
 * alternating from one repetition to the next (the one after a phase
 * through cmdgate may find its workers still ending), each after a pause
 * in which the last phase's work settles.  The straight agent makes
 * straight_x times as many calls: at the instant bridge's rate the same
 * number would take a few milliseconds, too short a window to measure.
 */
static void
ed_rates(struct ed_run *r, struct ed_figures *f, int i, int total,
    int straight_x)
{
	struct timespec	settle = { 0, 50000000 };
	int		k, j;

	for (k = 0; k < 4; k++)
		for (j = 0; j < 2; j++) {
			nanosleep(&settle, NULL);
			if ((i + j) % 2 == 0)
				f->straight[k][i] = ed_straight_rate(r, k,
				    total * straight_x);
			else
				f->through[k][i] = ed_rate(ed_phases[k].path,
				    ed_port(r, ed_phases[k].face),
				    ed_phases[k].agents, total);
		}
	for (k = 0; k < 2 && r->delay_ms == 0; k++) {
		nanosleep(&settle, NULL);
		f->relay[k][i] = ed_rate(ED_UNITY, ed_port(r, ED_RELAY),
		    ed_phases[k].agents, total * straight_x);
	}
}

/*
 * Rows 6 (delay_ms 0) and 7: every repetition makes the round trips, then
 * the rate phases.
 */
void
bench_editor(int delay_ms)
{
	struct ed_run		 r;
	struct ed_figures	*f = calloc(1, sizeof(*f));
	int			 i, k, n, total;

	ed_calls = ed_env("BENCH_CALLS", ed_calls);
	ed_slow_calls = ed_env("BENCH_SLOW_CALLS", ed_slow_calls);
	n = delay_ms > 0 ? ed_slow_calls : ed_calls;
	/* Rates: a multiple of 16, so that 4 and 16 agents share it evenly. */
	total = delay_ms > 0 ? (ed_slow_calls + 15) / 16 * 16 :
	    (8 * ed_calls + 15) / 16 * 16;
	if (f == NULL)
		die("out of memory");
	ed_start(&r, delay_ms);
	for (i = 0; i < rounds; i++) {
		ed_rtt(&r, n, f->rtt[i]);
		ed_rates(&r, f, i, total, delay_ms > 0 ? 1 : 4);
	}
	ed_stop(&r);
	for (k = 0; k < 4; k++)
		if (delay_ms > 0)
			ed_slow_rtt_rows(f, k);
		else
			ed_rtt_rows(f, k);
	ed_relay_rtt_rows(f, delay_ms);
	for (k = 0; k < 4; k++)
		ed_rate_rows(f, k, delay_ms);
	for (k = 0; k < 2 && delay_ms == 0; k++)
		ed_relay_rows(f, k);
	free(f);
}
