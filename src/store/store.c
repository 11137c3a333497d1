/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "internal.h"
#include "store.h"
#include "util.h"

#define STORE_MAXDBS	8
#define REC_HEADER	9	/* status byte, expiry time (8, big-endian) */

struct store {
	MDB_env		*env;
	MDB_dbi		 meta, jobs, expire, idem, workers;
	MDB_txn		*txn;		/* the open write transaction */
	MDB_txn		*parent;	/* txn's parent when txn is nested */
	MDB_txn		*held;		/* store_commit_held()'s changes,
					   not yet LMDB's: txn nests in it */
	enum sync_mode	 sync;
	uint64_t	 syncs;		/* flushes to the disk (store_info) */
	char		*path;
	uint64_t	 next;		/* next ticket number, as committed */
	uint64_t	 next_txn;	/* the same inside the transaction */
	uint64_t	 next_parent;	/* the same in the parent */
	uint64_t	 map_size;
	uint64_t	 map_max;
	char		*hwm_path;	/* STATE_DIR/ticket-hwm */
	uint64_t	 hwm;		/* no ticket at or above it was issued */
	int		 failed;	/* a sync failed: no more writes */
};

const char *
store_strerror(int rc)
{
	switch (rc) {
	case STORE_ENEWER:
		return "the store was written by a newer cmdgated";
	case STORE_ENOTFOUND:
		return "not found";
	case STORE_EBADRECORD:
		return "a record in the store is malformed";
	case STORE_EFAILED:
		return "an earlier sync to disk failed, so the store takes no "
		    "more writes; restart cmdgated once the disk is sound";
	case STORE_EDAMAGED:
		return "the store's data file is damaged";
	case STORE_EUNREADABLE:
		return "the job's record would not read back (nested deeper "
		    "than 64 levels)";
	case STORE_EFULL:
		return "the store is full: it takes no new jobs until finished "
		    "ones expire (--result-ttl) or the map may grow "
		    "(--map-size-max)";
	default:
		return mdb_strerror(rc);
	}
}

const char *
store_path(const struct store *st)
{
	return st->path;
}

uint64_t
store_next_ticket(const struct store *st)
{
	return st->next;
}

/*
 * Run a read on the open write transaction, or the held one (which sees
 * what it holds), or on a new read-only one.
 */
static int
store_rtxn(struct store *st, MDB_txn **txn)
{
	if (st->txn != NULL || st->held != NULL) {
		*txn = st->txn != NULL ? st->txn : st->held;
		return 0;
	}
	return mdb_txn_begin(st->env, NULL, MDB_RDONLY, txn);
}

static void
store_rdone(struct store *st, MDB_txn *txn)
{
	if (txn != st->txn && txn != st->held)
		mdb_txn_abort(txn);
}

static int
store_init(struct store *st)
{
	MDB_txn		*txn;
	int		 rc;

	if ((rc = mdb_txn_begin(st->env, NULL, 0, &txn)) != 0)
		return rc;
	if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &st->meta)) != 0 ||
	    (rc = mdb_dbi_open(txn, "jobs", MDB_CREATE, &st->jobs)) != 0 ||
	    (rc = mdb_dbi_open(txn, "expire", MDB_CREATE, &st->expire)) != 0 ||
	    (rc = mdb_dbi_open(txn, "idem", MDB_CREATE, &st->idem)) != 0 ||
	    (rc = mdb_dbi_open(txn, "workers", MDB_CREATE, &st->workers)) != 0)
		goto fail;
	if ((rc = storemeta_read(txn, st->meta, STORE_SCHEMA,
	    &st->next)) != 0) {
		rc = rc == STOREMETA_EBAD ? STORE_EBADRECORD :
		    rc == STOREMETA_ENEWER ? STORE_ENEWER : rc;
		goto fail;
	}
	return mdb_txn_commit(txn);
fail:
	mdb_txn_abort(txn);
	return rc;
}

static int
store_try_open(struct store *st, enum sync_mode sync)
{
	unsigned int	flags = MDB_NOTLS;
	int		rc;

	if (sync != SYNC_FULL)
		flags |= MDB_NOSYNC;
	if ((rc = mdb_env_create(&st->env)) != 0)
		return rc;
	if ((rc = mdb_env_set_maxdbs(st->env, STORE_MAXDBS)) != 0 ||
	    (rc = mdb_env_set_mapsize(st->env, st->map_size)) != 0 ||
	    (rc = mdb_env_open(st->env, st->path, flags, 0600)) != 0 ||
	    (rc = store_init(st)) != 0) {
		mdb_env_close(st->env);
		st->env = NULL;
	} else if (mdb_env_get_maxkeysize(st->env) < STORE_KEY_MAX)
		rc = MDB_BAD_VALSIZE;	/* an LMDB built with a lower limit */
	return rc;
}

/*
 * The file could not be trusted: say why in *damage, and move it aside
 * when asked to.  0 to go on with a new store, or STORE_EDAMAGED.
 */
static int
store_damaged(const struct store_conf *conf, const char *file,
    const char *why, char **moved, char **damage)
{
	int	rc;

	*damage = xasprintf("%s: %s", file, why);
	if (!conf->reset)
		return STORE_EDAMAGED;
	if ((rc = datafile_move_aside(file, moved)) != 0)
		return rc;
	return 0;
}

/* What LMDB refused that is not the file's fault. */
static int
store_not_file_fault(int rc)
{
	return rc == STORE_ENEWER || rc == ENOMEM || rc == EACCES ||
	    rc == ENOSPC || rc == EMFILE || rc == MDB_READERS_FULL ||
	    rc == EAGAIN || rc == MDB_BAD_VALSIZE;
}

static int
store_open_env(struct store *st, const struct store_conf *conf,
    const char *file, char **moved, char **damage)
{
	char	why[256];
	int	rc;

	if (datafile_check(file, why, sizeof(why)) == -1 &&
	    (rc = store_damaged(conf, file, why, moved, damage)) != 0)
		return rc;
	rc = store_try_open(st, conf->sync);
	if (rc == 0 || store_not_file_fault(rc) || *moved != NULL)
		return rc;
	snprintf(why, sizeof(why), "LMDB cannot read it: %s",
	    store_strerror(rc));
	free(*damage);
	if ((rc = store_damaged(conf, file, why, moved, damage)) != 0)
		return rc;
	return store_try_open(st, conf->sync);
}

int
store_open(struct store **out, const char *statedir,
    const struct store_conf *conf, char **moved, char **damage)
{
	struct store	*st = xcalloc(1, sizeof(*st));
	char		*file;
	int		 rc;

	*moved = *damage = NULL;
	st->path = xasprintf("%s/store", statedir);
	st->hwm_path = xasprintf("%s/%s", statedir, STORE_HWM_NAME);
	st->map_size = conf->map_size;
	st->map_max = conf->map_size_max;
	st->sync = conf->sync;
	file = xasprintf("%s/data.mdb", st->path);
	if (hwm_read(st->hwm_path, &st->hwm) == -1) {
		*damage = xasprintf("%s: not a ticket number", st->hwm_path);
		rc = STORE_EDAMAGED;
	} else if (mkdir(st->path, 0700) == -1 && errno != EEXIST)
		rc = errno;
	else
		rc = store_open_env(st, conf, file, moved, damage);
	free(file);
	if (rc != 0) {
		free(st->hwm_path);
		free(st->path);
		free(st);
		return rc;
	}
	if (st->hwm > st->next)
		st->next = st->hwm;	/* a lost or older store: go on */
	*out = st;
	return 0;
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	/* Aborting the held transaction aborts what nests in it. */
	if (st->held != NULL)
		mdb_txn_abort(st->held);
	else if (st->txn != NULL)
		mdb_txn_abort(st->parent != NULL ? st->parent : st->txn);
	if (st->txn == NULL && !st->failed && st->next != st->hwm)
		(void)hwm_write(st->hwm_path, st->next);  /* exact when clean */
	mdb_env_close(st->env);
	free(st->hwm_path);
	free(st->path);
	free(st);
}

int
store_info(struct store *st, struct store_info *si)
{
	MDB_envinfo	ei;
	MDB_stat	ms;
	MDB_txn		*txn;
	int		rc;

	if ((rc = store_rtxn(st, &txn)) != 0)
		return rc;
	rc = mdb_stat(txn, st->jobs, &ms);
	store_rdone(st, txn);
	if (rc != 0 || (rc = mdb_env_info(st->env, &ei)) != 0)
		return rc;
	si->jobs = ms.ms_entries;
	si->map_used = (uint64_t)(ei.me_last_pgno + 1) * ms.ms_psize;
	si->map_size = ei.me_mapsize;
	si->syncs = st->syncs;
	return 0;
}

/* LMDB resizes its map only when no transaction is open: none is held. */
int
store_grow(struct store *st)
{
	int	rc;

	if (st->txn != NULL)
		return EBUSY;
	if ((rc = store_flush(st)) != 0)
		return rc;
	return mapsize_grow(st->env, &st->map_size, st->map_max);
}

int
store_map_full(int rc)
{
	return rc == MDB_MAP_FULL;
}

int
store_room(struct store *st)
{
	MDB_dbi	dbis[] = { st->meta, st->jobs, st->expire, st->idem,
		    st->workers };
	size_t	n = sizeof(dbis) / sizeof(dbis[0]);
	int	full, rc;

	for (;;) {
		if ((rc = mapsize_check(st->env, dbis, n, STORE_FULL_PCT,
		    &full)) != 0)
			return rc;
		if (!full)
			return 0;
		if (store_grow(st) != 0)
			return STORE_EFULL;
	}
}

/*
 * Begin a transaction, or, inside one, a nested one: its changes join the
 * parent's when it commits and vanish alone when it aborts (or fails), so
 * that several requests can share one durable commit and still fail one
 * by one.  While changes are held, the transaction nests in the held one,
 * so that it sees them and its abort leaves them.
 */
int
store_begin(struct store *st)
{
	MDB_txn	*child;
	int	 rc;

	if (st->failed)
		return STORE_EFAILED;
	if (st->parent != NULL)
		return EBUSY;
	if (st->txn != NULL) {
		if ((rc = mdb_txn_begin(st->env, st->txn, 0, &child)) != 0)
			return rc;
		st->parent = st->txn;
		st->txn = child;
		st->next_parent = st->next_txn;
		return 0;
	}
	if ((rc = mdb_txn_begin(st->env, st->held, 0, &st->txn)) != 0)
		st->txn = NULL;
	st->next_txn = st->next;
	return rc;
}

/* Close the nested transaction: back to its parent. */
static void
store_unnest(struct store *st, int kept)
{
	st->txn = st->parent;
	st->parent = NULL;
	if (!kept)
		st->next_txn = st->next_parent;
}

/*
 * Commit a transaction that nests in none (the held one, or one begun
 * while nothing was held): under --sync full LMDB syncs it.  After a
 * failed sync the kernel may have dropped what it could not write and
 * report the next sync as a success: nothing written afterwards could be
 * trusted, so the store takes no more writes (fail-stop).
 */
static int
store_commit_top(struct store *st, MDB_txn *txn)
{
	int	rc = mdb_txn_commit(txn);

	if (rc == 0 && st->sync == SYNC_FULL)
		st->syncs++;
	else if (rc == EIO)
		st->failed = 1;
	return rc;
}

/* Commit the held transaction: LMDB's at last, or lost with an error. */
static int
store_commit_held_txn(struct store *st)
{
	MDB_txn	*held = st->held;

	st->held = NULL;
	return store_commit_top(st, held);
}

int
store_commit(struct store *st)
{
	int	rc;

	if (st->parent != NULL) {
		rc = mdb_txn_commit(st->txn);
		store_unnest(st, rc == 0);
		return rc;
	}
	if (st->held == NULL)
		rc = store_commit_top(st, st->txn);
	else if ((rc = mdb_txn_commit(st->txn)) == 0)	/* into the held */
		rc = store_commit_held_txn(st);
	st->txn = NULL;
	if (rc == 0)
		st->next = st->next_txn;
	return rc;
}

int
store_commit_held(struct store *st)
{
	int	rc = 0;

	if (st->parent != NULL || st->sync == SYNC_NONE)
		return store_commit(st);
	if (st->held == NULL)
		st->held = st->txn;	/* left open: its changes are held */
	else
		rc = mdb_txn_commit(st->txn);	/* into the held */
	st->txn = NULL;
	/* Tickets answered are never issued again, even if this is lost. */
	if (rc == 0)
		st->next = st->next_txn;
	return rc;
}

int
store_held(const struct store *st)
{
	return st->held != NULL;
}

int
store_flush(struct store *st)
{
	int	rc;

	if (st->txn != NULL)
		return EBUSY;
	if (st->held == NULL)
		return 0;
	if (st->failed) {
		mdb_txn_abort(st->held);
		st->held = NULL;
		return STORE_EFAILED;
	}
	if ((rc = store_commit_held_txn(st)) != 0)
		return rc;
	return st->sync == SYNC_GROUP ? store_sync(st) : 0;
}

void
store_abort(struct store *st)
{
	if (st->txn != NULL)
		mdb_txn_abort(st->txn);
	if (st->parent != NULL)
		store_unnest(st, 0);
	else
		st->txn = NULL;
}

int
store_sync(struct store *st)
{
	int	rc;

	if (st->failed)
		return STORE_EFAILED;
	if (st->held != NULL)	/* it goes too, with this sync */
		return store_flush(st);
	if ((rc = mdb_env_sync(st->env, 1)) == EIO)
		st->failed = 1;
	else if (rc == 0)
		st->syncs++;
	return rc;
}

int
store_take_ticket(struct store *st, uint64_t *num)
{
	MDB_val		k = { 11, "next_ticket" }, v;
	unsigned char	buf[8];
	int		rc;

	/* Bound what a damaged store could forget, before it is issued. */
	if (st->next_txn >= st->hwm) {
		if ((rc = hwm_write(st->hwm_path,
		    st->next_txn + STORE_HWM_STEP)) != 0)
			return rc;
		st->hwm = st->next_txn + STORE_HWM_STEP;
	}
	*num = st->next_txn;
	kv_be64(buf, st->next_txn + 1);
	v.mv_data = buf;
	v.mv_size = 8;
	st->next_txn++;
	return mdb_put(st->txn, st->meta, &k, &v, 0);
}

static int
expire_key_del(struct store *st, uint64_t num, const unsigned char *rec)
{
	unsigned char	key[16];
	MDB_val		k = { 16, key };
	int		rc;

	memcpy(key, rec + 1, 8);
	kv_be64(key + 8, num);
	if (kv_get_be64(rec + 1) == 0)
		return 0;
	rc = mdb_del(st->txn, st->expire, &k, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
store_job_put(struct store *st, uint64_t num, char status, int64_t expire_ms,
    const char *json)
{
	unsigned char	 kb[8], key[16];
	size_t		 len = strlen(json);
	MDB_val		 k = { 8, kb }, v, ek = { 16, key }, ev = { 0, "" };
	int		 rc;

	kv_be64(kb, num);
	/* A value too short for its header has no expiry to undo: the
	 * record recovery puts in place of a damaged one overwrites it. */
	if ((rc = mdb_get(st->txn, st->jobs, &k, &v)) == 0) {
		if (v.mv_size >= REC_HEADER &&
		    (rc = expire_key_del(st, num, v.mv_data)) != 0)
			return rc;
	} else if (rc != MDB_NOTFOUND)
		return rc;
	v.mv_size = REC_HEADER + len;
	/*
	 * A new job has the highest ticket: appended, the full page stays
	 * full (no split in halves), and a turn's submits dirty half as
	 * many pages.  Out of order (never, but not for us to assume), the
	 * plain put.
	 */
	if (rc == MDB_NOTFOUND && (rc = mdb_put(st->txn, st->jobs, &k, &v,
	    MDB_RESERVE | MDB_APPEND)) != MDB_KEYEXIST) {
		if (rc != 0)
			return rc;
	} else if ((rc = mdb_put(st->txn, st->jobs, &k, &v, MDB_RESERVE)) !=
	    0)
		return rc;
	((unsigned char *)v.mv_data)[0] = (unsigned char)status;
	kv_be64((unsigned char *)v.mv_data + 1, (uint64_t)expire_ms);
	memcpy((unsigned char *)v.mv_data + REC_HEADER, json, len);
	if (expire_ms == 0)
		return 0;
	kv_be64(key, (uint64_t)expire_ms);
	kv_be64(key + 8, num);
	return mdb_put(st->txn, st->expire, &ek, &ev, 0);
}

int
store_job_put_raw(struct store *st, uint64_t num, const void *rec,
    size_t len)
{
	unsigned char	kb[8];
	MDB_val		k = { 8, kb }, v = { len, (void *)rec };

	kv_be64(kb, num);
	return mdb_put(st->txn, st->jobs, &k, &v, 0);
}

int
store_job_del(struct store *st, uint64_t num)
{
	unsigned char	kb[8];
	MDB_val		k = { 8, kb }, v;
	int		rc;

	kv_be64(kb, num);
	if ((rc = mdb_get(st->txn, st->jobs, &k, &v)) != 0)
		return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : rc;
	if (v.mv_size >= REC_HEADER &&
	    (rc = expire_key_del(st, num, v.mv_data)) != 0)
		return rc;
	return mdb_del(st->txn, st->jobs, &k, NULL);
}

int
store_job_get(struct store *st, uint64_t num, char *status, char **json)
{
	unsigned char	 kb[8];
	MDB_val		 k = { 8, kb }, v;
	MDB_txn		*txn;
	int		 rc;

	kv_be64(kb, num);
	if ((rc = store_rtxn(st, &txn)) != 0)
		return rc;
	rc = mdb_get(txn, st->jobs, &k, &v);
	if (rc == 0 && v.mv_size < REC_HEADER)
		rc = STORE_EBADRECORD;
	if (rc == 0) {
		*status = ((char *)v.mv_data)[0];
		*json = kv_string(&v, REC_HEADER);
	}
	store_rdone(st, txn);
	return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : rc;
}

/* kv_walk() on the open write transaction or a new read-only one. */
static int
store_walk(struct store *st, MDB_dbi dbi, MDB_val *start, kv_walk_fn fn,
    void *arg)
{
	MDB_txn	*txn;
	int	 rc;

	if ((rc = store_rtxn(st, &txn)) != 0)
		return rc;
	rc = kv_walk(txn, dbi, start, fn, arg);
	store_rdone(st, txn);
	return rc;
}

struct walk_jobs {
	store_job_fn	 fn;
	void		*arg;
	int		(*enough)(char);	/* store_jobs_scan() */
};

static int
walk_job(void *arg, MDB_val *k, MDB_val *v)
{
	struct walk_jobs	*w = arg;
	char			*json;
	int			 rc;

	if (k->mv_size != 8)
		return 0;	/* not a job's key: nothing to do with it */
	if (v->mv_size < REC_HEADER)	/* the reader decides what to do */
		return w->fn(w->arg, kv_get_be64(k->mv_data), '\0', "");
	if (w->enough != NULL && w->enough(((char *)v->mv_data)[0]))
		return w->fn(w->arg, kv_get_be64(k->mv_data),
		    ((char *)v->mv_data)[0], NULL);
	json = kv_string(v, REC_HEADER);
	rc = w->fn(w->arg, kv_get_be64(k->mv_data), ((char *)v->mv_data)[0],
	    json);
	free(json);
	return rc;
}

int
store_jobs_each(struct store *st, uint64_t after, store_job_fn fn, void *arg)
{
	struct walk_jobs	w = { fn, arg, NULL };
	unsigned char		kb[8];
	MDB_val			k = { 8, kb };

	kv_be64(kb, after);
	return store_walk(st, st->jobs, &k, walk_job, &w);
}

int
store_jobs_scan(struct store *st, int (*enough)(char), store_job_fn fn,
    void *arg)
{
	struct walk_jobs	w = { fn, arg, enough };
	unsigned char		kb[8];
	MDB_val			k = { 8, kb };

	kv_be64(kb, 0);
	return store_walk(st, st->jobs, &k, walk_job, &w);
}

int
store_idem_put(struct store *st, const char *key, uint64_t num)
{
	unsigned char	buf[8];
	MDB_val		k = { strlen(key), (void *)key }, v = { 8, buf };

	kv_be64(buf, num);
	return mdb_put(st->txn, st->idem, &k, &v, 0);
}

int
store_idem_del(struct store *st, const char *key)
{
	MDB_val	k = { strlen(key), (void *)key };
	int	rc = mdb_del(st->txn, st->idem, &k, NULL);

	return rc == MDB_NOTFOUND ? 0 : rc;
}

int
store_idem_get(struct store *st, const char *key, uint64_t *num)
{
	MDB_val	 k = { strlen(key), (void *)key }, v;
	MDB_txn	*txn;
	int	 rc;

	if ((rc = store_rtxn(st, &txn)) != 0)
		return rc;
	rc = mdb_get(txn, st->idem, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		*num = kv_get_be64(v.mv_data);
	else if (rc == 0)
		rc = STORE_EBADRECORD;
	store_rdone(st, txn);
	return rc == MDB_NOTFOUND ? STORE_ENOTFOUND : rc;
}

int
store_worker_put(struct store *st, int pid, const char *json)
{
	unsigned char	kb[8];
	MDB_val		k = { 8, kb }, v = { strlen(json), (void *)json };

	kv_be64(kb, (uint64_t)pid);
	return mdb_put(st->txn, st->workers, &k, &v, 0);
}

int
store_worker_del(struct store *st, int pid)
{
	unsigned char	kb[8];
	MDB_val		k = { 8, kb };
	int		rc;

	kv_be64(kb, (uint64_t)pid);
	rc = mdb_del(st->txn, st->workers, &k, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

struct walk_workers {
	store_worker_fn	 fn;
	void		*arg;
};

static int
walk_worker(void *arg, MDB_val *k, MDB_val *v)
{
	struct walk_workers	*w = arg;
	char			*json;
	int			 rc;

	if (k->mv_size != 8)
		return STORE_EBADRECORD;
	json = kv_string(v, 0);
	rc = w->fn(w->arg, (int)kv_get_be64(k->mv_data), json);
	free(json);
	return rc;
}

int
store_workers_each(struct store *st, store_worker_fn fn, void *arg)
{
	struct walk_workers	w = { fn, arg };

	return store_walk(st, st->workers, NULL, walk_worker, &w);
}

static int
walk_first(void *arg, MDB_val *k, MDB_val *v)
{
	if (k->mv_size == 16)
		*(int64_t *)arg = (int64_t)kv_get_be64(k->mv_data);
	(void)v;
	return 1;
}

int64_t
store_next_expiry(struct store *st)
{
	int64_t	t = 0;

	(void)store_walk(st, st->expire, NULL, walk_first, &t);
	return t;
}

struct walk_due {
	int64_t		 now;
	uint64_t	*nums;
	size_t		 n, max;
};

static int
walk_due(void *arg, MDB_val *k, MDB_val *v)
{
	struct walk_due	*d = arg;

	(void)v;
	if (d->n >= d->max || k->mv_size != 16 ||
	    (int64_t)kv_get_be64(k->mv_data) > d->now)
		return 1;
	d->nums[d->n++] = kv_get_be64((unsigned char *)k->mv_data + 8);
	return 0;
}

size_t
store_expired(struct store *st, int64_t now, uint64_t *nums, size_t max)
{
	struct walk_due	d = { now, nums, 0, max };

	(void)store_walk(st, st->expire, NULL, walk_due, &d);
	return d.n;
}
