/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_MCPVER_H
#define CMDGATE_MCPVER_H

/*
 * The MCP protocol versions the broker speaks, newest first: whether v is
 * one, the newest, and the NULL-terminated list.  A leaf, so that the
 * transport (http.c, MCP-Protocol-Version) and the handlers (mcp.c,
 * initialize) share one list.
 */
int		 mcp_version_ok(const char *v);
const char	*mcp_version_newest(void);
const char *const *mcp_versions_list(void);

#endif
