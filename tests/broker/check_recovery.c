/* SPDX-License-Identifier: ISC */
/*
 * The real broker on a damaged, full or tampered store: a truncated or
 * empty data file is refused (exit 78) or moved aside (--reset-store)
 * without re-issuing a ticket; a full store refuses new jobs with
 * store_full while the jobs it holds still change; a key longer than
 * LMDB's limit is invalid_params; a malformed record fails its job alone
 * at start and the rest of the queue goes on; a deep record reads back.
 */
#include "config.h"

#include <sys/stat.h>

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <json-c/json.h>
#include <lmdb.h>

#include "ckrun.h"
#include "recutil.h"
#include "testnet.h"

START_TEST(truncated_refused_then_reset)
{
	char		 data[300], line[512];
	struct stat	 st;
	json_object	*r;

	store_with_queue();
	snprintf(data, sizeof(data), "%s/store/data.mdb", state);
	ck_assert_int_eq(stat(data, &st), 0);
	ck_assert_int_eq(truncate(data, 8192), 0);
	/* Refused, naming the file and the problem; nothing changed. */
	ck_assert_int_eq(run(NULL), 78);
	snprintf(line, sizeof(line), "%s: 8192 bytes, but its header says",
	    data);
	ck_assert_int_eq(broker_log_count(&b, line), 1);
	ck_assert_int_eq(broker_log_count(&b, "--reset-store"), 1);
	ck_assert_int_eq(stat(data, &st), 0);
	ck_assert_int_eq(st.st_size, 8192);
	/* Empty: refused too, not a silent new store at t-000000. */
	ck_assert_int_eq(truncate(data, 0), 0);
	ck_assert_int_eq(run(NULL), 78);
	ck_assert_int_eq(broker_log_count(&b, "empty (0 bytes)"), 1);
	/* --reset-store: moved aside, said where, no ticket re-issued. */
	start("--reset-store", NULL);
	ck_assert_int_eq(broker_log_count(&b, "THE STORE WAS DAMAGED"), 1);
	ck_assert_int_eq(broker_log_count(&b, "--reset-store moved it to"),
	    1);
	ck_assert_int_gt(submit_num("later", "{}"), 3);
	r = poll_num(1);
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32002);
	json_object_put(r);
}
END_TEST

/*
 * A map that may not grow: new jobs stop with store_full, well before
 * LMDB's MAP_FULL, and every job it holds can still be cancelled and
 * finish.  One that may grow takes more first.
 */
START_TEST(store_full_keeps_room)
{
	static char	 params[70000];
	json_object	*r, *s;
	char		 line[256];
	int		 n, last = 0, i;

	memset(params, 0, sizeof(params));
	strcpy(params, "{\"pad\":\"");
	memset(params + 8, 'p', 60000);
	strcat(params, "\"}");
	start("--map-size", "1048576", "--map-size-max", "2097152", NULL);
	ck_assert_int_eq(submit_num("hold", "{}"), 0);
	for (n = 1; n < 100; n++) {
		r = submit("later", params);
		if (jpath(r, "error") != NULL)
			break;
		last = n;
		json_object_put(r);
	}
	ck_assert_int_lt(n, 100);
	ck_assert_int_gt(last, 16);	/* the map grew past 1 MiB first */
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32004);
	ck_assert_str_eq(str(r, "error.data.type"), "store_full");
	ck_assert_ptr_nonnull(strstr(str(r, "error.data.reason"),
	    "--map-size-max"));
	json_object_put(r);
	s = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server_status\"}");
	ck_assert_int_eq(json_object_get_int64(jpath(s,
	    "result.store.map_size_bytes")), 2097152);
	json_object_put(s);
	/* Said once, not per refusal. */
	r = submit("later", params);
	json_object_put(r);
	ck_assert_int_eq(broker_log_count(&b, "new jobs are refused"), 1);
	/* Everything stored can still change: cancel all but one. */
	for (i = 1; i < last; i++) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"cancel_job\",\"params\":{\"ticket\":"
		    "\"t-%06d\"}}", i);
		r = call(line);
		ck_assert_msg(json_object_get_boolean(jpath(r,
		    "result.cancelled")), "%s", json_object_to_json_string(r));
		json_object_put(r);
	}
	release();
	r = wait_num(last);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
	ck_assert_int_eq(broker_log_count(&b, "refused the change"), 0);
}
END_TEST

/* Submit "later" async as agent with an idempotency key (caller puts). */
static json_object *
submit_keyed(const char *agent, const char *key)
{
	char	line[1024];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"agent\":\"%s\","
	    "\"idempotency_key\":\"%s\",\"commands\":[{\"tool\":\"later\"}]}}",
	    agent, key);
	return call(line);
}

/* agent + "\n" + key is one LMDB key: past 511 bytes, invalid_params. */
START_TEST(long_keys_invalid_params)
{
	char		 agent[300], key[300];
	json_object	*r;
	int		 i;

	start(NULL);
	/* 64 four-byte characters: a valid name of 256 bytes. */
	for (i = 0; i < 64; i++)
		memcpy(agent + 4 * i, "\xf0\x9f\x98\x80", 4);
	agent[256] = '\0';
	memset(key, 'k', 256);
	key[256] = '\0';
	r = submit_keyed(agent, key);
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32602);
	ck_assert_str_eq(str(r, "error.data.type"), "invalid_params");
	ck_assert_ptr_nonnull(strstr(str(r, "error.data.reason"), "510"));
	json_object_put(r);
	/* 254 bytes of key fit with that agent. */
	key[254] = '\0';
	r = submit_keyed(agent, key);
	ck_assert_msg(jpath(r, "result.ticket") != NULL, "%s",
	    json_object_to_json_string(r));
	json_object_put(r);
}
END_TEST

/* Deep: {"d":[[[...]]]} nested to the request limit less a few. */
static const char *
deep_params(int levels)
{
	static char	buf[512];
	int		i, n = 0;

	n += snprintf(buf, sizeof(buf), "{\"d\":");
	for (i = 0; i < levels; i++)
		buf[n++] = '[';
	for (i = 0; i < levels; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	buf[n] = '\0';
	return buf;
}

START_TEST(bad_record_fails_alone)
{
	MDB_env		*env;
	MDB_txn		*txn;
	MDB_dbi		 dbi;
	json_object	*r;

	start(NULL);
	ck_assert_int_eq(submit_num("hold", "{}"), 0);
	ck_assert_int_eq(submit_num("later", "{}"), 1);
	ck_assert_int_eq(submit_num("later", "{}"), 2);
	ck_assert_int_eq(submit_num("later", "{}"), 3);
	/* Nested deeper than json-c's default of 32: must read back. */
	ck_assert_int_eq(submit_num("later", deep_params(56)), 4);
	ck_assert_int_eq(submit_num("later", "{}"), 5);
	ck_assert_int_eq(submit_num("later", "{}"), 6);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	/* A tiny LMDB writer: two malformed records and a short one. */
	env = store_txn(&txn, "jobs", &dbi);
	plant(txn, dbi, 2, 'q', "{not json");
	plant(txn, dbi, 3, 'q', "{\"ticket\":\"t-000003\",\"status\":"
	    "\"queued\",\"agent\":\"mallory\"}");
	plant(txn, dbi, 7, 'z', "{}");
	plant(txn, dbi, 8, 'd', "{not json");	/* read only when asked */
	/* Queued from the status byte (heavy), read only to start. */
	plant(txn, dbi, 5, (char)0x82, "{not json");
	plant(txn, dbi, 6, (char)0x82, "{\"ticket\":\"t-000006\",\"status\":"
	    "\"queued\",\"agent\":\"eve\"}");
	/* As an earlier version stored a queued job: status 'q'. */
	as_queued_q(txn, dbi, 1);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	/* It starts; the bad ones failed, the rest of the queue intact. */
	start(NULL);
	ck_assert_int_eq(broker_log_count(&b, "3 damaged records failed"), 1);
	r = poll_num(2);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "damaged record"));
	json_object_put(r);
	r = poll_num(3);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_str_eq(str(r, "result.agent"), "mallory");
	json_object_put(r);
	r = poll_num(7);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	json_object_put(r);
	/* A finished record is not read at start (that would make the start
	 * as slow as the store is large): a damaged one is said so when read. */
	r = poll_num(8);
	ck_assert_int_eq(json_object_get_int(jpath(r, "error.code")), -32603);
	ck_assert_ptr_nonnull(strstr(str(r, "error.data.reason"),
	    "cannot be read"));
	json_object_put(r);
	r = wait_num(1);
	ck_assert_msg(strcmp(str(r, "result.status"), "done") == 0, "%s",
	    json_object_to_json_string(r));
	json_object_put(r);
	/* Those queued from the byte alone fail when they come to start. */
	r = wait_num(5);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "damaged record: the store's record of this job could not be "
	    "read when it was to start (not JSON"));
	json_object_put(r);
	r = wait_num(6);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_str_eq(str(r, "result.agent"), "eve");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "when it was to start"));
	json_object_put(r);
	/*
	 * The deep one was recovered, queued, and went to its worker (whose
	 * own reading of the spec is the worker's business, not recovery's).
	 */
	r = wait_num(4);
	ck_assert_ptr_nonnull(jpath(r, "result.started_at"));
	ck_assert_ptr_null(strstr(json_object_to_json_string(r), "damaged"));
	json_object_put(r);
	/* The deep one is listed and polled like any other. */
	r = call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"list_jobs\","
	    "\"params\":{}}");
	ck_assert_int_eq(json_object_array_length(jpath(r, "result.jobs")),
	    8);
	json_object_put(r);
}
END_TEST

/*
 * A value too short to hold a record's header (status byte and expiry):
 * the failed record put in its place overwrites it, and the broker
 * starts (it refused the whole store, exit 78, before).
 */
START_TEST(short_record_fails_alone)
{
	unsigned char	 kb[8] = { 0, 0, 0, 0, 0, 0, 0, 2 };
	MDB_val		 k = { 8, kb }, v = { 3, "q\0\0" };
	MDB_env		*env;
	MDB_txn		*txn;
	MDB_dbi		 dbi;
	json_object	*r;

	start(NULL);
	ck_assert_int_eq(submit_num("hold", "{}"), 0);
	ck_assert_int_eq(submit_num("later", "{}"), 1);
	ck_assert_int_eq(submit_num("later", "{}"), 2);
	ck_assert_int_eq(submit_num("later", "{}"), 3);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
	env = store_txn(&txn, "jobs", &dbi);
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	kb[7] = 3;
	v.mv_size = 0;
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	start(NULL);
	ck_assert_int_eq(broker_log_count(&b, "2 damaged records failed"), 1);
	r = poll_num(2);
	ck_assert_str_eq(str(r, "result.status"), "failed");
	ck_assert_ptr_nonnull(strstr(str(r, "result.error"),
	    "damaged record"));
	json_object_put(r);
	r = wait_num(1);
	ck_assert_str_eq(str(r, "result.status"), "done");
	json_object_put(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("recovery");
	TCase	*tc = tcase_create("recovery");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, truncated_refused_then_reset);
	tcase_add_test(tc, store_full_keeps_room);
	tcase_add_test(tc, long_keys_invalid_params);
	tcase_add_test(tc, bad_record_fails_alone);
	tcase_add_test(tc, short_record_fails_alone);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
