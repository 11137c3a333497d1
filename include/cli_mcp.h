/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_CLI_MCP_H
#define CMDGATE_CLI_MCP_H

#include "cli.h"

/* cmdgate mcp-config: the MCP client configuration that runs cmdgate mcp. */
int	 cmd_mcp_config(struct cli *, int, char **);

#endif
