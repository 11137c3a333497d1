/* SPDX-License-Identifier: ISC */
/* What the cmdgate(1) suites share: see cliutil.c. */
#ifndef CMDGATE_CLIUTIL_H
#define CMDGATE_CLIUTIL_H

#include <sys/types.h>

#include <json-c/json.h>

#include "testnet.h"

#define OUT_MAX	(1024 * 1024)

extern struct broker	b;
/* The table (start() writes it), its FIFO, the port cmdgate is given. */
extern char		tools[256], fifo[256], port[16];
/* The last run()'s standard output and standard error. */
extern char		cli_out[OUT_MAX], cli_err[OUT_MAX];

void		 setup(void);
void		 teardown(void);
/* The broker on the test table, with the extra flags (NULL-ended). */
void		 start(const char **extra);
/*
 * Run cmdgate with args (NULL-ended) and input on stdin; its exit status,
 * stdout in cli_out, stderr in cli_err.
 */
int		 run(const char *input, const char *first, ...);
/* cli_out as JSON; caller puts. */
json_object	*out_json(void);
/*
 * Start cmdgate --socket (the broker's, the same across its restarts)
 * with args (NULL-ended) in the background; its stderr on *errfd.
 */
pid_t		 spawn_cli(int *errfd, const char **args);
/*
 * Read fd into cli_err (cli_out) until it holds want; 0 after
 * TN_TIMEOUT_MS or at its end.  await_err(-1, NULL) empties cli_err.
 */
int		 await_err(int fd, const char *want);
int		 await_out(int fd, const char *want);
/* A Unix-socket JSON-RPC call to the broker; the result (caller puts). */
json_object	*broker_call(const char *line);
/* ticket is queued, held by tests_running. */
void		 assert_held(const char *ticket);

/*
 * A listener of another user's on the broker's port, as one who took it
 * while the broker was away would be: a child that setuid()s to uid,
 * listens on 127.0.0.1:port (0: a free one), answers each line it reads
 * with an error whose id is null (as the broker answers a client that
 * has not authenticated) and keeps all it reads in seen.
 */
struct squat {
	pid_t	 pid;
	int	 port;
	int	 rec;		/* what it reads, copied */
	char	 seen[65536];
	size_t	 n;
};

void		 squat_start(struct squat *, uid_t uid, int port);
/* Whether it has read want n times (awaited, TN_TIMEOUT_MS at most). */
int		 squat_await(struct squat *, const char *want, int n);
/* Kill it (reaped), with all it read in seen. */
void		 squat_stop(struct squat *);

#endif
