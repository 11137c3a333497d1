/* SPDX-License-Identifier: ISC */
/*
 * cmdgate-bench: the floors, programs of the same shape as the path measured
 * but doing none of its work: a loopback request/answer, a job's process.
 */
#include "config.h"

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peers.h"

extern char	**environ;

/*
 * The floor of a request/answer: one process that waits in epoll for a
 * line, reads it and writes it back, as the broker does with a request
 * (epoll_wait, read, write) but with no work in between.  One client at
 * a time, forked so that it is a process of its own like the broker.
 */
pid_t
floor_start(int *port)
{
	struct sockaddr_in	sin;
	struct epoll_event	ev;
	socklen_t		len = sizeof(sin);
	int			lfd = socket(AF_INET, SOCK_STREAM, 0), fd, ep, one = 1;
	char			buf[65536];
	ssize_t			r;
	pid_t			pid;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 64) == -1)
		die("floor: %s", strerror(errno));
	getsockname(lfd, (struct sockaddr *)&sin, &len);
	*port = ntohs(sin.sin_port);
	if ((pid = fork()) != 0) {
		close(lfd);
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) == -1 ||
		    (ep = epoll_create1(0)) == -1)
			_exit(0);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fcntl(fd, F_SETFL, O_NONBLOCK);
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
		while (epoll_wait(ep, &ev, 1, -1) == 1) {
			if ((r = read(fd, buf, sizeof(buf))) <= 0 ||
			    write(fd, buf, (size_t)r) != r)
				break;
		}
		close(ep);
		close(fd);
	}
}

/*
 * The floor of a job: a process of its own that, for each of n jobs,
 * posix_spawns /bin/true, waits for it and reports one byte, as the broker
 * reports a job's end.  Jobs per second from the go to the last report.
 */
double
spawn_floor(int n)
{
	char	*argv[] = { "/bin/true", NULL }, c = 'x';
	int	 go[2], rep[2], i, got = 0;
	ssize_t	 r;
	pid_t	 pid;
	double	 t0;

	if (pipe(go) == -1 || pipe(rep) == -1)
		die("pipe");
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(rep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < n; i++)
			if (run_wait(argv, NULL) != 0 || write(rep[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	t0 = now();
	if (write(go[1], &c, 1) != 1)
		die("spawn floor: %s", strerror(errno));
	while (got < n && (r = read(rep[0], &c, 1)) == 1)
		got++;
	t0 = now() - t0;
	close(go[1]);
	close(rep[0]);
	waitpid(pid, NULL, 0);
	if (got != n)
		die("spawn floor: %d of %d jobs", got, n);
	return n / t0;
}

/*
 * The floor under the guard figure: posix_spawn of the stamp helper, which
 * prints the monotonic clock as its first act, from this process.
 */
double
stamp_floor(const char *stamp)
{
	posix_spawn_file_actions_t	 fa;
	char				*argv[] = { (char *)stamp, NULL };
	char				 buf[64];
	int				 p[2];
	ssize_t				 n;
	pid_t				 pid;
	double				 t0;

	if (pipe(p) == -1)
		die("pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	t0 = now();
	if (posix_spawn(&pid, stamp, &fa, NULL, argv, environ) != 0)
		die("cannot run %s", stamp);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (n <= 0)
		die("%s printed nothing", stamp);
	buf[n] = '\0';
	return strtoll(buf, NULL, 10) / 1e9 - t0;
}
