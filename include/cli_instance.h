/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_INSTANCE_H
#define CMDGATE_CLI_INSTANCE_H

struct cli;

/*
 * Aim cl->t at the broker instance name published (its socket, else its
 * first TCP address, and its token file): 0, or CX_USAGE printed.
 */
int	 cli_instance_use(struct cli *cl, const char *name);
/* With exactly one instance whose broker is alive, aim cl->t at it. */
void	 cli_instance_default(struct cli *cl);
/* cmdgate instances [--prune]: the published brokers, live or stale. */
int	 cmd_instances(struct cli *cl, int argc, char **argv);

#endif
