/* SPDX-License-Identifier: ISC */
/*
 * The per-upstream lock: editor bridges serve one client at a time (MCP
 * for Unity's closes the first connection when a second comes), so every
 * worker and the probe take it around each connect ... close.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uplock.h"
#include "worker.h"

#define UPLOCK_RETRY_MS	20	/* between tries of a held lock */

/* LOCK_DIR/upstream-<to, [A-Za-z0-9.-] kept, the rest '_'>.lock */
static int
uplock_path(const char *lock_dir, const char *to, char *path, size_t len)
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
	memcpy(path + off, ".lock", 6);
	return 0;
}

static int
uplock_try(int fd)
{
	struct flock	fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	return fcntl(fd, F_OFD_SETLK, &fl);
}

int
uplock_take(const char *lock_dir, const char *to, int64_t deadline,
    const sigset_t *waitmask, int *fd, char *err, size_t errlen)
{
	char	path[4096];
	int	w;

	*fd = -1;
	if (lock_dir == NULL)
		return 0;
	if (uplock_path(lock_dir, to, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "lock file for %s: name too long", to);
		return -2;
	}
	if ((*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -2;
	}
	/*
	 * F_OFD_SETLKW cannot be woken by SIGTERM here (it is blocked
	 * outside ppoll): try, then wait a little under the signal mask.
	 */
	while (uplock_try(*fd) == -1) {
		if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
			snprintf(err, errlen, "%s: lock: %s", path,
			    strerror(errno));
			w = -2;
		} else if ((w = worker_wait(-1, 0, deadline < now_ms() +
		    UPLOCK_RETRY_MS ? deadline : now_ms() + UPLOCK_RETRY_MS,
		    waitmask)) == 0 && now_ms() < deadline)
			continue;
		close(*fd);
		*fd = -1;
		return w == 0 ? 1 : w;
	}
	return 0;
}

void
uplock_release(int fd)
{
	if (fd != -1)
		close(fd);	/* an OFD lock ends with its last descriptor */
}
