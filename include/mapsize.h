/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MAPSIZE_H
#define CMDGATE_MAPSIZE_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

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

#endif
