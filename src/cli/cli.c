/* SPDX-License-Identifier: ISC */
/* What every cmdgate(1) command shares: calls, errors, safe output. */
#include "config.h"

#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cli.h"
#include "util.h"

#define VIS_SLOTS	16	/* cli_vis() results alive at once */

int
cli_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "cmdgate: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see cmdgate --help)\n");
	return CX_USAGE;
}

/* Print a broker error; the exit status that fits it. */
int
cli_error(struct cli *cl, json_object *error)
{
	json_object	*d;

	if (error == NULL) {
		fprintf(stderr, "cmdgate: %s\n", cl->c.err);
		return CX_UNAVAILABLE;
	}
	d = json_object_object_get(error, "data");
	/* The broker points protocol clients to list_tools; a person, here. */
	if (strcmp(cli_hstr(d, "type"), "unknown_tool") == 0 &&
	    *cli_hstr(d, "command") != '\0') {
		fprintf(stderr, "cmdgate: no tool '%s' in the table; "
		    "'cmdgate tools' lists them\n", cli_hstr(d, "command"));
		return client_error_status(error);
	}
	fprintf(stderr, "cmdgate: %s (%s)\n", *cli_hstr(d, "reason") != '\0' ?
	    cli_hstr(d, "reason") : cli_hstr(error, "message"),
	    cli_hstr(d, "type"));
	return client_error_status(error);
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

const char *
cli_str(json_object *o, const char *key)
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
const char *
cli_vis_keep(const char *s, const char *keep)
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

const char *
cli_vis(const char *s)
{
	return cli_vis_keep(s, "");
}

/* The member key of o, shown safely (cli_vis()); "" when absent. */
const char *
cli_hstr(json_object *o, const char *key)
{
	return cli_vis(cli_str(o, key));
}

const char *
cli_job_tools(json_object *job)
{
	static char	 buf[256];
	json_object	*l = json_object_object_get(job, "tools"), *e;
	size_t		 i, off = 0;

	*buf = '\0';
	for (i = 0; json_object_is_type(l, json_type_array) &&
	    i < json_object_array_length(l); i++) {
		e = json_object_array_get_idx(l, i);
		if (!json_object_is_type(e, json_type_string))
			continue;
		if (off + json_object_get_string_len(e) + 2 >= sizeof(buf)) {
			snprintf(buf + off, sizeof(buf) - off, ",...");
			break;
		}
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
		    off > 0 ? "," : "", json_object_get_string(e));
	}
	return cli_vis(*buf != '\0' ? buf : "-");
}

long long
cli_elapsed(const char *ts)
{
	struct tm	tm;

	memset(&tm, 0, sizeof(tm));
	if (strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return -1;
	return (long long)(util_now_ms() / 1000 - timegm(&tm));
}

const char *
cli_duration(long long s)
{
	static char	buf[32];

	if (s < 60)
		snprintf(buf, sizeof(buf), "%llds", s);
	else if (s < 3600)
		snprintf(buf, sizeof(buf), "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(buf, sizeof(buf), "%lldh%02lldm", s / 3600,
		    s / 60 % 60);
	return buf;
}

int64_t
cli_int(json_object *o, const char *key)
{
	return json_object_get_int64(json_object_object_get(o, key));
}

void
cli_print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * Call, for an answer that may take wait_s more than --reply-timeout; on
 * error print it and return NULL with *rc set.
 */
json_object *
cli_call_wait(struct cli *cl, const char *method, json_object *params,
    int64_t wait_s, int *rc)
{
	json_object	*r, *e = NULL;

	if ((r = client_call_wait(&cl->c, method, params, wait_s * 1000,
	    &e)) == NULL) {
		*rc = cli_error(cl, e);
		json_object_put(e);
	}
	return r;
}

json_object *
cli_call(struct cli *cl, const char *method, json_object *params, int *rc)
{
	return cli_call_wait(cl, method, params, 0, rc);
}

/*
 * Let ms go by; input on w's fds ends it early when w->quit says so: 1
 * then, else 0.  A poll(2), not an event loop: quit reads the fds.
 */
static int
cli_pause(int64_t ms, const struct cli_wake *w)
{
	struct pollfd	 p[2];
	int64_t		 end = util_monotonic_ms() + ms, left;
	nfds_t		 n = 0;
	size_t		 i;

	for (i = 0; w != NULL && i < 2; i++)
		if (w->fd[i] != -1) {
			p[n].fd = w->fd[i];
			p[n].events = POLLIN;
			p[n++].revents = 0;
		}
	while ((left = end - util_monotonic_ms()) > 0) {
		if (poll(p, n, left > INT_MAX ? INT_MAX : (int)left) > 0 &&
		    w->quit(w->arg))
			return 1;
	}
	return 0;
}

int
cli_reconnect(struct cli *cl, int64_t deadline_ms, const struct cli_wake *w)
{
	int64_t	lost = util_monotonic_ms(), delay = CG_RETRY_FIRST_MS, now;

	/* One line for the outage: its end completes it. */
	fprintf(stderr, "cmdgate: broker lost (%s), reconnecting...",
	    cli_vis(cl->c.err));
	for (;;) {
		client_close(&cl->c);
		now = util_monotonic_ms();
		if (cli_pause(delay < deadline_ms - now ? delay :
		    deadline_ms - now, w)) {
			fprintf(stderr, " stopped\n");
			return CLI_QUIT;
		}
		if (client_connect(&cl->c, &cl->t) == 0) {
			fprintf(stderr, " reconnected after %lld s\n",
			    (long long)(util_monotonic_ms() - lost + 500) /
			    1000);
			return 0;
		}
		if (util_monotonic_ms() >= deadline_ms) {
			fprintf(stderr, " gave up: %s\n", cli_vis(cl->c.err));
			return CX_UNAVAILABLE;
		}
		delay = delay * 2 > CG_RETRY_MAX_MS ? CG_RETRY_MAX_MS :
		    delay * 2;
	}
}
