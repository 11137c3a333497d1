/* SPDX-License-Identifier: ISC */
/*
 * The fork server (cmdgate-worker --forker, workers/forker.c) driven
 * directly: this test is the broker (a child subreaper that spawns it
 * with its socket on descriptor 3 and asks it for workers), or forks a
 * stand-in broker that it kills in the middle of a fork.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <check.h>

#include "ckrun.h"
#include "fdpass.h"
#include "proc.h"

#define WAIT_MS	10000	/* any one wait of these tests, at most */

static const char *
worker_path(void)
{
	const char	*w = getenv("CMDGATE_WORKER");

	return w != NULL && *w != '\0' ? w : "workers/cmdgate-worker";
}

/*
 * Start the fork server, in a process group of its own, with its socket
 * (returned) on descriptor 3; closed: its descriptors 1 and 2 are
 * closed, as a broker's may be.
 */
static int
start_forker(pid_t *pid, int closed)
{
	posix_spawn_file_actions_t	fa;
	posix_spawnattr_t		at;
	char	*argv[] = { (char *)worker_path(), (char *)"--forker", NULL };
	char	*env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	int	 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
	if (closed) {
		posix_spawn_file_actions_addclose(&fa, 1);
		posix_spawn_file_actions_addclose(&fa, 2);
	}
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	ck_assert_int_eq(posix_spawn(pid, argv[0], &fa, &at, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	return sv[0];
}

/*
 * The same, under a seccomp filter installed in the child before its exec
 * (as a container runtime's profile may be): clone(2) fails with errno
 * err when its flags & mask are want.
 */
static int
start_forker_filtered(pid_t *pid, unsigned mask, unsigned want, int err)
{
	struct sock_filter	f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
		/* The flags' low 32 bits. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0]) +
		    (__BYTE_ORDER == __BIG_ENDIAN ? 4 : 0)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, want, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO |
		    ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog	prog = { sizeof(f) / sizeof(f[0]), f };
	char	*argv[] = { (char *)worker_path(), (char *)"--forker", NULL };
	char	*env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	int	 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv), 0);
	ck_assert_int_ne(*pid = fork(), -1);
	if (*pid == 0) {
		setpgid(0, 0);
		if (dup2(sv[1], 3) != 3 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
			_exit(126);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(sv[1]);
	return sv[0];
}

/* Read one byte or message from fd within WAIT_MS: its length. */
static ssize_t
read_within(int fd, void *buf, size_t len)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };

	ck_assert_msg(poll(&pfd, 1, WAIT_MS) == 1, "nothing in %d ms",
	    WAIT_MS);
	return read(fd, buf, len);
}

/* Ask for a worker; its spec pipe's write end in *spec, events' read
 * end in *events. */
static void
ask_send(int sock, int *spec, int *events)
{
	int	sp[2], ev[2], fds[2];

	ck_assert_int_eq(pipe2(sp, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(ev, O_CLOEXEC), 0);
	fds[0] = sp[0];
	fds[1] = ev[1];
	ck_assert_int_eq(fdpass_send(sock, FORKER_REQUEST, fds,
	    MSG_NOSIGNAL), 0);
	close(sp[0]);
	close(ev[1]);
	*spec = sp[1];
	*events = ev[0];
}

/* The same, and the reply: the worker's pid, or -errno; in *forks, how
 * many forks made it. */
static int32_t
ask(int sock, int *spec, int *events, int *forks)
{
	struct forker_reply	reply;

	ask_send(sock, spec, events);
	ck_assert_int_eq(read_within(sock, &reply, sizeof(reply)),
	    sizeof(reply));
	*forks = reply.forks;
	return reply.pid;
}

/*
 * Reap every child and orphan of ours (this process is a subreaper)
 * until none is left: 1, or 0 when some are still alive after WAIT_MS
 * (then process group pgrp, where a worker waits before it is set up,
 * is killed).
 */
static int
reap_all(pid_t pgrp)
{
	struct timespec	ts = { WAIT_MS / 1000, 0 };
	sigset_t	set;
	pid_t		pid;
	int		status;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			;
		if (pid == -1 && errno == ECHILD)
			return 1;
		if (sigtimedwait(&set, NULL, &ts) == -1 && errno == EAGAIN)
			break;
	}
	kill(-pgrp, SIGKILL);	/* not reached when the test passes */
	while (waitpid(-1, &status, 0) > 0)
		;
	return 0;
}

static void
setup(void)
{
	sigset_t	set;

	/* The forked workers are orphaned to us, as to the broker. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * Ask the fork server on sock (fk) for a worker and give it a job of
 * true(1): it is our child (as the broker's is), runs the job, and reports
 * it on its events pipe.
 */
static void
run_one(int sock, pid_t fk, int forks)
{
	char		 spec[256], buf[4096];
	int		 sfd, efd, made, status;
	ssize_t		 n, len = 0;
	pid_t		 w;

	ck_assert_int_gt(w = ask(sock, &sfd, &efd, &made), 0);
	ck_assert_int_ne(w, fk);
	ck_assert_int_eq(made, forks);
	snprintf(spec, sizeof(spec), "{\"ticket\":\"t-000001\",\"broker\":%d,"
	    "\"output_cap\":1024,\"commands\":[{\"tool\":\"t\",\"timeout_s\":10,\"exec\":"
	    "[\"true\"]}]}", (int)getpid());
	ck_assert_int_eq(write(sfd, spec, strlen(spec)), (ssize_t)strlen(spec));
	close(sfd);
	while (len < (ssize_t)sizeof(buf) - 1 &&
	    (n = read_within(efd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	ck_assert_msg(strstr(buf, "\"event\":\"result\"") != NULL &&
	    strstr(buf, "\"ok\":true") != NULL, "events: %s", buf);
	close(efd);
	/* Ours to reap (no other process waits for it), and it ended well
	 * (a sanitizer's report at its exit would say otherwise). */
	ck_assert_int_eq(waitpid(w, &status, 0), w);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "worker %d: status %#x", (int)w, status);
}

/*
 * Once the fork server on sock (fk) says hello, two workers from it, each
 * run_one() and made by forks forks; then its end of file, and nothing of
 * it is left.
 */
static void
two_workers(int sock, pid_t fk, int forks)
{
	char	hello;

	ck_assert_int_eq(read_within(sock, &hello, 1), 1);
	ck_assert_int_eq(hello, FORKER_HELLO);
	run_one(sock, fk, forks);
	run_one(sock, fk, forks);
	close(sock);
	ck_assert(reap_all(fk));
}

/*
 * The broker's stdout and stderr closed: the worker still gets its spec
 * on 3 and its events pipe on 1, runs its command and reports it.
 */
START_TEST(std_fds_closed)
{
	int	sock;
	pid_t	fk;

	sock = start_forker(&fk, 1);
	two_workers(sock, fk, 1);
}
END_TEST

/*
 * One clone per worker: with fork(2) refused (clone(2) without CLONE_VM or
 * CLONE_PARENT), workers still come, born our children.
 */
START_TEST(one_clone_per_worker)
{
	int	sock;
	pid_t	fk;

	sock = start_forker_filtered(&fk, CLONE_VM | CLONE_PARENT, 0, EAGAIN);
	two_workers(sock, fk, 1);
}
END_TEST

/*
 * clone(2) with CLONE_PARENT refused (EPERM, as a seccomp profile may
 * say): workers are forked twice over instead, and are still ours.
 */
START_TEST(clone_refused_twice_over)
{
	int	sock;
	pid_t	fk;

	sock = start_forker_filtered(&fk, CLONE_PARENT, CLONE_PARENT, EPERM);
	two_workers(sock, fk, 2);
}
END_TEST

/*
 * A broker killed with SIGKILL at any point of a fork: the fork server,
 * the child it forked and the worker all end; none waits forever.
 */
START_TEST(broker_killed_while_forking)
{
	struct timespec	ts;
	char		hello;
	int		sync[2], round, sock, sfd, efd;
	pid_t		fb, fk;

	for (round = 0; round < 100; round++) {
		ck_assert_int_eq(pipe(sync), 0);
		if ((fb = fork()) == 0) {
			/* The stand-in broker: a subreaper that asks. */
			close(sync[0]);
			prctl(PR_SET_CHILD_SUBREAPER, 1);
			sock = start_forker(&fk, 0);
			if (read_within(sock, &hello, 1) != 1)
				_exit(1);
			ask_send(sock, &sfd, &efd);
			(void)!write(sync[1], &fk, sizeof(fk));
			pause();
			_exit(0);
		}
		close(sync[1]);
		ck_assert_int_eq(read_within(sync[0], &fk, sizeof(fk)),
		    sizeof(fk));
		close(sync[0]);
		/* 0 to 0.99 ms into the fork. */
		ts.tv_sec = 0;
		ts.tv_nsec = (round % 100) * 10 * 1000;
		nanosleep(&ts, NULL);
		kill(fb, SIGKILL);
		ck_assert_msg(reap_all(fk), "round %d: a process outlived the "
		    "broker", round);
	}
}
END_TEST

/* A request it cannot read (no descriptors): it exits, status 1. */
START_TEST(bad_request_ends_it)
{
	char	hello, b = FORKER_REQUEST;
	int	sock, status;
	pid_t	fk;

	sock = start_forker(&fk, 0);
	ck_assert_int_eq(read_within(sock, &hello, 1), 1);
	ck_assert_int_eq(send(sock, &b, 1, MSG_NOSIGNAL), 1);
	ck_assert_int_eq(read_within(sock, &hello, 1), 0);	/* its end */
	ck_assert_int_eq(waitpid(fk, &status, 0), fk);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	close(sock);
	ck_assert(reap_all(fk));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("forker");
	TCase	*tc = tcase_create("forker");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, std_fds_closed);
	tcase_add_test(tc, one_clone_per_worker);
	tcase_add_test(tc, clone_refused_twice_over);
	tcase_add_test(tc, broker_killed_while_forking);
	tcase_add_test(tc, bad_request_ends_it);
	suite_add_tcase(s, tc);
	return ck_run(s);
}
