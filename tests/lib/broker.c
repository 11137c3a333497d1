/* SPDX-License-Identifier: ISC */
/* The one launcher of cmdgated for the tests, with_broker and the bench. */
#include "config.h"

#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "broker.h"

#define BROKER_ARGS	64

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
broker_mkdir(struct broker *b)
{
	struct sockaddr_un	sun;

	memset(b, 0, sizeof(*b));
	b->pid = -1;
	b->pidfd = -1;
	snprintf(b->dir, sizeof(b->dir), "/tmp/cmdgate-test-XXXXXX");
	if (mkdtemp(b->dir) == NULL)
		return -1;
	snprintf(b->sock, sizeof(b->sock), "%s/sock", b->dir);
	snprintf(b->log, sizeof(b->log), "%s/log", b->dir);
	b->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/notify", b->dir);
	return bind(b->notify_fd, (struct sockaddr *)&sun, sizeof(sun));
}

void
broker_rmdir(struct broker *b)
{
	if (b->notify_fd != -1)
		close(b->notify_fd);
	b->notify_fd = -1;
	nftw(b->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Whether args name a token file: then the run is about auth. */
static int
args_have_token(const char **args)
{
	while (args != NULL && *args != NULL)
		if (strcmp(*args++, "--token-file") == 0)
			return 1;
	return 0;
}

/* argv for how and args into argv[BROKER_ARGS]; state is its state dir. */
static void
broker_argv(struct broker *b, const char **args,
    const struct broker_how *how, const char *bin, const char *state,
    const char **argv)
{
	int	n = 0;

	argv[n++] = bin;
	if (how->defaults) {
		argv[n++] = "--listen";
		argv[n++] = "127.0.0.1:0";
		argv[n++] = "--state-dir";
		argv[n++] = state;
		if (!b->auth && !args_have_token(args))
			argv[n++] = "--no-auth";
	}
	if (how->unix_socket) {
		argv[n++] = "--socket";
		argv[n++] = b->sock;
	}
	while (args != NULL && *args != NULL && n < BROKER_ARGS - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
}

/* In the child: what how asks for, then exec. */
static void
broker_exec(struct broker *b, const struct broker_how *how,
    const char **argv)
{
	char	notify[256];
	int	fd;

	/* A launcher that dies never leaves a broker behind. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(notify, sizeof(notify), "%s/notify", b->dir);
	setenv("NOTIFY_SOCKET", notify, 1);
	unsetenv("CMDGATE_PORT");
	/*
	 * Instance files in the broker's dir, unless the test names a dir
	 * its brokers share: the suites' brokers of one name, run at once,
	 * would refuse each other (cmdgated(8), --instance).
	 */
	snprintf(notify, sizeof(notify), "%s/run", b->dir);
	setenv("CMDGATE_RUNTIME_DIR", getenv("CMDGATE_TEST_RUNTIME_DIR") !=
	    NULL ? getenv("CMDGATE_TEST_RUNTIME_DIR") : notify, 1);
	/* Passed on to its workers and tools: broker_strays() knows them. */
	setenv("TMPDIR", b->dir, 1);
	if (how->nofile > 0) {
		struct rlimit rl = { (rlim_t)how->nofile, (rlim_t)how->nofile };

		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (how->log_to_file &&
	    (fd = open(b->log, O_WRONLY | O_CREAT | O_APPEND, 0600)) != -1)
		dup2(fd, 2);
	execv(argv[0], (char **)argv);
	_exit(127);
}

pid_t
broker_spawn(struct broker *b, const char **args,
    const struct broker_how *how)
{
	const char	*argv[BROKER_ARGS];
	const char	*bin = getenv("CMDGATED");
	char		 state[256];
	pid_t		 pid;

	if (bin == NULL)
		return -1;
	snprintf(state, sizeof(state), "%s", how->state_dir != NULL ?
	    how->state_dir : broker_path(b, "state"));
	broker_argv(b, args, how, bin, state, argv);
	if ((pid = fork()) == 0)
		broker_exec(b, how, argv);
	if (pid == -1)
		return -1;
	b->pid = pid;
	b->pidfd = pidfd_open(pid, 0);
	return pid;
}

int
broker_reap(struct broker *b, int timeout_ms)
{
	struct pollfd	pfd = { b->pidfd, POLLIN, 0 };
	int		status;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -2;
	if (waitpid(b->pid, &status, 0) != b->pid)
		return -1;
	close(b->pidfd);
	b->pidfd = -1;
	b->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
broker_kill(struct broker *b, int sig)
{
	int	rc;

	kill(b->pid, sig);
	if ((rc = broker_reap(b, BROKER_TIMEOUT_MS)) == -2) {
		kill(b->pid, SIGKILL);
		rc = broker_reap(b, BROKER_TIMEOUT_MS);
	}
	return rc;
}

int
broker_notified(struct broker *b, const char *want)
{
	struct pollfd	 pfd[2] = { { b->notify_fd, POLLIN, 0 },
			    { b->pidfd, POLLIN, 0 } };
	char		 msg[1024], *st;
	ssize_t		 n;

	for (;;) {
		if (poll(pfd, b->pidfd >= 0 ? 2 : 1, BROKER_TIMEOUT_MS) <= 0)
			return -1;
		if (!(pfd[0].revents & POLLIN))
			return -1;	/* the broker exited */
		n = recv(b->notify_fd, msg, sizeof(msg) - 1, 0);
		if (n <= 0)
			return -1;
		msg[n] = '\0';
		if ((st = strstr(msg, "STATUS=")) != NULL)
			snprintf(b->status, sizeof(b->status), "%.*s",
			    (int)strcspn(st + 7, "\n"), st + 7);
		if (strstr(msg, want) != NULL)
			return 0;
	}
}

int
broker_ready(struct broker *b)
{
	const char	*p;

	if (broker_notified(b, "READY=1") == -1)
		return -1;
	if ((p = strstr(b->status, "127.0.0.1:")) == NULL)
		return -1;
	b->port = atoi(p + 10);
	return b->port > 0 ? 0 : -1;
}

const char *
broker_path(struct broker *b, const char *name)
{
	static char	path[256];

	snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	return path;
}

int
broker_log_count(struct broker *b, const char *needle)
{
	FILE	*f = fopen(b->log, "r");
	char	 line[4096];
	int	 n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

int
broker_await_log(struct broker *b, const char *needle)
{
	struct pollfd	pfd;
	char		buf[4096];
	int		fd, n;

	if ((fd = inotify_init1(IN_CLOEXEC)) == -1 ||
	    inotify_add_watch(fd, b->log, IN_MODIFY) == -1)
		return 0;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* Watch first, then look: a line written in between is not missed. */
	while ((n = broker_log_count(b, needle)) == 0) {
		if (poll(&pfd, 1, BROKER_TIMEOUT_MS) != 1)
			break;
		(void)!read(fd, buf, sizeof(buf));
	}
	close(fd);
	return n;
}

int
wait_for_file(const char *path)
{
	char		 dir[512], buf[4096], *slash;
	struct pollfd	 pfd;
	int		 fd, rc = -1;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return -1;
	*slash = '\0';
	if ((fd = inotify_init1(IN_CLOEXEC)) == -1 ||
	    inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO) == -1)
		return -1;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* Watch first, then look: a file made in between is not missed. */
	while (access(path, F_OK) != 0) {
		if (poll(&pfd, 1, BROKER_TIMEOUT_MS) != 1)
			goto out;
		(void)!read(fd, buf, sizeof(buf));
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int
broker_dial(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		one = errno;
		close(fd);
		errno = one;
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

long
rss_kib(pid_t pid)
{
	char	 path[64], line[256];
	long	 kib = -1;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* /proc/pid/name of pid into buf, NULs made spaces: its length, or -1. */
static ssize_t
proc_text(pid_t pid, const char *name, char *buf, size_t size)
{
	char	path[64];
	ssize_t	n, i;
	int	fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return n;
}

/*
 * Whether pid (not ours to manage) names dir in its argv or environment
 * (TMPDIR, which the broker passes to its workers and tools), or works
 * in it (a tool in the state dir).
 */
static int
proc_names(pid_t pid, const char *dir)
{
	static char	buf[65536];
	char		stat[512], path[64], *paren;
	size_t		len = strlen(dir);
	ssize_t		n;

	/* The test's own children are its business, and zombies hold nothing. */
	if (proc_text(pid, "stat", stat, sizeof(stat)) <= 0 ||
	    (paren = strrchr(stat, ')')) == NULL)
		return 0;
	if (paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))
		return 0;
	if (atoi(paren + 4) == (int)getpid())
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	if ((n = readlink(path, buf, sizeof(buf) - 1)) > 0 &&
	    (size_t)n >= len && strncmp(buf, dir, len) == 0 &&
	    (buf[len] == '/' || (size_t)n == len))
		return 1;
	return (proc_text(pid, "cmdline", buf, sizeof(buf)) > 0 &&
	    strstr(buf, dir) != NULL) ||
	    (proc_text(pid, "environ", buf, sizeof(buf)) > 0 &&
	    strstr(buf, dir) != NULL);
}

int
broker_strays(struct broker *b, char *what, size_t size)
{
	struct pollfd	 pfd = { -1, POLLIN, 0 };
	struct timespec	 now;
	struct dirent	*de;
	DIR		*d;
	char		 cmd[256];
	size_t		 len = 0;
	pid_t		 pid;
	long long	 end;
	int		 n = 0, left;

	if (size > 0)
		what[0] = '\0';
	if ((d = opendir("/proc")) == NULL)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + BROKER_TIMEOUT_MS;
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    (pid = (pid_t)atoi(de->d_name)) == getpid() ||
		    !proc_names(pid, b->dir))
			continue;
		/* One on its way out (a worker ending its tool) may finish:
		 * BROKER_TIMEOUT_MS for all of them. */
		if ((pfd.fd = pidfd_open(pid, 0)) == -1)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (int)(end - (now.tv_sec * 1000LL +
		    now.tv_nsec / 1000000));
		if (left > 0 && poll(&pfd, 1, left) == 1) {
			close(pfd.fd);
			continue;
		}
		if (proc_names(pid, b->dir)) {
			if (proc_text(pid, "cmdline", cmd, sizeof(cmd)) < 0)
				cmd[0] = '\0';
			if (len < size)
				len += (size_t)snprintf(what + len, size - len,
				    "%s[%d] %s", n > 0 ? "; " : "", (int)pid,
				    cmd);
			pidfd_send_signal(pfd.fd, SIGKILL, NULL, 0);
			n++;
		}
		close(pfd.fd);
	}
	closedir(d);
	return n;
}
