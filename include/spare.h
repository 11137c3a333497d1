/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_SPARE_H
#define CMDGATE_SPARE_H

/*
 * The spare worker (cmdgated(8), Workers): after a job starts, another
 * worker is started from a zero timer, off the job's path, to wait for
 * the next job's spec, so that a start costs one message to a ready
 * worker.  --max-workers counts it; it is retired when no job took it for
 * SPARE_IDLE_S seconds, and at shutdown.
 */

#define SPARE_IDLE_S	2

struct jobs;

void	spare_init(struct jobs *);
void	spare_free(struct jobs *);
/* A job started: start a spare at the next turn, keep it a while. */
void	spare_refill(struct jobs *);
/* Retire the spare now (shutdown). */
void	spare_retire(struct jobs *);

#endif
