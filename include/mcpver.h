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

/* What a revision brings, in the order they came. */
#define MCP_REV_OLD	1	/* 2024-11-05 to 2025-06-18 */
#define MCP_REV_2025	2	/* 2025-11-25: experimental tasks */
#define MCP_REV_2026	3	/* 2026-07-28: no initialize, _meta */
#define MCP_VERSION_2026 "2026-07-28"
/* Where a 2026-07-28 request's params._meta names its revision. */
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT	"io.modelcontextprotocol/clientInfo"
#define MCP_META_LEVEL	"io.modelcontextprotocol/logLevel"
#define MCP_META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define MCP_EXT_TASKS	"io.modelcontextprotocol/tasks"
/* Every version the broker speaks, newest first (2026-07-28 too): what
 * server/discover names and each -32022 lists.  A new array. */
struct json_object *mcp_versions_json(void);
/* The revision of version v (one mcp_version_ok() takes, or 2026-07-28);
 * 0 for another. */
int		 mcp_version_rev(const char *v);
const char	*mcp_version_newest(void);
const char *const *mcp_versions_list(void);

#endif
