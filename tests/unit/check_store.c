/* SPDX-License-Identifier: ISC */
/*
 * The LMDB store: round trip, counter, expiry, map full and headroom, bad
 * and truncated files, the ticket high-water mark, held commits (an
 * instant read's: no sync, lost whole in a crash).
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <lmdb.h>

#include "ckrun.h"
#include "store.h"

static char	dir[64];

static int
rm_entry(const char *p, const struct stat *st, int f, struct FTW *ftw)
{
	(void)st;
	(void)f;
	(void)ftw;
	return remove(p);
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cmdgate-store-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* store_open() as the broker calls it, under --sync sync. */
static int
try_open_sync(struct store **st, uint64_t map, uint64_t max, int reset,
    enum sync_mode sync, char **moved, char **damage)
{
	struct store_conf	conf = { map, max, sync, reset };

	return store_open(st, dir, &conf, moved, damage);
}

/* The same under --sync full; its code, *moved and *damage. */
static int
try_open(struct store **st, uint64_t map, uint64_t max, int reset,
    char **moved, char **damage)
{
	return try_open_sync(st, map, max, reset, SYNC_FULL, moved, damage);
}

static struct store *
open_store_sync(uint64_t map, enum sync_mode sync)
{
	struct store	*st = NULL;
	char		*moved = NULL, *damage = NULL;
	int		 rc;

	rc = try_open_sync(&st, map, map, 0, sync, &moved, &damage);
	ck_assert_msg(rc == 0, "store_open: %s (%s)", store_strerror(rc),
	    damage != NULL ? damage : "");
	ck_assert_ptr_null(moved);
	ck_assert_ptr_null(damage);
	return st;
}

static struct store *
open_store(uint64_t map)
{
	return open_store_sync(map, SYNC_FULL);
}

static void
put(struct store *st, uint64_t *num, char status, int64_t exp,
    const char *json)
{
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, num), 0);
	ck_assert_int_eq(store_job_put(st, *num, status, exp, json), 0);
	ck_assert_int_eq(store_commit(st), 0);
}

START_TEST(round_trip_and_counter)
{
	struct store	*st = open_store(1 << 20);
	uint64_t	 a, b, c;
	char		 status, *json;
	struct stat	 sb;
	char		 path[128];

	put(st, &a, 'q', 0, "{\"x\":1}");
	put(st, &b, 'd', 5000, "{\"x\":2}");
	ck_assert_uint_eq(a, 0);
	ck_assert_uint_eq(b, 1);
	ck_assert_int_eq(store_job_get(st, b, &status, &json), 0);
	ck_assert_int_eq(status, 'd');
	ck_assert_str_eq(json, "{\"x\":2}");
	free(json);
	ck_assert_int_eq(store_job_get(st, 7, &status, &json),
	    STORE_ENOTFOUND);
	/* An aborted transaction leaves no trace, the counter included. */
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, &c), 0);
	ck_assert_int_eq(store_job_put(st, c, 'q', 0, "{}"), 0);
	store_abort(st);
	ck_assert_uint_eq(store_next_ticket(st), 2);
	store_close(st);
	/* Files are private. */
	snprintf(path, sizeof(path), "%s/store/data.mdb", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 077, 0);
	snprintf(path, sizeof(path), "%s/store", dir);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
	/* Reopened: the counter continues. */
	st = open_store(1 << 20);
	ck_assert_uint_eq(store_next_ticket(st), 2);
	put(st, &c, 'q', 0, "{}");
	ck_assert_uint_eq(c, 2);
	ck_assert_int_eq(store_job_get(st, a, &status, &json), 0);
	ck_assert_int_eq(status, 'q');
	free(json);
	store_close(st);
}
END_TEST

/*
 * A new job is appended (it has the highest ticket); one put out of that
 * order is stored as well, and the jobs are walked in ticket order.
 */
static int
order_fn(void *arg, uint64_t num, char status, const char *json)
{
	uint64_t	*want = arg;

	(void)status;
	(void)json;
	ck_assert_uint_eq(num, *want);
	*want += 10;
	return 0;
}

START_TEST(put_out_of_order)
{
	struct store	*st = open_store(1 << 20);
	char		 status, *json;
	uint64_t	 n, want = 10;

	ck_assert_int_eq(store_begin(st), 0);
	for (n = 20; n <= 500; n += 10)
		ck_assert_int_eq(store_job_put(st, n, 'q', 0,
		    "{\"pad\":\"..........................................."
		    "................................................\"}"), 0);
	ck_assert_int_eq(store_job_put(st, 10, 'd', 0, "{\"x\":10}"), 0);
	ck_assert_int_eq(store_job_put(st, 500, 'd', 0, "{\"x\":500}"), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(store_job_get(st, 10, &status, &json), 0);
	ck_assert_int_eq(status, 'd');
	ck_assert_str_eq(json, "{\"x\":10}");
	free(json);
	ck_assert_int_eq(store_job_get(st, 500, &status, &json), 0);
	ck_assert_str_eq(json, "{\"x\":500}");
	free(json);
	ck_assert_int_eq(store_jobs_each(st, 0, order_fn, &want), 0);
	ck_assert_uint_eq(want, 510);
	store_close(st);
}
END_TEST

static int
count_fn(void *arg, uint64_t num, char status, const char *json)
{
	(void)num;
	(void)status;
	(void)json;
	(*(int *)arg)++;
	return 0;
}

START_TEST(expiry_index)
{
	struct store	*st = open_store(1 << 20);
	uint64_t	 a, b, c, due[8];
	int		 n = 0;

	put(st, &a, 'd', 3000, "{}");
	put(st, &b, 'f', 1000, "{}");
	put(st, &c, 'r', 0, "{}");
	ck_assert_int_eq(store_next_expiry(st), 1000);
	ck_assert_uint_eq(store_expired(st, 999, due, 8), 0);
	ck_assert_uint_eq(store_expired(st, 3000, due, 8), 2);
	ck_assert_uint_eq(due[0], b);
	ck_assert_uint_eq(due[1], a);
	/* Rewriting a job moves its expiry. */
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_job_put(st, b, 'f', 9000, "{}"), 0);
	ck_assert_int_eq(store_job_del(st, a), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(store_next_expiry(st), 9000);
	ck_assert_int_eq(store_jobs_each(st, 0, count_fn, &n), 0);
	ck_assert_int_eq(n, 2);
	n = 0;
	ck_assert_int_eq(store_jobs_each(st, c, count_fn, &n), 0);
	ck_assert_int_eq(n, 1);
	store_close(st);
}
END_TEST

START_TEST(idempotency_and_workers)
{
	struct store	*st = open_store(1 << 20);
	uint64_t	 num;

	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_idem_put(st, "agent\nkey", 42), 0);
	ck_assert_int_eq(store_worker_put(st, 1234, "{\"pid\":1234}"), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(store_idem_get(st, "agent\nkey", &num), 0);
	ck_assert_uint_eq(num, 42);
	ck_assert_int_eq(store_idem_get(st, "agent\nother", &num),
	    STORE_ENOTFOUND);
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_idem_del(st, "agent\nkey"), 0);
	ck_assert_int_eq(store_worker_del(st, 1234), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(store_idem_get(st, "agent\nkey", &num),
	    STORE_ENOTFOUND);
	store_close(st);
}
END_TEST

START_TEST(map_full)
{
	struct store	*st = open_store(1 << 20);
	char		*big = malloc(64 * 1024);
	uint64_t	 num, before;
	int		 i, rc = 0;

	memset(big, 'a', 64 * 1024 - 1);
	big[64 * 1024 - 1] = '\0';
	for (i = 0; i < 100 && rc == 0; i++) {
		before = store_next_ticket(st);
		ck_assert_int_eq(store_begin(st), 0);
		rc = store_take_ticket(st, &num);
		if (rc == 0)
			rc = store_job_put(st, num, 'q', 0, big);
		if (rc == 0)
			rc = store_commit(st);
		else
			store_abort(st);
	}
	ck_assert_int_eq(rc, MDB_MAP_FULL);
	/* Nothing half-applied: the counter did not move. */
	ck_assert_uint_eq(store_next_ticket(st), before);
	free(big);
	store_close(st);
}
END_TEST

/*
 * Group commit: nested transactions share the outer commit; one that
 * fails (map full) or aborts leaves the others and the counter intact.
 */
START_TEST(nested_share_one_commit)
{
	struct store	*st = open_store(1 << 20);
	char		*big = malloc(1536 * 1024), status, *json;
	uint64_t	 a, b, c;

	memset(big, 'a', 1536 * 1024 - 1);
	big[1536 * 1024 - 1] = '\0';
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &a, 'q', 0, "{\"n\":\"a\"}");
	/* Too big for the map: fails alone. */
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, &b), 0);
	ck_assert_int_eq(store_job_put(st, b, 'q', 0, big), MDB_MAP_FULL);
	store_abort(st);
	/* Begun and abandoned. */
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, &b), 0);
	ck_assert_uint_eq(b, 1);
	store_abort(st);
	put(st, &c, 'q', 0, "{\"n\":\"c\"}");
	ck_assert_uint_eq(c, 1);
	/* One level only. */
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_begin(st), EBUSY);
	store_abort(st);
	/* Nothing is committed before the outer commit. */
	ck_assert_uint_eq(store_next_ticket(st), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_uint_eq(store_next_ticket(st), 2);
	store_close(st);
	st = open_store(1 << 20);
	ck_assert_uint_eq(store_next_ticket(st), 2);
	ck_assert_int_eq(store_job_get(st, a, &status, &json), 0);
	ck_assert_str_eq(json, "{\"n\":\"a\"}");
	free(json);
	ck_assert_int_eq(store_job_get(st, c, &status, &json), 0);
	ck_assert_str_eq(json, "{\"n\":\"c\"}");
	free(json);
	/* An outer abort drops every nested change with it. */
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &a, 'q', 0, "{}");
	store_abort(st);
	ck_assert_uint_eq(store_next_ticket(st), 2);
	ck_assert_int_eq(store_job_get(st, a, &status, &json),
	    STORE_ENOTFOUND);
	free(big);
	store_close(st);
}
END_TEST

/* A store with n queued jobs, closed; the path of its data file. */
static const char *
store_with_jobs(int n)
{
	static char	 path[128];
	struct store	*st = open_store(1 << 20);
	uint64_t	 num;
	int		 i;

	ck_assert_int_eq(store_begin(st), 0);
	for (i = 0; i < n; i++)
		put(st, &num, 'q', 0, "{\"padding\":\"................"
		    "................................................\"}");
	ck_assert_int_eq(store_commit(st), 0);
	store_close(st);
	snprintf(path, sizeof(path), "%s/store/data.mdb", dir);
	return path;
}

/* Open must refuse, naming the file and the problem in *damage. */
static void
assert_refused(const char *needle)
{
	struct store	*st = NULL;
	char		*moved = NULL, *damage = NULL;

	ck_assert_int_eq(try_open(&st, 1 << 20, 1 << 20, 0, &moved, &damage),
	    STORE_EDAMAGED);
	ck_assert_ptr_null(moved);
	ck_assert_ptr_nonnull(damage);
	ck_assert_msg(strstr(damage, "data.mdb") != NULL &&
	    strstr(damage, needle) != NULL, "damage: %s", damage);
	free(damage);
}

/* --reset-store: moved aside, kept untouched; tickets go on. */
static void
assert_reset(uint64_t issued, unsigned char first)
{
	struct store	*st = NULL;
	char		*moved = NULL, *damage = NULL, buf[16];
	int		 fd;

	ck_assert_int_eq(try_open(&st, 1 << 20, 1 << 20, 1, &moved, &damage),
	    0);
	ck_assert_ptr_nonnull(moved);
	ck_assert_ptr_nonnull(strstr(moved, "/store/data.mdb.broken-"));
	fd = open(moved, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	if (read(fd, buf, 1) == 1)
		ck_assert_int_eq((unsigned char)buf[0], first);
	close(fd);
	ck_assert_uint_ge(store_next_ticket(st), issued);
	free(moved);
	free(damage);
	store_close(st);
}

START_TEST(corrupt_refused_or_moved)
{
	const char	*path = store_with_jobs(3);
	char		 buf[4096];
	int		 fd;

	fd = open(path, O_WRONLY | O_TRUNC);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	assert_refused("not an LMDB meta page");
	assert_reset(3, 0x5a);
}
END_TEST

/* Truncated to two pages: refused before LMDB maps it (no SIGBUS). */
START_TEST(truncated_refused)
{
	const char	*path = store_with_jobs(200);
	struct stat	 sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_gt(sb.st_size, 8192);
	ck_assert_int_eq(truncate(path, 8192), 0);
	assert_refused("truncated");
	assert_refused("8192 bytes");
	assert_reset(200, 0);
}
END_TEST

/* Empty: refused, not taken for a new store that starts at t-000000. */
START_TEST(empty_refused)
{
	const char	*path = store_with_jobs(5);

	ck_assert_int_eq(truncate(path, 0), 0);
	assert_refused("empty");
	assert_reset(5, 0);
}
END_TEST

/*
 * The high-water mark beside the store: a store lost entirely still
 * never re-issues a ticket; it is written in steps, not every ticket.
 */
START_TEST(ticket_hwm)
{
	struct store	*st;
	char		 path[128], hwm[128], buf[64];
	uint64_t	 num;
	struct stat	 before, after;
	FILE		*f;

	snprintf(hwm, sizeof(hwm), "%s/%s", dir, STORE_HWM_NAME);
	st = open_store(1 << 20);
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &num, 'q', 0, "{}");
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(stat(hwm, &before), 0);
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &num, 'q', 0, "{}");
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_uint_eq(num, 1);
	ck_assert_int_eq(stat(hwm, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);	/* not rewritten */
	f = fopen(hwm, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_uint_eq(strtoull(buf, NULL, 10), STORE_HWM_STEP);
	/* A clean close leaves the exact next ticket. */
	store_close(st);
	f = fopen(hwm, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_uint_eq(strtoull(buf, NULL, 10), 2);
	/* A crash leaves the step's bound; then the data file is lost. */
	f = fopen(hwm, "w");
	fprintf(f, "%d\n", STORE_HWM_STEP);
	fclose(f);
	snprintf(path, sizeof(path), "%s/store/data.mdb", dir);
	ck_assert_int_eq(unlink(path), 0);
	st = open_store(1 << 20);
	ck_assert_uint_eq(store_next_ticket(st), STORE_HWM_STEP);
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &num, 'q', 0, "{}");
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_uint_eq(num, STORE_HWM_STEP);
	store_close(st);
	/* A garbled mark is refused like a damaged store. */
	f = fopen(hwm, "w");
	fputs("many\n", f);
	fclose(f);
	{
		char *moved = NULL, *damage = NULL;

		ck_assert_int_eq(try_open(&st, 1 << 20, 1 << 20, 0, &moved,
		    &damage), STORE_EDAMAGED);
		ck_assert_ptr_nonnull(strstr(damage, STORE_HWM_NAME));
		free(damage);
	}
}
END_TEST

/*
 * Headroom: new jobs stop at STORE_FULL_PCT of the map, the map grows
 * up to its bound first, and what is stored can still finish and go.
 */
START_TEST(room_and_growth)
{
	struct store	*st = NULL;
	char		*moved = NULL, *damage = NULL, *big = malloc(16384);
	struct store_info si;
	uint64_t	 num, nums[256];
	int		 n = 0, i;

	memset(big, 'b', 16383);
	big[16383] = '\0';
	ck_assert_int_eq(try_open(&st, 1 << 20, 2 << 20, 0, &moved, &damage),
	    0);
	while (store_room(st) == 0 && n < 256) {
		ck_assert_int_eq(store_begin(st), 0);
		put(st, &nums[n++], 'q', 0, big);
		ck_assert_int_eq(store_commit(st), 0);
	}
	ck_assert_int_lt(n, 256);
	ck_assert_int_eq(store_room(st), STORE_EFULL);
	ck_assert_int_eq(store_info(st, &si), 0);
	ck_assert_uint_eq(si.map_size, 2 << 20);	/* grown, bounded */
	ck_assert_int_eq(store_grow(st), MDB_MAP_FULL);
	/* Every stored job can still finish, one commit each... */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(store_begin(st), 0);
		ck_assert_int_eq(store_job_put(st, nums[i], 'd', 1000, big),
		    0);
		ck_assert_int_eq(store_commit(st), 0);
	}
	/* ...and expire, after which new jobs fit again. */
	ck_assert_int_eq(store_begin(st), 0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(store_job_del(st, nums[i]), 0);
	ck_assert_int_eq(store_commit(st), 0);
	ck_assert_int_eq(store_room(st), 0);
	ck_assert_int_eq(store_begin(st), 0);
	put(st, &num, 'q', 0, big);
	ck_assert_int_eq(store_commit(st), 0);
	free(big);
	store_close(st);
}
END_TEST

/* How many times st flushed to the disk. */
static uint64_t
syncs(struct store *st)
{
	struct store_info	si;

	ck_assert_int_eq(store_info(st, &si), 0);
	return si.syncs;
}

/* A new job's record, stored by a held commit. */
static void
put_held(struct store *st, uint64_t *num, const char *json)
{
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, num), 0);
	ck_assert_int_eq(store_job_put(st, *num, 'd', 5000, json), 0);
	ck_assert_int_eq(store_commit_held(st), 0);
}

/* Whether job num is stored with json. */
static int
stored(struct store *st, uint64_t num, const char *json)
{
	char	status, *got;
	int	same;

	if (store_job_get(st, num, &status, &got) != 0)
		return 0;
	same = strcmp(got, json) == 0;
	free(got);
	return same;
}

/*
 * Held commits do not sync: every read sees them, an abort after them
 * leaves them, and the next commit makes them durable with its own one
 * sync, as store_flush() does alone.
 */
START_TEST(held_not_synced)
{
	struct store	*st = open_store(1 << 20);
	uint64_t	 a, b, c, d, s0;

	put(st, &a, 'q', 0, "{\"n\":\"a\"}");
	s0 = syncs(st);
	ck_assert_uint_ge(s0, 1);
	put_held(st, &b, "{\"n\":\"b\"}");
	put_held(st, &c, "{\"n\":\"c\"}");
	ck_assert_uint_eq(syncs(st), s0);
	ck_assert(store_held(st));
	ck_assert(stored(st, b, "{\"n\":\"b\"}"));
	ck_assert_uint_eq(store_next_ticket(st), 3);
	ck_assert_uint_eq(store_next_expiry(st), 5000);
	ck_assert_int_eq(store_begin(st), 0);
	ck_assert_int_eq(store_take_ticket(st, &d), 0);
	ck_assert_int_eq(store_job_put(st, d, 'q', 0, "{}"), 0);
	store_abort(st);
	ck_assert(store_held(st) && stored(st, c, "{\"n\":\"c\"}"));
	ck_assert(!stored(st, d, "{}"));
	put(st, &d, 'q', 0, "{\"n\":\"d\"}");
	ck_assert_uint_eq(syncs(st), s0 + 1);
	ck_assert(!store_held(st));
	put_held(st, &a, "{\"n\":\"e\"}");
	ck_assert_int_eq(store_flush(st), 0);
	ck_assert_uint_eq(syncs(st), s0 + 2);
	ck_assert(!store_held(st));
	ck_assert_int_eq(store_flush(st), 0);	/* nothing held: nothing */
	ck_assert_uint_eq(syncs(st), s0 + 2);
	store_close(st);
	st = open_store(1 << 20);
	ck_assert(stored(st, b, "{\"n\":\"b\"}") &&
	    stored(st, c, "{\"n\":\"c\"}") && stored(st, d, "{\"n\":\"d\"}") &&
	    stored(st, a, "{\"n\":\"e\"}"));
	store_close(st);
}
END_TEST

/*
 * A crash (SIGKILL) loses what was held, whole, and nothing committed
 * before it; the store opens as it was, and no ticket is issued twice.
 */
START_TEST(held_lost_in_crash)
{
	struct store	*st;
	uint64_t	 num;
	char		 c, *json;
	pid_t		 pid;
	int		 status;

	/* 0 durable, 1 held, 2 durable (1 with it), 3 held, 0 changed held. */
	if ((pid = fork()) == 0) {
		st = open_store(1 << 20);
		put(st, &num, 'd', 5000, "{\"n\":\"a\"}");
		put_held(st, &num, "{\"n\":\"b\"}");
		put(st, &num, 'd', 5000, "{\"n\":\"c\"}");
		put_held(st, &num, "{\"n\":\"d\"}");
		ck_assert_int_eq(store_begin(st), 0);
		ck_assert_int_eq(store_job_put(st, 0, 'd', 5000,
		    "{\"n\":\"a2\"}"), 0);
		ck_assert_int_eq(store_commit_held(st), 0);
		kill(getpid(), SIGKILL);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	st = open_store(1 << 20);
	ck_assert(stored(st, 0, "{\"n\":\"a\"}"));	/* as it was */
	ck_assert(stored(st, 1, "{\"n\":\"b\"}"));
	ck_assert(stored(st, 2, "{\"n\":\"c\"}"));
	ck_assert_int_eq(store_job_get(st, 3, &c, &json), STORE_ENOTFOUND);
	ck_assert_uint_gt(store_next_ticket(st), 3);
	store_close(st);
	/* A close without a flush is the same. */
	st = open_store(1 << 20);
	put_held(st, &num, "{\"n\":\"e\"}");
	store_close(st);
	st = open_store(1 << 20);
	ck_assert(!stored(st, num, "{\"n\":\"e\"}"));
	ck_assert(stored(st, 2, "{\"n\":\"c\"}"));
	store_close(st);
}
END_TEST

/*
 * --sync group: held until the sync, which takes them; --sync none: a
 * held commit is a commit.  Growing the map flushes what is held.
 */
START_TEST(held_group_none_grow)
{
	struct store	*st = open_store_sync(1 << 20, SYNC_GROUP);
	uint64_t	 a;

	put_held(st, &a, "{\"n\":\"a\"}");
	ck_assert(store_held(st));
	ck_assert_uint_eq(syncs(st), 0);
	ck_assert_int_eq(store_sync(st), 0);
	ck_assert(!store_held(st));
	ck_assert_uint_eq(syncs(st), 1);
	put_held(st, &a, "{\"n\":\"b\"}");
	ck_assert_int_eq(store_grow(st), MDB_MAP_FULL);	/* at its bound */
	ck_assert(!store_held(st));
	store_close(st);
	st = open_store_sync(1 << 20, SYNC_NONE);
	ck_assert(stored(st, 0, "{\"n\":\"a\"}") && stored(st, 1,
	    "{\"n\":\"b\"}"));
	put_held(st, &a, "{\"n\":\"c\"}");
	ck_assert(!store_held(st));
	store_close(st);
	st = open_store(1 << 20);
	ck_assert(stored(st, 2, "{\"n\":\"c\"}"));
	store_close(st);
}
END_TEST

START_TEST(newer_schema_refused)
{
	struct store	*st;
	MDB_env		*env;
	MDB_txn		*txn;
	MDB_dbi		 dbi;
	MDB_val		 k = { 6, "schema" }, v;
	unsigned char	 nine[8] = { 0, 0, 0, 0, 0, 0, 0, 9 };
	char		 path[128], *moved = NULL, *damage = NULL;

	st = open_store(1 << 20);
	store_close(st);
	snprintf(path, sizeof(path), "%s/store", dir);
	ck_assert_int_eq(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 8);
	ck_assert_int_eq(mdb_env_open(env, path, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	v.mv_data = nine;
	v.mv_size = 8;
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	ck_assert_int_eq(try_open(&st, 1 << 20, 1 << 20, 1, &moved, &damage),
	    STORE_ENEWER);
	ck_assert_ptr_null(moved);
	ck_assert_ptr_null(damage);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store");
	TCase	*tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip_and_counter);
	tcase_add_test(tc, put_out_of_order);
	tcase_add_test(tc, expiry_index);
	tcase_add_test(tc, idempotency_and_workers);
	tcase_add_test(tc, map_full);
	tcase_add_test(tc, nested_share_one_commit);
	tcase_add_test(tc, corrupt_refused_or_moved);
	tcase_add_test(tc, truncated_refused);
	tcase_add_test(tc, empty_refused);
	tcase_add_test(tc, ticket_hwm);
	tcase_add_test(tc, room_and_growth);
	tcase_add_test(tc, newer_schema_refused);
	tcase_add_test(tc, held_not_synced);
	tcase_add_test(tc, held_lost_in_crash);
	tcase_add_test(tc, held_group_none_grow);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
