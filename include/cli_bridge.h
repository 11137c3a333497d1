/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_BRIDGE_H
#define CMDGATE_CLI_BRIDGE_H

#include "cli.h"

/*
 * cmdgate mcp: bridge stdin/stdout to the broker's connection, and
 * outlive the broker (cmdgate(1)).
 */
int	 cmd_mcp(struct cli *, int, char **);

#endif
