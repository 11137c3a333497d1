/* SPDX-License-Identifier: ISC */
/*
 * When an upstream the broker does not link was last reached, kept in a
 * file beside the store that every worker sees: a connect refused just
 * after is a reload, not an editor that is not running.  (A linked
 * bridge's is the link's, told with each answer.)
 */
#include "config.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "upseen.h"

/* LOCK_DIR/upstream-<to, [A-Za-z0-9.-] kept, the rest '_'><suffix>
 * (at most 5 bytes). */
static int
upseen_file(const char *lock_dir, const char *to, const char *suffix,
    char *path, size_t len)
{
	size_t	off;
	int	n;

	n = snprintf(path, len, "%s/upstream-", lock_dir);
	if (n < 0 || (size_t)n >= len)
		return -1;
	for (off = (size_t)n; *to != '\0' && off + 6 < len; to++, off++)
		path[off] = (*to >= 'A' && *to <= 'Z') ||
		    (*to >= 'a' && *to <= 'z') || (*to >= '0' && *to <= '9') ||
		    *to == '.' || *to == '-' ? *to : '_';
	if (*to != '\0')
		return -1;
	memcpy(path + off, suffix, strlen(suffix) + 1);
	return 0;
}

/*
 * Every connect that succeeds stamps LOCK_DIR/upstream-<to>.seen, so that
 * a refused one can tell an upstream that was just there (reloading) from
 * one that is not running.
 */
void
upseen_stamp(const char *lock_dir, const char *to)
{
	char	path[4096];
	int	fd;

	if (lock_dir == NULL || upseen_file(lock_dir, to, ".seen", path,
	    sizeof(path)) == -1)
		return;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return;		/* then it only looks unseen: no harm */
	(void)futimens(fd, NULL);
	close(fd);
}

int64_t
upseen_ago(const char *lock_dir, const char *to)
{
	struct stat	st;
	struct timespec	now;
	char		path[4096];

	if (lock_dir == NULL || upseen_file(lock_dir, to, ".seen", path,
	    sizeof(path)) == -1 || stat(path, &st) == -1 ||
	    clock_gettime(CLOCK_REALTIME, &now) == -1)
		return -1;
	return (int64_t)(now.tv_sec - st.st_mtim.tv_sec) * 1000 +
	    (now.tv_nsec - st.st_mtim.tv_nsec) / 1000000;
}
