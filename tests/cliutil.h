/* SPDX-License-Identifier: ISC */
/* What the cmdgate(1) suites share: see cliutil.c. */
#ifndef CMDGATE_CLIUTIL_H
#define CMDGATE_CLIUTIL_H

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

#endif
