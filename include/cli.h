/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_H
#define CMDGATE_CLI_H

#include <stdint.h>

#include <json-c/json.h>

#include "client.h"

/*
 * What the commands of cmdgate(1) share.  A command is
 * int cmd_NAME(struct cli *, int argc, char **argv), argv[0] its name,
 * and returns cmdgate's exit status; the table is in cmdgate.c.
 */

struct cli {
	struct cg_target	 t;
	struct cg_client	 c;
	int			 json;	/* --json */
	json_object		*inst;	/* --instance's file, held for t */
};

/* Print "cmdgate: " fmt (with arg) and a hint to stderr; CX_USAGE. */
int		 cli_usage_error(const char *fmt, const char *arg);
/*
 * Print a broker error object (NULL: the connection failed, cl->c.err
 * says why); the exit status that fits it.
 */
int		 cli_error(struct cli *, json_object *error);
/*
 * Call method with params (taken); the result (caller puts), or NULL,
 * the error printed and *rc set.  cli_call_wait allows the answer wait_s
 * more than --reply-timeout.
 */
json_object	*cli_call(struct cli *, const char *method,
		    json_object *params, int *rc);
json_object	*cli_call_wait(struct cli *, const char *method,
		    json_object *params, int64_t wait_s, int *rc);
/*
 * What may end cli_reconnect's wait early: input on fd[0] or fd[1] (-1:
 * none) calls quit(arg), which reads it and returns 1 to stop waiting.
 */
struct cli_wake {
	int		  fd[2];
	int		(*quit)(void *arg);
	void		 *arg;
};

/* cli_reconnect stopped by its wake. */
#define CLI_QUIT	(-1)

/*
 * The broker went away under a command that waits on it: connect again,
 * with the backoff of client.h, until deadline_ms (util_monotonic_ms()),
 * the pauses cut short by w (NULL: nothing).  One line on stderr for the
 * outage.  0, CX_UNAVAILABLE with the error printed, or CLI_QUIT.
 */
int		 cli_reconnect(struct cli *, int64_t deadline_ms,
		    const struct cli_wake *w);
/* The string member key of o, "" when absent (borrowed from o). */
const char	*cli_str(json_object *o, const char *key);
int64_t		 cli_int(json_object *o, const char *key);
/*
 * s as it may be shown on a terminal (controls and bytes that are not
 * UTF-8 escaped; the characters in keep stay).  Borrowed: valid until 16
 * more calls.
 */
const char	*cli_vis_keep(const char *s, const char *keep);
const char	*cli_vis(const char *s);
/* The member key of o, shown safely (cli_vis()); "" when absent. */
const char	*cli_hstr(json_object *o, const char *key);
/*
 * The tools of a job summary, comma-separated ("-" for none), shown
 * safely.  Borrowed: valid until the next call.
 */
const char	*cli_job_tools(json_object *job);
/* Seconds from the RFC 3339 UTC time ts to now, or -1. */
long long	 cli_elapsed(const char *ts);
/* s seconds as 12s, 3m05s or 2h07m.  Borrowed: until the next call. */
const char	*cli_duration(long long s);
/* o as one line of compact JSON on stdout. */
void		 cli_print_json(json_object *o);

#endif
