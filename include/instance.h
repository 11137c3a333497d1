/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_INSTANCE_H
#define CMDGATE_INSTANCE_H

struct server;

/* Publish srv's instance file (once it listens): 0, or -1 logged. */
int	 instance_publish(struct server *srv);
/* Remove it, at stop. */
void	 instance_withdraw(struct server *srv);

#endif
