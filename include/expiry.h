/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_EXPIRY_H
#define CMDGATE_EXPIRY_H

/* Finished jobs expire from the store (expiry.c). */

struct jobs;

/* Make J->expire_ev; jobs_free() frees it. */
void	expiry_init(struct jobs *);
/* Wake at the next expiry the store holds, if any. */
void	expiry_arm(struct jobs *);

#endif
