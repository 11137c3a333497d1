/* SPDX-License-Identifier: ISC */
/*
 * cmdgate top: the broker at a glance (cmdgate(1)).  What it shows is
 * fetched (top_fetch) and drawn (top_draw) here; the command, --once and
 * the live screen, is in cli_toplive.c.
 */
#include "config.h"

#include <sys/ioctl.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "util.h"

#define TOP_WIDTH	80	/* without a terminal or COLUMNS */
#define TOP_FINISHED	5	/* the last finished jobs shown */
#define TOP_PAGES_MAX	64	/* list_jobs pages read for them */
#define TOP_RUNNING_MAX	16	/* running jobs whose start is asked */
#define TOP_LINE_MAX	1024

static const char	*top_tiers[] = { "heavy", "smooth", "instant" };

/* A list_jobs of the statuses (NULL-terminated) after ticket after. */
static json_object *
top_list(struct cli *cl, const char **status, const char *after, int *rc)
{
	json_object	*p = json_object_new_object(), *st;

	st = json_object_new_array();
	while (*status != NULL)
		json_object_array_add(st, json_object_new_string(*status++));
	json_object_object_add(p, "status", st);
	json_object_object_add(p, "limit", json_object_new_int(1000));
	if (after != NULL)
		json_object_object_add(p, "after",
		    json_object_new_string(after));
	return cli_call(cl, "list_jobs", p, rc);
}

/* The last TOP_FINISHED finished jobs, oldest first; NULL on error. */
static json_object *
top_finished(struct cli *cl, int *rc)
{
	static const char *st[] = { "done", "failed", "cancelled", NULL };
	json_object	*r, *list, *last = json_object_new_array();
	char		 after[64] = "";
	size_t		 i, n;
	int		 page;

	for (page = 0; page < TOP_PAGES_MAX; page++) {
		if ((r = top_list(cl, st, *after ? after : NULL, rc)) == NULL) {
			json_object_put(last);
			return NULL;
		}
		list = json_object_object_get(r, "jobs");
		n = json_object_array_length(list);
		if (n > 0) {
			json_object_put(last);
			last = json_object_new_array();
			for (i = n > TOP_FINISHED ? n - TOP_FINISHED : 0; i < n;
			    i++)
				json_object_array_add(last, json_object_get(
				    json_object_array_get_idx(list, i)));
		}
		snprintf(after, sizeof(after), "%s", cli_str(r, "next"));
		json_object_put(r);
		if (*after == '\0')
			break;
	}
	return last;
}

/* The running jobs, each as poll_job has it (for started_at). */
static json_object *
top_running(struct cli *cl, int *rc)
{
	static const char *st[] = { "running", NULL };
	json_object	*r, *list, *out, *p, *j;
	size_t		 i;

	if ((r = top_list(cl, st, NULL, rc)) == NULL)
		return NULL;
	list = json_object_object_get(r, "jobs");
	out = json_object_new_array();
	for (i = 0; i < json_object_array_length(list); i++) {
		j = json_object_array_get_idx(list, i);
		p = json_object_new_object();
		json_object_object_add(p, "ticket",
		    json_object_new_string(cli_str(j, "ticket")));
		/* A job that ended meanwhile is shown as listed. */
		if (i >= TOP_RUNNING_MAX ||
		    (p = cli_call(cl, "poll_job", p, rc)) == NULL)
			p = json_object_get(j);
		json_object_array_add(out, p);
	}
	json_object_put(r);
	*rc = 0;
	return out;
}

void
top_view_free(struct top_view *v)
{
	json_object_put(v->server);
	json_object_put(v->queue);
	json_object_put(v->clients);
	json_object_put(v->queued);
	json_object_put(v->running);
	json_object_put(v->finished);
	memset(v, 0, sizeof(*v));
}

int
top_fetch(struct cli *cl, struct top_view *v)
{
	static const char *queued[] = { "queued", NULL };
	int	rc = 0;

	memset(v, 0, sizeof(*v));
	if ((v->server = cli_call(cl, "server_status", NULL, &rc)) == NULL ||
	    (v->queue = cli_call(cl, "queue_status", NULL, &rc)) == NULL ||
	    (v->clients = cli_call(cl, "list_clients", NULL, &rc)) == NULL ||
	    (v->queued = top_list(cl, queued, NULL, &rc)) == NULL ||
	    (v->running = top_running(cl, &rc)) == NULL ||
	    (v->finished = top_finished(cl, &rc)) == NULL) {
		top_view_free(v);
		return rc != 0 ? rc : CX_UNAVAILABLE;
	}
	return 0;
}

/* ---- drawing ------------------------------------------------------------ */

struct top_out {
	FILE	*f;
	int	 width;
	int	 rows;		/* left; -1: no bound */
	int	 live;		/* clear each line's end, CR LF */
};

/* One line, cut to the width (in characters, not bytes). */
static void
top_line(struct top_out *o, const char *fmt, ...)
{
	char		 buf[TOP_LINE_MAX];
	unsigned char	*p;
	va_list		 ap;
	int		 n = 0;

	if (o->rows == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (p = (unsigned char *)buf; *p != '\0'; p++)
		if ((*p & 0xc0) != 0x80 && n++ == o->width)
			break;
	*p = '\0';
	fprintf(o->f, "%s%s", buf, o->live ? "\033[K\r\n" : "\n");
	if (o->rows > 0)
		o->rows--;
}

/* The hh:mm:ss of an RFC 3339 time, or the time as it is. */
static const char *
top_clock(const char *ts)
{
	static char	buf[16];

	if (strlen(ts) < 19 || ts[10] != 'T')
		return ts;
	snprintf(buf, sizeof(buf), "%.8s", ts + 11);
	return buf;
}

static int
top_flag(json_object *o, const char *key)
{
	return json_object_get_boolean(json_object_object_get(o, key));
}

/* The editor as server_status s says: its probe's editor object e. */
static const char *
top_editor(json_object *s, json_object *e)
{
	static char	buf[320];
	json_object	*r = json_object_object_get(e, "reachable");

	if (!top_flag(e, "probe"))
		return "no probe";
	if (top_flag(s, "editor_unreachable")) {
		snprintf(buf, sizeof(buf), "unreachable, its last state kept "
		    "(%s)", cli_hstr(e, "error"));
		return buf;
	}
	if (r == NULL)
		return "not known yet";
	if (json_object_get_boolean(r))
		return "reachable";
	snprintf(buf, sizeof(buf), "unreachable (%s)", cli_hstr(e, "error"));
	return buf;
}

/* Who holds what: the clients with a flag. */
static void
top_holds(struct top_out *o, struct top_view *v)
{
	static const char *flags[][2] = { { "tests_running", "tests_running" },
	    { "compiling", "compiling" }, { "editor_busy", "busy" } };
	json_object	*b = json_object_object_get(v->queue, "busy"), *c, *l;
	char		 who[TOP_LINE_MAX];
	size_t		 i, k;
	int		 any = 0;

	l = json_object_object_get(v->clients, "clients");
	for (k = 0; k < 3; k++) {
		if (!top_flag(b, flags[k][0]))
			continue;
		*who = '\0';
		for (i = 0; i < json_object_array_length(l); i++) {
			c = json_object_array_get_idx(l, i);
			if (top_flag(json_object_object_get(c, "editor"),
			    flags[k][1]))
				snprintf(who + strlen(who), sizeof(who) -
				    strlen(who), " %s", *cli_str(c, "name") ?
				    cli_hstr(c, "name") : "#?");
		}
		top_line(o, "holding reloads: %s (by%s)", flags[k][0],
		    *who ? who : " the editor probe or a running tool");
		any = 1;
	}
	if (!any)
		top_line(o, "holding reloads: nothing");
}

/* Each editor link of server_status s: one line. */
static void
top_links(struct top_out *o, json_object *s)
{
	json_object	*l = json_object_object_get(s, "editor_links"), *k;
	size_t		 i;

	for (i = 0; i < json_object_array_length(l); i++) {
		k = json_object_array_get_idx(l, i);
		top_line(o, "editor link %s (%s): %s, %lld calls, %lld in "
		    "flight, %lld connects, %lld lost", cli_hstr(k, "to"),
		    cli_hstr(k, "dialect"), top_flag(k, "connected") ?
		    "connected" : "not connected", (long long)cli_int(k,
		    "calls"), (long long)cli_int(k, "in_flight"),
		    (long long)cli_int(k, "connects"), (long long)cli_int(k,
		    "lost"));
	}
}

/* The unity-hub face of server_status s, when there is one: the editor
 * registered on it and cmdgate's registration on the server. */
static void
top_hub(struct top_out *o, json_object *s)
{
	json_object	*h = json_object_object_get(s, "unity_hub"), *e, *u;

	if (h == NULL)
		return;
	e = json_object_array_get_idx(json_object_object_get(h, "editors"), 0);
	u = json_object_object_get(h, "upstream");
	if (e == NULL)
		top_line(o, "unity-hub: no editor registered; server %s",
		    cli_hstr(h, "server"));
	else
		top_line(o, "unity-hub: editor %s@%s (Unity %s), session %s, "
		    "last pong %lld ms ago", cli_hstr(e, "project_name"),
		    cli_hstr(e, "project_hash"), cli_hstr(e, "unity_version"),
		    cli_hstr(e, "session_id"), (long long)cli_int(e,
		    "pong_ago_ms"));
	top_line(o, "unity-hub: server %s %s%s%s, %lld executes, %lld "
	    "connects", cli_hstr(h, "server"), cli_hstr(u, "state"),
	    *cli_str(u, "session_id") ? ", session " : "",
	    cli_hstr(u, "session_id"), (long long)cli_int(u, "executes"),
	    (long long)cli_int(u, "connects"));
}

static void
top_head(struct top_out *o, struct top_view *v)
{
	json_object	*s = v->server, *q = v->queue;

	top_line(o, "cmdgated %s, pid %lld, up %lld s; %lld queued, %lld "
	    "running; editor %s", cli_hstr(s, "version"),
	    (long long)cli_int(s, "pid"), (long long)cli_int(s, "uptime_s"),
	    (long long)cli_int(q, "queued"), (long long)cli_int(q, "running"),
	    top_editor(s, json_object_object_get(s, "editor")));
	top_links(o, s);
	top_hub(o, s);
	top_holds(o, v);
}

static void
top_clients(struct top_out *o, struct top_view *v)
{
	json_object	*l = json_object_object_get(v->clients, "clients"), *c;
	size_t		 i;

	top_line(o, "");
	top_line(o, "CLIENTS %zu", json_object_array_length(l));
	top_line(o, "  %-4s %-20s %-9s %-22s %-8s %4s %5s", "ID", "NAME",
	    "FACE", "PEER", "SINCE", "JOBS", "WAITS");
	for (i = 0; i < json_object_array_length(l); i++) {
		c = json_object_array_get_idx(l, i);
		top_line(o, "  %-4lld %-20s %-9s %-22s %-8s %4lld %5lld",
		    (long long)cli_int(c, "id"), *cli_str(c, "name") ?
		    cli_hstr(c, "name") : "-", cli_hstr(c, "face"),
		    cli_hstr(c, "peer"), top_clock(cli_str(c, "since")),
		    (long long)cli_int(c, "jobs_in_flight"),
		    (long long)cli_int(c, "waits"));
	}
}

static void
top_queue(struct top_out *o, struct top_view *v)
{
	json_object	*l = json_object_object_get(v->queued, "jobs"), *j;
	size_t		 i, k;

	top_line(o, "");
	top_line(o, "QUEUE %zu", json_object_array_length(l));
	for (k = 0; k < 3; k++)
		for (i = 0; i < json_object_array_length(l); i++) {
			j = json_object_array_get_idx(l, i);
			if (strcmp(cli_str(j, "tier"), top_tiers[k]) != 0)
				continue;
			top_line(o, "  %-7s #%-3lld %-9s %-14s %-14s "
			    "blocked_by %-14s %s", top_tiers[k],
			    (long long)cli_int(j, "position"),
			    cli_hstr(j, "ticket"), cli_job_tools(j),
			    cli_hstr(j, "agent"), *cli_str(j, "blocked_by") ?
			    cli_hstr(j, "blocked_by") : "-",
			    cli_hstr(j, "label"));
		}
}

static void
top_jobs(struct top_out *o, struct top_view *v)
{
	json_object	*l, *j;
	size_t		 i;
	long long	 s;

	top_line(o, "");
	top_line(o, "RUNNING %zu", json_object_array_length(v->running));
	for (i = 0; i < json_object_array_length(v->running); i++) {
		j = json_object_array_get_idx(v->running, i);
		s = cli_elapsed(cli_str(j, "started_at"));
		top_line(o, "  %-7s %-9s %-16s %-16s %6s %s",
		    cli_hstr(j, "tier"), cli_hstr(j, "ticket"),
		    cli_job_tools(j), cli_hstr(j, "agent"), s < 0 ? "?" :
		    cli_duration(s), cli_hstr(j, "label"));
	}
	l = v->finished;
	top_line(o, "");
	top_line(o, "FINISHED (last %d)", TOP_FINISHED);
	for (i = json_object_array_length(l); i > 0; i--) {
		j = json_object_array_get_idx(l, i - 1);
		top_line(o, "  %-9s %-9s %-16s %-16s %s",
		    cli_hstr(j, "ticket"), cli_hstr(j, "status"),
		    cli_job_tools(j), cli_hstr(j, "agent"),
		    cli_hstr(j, "label"));
	}
}

void
top_draw(FILE *f, struct top_view *v, int width, int rows, int live)
{
	struct top_out	o = { f, width, rows, live };

	top_head(&o, v);
	top_clients(&o, v);
	top_queue(&o, v);
	top_jobs(&o, v);
}

int
top_width(int fd, int live, int *rows)
{
	struct winsize	 ws;
	const char	*env = getenv("COLUMNS");
	uint64_t	 n;

	*rows = -1;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		*rows = ws.ws_row > 0 ? ws.ws_row : -1;
		if (live || env == NULL ||
		    util_parse_u64(env, 1, 10000, &n) != 0)
			return ws.ws_col;
	}
	if (env != NULL && util_parse_u64(env, 1, 10000, &n) == 0)
		return (int)n;
	return TOP_WIDTH;
}
