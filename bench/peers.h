/* SPDX-License-Identifier: ISC */
/* cmdgate-bench helpers and peers: see peers.c. */
#ifndef CMDGATE_BENCH_PEERS_H
#define CMDGATE_BENCH_PEERS_H

#include <sys/types.h>

#include <json-c/json.h>

#include "broker.h"

struct stat3 {
	double	med, min, max;
};

extern char	 tmpdir[];

double	 now(void);
struct stat3	 summarize(double *v, int n);
void	 report(const char *what, const char *unit, struct stat3 s);
void	 ratio(const char *what, double r, const char *target);
void	 die(const char *fmt, ...);
int	 free_port(void);
void	 await_port(int port);
pid_t	 spawn(char *const argv[], char *const envp[]);
int	 run_wait(char *const argv[], char *const envp[]);
void	 stop(pid_t pid);
void	 xfer(int fd, const char *s, size_t len, int lines);
json_object	*rpc(int fd, const char *line);
void	 broker_start(struct broker *b, const char *tools, const char *sync,
	    const char *state);
void	 broker_stop(struct broker *b);
void	 rmtree(const char *path);
const char	*tmp(const char *name);
void	 write_text(const char *path, const char *text);
pid_t	 floor_start(int *port);
pid_t	 beanstalkd_start(int *port, const char *binlog);

#endif
