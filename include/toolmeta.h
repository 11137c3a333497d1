/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLMETA_H
#define CMDGATE_TOOLMETA_H

#include <stddef.h>

#include <json-c/json.h>

#include "tools.h"

/*
 * What a tool of cmdgate.tools(5) tells MCP clients about itself: title,
 * annotations and output_schema.
 */

#define TOOL_TITLE_MAX	128	/* bytes */

/*
 * Read the tool object o's title, annotations and output_schema into t;
 * 0, or -1 with *field the field at fault and err the reason.
 */
int		 toolmeta_parse(json_object *o, struct tool *t,
		    const char **field, char *err, size_t errlen);
/*
 * t's MCP annotations: readOnlyHint for an instant tool that causes no
 * reload, destructiveHint for one that may, the table's annotations (and
 * title) over these.  Caller puts.
 */
json_object	*toolmeta_annotations(const struct tool *t);

#endif
