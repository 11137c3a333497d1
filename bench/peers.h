/* SPDX-License-Identifier: ISC */
/* cmdgate-bench helpers, floors and peers: see peers.c and floor.c. */
#ifndef CMDGATE_BENCH_PEERS_H
#define CMDGATE_BENCH_PEERS_H

#include <sys/types.h>

#include <json-c/json.h>

#include "broker.h"

extern char	 tmpdir[];
extern pid_t	 bench_pid;	/* the bench's own process: die() exits it */

double	 now(void);
void	 die(const char *fmt, ...);
int	 free_port(void);
void	 await_port(int port);
pid_t	 spawn(char *const argv[], char *const envp[]);
int	 run_wait(char *const argv[], char *const envp[]);
void	 stop(pid_t pid);
void	 xfer(int fd, const char *s, size_t len, int lines);
/* clients processes, each n requests in sequence: requests per second. */
double	 concurrent(int port, const char *req, int lines, int clients, int n);
json_object	*rpc(int fd, const char *line);
/* Member name of answer o's result as a string ("" if none).  Borrowed
 * from o. */
const char	*result_str(json_object *o, const char *name);
/* cmdgated --sync sync --state-dir state [--tools tools] [extra...]. */
void	 broker_start(struct broker *b, const char *tools, const char *sync,
	    const char *state, const char *const *extra);
/* The same, but on a port of ours, waiting up to wait_s for it. */
void	 broker_launch(struct broker *b, const char *tools, const char *sync,
	    const char *state, const char *const *extra, int wait_s);
void	 broker_stop(struct broker *b);
void	 rmtree(const char *path);
const char	*tmp(const char *name);
void	 write_text(const char *path, const char *text);
/* CPU time pid has used so far, in seconds. */
double	 cpu_s(pid_t pid);
pid_t	 beanstalkd_start(int *port, const char *binlog);

/* floor.c */
pid_t	 floor_start(int *port);
double	 spawn_floor(int n);
/* Seconds from posix_spawn of the stamp helper to its first instruction. */
double	 stamp_floor(const char *stamp);

#endif
