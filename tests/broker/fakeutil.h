/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_FAKEUTIL_H
#define CMDGATE_FAKEUTIL_H

#include <sys/types.h>

#include <stddef.h>

#include <json-c/json.h>

#include "jsonl.h"
#include "testnet.h"

/*
 * The test's side of the fake editor bridges (tests/fake_unity.c,
 * tests/fake_uloop.c): start one, steer it through its control channel,
 * await the events of its log and count them, speak its wire directly.
 * Every wait is bounded by TN_TIMEOUT_MS; a failure fails the test.
 */

struct fake {
	pid_t		 pid;
	int		 ctl;		/* its stdin */
	int		 outfd;		/* its stdout */
	struct jsonl	 out;
	int		 port;
	char		*log;		/* every line read so far, each + \n */
	size_t		 loglen;
	size_t		 seen;		/* log up to here was awaited */
};

/*
 * Start the fake named by the environment variable env (FAKE_UNITY,
 * FAKE_ULOOP) with args (NULL-ended); wait for its "port N".
 */
void		 fake_start(struct fake *, const char *env, ...);
/*
 * The same without waiting, for a test that runs a loop meanwhile: 1 once
 * that line came (then as fake_await), else 0 (what came is logged).
 */
int		 fake_poll(struct fake *, const char *prefix);
/* Send a control line and wait until it took effect. */
void		 fake_ctl(struct fake *, const char *line);
/* Wait for the next line, after those awaited, that begins with prefix. */
void		 fake_await(struct fake *, const char *prefix);
/* How many lines of the log so far begin with prefix (fake_ctl first). */
int		 fake_count(struct fake *, const char *prefix);
/* Close its stdin (it exits), reap it, SIGKILL when it stays. */
void		 fake_stop(struct fake *);

/* A unity-mcp connection to port: the WELCOME line read and checked. */
struct client	*unity_open(int port);
/* Send one frame, read one: the answer parsed (caller puts). */
json_object	*unity_call(struct client *, const char *payload);
/* Send an LSP message (Content-Length), read one: parsed (caller puts). */
json_object	*lsp_call(struct client *, const char *body);

/* s with every from replaced by to.  Caller frees. */
char		*subst(const char *s, const char *from, const char *to);
/*
 * The shipped table etc/tools/NAME written to out, its bridge ports (6400,
 * 8700) made port and from made to (when from is not NULL).
 */
void		 table_for(const char *out, const char *name, int port,
		    const char *from, const char *to);
/* cmdgate --json (CMDGATE) with args (NULL-ended) on port: its pid. */
pid_t		 cli_spawn(int port, int *out, const char *first, ...);
/* Its exit status is want; its stdout as JSON (caller puts). */
json_object	*cli_end(pid_t pid, int out, int want);

#endif
