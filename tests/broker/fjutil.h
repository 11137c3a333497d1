/* SPDX-License-Identifier: ISC */
/* What the face job and editor state suites share: see fjutil.c. */
#ifndef CMDGATE_FJUTIL_H
#define CMDGATE_FJUTIL_H

#include <stdint.h>

#include <json-c/json.h>

#include "faces.h"
#include "fakeutil.h"
#include "options.h"
#include "server.h"

#define HOLD_MS		100	/* a face's hold in the tests */

extern struct event_base	*base;
extern struct options		 opt;
extern struct server		 srv;
extern struct fake		 fk;	/* pid 0: none */
extern char			 dir[64], fifo[128];

/* What a facejob was told (on_news). */
struct got {
	int		 n;
	enum facejob_event ev;
	char		 ticket[32];
	int		 ok, attached, code;
	char		 type[64], why[512];
	json_object	*result;
};

/* Fixtures: the exec table, or the fake bridge and unity-mcp.json (under
 * --sync group: _group). */
void		 setup_exec(void);
void		 setup_unity(void);
void		 setup_unity_group(void);
void		 teardown(void);
/* Run the loop until cond(arg); fail after TN_TIMEOUT_MS (what). */
void		 loop_until(int (*cond)(void *), void *arg, const char *what);
/* facejob_start with params as JSON text (NULL: none), told into g. */
struct facejob	*start(struct got *g, const char *agent, const char *tool,
		    const char *params, uint64_t hold_ms, int want_first);
/* The same, sent on connection conn (start's is 0). */
struct facejob	*start_on(uint64_t conn, struct got *g, const char *agent,
		    const char *tool, const char *params, uint64_t hold_ms,
		    int want_first);
void		 on_news(void *arg, const struct facejob_news *);
/* Wait for g's news: it is event ev, once. */
void		 await_news(struct got *g, enum facejob_event ev);
void		 got_free(struct got *g);
/* g's result member at path (dots), as a string. */
const char	*res_str(struct got *g, const char *path);
/* Job *(uint64_t *)arg: over, running, queued (loop_until conditions). */
int		 ended(void *arg);
int		 running(void *arg);
int		 queued(void *arg);
void		 await_ended(uint64_t num);
void		 await_running(uint64_t num);
/* How many jobs the store has ever taken. */
uint64_t	 njobs(void);
/* End the tools blocked on the FIFO (the loop runs meanwhile). */
void		 release(void);
/* fake_await with the loop running. */
void		 await_fake(const char *prefix);
/* How many lines of the fake's log begin with prefix, all of it read. */
int		 fake_seen(const char *prefix);

#endif
