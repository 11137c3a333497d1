/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_INSTANCE_H
#define CMDGATE_INSTANCE_H

#include <stddef.h>

struct options;
struct server;

/* --instance, "default" when not given: 0, or -1 with err set. */
int	 instance_name(struct options *opt, char *err, size_t errlen);

/*
 * Whether the instance name is free, once the state dir is locked: 0, or
 * -1 with err naming the live broker whose instance file has it (a stale
 * file is not one).
 */
int	 instance_check(const struct options *opt, char *err,
	    size_t errlen);
/* Publish srv's instance file (once it listens): 0, or -1 logged. */
int	 instance_publish(struct server *srv);
/* Remove it, at stop. */
void	 instance_withdraw(struct server *srv);

#endif
