/* SPDX-License-Identifier: ISC */
/*
 * cmdgate: the client of cmdgated(8) for people and scripts, and the MCP
 * stdio bridge for LLM clients.  See cmdgate(1).
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

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <json-c/json.h>

#include "client.h"
#include "util.h"

#define DEFAULT_PORT	"8700"
#define WAIT_STEP_S	1	/* how often a wait shows a change */
#define SUBMIT_TIMEOUT	300
#define REPLY_TIMEOUT_MAX 3600	/* --reply-timeout, seconds */
#define VIS_SLOTS	16	/* vis() results alive at once */
#define RECONNECT_FIRST_MS 100	/* editor-state: first retry, then doubled */
#define RECONNECT_MAX_MS 1000	/* up to this between tries */
#define RECONNECT_TIMEOUT_S 10	/* default --reconnect-timeout */
#define CHILD_POLL_MS	100	/* without a pidfd: look this often */

struct cli {
	struct cg_target	 t;
	struct cg_client	 c;
	int			 json;
};

typedef int (*cmd_fn)(struct cli *, int, char **);

static int	cmd_ping(struct cli *, int, char **);
static int	cmd_status(struct cli *, int, char **);
static int	cmd_tools(struct cli *, int, char **);
static int	cmd_tool(struct cli *, int, char **);
static int	cmd_submit(struct cli *, int, char **);
static int	cmd_poll(struct cli *, int, char **);
static int	cmd_wait(struct cli *, int, char **);
static int	cmd_cancel(struct cli *, int, char **);
static int	cmd_jobs(struct cli *, int, char **);
static int	cmd_editor_state(struct cli *, int, char **);
static int	cmd_mcp(struct cli *, int, char **);
static int	cmd_mcp_config(struct cli *, int, char **);
static const char *hstr(json_object *, const char *);

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
	{ "editor-state", cmd_editor_state, 1, "editor-state "
	    "[--tests-running] [--compiling] [--busy]\n"
	    "              [--reconnect-timeout S] -- CMD [ARG ...]" },
	{ "mcp", cmd_mcp, 1, "mcp" },
	{ "mcp-config", cmd_mcp_config, 0, "mcp-config "
	    "[--client claude|cursor|vscode|generic]" },
};
#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: cmdgate [--host H] [--port P] [--socket PATH] "
	    "[--token-file F] [--state-dir D]\n"
	    "               [--json] [--reply-timeout S] COMMAND [ARG ...]\n"
	    "commands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %s\n", commands[i].usage);
}

static int
die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "cmdgate: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see cmdgate --help)\n");
	return CX_USAGE;
}

/* Print a broker error; the exit status that fits it. */
static int
report_error(struct cli *cl, json_object *error)
{
	json_object	*d;

	if (error == NULL) {
		fprintf(stderr, "cmdgate: %s\n", cl->c.err);
		return CX_UNAVAILABLE;
	}
	d = json_object_object_get(error, "data");
	fprintf(stderr, "cmdgate: %s (%s): %s\n", hstr(error, "message"),
	    hstr(d, "type"), hstr(d, "reason"));
	return cg_error_status(error);
}

/* Bytes of the UTF-8 sequence at p, or 0 when it is not one. */
static size_t
utf8_seq(const unsigned char *p)
{
	size_t	n, i;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static const char *
jstr(json_object *o, const char *key)
{
	json_object	*v;

	if (!json_object_object_get_ex(o, key, &v) || v == NULL)
		return "";
	return json_object_get_string(v);
}

/*
 * s as it may be shown on a terminal: C0 controls, DEL and bytes that are
 * not UTF-8 as \xHH, C1 controls (U+0080 to U+009F) as \u00HH, so that a
 * name or an output cannot drive the terminal; the characters in keep
 * stay as they are; NULL is "".  Borrowed: valid until VIS_SLOTS more
 * calls.
 */
static const char *
vis_keep(const char *s, const char *keep)
{
	static char	*slot[VIS_SLOTS];
	static size_t	 next;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char		*o, **buf = &slot[next++ % VIS_SLOTS];
	size_t		 n;

	free(*buf);
	o = *buf = xmalloc(strlen((const char *)p) * 6 + 1);
	while (*p != '\0') {
		if ((*p < 0x20 && strchr(keep, *p) == NULL) || *p == 0x7f) {
			o += sprintf(o, "\\x%02x", *p++);
			continue;
		}
		if ((n = utf8_seq(p)) == 0) {
			o += sprintf(o, "\\x%02x", *p++);
			continue;
		}
		if (p[0] == 0xc2 && p[1] < 0xa0) {
			o += sprintf(o, "\\u%04x", p[1]);
			p += 2;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return *buf;
}

static const char *
vis(const char *s)
{
	return vis_keep(s, "");
}

/* The member key of o, shown safely (vis()); "" when absent. */
static const char *
hstr(json_object *o, const char *key)
{
	return vis(jstr(o, key));
}

static int64_t
jint(json_object *o, const char *key)
{
	return json_object_get_int64(json_object_object_get(o, key));
}

static void
print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * Call, for an answer that may take wait_s more than --reply-timeout; on
 * error print it and return NULL with *rc set.
 */
static json_object *
call_wait(struct cli *cl, const char *method, json_object *params,
    int64_t wait_s, int *rc)
{
	json_object	*r, *e = NULL;

	if ((r = cg_call_wait(&cl->c, method, params, wait_s * 1000,
	    &e)) == NULL) {
		*rc = report_error(cl, e);
		json_object_put(e);
	}
	return r;
}

static json_object *
call(struct cli *cl, const char *method, json_object *params, int *rc)
{
	return call_wait(cl, method, params, 0, rc);
}

/* ---- job display ----------------------------------------------------- */

static int
job_status_exit(json_object *job)
{
	const char	*s = jstr(job, "status");

	if (strcmp(s, "done") == 0)
		return CX_DONE;
	if (strcmp(s, "failed") == 0)
		return CX_FAILED;
	if (strcmp(s, "cancelled") == 0)
		return CX_CANCELLED;
	return CX_RUNNING;
}

static void
print_text_block(const char *label, const char *text)
{
	const char	*p = text, *nl;
	char		*line;
	size_t		 n;

	if (*text == '\0')
		return;
	printf("      %s:\n", label);
	while (*p != '\0') {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		line = xmalloc(n + 1);
		memcpy(line, p, n);
		line[n] = '\0';
		printf("        %s\n", vis_keep(line, "\t"));
		free(line);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
}

/* One line of where a job stands. */
static void
job_state_line(json_object *job, char *buf, size_t len)
{
	json_object	*p = json_object_object_get(job, "progress");
	const char	*st = jstr(job, "status"), *bb = jstr(job, "blocked_by");

	if (strcmp(st, "queued") == 0)
		snprintf(buf, len, "%s queued, position %lld%s%s",
		    hstr(job, "ticket"), (long long)jint(job, "position"),
		    *bb ? ", blocked by " : "", vis(bb));
	else
		snprintf(buf, len, "%s %s, %lld of %lld commands",
		    hstr(job, "ticket"), vis(st), (long long)jint(p, "completed"),
		    (long long)jint(p, "total"));
}

static void
print_job(struct cli *cl, json_object *job)
{
	json_object	*res = json_object_object_get(job, "results"), *r;
	char		 line[256];
	size_t		 i;

	if (cl->json) {
		print_json(job);
		return;
	}
	job_state_line(job, line, sizeof(line));
	printf("%s\n", line);
	printf("  %s%s, agent %s%s%s\n", hstr(job, "tier"),
	    json_object_get_boolean(json_object_object_get(job,
	    "causes_reload")) ? " reload" : "", hstr(job, "agent"),
	    *hstr(job, "label") ? ", label " : "", hstr(job, "label"));
	if (*hstr(job, "error"))
		printf("  error: %s\n", hstr(job, "error"));
	for (i = 0; res != NULL && i < json_object_array_length(res); i++) {
		r = json_object_array_get_idx(res, i);
		printf("  [%zu] %s: %s", i, hstr(r, "tool"),
		    json_object_get_boolean(json_object_object_get(r, "ok")) ?
		    "ok" : "FAILED");
		if (json_object_object_get_ex(r, "exit_code", NULL))
			printf(", exit %lld", (long long)jint(r, "exit_code"));
		if (*hstr(r, "signal"))
			printf(", %s", hstr(r, "signal"));
		printf(", %lld ms\n", (long long)jint(r, "duration_ms"));
		if (*hstr(r, "error"))
			printf("      error: %s\n", hstr(r, "error"));
		print_text_block("stdout", jstr(r, "stdout"));
		print_text_block("stderr", jstr(r, "stderr"));
	}
}

/* Print a job (taken); the exit status its state calls for. */
static int
show_job(struct cli *cl, json_object *job)
{
	int	rc;

	print_job(cl, job);
	rc = job_status_exit(job);
	json_object_put(job);
	return rc;
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
		return die_usage("ping takes no arguments%s", "");
	if ((r = call(cl, "ping", NULL, &rc)) == NULL)
		return rc;
	if (cl->json)
		print_json(r);
	else
		printf("pong in %lld ms\n", (long long)(util_monotonic_ms() - t0));
	json_object_put(r);
	return 0;
}

static int
cmd_status(struct cli *cl, int argc, char **argv)
{
	json_object	*s, *q, *st, *b, *js, *l;
	int		 rc = 0;
	size_t		 i;

	(void)argv;
	if (argc != 1)
		return die_usage("status takes no arguments%s", "");
	if ((s = call(cl, "server_status", NULL, &rc)) == NULL)
		return rc;
	if ((q = call(cl, "queue_status", NULL, &rc)) == NULL) {
		json_object_put(s);
		return rc;
	}
	if (cl->json) {
		json_object *both = json_object_new_object();

		json_object_object_add(both, "server", s);
		json_object_object_add(both, "queue", q);
		print_json(both);
		json_object_put(both);
		return 0;
	}
	st = json_object_object_get(s, "store");
	js = json_object_object_get(s, "jobs_by_status");
	b = json_object_object_get(q, "busy");
	l = json_object_object_get(s, "listen");
	printf("cmdgated %s, pid %lld, up %lld s, %lld clients\n",
	    hstr(s, "version"), (long long)jint(s, "pid"),
	    (long long)jint(s, "uptime_s"), (long long)jint(s, "clients"));
	printf("listening:");
	for (i = 0; i < json_object_array_length(l); i++)
		printf(" %s", vis(json_object_get_string(
		    json_object_array_get_idx(l, i))));
	printf("\nstore: %s, %lld jobs, %lld KiB used of %lld KiB\n",
	    hstr(st, "path"), (long long)jint(st, "jobs"),
	    (long long)jint(st, "map_used_bytes") / 1024,
	    (long long)jint(st, "map_size_bytes") / 1024);
	printf("jobs: %lld queued, %lld running, %lld done, %lld failed, "
	    "%lld cancelled\n", (long long)jint(js, "queued"),
	    (long long)jint(js, "running"), (long long)jint(js, "done"),
	    (long long)jint(js, "failed"), (long long)jint(js, "cancelled"));
	printf("queue: heavy %s, %lld smooth in flight, %lld workers alive\n",
	    *hstr(q, "heavy_active") ? hstr(q, "heavy_active") : "none",
	    (long long)jint(q, "smooth_in_flight"),
	    (long long)jint(q, "workers_alive"));
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
		return die_usage("tools takes no arguments%s", "");
	if ((r = call(cl, "list_tools", NULL, &rc)) == NULL)
		return rc;
	if (cl->json) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	list = json_object_object_get(r, "tools");
	printf("%-20s %-8s %-6s %-14s %-8s %s\n", "NAME", "TIER", "RELOAD",
	    "BUSY", "ENABLED", "DESCRIPTION");
	for (i = 0; i < json_object_array_length(list); i++) {
		d = json_object_array_get_idx(list, i);
		printf("%-20s %-8s %-6s %-14s %-8s %s\n", hstr(d, "name"),
		    hstr(d, "tier"), reload_text(d),
		    *hstr(d, "busy") ? hstr(d, "busy") : "-",
		    json_object_get_boolean(json_object_object_get(d,
		    "enabled")) ? "yes" : "no", hstr(d, "description"));
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
		return die_usage("tool needs a NAME%s", "");
	p = json_object_new_object();
	json_object_object_add(p, "name", json_object_new_string(argv[1]));
	if ((d = call(cl, "get_tool_details", p, &rc)) == NULL)
		return rc;
	if (cl->json)
		print_json(d);
	else {
		printf("%s: %s\n", hstr(d, "name"), hstr(d, "description"));
		printf("  tier %s, reload %s, busy %s, %s, timeout %lld s\n",
		    hstr(d, "tier"), vis(json_object_to_json_string_ext(
		    json_object_object_get(d, "reload"),
		    JSON_C_TO_STRING_PLAIN)),
		    *hstr(d, "busy") ? hstr(d, "busy") : "-",
		    json_object_get_boolean(json_object_object_get(d,
		    "enabled")) ? "enabled" : "DISABLED",
		    (long long)jint(d, "timeout_s"));
		printf("  params: %s\n", vis_keep(
		    json_object_to_json_string_ext(json_object_object_get(d,
		    "params"), JSON_C_TO_STRING_PRETTY |
		    JSON_C_TO_STRING_NOSLASHESCAPE), "\n"));
	}
	json_object_put(d);
	return 0;
}

/*
 * key=value sets a string, converted when the tool's schema gives the
 * parameter another type; key:=JSON sets any JSON value.
 */
static int
add_param(struct cli *cl, json_object *params, json_object *schema,
    const char *arg)
{
	const char	*eq = strchr(arg, '=');
	json_object	*props, *prop, *type, *v;
	char		 key[256];
	size_t		 klen;
	int		 raw;

	if (eq == NULL || eq == arg)
		return die_usage("'%s' is not key=value or key:=JSON", arg);
	raw = eq[-1] == ':';
	klen = (size_t)(eq - arg) - (size_t)raw;
	if (klen == 0 || klen >= sizeof(key))
		return die_usage("'%s' has no key", arg);
	memcpy(key, arg, klen);
	key[klen] = '\0';
	type = NULL;
	if (json_object_object_get_ex(schema, "properties", &props) &&
	    json_object_object_get_ex(props, key, &prop))
		json_object_object_get_ex(prop, "type", &type);
	if (raw || (type != NULL && strcmp(json_object_get_string(type),
	    "string") != 0)) {
		v = json_tokener_parse(eq + 1);
		if (v == NULL && strcmp(eq + 1, "null") != 0)
			return die_usage("'%s': the value is not JSON", arg);
	} else
		v = json_object_new_string(eq + 1);
	(void)cl;
	json_object_object_add(params, key, v);
	return 0;
}

static json_object *
tool_schema(struct cli *cl, const char *tool)
{
	json_object	*p = json_object_new_object(), *d, *e = NULL, *s;

	json_object_object_add(p, "name", json_object_new_string(tool));
	if ((d = cg_call(&cl->c, "get_tool_details", p, &e)) == NULL) {
		json_object_put(e);
		return NULL;	/* the submit will say what is wrong */
	}
	s = json_object_get(json_object_object_get(d, "params"));
	json_object_put(d);
	return s;
}

/* Poll until the job ends or timeout_s passes; the last job object. */
static json_object *
wait_job(struct cli *cl, const char *ticket, int64_t timeout_s, int *rc)
{
	json_object	*p, *job = NULL;
	int64_t		 deadline = util_monotonic_ms() + timeout_s * 1000;
	int64_t		 left, step;
	int		 tty = isatty(1) && !cl->json;
	char		 line[256], last[256] = "";

	for (;;) {
		left = (deadline - util_monotonic_ms()) / 1000;
		if (left < 0)
			left = 0;
		p = json_object_new_object();
		json_object_object_add(p, "ticket",
		    json_object_new_string(ticket));
		step = left > WAIT_STEP_S ? WAIT_STEP_S : left;
		json_object_object_add(p, "timeout_s",
		    json_object_new_int64(step));
		json_object_put(job);
		if ((job = call_wait(cl, "wait_job", p, step, rc)) == NULL)
			return NULL;
		job_state_line(job, line, sizeof(line));
		if (job_status_exit(job) != CX_RUNNING || left == 0)
			break;
		if (strcmp(line, last) != 0) {
			if (tty)
				printf("\r\033[K%s", line);
			else if (!cl->json)
				printf("%s\n", line);
			fflush(stdout);
			snprintf(last, sizeof(last), "%s", line);
		}
	}
	if (tty && last[0] != '\0')
		printf("\r\033[K");
	return job;
}

struct submit_opts {
	const char	*agent, *label;
	int		 atomic, fail_fast, async;
	int64_t		 timeout;
};

static int
submit_flag(struct submit_opts *o, int argc, char **argv, int *i)
{
	const char	*a = argv[*i];
	uint64_t	 t;

	if (strcmp(a, "--atomic") == 0)
		o->atomic = 1;
	else if (strcmp(a, "--fail-fast") == 0)
		o->fail_fast = 1;
	else if (strcmp(a, "--async") == 0)
		o->async = 1;
	else if (strcmp(a, "--wait") == 0)
		o->async = 0;
	else if (*i + 1 >= argc)
		return die_usage("'%s' needs a value or is unknown", a);
	else if (strcmp(a, "--agent") == 0)
		o->agent = argv[++*i];
	else if (strcmp(a, "--label") == 0)
		o->label = argv[++*i];
	else if (strcmp(a, "--timeout") == 0) {
		if (util_parse_u64(argv[++*i], 0, 3600, &t) == -1)
			return die_usage("--timeout '%s' is not 0-3600",
			    argv[*i]);
		o->timeout = (int64_t)t;
	} else
		return die_usage("unknown flag '%s'", a);
	return 0;
}

/* Commands from argv: TOOL args [--then TOOL args]... */
static int
submit_commands(struct cli *cl, int argc, char **argv,
    struct submit_opts *o, json_object *cmds)
{
	json_object	*cmd = NULL, *params = NULL, *schema = NULL, *v;
	int		 i, rc = 0;

	for (i = 1; i < argc && rc == 0; i++) {
		if (cmd == NULL || strcmp(argv[i], "--then") == 0) {
			if (cmd != NULL && ++i >= argc) {
				rc = die_usage("--then needs a TOOL%s", "");
				break;
			}
			if (argv[i][0] == '-') {
				rc = die_usage("expected a TOOL, not '%s'",
				    argv[i]);
				break;
			}
			json_object_put(schema);
			schema = tool_schema(cl, argv[i]);
			cmd = json_object_new_object();
			params = json_object_new_object();
			json_object_object_add(cmd, "tool",
			    json_object_new_string(argv[i]));
			json_object_object_add(cmd, "params", params);
			json_object_array_add(cmds, cmd);
		} else if (strcmp(argv[i], "--params") == 0) {
			if (++i >= argc || (v = json_tokener_parse(argv[i])) ==
			    NULL || !json_object_is_type(v, json_type_object)) {
				rc = die_usage("--params needs a JSON "
				    "object%s", "");
				break;
			}
			json_object_object_foreach(v, key, val)
				json_object_object_add(params, key,
				    json_object_get(val));
			json_object_put(v);
		} else if (argv[i][0] == '-' && argv[i][1] == '-')
			rc = submit_flag(o, argc, argv, &i);
		else
			rc = add_param(cl, params, schema, argv[i]);
	}
	json_object_put(schema);
	if (rc == 0 && cmd == NULL)
		rc = die_usage("submit needs a TOOL%s", "");
	return rc;
}

/* A batch on stdin: a list of commands, or {commands, ...options}. */
static json_object *
submit_stdin(int *rc)
{
	struct json_tokener	*tok = json_tokener_new();
	json_object		*v = NULL, *p;
	char			 buf[65536];
	size_t			 n;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
		v = json_tokener_parse_ex(tok, buf, (int)n);
		if (json_tokener_get_error(tok) != json_tokener_continue)
			break;
	}
	json_tokener_free(tok);
	if (json_object_is_type(v, json_type_array)) {
		p = json_object_new_object();
		json_object_object_add(p, "commands", v);
		return p;
	}
	if (json_object_is_type(v, json_type_object))
		return v;
	json_object_put(v);
	*rc = die_usage("stdin holds no JSON batch (a list of commands, or "
	    "{\"commands\": [...]})%s", "");
	return NULL;
}

static int
cmd_submit(struct cli *cl, int argc, char **argv)
{
	struct submit_opts	 o = { NULL, NULL, 0, 0, 0, SUBMIT_TIMEOUT };
	json_object		*params, *r, *job;
	char			 ticket[64];
	int			 rc = 0, i;

	if (argc >= 2 && strcmp(argv[1], "-") == 0) {
		for (i = 2; i < argc; i++)
			if ((rc = submit_flag(&o, argc, argv, &i)) != 0)
				return rc;
		if ((params = submit_stdin(&rc)) == NULL)
			return rc;
	} else {
		params = json_object_new_object();
		json_object_object_add(params, "commands",
		    json_object_new_array());
		if ((rc = submit_commands(cl, argc, argv, &o,
		    json_object_object_get(params, "commands"))) != 0) {
			json_object_put(params);
			return rc;
		}
	}
	json_object_object_add(params, "async", json_object_new_boolean(1));
	if (o.agent != NULL)
		json_object_object_add(params, "agent",
		    json_object_new_string(o.agent));
	if (o.label != NULL)
		json_object_object_add(params, "label",
		    json_object_new_string(o.label));
	if (o.atomic)
		json_object_object_add(params, "atomic",
		    json_object_new_boolean(1));
	if (o.fail_fast)
		json_object_object_add(params, "fail_fast",
		    json_object_new_boolean(1));
	if ((r = call(cl, "batch_execute", params, &rc)) == NULL)
		return rc;
	snprintf(ticket, sizeof(ticket), "%s", jstr(r, "ticket"));
	if (o.async) {
		if (cl->json)
			print_json(r);
		else
			printf("%s %s%s%s\n", vis(ticket), hstr(r, "status"),
			    *hstr(r, "blocked_by") ? ", blocked by " : "",
			    hstr(r, "blocked_by"));
		json_object_put(r);
		return 0;
	}
	json_object_put(r);
	if ((job = wait_job(cl, ticket, o.timeout, &rc)) == NULL)
		return rc;
	return show_job(cl, job);
}

static json_object *
ticket_params(const char *ticket)
{
	json_object	*p = json_object_new_object();

	json_object_object_add(p, "ticket", json_object_new_string(ticket));
	return p;
}

static int
cmd_poll(struct cli *cl, int argc, char **argv)
{
	json_object	*job;
	int		 rc = 0;

	if (argc != 2)
		return die_usage("poll needs a TICKET%s", "");
	if ((job = call(cl, "poll_job", ticket_params(argv[1]), &rc)) == NULL)
		return rc;
	return show_job(cl, job);
}

static int
cmd_wait(struct cli *cl, int argc, char **argv)
{
	json_object	*job;
	uint64_t	 t = SUBMIT_TIMEOUT;
	int		 rc = 0;

	if (argc == 4 && strcmp(argv[2], "--timeout") == 0) {
		if (util_parse_u64(argv[3], 0, 3600, &t) == -1)
			return die_usage("--timeout '%s' is not 0-3600",
			    argv[3]);
	} else if (argc != 2)
		return die_usage("wait needs a TICKET [--timeout S]%s", "");
	if ((job = wait_job(cl, argv[1], (int64_t)t, &rc)) == NULL)
		return rc;
	return show_job(cl, job);
}

static int
cmd_cancel(struct cli *cl, int argc, char **argv)
{
	json_object	*r;
	int		 rc = 0;

	if (argc != 2)
		return die_usage("cancel needs a TICKET%s", "");
	if ((r = call(cl, "cancel_job", ticket_params(argv[1]), &rc)) == NULL)
		return rc;
	if (cl->json)
		print_json(r);
	else
		printf("%s %s (%s)\n", hstr(r, "ticket"),
		    json_object_get_boolean(json_object_object_get(r,
		    "cancelled")) ? "cancelled" : "not cancelled",
		    hstr(r, "status"));
	rc = json_object_get_boolean(json_object_object_get(r, "cancelled")) ?
	    0 : CX_FAILED;
	json_object_put(r);
	return rc;
}

static int
cmd_jobs(struct cli *cl, int argc, char **argv)
{
	json_object	*p = json_object_new_object(), *st = NULL, *r, *list, *j;
	uint64_t	 limit;
	size_t		 i;
	int		 rc = 0, k;

	for (k = 1; k < argc; k++) {
		if (k + 1 >= argc) {
			json_object_put(p);
			return die_usage("'%s' needs a value or is unknown",
			    argv[k]);
		}
		if (strcmp(argv[k], "--status") == 0) {
			if (st == NULL) {
				st = json_object_new_array();
				json_object_object_add(p, "status", st);
			}
			json_object_array_add(st,
			    json_object_new_string(argv[++k]));
		} else if (strcmp(argv[k], "--agent") == 0)
			json_object_object_add(p, "agent",
			    json_object_new_string(argv[++k]));
		else if (strcmp(argv[k], "--limit") == 0 &&
		    util_parse_u64(argv[k + 1], 1, 1000, &limit) == 0) {
			json_object_object_add(p, "limit",
			    json_object_new_int64((int64_t)limit));
			k++;
		} else {
			json_object_put(p);
			return die_usage("bad flag or value at '%s'", argv[k]);
		}
	}
	if ((r = call(cl, "list_jobs", p, &rc)) == NULL)
		return rc;
	if (cl->json) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	list = json_object_object_get(r, "jobs");
	printf("%-10s %-10s %-8s %-7s %-16s %-24s %s\n", "TICKET", "STATUS",
	    "TIER", "RELOAD", "AGENT", "CREATED", "LABEL");
	for (i = 0; i < json_object_array_length(list); i++) {
		j = json_object_array_get_idx(list, i);
		printf("%-10s %-10s %-8s %-7s %-16s %-24s %s\n",
		    hstr(j, "ticket"), hstr(j, "status"), hstr(j, "tier"),
		    json_object_get_boolean(json_object_object_get(j,
		    "causes_reload")) ? "yes" : "no", hstr(j, "agent"),
		    hstr(j, "created_at"), hstr(j, "label"));
	}
	if (*hstr(r, "next"))
		printf("(more: cmdgate jobs after %s)\n", hstr(r, "next"));
	json_object_put(r);
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
	if ((r = call(cl, "report_editor_state", p, &rc)) == NULL)
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
	    vis(cl->c.err));
	cg_close(&cl->c);
	h->lost_at = h->retry_at = util_monotonic_ms();
	h->backoff = RECONNECT_FIRST_MS;
}

/* Connect, authenticate and report the flags again: 0, or -1. */
static int
editor_reconnect(struct cli *cl, struct hold *h)
{
	json_object	*p, *r, *e = NULL;

	if (cg_connect(&cl->c, &cl->t) != 0) {
		cg_close(&cl->c);
		return -1;
	}
	p = json_object_new_object();
	json_object_object_add(p, "tests_running",
	    json_object_new_boolean(h->tests));
	json_object_object_add(p, "compiling",
	    json_object_new_boolean(h->compiling));
	json_object_object_add(p, "busy", json_object_new_boolean(h->busy));
	if ((r = cg_call(&cl->c, "report_editor_state", p, &e)) == NULL) {
		if (e != NULL)
			snprintf(cl->c.err, sizeof(cl->c.err), "%s",
			    hstr(json_object_object_get(e, "data"), "reason"));
		json_object_put(e);
		cg_close(&cl->c);
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
		    (long long)h->limit_ms / 1000, vis(cl->c.err),
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
			die_usage("editor-state: bad flag or value at '%s'",
			    argv[i]);
			return -1;
		}
	}
	if (i + 1 >= argc) {
		die_usage("editor-state needs -- CMD [ARG ...]%s", "");
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

/* ---- the MCP bridge ---------------------------------------------------- */

struct bridge {
	struct event_base	*base;
	struct bufferevent	*in, *out, *sock;
	int			 stdin_done, rc;
};

static void
bridge_stdin(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	bufferevent_write_buffer(b->sock, bufferevent_get_input(bev));
}

static void
bridge_sock(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	bufferevent_write_buffer(b->out, bufferevent_get_input(bev));
}

static void
bridge_sock_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	/* The client is done and all it said has gone: half-close. */
	if (b->stdin_done)
		shutdown(bufferevent_getfd(bev), SHUT_WR);
}

static void
bridge_out_flushed(struct bufferevent *bev, void *arg)
{
	struct bridge	*b = arg;

	(void)bev;
	if (b->sock == NULL)
		event_base_loopexit(b->base, NULL);
}

static void
bridge_stdin_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;

	(void)what;
	bufferevent_disable(bev, EV_READ);
	b->stdin_done = 1;
	if (evbuffer_get_length(bufferevent_get_output(b->sock)) == 0)
		shutdown(bufferevent_getfd(b->sock), SHUT_WR);
}

static void
bridge_sock_event(struct bufferevent *bev, short what, void *arg)
{
	struct bridge	*b = arg;

	if (!b->stdin_done) {
		fprintf(stderr, "cmdgate mcp: the broker closed the "
		    "connection%s\n", what & BEV_EVENT_ERROR ?
		    " with an error" : "");
		b->rc = CX_UNAVAILABLE;
	}
	bufferevent_write_buffer(b->out, bufferevent_get_input(bev));
	bufferevent_free(bev);
	b->sock = NULL;
	if (evbuffer_get_length(bufferevent_get_output(b->out)) == 0)
		event_base_loopexit(b->base, NULL);
}

static int
cmd_mcp(struct cli *cl, int argc, char **argv)
{
	struct bridge	 b;
	const char	*rest;
	size_t		 n;

	(void)argv;
	if (argc != 1)
		return die_usage("mcp takes no arguments%s", "");
	memset(&b, 0, sizeof(b));
	signal(SIGPIPE, SIG_IGN);
	if ((b.base = event_base_new()) == NULL)
		return CX_UNAVAILABLE;
	b.in = bufferevent_socket_new(b.base, 0, 0);
	b.out = bufferevent_socket_new(b.base, 1, 0);
	b.sock = bufferevent_socket_new(b.base, cl->c.fd, BEV_OPT_CLOSE_ON_FREE);
	if (b.in == NULL || b.out == NULL || b.sock == NULL)
		return CX_UNAVAILABLE;
	cl->c.fd = -1;	/* the bridge owns it now */
	/* Anything read past the authentication goes first. */
	if ((rest = jsonl_rest(&cl->c.jl, &n)) != NULL && n > 0)
		bufferevent_write(b.out, rest, n);
	bufferevent_setcb(b.in, bridge_stdin, NULL, bridge_stdin_event, &b);
	bufferevent_setcb(b.out, NULL, bridge_out_flushed, NULL, &b);
	bufferevent_setcb(b.sock, bridge_sock, bridge_sock_flushed,
	    bridge_sock_event, &b);
	bufferevent_enable(b.in, EV_READ);
	bufferevent_enable(b.sock, EV_READ | EV_WRITE);
	bufferevent_enable(b.out, EV_WRITE);
	event_base_dispatch(b.base);
	bufferevent_free(b.in);
	bufferevent_free(b.out);
	if (b.sock != NULL)
		bufferevent_free(b.sock);
	event_base_free(b.base);
	return b.rc;
}

static int
cmd_mcp_config(struct cli *cl, int argc, char **argv)
{
	const char	*client = "generic";
	json_object	*args, *srv, *root, *inner, *env;
	char		 self[PATH_MAX];
	ssize_t		 n;

	if (argc == 3 && strcmp(argv[1], "--client") == 0)
		client = argv[2];
	else if (argc != 1)
		return die_usage("mcp-config [--client claude|cursor|vscode|"
		    "generic]%s", "");
	if (strcmp(client, "claude") != 0 && strcmp(client, "cursor") != 0 &&
	    strcmp(client, "vscode") != 0 && strcmp(client, "generic") != 0)
		return die_usage("--client '%s': claude, cursor, vscode or "
		    "generic", client);
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		snprintf(self, sizeof(self), "cmdgate");
	else
		self[n] = '\0';
	args = json_object_new_array();
	if (cl->t.socket != NULL) {
		json_object_array_add(args, json_object_new_string("--socket"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.socket));
	} else {
		json_object_array_add(args, json_object_new_string("--port"));
		json_object_array_add(args, json_object_new_string(cl->t.port));
	}
	if (cl->t.token_file != NULL) {
		json_object_array_add(args,
		    json_object_new_string("--token-file"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.token_file));
	}
	if (cl->t.state_dir != NULL) {
		json_object_array_add(args,
		    json_object_new_string("--state-dir"));
		json_object_array_add(args,
		    json_object_new_string(cl->t.state_dir));
	}
	json_object_array_add(args, json_object_new_string("mcp"));
	srv = json_object_new_object();
	if (strcmp(client, "vscode") == 0)
		json_object_object_add(srv, "type",
		    json_object_new_string("stdio"));
	json_object_object_add(srv, "command", json_object_new_string(self));
	json_object_object_add(srv, "args", args);
	env = json_object_new_object();
	json_object_object_add(srv, "env", env);
	if (strcmp(client, "generic") == 0) {
		json_object_object_add(srv, "name",
		    json_object_new_string("cmdgate"));
		root = srv;
	} else {
		inner = json_object_new_object();
		json_object_object_add(inner, "cmdgate", srv);
		root = json_object_new_object();
		json_object_object_add(root, strcmp(client, "vscode") == 0 ?
		    "servers" : "mcpServers", inner);
	}
	printf("%s\n", json_object_to_json_string_ext(root,
	    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}

/* ---- main -------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
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
	uint64_t	 port, secs;
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
	while ((ch = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'H':
			cl.t.host = optarg;
			cl.t.socket = NULL;
			break;
		case 'p':
			cl.t.port = optarg;
			cl.t.socket = NULL;
			break;
		case 's':
			cl.t.socket = optarg;
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
	if (util_parse_u64(cl.t.port, 1, 65535, &port) == -1)
		return die_usage("port '%s' is not 1-65535", cl.t.port);
	if (reply != NULL && *reply != '\0') {
		if (util_parse_u64(reply, 1, REPLY_TIMEOUT_MAX, &secs) == -1)
			return die_usage("--reply-timeout '%s' is not 1-3600 "
			    "seconds", reply);
		cl.t.reply_timeout_ms = (int64_t)secs * 1000;
	}
	if (optind >= argc) {
		usage(stderr);
		return CX_USAGE;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[optind], commands[i].name) == 0)
			break;
	if (i == NCOMMANDS)
		return die_usage("unknown command '%s'", argv[optind]);
	if (commands[i].connect && (rc = cg_connect(&cl.c, &cl.t)) != 0) {
		fprintf(stderr, "cmdgate: %s\n", cl.c.err);
		cg_close(&cl.c);
		return rc;
	}
	rc = commands[i].fn(&cl, argc - optind, argv + optind);
	cg_close(&cl.c);
	return rc;
}
