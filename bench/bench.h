/* SPDX-License-Identifier: ISC */
/* cmdgate-bench: what bench.c and scale.c share. */
#ifndef CMDGATE_BENCH_BENCH_H
#define CMDGATE_BENCH_BENCH_H

#include <stddef.h>

#include "broker.h"

#define PING	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
#define BPUT	"put 0 0 60 1\r\nx\r\n"
#define SUBMIT	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"queued\"}]}}\n"
#define HOLD	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"batch_execute\"," \
		"\"params\":{\"async\":true,\"commands\":[{\"tool\":\"hold\"}]}}\n"
#define IDLE_N	1000

extern const char	*cmdgated, *stamp;
extern int		 rounds;

/* BENCH_ROUNDS, CMDGATED, CMDGATE_STAMP, the temp dir, limits. */
void	 setup(void);
/* A broker whose one heavy job runs for an hour: every submit only queues. */
void	 start_held(struct broker *, const char *sync, const char *state,
	    const char *const *extra);
/* The machine, the date and the load, on one line (no newline). */
void	 machine_line(char *buf, size_t len);
/*
 * Print the table under the machine line and what; when whole, also put it
 * in section of $BENCH_RESULTS.
 */
void	 finish(const char *section, const char *what, int whole);
/* make bench-scale */
int	 scale_main(void);

#endif
