/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_STOREMETA_H
#define CMDGATE_STOREMETA_H

#include <stdint.h>

#include <lmdb.h>

#define STOREMETA_EBAD		(-1)	/* a value of the wrong size */
#define STOREMETA_ENEWER	(-2)	/* a schema past the one read */

/*
 * Read the store's meta database in txn (a write transaction): a schema
 * past schema is refused, an earlier one brought up to it, and *next is
 * the next ticket number.  0, an error above, or LMDB's.
 */
int	storemeta_read(MDB_txn *, MDB_dbi meta, uint64_t schema,
	    uint64_t *next);

#endif
