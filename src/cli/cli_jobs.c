/* SPDX-License-Identifier: ISC */
/* cmdgate(1)'s job commands: submit, poll, wait, cancel, jobs. */
#include "config.h"

#include <sys/random.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "jstrict.h"
#include "util.h"

#define WAIT_STEP_S	1	/* how often a wait shows a change */
#define SUBMIT_TIMEOUT	300
#define SUBMIT_KEY_BYTES	16	/* a submit's own idempotency key */

static int
job_status_exit(json_object *job)
{
	const char	*s = cli_str(job, "status");

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
		printf("        %s\n", cli_vis_keep(line, "\t"));
		free(line);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
}

/*
 * What holds a queued job back, for a person: "blocked by tests_running
 * (held by t-000008 run_tests, running 14s)" (without how long, unless
 * elapsed), or "" when nothing does.
 */
static void
job_blocked_text(json_object *job, int elapsed, char *buf, size_t len)
{
	json_object	*held = json_object_object_get(job, "held_by"), *h;
	const char	*bb = cli_str(job, "blocked_by");
	size_t		 i, off;
	long long	 s;

	*buf = '\0';
	if (*bb == '\0')
		return;
	if (!json_object_is_type(held, json_type_array))
		held = NULL;	/* an older broker's */
	snprintf(buf, len, ", blocked by %s", cli_vis(bb));
	for (i = 0; held != NULL && i < json_object_array_length(held); i++) {
		h = json_object_array_get_idx(held, i);
		s = elapsed ? cli_elapsed(cli_str(h, "started_at")) : -1;
		off = strlen(buf);
		snprintf(buf + off, len - off, "%s%s %s%s%s", i == 0 ?
		    " (held by " : "; ", cli_hstr(h, "ticket"),
		    cli_job_tools(h), s < 0 ? "" : ", running ", s < 0 ? "" :
		    cli_duration(s));
	}
	if (held != NULL && json_object_array_length(held) > 0 &&
	    strlen(buf) + 1 < len)
		strcat(buf, ")");
}

/* One line of where a job stands; with how long it has waited. */
static void
job_state_line(json_object *job, int elapsed, char *buf, size_t len)
{
	json_object	*p = json_object_object_get(job, "progress");
	const char	*st = cli_str(job, "status");
	char		 since[48] = "", why[192];
	long long	 s = cli_elapsed(cli_str(job, "created_at"));

	if (elapsed && s >= 0)
		snprintf(since, sizeof(since), " %s", cli_duration(s));
	job_blocked_text(job, elapsed, why, sizeof(why));
	if (strcmp(st, "queued") == 0)
		snprintf(buf, len, "%s queued%s, position %lld%s",
		    cli_hstr(job, "ticket"), since,
		    (long long)cli_int(job, "position"), why);
	else
		snprintf(buf, len, "%s %s, %lld of %lld commands",
		    cli_hstr(job, "ticket"), cli_vis(st),
		    (long long)cli_int(p, "completed"),
		    (long long)cli_int(p, "total"));
}

static void
print_job(struct cli *cl, json_object *job)
{
	json_object	*res = json_object_object_get(job, "results"), *r;
	char		 line[256];
	size_t		 i;

	if (cl->json) {
		cli_print_json(job);
		return;
	}
	job_state_line(job, 1, line, sizeof(line));
	printf("%s\n", line);
	printf("  %s%s, agent %s%s%s\n", cli_hstr(job, "tier"),
	    json_object_get_boolean(json_object_object_get(job,
	    "causes_reload")) ? " reload" : "", cli_hstr(job, "agent"),
	    *cli_hstr(job, "label") ? ", label " : "", cli_hstr(job, "label"));
	if (*cli_hstr(job, "error"))
		printf("  error: %s\n", cli_hstr(job, "error"));
	for (i = 0; res != NULL && i < json_object_array_length(res); i++) {
		r = json_object_array_get_idx(res, i);
		printf("  [%zu] %s: %s", i, cli_hstr(r, "tool"),
		    json_object_get_boolean(json_object_object_get(r, "ok")) ?
		    "ok" : "FAILED");
		if (json_object_object_get_ex(r, "exit_code", NULL))
			printf(", exit %lld",
			    (long long)cli_int(r, "exit_code"));
		if (*cli_hstr(r, "signal"))
			printf(", %s", cli_hstr(r, "signal"));
		printf(", %lld ms\n", (long long)cli_int(r, "duration_ms"));
		if (*cli_hstr(r, "error"))
			printf("      error: %s\n", cli_hstr(r, "error"));
		print_text_block("stdout", cli_str(r, "stdout"));
		print_text_block("stderr", cli_str(r, "stderr"));
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

/* What a value of a JSON Schema type is, for a person to type. */
static const struct {
	const char	*type, *what;
} param_types[] = {
	{ "integer", "an integer" },
	{ "number", "a number" },
	{ "boolean", "true or false" },
	{ "null", "null" },
	{ "object", "a JSON object (KEY:='{...}')" },
	{ "array", "a JSON array (KEY:='[...]')" },
};

static int
param_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A parameter refused before it is sent: usage. */
static int
param_error(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "cmdgate: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return CX_USAGE;
}

/* The names of props, comma-separated, or "none"; in buf. */
static const char *
param_names(json_object *props, char *buf, size_t len)
{
	size_t	off = 0;

	snprintf(buf, len, "none");
	json_object_object_foreach(props, key, val) {
		(void)val;
		if (off + strlen(key) + 3 >= len)
			break;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    off > 0 ? ", " : "", key);
	}
	return buf;
}

/*
 * The schema of parameter key of tool, or NULL: -1 when the schema names
 * its parameters and key is not one (and it takes no others).
 */
static int
param_schema(json_object *schema, const char *tool, const char *key,
    json_object **prop)
{
	json_object	*props, *extra;
	char		 names[512];

	*prop = NULL;
	if (!json_object_object_get_ex(schema, "properties", &props) ||
	    json_object_object_get_ex(props, key, prop))
		return 0;
	if (json_object_object_get_ex(schema, "additionalProperties",
	    &extra) && (json_object_is_type(extra, json_type_object) ||
	    json_object_get_boolean(extra)))
		return 0;
	return param_error("%s has no parameter '%s'; its parameters: %s "
	    "(cmdgate tool %s)", tool, key, param_names(props, names,
	    sizeof(names)), tool);
}

/* *v for key=text, a parameter of the schema type; usage when not one. */
static int
param_value(const char *key, const char *text, json_object *type,
    json_object **v)
{
	const char	*t = json_object_get_string(type);
	size_t		 i;

	if (jstrict_parse_str(text, v) == 0)
		return 0;
	for (i = 0; i < sizeof(param_types) / sizeof(param_types[0]); i++)
		if (strcmp(param_types[i].type, t) == 0)
			return param_error("%s=%s: %s must be %s", key, text,
			    key, param_types[i].what);
	return param_error("%s=%s: %s must be JSON of the type %s", key, text,
	    key, t);
}

/*
 * key=value sets a string, converted when the tool's schema gives the
 * parameter another type; key:=JSON sets any JSON value.  A key the
 * schema does not have is refused, naming those it has.
 */
static int
add_param(const char *tool, json_object *params, json_object *schema,
    const char *arg)
{
	const char	*eq = strchr(arg, '=');
	json_object	*prop, *type = NULL, *v;
	char		 key[256];
	size_t		 klen;
	int		 raw, rc = 0;

	if (eq == NULL || eq == arg)
		return cli_usage_error("'%s' is not key=value or key:=JSON",
		    arg);
	raw = eq[-1] == ':';
	klen = (size_t)(eq - arg) - (size_t)raw;
	if (klen == 0 || klen >= sizeof(key))
		return cli_usage_error("'%s' has no key", arg);
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (param_schema(schema, tool, key, &prop) != 0)
		return CX_USAGE;
	json_object_object_get_ex(prop, "type", &type);
	if (raw && jstrict_parse_str(eq + 1, &v) != 0)
		return param_error("%s: the value after ':=' is not JSON", arg);
	else if (!raw && type != NULL && strcmp(json_object_get_string(type),
	    "string") != 0) {
		if ((rc = param_value(key, eq + 1, type, &v)) != 0)
			return rc;
	} else if (!raw)
		v = json_object_new_string(eq + 1);
	json_object_object_add(params, key, v);
	return 0;
}

static json_object *
tool_schema(struct cli *cl, const char *tool)
{
	json_object	*p = json_object_new_object(), *d, *e = NULL, *s;

	json_object_object_add(p, "name", json_object_new_string(tool));
	if ((d = client_call(&cl->c, "get_tool_details", p, &e)) == NULL) {
		json_object_put(e);
		return NULL;	/* the submit will say what is wrong */
	}
	s = json_object_get(json_object_object_get(d, "params"));
	json_object_put(d);
	return s;
}

/*
 * A progress line shown on the terminal (shown, "" when none) is cleared
 * before a line goes to standard error, which would be glued to it.
 */
static void
wait_clear(char *shown)
{
	if (*shown == '\0')
		return;
	printf("\r\033[K");
	fflush(stdout);
	*shown = '\0';		/* drawn again on the next news */
}

/*
 * wait_job for up to step seconds; the job (caller puts), or NULL with
 * the error printed and *rc set.  A broker that goes away is waited for
 * (tickets outlive it) until deadline.
 */
static json_object *
wait_step(struct cli *cl, const char *ticket, int64_t step, int64_t deadline,
    char *shown, int *rc)
{
	json_object	*p, *job, *e;

	for (;;) {
		p = json_object_new_object();
		json_object_object_add(p, "ticket",
		    json_object_new_string(ticket));
		json_object_object_add(p, "timeout_s",
		    json_object_new_int64(step));
		if ((job = client_call_wait(&cl->c, "wait_job", p, step * 1000,
		    &e)) != NULL)
			return job;
		wait_clear(shown);
		if (e != NULL) {
			*rc = cli_error(cl, e);
			json_object_put(e);
			return NULL;
		}
		if ((*rc = cli_reconnect(cl, deadline, NULL)) != 0)
			return NULL;
	}
}

/* Poll until the job ends or timeout_s passes; the last job object. */
static json_object *
wait_job(struct cli *cl, const char *ticket, int64_t timeout_s, int *rc)
{
	json_object	*job = NULL;
	int64_t		 deadline = util_monotonic_ms() + timeout_s * 1000;
	int64_t		 left, step;
	int		 tty = isatty(1) && !cl->json;
	char		 line[256], last[256] = "", none[1] = "";

	for (;;) {
		left = (deadline - util_monotonic_ms()) / 1000;
		if (left < 0)
			left = 0;
		step = left > WAIT_STEP_S ? WAIT_STEP_S : left;
		json_object_put(job);
		if ((job = wait_step(cl, ticket, step, deadline, tty ? last :
		    none, rc)) == NULL)
			return NULL;
		job_state_line(job, tty, line, sizeof(line));
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
		return cli_usage_error("'%s' needs a value or is unknown", a);
	else if (strcmp(a, "--agent") == 0)
		o->agent = argv[++*i];
	else if (strcmp(a, "--label") == 0)
		o->label = argv[++*i];
	else if (strcmp(a, "--timeout") == 0) {
		if (util_parse_u64(argv[++*i], 0, 3600, &t) == -1)
			return cli_usage_error("--timeout '%s' is not 0-3600",
			    argv[*i]);
		o->timeout = (int64_t)t;
	} else
		return cli_usage_error("unknown flag '%s'", a);
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
				rc = cli_usage_error("--then needs a TOOL%s",
				    "");
				break;
			}
			if (argv[i][0] == '-') {
				rc = cli_usage_error("expected a TOOL, not "
				    "'%s'", argv[i]);
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
				rc = cli_usage_error("--params needs a JSON "
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
			rc = add_param(cli_str(cmd, "tool"), params, schema,
			    argv[i]);
	}
	json_object_put(schema);
	if (rc == 0 && cmd == NULL)
		rc = cli_usage_error("submit needs a TOOL%s", "");
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
	*rc = cli_usage_error("stdin holds no JSON batch (a list of commands, "
	    "or {\"commands\": [...]})%s", "");
	return NULL;
}

/*
 * Give the batch an idempotency key of its own unless it has one: 1, or
 * 0 when it has none (no random bytes).
 */
static int
submit_key(json_object *params)
{
	unsigned char	 raw[SUBMIT_KEY_BYTES];
	char		 hex[2 * SUBMIT_KEY_BYTES + 1];
	size_t		 i;

	if (json_object_object_get_ex(params, "idempotency_key", NULL))
		return 1;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		fprintf(stderr, "cmdgate: getrandom: %s: the submit is not "
		    "sent again if the broker goes away\n", strerror(errno));
		return 0;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	json_object_object_add(params, "idempotency_key",
	    json_object_new_string(hex));
	return 1;
}

/*
 * batch_execute params (taken); the answer (caller puts), or NULL with
 * the error printed and *rc set.  When the connection is lost before the
 * answer (a restart) it is sent again, with the same key, so that the
 * job is stored once, until deadline; a broker that does not answer
 * within --reply-timeout is not waited for again.
 */
static json_object *
submit_send(struct cli *cl, json_object *params, int64_t deadline, int *rc)
{
	json_object	*r, *e;
	int		 again = submit_key(params);

	for (;;) {
		if ((r = client_call(&cl->c, "batch_execute",
		    json_object_get(params), &e)) != NULL)
			break;
		if (e != NULL || !cl->c.lost || !again ||
		    util_monotonic_ms() >= deadline) {
			*rc = cli_error(cl, e);
			json_object_put(e);
			break;
		}
		if ((*rc = cli_reconnect(cl, deadline, NULL)) != 0)
			break;
	}
	json_object_put(params);
	return r;
}

int
cmd_submit(struct cli *cl, int argc, char **argv)
{
	struct submit_opts	 o = { NULL, NULL, 0, 0, 0, SUBMIT_TIMEOUT };
	json_object		*params, *r, *job;
	char			 ticket[64];
	int64_t			 deadline, left;
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
	deadline = util_monotonic_ms() + o.timeout * 1000;
	if ((r = submit_send(cl, params, deadline, &rc)) == NULL)
		return rc;
	snprintf(ticket, sizeof(ticket), "%s", cli_str(r, "ticket"));
	if (o.async) {
		if (cl->json)
			cli_print_json(r);
		else
			printf("%s %s%s%s\n", cli_vis(ticket),
			    cli_hstr(r, "status"),
			    *cli_hstr(r, "blocked_by") ? ", blocked by " : "",
			    cli_hstr(r, "blocked_by"));
		json_object_put(r);
		return 0;
	}
	json_object_put(r);
	left = (deadline - util_monotonic_ms()) / 1000;
	if ((job = wait_job(cl, ticket, left > 0 ? left : 0, &rc)) == NULL)
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

int
cmd_poll(struct cli *cl, int argc, char **argv)
{
	json_object	*job;
	int		 rc = 0;

	if (argc != 2)
		return cli_usage_error("poll needs a TICKET%s", "");
	if ((job = cli_call(cl, "poll_job", ticket_params(argv[1]),
	    &rc)) == NULL)
		return rc;
	return show_job(cl, job);
}

int
cmd_wait(struct cli *cl, int argc, char **argv)
{
	json_object	*job;
	uint64_t	 t = SUBMIT_TIMEOUT;
	int		 rc = 0;

	if (argc == 4 && strcmp(argv[2], "--timeout") == 0) {
		if (util_parse_u64(argv[3], 0, 3600, &t) == -1)
			return cli_usage_error("--timeout '%s' is not 0-3600",
			    argv[3]);
	} else if (argc != 2)
		return cli_usage_error("wait needs a TICKET [--timeout S]%s",
		    "");
	if ((job = wait_job(cl, argv[1], (int64_t)t, &rc)) == NULL)
		return rc;
	return show_job(cl, job);
}

int
cmd_cancel(struct cli *cl, int argc, char **argv)
{
	json_object	*r;
	int		 rc = 0;

	if (argc != 2)
		return cli_usage_error("cancel needs a TICKET%s", "");
	if ((r = cli_call(cl, "cancel_job", ticket_params(argv[1]),
	    &rc)) == NULL)
		return rc;
	if (cl->json)
		cli_print_json(r);
	else
		printf("%s %s (%s)\n", cli_hstr(r, "ticket"),
		    json_object_get_boolean(json_object_object_get(r,
		    "cancelled")) ? "cancelled" : "not cancelled",
		    cli_hstr(r, "status"));
	rc = json_object_get_boolean(json_object_object_get(r, "cancelled")) ?
	    0 : CX_FAILED;
	json_object_put(r);
	return rc;
}

int
cmd_jobs(struct cli *cl, int argc, char **argv)
{
	json_object	*p = json_object_new_object(), *st = NULL, *r, *list, *j;
	uint64_t	 limit;
	size_t		 i;
	int		 rc = 0, k;

	for (k = 1; k < argc; k++) {
		if (k + 1 >= argc) {
			json_object_put(p);
			return cli_usage_error("'%s' needs a value or is "
			    "unknown", argv[k]);
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
			return cli_usage_error("bad flag or value at '%s'",
			    argv[k]);
		}
	}
	if ((r = cli_call(cl, "list_jobs", p, &rc)) == NULL)
		return rc;
	if (cl->json) {
		cli_print_json(r);
		json_object_put(r);
		return 0;
	}
	list = json_object_object_get(r, "jobs");
	printf("%-10s %-10s %-8s %-7s %-16s %-16s %-24s %s\n", "TICKET",
	    "STATUS", "TIER", "RELOAD", "TOOLS", "AGENT", "CREATED", "LABEL");
	for (i = 0; i < json_object_array_length(list); i++) {
		j = json_object_array_get_idx(list, i);
		printf("%-10s %-10s %-8s %-7s %-16s %-16s %-24s %s\n",
		    cli_hstr(j, "ticket"), cli_hstr(j, "status"),
		    cli_hstr(j, "tier"),
		    json_object_get_boolean(json_object_object_get(j,
		    "causes_reload")) ? "yes" : "no", cli_job_tools(j),
		    cli_hstr(j, "agent"), cli_hstr(j, "created_at"),
		    cli_hstr(j, "label"));
	}
	if (*cli_hstr(r, "next"))
		printf("(more: cmdgate jobs after %s)\n", cli_hstr(r, "next"));
	json_object_put(r);
	return 0;
}
