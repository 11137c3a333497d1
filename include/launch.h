/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_LAUNCH_H
#define CMDGATE_LAUNCH_H

#include <sys/types.h>

#include <stddef.h>

/*
 * Starting worker processes.  The worker is its own program,
 * cmdgate-worker: in the build tree next to the broker's (so the broker
 * runs uninstalled), else in LIBEXECDIR.
 */

/* Find the worker: 0 and *path (caller frees), or -1 with err. */
int	launch_find_worker(char **path, char *err, size_t errlen);

/*
 * The environment workers and their tools get: PATH (the broker's, or a
 * default), and HOME, USER, LOGNAME, LANG, LC_ALL, TZ and TMPDIR when set;
 * nothing else.  NULL-terminated; caller frees with launch_env_free().
 */
char	**launch_env(void);
void	  launch_env_free(char **);

/*
 * Start the worker with posix_spawn: its own process group, signals
 * reset, stdin /dev/null, stdout a pipe whose read end is *events, fd 3 a
 * pipe whose write end is *spec, stderr the broker's.  Both ends returned
 * are non-blocking and close-on-exec.  0, or an errno value.
 */
int	  launch_worker(const char *path, char **env, pid_t *pid, int *spec,
	      int *events);
/* A worker's two pipes, close-on-exec; the broker's ends (sp[1], ev[0])
 * non-blocking.  0, or an errno value. */
int	  launch_pipes(int sp[2], int ev[2]);
/*
 * Start the fork server, "path --forker", as a worker is started but with
 * no pipes: descriptor 3 is a SOCK_SEQPACKET socket whose other end is
 * *sock (close-on-exec, blocking).  0, or an errno value.
 */
int	  launch_forker(const char *path, char **env, pid_t *pid, int *sock);
/*
 * Remember RLIMIT_NOFILE's soft limit before the broker raises its own
 * (call it first); launch_nofile() gives it back, -1 when unknown.
 * Workers set it again for their tools.
 */
void	  launch_save_nofile(void);
long long launch_nofile(void);
/* Process start time from /proc/PID/stat, in clock ticks; -1 if gone. */
long long launch_starttime(pid_t);

#endif
