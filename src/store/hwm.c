/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "util.h"

int
hwm_read(const char *path, uint64_t *hwm)
{
	char	buf[32];
	ssize_t	n;
	int	fd;

	*hwm = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return util_parse_u64(buf, 0, UINT64_MAX - 1, hwm);
}

int
hwm_write(const char *path, uint64_t hwm)
{
	char	*tmp = xasprintf("%s.new", path), *dir, buf[32];
	int	 fd, dfd, n, rc = 0;

	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", hwm);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1 || write(fd, buf, (size_t)n) != n || fsync(fd) == -1 ||
	    rename(tmp, path) == -1)
		rc = errno != 0 ? errno : EIO;
	if (fd != -1)
		close(fd);
	dir = xstrdup(path);
	*strrchr(dir, '/') = '\0';
	if (rc == 0 && (dfd = open(dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) != -1) {
		if (fsync(dfd) == -1)
			rc = errno;
		close(dfd);
	}
	if (rc != 0)
		unlink(tmp);
	free(dir);
	free(tmp);
	return rc;
}
