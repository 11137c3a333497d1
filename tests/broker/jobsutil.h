/* SPDX-License-Identifier: ISC */
/* What the jobs suites share: see jobsutil.c. */
#ifndef CMDGATE_JOBSUTIL_H
#define CMDGATE_JOBSUTIL_H

#include <sys/types.h>

#include <json-c/json.h>

#include "testnet.h"

extern struct broker	 b;
extern struct client	*c;
extern char		 fifo[256], tools[256];
extern pid_t		 upstream;
extern int		 upstream_port;
void	 setup(void);
void	 teardown(void);
void	 write_tools(const char *test_tier);
void	 start_tools(const char **extra);
void	 crash_restart(void);
void	 start_with(const char *test_tier, const char **extra);
json_object	*callf(const char *fmt, ...);
const char	*str(json_object *o, const char *path);
void	 submit(char ticket[32], const char *commands, const char *more);
json_object	*poll_job(const char *ticket);
json_object	*wait_done(const char *ticket);
void	 wait_end(const char *ticket, const char *status);
void	 await_status(const char *ticket, const char *status);
void	 release(void);
void	 assert_error(json_object *r, int code, const char *type);
/*
 * The broker's child processes but its fork server (cmdgate-worker
 * --forker, whose pid goes in *forker, -1: none): how many, up to max in
 * pids.
 */
int	 broker_workers(pid_t *pids, int max, pid_t *forker);
/* The broker's one worker (that of the running job), or -1. */
pid_t	 worker_pid(void);
void	 h3_write_tools(int port4, int port6, int victim);
void	 h3_start(const char **extra, int port4, int port6);
json_object	*h3_run(const char *commands);

#endif
