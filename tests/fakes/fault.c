/* SPDX-License-Identifier: ISC */
/*
 * A preload shim for fault injection (tests/check_faults.c): while the file
 * $CMDGATE_FAULT_DIR/<fault> exists, calls on the store's data file fail:
 *
 *	enospc	pwrite and writev fail with ENOSPC (the disk is full)
 *	enospcbig
 *		the same, for writes of more than 48 KiB only (a disk with
 *		room for a small change, not for a large one)
 *	eio	fdatasync and fsync fail with EIO (the disk lost the write)
 *	eagain	posix_spawn fails with EAGAIN (no more processes)
 *	nestfail
 *		the next commit of a nested transaction fails with ENOMEM,
 *		the nested transaction aborted, as LMDB does (once: the
 *		file is removed)
 *	nosubreaper
 *		prctl(PR_SET_CHILD_SUBREAPER) fails with EINVAL (so that the
 *		broker has no fork server and spawns every worker)
 *	noclone	clone(2) with CLONE_PARENT, called through syscall(2),
 *		fails with EPERM, as a seccomp filter may make it (so that
 *		the fork server forks each worker twice over)
 *	epipe	writev to a pipe (the job spec going to a worker) fails
 *		with EPIPE; plain write is left alone, since libevent's
 *		signal pipe uses it
 *	startlate
 *		a worker's "start" event waits for a signal to the worker
 *		(its tool runs meanwhile, its group not yet told)
 *	garble	a worker writes a line that is not JSON before its "start"
 *		event (a worker gone wrong: its tools cannot reach its
 *		event socket), once its tool sent it SIGUSR2 (so that the
 *		tool had run that far)
 *	pgid1	a worker's "start" event names process group 1 instead of
 *		its tool's
 *	speclate
 *		a worker reads its job spec only once SIGTERM came (left
 *		pending, as it was); speclate.held says it waits
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/uio.h>

#include <sys/stat.h>
#include <sys/syscall.h>

#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG_WRITE	(48 * 1024)
#define PGID1		"{\"event\":\"start\",\"index\":0,\"pgid\":1}\n"

static int
armed(const char *fault)
{
	const char	*dir = getenv("CMDGATE_FAULT_DIR");
	char		 path[512];

	if (dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, fault);
	return access(path, F_OK) == 0;
}

static int
is_store(int fd)
{
	char	link[64], target[512];
	ssize_t	n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, target, sizeof(target) - 1)) <= 0)
		return 0;
	target[n] = '\0';
	return n > 9 && strcmp(target + n - 9, "/data.mdb") == 0;
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);

	if (real == NULL)
		real = (ssize_t (*)(int, const void *, size_t, off_t))
		    dlsym(RTLD_NEXT, "pwrite");
	if (is_store(fd) && (armed("enospc") || (n > BIG_WRITE &&
	    armed("enospcbig")))) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, n, off);
}

static int
is_pipe(int fd)
{
	struct stat	st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* A worker's event socket (its standard output). */
static int
is_events(int fd)
{
	struct stat	st;

	return fd == 1 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static volatile sig_atomic_t	usr2;

static void
on_usr2(int sig)
{
	(void)sig;
	usr2 = 1;
}

/* In every process it is loaded in: a tool's SIGUSR2 is awaited, not
 * fatal. */
__attribute__((constructor)) static void
fault_init(void)
{
	if (armed("garble"))
		signal(SIGUSR2, on_usr2);
}

/* garble: once the tool said so (SIGUSR2), the garbage. */
static void
garble(int fd)
{
	static const char	 bad[] = "{not json\n";
	sigset_t		 usr2set, old;

	sigemptyset(&usr2set);
	sigaddset(&usr2set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2set, &old);
	sigdelset(&old, SIGUSR2);
	while (!usr2)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	(void)!write(fd, bad, sizeof(bad) - 1);
}

/* Before a worker's start event: garble, then startlate. */
static void
start_faults(int fd)
{
	sigset_t	none;

	if (armed("garble"))
		garble(fd);
	if (armed("startlate")) {
		sigemptyset(&none);
		sigsuspend(&none);
	}
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	size_t		 len = 0;
	int		 i;

	if (real == NULL)
		real = (ssize_t (*)(int, const struct iovec *, int))
		    dlsym(RTLD_NEXT, "writev");
	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (is_store(fd) && (armed("enospc") || (len > BIG_WRITE &&
	    armed("enospcbig")))) {
		errno = ENOSPC;
		return -1;
	}
	if (is_pipe(fd) && armed("epipe")) {
		errno = EPIPE;
		return -1;
	}
	if (n > 0 && iov[0].iov_len >= 16 && memcmp(iov[0].iov_base,
	    "{\"event\":\"start\"", 16) == 0 && is_events(fd)) {
		start_faults(fd);
		if (armed("pgid1")) {
			(void)!write(fd, PGID1, sizeof(PGID1) - 1);
			return (ssize_t)len;
		}
	}
	return real(fd, iov, n);
}

/* $CMDGATE_FAULT_DIR/speclate.held: a worker waits for its SIGTERM. */
static void
held(void)
{
	char	path[512];
	int	fd;

	snprintf(path, sizeof(path), "%s/speclate.held",
	    getenv("CMDGATE_FAULT_DIR"));
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) != -1)
		close(fd);
}

ssize_t
read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	static int waited;
	sigset_t	term, cur;

	if (real == NULL)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT,
		    "read");
	/* A worker's spec (descriptor 3, a pipe; SIGTERM is blocked). */
	if (fd == 3 && !waited && sigprocmask(SIG_BLOCK, NULL, &cur) == 0 &&
	    sigismember(&cur, SIGTERM) && is_pipe(fd) && armed("speclate")) {
		waited = 1;
		held();
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		if (sigwaitinfo(&term, NULL) == SIGTERM)
			raise(SIGTERM);
	}
	return real(fd, buf, n);
}

int
posix_spawn(pid_t *pid, const char *path,
    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
    char *const argv[], char *const envp[])
{
	static int (*real)(pid_t *, const char *,
	    const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	    char *const[], char *const[]);

	if (real == NULL)
		real = (int (*)(pid_t *, const char *,
		    const posix_spawn_file_actions_t *,
		    const posix_spawnattr_t *, char *const[], char *const[]))
		    dlsym(RTLD_NEXT, "posix_spawn");
	if (armed("eagain"))
		return EAGAIN;
	return real(pid, path, fa, attr, argv, envp);
}

long
syscall(long n, ...)
{
	static long (*real)(long, ...);
	va_list		ap;
	long		a[6];
	int		i;

	if (real == NULL)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	/* Six arguments, whatever the call takes, as glibc's own does. */
	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_clone && (a[0] & CLONE_PARENT) && armed("noclone")) {
		errno = EPERM;
		return -1;
	}
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#define SUBREAPER	36	/* PR_SET_CHILD_SUBREAPER, <sys/prctl.h> */

int
prctl(int op, unsigned long a2, unsigned long a3, unsigned long a4,
    unsigned long a5)
{
	static int (*real)(int, unsigned long, unsigned long, unsigned long,
	    unsigned long);

	if (real == NULL)
		real = (int (*)(int, unsigned long, unsigned long,
		    unsigned long, unsigned long))dlsym(RTLD_NEXT, "prctl");
	if (op == SUBREAPER && armed("nosubreaper")) {
		errno = EINVAL;
		return -1;
	}
	return real(op, a2, a3, a4, a5);
}

int
fdatasync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	if (is_store(fd) && armed("eio")) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}

int
fsync(int fd)
{
	static int (*real)(int);

	if (real == NULL)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (is_store(fd) && armed("eio")) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}

/*
 * Nested transactions (mdb_txn_begin with a parent) live until their
 * commit or abort: the addresses of those open, at most NESTED_MAX.
 */
#define NESTED_MAX	16
static void	*nested[NESTED_MAX];

static int
nested_take(void *txn)
{
	int	i;

	for (i = 0; i < NESTED_MAX; i++)
		if (txn != NULL && nested[i] == txn) {
			nested[i] = NULL;
			return 1;
		}
	return 0;
}

int
mdb_txn_begin(void *env, void *parent, unsigned flags, void **txn)
{
	static int (*real)(void *, void *, unsigned, void **);
	int	rc, i;

	if (real == NULL)
		real = (int (*)(void *, void *, unsigned, void **))
		    dlsym(RTLD_NEXT, "mdb_txn_begin");
	if ((rc = real(env, parent, flags, txn)) == 0 && parent != NULL)
		for (i = 0; i < NESTED_MAX; i++)
			if (nested[i] == NULL) {
				nested[i] = *txn;
				break;
			}
	return rc;
}

void
mdb_txn_abort(void *txn)
{
	static void (*real)(void *);

	if (real == NULL)
		real = (void (*)(void *))dlsym(RTLD_NEXT, "mdb_txn_abort");
	nested_take(txn);
	real(txn);
}

int
mdb_txn_commit(void *txn)
{
	static int (*real)(void *);
	char	path[512];

	if (real == NULL)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "mdb_txn_commit");
	if (nested_take(txn) && armed("nestfail")) {
		snprintf(path, sizeof(path), "%s/nestfail",
		    getenv("CMDGATE_FAULT_DIR"));
		unlink(path);
		mdb_txn_abort(txn);
		return ENOMEM;
	}
	return real(txn);
}
