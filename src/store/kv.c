/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <lmdb.h>

#include "internal.h"
#include "util.h"

void
kv_be64(unsigned char *p, uint64_t v)
{
	int	i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

uint64_t
kv_get_be64(const unsigned char *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int
kv_walk(MDB_txn *txn, MDB_dbi dbi, MDB_val *start, kv_walk_fn fn, void *arg)
{
	MDB_val		 k, v;
	MDB_cursor	*cur;
	MDB_cursor_op	 op = start != NULL ? MDB_SET_RANGE : MDB_FIRST;
	int		 rc;

	if (start != NULL)
		k = *start;
	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return rc;
	while ((rc = mdb_cursor_get(cur, &k, &v, op)) == 0) {
		op = MDB_NEXT;
		if ((rc = fn(arg, &k, &v)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

char *
kv_string(const MDB_val *v, size_t skip)
{
	char	*s = xmalloc(v->mv_size - skip + 1);

	memcpy(s, (const char *)v->mv_data + skip, v->mv_size - skip);
	s[v->mv_size - skip] = '\0';
	return s;
}
