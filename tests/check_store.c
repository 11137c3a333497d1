/* SPDX-License-Identifier: ISC */
/* The LMDB store: round trip, counter, expiry, map full, bad files. */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <lmdb.h>

#include "store.h"
#include "ckrun.h"

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

static struct store *
open_store(uint64_t map)
{
	struct store	*st = NULL;
	char		*moved = NULL;
	int		 rc;

	rc = store_open(&st, dir, map, SYNC_FULL, &moved);
	ck_assert_msg(rc == 0, "store_open: %s", store_strerror(rc));
	ck_assert_ptr_null(moved);
	return st;
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

START_TEST(corrupt_moved_aside)
{
	struct store	*st = NULL;
	char		 path[128], *moved = NULL, buf[4096];
	int		 fd;

	st = open_store(1 << 20);
	store_close(st);
	snprintf(path, sizeof(path), "%s/store/data.mdb", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	ck_assert_int_eq(store_open(&st, dir, 1 << 20, SYNC_FULL, &moved), 0);
	ck_assert_ptr_nonnull(moved);
	ck_assert_ptr_nonnull(strstr(moved, "/store.corrupt-"));
	/* The bad file is kept, untouched, beside the new store. */
	snprintf(path, sizeof(path), "%s/data.mdb", moved);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, 16), 16);
	ck_assert_int_eq(buf[0], 0x5a);
	close(fd);
	ck_assert_uint_eq(store_next_ticket(st), 0);
	free(moved);
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
	char		 path[128], *moved = NULL;

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
	ck_assert_int_eq(store_open(&st, dir, 1 << 20, SYNC_FULL, &moved),
	    STORE_ENEWER);
	ck_assert_ptr_null(moved);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store");
	TCase	*tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip_and_counter);
	tcase_add_test(tc, expiry_index);
	tcase_add_test(tc, idempotency_and_workers);
	tcase_add_test(tc, map_full);
	tcase_add_test(tc, nested_share_one_commit);
	tcase_add_test(tc, corrupt_moved_aside);
	tcase_add_test(tc, newer_schema_refused);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
