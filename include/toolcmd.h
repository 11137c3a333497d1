/* SPDX-License-Identifier: ISC */
#ifndef CMDGATE_TOOLCMD_H
#define CMDGATE_TOOLCMD_H

#include <stddef.h>

#include <json-c/json.h>

#include "tools.h"

/*
 * One command against its tool (cmdgate.tools(5)): the tier and reload
 * its params call for, the argv its templates expand to, and the tool as
 * get_tool_details and MCP's tools/list show it.
 */

/*
 * Classification of one command.  params is the command's params member,
 * NULL when it is absent or null (then no condition holds).
 */
enum tier		 tool_command_tier(const struct tool *, json_object *);
int			 tool_command_reload(const struct tool *,
			    json_object *);

/*
 * Expand the tool's exec templates with a command's params (NULL: absent):
 * 0 and *argv (a JSON array of strings; caller puts), or -1 with err
 * naming the parameter that has neither a value nor a default.
 */
int			 tool_expand_argv(const struct tool *, json_object *,
			    json_object **argv, char *err, size_t errlen);

/*
 * The forward member of a command's record (cmdgate.tools(5)): the
 * shorthand as a string, or the object form filled in (dialect, method
 * and connect_timeout_s defaulted, params expanded over the command's
 * params with the schema's defaults).  0 and *fwd (caller puts), or -1
 * with err naming the template's path that has no value.
 */
int			 tool_forward_command(const struct tool *,
			    json_object *params, json_object **fwd,
			    char *err, size_t errlen);

/* get_tool_details shape; caller puts. */
json_object		*tool_details(const struct tool *);
/* The tool's parameter schema, {"type":"object"} when none; caller puts. */
json_object		*tool_input_schema(const struct tool *);

#endif
