/* SPDX-License-Identifier: ISC */
/*
 * The recovery suites' broker (a heavy "hold" tool until the FIFO is
 * written, and "later" behind it), calls, and a tiny LMDB writer that
 * plants records in its stopped store (check_recovery, check_packed).
 */
#include "config.h"

#include <sys/stat.h>

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>
#include <lmdb.h>

#include "recutil.h"
#include "testnet.h"

struct broker	 b;
char		 tools[256], fifo[256], state[256];

void
setup(void)
{
	broker_prepare(&b);
	snprintf(tools, sizeof(tools), "%s", broker_path(&b, "tools.json"));
	snprintf(fifo, sizeof(fifo), "%s", broker_path(&b, "release"));
	snprintf(state, sizeof(state), "%s", broker_path(&b, "state"));
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	write_table("{\"name\":\"later\",\"tier\":\"heavy\",\"exec\":"
	    "[\"true\"],\"params\":{\"type\":\"object\"}}");
}

/* The tool table: hold (heavy, until the FIFO is written), then rest. */
void
write_table(const char *rest)
{
	char	json[2048];

	snprintf(json, sizeof(json), "{\"tools\":[{\"name\":\"hold\","
	    "\"tier\":\"heavy\",\"exec\":[\"sh\",\"-c\",\"cat %s "
	    ">/dev/null\"]},%s]}", fifo, rest);
	write_file(tools, json, 0600);
}

void
teardown(void)
{
	broker_stop(&b);
}

void
start(const char *first, ...)
{
	const char	*args[16] = { "--tools", tools };
	va_list		 ap;

	va_start(ap, first);
	args_collect(args, 2, 16, first, ap);
	va_end(ap);
	ck_assert_int_eq(broker_start(&b, args, 0), 0);
}

/* A broker with args on the test's state dir, to its exit status. */
int
run(const char *first, ...)
{
	const char	*args[16] = { "--listen", "127.0.0.1:0", "--state-dir",
			    state, "--no-auth", "--tools", tools };
	va_list		 ap;

	va_start(ap, first);
	args_collect(args, 7, 16, first, ap);
	va_end(ap);
	return broker_run(&b, args);
}

json_object *
call(const char *line)
{
	struct client	*c = client_tcp(b.port);
	json_object	*r = client_call(c, line);

	client_close(c);
	return r;
}

/* Submit one command async; the answer (caller puts). */
json_object *
submit(const char *tool, const char *params)
{
	char	line[65536];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"batch_execute\",\"params\":{\"async\":true,\"commands\":"
	    "[{\"tool\":\"%s\",\"params\":%s}]}}", tool, params);
	return call(line);
}

const char *
str(json_object *r, const char *path)
{
	return json_object_get_string(jpath(r, path));
}

/* Submit; the ticket's number. */
int
submit_num(const char *tool, const char *params)
{
	json_object	*r = submit(tool, params);
	int		 n;

	ck_assert_msg(jpath(r, "result.ticket") != NULL, "%s",
	    json_object_to_json_string(r));
	n = atoi(str(r, "result.ticket") + 2);
	json_object_put(r);
	return n;
}

json_object *
poll_num(int n)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"poll_job\",\"params\":{\"ticket\":\"t-%06d\"}}", n);
	return call(line);
}

json_object *
wait_num(int n)
{
	char	line[256];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"wait_job\",\"params\":{\"ticket\":\"t-%06d\",\"timeout_s\":20}}",
	    n);
	return call(line);
}

void
release(void)
{
	FILE	*f = fopen(fifo, "w");

	ck_assert_ptr_nonnull(f);
	fclose(f);
}

/* Four jobs: hold runs, three wait; then a clean stop. */
void
store_with_queue(void)
{
	int	i;

	start(NULL);
	ck_assert_int_eq(submit_num("hold", "{}"), 0);
	for (i = 1; i <= 3; i++)
		ck_assert_int_eq(submit_num("later", "{}"), i);
	ck_assert_int_eq(broker_signal_wait(&b, SIGTERM), 0);
}

/* Put raw bytes as job num's record (status byte, no expiry, text). */
void
plant(MDB_txn *txn, MDB_dbi dbi, int num, char status, const char *text)
{
	unsigned char	 kb[8], vb[512];
	MDB_val		 k = { 8, kb }, v;
	size_t		 n = strlen(text);
	int		 i;

	for (i = 0; i < 8; i++)
		kb[i] = (unsigned char)((uint64_t)num >> (56 - 8 * i));
	memset(vb, 0, 9);
	vb[0] = (unsigned char)status;
	memcpy(vb + 9, text, n);
	v.mv_data = vb;
	v.mv_size = 9 + n;
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
}

/* Job num's record as it is, but with the status byte 'q'. */
void
as_queued_q(MDB_txn *txn, MDB_dbi dbi, int num)
{
	unsigned char	 kb[8], *copy;
	MDB_val		 k = { 8, kb }, v;
	int		 i;

	for (i = 0; i < 8; i++)
		kb[i] = (unsigned char)((uint64_t)num >> (56 - 8 * i));
	ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
	ck_assert_int_eq(((unsigned char *)v.mv_data)[0] & 0x80, 0x80);
	ck_assert_ptr_nonnull(copy = malloc(v.mv_size));
	memcpy(copy, v.mv_data, v.mv_size);
	copy[0] = 'q';
	v.mv_data = copy;
	ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	free(copy);
}

MDB_env *
store_txn(MDB_txn **txn, const char *db, MDB_dbi *dbi)
{
	char	 path[300];
	MDB_env	*env;

	snprintf(path, sizeof(path), "%s/store", state);
	ck_assert_int_eq(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 8);
	ck_assert_int_eq(mdb_env_open(env, path, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, txn), 0);
	ck_assert_int_eq(mdb_dbi_open(*txn, db, 0, dbi), 0);
	return env;
}

/* The store's schema number: set it to set (> 0), and return it. */
uint64_t
schema(uint64_t set)
{
	unsigned char	 buf[8];
	MDB_env		*env;
	MDB_txn		*txn;
	MDB_dbi		 dbi;
	MDB_val		 k = { 6, "schema" }, v = { 8, buf };
	uint64_t	 n = 0;
	int		 i;

	env = store_txn(&txn, "meta", &dbi);
	for (i = 0; set > 0 && i < 8; i++)
		buf[i] = (unsigned char)(set >> (56 - 8 * i));
	if (set > 0)
		ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
	ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
	ck_assert_int_eq(v.mv_size, 8);
	for (i = 0; i < 8; i++)
		n = n << 8 | ((unsigned char *)v.mv_data)[i];
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	return n;
}

/* plant() one record in its own transaction, the broker stopped. */
void
plant_one(int num, char status, const char *text)
{
	MDB_env	*env;
	MDB_txn	*txn;
	MDB_dbi	 dbi;

	env = store_txn(&txn, "jobs", &dbi);
	plant(txn, dbi, num, status, text);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}
