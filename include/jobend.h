/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_JOBEND_H
#define CMDGATE_JOBEND_H

#define JOBEND_WHOLE_TRIES	6	/* an end a full disk refused waits whole */

#include <sys/types.h>

#include "job.h"

/*
 * The ends of jobs (jobend.c) and the notes of changes: the engine's
 * coordinator (jobs.c) and the turn's commit (turn.c) call them.
 */

/* Tell j's submitter (notify: true) that j changed. */
void	jobend_notify(struct jobs *, struct job *);
/* j ends with s: stored with the turn's commit, then jobend_forget(). */
void	jobend_finish(struct jobs *, struct job *, enum job_status,
	    const char *error);
/* The end of j (worker del, 0: none) could not be stored with the turn
 * (rc): j shrinks (unless the disk is full) and is stored alone, or waits
 * in J->unstored. */
void	jobend_finish_alone(struct jobs *, struct job *, pid_t del, int rc);
/* Store the end of j from J->unstored, shrunk if it must (last: the
 * stop's try, which shrinks at once): 0, or the store's error. */
int	jobend_save_unstored(struct jobs *, struct job *, int last);
/* j is over and stored: tell whoever waits, forget it here. */
void	jobend_forget(struct jobs *, struct job *);
/* The store refused a change (rc): start nothing new, retry later. */
void	jobend_store_blocked(struct jobs *, const char *what, int rc);

#endif
