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

#define STORE_SCHEMA		2	/* 2: queued records pack their class */
#define STORE_KEY_MAX		511	/* bytes of a key: LMDB's limit */
#define STORE_ENEWER		(-1001)	/* written by a newer cmdgated */
#define STORE_ENOTFOUND		(-1002)
#define STORE_EBADRECORD	(-1003)
#define STORE_EFAILED		(-1004)	/* a sync failed earlier: fail-stop */
#define STORE_EDAMAGED		(-1005)	/* the data file fails its header */
#define STORE_EFULL		(-1006)	/* no room for new jobs */
#define STORE_EUNREADABLE	(-1007)	/* a record would not read back */

#define STORE_FULL_PCT		75	/* % of the map new jobs may fill */
#define STORE_HWM_STEP		1000	/* tickets reserved per hwm write */
#define STORE_HWM_NAME		"ticket-hwm"	/* beside store/ */

struct store;

struct store_conf {
	uint64_t	 map_size;	/* the map at open */
	uint64_t	 map_size_max;	/* what store_grow() may reach */
	enum sync_mode	 sync;
	int		 reset;		/* move a damaged data file aside */
};

struct store_info {
	uint64_t	jobs;
	uint64_t	map_used;
	uint64_t	map_size;
	uint64_t	syncs;	/* flushes to the disk since the open: each
				   commit under --sync full, each store_sync() */
};

/*
 * Open (creating) the store in statedir/store.  Before LMDB maps it, the
 * data file is checked against its own meta pages (magic, version, page
 * size, and a size that holds every page they say is used), so that a
 * truncated file is refused instead of faulting.  A file that fails, or
 * that LMDB cannot open, is STORE_EDAMAGED with *damage saying what is
 * wrong (caller frees); with conf->reset it is renamed
 * data.mdb.broken-<unix time> instead, *moved names it (caller frees) and
 * a new store is made.  Ticket numbers never go back: the counter starts
 * at the larger of the store's and statedir/ticket-hwm, a bound written
 * (durably, by rename) STORE_HWM_STEP tickets ahead.
 */
int		 store_open(struct store **, const char *statedir,
		    const struct store_conf *, char **moved, char **damage);
/* What is held and not flushed is lost, as in a crash. */
void		 store_close(struct store *);
const char	*store_strerror(int);
const char	*store_path(const struct store *);
uint64_t	 store_next_ticket(const struct store *);
int		 store_info(struct store *, struct store_info *);
/*
 * Whether new jobs may be stored: 0, or STORE_EFULL when the pages in use
 * pass STORE_FULL_PCT of the map even after store_grow(), so that the
 * jobs already stored can always finish, be cancelled and expire.  Not
 * within a transaction.
 */
int		 store_room(struct store *);
/*
 * Double the map, up to conf->map_size_max: 0, or MDB_MAP_FULL when it is
 * there already.  Not within a transaction; what is held is flushed first
 * (store_flush()).
 */
int		 store_grow(struct store *);
/* Whether an error code says the map is full (MDB_MAP_FULL). */
int		 store_map_full(int);
/*
 * One write transaction at a time: begin, changes, commit (or abort).
 * Inside it, one nested transaction at a time: its commit joins the
 * parent, its abort (or failed commit) undoes only its own changes: after
 * a failed nested commit the parent is the open transaction again.
 */
int		 store_begin(struct store *);
int		 store_commit(struct store *);
void		 store_abort(struct store *);
/*
 * Commit what need not reach the disk at once (an instant read's records,
 * cmdgated(8)): under --sync full and group its changes are held, in a
 * write transaction of LMDB's kept open, which every read of the store
 * sees and every later transaction nests in.  They become LMDB's, and the
 * disk's, with the next store_commit() of the top level (one commit, one
 * sync for both), store_sync() or store_flush().  A crash loses them all
 * and nothing else: they never reach the file half-written, and nothing
 * committed before is touched.  If that commit fails they are lost with
 * it (store_held() then says 0).  Under --sync none: store_commit().
 */
int		 store_commit_held(struct store *);
/* Whether changes are held. */
int		 store_held(const struct store *);
/*
 * Commit what is held and make it durable: 0 (also when nothing is), or
 * the error, what was held lost.  Not within a transaction.
 */
int		 store_flush(struct store *);
/*
 * Make commits durable (--sync group), what is held committed first; 0 or
 * an errno-style code.
 */
int		 store_sync(struct store *);

/* Within a transaction.  expire_ms 0: not finished, nothing to expire. */
int		 store_job_put(struct store *, uint64_t num, char status,
		    int64_t expire_ms, const char *json);
/*
 * Job num's value as the bytes rec[len] (status byte, expiry, JSON),
 * whatever they hold, with no expiry index: a damaged record as a disk
 * could leave it, for the fuzzer of recovery.
 */
int		 store_job_put_raw(struct store *, uint64_t num,
		    const void *rec, size_t len);
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
/*
 * Every job, as store_jobs_each(), but a record whose status byte says
 * enough (enough(status): job_store_status()) is not copied out: fn gets
 * json NULL.
 */
int		 store_jobs_scan(struct store *, int (*enough)(char),
		    store_job_fn, void *);
typedef int	(*store_worker_fn)(void *, int pid, const char *json);
int		 store_workers_each(struct store *, store_worker_fn, void *);
/* Earliest expiry time, or 0 when nothing expires. */
int64_t		 store_next_expiry(struct store *);
/* Ticket numbers due at now, at most max of them; returns how many. */
size_t		 store_expired(struct store *, int64_t now, uint64_t *nums,
		    size_t max);

#endif
