/* SPDX-License-Identifier: ISC */
/*
 * The store's "meta" database: its schema number and the next ticket
 * number, read (and the schema brought up to date) when it opens.
 */
#include "config.h"

#include <stdint.h>

#include <lmdb.h>

#include "internal.h"

int
storemeta_read(MDB_txn *txn, MDB_dbi meta, uint64_t schema, uint64_t *next)
{
	MDB_val		 k = { 6, "schema" }, v;
	unsigned char	 buf[8];
	int		 rc;

	rc = mdb_get(txn, meta, &k, &v);
	/*
	 * A store of an earlier schema is read as it is (schema 1 has no
	 * packed status bytes: job_store_status()); what is written now is
	 * the current schema, which earlier versions refuse.
	 */
	if (rc == 0 && v.mv_size == 8 && kv_get_be64(v.mv_data) <
	    schema)
		rc = MDB_NOTFOUND;
	if (rc == MDB_NOTFOUND) {
		kv_be64(buf, schema);
		v.mv_data = buf;
		v.mv_size = 8;
		if ((rc = mdb_put(txn, meta, &k, &v, 0)) != 0)
			return rc;
	} else if (rc != 0)
		return rc;
	else if (v.mv_size != 8)
		return STOREMETA_EBAD;
	else if (kv_get_be64(v.mv_data) > schema)
		return STOREMETA_ENEWER;
	k.mv_data = "next_ticket";
	k.mv_size = 11;
	rc = mdb_get(txn, meta, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		*next = kv_get_be64(v.mv_data);
	else if (rc == MDB_NOTFOUND)
		*next = 0;
	else
		return rc == 0 ? STOREMETA_EBAD : rc;
	return 0;
}
