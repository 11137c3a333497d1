/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-worker --forker: the broker's fork server.  It is exec'd once,
 * touches no job, and for each request on descriptor 3 (a SOCK_SEQPACKET
 * socket) forks a fresh worker, so that a worker costs a fork of this
 * small, clean process instead of an exec of the program.
 *
 * A request is one byte with two descriptors (SCM_RIGHTS): the read end
 * of the new worker's spec pipe and the write end of its event pipe.  The
 * worker is the broker's child, so that the broker reaps it and reads its
 * status as for a worker it spawned itself: clone(2) with CLONE_PARENT
 * makes it so at once.  Where that is refused (a seccomp filter), the
 * worker is forked twice over (here, then by a child that exits at once)
 * and orphaned to the broker, a child subreaper; it waits for that before
 * it runs, so that its death signal (the broker's death) is set for the
 * right parent.  (That needs pidfds, Linux 5.3: without them the fork
 * server exits at once.)  The answer is one struct forker_reply: the
 * worker's pid, or an errno, and how many forks made it.  At
 * the end of the socket (the broker is gone, or stops) it exits 0; a
 * request it cannot read makes it exit 1, and the broker spawns workers
 * itself from then on.  See cmdgated(8), Workers.
 */
#include "config.h"

#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdpass.h"
#include "forker.h"

/* The new worker: its pipes in place, nothing else of ours open. */
static char	*forker_arg;	/* "--forker" in our argv */
static pid_t	 broker;	/* our parent */
static int	 twice;		/* clone refused: fork twice over */

/*
 * Wait until mid, the child that forked us, is gone and we have a new
 * parent: the kernel makes a process's pidfd readable only once its
 * children have one.  Only while mid is still our parent is the pidfd
 * its own (its pid cannot be reused before it is reaped), and only then
 * is it waited for.
 */
static void
wait_orphaned(pid_t mid)
{
	struct pollfd	pfd;

	if ((pfd.fd = pidfd_open(mid, 0)) == -1)
		return;
	pfd.events = POLLIN;
	if (getppid() == mid)
		while (poll(&pfd, 1, -1) == -1 && errno == EINTR)
			;
	close(pfd.fd);
}

/*
 * The new worker: the broker's child (a worker's death signal is sent at
 * a change of parent, so it is set only then, in the worker), its pipes
 * in place, nothing else of ours open.  mid: the child that forked it and
 * exits, to wait for; 0 when it was born the broker's child.
 */
static void
child_fds(int spec, int events, pid_t mid)
{
	if (mid != 0)
		wait_orphaned(mid);
	/* The broker's death from now on sends SIGTERM (the worker's
	 * own), and a broker already gone is seen here. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != broker)
		_exit(0);
	dup2(events, WIRE_EVENTS_FD);
	dup2(spec, WIRE_SPEC_FD);	/* in place of our FORKER_FD */
	close_range(WIRE_SPEC_FD + 1, ~0U, 0);
	setpgid(0, 0);			/* and the broker's setpgid */
}

/*
 * Never the broker's child with the fork server's name or command line:
 * ps(1) (and the tests) show the worker's.
 */
static void
worker_name(void)
{
	prctl(PR_SET_NAME, "cmdgate-worker");
	memset(forker_arg, 0, strlen(forker_arg));
}

/*
 * Fork one worker (run by job()) and say its pid on p (a pipe): in the
 * child that exits at once, so that the worker is orphaned to the broker.
 */
static void
middle(int spec, int events, int p, int (*job)(void))
{
	int32_t	pid;
	pid_t	mid = getpid();

	worker_name();
	if ((pid = fork()) == 0) {
		close(p);
		child_fds(spec, events, mid);
		exit(job());
	}
	if (pid == -1)
		pid = -errno;
	(void)write(p, &pid, sizeof(pid));
	_exit(0);
}

/*
 * One worker, born the broker's child: clone(2) with CLONE_PARENT (our
 * parent is its parent, and our exit signal, SIGCHLD, its own).  Not
 * clone3(2), which seccomp filters that cannot read its flags refuse
 * (systemd's RestrictNamespaces=, container runtimes' default profiles)
 * while they let this through.  With no stack and no thread ids, only the
 * place of the flags among clone's arguments differs between
 * architectures.  Its pid; 0 when it is refused (from then on workers are
 * forked twice over); or -errno.
 *
 * The worker is a raw clone, not a fork(2): glibc's fork handlers do not
 * run in it, which this process does not need (it has one thread and
 * registers none), and glibc's record of its thread id stays ours.  glibc's
 * own locks read that record (the same value throughout, so they work),
 * and so does pthread_kill(3) of the main thread from another thread
 * (which would fail; a worker has one thread); raise(3) and abort(3) ask
 * the kernel (glibc 2.34 on).
 */
static int32_t
clone_one(int spec, int events, int (*job)(void))
{
	long	pid;

#if defined(__s390__) || defined(__CRIS__)
	pid = syscall(SYS_clone, 0L, (long)CLONE_PARENT, NULL, NULL, 0L);
#else
	pid = syscall(SYS_clone, (long)CLONE_PARENT, 0L, NULL, NULL, 0L);
#endif
	if (pid == 0) {
		worker_name();
		child_fds(spec, events, 0);
		exit(job());
	}
	if (pid > 0)
		return (int32_t)pid;
	if (errno == ENOSYS || errno == EPERM || errno == EINVAL)
		return 0;
	return -errno;
}

/* One worker for one request: its pid, or -errno. */
static int32_t
fork_one(int spec, int events, int (*job)(void))
{
	int32_t	pid = -EIO;
	pid_t	mid;
	int	p[2], status;

	if (!twice) {
		if ((pid = clone_one(spec, events, job)) != 0)
			return pid;
		twice = 1;
		pid = -EIO;
	}
	if (pipe2(p, O_CLOEXEC) == -1)
		return -errno;
	if ((mid = fork()) == 0) {
		close(p[0]);
		middle(spec, events, p[1], job);
	}
	close(p[1]);
	if (mid == -1) {
		pid = -errno;
		close(p[0]);
		return pid;
	}
	while (read(p[0], &pid, sizeof(pid)) == -1 && errno == EINTR)
		;
	close(p[0]);
	while (waitpid(mid, &status, 0) == -1 && errno == EINTR)
		;
	return pid;
}

int
forker_run(char *arg, int (*job)(void))
{
	struct forker_reply	 reply;
	char			 byte;
	ssize_t			 n;
	int			 fds[2];

	forker_arg = arg;
	broker = getppid();
	prctl(PR_SET_NAME, "cmdgate-forker");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close_range(FORKER_FD + 1, ~0U, 0);
	/*
	 * Descriptors 0 to 2 open (the broker's stdout or stderr may be
	 * closed), so that those received land above FORKER_FD.
	 */
	for (n = 0; n < FORKER_FD; n++)
		if (fcntl((int)n, F_GETFD) == -1 &&
		    open("/dev/null", O_RDWR) != n)
			return 1;
	/* Without pidfds (Linux < 5.3) a worker could not wait to be the
	 * broker's: say so, and the broker spawns its workers. */
	byte = FORKER_HELLO;
	if ((n = pidfd_open(getpid(), 0)) == -1)
		byte = FORKER_NOPIDFD;
	else
		close((int)n);
	if (send(FORKER_FD, &byte, 1, MSG_NOSIGNAL) != 1 ||
	    byte == FORKER_NOPIDFD)
		return 1;
	for (;;) {
		if ((n = fdpass_recv(FORKER_FD, &byte, fds)) == 0)
			return 0;	/* the broker is gone or stops */
		if (n == -1 || byte != FORKER_REQUEST)
			return 1;	/* descriptors left are closed at exit */
		memset(&reply, 0, sizeof(reply));
		reply.pid = fork_one(fds[0], fds[1], job);
		reply.forks = twice ? 2 : 1;
		close(fds[0]);
		close(fds[1]);
		if (send(FORKER_FD, &reply, sizeof(reply), MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(reply))
			return 0;
	}
}
