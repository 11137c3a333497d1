/* SPDX-License-Identifier: ISC */
/*
 * cmdgate: the client of cmdgated(8) for people and scripts, and the MCP
 * stdio bridge for LLM clients.  See cmdgate(1).  Here: the command
 * table, the global flags, and the broker and editor commands; the job
 * commands are in cli_jobs.c, the bridge in cli_bridge.c, mcp-config in
 * cli_mcp.c.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "util.h"

#define DEFAULT_PORT	"8700"
#define REPLY_TIMEOUT_MAX 3600	/* --reply-timeout, seconds */
#define RECONNECT_FIRST_MS 100	/* editor-state: first retry, then doubled */
#define RECONNECT_MAX_MS 1000	/* up to this between tries */
#define RECONNECT_TIMEOUT_S 10	/* default --reconnect-timeout */
#define CHILD_POLL_MS	100	/* without a pidfd: look this often */

typedef int (*cmd_fn)(struct cli *, int, char **);

static int	cmd_ping(struct cli *, int, char **);
static int	cmd_status(struct cli *, int, char **);
static int	cmd_tools(struct cli *, int, char **);
static int	cmd_tool(struct cli *, int, char **);
static int	cmd_editor_state(struct cli *, int, char **);
static int	cmd_target_check(struct cli *, const char *);

static const struct {
	const char	*name;
	cmd_fn		 fn;
	int		 connect;
	const char	*usage;
} commands[] = {
	{ "ping", cmd_ping, 1, "ping" },
	{ "status", cmd_status, 1, "status" },
	{ "tools", cmd_tools, 1, "tools" },
	{ "tool", cmd_tool, 1, "tool NAME" },
	{ "submit", cmd_submit, 1, "submit TOOL [key=value | key:=JSON ...] "
	    "[--params JSON] [--agent A]\n"
	    "              [--label L] [--atomic] [--fail-fast] "
	    "[--async | --wait] [--timeout S]\n"
	    "              [--then TOOL [key=value ...]] ...   "
	    "(or: submit - < batch.json)" },
	{ "poll", cmd_poll, 1, "poll TICKET" },
	{ "wait", cmd_wait, 1, "wait TICKET [--timeout S]" },
	{ "cancel", cmd_cancel, 1, "cancel TICKET" },
	{ "jobs", cmd_jobs, 1, "jobs [--status S] [--agent A] [--limit N]" },
	{ "top", cmd_top, 1, "top [--once]" },
	{ "editor-state", cmd_editor_state, 1, "editor-state "
	    "[--tests-running] [--compiling] [--busy]\n"
	    "              [--reconnect-timeout S] -- CMD [ARG ...]" },
	{ "mcp", cmd_mcp, 1, "mcp" },
	{ "instances", cmd_instances, 0, "instances [--prune]" },
	{ "mcp-config", cmd_mcp_config, 0, "mcp-config "
	    "[--client claude|cursor|vscode|generic] [--http] [--url URL]\n"
	    "              [--uloop-port PORT] [--uloop-server PATH] "
	    "[--unity-status-dir DIR]" },
};
#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: cmdgate [--host H] [--port P] [--socket PATH] "
	    "[--instance NAME]\n"
	    "               [--token-file F] [--state-dir D]"
	    "               [--json] [--reply-timeout S] COMMAND [ARG ...]\n"
	    "commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %s\n", commands[i].usage);
}

/* ---- commands ---------------------------------------------------------- */

static int
cmd_ping(struct cli *cl, int argc, char **argv)
{
	json_object	*r;
	int64_t		 t0 = util_monotonic_ms();
	int		 rc = 0;

	(void)argv;
	if (argc != 1)
		return cli_usage_error("ping takes no arguments%s", "");
	if ((r = cli_call(cl, "ping", NULL, &rc)) == NULL)
		return rc;
	if (cl->json)
		cli_print_json(r);
	else
		printf("pong in %lld ms\n", (long long)(util_monotonic_ms() - t0));
	json_object_put(r);
	return 0;
}

/* bytes for a person: "812 bytes", "80 KiB", "1.5 MiB", "1 GiB". */
static const char *
status_size(int64_t bytes, char *buf, size_t len)
{
	static const char	*unit[] = { "bytes", "KiB", "MiB", "GiB",
				    "TiB" };
	double			 v = (double)bytes;
	size_t			 u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 && v != (double)(int64_t)v ? "%.1f %s" :
	    "%.0f %s", v, unit[u]);
	return buf;
}

static int
cmd_status(struct cli *cl, int argc, char **argv)
{
	json_object	*s, *q, *st, *b, *js, *l;
	int		 rc = 0;
	size_t		 i;
	char		 used[32], size[32];

	(void)argv;
	if (argc != 1)
		return cli_usage_error("status takes no arguments%s", "");
	if ((s = cli_call(cl, "server_status", NULL, &rc)) == NULL)
		return rc;
	if ((q = cli_call(cl, "queue_status", NULL, &rc)) == NULL) {
		json_object_put(s);
		return rc;
	}
	if (cl->json) {
		json_object *both = json_object_new_object();

		json_object_object_add(both, "server", s);
		json_object_object_add(both, "queue", q);
		cli_print_json(both);
		json_object_put(both);
		return 0;
	}
	st = json_object_object_get(s, "store");
	js = json_object_object_get(s, "jobs_by_status");
	b = json_object_object_get(q, "busy");
	l = json_object_object_get(s, "listen");
	printf("cmdgated %s, pid %lld, up %lld s, %lld client%s\n",
	    cli_hstr(s, "version"), (long long)cli_int(s, "pid"),
	    (long long)cli_int(s, "uptime_s"),
	    (long long)cli_int(s, "clients"),
	    cli_int(s, "clients") == 1 ? "" : "s");
	printf("listening:");
	for (i = 0; i < json_object_array_length(l); i++)
		printf(" %s", cli_vis(json_object_get_string(
		    json_object_array_get_idx(l, i))));
	printf("\nstore: %s, %lld job%s, %s used of %s\n",
	    cli_hstr(st, "path"), (long long)cli_int(st, "jobs"),
	    cli_int(st, "jobs") == 1 ? "" : "s",
	    status_size(cli_int(st, "map_used_bytes"), used, sizeof(used)),
	    status_size(cli_int(st, "map_size_bytes"), size, sizeof(size)));
	printf("jobs: %lld queued, %lld running, %lld done, %lld failed, "
	    "%lld cancelled\n", (long long)cli_int(js, "queued"),
	    (long long)cli_int(js, "running"), (long long)cli_int(js, "done"),
	    (long long)cli_int(js, "failed"),
	    (long long)cli_int(js, "cancelled"));
	printf("queue: heavy %s, %lld smooth in flight, %lld worker%s alive\n",
	    *cli_hstr(q, "heavy_active") ? cli_hstr(q, "heavy_active") : "none",
	    (long long)cli_int(q, "smooth_in_flight"),
	    (long long)cli_int(q, "workers_alive"),
	    cli_int(q, "workers_alive") == 1 ? "" : "s");
	printf("holding reloads:%s%s%s%s\n",
	    json_object_get_boolean(json_object_object_get(b,
	    "tests_running")) ? " tests_running" : "",
	    json_object_get_boolean(json_object_object_get(b, "compiling")) ?
	    " compiling" : "",
	    json_object_get_boolean(json_object_object_get(b, "editor_busy")) ?
	    " editor_busy" : "",
	    json_object_get_boolean(json_object_object_get(b,
	    "tests_running")) || json_object_get_boolean(
	    json_object_object_get(b, "compiling")) ||
	    json_object_get_boolean(json_object_object_get(b, "editor_busy")) ?
	    "" : " nothing");
	json_object_put(s);
	json_object_put(q);
	return 0;
}

static const char *
reload_text(json_object *d)
{
	json_object	*r = json_object_object_get(d, "reload");

	if (json_object_is_type(r, json_type_boolean))
		return json_object_get_boolean(r) ? "yes" : "no";
	return "if";
}

static int
cmd_tools(struct cli *cl, int argc, char **argv)
{
	json_object	*r, *list, *d;
	size_t		 i;
	int		 rc = 0;

	(void)argv;
	if (argc != 1)
		return cli_usage_error("tools takes no arguments%s", "");
	if ((r = cli_call(cl, "list_tools", NULL, &rc)) == NULL)
		return rc;
	if (cl->json) {
		cli_print_json(r);
		json_object_put(r);
		return 0;
	}
	list = json_object_object_get(r, "tools");
	printf("%-20s %-8s %-6s %-14s %-8s %s\n", "NAME", "TIER", "RELOAD",
	    "BUSY", "ENABLED", "DESCRIPTION");
	for (i = 0; i < json_object_array_length(list); i++) {
		d = json_object_array_get_idx(list, i);
		printf("%-20s %-8s %-6s %-14s %-8s %s\n", cli_hstr(d, "name"),
		    cli_hstr(d, "tier"), reload_text(d),
		    *cli_hstr(d, "busy") ? cli_hstr(d, "busy") : "-",
		    json_object_get_boolean(json_object_object_get(d,
		    "enabled")) ? "yes" : "no", cli_hstr(d, "description"));
	}
	json_object_put(r);
	return 0;
}

static int
cmd_tool(struct cli *cl, int argc, char **argv)
{
	json_object	*p, *d;
	int		 rc = 0;

	if (argc != 2)
		return cli_usage_error("tool needs a NAME%s", "");
	p = json_object_new_object();
	json_object_object_add(p, "name", json_object_new_string(argv[1]));
	if ((d = cli_call(cl, "get_tool_details", p, &rc)) == NULL)
		return rc;
	if (cl->json)
		cli_print_json(d);
	else {
		printf("%s: %s\n", cli_hstr(d, "name"),
		    cli_hstr(d, "description"));
		printf("  tier %s, reload %s, busy %s, %s, timeout %lld s\n",
		    cli_hstr(d, "tier"), cli_vis(json_object_to_json_string_ext(
		    json_object_object_get(d, "reload"),
		    JSON_C_TO_STRING_PLAIN)),
		    *cli_hstr(d, "busy") ? cli_hstr(d, "busy") : "-",
		    json_object_get_boolean(json_object_object_get(d,
		    "enabled")) ? "enabled" : "DISABLED",
		    (long long)cli_int(d, "timeout_s"));
		printf("  params: %s\n", cli_vis_keep(
		    json_object_to_json_string_ext(json_object_object_get(d,
		    "params"), JSON_C_TO_STRING_PRETTY |
		    JSON_C_TO_STRING_NOSLASHESCAPE), "\n"));
	}
	json_object_put(d);
	return 0;
}

static int
editor_report(struct cli *cl, int tests, int compiling, int busy)
{
	json_object	*p = json_object_new_object(), *r;
	int		 rc = 0;

	json_object_object_add(p, "tests_running",
	    json_object_new_boolean(tests));
	json_object_object_add(p, "compiling",
	    json_object_new_boolean(compiling));
	json_object_object_add(p, "busy", json_object_new_boolean(busy));
	if ((r = cli_call(cl, "report_editor_state", p, &rc)) == NULL)
		return rc;
	json_object_put(r);
	return 0;
}

/* editor-state: what it holds, for whom, and its link to the broker. */
struct hold {
	int	 tests, compiling, busy;
	pid_t	 pid;		/* the command */
	int	 pidfd;		/* -1: look with waitpid on a timer */
	int64_t	 lost_at;	/* monotonic ms; -1 while connected */
	int64_t	 retry_at, backoff;
	int64_t	 limit_ms;	/* --reconnect-timeout */
	int	 failed;	/* not back within limit_ms */
};

/* Read what the broker sent (notifications): -1 once it is gone. */
static int
editor_drain(struct cli *cl)
{
	char	buf[4096];
	ssize_t	n;

	for (;;) {
		n = recv(cl->c.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		snprintf(cl->c.err, sizeof(cl->c.err), "%s", n == 0 ?
		    "the broker closed the connection" : strerror(errno));
		return -1;
	}
}

static void
editor_lost(struct cli *cl, struct hold *h)
{
	fprintf(stderr, "cmdgate: editor-state: lost the broker (%s): reload "
	    "jobs are not held until it is back; reconnecting\n",
	    cli_vis(cl->c.err));
	client_close(&cl->c);
	h->lost_at = h->retry_at = util_monotonic_ms();
	h->backoff = RECONNECT_FIRST_MS;
}

/* Connect, authenticate and report the flags again: 0, or -1. */
static int
editor_reconnect(struct cli *cl, struct hold *h)
{
	json_object	*p, *r, *e = NULL;

	if (client_connect(&cl->c, &cl->t) != 0) {
		client_close(&cl->c);
		return -1;
	}
	p = json_object_new_object();
	json_object_object_add(p, "tests_running",
	    json_object_new_boolean(h->tests));
	json_object_object_add(p, "compiling",
	    json_object_new_boolean(h->compiling));
	json_object_object_add(p, "busy", json_object_new_boolean(h->busy));
	if ((r = client_call(&cl->c, "report_editor_state", p, &e)) == NULL) {
		if (e != NULL)
			snprintf(cl->c.err, sizeof(cl->c.err), "%s",
			    cli_hstr(json_object_object_get(e, "data"),
			    "reason"));
		json_object_put(e);
		client_close(&cl->c);
		return -1;
	}
	json_object_put(r);
	return 0;
}

/* One try to get back; the next in a growing, bounded while. */
static void
editor_retry(struct cli *cl, struct hold *h)
{
	int64_t	now;

	if (editor_reconnect(cl, h) == 0) {
		fprintf(stderr, "cmdgate: editor-state: reconnected: reload "
		    "jobs are held again\n");
		h->lost_at = -1;
		return;
	}
	now = util_monotonic_ms();
	if (!h->failed && now - h->lost_at >= h->limit_ms) {
		h->failed = 1;
		fprintf(stderr, "cmdgate: editor-state: could not get back to "
		    "the broker within %llds (%s): reload jobs are NOT held "
		    "while the command runs; still trying, and exiting %d\n",
		    (long long)h->limit_ms / 1000, cli_vis(cl->c.err),
		    CX_UNAVAILABLE);
	}
	h->retry_at = now + h->backoff;
	h->backoff = h->backoff * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS :
	    h->backoff * 2;
}

/* How long to wait for the next event; -1: until one comes. */
static int
editor_wait_ms(const struct hold *h)
{
	int64_t	wait = -1;

	if (h->lost_at >= 0) {
		wait = h->retry_at - util_monotonic_ms();
		if (wait < 0)
			wait = 0;
	}
	if (h->pidfd == -1 && (wait < 0 || wait > CHILD_POLL_MS))
		wait = CHILD_POLL_MS;
	return (int)wait;
}

/*
 * Until the command ends: keep the connection, and when the broker goes
 * get back to it (its restart keeps our flags for --editor-grace).  The
 * command's wait status.
 */
static int
editor_watch(struct cli *cl, struct hold *h)
{
	struct pollfd	pfd[2];
	pid_t		r;
	int		status;

	for (;;) {
		pfd[0].fd = h->pidfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = h->lost_at < 0 ? cl->c.fd : -1;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, editor_wait_ms(h)) == -1 && errno != EINTR)
			fprintf(stderr, "cmdgate: poll: %s\n", strerror(errno));
		while ((r = waitpid(h->pid, &status, WNOHANG)) == -1 &&
		    errno == EINTR)
			;
		if (r == h->pid || r == -1)
			return r == -1 ? W_EXITCODE(CX_UNAVAILABLE, 0) : status;
		if (h->lost_at < 0 && pfd[1].revents != 0 &&
		    editor_drain(cl) == -1)
			editor_lost(cl, h);
		if (h->lost_at >= 0 && util_monotonic_ms() >= h->retry_at)
			editor_retry(cl, h);
	}
}

/* The editor-state flags before --; the index of --, or -1 (usage). */
static int
editor_flags(int argc, char **argv, struct hold *h)
{
	uint64_t	s;
	int		i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--tests-running") == 0)
			h->tests = 1;
		else if (strcmp(argv[i], "--compiling") == 0)
			h->compiling = 1;
		else if (strcmp(argv[i], "--busy") == 0)
			h->busy = 1;
		else if (strcmp(argv[i], "--reconnect-timeout") == 0 &&
		    i + 1 < argc && util_parse_u64(argv[i + 1], 1, 3600,
		    &s) == 0) {
			h->limit_ms = (int64_t)s * 1000;
			i++;
		} else {
			cli_usage_error("editor-state: bad flag or value at "
			    "'%s'", argv[i]);
			return -1;
		}
	}
	if (i + 1 >= argc) {
		cli_usage_error("editor-state needs -- CMD [ARG ...]%s", "");
		return -1;
	}
	return i;
}

/*
 * Hold the flags while CMD runs, across broker restarts; CMD's exit
 * status (128+N on signal N), or CX_UNAVAILABLE when the hold was lost
 * for longer than --reconnect-timeout.
 */
static int
cmd_editor_state(struct cli *cl, int argc, char **argv)
{
	struct hold	h;
	int		i, rc, status;

	memset(&h, 0, sizeof(h));
	h.lost_at = -1;
	h.limit_ms = RECONNECT_TIMEOUT_S * 1000;
	if ((i = editor_flags(argc, argv, &h)) == -1)
		return CX_USAGE;
	if ((rc = editor_report(cl, h.tests, h.compiling, h.busy)) != 0)
		return rc;
	if ((h.pid = fork()) == 0) {
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "cmdgate: %s: %s\n", argv[i + 1],
		    strerror(errno));
		_exit(127);
	}
	if (h.pid == -1) {
		fprintf(stderr, "cmdgate: fork: %s\n", strerror(errno));
		return CX_UNAVAILABLE;
	}
	h.pidfd = pidfd_open(h.pid, 0);
	status = editor_watch(cl, &h);
	if (h.pidfd != -1)
		close(h.pidfd);
	/* Closing the connection clears the flags too; say it anyway. */
	if (h.lost_at < 0)
		editor_report(cl, 0, 0, 0);
	if (h.failed) {
		fprintf(stderr, "cmdgate: editor-state: the hold was lost for "
		    "longer than %llds while the command ran\n",
		    (long long)h.limit_ms / 1000);
		return CX_UNAVAILABLE;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
}

/* ---- main -------------------------------------------------------------- */

/* The target's port and --reply-timeout (reply, NULL: none): 0 or an
 * exit status, said. */
static int
cmd_target_check(struct cli *cl, const char *reply)
{
	uint64_t	port, secs;

	if (util_parse_u64(cl->t.port, 1, 65535, &port) == -1)
		return cli_usage_error("port '%s' is not 1-65535", cl->t.port);
	if (reply != NULL && *reply != '\0') {
		if (util_parse_u64(reply, 1, REPLY_TIMEOUT_MAX, &secs) == -1)
			return cli_usage_error("--reply-timeout '%s' is not "
			    "1-3600 seconds", reply);
		cl->t.reply_timeout_ms = (int64_t)secs * 1000;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "instance", required_argument, NULL, 'I' },
		{ "token-file", required_argument, NULL, 't' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "reply-timeout", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli	 cl;
	const char	*reply = getenv("CMDGATE_REPLY_TIMEOUT");
	const char	*inst = getenv("CMDGATE_INSTANCE");
	int		 aimed;
	size_t		 i;
	int		 ch, rc;

	memset(&cl, 0, sizeof(cl));
	cl.c.fd = -1;
	cl.t.host = "127.0.0.1";
	cl.t.port = getenv("CMDGATE_PORT") ? getenv("CMDGATE_PORT") :
	    DEFAULT_PORT;
	cl.t.socket = getenv("CMDGATE_SOCKET");
	cl.t.token_file = getenv("CMDGATE_TOKEN_FILE");
	if (cl.t.socket != NULL && *cl.t.socket == '\0')
		cl.t.socket = NULL;
	if (cl.t.token_file != NULL && *cl.t.token_file == '\0')
		cl.t.token_file = NULL;
	if (inst != NULL && *inst == '\0')
		inst = NULL;
	aimed = inst != NULL || cl.t.socket != NULL ||
	    getenv("CMDGATE_PORT") != NULL;
	while ((ch = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			cl.t.host = optarg;
			cl.t.socket = NULL;
			inst = NULL;
			aimed = 1;
			break;
		case 'p':
			cl.t.port = optarg;
			cl.t.socket = NULL;
			inst = NULL;
			aimed = 1;
			break;
		case 's':
			cl.t.socket = optarg;
			inst = NULL;
			aimed = 1;
			break;
		case 'I':
			inst = optarg;
			aimed = 1;
			break;
		case 't':
			cl.t.token_file = optarg;
			break;
		case 'S':
			cl.t.state_dir = optarg;
			break;
		case 'j':
			cl.json = 1;
			break;
		case 'r':
			reply = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("cmdgate %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return CX_USAGE;
		}
	}
	if (inst != NULL && (rc = cli_instance_use(&cl, inst)) != 0)
		goto out;
	if (!aimed)
		cli_instance_default(&cl);
	if ((rc = cmd_target_check(&cl, reply)) != 0)
		goto out;
	if (optind >= argc) {
		usage(stderr);
		rc = CX_USAGE;
		goto out;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			break;
	if (i == NCOMMANDS) {
		rc = cli_usage_error("unknown command '%s'", argv[optind]);
		goto out;
	}
	if (commands[i].connect && (rc = client_connect(&cl.c, &cl.t)) != 0)
		fprintf(stderr, "cmdgate: %s\n", cl.c.err);
	else
		rc = commands[i].fn(&cl, argc - optind, argv + optind);
	client_close(&cl.c);
out:
	/* An instance's file, read whatever the outcome (LSan counts it). */
	json_object_put(cl.inst);
	return rc;
}
