/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

/*
 * LMDB's meta pages (lmdb 0.9, mdb.c), the first two pages of data.mdb:
 * a 16-byte page header, then MDB_meta.  Offsets from the page's start.
 */
#define META_MAGIC	0xBEEFC0DEU
#define META_VERSION	1
#define META_O_MAGIC	16
#define META_O_VERSION	20
#define META_O_PSIZE	40	/* mm_dbs[FREE_DBI].md_pad */
#define META_O_LASTPG	136
#define META_O_TXNID	144
#define META_LEN	152
#define PSIZE_MIN	512
#define PSIZE_MAX	65536

struct meta {
	uint32_t	magic, version, psize;
	uint64_t	last_pg, txnid;
};

static void
meta_parse(const unsigned char *p, struct meta *m)
{
	memcpy(&m->magic, p + META_O_MAGIC, 4);
	memcpy(&m->version, p + META_O_VERSION, 4);
	memcpy(&m->psize, p + META_O_PSIZE, 4);
	memcpy(&m->last_pg, p + META_O_LASTPG, 8);
	memcpy(&m->txnid, p + META_O_TXNID, 8);
}

static int
meta_ok(const struct meta *m)
{
	return m->magic == META_MAGIC && m->version == META_VERSION &&
	    m->psize >= PSIZE_MIN && m->psize <= PSIZE_MAX &&
	    (m->psize & (m->psize - 1)) == 0;
}

/*
 * Read data.mdb's two meta pages and pick the newer valid one, as LMDB
 * does.  0, or -1 with why.
 */
static int
meta_read(int fd, off_t size, struct meta *m, char *why, size_t len)
{
	unsigned char	 buf[META_LEN];
	struct meta	 m2;

	if (size < META_LEN || pread(fd, buf, META_LEN, 0) != META_LEN) {
		snprintf(why, len, "%lld bytes, too short for LMDB's first "
		    "meta page", (long long)size);
		return -1;
	}
	meta_parse(buf, m);
	if (!meta_ok(m)) {
		snprintf(why, len, "its first page is not an LMDB meta page "
		    "(magic %#x, version %u, page size %u)", m->magic,
		    m->version, m->psize);
		return -1;
	}
	if (size < 2 * (off_t)m->psize || pread(fd, buf, META_LEN,
	    m->psize) != META_LEN) {
		snprintf(why, len, "%lld bytes, too short for its two meta "
		    "pages of %u bytes", (long long)size, m->psize);
		return -1;
	}
	meta_parse(buf, &m2);
	if (meta_ok(&m2) && m2.psize == m->psize && m2.txnid > m->txnid)
		*m = m2;
	return 0;
}

int
datafile_check(const char *file, char *why, size_t len)
{
	struct stat	st;
	struct meta	m;
	int		fd, rc = -1;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1)
		snprintf(why, len, "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "not a regular file");
	else if (st.st_size == 0)
		snprintf(why, len, "empty (0 bytes): the jobs it held are "
		    "gone");
	else if (meta_read(fd, st.st_size, &m, why, len) == 0) {
		if ((m.last_pg + 1) > (uint64_t)st.st_size / m.psize)
			snprintf(why, len, "%lld bytes, but its header says "
			    "it uses %" PRIu64 " pages of %u bytes (%" PRIu64
			    " bytes): it was truncated",
			    (long long)st.st_size, m.last_pg + 1, m.psize,
			    (m.last_pg + 1) * m.psize);
		else
			rc = 0;
	}
	close(fd);
	return rc;
}

int
datafile_move_aside(const char *file, char **moved)
{
	char	*aside = xasprintf("%s.broken-%lld", file,
		    (long long)time(NULL));

	if (rename(file, aside) == -1) {
		free(aside);
		return errno;
	}
	*moved = aside;
	return 0;
}
