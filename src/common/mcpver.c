/* SPDX-License-Identifier: ISC */
#include "config.h"

#include <string.h>

#include <json-c/json.h>

#include "mcpver.h"

/* Newest first: the answer when a client asks for one we do not know. */
static const char *const mcp_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

int
mcp_version_ok(const char *v)
{
	size_t	i;

	for (i = 0; mcp_versions[i] != NULL; i++)
		if (strcmp(v, mcp_versions[i]) == 0)
			return 1;
	return 0;
}

int
mcp_version_rev(const char *v)
{
	if (strcmp(v, MCP_VERSION_2026) == 0)
		return MCP_REV_2026;
	if (strcmp(v, "2025-11-25") == 0)
		return MCP_REV_2025;
	return mcp_version_ok(v) ? MCP_REV_OLD : 0;
}

const char *
mcp_version_newest(void)
{
	return mcp_versions[0];
}

const char *const *
mcp_versions_list(void)
{
	return mcp_versions;
}

json_object *
mcp_versions_json(void)
{
	json_object	*a = json_object_new_array();
	size_t		 i;

	json_object_array_add(a, json_object_new_string(MCP_VERSION_2026));
	for (i = 0; mcp_versions[i] != NULL; i++)
		json_object_array_add(a, json_object_new_string(mcp_versions[i]));
	return a;
}
