/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RECOVER_H
#define CMDGATE_RECOVER_H

#include <stddef.h>

/* Recovery at start (recover.c). */

struct jobs;

/* Read the store in one transaction: 0 with how many jobs were
 * interrupted and how many damaged records failed, or the store's
 * error. */
int		 recover_store(struct jobs *, size_t *interrupted,
		    size_t *damaged);

struct job;

#include <json-c/json.h>

/*
 * The failed record that replaces queued job j's damaged one, keeping of
 * it what can be read, its error saying why and when (caller puts).
 */
json_object	*recover_damaged(struct jobs *, struct job *, const char *when);

/*
 * A queued job about to start, its record just read (NULL: it was not
 * JSON): 0 when it can run; -1 when the record is damaged, and the job
 * has failed saying so.
 */
int		 recover_check_start(struct jobs *, struct job *);

#endif
