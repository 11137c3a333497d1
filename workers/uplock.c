/* SPDX-License-Identifier: ISC */
/*
 * The per-upstream lock: editor bridges serve one client at a time (MCP
 * for Unity's closes the first connection when a second comes), so every
 * worker and the probe take it around each connect ... close.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uplock.h"
#include "wproc.h"

static int	uplock_file(const char *, const char *, const char *, char *,
		    size_t);

/* LOCK_DIR/upstream-<to, [A-Za-z0-9.-] kept, the rest '_'>.lock */
static int
uplock_path(const char *lock_dir, const char *to, char *path, size_t len)
{
	return uplock_file(lock_dir, to, ".lock", path, len);
}

/* LOCK_DIR/upstream-<to, as above><suffix> (at most 5 bytes). */
static int
uplock_file(const char *lock_dir, const char *to, const char *suffix,
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

/* Try (F_OFD_SETLK) or wait for (F_OFD_SETLKW) fd's lock: 0, or -1. */
static int
uplock_fcntl(int fd, int cmd)
{
	struct flock	fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	return fcntl(fd, cmd, &fl);
}

/*
 * Wait for a held lock.  SIGTERM stays blocked outside ppoll, so this
 * process cannot sleep in F_OFD_SETLKW; a child sharing fd's open file
 * description sleeps there instead (the lock it takes is the
 * description's, so ours) and says so on a pipe, which we wait for
 * under the signal mask.  0 held, 1 the deadline passed, -1 cancelled,
 * -2 with errno.  On anything but 0 the caller closes fd, which also
 * ends a lock the child took at the last moment.
 */
static int
uplock_wait(int fd, int64_t deadline, const sigset_t *waitmask)
{
	pid_t	pid;
	int	p[2], w, ok;
	char	c;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -2;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -2;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		while ((ok = uplock_fcntl(fd, F_OFD_SETLKW)) == -1 &&
		    errno == EINTR)
			;
		_exit(ok == 0 && write(p[1], "L", 1) == 1 ? 0 : 1);
	}
	close(p[1]);
	if ((w = wproc_wait(p[0], POLLIN, deadline, waitmask)) == 1)
		w = read(p[0], &c, 1) == 1 ? 0 : (errno = ENOLCK, -2);
	else if (w == 0)
		w = 1;
	if (w != 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	close(p[0]);
	return w;
}

int
uplock_take(const char *lock_dir, const char *to, int64_t deadline,
    const sigset_t *waitmask, int *fd, char *err, size_t errlen)
{
	char	path[4096];
	int	w = 0;

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
	if (uplock_fcntl(*fd, F_OFD_SETLK) == -1) {
		if (errno != EAGAIN && errno != EACCES)
			w = -2;
		else
			w = uplock_wait(*fd, deadline, waitmask);
	}
	if (w == -2)
		snprintf(err, errlen, "%s: lock: %s", path, strerror(errno));
	if (w != 0) {
		close(*fd);
		*fd = -1;
	}
	return w;
}

void
uplock_release(int fd)
{
	if (fd != -1)
		close(fd);	/* an OFD lock ends with its last descriptor */
}

/*
 * Every connect that succeeds stamps LOCK_DIR/upstream-<to>.seen, so that
 * a refused one can tell an upstream that was just there (reloading) from
 * one that is not running.
 */
void
uplock_seen(const char *lock_dir, const char *to)
{
	char	path[4096];
	int	fd;

	if (lock_dir == NULL || uplock_file(lock_dir, to, ".seen", path,
	    sizeof(path)) == -1)
		return;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		return;		/* then it only looks unseen: no harm */
	(void)futimens(fd, NULL);
	close(fd);
}

int64_t
uplock_seen_ago(const char *lock_dir, const char *to)
{
	struct stat	st;
	struct timespec	now;
	char		path[4096];

	if (lock_dir == NULL || uplock_file(lock_dir, to, ".seen", path,
	    sizeof(path)) == -1 || stat(path, &st) == -1 ||
	    clock_gettime(CLOCK_REALTIME, &now) == -1)
		return -1;
	return (int64_t)(now.tv_sec - st.st_mtim.tv_sec) * 1000 +
	    (now.tv_nsec - st.st_mtim.tv_nsec) / 1000000;
}
