/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_TOPLIVE_H
#define CMDGATE_CLI_TOPLIVE_H

#include "cli.h"

/* cmdgate top [--once]: an exit status (cmdgate(1)). */
int		 cmd_top(struct cli *, int argc, char **argv);

#endif
