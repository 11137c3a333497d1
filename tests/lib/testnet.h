/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TESTNET_H
#define CMDGATE_TESTNET_H

#include <sys/types.h>

#include <stdarg.h>

#include <json-c/json.h>

#include "broker.h"
#include "jsonl.h"

/*
 * Integration helpers: start the real cmdgated on a free loopback port with
 * a temporary state dir and a notify socket the test owns, and speak to it.
 * Every wait is bounded by TN_TIMEOUT_MS.
 */

#define TN_TIMEOUT_MS	BROKER_TIMEOUT_MS

/*
 * A client's wait for one read: longer than the longest wait the tests ask
 * the broker for (wait_job timeout_s 20), so that a slow job under the
 * sanitizers or valgrind is the broker's answer, never the client's guess.
 */
#define TN_READ_MS	30000

#define TN_BUF	(8 * 1024 * 1024)

struct client {
	int		 fd;
	struct jsonl	 jl;		/* lines up to TN_BUF bytes */
	json_object	*notes;		/* notifications read early */
};

/* A fresh temp dir in b->dir (no broker yet). */
void		 broker_prepare(struct broker *);
/*
 * Start cmdgated with --listen 127.0.0.1:0 --state-dir --socket and args
 * (NULL-ended), and --no-auth unless b->auth is set or args hold
 * --token-file (tests about auth); wait for READY=1.  Returns 0, or its exit status when it
 * exited instead.  nofile > 0 sets its RLIMIT_NOFILE.
 */
int		 broker_start(struct broker *, const char **args, int nofile);
/* Run cmdgated with args to completion; its exit status. */
int		 broker_run(struct broker *, const char **args);
/* Send sig and wait for the exit; the exit status (-1 if signalled). */
int		 broker_signal_wait(struct broker *, int sig);
/*
 * Stop (SIGTERM) if running, remove the temp dir; the test fails unless
 * it exited 0 and left no process behind (broker_strays()).
 */
void		 broker_stop(struct broker *);
/*
 * The number a process wrote into file name of b's dir, once a whole
 * line of it is there (awaited, BROKER_TIMEOUT_MS at most).
 */
int		 broker_file_number(struct broker *, const char *name);
/*
 * Whether pid ends within ms (a pidfd, no polling).  If not, it (through
 * the pidfd) and the group it leads get SIGKILL: a failing test leaves
 * nothing behind.
 */
int		 pid_ends_within(pid_t pid, int ms);
void		 write_file(const char *path, const char *text, int mode);
/* Read fd into buf (size bytes with its NUL) until EOF, then close it. */
void		 fd_slurp(int fd, char *buf, size_t size);
/*
 * args[n], args[n + 1], ... = first and what follows it in ap, up to its
 * NULL and at most up to args[max - 2]; NULL-ended within max.
 */
void		 args_collect(const char **args, int n, int max,
		    const char *first, va_list ap);

struct client	*client_tcp(int port);
struct client	*client_unix(const char *path);
void		 client_close(struct client *);
void		 client_send(struct client *, const char *s);
/* One line, or NULL at EOF or timeout.  Caller frees. */
char		*client_line(struct client *);
/*
 * Send a line and return the answer (parsed; caller puts).  Notifications
 * that come first are kept for client_wait_method().
 */
json_object	*client_call(struct client *, const char *line);
/* client_call() of authenticate with token; caller puts. */
json_object	*client_auth(struct client *, const char *token);
/* Read lines until one parses with "method" == method; caller puts. */
json_object	*client_wait_method(struct client *, const char *method);
/* 1 when the broker closed the connection (EOF within the timeout). */
int		 client_eof(struct client *);
/* Read exactly n bytes (LSP bodies); caller frees. */
char		*client_read(struct client *, size_t n);

/* Member at a dotted path (numbers index arrays), or NULL. */
json_object	*jpath(json_object *, const char *);

#endif
