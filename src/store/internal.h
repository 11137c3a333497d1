/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_INTERNAL_H
#define CMDGATE_INTERNAL_H

/*
 * The store's internals, private to src/store/; its API is
 * include/store.h.
 */

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

/* datafile.c */

/*
 * The store's data file (data.mdb) checked against its own meta pages
 * before LMDB maps it, and moved aside when it cannot be trusted.
 */

/*
 * 0 when file is sound or absent (a new store), -1 with why: a page past
 * the file's end would fault (SIGBUS) at LMDB's first read.
 */
int	datafile_check(const char *file, char *why, size_t len);
/*
 * Rename file to file.broken-<unix time>, which *moved names (caller
 * frees): 0 or an errno.
 */
int	datafile_move_aside(const char *file, char **moved);

/* hwm.c */

/*
 * The ticket high-water mark: a file beside the store holding a number
 * at or above which no ticket was issued, so that ticket numbers never
 * go back even when the store is lost or older.
 */

/* Read it into *hwm: 0 (*hwm 0 when there is none yet), -1 if garbled. */
int	hwm_read(const char *path, uint64_t *hwm);
/*
 * Write it durably: a new file, synced, renamed over the old, the
 * directory synced.  0, or an errno.
 */
int	hwm_write(const char *path, uint64_t hwm);

/* kv.c */

/*
 * LMDB plumbing under the job store: big-endian numbers (keys that sort
 * as numbers), cursor walks and values copied out as strings.
 */

void		 kv_be64(unsigned char *, uint64_t);
uint64_t	 kv_get_be64(const unsigned char *);
/*
 * Walk dbi in txn from key start (NULL: the first) calling fn until it
 * returns non-zero, which is returned; 0 at the end, or an LMDB code.
 */
typedef int	(*kv_walk_fn)(void *, MDB_val *, MDB_val *);
int		 kv_walk(MDB_txn *, MDB_dbi, MDB_val *start, kv_walk_fn,
		    void *);
/* The value past its first skip bytes, NUL-terminated.  Caller frees. */
char		*kv_string(const MDB_val *, size_t skip);

/* mapsize.c */

/* The LMDB map's size: how much of it holds data, and growing it. */

/*
 * Double *size, up to max, and set the map to it: 0, MDB_MAP_FULL when
 * it is at max already, or an LMDB code.  Not within a transaction.
 */
int	mapsize_grow(MDB_env *, uint64_t *size, uint64_t max);
/*
 * *full: whether the pages that hold data (the meta pages, the free
 * list's, the main database's and those of the n in dbis) reach pct % of
 * the map.  0, or an LMDB code.  Not within a transaction.
 */
int	mapsize_check(MDB_env *, const MDB_dbi *dbis, size_t n,
	    unsigned int pct, int *full);

/* storemeta.c */

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
