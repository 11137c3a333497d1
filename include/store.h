/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_STORE_H
#define CMDGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"

/*
 * The job store: one LMDB environment in STATE_DIR/store/.  The broker is
 * its only writer.  Library-like: every function returns 0 or an error
 * code (an LMDB one, or a STORE_E* below) that store_strerror() names;
 * nothing here exits.
 *
 * Databases: "meta" (schema version, next ticket number), "jobs" (ticket
 * number -> status byte, expiry time, the job as JSON), "expire" (expiry
 * time and ticket number, for the expiry timer), "idem" (agent and
 * idempotency key -> ticket number) and "workers" (pid -> the live
 * worker's record, for restart recovery).
 */

#define STORE_SCHEMA		1
#define STORE_ENEWER		(-1001)	/* written by a newer cmdgated */
#define STORE_ENOTFOUND		(-1002)
#define STORE_EBADRECORD	(-1003)
#define STORE_EFAILED		(-1004)	/* a sync failed earlier: fail-stop */

struct store;

struct store_info {
	uint64_t	jobs;
	uint64_t	map_used;
	uint64_t	map_size;
};

/*
 * Open (creating) the store in dir/store.  A store that cannot be opened
 * or read is renamed to store.corrupt-<unix time> and a new one made; the
 * old path is put in *moved (caller frees) so the caller can say so loudly.
 */
int		 store_open(struct store **, const char *statedir,
		    uint64_t map_size, enum sync_mode, char **moved);
void		 store_close(struct store *);
const char	*store_strerror(int);
const char	*store_path(const struct store *);
uint64_t	 store_next_ticket(const struct store *);
int		 store_info(struct store *, struct store_info *);

/*
 * One write transaction at a time: begin, changes, commit (or abort).
 * Inside it, one nested transaction at a time: its commit joins the
 * parent, its abort (or failed commit) undoes only its own changes.
 */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
void		 store_abort(struct store *);
/* Make commits durable (--sync group); 0 or an errno-style code. */
int		 store_sync(struct store *);

/* Within a transaction.  expire_ms 0: not finished, nothing to expire. */
int		 store_job_put(struct store *, uint64_t num, char status,
		    int64_t expire_ms, const char *json);
int		 store_job_del(struct store *, uint64_t num);
int		 store_take_ticket(struct store *, uint64_t *num);
int		 store_idem_put(struct store *, const char *key, uint64_t num);
int		 store_idem_del(struct store *, const char *key);
int		 store_worker_put(struct store *, int pid, const char *json);
int		 store_worker_del(struct store *, int pid);

/* Reads (outside or inside a write transaction). */
int		 store_job_get(struct store *, uint64_t num, char *status,
		    char **json);		/* caller frees *json */
int		 store_idem_get(struct store *, const char *key, uint64_t *);
typedef int	(*store_job_fn)(void *, uint64_t num, char status,
		    const char *json);
int		 store_jobs_each(struct store *, uint64_t after,
		    store_job_fn, void *);
typedef int	(*store_worker_fn)(void *, int pid, const char *json);
int		 store_workers_each(struct store *, store_worker_fn, void *);
/* Earliest expiry time, or 0 when nothing expires. */
int64_t		 store_next_expiry(struct store *);
/* Ticket numbers due at now, at most max of them; returns how many. */
size_t		 store_expired(struct store *, int64_t now, uint64_t *nums,
		    size_t max);

#endif
