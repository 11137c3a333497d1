/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_KV_H
#define CMDGATE_KV_H

#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

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

#endif
