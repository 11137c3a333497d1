/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_BROKER_H
#define CMDGATE_BROKER_H

#include <sys/types.h>

/*
 * One launcher of the real cmdgated for the tests, with_broker and the
 * bench: a temp dir holding the notify socket the launcher owns, the
 * broker's state, Unix socket and log.  No Check in here: every function
 * reports failure by its return value; every wait is bounded by
 * BROKER_TIMEOUT_MS.
 */

#define BROKER_TIMEOUT_MS	10000

struct broker {
	pid_t	 pid;
	int	 pidfd;
	int	 notify_fd;
	int	 port;
	char	 dir[64];		/* temp dir, removed by broker_rmdir */
	char	 sock[128];		/* its Unix socket */
	char	 log[128];		/* its stderr */
	char	 status[512];		/* last STATUS= it sent */
	int	 auth;			/* 1: no --no-auth by default */
};

struct broker_how {
	/*
	 * --listen 127.0.0.1:0 and --state-dir, and --no-auth unless
	 * b->auth is set or the args hold --token-file.
	 */
	int		 defaults;
	const char	*state_dir;	/* NULL: DIR/state */
	int		 unix_socket;	/* --socket DIR/sock */
	int		 log_to_file;	/* its stderr to DIR/log */
	int		 nofile;	/* > 0: its RLIMIT_NOFILE */
};

/* A fresh temp dir in b->dir with the notify socket bound: 0, or -1. */
int		 broker_mkdir(struct broker *);
/* Remove the temp dir and close the notify socket. */
void		 broker_rmdir(struct broker *);
/*
 * Start $CMDGATED with how's flags then args (NULL-ended); it dies with
 * this process.  The pid, or -1 (CMDGATED unset, or fork failed).
 */
pid_t		 broker_spawn(struct broker *, const char **args,
		    const struct broker_how *);
/* Wait for a notify datagram containing want: 0, or -1 (timeout, exit). */
int		 broker_notified(struct broker *, const char *want);
/* Wait for READY=1 and take b->port from its STATUS=: 0, or -1. */
int		 broker_ready(struct broker *);
/*
 * Wait up to timeout_ms for it to exit and reap it: its exit status, -1
 * when a signal ended it, -2 when it is still running.
 */
int		 broker_reap(struct broker *, int timeout_ms);
/* Send sig and reap it: as broker_reap(), after SIGKILL if it stays. */
int		 broker_kill(struct broker *, int sig);
/* Path of a file in the temp dir.  Borrowed until the next call. */
const char	*broker_path(struct broker *, const char *name);
/* How many lines of the broker's log hold needle. */
int		 broker_log_count(struct broker *, const char *needle);
/* The same, once the count is not 0 (0 after BROKER_TIMEOUT_MS). */
int		 broker_await_log(struct broker *, const char *needle);
/* Wait (inotify, bounded) until path exists; 0, or -1 on timeout. */
int		 wait_for_file(const char *path);
/* A TCP connection to 127.0.0.1:port (TCP_NODELAY), or -1 (errno set). */
int		 broker_dial(int port);
/*
 * Processes other than this one and its children that still name b->dir
 * in their argv or environment (TMPDIR: a tool, a worker, a fork server)
 * or work in it, once they had BROKER_TIMEOUT_MS in all to end: each is
 * killed, and listed in what ("[pid] argv; ...").  How many.
 */
int		 broker_strays(struct broker *, char *what, size_t size);
/* The resident set of pid in KiB, or -1. */
long		 rss_kib(pid_t pid);

#endif
