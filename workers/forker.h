/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_WORKERS_FORKER_H
#define CMDGATE_WORKERS_FORKER_H

#include "wire.h"	/* FORKER_FD and the messages */

/*
 * cmdgate-worker --forker (forker.c): serve the broker's requests on
 * FORKER_FD, each a worker forked to run job() and exit with what it
 * returns.  arg is argv[1], blanked in each worker.  Returns (in the
 * fork server) what the process exits with.
 */
int	forker_run(char *arg, int (*job)(void));

#endif
