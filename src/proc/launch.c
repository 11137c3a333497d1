/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"
#include "wire.h"

#define WORKER_NAME	"cmdgate-worker"

static long long	nofile_soft = -1;

int
launch_find_worker(char **path, char *err, size_t errlen)
{
	char		 exe[PATH_MAX], cand[PATH_MAX + 64], *dir;
	const char	*env = getenv("CMDGATE_WORKER");
	ssize_t		 n;

	/* Named outright (tests under valgrind, unusual installs). */
	if (env != NULL && *env != '\0') {
		if (access(env, X_OK) == 0) {
			*path = xstrdup(env);
			return 0;
		}
		snprintf(err, errlen, "CMDGATE_WORKER %s: %s", env,
		    strerror(errno));
		return -1;
	}

	/* Built but not installed: src/cmdgated finds workers/. */
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		dir = dirname(exe);
		snprintf(cand, sizeof(cand), "%s/../workers/%s", dir,
		    WORKER_NAME);
		if (access(cand, X_OK) == 0 &&
		    realpath(cand, exe) != NULL) {
			*path = xstrdup(exe);
			return 0;
		}
	}
	snprintf(cand, sizeof(cand), "%s/%s", LIBEXECDIR, WORKER_NAME);
	if (access(cand, X_OK) == 0) {
		*path = xstrdup(cand);
		return 0;
	}
	snprintf(err, errlen, "worker program %s: %s (is cmdgate installed?)",
	    cand, strerror(errno));
	return -1;
}

static const char *env_keep[] = {
	"HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR", NULL,
};

char **
launch_env(void)
{
	char		**env = xcalloc(16, sizeof(char *));
	const char	 *v;
	size_t		  i, n = 0;

	v = getenv("PATH");
	env[n++] = xasprintf("PATH=%s", v != NULL && *v != '\0' ? v :
	    "/usr/local/bin:/usr/bin:/bin");
	for (i = 0; env_keep[i] != NULL; i++)
		if ((v = getenv(env_keep[i])) != NULL)
			env[n++] = xasprintf("%s=%s", env_keep[i], v);
	return env;
}

void
launch_env_free(char **env)
{
	size_t	i;

	for (i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

int
launch_pipes(int sp[2], int ev[2])
{
	int	rc;

	if (pipe2(sp, O_CLOEXEC) == -1)
		return errno;
	/* A socket, both ways: the events up, and the answers of the
	 * broker's editor links down (WIRE_EV_CALL). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ev) == -1) {
		rc = errno;
		close(sp[0]);
		close(sp[1]);
		return rc;
	}
	/* The broker's ends. */
	fcntl(sp[1], F_SETFL, O_NONBLOCK);
	fcntl(ev[0], F_SETFL, O_NONBLOCK);
	return 0;
}

/*
 * posix_spawn, not fork: glibc starts the child with CLONE_VM|CLONE_VFORK,
 * so the cost does not grow with the broker's heap.  out (-1: none)
 * becomes the child's stdout, fd3 its descriptor 3 (WIRE_SPEC_FD, or
 * the fork server's FORKER_FD).
 */
static int
launch(const char *path, const char *arg, char **env, int out, int fd3,
    pid_t *pid)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 all, none;
	char				*argv[] = { (char *)path, (char *)arg,
					    NULL };
	int				 rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out != -1)
		posix_spawn_file_actions_adddup2(&fa, out, WIRE_EVENTS_FD);
	posix_spawn_file_actions_adddup2(&fa, fd3, 3);
	posix_spawnattr_init(&attr);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(pid, path, &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return rc;
}

int
launch_worker(const char *path, char **env, pid_t *pid, int *spec,
    int *events)
{
	int	sp[2], ev[2], rc;

	if ((rc = launch_pipes(sp, ev)) != 0)
		return rc;
	rc = launch(path, NULL, env, ev[1], sp[0], pid);
	close(sp[0]);
	close(ev[1]);
	if (rc != 0) {
		close(sp[1]);
		close(ev[0]);
		return rc;
	}
	*spec = sp[1];
	*events = ev[0];
	return 0;
}

int
launch_forker(const char *path, char **env, pid_t *pid, int *sock)
{
	int	sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return errno;
	rc = launch(path, FORKER_ARG, env, -1, sv[1], pid);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return rc;
	}
	*sock = sv[0];
	return 0;
}

void
launch_save_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		nofile_soft = (long long)rl.rlim_cur;
}

long long
launch_nofile(void)
{
	return nofile_soft;
}

long long
launch_starttime(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	long long	 t = -1;
	FILE		*f;
	int		 i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL) {
		/* Field 22; p is at the end of field 2. */
		for (i = 2; i < 22 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p != NULL)
			t = strtoll(p + 1, NULL, 10);
	}
	fclose(f);
	return t;
}
