/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RECUTIL_H
#define CMDGATE_RECUTIL_H

#include <stdint.h>

#include <json-c/json.h>
#include <lmdb.h>

#include "broker.h"

extern struct broker	 b;
extern char		 tools[256], fifo[256], state[256];

void		 setup(void);
void		 teardown(void);
/* The tool table: hold (heavy, until the FIFO is written), then rest
 * (more tools' JSON, comma-separated). */
void		 write_table(const char *rest);
/* The broker on the test's table, with more args (NULL-ended). */
void		 start(const char *first, ...);
/* A broker with args on the test's state dir, to its exit status. */
int		 run(const char *first, ...);
/* One call on a connection of its own; the answer (caller puts). */
json_object	*call(const char *line);
json_object	*submit(const char *tool, const char *params);
const char	*str(json_object *, const char *path);
/* Submit one command async; the ticket's number. */
int		 submit_num(const char *tool, const char *params);
json_object	*poll_num(int);
json_object	*wait_num(int);
/* Let the running hold end. */
void		 release(void);
/* Four jobs: hold runs, three wait; then a clean stop. */
void		 store_with_queue(void);
/* A write transaction on the test's store (stopped), database db open
 * as *dbi: the env, to close after the commit. */
MDB_env		*store_txn(MDB_txn **, const char *db, MDB_dbi *);
/* Raw bytes as job num's record: status byte, no expiry, text. */
void		 plant(MDB_txn *, MDB_dbi, int num, char status,
		    const char *text);
void		 plant_one(int num, char status, const char *text);
/* Job num's record as it is, but with the status byte 'q'. */
void		 as_queued_q(MDB_txn *, MDB_dbi, int num);
/* The store's schema number: set it to set (> 0), and return it. */
uint64_t	 schema(uint64_t set);

#endif
