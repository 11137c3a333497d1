/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_PROBE_H
#define CMDGATE_PROBE_H

#include <sys/types.h>

#include <stdint.h>

#include <json-c/json.h>

#include "holds.h"

/*
 * The editor probe (cmdgate.tools(5), editor; cmdgated(8)): one
 * long-lived cmdgate-worker in probe mode, started when the tool table
 * names an editor, restarted when it dies (backoff) or when the table's
 * editor changes, stopped at shutdown.  It is not a job: no store
 * record, not counted by --max-workers.  The flags it reports leave
 * through probe_hooks; its exit is handed in by whoever reaps children
 * (probe_reaped).
 */

#define PROBE_BACKOFF_MS	1000	/* the first restart after a death... */
#define PROBE_BACKOFF_MAX_MS	30000	/* ...doubling up to this */
#define PROBE_LINE_MAX		65536	/* bytes of one event line */

struct event_base;
struct probe;

struct probe_hooks {
	void	*arg;
	/* The probe's flags are f now (cleared when it is unreachable or
	 * gone); called only when they change. */
	void	(*flags)(void *arg, const struct editor_flags *f);
};

/* The settings of a probe, all borrowed for its life. */
struct probe_config {
	struct event_base	*base;
	const char		*worker_path;
	char			**env;
	uint64_t		 kill_grace;	/* seconds */
	const char		*lock_dir;	/* absolute */
};

/* A probe that runs nothing until probe_configure().  Free with
 * probe_free(), which kills a process still alive. */
struct probe	*probe_new(const struct probe_config *,
		    const struct probe_hooks *);
void		 probe_free(struct probe *);
/*
 * The table's editor object (borrowed; NULL: none): start the probe,
 * restart it when the object changed, or stop it.
 */
void		 probe_configure(struct probe *, json_object *editor);
/* Stop for good: SIGTERM, SIGKILL after kill_grace; no restart. */
void		 probe_stop(struct probe *);
/* fn(arg) after the editor's reachable changed (one watcher; fn NULL:
 * none); p may be NULL. */
void		 probe_watch(struct probe *p, void (*fn)(void *), void *arg);
/*
 * Whether the editor answers: 1, 0, or -1 (no probe or not known yet);
 * *lost_ms (monotonic) when it stopped answering after it had answered,
 * 0 when it did not.  p may be NULL.
 */
int		 probe_reachable(const struct probe *p, int64_t *lost_ms);
/* Whether its process is alive (not yet reaped). */
int		 probe_alive(const struct probe *);
/* Child pid was reaped with status: 1 when it was the probe's, else 0. */
int		 probe_reaped(struct probe *, pid_t pid, int status);
/* The status object {probe, reachable, error?, since}; p may be NULL.
 * Caller puts. */
json_object	*probe_json(const struct probe *);

#endif
