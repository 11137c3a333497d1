/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_RECOVER_H
#define CMDGATE_RECOVER_H

#include <stddef.h>

/* Recovery at start (recover.c). */

struct jobs;

/* Read the store in one transaction: 0 with how many jobs were
 * interrupted and how many damaged records failed, or the store's
 * error. */
int	recover_store(struct jobs *, size_t *interrupted, size_t *damaged);

#endif
