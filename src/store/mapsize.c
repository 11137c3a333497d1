/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>

#include <lmdb.h>

#include "internal.h"

#define FREE_DBI	0
#define MAIN_DBI	1

int
mapsize_grow(MDB_env *env, uint64_t *size, uint64_t max)
{
	uint64_t	to = *size * 2;
	int		rc;

	if (*size >= max)
		return MDB_MAP_FULL;
	if (to > max)
		to = max;
	if ((rc = mdb_env_set_mapsize(env, (size_t)to)) != 0)
		return rc;
	*size = to;
	return 0;
}

static int
mapsize_add(MDB_txn *txn, MDB_dbi dbi, uint64_t *pages)
{
	MDB_stat	ms;
	int		rc;

	if ((rc = mdb_stat(txn, dbi, &ms)) != 0)
		return rc;
	*pages += ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages;
	return 0;
}

/* Pages that hold data: every database's, the free list's included. */
static int
mapsize_used(MDB_txn *txn, const MDB_dbi *dbis, size_t n, uint64_t *pages)
{
	size_t	i;
	int	rc;

	*pages = 2;	/* the meta pages */
	if ((rc = mapsize_add(txn, FREE_DBI, pages)) != 0 ||
	    (rc = mapsize_add(txn, MAIN_DBI, pages)) != 0)
		return rc;
	for (i = 0; i < n; i++)
		if ((rc = mapsize_add(txn, dbis[i], pages)) != 0)
			return rc;
	return 0;
}

int
mapsize_check(MDB_env *env, const MDB_dbi *dbis, size_t n, unsigned int pct,
    int *full)
{
	MDB_envinfo	 ei;
	MDB_stat	 ms;
	MDB_txn		*txn;
	uint64_t	 used;
	int		 rc;

	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) != 0)
		return rc;
	rc = mapsize_used(txn, dbis, n, &used);
	mdb_txn_abort(txn);
	if (rc != 0 || (rc = mdb_env_stat(env, &ms)) != 0 ||
	    (rc = mdb_env_info(env, &ei)) != 0)
		return rc;
	*full = used * ms.ms_psize * 100 >= (uint64_t)ei.me_mapsize * pct;
	return 0;
}
