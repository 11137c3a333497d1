/* SPDX-License-Identifier: ISC */
/*
 * mcphttp_drive: the mcp-http dialect (workers/mcphttp.c) alone, for
 * tests/mcp-http.sh.  Opens a session with the server at URL, calls TOOL
 * with ARGS (JSON) or pings it, closes the session, and prints one line:
 *
 *	{"open":STATUS,"status":STATUS,"out":...,"err":"...","events":[...]}
 *
 * events: the progress and log events the call emitted (the server's
 * notifications of it).
 * SIGTERM is blocked as in cmdgate-worker and unblocked only while an
 * answer is awaited.  --term-after MS sends this process SIGTERM MS
 * milliseconds after the session is open; --out FILE prints there
 * instead of to standard output (which stays the "event pipe").
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jstrict.h"
#include "mcphttp.h"
#include "wproc.h"

volatile sig_atomic_t	got_term;
int64_t			kill_grace_ms = 5000;
size_t			command_index;
int			wproc_relay = 1;
static json_object	*events;

/* The worker's wproc_emit: here, kept for the line printed at the end. */
void
wproc_emit(json_object *ev)
{
	json_object_array_add(events, ev);
}

int64_t
wproc_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *
st_name(enum up_status st)
{
	static const char *const names[] = { "ok", "error", "refused",
	    "lost", "timeout", "cancelled", "protocol", "too_long" };

	return (size_t)st < sizeof(names) / sizeof(names[0]) ?
	    names[st] : "?";
}

static void
usage(void)
{
	fprintf(stderr, "usage: mcphttp_drive [--out FILE] [--term-after MS] "
	    "URL TIMEOUT_MS (TOOL ARGS | --ping)\n");
	exit(64);
}

/* SIGTERM to this process ms from now, from a timer (not a sleep). */
static void
term_after(long ms)
{
	struct sigevent		sev;
	struct itimerspec	its;
	timer_t			t;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGTERM;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (ms % 1000) * 1000000;
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) == -1 ||
	    timer_settime(t, 0, &its, NULL) == -1) {
		perror("mcphttp_drive: timer");
		exit(1);
	}
}

/* The call (or ping) on an open session: r's status, out and err. */
static void
drive(struct mcphttp *mh, char **argv, int64_t deadline, json_object *r)
{
	json_object	*args = NULL, *out = NULL;
	enum up_status	 st;
	char		 err[1024] = "";

	if (strcmp(argv[0], "--ping") == 0)
		st = mcphttp_ping(mh, deadline, err, sizeof(err));
	else {
		if (argv[1] == NULL || jstrict_parse_str(argv[1], &args) != 0)
			usage();
		st = mcphttp_call(mh, argv[0], args, deadline, &out, err,
		    sizeof(err));
		json_object_put(args);
	}
	json_object_object_add(r, "status", json_object_new_string(
	    st_name(st)));
	if (out != NULL)
		json_object_object_add(r, "out", out);
	json_object_object_add(r, "err", json_object_new_string(err));
	json_object_object_add(r, "events", json_object_get(events));
}

int
main(int argc, char **argv)
{
	json_object	*r = json_object_new_object();
	struct mcphttp	*mh;
	sigset_t	 block, waitmask;
	enum up_status	 st;
	FILE		*f = stdout;
	char		 err[1024] = "";
	long		 term_ms = -1;
	int64_t		 deadline;

	for (argv++; *argv != NULL && strncmp(*argv, "--", 2) == 0 &&
	    argv[1] != NULL && strcmp(*argv, "--ping") != 0; argv += 2) {
		if (strcmp(*argv, "--out") == 0 &&
		    (f = fopen(argv[1], "w")) == NULL) {
			perror(argv[1]);
			return 1;
		} else if (strcmp(*argv, "--term-after") == 0)
			term_ms = strtol(argv[1], NULL, 10);
	}
	if (argv[0] == NULL || argv[1] == NULL || argv[2] == NULL)
		usage();
	(void)argc;
	events = json_object_new_array();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	deadline = wproc_now_ms() + strtol(argv[1], NULL, 10);
	st = mcphttp_open(argv[0], deadline, &waitmask, &mh, err, sizeof(err));
	json_object_object_add(r, "open", json_object_new_string(st_name(st)));
	if (st != UP_OK)
		json_object_object_add(r, "err", json_object_new_string(err));
	else {
		if (term_ms >= 0)
			term_after(term_ms);
		drive(mh, argv + 2, deadline, r);
		mcphttp_close(mh);
	}
	fprintf(f, "%s\n", json_object_to_json_string_ext(r,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(r);
	json_object_put(events);
	return fclose(f) == 0 ? 0 : 1;
}
